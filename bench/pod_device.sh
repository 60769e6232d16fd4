#!/usr/bin/env bash
# A pod under `snr device --timing`: the ring all-reduce (workloads/allreduce.c,
# -DELEMS chosen so that every chip runs about 1M instructions, most of them
# the per-element setup and check around the collective) on 1, 2, 4, 8 and 16
# chips, every chip's model on one fabric, the chips in time order. Prints,
# per pod size, the wall and CPU seconds, the peak RSS, the instructions of
# all chips (from --stats) and the rate, then each size's CPU seconds per
# million instructions against the 1-chip run's: the time-ordered scheduler
# and the shared fabric should keep it near 1 (cost linear in the work).
# usage: pod_device.sh SNR [ELEMS]
set -uo pipefail
SNR=${1:?usage: pod_device.sh SNR [ELEMS]}
ELEMS=${2:-49152}
SRC=$(cd "$(dirname "$0")/.." && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$SNR" cc -DELEMS="$ELEMS" "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || exit 1
printf '%-6s %8s %8s %9s %14s %10s %12s\n' chips wall_s cpu_s rss_MiB instructions M_instr/s cpu_per_M_x1
base=""
for n in 1 2 4 8 16; do
  [ $((ELEMS % n)) -eq 0 ] || continue
  /usr/bin/time -f '%e %U %S %M' -o "$T/time" "$SNR" device "$T/ar.elf" --chips "$n" --timing --stats \
    >"$T/out" 2>"$T/err" || { echo "device --chips $n failed: $(tail -3 "$T/err")"; exit 1; }
  read -r wall user sys rss <"$T/time"
  insns=$(awk '$1 == "chip" && $2 == "instructions" {t = 1; next} t && $1 ~ /^[0-9]+$/ {s += $2} /^chip +cycles/ {t = 0} END {print s}' "$T/err")
  cpu=$(awk -v u="$user" -v s="$sys" 'BEGIN {printf "%.2f", u + s}')
  per=$(awk -v c="$cpu" -v i="$insns" 'BEGIN {printf "%.4f", c / (i / 1e6)}')
  [ -z "$base" ] && base=$per
  printf '%-6s %8s %8s %9.1f %14s %10.2f %12.2f\n' "$n" "$wall" "$cpu" "$(awk -v r="$rss" 'BEGIN {print r / 1024}')" \
    "$insns" "$(awk -v c="$cpu" -v i="$insns" 'BEGIN {print i / 1e6 / c}')" "$(awk -v p="$per" -v b="$base" 'BEGIN {print p / b}')"
done
