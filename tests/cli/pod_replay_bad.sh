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
# - the whole set with chip 1's capture of sp left out (tests/rec/trace_edit.c
#   drop-reg): the instruction that first reads it comes before chip 1's first
#   DMA or wait, in its first private stretch (which runs on the replay's
#   threads, replayer/pod.c); the replay fails (exit 3) naming chip 1, that
#   instruction with its pc and source, and the register, and its --json and
#   report are the same bytes on 1, 2 and 3 threads.
# And the whole set's replay with its pcs in the spill file gives the same bytes.
# usage: pod_replay_bad.sh SNR SRCDIR TRACE_EDIT
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
SRC=${2:?usage: pod_replay_bad.sh SNR SRCDIR TRACE_EDIT}
EDIT=${3:?usage: pod_replay_bad.sh SNR SRCDIR TRACE_EDIT}

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
cp -r "$T/whole.snrs" "$T/holed.snrs"
idx=$("$EDIT" drop-reg "$T/whole.snrs/window-1.snrt" "$T/holed.snrs/window-1.snrt" sp) || fail "trace_edit drop-reg sp"
line=$("$SNR" trace dump "$T/whole.snrs/window-1.snrt" | awk -v i="$idx" '$1 == i')
echo "$line" | grep -q "sp" || fail "chip 1's instruction $idx, where sp was captured, does not name it: $line"
echo "$line" | grep -Eq "ta\.(dma|wait)" && fail "chip 1's instruction $idx is a DMA or wait, not private: $line"
"$SNR" trace dump "$T/whole.snrs/window-1.snrt" | awk -v i="$idx" '$1 < i' | grep -Eq "ta\.(dma|wait)" &&
  fail "a DMA or wait precedes chip 1's instruction $idx: it is not in the first private stretch"
for t in 1 2 3; do
  "$SNR" replay "$T/holed.snrs" --threads "$t" --json >"$T/holed.$t.json" 2>"$T/holed.$t.err"
  rc=$?
  [ "$rc" = 3 ] || fail "holed --threads $t: exit $rc, not 3: $(cat "$T/holed.$t.err")"
  grep -Eq "^chip 1: instruction $idx \(pc 0x[0-9a-f]+ <allreduce[+0-9a-fx]*> [^ ]*allreduce.c:[0-9]+ \([a-z_]+\): [^)]*sp[^)]*\) failed in the pod replay: .*reads register 2, which the trace neither captured nor saw written" "$T/holed.$t.err" ||
    fail "holed --threads $t: the failure does not name chip 1's instruction $idx, its line and sp: $(cat "$T/holed.$t.err")"
  grep -v "^snr: replay: [0-9]* threads\? ran" "$T/holed.$t.err" >"$T/holed.$t.report"
  [ "$t" = 1 ] && continue
  cmp -s "$T/holed.1.json" "$T/holed.$t.json" || fail "holed --threads $t: --json differs from one thread's"
  cmp -s "$T/holed.1.report" "$T/holed.$t.report" || fail "holed --threads $t: the report differs from one thread's"
done
echo "PASS pod_replay_bad"
