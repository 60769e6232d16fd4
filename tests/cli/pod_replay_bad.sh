#!/usr/bin/env bash
# snr replay of a pod whose chip windows do not belong together
# (docs/recording.md, "Replaying a pod"): the ring all-reduce
# (workloads/allreduce.c) on 2 chips, recorded twice with `snr record --pod`:
# the whole allreduce() call, and its first 3 instructions.
# - a set whose chip 1 file is the short recording's, its manifest left as
#   it was: refused (exit 1) naming the file, both instruction counts and
#   set.json, before any replay;
# - the same with the manifest saying the short window's count: the replay
#   runs, chip 0 waits for a signal chip 1's window never sends, and the
#   replay fails (exit 3) as a pod-wide deadlock naming chip 0's wait
#   (instruction, pc, file:line, function) and chip 1's ended window; the
#   table says chip 0 is not verified.
# And the whole set's replay with its pcs in the spill file gives the same bytes.
# usage: pod_replay_bad.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
SRC=${2:?usage: pod_replay_bad.sh SNR SRCDIR}

"$SNR" cc -g "$SRC/workloads/allreduce.c" -DELEMS=1024 -o "$T/ar.elf" || fail "snr cc allreduce"
record() { # record NAME ARGS...: a pod of 2 chips into T/NAME.snrs
  local name=$1
  shift
  gdb_device "$SNR" "$T" "$T/ar.elf" --chips 2
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/ar.elf" --breakpoint allreduce "$@" \
    -o "$T/$name.snrs"
  expect_rc 0
  wait "$DEV" || fail "$name: the device exited $?: $(tail -3 "$T/dev.err")"
}
record whole --until-return --count 100000
record short --count 3

run "$SNR" replay "$T/whole.snrs"
expect_rc 0
# the windows' pcs past a 128-byte budget in the spill file (SNR_SPILL_MEM), which the pod replay reads ahead per
# chip: the same table, --json and metrics set as with every pc in memory
for mem in "" 128; do
  SNR_SPILL_MEM=$mem "$SNR" replay "$T/whole.snrs" --json -o "$T/m.mset" >"$T/spill$mem.json" 2>"$T/err" ||
    fail "replay with SNR_SPILL_MEM=$mem: $(cat "$T/err")"
  mv "$T/m.mset" "$T/spill$mem.mset"
done
cmp -s "$T/spill.json" "$T/spill128.json" || fail "the --json differs with the pcs in the spill file"
diff -r "$T/spill.mset" "$T/spill128.mset" >/dev/null || fail "the metrics set differs with the pcs in the spill file"

cp -r "$T/whole.snrs" "$T/mixed.snrs"
cp "$T/short.snrs/window-1.snrt" "$T/mixed.snrs/window-1.snrt"
run "$SNR" replay "$T/mixed.snrs"
expect_rc 1
expect_err "mixed.snrs/window-1.snrt: chip 1's window holds 3 instructions where $T/mixed.snrs/set.json lists"
grep -q "not this pod's window" "$T/err" || fail "the mixed set's reason: $(cat "$T/err")"

python3 - "$T/mixed.snrs/set.json" "$T/short.snrs/set.json" <<'PY' || fail "editing the manifest"
import json, sys
m = json.load(open(sys.argv[1])); s = json.load(open(sys.argv[2]))
m["windows"][1] = s["windows"][1]
json.dump(m, open(sys.argv[1], "w"))
PY
run "$SNR" replay "$T/mixed.snrs"
expect_rc 3
expect_err "the pod replay deadlocked: every chip still running waits for a signal no chip sends:"
grep -Eq "chip 0: blocked at instruction [0-9]+, pc 0x[0-9a-f]+ <allreduce\+0x[0-9a-f]+> [^ ]*allreduce.c:[0-9]+ \(ring_step\): ta.wait" "$T/err" ||
  fail "the deadlock does not name chip 0's wait by instruction, pc, line and function: $(cat "$T/err")"
grep -q "chip 1: its window ended" "$T/err" || fail "the deadlock does not say chip 1's window ended: $(cat "$T/err")"
grep -Eq "^0 .* NO$" "$T/out" || fail "chip 0 reported verified: $(cat "$T/out")"
echo "PASS pod_replay_bad"
