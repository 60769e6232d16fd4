#!/usr/bin/env bash
# A program that faults before the window: snr record fails (exit 1) saying
# what stopped it, by the signal's name and number and where ("the program
# stopped with SIGSEGV (signal 11) at 0x... before reaching breakpoint
# work"), not "the program signal 11". Through ptrace, on the host (x86-64
# Linux; exit 77 elsewhere or where ptrace is forbidden).
# usage: record_fault.sh SNR
set -u
SNR=$1
[ "$(uname -m)" = x86_64 ] && [ "$(uname -s)" = Linux ] || { echo "skip: x86-64 Linux host only"; exit 77; }
CC=${CC:-cc}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat >"$T/segv.c" <<'C'
volatile int *p;
__attribute__((noinline)) int work(int n) { return n * 3; }
int main(void) { *p = 1; return work(2); }
C
"$CC" -O1 -g "$T/segv.c" -o "$T/segv" || fail "cc"
"$SNR" record --breakpoint work --count 100 -o "$T/s.snrt" -- "$T/segv" >"$T/out.txt" 2>&1
rc=$?
if grep -q "ptrace.*\(not permitted\|denied\)" "$T/out.txt"; then echo "skip: ptrace forbidden here"; exit 77; fi
[ $rc -eq 1 ] || fail "record of a faulting program: exit $rc: $(cat "$T/out.txt")"
grep -q "the program stopped with SIGSEGV (signal 11) at 0x[0-9a-f]* before reaching breakpoint work" "$T/out.txt" ||
  fail "the message does not name the fault: $(cat "$T/out.txt")"
[ ! -e "$T/s.snrt" ] || fail "a trace was written"
echo "ok: $(cat "$T/out.txt")"
