#!/usr/bin/env bash
# A pod's recording and everything after it at scale: the ring all-reduce
# (workloads/allreduce.c, -DELEMS=65536: more than 1M instructions of main
# per chip, most of them the per-element setup and check around the collective)
# on a 16-chip `snr device --gdb`, each chip's window the first COUNT
# instructions of main (default 1M; it holds the collective's DMAs and
# waits). Times, with /usr/bin/time -v, `snr record --pod`, `snr replay POD`
# with --threads 1 and 2 (their wall-clock ratio; their stdout and metrics
# sets compared byte for byte), `snr analyze pod` and `snr report` of the
# pod's metrics set; prints each step's wall, CPU and peak RSS and checks
# each stays under 1 GiB (exit 1 if not). REPEAT (environment, default 3)
# more pairs of replays, --threads 1 and 2 alternated and compared byte for
# byte with the first: the ratio of the summed wall times in the one run.
# METHOD is record's --method (default auto: stepping for a pod; sim: each
# chip simulated in the GRM, the device running its waits on peers).
# usage: pod_scale.sh SNR [COUNT [CHIPS [ELEMS [METHOD]]]]
set -uo pipefail
SNR=${1:?usage: pod_scale.sh SNR [COUNT [CHIPS [ELEMS [METHOD]]]]}
COUNT=${2:-1M}
CHIPS=${3:-16}
ELEMS=${4:-65536}
REPEAT=${REPEAT:-3} # more --threads 1 / 2 replay pairs, alternated, for the ratio (environment)
METHOD=${5:-auto}
CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/snr-bench
. "$(dirname "$0")/bench_lib.sh"
. "$HERE/../tests/gdb_device.sh"
LIMIT_KIB=$((1024 * 1024))
[ $((ELEMS % CHIPS)) -eq 0 ] || fail "ELEMS $ELEMS is not a multiple of CHIPS $CHIPS"
"$SNR" cc -DELEMS="$ELEMS" "$HERE/../workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"

over=0
printf '%-22s %9s %9s %9s  %s\n' step wall_s cpu_s rss_MiB "under 1 GiB"
# step NAME CMD...: runs CMD under /usr/bin/time -v (stdout in T/NAME.out), prints its row; WALL is its wall time
step() {
  local name=$1
  shift
  /usr/bin/time -v -o "$T/$name.time" "$@" >"$T/$name.out" 2>"$T/$name.err" ||
    fail "$name failed ($*): $(tail -3 "$T/$name.err")"
  WALL=$(awk -F': ' '/Elapsed \(wall clock\)/ {n = split($2, a, ":"); s = 0; for (i = 1; i <= n; i++) s = s * 60 + a[i]; print s}' "$T/$name.time")
  local user sys rss
  user=$(awk -F': ' '/User time/ {print $2}' "$T/$name.time")
  sys=$(awk -F': ' '/System time/ {print $2}' "$T/$name.time")
  rss=$(awk -F': ' '/Maximum resident set size/ {print $2}' "$T/$name.time")
  local ok=yes
  [ "$rss" -lt "$LIMIT_KIB" ] || { ok=NO; over=1; }
  printf '%-22s %9.2f %9.2f %9.1f  %s\n' "$name" "$WALL" "$(awk -v u="$user" -v s="$sys" 'BEGIN {print u + s}')" \
    "$(awk -v r="$rss" 'BEGIN {print r / 1024}')" "$ok"
}

gdb_device "$SNR" "$T" "$T/ar.elf" --chips "$CHIPS"
step "record --pod" "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/ar.elf" --breakpoint main \
  --count "$COUNT" --method "$METHOD" -o "$T/pod.snrs"
wait "$DEV" || fail "the device exited $? after the recording detached: $(tail -3 "$T/dev.err")"
DEV=""
insns=$(awk '$1 ~ /^[0-9]+$/ && NF >= 3 {s += $2} END {print s}' "$T/record --pod.out" "$T/record --pod.err")
echo "recorded: $CHIPS chips, $insns instructions in all ($(du -sh "$T/pod.snrs" | cut -f1) on disk)"

# both replays write the set under one name, so that their outputs can be compared byte for byte
step "replay --threads 1" "$SNR" replay "$T/pod.snrs" --threads 1 --json -o "$T/m.mset"
w1=$WALL
mv "$T/m.mset" "$T/m1.mset" && mv "$T/replay --threads 1.out" "$T/r1.json"
step "replay --threads 2" "$SNR" replay "$T/pod.snrs" --threads 2 --json -o "$T/m.mset"
w2=$WALL
cmp -s "$T/r1.json" "$T/replay --threads 2.out" || fail "the replays' --json differ between --threads 1 and 2"
diff -r "$T/m1.mset" "$T/m.mset" >/dev/null || fail "the replays' metrics sets differ between --threads 1 and 2"
grep -h "thread" "$T/replay --threads 1.err" "$T/replay --threads 2.err"
python3 -c 'import json, sys; j = json.load(open(sys.argv[1])); print("replayed: %d instructions, pod cycles %d, verified %s" % (sum(c["instructions"] for c in j["chips"]), j["cycles"], j["verified"]))' "$T/r1.json"
echo "replay wall --threads 1 / --threads 2: $(awk -v a="$w1" -v b="$w2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}') (outputs byte-identical)"
# REPEAT more pairs, --threads 1 and 2 alternated so that both see the same load: the ratio of their summed
# wall times, and each one's CPU seconds per run (the worker threads add CPU; the wall is what they save)
sum1=$w1 sum2=$w2 cpu1=0 cpu2=0
for i in $(seq 1 "$REPEAT"); do
  for t in 1 2; do
    rm -rf "$T/m.mset"
    step "replay --threads $t #$i" "$SNR" replay "$T/pod.snrs" --threads "$t" --json -o "$T/m.mset"
    cmp -s "$T/r1.json" "$T/replay --threads $t #$i.out" || fail "replay --threads $t #$i: --json differs"
    diff -r "$T/m1.mset" "$T/m.mset" >/dev/null || fail "replay --threads $t #$i: the metrics set differs"
    c=$(awk -F': ' '/User time/ {u = $2} /System time/ {s = $2} END {print u + s}' "$T/replay --threads $t #$i.time")
    if [ "$t" = 1 ]; then sum1=$(awk -v a="$sum1" -v b="$WALL" 'BEGIN {print a + b}'); cpu1=$(awk -v a="$cpu1" -v b="$c" 'BEGIN {print a + b}')
    else sum2=$(awk -v a="$sum2" -v b="$WALL" 'BEGIN {print a + b}'); cpu2=$(awk -v a="$cpu2" -v b="$c" 'BEGIN {print a + b}'); fi
  done
done
[ "$REPEAT" -gt 0 ] && echo "replay wall --threads 1 / --threads 2 over $((REPEAT + 1)) alternated pairs: $(awk -v a="$sum1" -v b="$sum2" 'BEGIN {printf "%.2f", (b > 0) ? a / b : 0}'); CPU s per run (repeats): $(awk -v a="$cpu1" -v r="$REPEAT" 'BEGIN {printf "%.2f", a / r}') on 1 thread, $(awk -v a="$cpu2" -v r="$REPEAT" 'BEGIN {printf "%.2f", a / r}') on 2 (load $(cut -d' ' -f1 /proc/loadavg))"
step "analyze pod" "$SNR" analyze pod "$T/m.mset"
step "report" "$SNR" report "$T/m.mset" -o "$T/report.html"
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg) on $(nproc) CPUs"
[ "$over" -eq 0 ] || fail "a step's peak RSS reached 1 GiB"
echo "every step's peak RSS under 1 GiB"
