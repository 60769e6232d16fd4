#!/usr/bin/env bash
# snr record through ptrace, on an x86-64 PIE (x86_rec.c, host cc -O1):
#  1. launching the command: 20000 instructions from work(), verified;
#  2. attaching with --pid to the running program ("loop"): the breakpoint
#     by name resolves through /proc/PID/exe with the load bias (the first pc
#     is the mapped base + nm's offset), and the program runs on after the
#     detach;
#  3. a window with system calls (io(): write, then read(0, iobuf, 8) from a
#     file): the syscall steps carry post_registers (rax = 3 for write, 8 for
#     read) in `snr trace dump --json`; the memory the kernel wrote is not
#     known to the ISA, so the later reads of iobuf[1..7] (not written by the
#     window before) are captured as first-use inputs with the bytes read()
#     put there, while iobuf[0] (written by the window before the read) is
#     not captured at all: the trace holds the window's own value for it
#     (docs/recording.md, "System calls").
# Exit 77 on a host that is not x86-64 Linux or forbids ptrace.
# usage: record_ptrace.sh SNR SRC_DIR
set -u
SNR=$1; SRC=$2
[ "$(uname -m)" = x86_64 ] || { echo "skip: x86-64 host only"; exit 77; }
CC=${CC:-cc}
T=$(mktemp -d); PROG=""
cleanup() { [ -n "$PROG" ] && kill "$PROG" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$CC" -O1 -g -fpie -pie "$SRC/x86_rec.c" -o "$T/pie" || fail "cc -pie"
WORK=$(nm "$T/pie" | awk '$3=="work"{print $1}')

# 1. launch
"$SNR" record --breakpoint work --count 20000 -o "$T/a.snrt" -- "$T/pie" >"$T/out.txt" 2>"$T/rec.err"
rc=$?
if [ $rc -ne 0 ] && grep -qi "operation not permitted" "$T/rec.err"; then
  echo "skip: ptrace is not permitted here: $(cat "$T/rec.err")"; exit 77
fi
[ $rc -eq 0 ] || fail "launch: record: $(cat "$T/rec.err")"
grep -q "recorded 20000 instructions" "$T/rec.err" || fail "launch: summary: $(cat "$T/rec.err")"
grep -q "^x86_rec " "$T/out.txt" || fail "launch: the program did not finish after the detach"
"$SNR" trace verify "$T/a.snrt" || fail "launch: verify"
"$SNR" trace info "$T/a.snrt" | grep -q "^debugger *ptrace" || fail "launch: debugger is not ptrace"
"$SNR" trace dump "$T/a.snrt" --limit 1 | grep -q " work  " || fail "launch: the window does not start at work"

# 2. attach to a running PIE
"$T/pie" loop &
PROG=$!
sleep 0.2
LOAD=$(awk -v p="$T/pie" '$6==p {split($1,a,"-"); print a[1]; exit}' "/proc/$PROG/maps")
[ -n "$LOAD" ] || fail "attach: no mapping of the program in /proc/$PROG/maps"
"$SNR" record --pid $PROG --breakpoint work --count 20000 -o "$T/b.snrt" 2>"$T/rec.err" ||
  fail "attach: record: $(cat "$T/rec.err")"
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
printf 'ABCDEFGH' >"$T/in.txt"
"$SNR" record --breakpoint io --count 4000 -o "$T/c.snrt" -- "$T/pie" io <"$T/in.txt" >"$T/out.txt" 2>"$T/rec.err" ||
  fail "io: record: $(cat "$T/rec.err")"
"$SNR" trace verify "$T/c.snrt" || fail "io: verify"
IOBUF=$(sed -n 's/^io \(0x[0-9a-f]*\) .*/\1/p' "$T/out.txt")
[ -n "$IOBUF" ] || fail "io: the program printed no address: $(cat "$T/out.txt")"
"$SNR" trace dump "$T/c.snrt" --json >"$T/c.json" || fail "io: dump --json"
grep '"disasm":"syscall"' "$T/c.json" >"$T/sys.json"
[ -s "$T/sys.json" ] || fail "io: no syscall step in the window"
grep -v -q '"post_registers"' "$T/sys.json" && fail "io: a syscall step without post_registers: $(grep -v post_registers "$T/sys.json" | head -1)"
grep -q '"symbol":"write+[^"]*".*"post_registers":{"rax":"0x0000000000000003"' "$T/sys.json" ||
  fail "io: write's result (rax=3) not recorded after the step: $(cat "$T/sys.json")"
grep -q '"symbol":"[_a-z]*read+[^"]*".*"post_registers":{"rax":"0x0000000000000008"' "$T/sys.json" ||
  fail "io: read's result (rax=8) not recorded after the step: $(cat "$T/sys.json")"
"$SNR" trace dump "$T/c.snrt" >"$T/c.txt"
for k in 1 2 3 4 5 6 7; do
  m=$(printf 'mem[%#x+1]=%02x' $((IOBUF + k)) $((0x41 + k)))
  grep -qF "$m" "$T/c.txt" || fail "io: iobuf[$k] not captured with read()'s byte as $m"
done
grep -qF "$(printf 'mem[%#x+' $((IOBUF)))" "$T/c.txt" &&
  fail "io: iobuf[0], written by the window before read(), was captured: $(grep -F "$(printf 'mem[%#x+' $((IOBUF)))" "$T/c.txt")"
echo "ok: ptrace launch, attach to a PIE by symbol, system-call outputs"
