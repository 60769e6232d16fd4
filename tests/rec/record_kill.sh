#!/usr/bin/env bash
# A recording survives its recorder being killed. Against `snr device
# --gdb --halt`, a 200k-instruction recording (--method step) of window() is ended five
# times with SIGKILL, each at a random point (once its journal has passed a
# random size), and once with SIGINT and once with SIGTERM. Afterwards the
# device's instret counter, read over the GDB protocol by gdb-multiarch,
# says how many instructions the target stepped since the breakpoint (read
# the same way from a device stopped there): the trace must hold every one
# of them, less at most the one in flight when SIGKILL came, and replay
# verified up to there. SIGINT and SIGTERM give a finished trace marked
# interrupted, exit 130 and 143, replayed against its end-state digest (the
# registers and written memory the recorder read when it stopped: the
# recorder detaches, so the device runs on and its instret no longer tells).
# usage: record_kill.sh SNR
set -u
SNR=$1
command -v gdb-multiarch >/dev/null || { echo "SKIP: no gdb-multiarch"; exit 77; }
command -v riscv64-unknown-elf-nm >/dev/null || { echo "SKIP: no riscv64-unknown-elf-nm"; exit 77; }
T=$(mktemp -d); DEV=""; REC=""
cleanup() { [ -n "$REC" ] && kill -9 "$REC" 2>/dev/null; [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$(dirname "$0")/rec_prog.c" -o "$T/p.elf" || fail "snr cc"
WINDOW=$(riscv64-unknown-elf-nm "$T/p.elf" | awk '$3=="window"{print $1}')

start_device() {
  rm -f "$T/dev.err"
  "$SNR" device "$T/p.elf" --gdb tcp:127.0.0.1:0 --halt 2>"$T/dev.err" >"$T/dev.out" &
  DEV=$!
  for _ in $(seq 200); do
    PORT=$(grep -o '127.0.0.1:[0-9]*' "$T/dev.err" | head -1 | cut -d: -f2)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  fail "device did not start: $(cat "$T/dev.err")"
}
stop_device() { kill "$DEV" 2>/dev/null; wait "$DEV" 2>/dev/null; DEV=""; }
# gdb-multiarch's view of the device's instret (extra gdb commands first)
instret() {
  timeout 60 gdb-multiarch -batch -nx -ex "target remote 127.0.0.1:$PORT" "$@" -ex 'p/d $instret' \
    -ex kill 2>/dev/null | sed -n 's/^\$[0-9]* = \([0-9]*\)$/\1/p' | tail -1
}
trace_count() { # instructions a trace holds
  "$SNR" trace info "$1" --allow-truncated --json 2>/dev/null |
    python3 -c 'import json,sys; print(json.load(sys.stdin)["instructions"])'
}

# record_then SIGNAL OUT METHOD BYTES: starts a device and a 200k recording
# into OUT, sends SIGNAL once the journal OUT.partial has BYTES (or the
# recorder ended); leaves the recorder's exit status in $rc
record_then() {
  rm -f "$2" "$2.partial"
  start_device
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 200000 \
    --method "$3" -o "$2" 2>"$T/rec.err" &
  REC=$!
  for _ in $(seq 6000); do
    sz=$(stat -c %s "$2.partial" 2>/dev/null || echo 0)
    [ "$sz" -ge "$4" ] && break
    kill -0 $REC 2>/dev/null || break
    sleep 0.01
  done
  kill -"$1" $REC 2>/dev/null; wait $REC 2>/dev/null; rc=$?; REC=""
}

# instret at the breakpoint: the device is deterministic
start_device
BASE=$(instret -ex "break *0x$WINDOW" -ex continue)
stop_device
[ -n "$BASE" ] && [ "$BASE" -gt 0 ] || fail "no instret at the breakpoint"

for run in $(seq "${SNR_KILL_RUNS:-5}"); do
  limit=$(( (RANDOM * 32768 + RANDOM) % 1500000 + 20000 ))  # journal bytes, ~600 to 40k steps
  record_then 9 "$T/k.snrt" step "$limit"
  [ -e "$T/k.snrt" ] && fail "run $run: the recording ended before the kill (journal limit $limit)"
  AFTER=$(instret)
  stop_device
  [ -n "$AFTER" ] || fail "run $run: no instret from the device after the kill"
  stepped=$((AFTER - BASE))
  n=$(trace_count "$T/k.snrt.partial")
  [ -n "$n" ] || fail "run $run: the journal does not read: $("$SNR" trace info "$T/k.snrt.partial" 2>&1)"
  [ "$n" -le "$stepped" ] && [ $((stepped - n)) -le 1 ] ||
    fail "run $run: the device stepped $stepped instructions, the trace holds $n"
  "$SNR" trace info "$T/k.snrt.partial" >/dev/null 2>&1
  rc=$?
  [ $rc -eq 3 ] || fail "run $run: trace info on the killed recording: exit $rc, want 3"
  "$SNR" replay "$T/k.snrt.partial" --allow-truncated >"$T/replay.txt" 2>&1 ||
    fail "run $run: replay: $(cat "$T/replay.txt")"
  grep -q "^instructions  $n (the trace is truncated" "$T/replay.txt" ||
    fail "run $run: replay of $n instructions: $(cat "$T/replay.txt")"
  echo "run $run: killed after $n instructions (device stepped $stepped)"
done

# --method sim: the simulator runs ahead of the target, which catches up at
# checkpoints; a kill loses none of what the target ran (the journal holds
# at least that, and its further steps are the simulation's, unchecked).
record_then 9 "$T/s.snrt" sim 1000000
if [ ! -e "$T/s.snrt" ]; then
  AFTER=$(instret)
  n=$(trace_count "$T/s.snrt.partial")
  [ -n "$AFTER" ] && [ -n "$n" ] && [ "$n" -ge $((AFTER - BASE - 1)) ] ||
    fail "--method sim: the device ran $((AFTER - BASE)) instructions, the journal holds $n"
  echo "--method sim: killed with $n instructions in the journal (device ran $((AFTER - BASE)))"
fi
stop_device

# SIGINT and SIGTERM: a finished trace, marked interrupted, verified to its end state
for sig in INT TERM; do
  record_then "$sig" "$T/i.snrt" step 400000
  want=$([ $sig = INT ] && echo 130 || echo 143)
  [ $rc -eq $want ] || fail "SIG$sig: exit $rc, want $want: $(cat "$T/rec.err")"
  grep -q "ended by interrupted (SIG$sig)" "$T/rec.err" || fail "SIG$sig summary: $(cat "$T/rec.err")"
  [ -e "$T/i.snrt.partial" ] && fail "SIG$sig: the journal was left behind"
  stop_device
  # The recorder detached, so the device ran on: the count is checked by the
  # replay against the end state the recorder read when it stopped.
  n=$(trace_count "$T/i.snrt")
  [ -n "$n" ] && [ "$n" -gt 0 ] || fail "SIG$sig: no instructions in the trace"
  "$SNR" trace info "$T/i.snrt" >"$T/info.txt" 2>&1
  rc=$?
  [ $rc -eq 3 ] || fail "SIG$sig: trace info on an interrupted trace: exit $rc, want 3"
  grep -q "interrupted" "$T/info.txt" || fail "SIG$sig: not marked interrupted: $(cat "$T/info.txt")"
  "$SNR" replay "$T/i.snrt" --allow-truncated >"$T/replay.txt" 2>&1 || fail "SIG$sig replay: $(cat "$T/replay.txt")"
  grep -q "end state matches the recording" "$T/replay.txt" || fail "SIG$sig replay: $(cat "$T/replay.txt")"
  echo "SIG$sig: interrupted after $n instructions, exit $want"
done
echo "ok"
