#!/usr/bin/env bash
# Recording as users think of it (docs/recording.md, "Recording a TA1
# program in one command"):
#   1. `snr record --run PROG.elf --breakpoint FILE:LINE`: starts the
#      device itself, stops at the line's first statement (the address it
#      names is the trace's first pc, inside the function gdb names for the
#      line), records, replays; the device is gone and its folder removed.
#      Two chips: --chips 2 --chip 1 records chip 1.
#   2. Refusals: a data object (exit 1 at once, naming it, not a run to the
#      program's end), a line without code (naming the nearest lines with
#      code), a missing file; `-- ./PROG.elf` (a TA1 ELF) names --run.
#   3. No device outlives snr: SIGINT and SIGTERM while it waits for the
#      breakpoint (exit 130/143), SIGINT inside the window (the trace is
#      written, marked interrupted, exit 130), SIGKILL (the kernel ends the
#      device: PR_SET_PDEATHSIG).
# usage: record_run.sh SNR SRC_DIR
set -u
SNR=$1; SRC=$2
T=$(mktemp -d); BG=""
export TMPDIR=$T # the device's socket folder goes here: checked to be removed
cleanup() { [ -n "$BG" ] && kill -9 $BG 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O2 -g "$SRC/../an/softmax.c" -o "$T/sm.elf" || fail "snr cc softmax.c"
"$SNR" cc -O2 -g "$SRC/run_prog.c" -o "$T/run.elf" || fail "snr cc run_prog.c"

# no_device DESC: no snr-run folder left, no device process of ours
no_device() {
  ls -d "$T"/snr-run.* >/dev/null 2>&1 && fail "$1: the device's folder is left: $(ls -d "$T"/snr-run.*)"
  pgrep -f "device $T/" >/dev/null && fail "$1: a device is left running: $(pgrep -af "device $T/")"
  return 0
}

# 1. a line, recorded in one command
LINE=$(grep -n "/\* KNOWN-DIVIDE \*/" "$SRC/../an/softmax.c" | cut -d: -f1)
"$SNR" record --run "$T/sm.elf" --breakpoint "softmax.c:$LINE" --count 3000 -o "$T/a.snrt" >"$T/rec.out" 2>"$T/rec.err" ||
  fail "record --run: $(cat "$T/rec.err")"
AT=$(sed -n "s/.*--breakpoint softmax.c:$LINE is at \(0x[0-9a-f]*\) in softmax_rows$/\1/p" "$T/rec.err")
[ -n "$AT" ] || fail "record --run does not say where softmax.c:$LINE is: $(cat "$T/rec.err")"
grep -q "recorded 3000 instructions" "$T/rec.err" || fail "record --run: $(cat "$T/rec.err")"
FIRST=$("$SNR" trace info "$T/a.snrt" --json 2>/dev/null | python3 -c 'import json,sys; print(hex(json.load(sys.stdin)["meta"]["breakpoint_address"]))' 2>/dev/null)
[ $((FIRST)) -eq $((AT)) ] || fail "the trace starts at $FIRST, the line is at $AT"
"$SNR" annotate "$T/a.snrt" --top 3 >"$T/ann.txt" 2>&1 || fail "annotate: $(cat "$T/ann.txt")"
grep -q "softmax.c:$LINE" "$T/ann.txt" || fail "annotate does not show the line recorded: $(cat "$T/ann.txt")"
no_device "record --run"
if command -v gdb-multiarch >/dev/null; then
  G=$(gdb-multiarch -nx -batch -ex "break softmax.c:$LINE" "$T/sm.elf" 2>&1 | sed -n 's/^Breakpoint 1 at \(0x[0-9a-f]*\):.*/\1/p')
  [ $((G)) -eq $((AT)) ] || fail "gdb puts softmax.c:$LINE at $G, snr at $AT"
fi
# a pod: chip 1 of 2
"$SNR" record --run "$T/sm.elf" --chips 2 --chip 1 --breakpoint softmax_rows --count 500 -o "$T/c1.snrt" >/dev/null 2>"$T/rec.err" ||
  fail "record --run --chips 2 --chip 1: $(cat "$T/rec.err")"
"$SNR" trace info "$T/c1.snrt" >"$T/info.txt" 2>&1 || fail "trace info: $(cat "$T/info.txt")"
grep -qi "chip.*1" "$T/info.txt" || fail "the trace is not chip 1's: $(cat "$T/info.txt")"
no_device "record --run --chips 2"
# every chip of the pod in one command: --run --chips 2 --pod
"$SNR" record --run "$T/sm.elf" --chips 2 --pod --breakpoint softmax_rows --count 500 -o "$T/pod.snrs" >/dev/null 2>"$T/rec.err" ||
  fail "record --run --chips 2 --pod: $(cat "$T/rec.err")"
"$SNR" trace info "$T/pod.snrs" --json >"$T/pod.json" 2>&1 || fail "trace info of the pod: $(cat "$T/pod.json")"
python3 -c 'import json,sys; c=json.load(open(sys.argv[1]))["chips"]; assert [x["chip"] for x in c]==[0,1] and all(x["instructions"]==500 for x in c), c' "$T/pod.json" ||
  fail "record --run --pod: not both chips' windows of 500: $(cat "$T/pod.json")"
no_device "record --run --chips 2 --pod"

# 2. refusals, each at once
expect() { # NAME WANT ARGS...
  local name=$1 want=$2
  shift 2
  "$SNR" record --count 100 -o "$T/r.snrt" "$@" >/dev/null 2>"$T/rec.err"
  local rc=$?
  [ $rc -eq 1 ] || fail "$name: exit $rc, want 1: $(cat "$T/rec.err")"
  grep -qF -- "$want" "$T/rec.err" || fail "$name: the message does not say '$want': $(cat "$T/rec.err")"
  [ -e "$T/r.snrt" ] && fail "$name: a trace was written"
  no_device "$name"
}
S=$(date +%s)
expect "data object" "--breakpoint table: 'table' is a data object (128 bytes at 0x" --run "$T/run.elf" --breakpoint table
[ $(($(date +%s) - S)) -lt 60 ] || fail "the data object was not refused at once"
grep -q "left it halted" "$T/rec.err" && fail "--run says the target was left halted, but the device was stopped: $(cat "$T/rec.err")"
expect "line without code" "no code at line 16 of" --run "$T/run.elf" --breakpoint run_prog.c:16
grep -q "the nearest lines with code are 15 and 19" "$T/rec.err" || fail "nearest lines: $(cat "$T/rec.err")"
expect "unknown file" "no line table names a file nosuch.c" --run "$T/run.elf" --breakpoint nosuch.c:3
expect "TA1 ELF to --" "is a RISC-V ELF, which does not run on this" --breakpoint main -- "$T/run.elf"
grep -qF -- "snr record --run $T/run.elf" "$T/rec.err" || fail "the TA1 ELF refusal does not name --run: $(cat "$T/rec.err")"
(cd "$T" && "$SNR" record --breakpoint main --count 100 -o r.snrt -- ./run.elf) 2>"$T/rec.err" && fail "./run.elf accepted"
grep -q "dash\|/bin/sh" "$T/rec.err" && fail "./run.elf went to the shell: $(cat "$T/rec.err")"

# 3. signals: no device left on any exit path
# start_bg ARGS...: snr record in the background; DEVPID its device
start_bg() {
  "$SNR" record --run "$T/run.elf" "$@" >/dev/null 2>"$T/bg.err" &
  BG=$!
  DEVPID=""
  for _ in $(seq 1 6000); do
    DEVPID=$(pgrep -P "$BG" | head -1)
    [ -n "$DEVPID" ] && ls "$T"/snr-run.*/gdb >/dev/null 2>&1 && break
    sleep 0.01
  done
  [ -n "$DEVPID" ] || fail "no device started: $(cat "$T/bg.err")"
}
# wait_gone DESC PID: PID ends (within 60 s)
wait_gone() {
  for _ in $(seq 1 600); do kill -0 "$2" 2>/dev/null || return 0; sleep 0.1; done
  fail "$1: process $2 still runs"
}
for sig in INT TERM; do
  start_bg --breakpoint late --count 100 -o "$T/s.snrt"
  sleep 1 # connected, continued, waiting for late()
  kill -$sig "$BG"
  wait "$BG"; rc=$?; BG=""
  want=$([ $sig = INT ] && echo 130 || echo 143)
  [ $rc -eq "$want" ] || fail "SIG$sig before the window: exit $rc, want $want: $(cat "$T/bg.err")"
  wait_gone "SIG$sig before the window" "$DEVPID"
  no_device "SIG$sig before the window"
done
# inside the window: the trace is finished and marked interrupted
start_bg --breakpoint spin --count 1G --method step -o "$T/i.snrt"
for _ in $(seq 1 600); do [ -e "$T/i.snrt.partial" ] && break; sleep 0.1; done
[ -e "$T/i.snrt.partial" ] || fail "the window did not start: $(cat "$T/bg.err")"
sleep 0.5
kill -INT "$BG"
wait "$BG"; rc=$?; BG=""
[ $rc -eq 130 ] || fail "SIGINT in the window: exit $rc: $(cat "$T/bg.err")"
grep -q "ended by interrupted (SIGINT)" "$T/bg.err" || fail "SIGINT in the window: $(cat "$T/bg.err")"
"$SNR" replay --allow-truncated "$T/i.snrt" >"$T/replay.txt" 2>&1 || fail "replay of the interrupted window: $(cat "$T/replay.txt")"
wait_gone "SIGINT in the window" "$DEVPID"
no_device "SIGINT in the window"
# SIGKILL: snr cannot clean up; the kernel ends the device
start_bg --breakpoint late --count 100 -o "$T/k.snrt"
kill -KILL "$BG"
wait "$BG" 2>/dev/null; BG=""
wait_gone "SIGKILL" "$DEVPID"
echo "ok: record --run starts and stops the device on every exit; FILE:LINE, data objects and TA1 ELFs to -- as users meant them"
