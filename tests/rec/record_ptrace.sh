#!/usr/bin/env bash
# snr record through ptrace, on an x86-64 PIE (x86_rec.c, host cc -O1):
#  1. launching the command: 20000 instructions from work(), verified;
#  2. attaching with --pid to the running program ("loop"): the breakpoint
#     by name resolves through /proc/PID/exe with the load bias (the first pc
#     is the mapped base + nm's offset), and the program runs on after the
#     detach, on the CPUs it had before;
#  3. a window with system calls (io(): write, then read(0, iobuf, 8) from a
#     file): the syscall steps carry post_registers (rax = 3 for write, 8 for
#     read) in `snr trace dump --json`, and read()'s step the 8 bytes the
#     kernel wrote as post memory, so iobuf is never captured afterwards
#     (docs/recording.md, "System calls"); the window replays in unicorn
#     with a matching end state, though it stores 'w' in iobuf[0] before the
#     read overwrites it;
#  4. the launched window proved minimal and complete from the trace itself
#     (check_trace_host: unicorn's memory hooks, uncaptured registers filled
#     two ways), and the checker catching a dropped register capture (rsp, captured first), a
#     register captured after the window changed it and bytes captured that
#     the instruction does not read (trace_edit makes each mistake);
#  5. rep movsb and rep stosq (x86_rec rep): recorded, replayed with a
#     matching end state and proved minimal and complete; a single-step trap
#     may come after several iterations of a fast-string instruction, which
#     the unicorn replay follows (docs/unicorn-sim.md).
# Windows that run into libc's string functions are recorded with AVX
# turned off through GLIBC_TUNABLES: unicorn has no AVX.
# Exit 77 on a host that is not x86-64 Linux or forbids ptrace.
# usage: record_ptrace.sh SNR SRC_DIR CHECK_TRACE_HOST TRACE_EDIT
set -u
SNR=$1; SRC=$2; CHECK=$3; EDIT=$4
[ "$(uname -m)" = x86_64 ] || { echo "skip: x86-64 host only"; exit 77; }
CC=${CC:-cc}
T=$(mktemp -d); PROG=""
cleanup() { [ -n "$PROG" ] && kill "$PROG" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# wait_line REGEX FILE: a launched program runs on detached after snr record
# exits, and prints at its end: wait up to 30 s for its line
wait_line() { for _ in $(seq 300); do grep -q "$1" "$2" && return 0; sleep 0.1; done; return 1; }
# bound at load time (-z now): no lazy PLT resolution (its xsavec is beyond unicorn) inside the windows
"$CC" -O1 -g -fpie -pie -Wl,-z,now "$SRC/x86_rec.c" -o "$T/pie" || fail "cc -pie"
WORK=$(nm "$T/pie" | awk '$3=="work"{print $1}')

# 1. launch
"$SNR" record --breakpoint work --count 20000 -o "$T/a.snrt" -- "$T/pie" >"$T/out.txt" 2>"$T/rec.err"
rc=$?
if [ $rc -ne 0 ] && grep -qi "operation not permitted" "$T/rec.err"; then
  echo "skip: ptrace is not permitted here: $(cat "$T/rec.err")"; exit 77
fi
[ $rc -eq 0 ] || fail "launch: record: $(cat "$T/rec.err")"
grep -q "recorded 20000 instructions" "$T/rec.err" || fail "launch: summary: $(cat "$T/rec.err")"
wait_line "^x86_rec " "$T/out.txt" || fail "launch: the program did not finish within 30 s of the detach"
"$SNR" trace verify "$T/a.snrt" || fail "launch: verify"
"$SNR" trace info "$T/a.snrt" | grep -q "^debugger *ptrace" || fail "launch: debugger is not ptrace"
"$SNR" trace dump "$T/a.snrt" --limit 1 | grep -q " work  " || fail "launch: the window does not start at work"
"$CHECK" "$T/a.snrt" || fail "launch: the trace is not minimal and complete"
# 4. the checker sees a faulty recorder's mistakes
"$EDIT" drop-reg "$T/a.snrt" "$T/e1.snrt" rsp >/dev/null || fail "trace_edit drop-reg"
"$CHECK" "$T/e1.snrt" 2>"$T/chk.err" && fail "a trace without its first register capture passed the check"
grep -q "incomplete" "$T/chk.err" || fail "drop-reg: $(cat "$T/chk.err")"
late=2000 # work() has left values in rax by then: capturing rax there is a mistake
"$EDIT" add-reg "$T/a.snrt" "$T/e2.snrt" $late rax >/dev/null || fail "trace_edit add-reg"
"$CHECK" "$T/e2.snrt" 2>"$T/chk.err" && fail "a trace capturing rax at $late passed the check"
grep -q "register rax captured at instruction $late, but instruction [0-9]* changed it: not minimal" "$T/chk.err" ||
  fail "add-reg: $(cat "$T/chk.err")"
"$EDIT" add-mem "$T/a.snrt" "$T/e3.snrt" 200 0x1000 8 >/dev/null || fail "trace_edit add-mem"
"$CHECK" "$T/e3.snrt" 2>"$T/chk.err" && fail "a trace capturing bytes instruction 200 does not read passed the check"
grep -qF "captured [0x1000, 0x1008), which it does not read: not minimal" "$T/chk.err" || fail "add-mem: $(cat "$T/chk.err")"

# 2. attach to a running PIE
"$T/pie" loop &
PROG=$!
sleep 0.2
LOAD=$(awk -v p="$T/pie" '$6==p {split($1,a,"-"); print a[1]; exit}' "/proc/$PROG/maps")
[ -n "$LOAD" ] || fail "attach: no mapping of the program in /proc/$PROG/maps"
CPUS=$(grep Cpus_allowed_list "/proc/$PROG/status")
"$SNR" record --pid $PROG --breakpoint work --count 20000 -o "$T/b.snrt" 2>"$T/rec.err" ||
  fail "attach: record: $(cat "$T/rec.err")"
# stepping pins the tracee to the recorder's CPU; the detach gives its CPUs back
[ "$(grep Cpus_allowed_list "/proc/$PROG/status")" = "$CPUS" ] ||
  fail "attach: the program's CPUs were not restored: $(grep Cpus_allowed_list "/proc/$PROG/status"), was $CPUS"
"$SNR" trace verify "$T/b.snrt" || fail "attach: verify"
want=$((16#$LOAD + 16#$WORK))
"$SNR" trace info "$T/b.snrt" | grep -q "^breakpoint *work ($(printf %#x $want))" ||
  fail "attach: breakpoint not at the load bias + work: $("$SNR" trace info "$T/b.snrt" | grep breakpoint), want $(printf %#x $want)"
first=$("$SNR" trace dump "$T/b.snrt" --limit 1 | awk '{print $2}')
[ $((first)) -eq $want ] || fail "attach: first pc $first, want $(printf %#x $want)"
sleep 0.2
kill -0 $PROG 2>/dev/null || fail "attach: the program did not survive the detach"
grep -q "^State:.*[RS]" "/proc/$PROG/status" || fail "attach: the program is not running: $(grep State /proc/$PROG/status)"
kill $PROG; wait $PROG 2>/dev/null; PROG=""

# 3. system calls
NOAVX=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX
printf 'ABCDEFGH' >"$T/in.txt"
GLIBC_TUNABLES=$NOAVX "$SNR" record --breakpoint io --count 4000 -o "$T/c.snrt" -- "$T/pie" io <"$T/in.txt" \
  >"$T/out.txt" 2>"$T/rec.err" || fail "io: record: $(cat "$T/rec.err")"
"$SNR" trace verify "$T/c.snrt" || fail "io: verify"
wait_line "^io 0x" "$T/out.txt"
IOBUF=$(sed -n 's/^io \(0x[0-9a-f]*\) .*/\1/p' "$T/out.txt")
[ -n "$IOBUF" ] || fail "io: the program printed no address: $(cat "$T/out.txt")"
"$SNR" trace dump "$T/c.snrt" --json >"$T/c.json" || fail "io: dump --json"
grep '"disasm":"syscall"' "$T/c.json" >"$T/sys.json"
[ -s "$T/sys.json" ] || fail "io: no syscall step in the window"
grep -v -q '"post_registers"' "$T/sys.json" && fail "io: a syscall step without post_registers: $(grep -v post_registers "$T/sys.json" | head -1)"
grep -q '"symbol":"write+[^"]*".*"post_registers":{"rax":"0x0000000000000003"' "$T/sys.json" ||
  fail "io: write's result (rax=3) not recorded after the step: $(cat "$T/sys.json")"
grep -q "\"symbol\":\"[_a-z]*read+[^\"]*\".*\"post_registers\":{\"rax\":\"0x0000000000000008\".*\"post_memory\":\[{\"space\":0,\"chip\":0,\"addr\":$((IOBUF)),\"len\":8,\"data\":\"4142434445464748\"}\]" "$T/sys.json" ||
  fail "io: read's result (rax=8) and the 8 bytes it wrote at $IOBUF not recorded after the step: $(cat "$T/sys.json")"
"$SNR" trace dump "$T/c.snrt" >"$T/c.txt"
grep -F " mem[" "$T/c.txt" | grep -qF "$(printf 'mem[%#x+' $((IOBUF)))" &&
  fail "io: iobuf, written by read(), was captured later: $(grep -F "$(printf 'mem[%#x+' $((IOBUF)))" "$T/c.txt" | head -2)"
"$SNR" replay "$T/c.snrt" >"$T/rep.txt" 2>&1 || fail "io: replay: $(cat "$T/rep.txt")"
grep -q "end state matches the recording" "$T/rep.txt" || fail "io: replay: $(cat "$T/rep.txt")"
"$CHECK" "$T/c.snrt" || fail "io: the trace with system calls is not minimal and complete"

# 5. rep string instructions
GLIBC_TUNABLES=$NOAVX "$SNR" record --breakpoint reps --count 9000 -o "$T/r.snrt" -- "$T/pie" rep \
  >"$T/out.txt" 2>"$T/rec.err" || fail "rep: record: $(cat "$T/rec.err")"
"$SNR" trace dump "$T/r.snrt" >"$T/r.txt"
grep -q " rep movsb " "$T/r.txt" && grep -q " rep stosq " "$T/r.txt" || fail "rep: no rep movsb / rep stosq in the window"
"$SNR" replay "$T/r.snrt" >"$T/rep.txt" 2>&1 || fail "rep: replay: $(cat "$T/rep.txt")"
grep -q "end state matches the recording" "$T/rep.txt" || fail "rep: replay: $(cat "$T/rep.txt")"
"$CHECK" "$T/r.snrt" || fail "rep: the trace is not minimal and complete"
echo "ok: ptrace launch, attach to a PIE by symbol, system-call outputs, rep string instructions, all minimal and complete"
