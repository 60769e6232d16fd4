#!/usr/bin/env bash
# Overhead of `snr host record` (eBPF off-CPU, on-CPU sampling at 99 Hz,
# uprobe buckets) on a CPU-bound program and on the libta1rt serving loop:
# each workload times itself, alternately untraced and traced, REPS times;
# the medians and the overhead are printed. Needs root and BPF.
# usage: host_overhead.sh SNR HOST_WORK TA1_SERVE [REPS]
set -u
SNR=$1 WORK=$2 SERVE=$3 REPS=${4:-5}
if [ "$(id -u)" -ne 0 ]; then echo "host_overhead: needs root (eBPF)"; exit 0; fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$SNR" cc "$(dirname "$0")/../workloads/mlp.c" -o "$T/mlp.elf" || exit 1
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
for name in work serve; do
  : >"$T/$name.plain"; : >"$T/$name.traced"
  for _ in $(seq "$REPS"); do
    if [ $name = work ]; then cmd=("$WORK" 400000000); else cmd=("$SERVE" "$T/mlp.elf" 20 "$T"); fi
    "${cmd[@]}" >"$T/out" 2>&1 || { cat "$T/out"; exit 1; }
    sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$T/out" >>"$T/$name.plain"
    "$SNR" host record -F 99 -o "$T/h.snrh" -- "${cmd[@]}" >"$T/out" 2>"$T/err" ||
      { echo "host_overhead: snr host record failed: $(tail -3 "$T/err")"; exit 0; }
    sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$T/out" >>"$T/$name.traced"
  done
  p=$(median <"$T/$name.plain"); t=$(median <"$T/$name.traced")
  awk -v n="$name" -v p="$p" -v t="$t" -v r="$REPS" 'BEGIN {
    printf "%-6s untraced %.4f s, traced %.4f s (medians of %d): overhead %+.2f%% (target <= 1%%)\n",
           n, p, t, r, 100 * (t - p) / p }'
done
