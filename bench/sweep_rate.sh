#!/usr/bin/env bash
# snr sweep's rate: points per second on a window of 1M instructions of the
# token-serving loop (bench/analyses_prog.c's serve(), the window of
# bench/analyses_scale.sh, recorded once over RSP and cached in CACHE_DIR,
# default ~/.cache/snr-bench, shared with that benchmark), for a grid of 8
# points (dma.hbm_bytes_per_cycle 300..2400 x dma.base_latency_cycles 250,
# 500): -j 1 and -j 2 in one run, alternating (ROUNDS rounds, default 2, the
# least wall time of each kept), then through a localhost Slurm cluster of
# one node (tests/slurm/cluster.sh: 2 tasks at once on 2 CPUs, 8 tasks in two
# arrays under MaxArraySize=5, then the afterok gather), with the overhead
# per task: (Slurm wall - local -j 2 wall) / (tasks / CPUs), the time a task
# spends being submitted, scheduled, started and gathered beyond its replay.
# Without root or the Slurm packages that part says why and is left out.
# usage: sweep_rate.sh SNR [CACHE_DIR]
set -u
SNR=$(realpath "$1"); CACHE=${2:-}; [ -n "$CACHE" ] || CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/snr-bench
HERE=$(cd "$(dirname "$0")" && pwd)
W=$(mktemp -d); DEV=""
trap '[ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$W"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir -p "$CACHE" || fail "cannot create $CACHE"
echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
N=1000000 TOKENS=8000
ELF=$CACHE/scale-$TOKENS.elf
"$SNR" cc -O2 -DTOKENS=$TOKENS "$HERE/analyses_prog.c" -o "$ELF" || fail "snr cc"
src_key=$(sha256sum "$HERE/analyses_prog.c" | cut -d' ' -f1)
TR=$CACHE/scale-$N.snrt; stamp=$CACHE/scale-$N.stamp
if [ -f "$TR" ] && [ "$(cat "$stamp" 2>/dev/null)" = "$src_key $N" ]; then
  echo "using the cached trace $TR"
else
  # shellcheck source=../tests/gdb_device.sh
  . "$HERE/../tests/gdb_device.sh"
  gdb_device "$SNR" "$W" "$ELF"
  "$SNR" record --target tcp:127.0.0.1:"$PORT" --elf "$ELF" --breakpoint serve --count $N -o "$TR" --kill \
    2>"$W/rec.err" || fail "record: $(cat "$W/rec.err")"
  wait "$DEV"; DEV=""
  echo "$src_key $N" >"$stamp"
  echo "recorded $N instructions of serve() into $TR"
fi
GRID=(--param dma.hbm_bytes_per_cycle=300,600,1200,2400 --param dma.base_latency_cycles=250,500)
POINTS=8
declare -A BEST
sweep() { # name args...: one sweep, its wall seconds into BEST[name] if fewer
  local name=$1 t0 t1 s; shift
  rm -rf "$W/$name"
  t0=$(date +%s.%N)
  "$SNR" sweep "$TR" "${GRID[@]}" "$@" -o "$W/$name" >"$W/$name.out" 2>&1 || fail "sweep $name: $(tail -5 "$W/$name.out")"
  t1=$(date +%s.%N)
  s=$(echo "$t1 - $t0" | bc)
  if [ -z "${BEST[$name]:-}" ] || [ "$(echo "$s < ${BEST[$name]}" | bc)" = 1 ]; then BEST[$name]=$s; fi
}
ROUNDS=${ROUNDS:-2}
for ((r = 0; r < ROUNDS; r++)); do
  sweep j1 -j 1
  sweep j2 -j 2
done
cmp -s "$W/j1/results.json" "$W/j2/results.json" || fail "-j 1 and -j 2 gave different results"
echo "grid of $POINTS points on a window of $N instructions (least wall time of $ROUNDS rounds):"
for j in j1 j2; do
  printf '  -j %s   %6.2f s   %5.2f points/s\n' "${j#j}" "${BEST[$j]}" "$(echo "$POINTS / ${BEST[$j]}" | bc -l)"
done
printf '  -j 2 / -j 1 speedup %.2fx; load average now %s\n' "$(echo "${BEST[j1]} / ${BEST[j2]}" | bc -l)" \
  "$(cut -d' ' -f1 /proc/loadavg)"
head -4 "$W/j1/results.txt" | sed 's/^/  /'

# Slurm, in a subshell: the cluster's trap tears it down when the subshell ends
(
  # shellcheck source=../tests/slurm/cluster.sh
  . "$HERE/../tests/slurm/cluster.sh"
  skip() { echo "Slurm: left out: $*"; exit 0; }
  slurm_cluster_start
  cd "$T" || exit 1
  t0=$(date +%s.%N)
  "$SNR" sweep "$TR" "${GRID[@]}" --slurm --wait -o "$W/sl" >"$W/sl.out" 2>&1 || fail "Slurm sweep: $(tail -5 "$W/sl.out")"
  t1=$(date +%s.%N)
  cmp -s "$W/j1/results.json" "$W/sl/results.json" || fail "Slurm and local results differ"
  s=$(echo "$t1 - $t0" | bc)
  cpus=$(nproc)
  printf 'through a localhost Slurm (%d CPUs, %d tasks in %d array jobs + the gather):\n' "$cpus" "$POINTS" \
    "$(grep -c 'submitted Slurm array job' "$W/sl.out")"
  printf '  %6.2f s   %5.2f points/s; overhead per task %.2f s ((Slurm - local -j 2) / (tasks / CPUs)); load %s\n' \
    "$s" "$(echo "$POINTS / $s" | bc -l)" "$(echo "($s - ${BEST[j2]}) / ($POINTS / $cpus)" | bc -l)" \
    "$(cut -d' ' -f1 /proc/loadavg)"
)
