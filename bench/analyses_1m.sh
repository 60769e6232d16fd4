#!/usr/bin/env bash
# Time and peak memory of every analysis (and annotate) on a window of a million
# instructions (issue 5's figure; target: each under 5 s and 1 GiB).
#
# bench/analyses_prog.c's serve() is a token-serving loop: weight and KV
# DMAs from HBM, MXU matmuls, vector ops and scalar code. This script
#   1. records COUNT (default 1,000,000) instructions of serve() from
#      `snr device --gdb` over RSP (about 35 s at 30k instructions/s) and
#      keeps the trace in CACHE_DIR, keyed by the program's source and COUNT,
#      so later runs skip the recording;
#   2. replays it once to a metrics file (`snr replay -o`), timed apart;
#   3. runs each analysis on the .snrm (the figures that do not depend on the
#      replay's speed) and on the .snrt (replay included), each under
#      /usr/bin/time: wall seconds, CPU seconds (user + system: the machine
#      may be shared, wall time then includes waiting for a core) and peak
#      RSS. Over target is judged on wall time.
# usage: analyses_1m.sh SNR CACHE_DIR [COUNT]
set -u
SNR=$1; CACHE=$2; COUNT=${3:-1000000}
. "$(dirname "$0")/bench_lib.sh"
ELF=$CACHE/an1m.elf; TRACE=$CACHE/an1m.snrt; STAMP=$CACHE/an1m.stamp
# -g: annotate (and every output's file:line) reads the line tables
"$SNR" cc -O2 -g "$HERE/analyses_prog.c" -o "$ELF" || fail "snr cc"
key="$(sha256sum "$HERE/analyses_prog.c" | cut -d' ' -f1) $COUNT -g"

record() {
  rm -f "$T/dev.err"  # the device writes its port here; no stale port from an earlier run
  "$SNR" device "$ELF" --gdb tcp:127.0.0.1:0 --halt 2>"$T/dev.err" >/dev/null &
  DEV=$!
  local port="" t0 t1
  for _ in $(seq 100); do
    port=$(grep -o '127.0.0.1:[0-9]*' "$T/dev.err" | head -1 | cut -d: -f2)
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || fail "device did not start: $(cat "$T/dev.err")"
  t0=$(date +%s.%N)
  "$SNR" record --target tcp:127.0.0.1:"$port" --elf "$ELF" --breakpoint serve --count "$COUNT" \
    -o "$TRACE" --kill 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
  t1=$(date +%s.%N)
  wait "$DEV"; DEV=""
  echo "$key" >"$STAMP"
  printf 'recorded %s instructions of serve() in %.1f s over RSP (cached in %s)\n' "$COUNT" \
    "$(echo "$t1 - $t0" | bc)" "$TRACE"
}

replay() {
  /usr/bin/time -f '%e %M' -o "$T/replay.time" "$SNR" replay "$TRACE" -o "$T/m.snrm" >"$T/replay.out" 2>&1
}

if [ -f "$TRACE" ] && [ "$(cat "$STAMP" 2>/dev/null)" = "$key" ]; then
  echo "using the cached trace $TRACE"
  replay || { echo "the cached trace does not replay any more: recording again"; record; replay; } ||
    fail "replay: $(cat "$T/replay.out")"
else
  record
  replay || fail "replay: $(cat "$T/replay.out")"
fi
read -r rs rk <"$T/replay.time"
printf 'snr replay -o M.snrm: %s s wall, %d MiB peak (%s bytes of metrics)\n' "$rs" $((rk / 1024)) \
  "$(stat -c %s "$T/m.snrm")"
"$SNR" analyze dma "$T/m.snrm" | sed -n 1p

# name|arguments after the input ("@" stands for a scratch output file)
ANALYSES=(
  "analyze dma|"
  "analyze vmem|"
  "analyze util|"
  "analyze deps|"
  "analyze suggest|"
  "analyze suggest --verify|"
  "annotate|"
  "annotate --asm|"
  "report|-o @"
  "export perfetto|-o @"
)
over=0; failed=0
run() { # input: prints "wall-seconds cpu-seconds MiB"
  local cmd=$1 args=$2 in=$3
  args=${args//@/$T/out}
  # shellcheck disable=SC2086
  if ! /usr/bin/time -f '%e %U %S %M' -o "$T/t" "$SNR" $cmd "$in" $args >"$T/o" 2>"$T/e"; then
    echo "FAIL: snr $cmd $in $args: $(tail -3 "$T/e")" >&2
    echo "- - -"
    return
  fi
  local s u y k
  read -r s u y k <"$T/t"
  echo "$s $(printf '%.2f' "$(echo "$u + $y" | bc)") $((k / 1024))"
}
echo
printf '%-26s | %-22s | %-22s\n' "" "on the .snrm" "on the .snrt (replay incl.)"
printf '%-26s | %6s %6s %8s | %6s %6s %8s\n' "analysis" "wall s" "cpu s" "MiB" "wall s" "cpu s" "MiB"
for a in "${ANALYSES[@]}"; do
  cmd=${a%%|*}; args=${a#*|}
  read -r ms mc mk < <(run "$cmd" "$args" "$T/m.snrm")
  read -r ts tc tk < <(run "$cmd" "$args" "$TRACE")
  printf '%-26s | %6s %6s %8s | %6s %6s %8s\n' "$cmd${args:+ ${args//@/FILE}}" "$ms" "$mc" "$mk" "$ts" "$tc" "$tk"
  for v in "$ms:$mk" "$ts:$tk"; do
    s=${v%%:*}; k=${v#*:}
    if [ "$s" = "-" ]; then
      failed=1
    elif awk -v s="$s" -v k="$k" 'BEGIN { exit !(s > 5 || k > 1024) }'; then
      over=1
    fi
  done
done
echo
[ $failed = 0 ] || fail "an analysis failed: see above"
if [ $over = 0 ]; then
  echo "every analysis under 5 s and 1 GiB"
else
  echo "OVER TARGET (5 s, 1 GiB): see above"
fi
exit 0
