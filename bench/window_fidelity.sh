#!/usr/bin/env bash
# Window fidelity and replay speed on one recorded window.
#
# bench/window_prog.c calls window() (about 120k instructions) with DMAs in
# flight. This script
#   1. runs it on the functional device: window()'s instruction count W;
#   2. runs it under `snr device --timing`: the cycles window() takes inside
#      the whole run from reset (the program reads the cycle CSR around it);
#   3. records window() from `snr device --gdb` (W instructions) and replays
#      it in the TA1 GRM: the cycles of the same instructions from a snapshot;
#   4. prints both and the difference (docs/ta1-timing.md, "A window against
#      the whole run", explains it);
#   5. runs bench_replay on the trace: replay speed functional-only, with
#      timing, an all-NULL tracker, every callback counting, the metrics
#      writer, and `snr replay -o` end to end.
# usage: window_fidelity.sh SNR BENCH_REPLAY [REPEAT [KEEP_DIR]]
set -u
SNR=$1; BENCH=$2; REPEAT=${3:-5}; KEEP=${4:-}
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$(dirname "$0")/window_prog.c" -o "$T/w.elf" || fail "snr cc"

func=$("$SNR" device "$T/w.elf" | sed -n 's/^window cycles \([0-9]*\).*/\1/p')
[ -n "$func" ] || fail "functional run printed no cycles"
W=$((func - 2)) # csrr and jal are the 2 instructions outside window()
whole=$("$SNR" device "$T/w.elf" --timing | sed -n 's/^window cycles \([0-9]*\).*/\1/p')
[ -n "$whole" ] || fail "--timing run printed no cycles"
# Under the model: csrr at c0, jal at c0+1, its refill, window()'s first
# instruction at c0+3; the second csrr issues when window() is done.
whole_window=$((whole - 3))

. "$(dirname "$0")/../tests/gdb_device.sh"
gdb_device "$SNR" "$T" "$T/w.elf"
t0=$(date +%s.%N)
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/w.elf" --breakpoint window --count $W \
  -o "$T/w.snrt" 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
t1=$(date +%s.%N)
wait $DEV; DEV=""
"$SNR" replay "$T/w.snrt" --json >"$T/r.json" || fail "replay: $(cat "$T/r.json")"
replayed=$(python3 -c 'import json,sys; j=json.load(open(sys.argv[1])); assert j["verified"]; print(j["cycles"])' "$T/r.json") ||
  fail "replay did not verify: $(cat "$T/r.json")"

echo "== window fidelity: window() of bench/window_prog.c, $W instructions"
printf 'recorded in %.1f s from snr device --gdb\n' "$(echo "$t1 - $t0" | bc)"
echo "whole run from reset (snr device --timing):  $whole_window cycles"
echo "replayed from the snapshot (snr replay):     $replayed cycles"
python3 -c 'import sys; a,b=map(int,sys.argv[1:]); print("difference: %+d cycles (%+.3f%% of the whole-run count)" % (b-a, 100.0*(b-a)/a))' \
  "$whole_window" "$replayed"
python3 - "$T/r.json" <<'PY'
import json, sys
j = json.load(open(sys.argv[1]))
print("replay stalls:", ", ".join("%s %d" % kv for kv in j["stall_cycles"].items() if kv[1]))
PY
echo
echo "== replay speed (bench_replay, best of $REPEAT)"
"$BENCH" "$T/w.snrt" "$REPEAT"
[ -n "$KEEP" ] && cp "$T/w.snrt" "$T/w.elf" "$KEEP"/
exit 0
