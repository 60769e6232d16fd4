#!/usr/bin/env bash
# snr record through gdbserver running an x86-64 program (host cc -O1), once
# built -no-pie and once as a PIE: 20000 instructions from work(), verified,
# and checked for sense: isa x86-64, the first pc at work (for the PIE, at
# its load bias + nm's offset, read from /proc/PID/maps), rsp captured at the
# first push, the load of `seed` captured with its value (rip-relative in
# the PIE), the stack slots written by call/push never captured, and
# `snr trace dump` disassembling; and proved minimal and complete from the
# trace itself by check_trace_host (unicorn's memory hooks, uncaptured
# registers filled two ways). Exit 77 without gdbserver.
# usage: record_gdbserver.sh SNR SRC_DIR CHECK_TRACE_HOST
set -u
SNR=$1; SRC=$2; CHECK=$3
command -v gdbserver >/dev/null || { echo "skip: gdbserver is not installed (scripts/install-deps)"; exit 77; }
CC=${CC:-cc}
T=$(mktemp -d); GS=""
cleanup() { [ -n "$GS" ] && kill "$GS" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$(dirname "$0")/../gdbserver.sh"
"$CC" -O1 -g -no-pie -fno-pie "$SRC/x86_rec.c" -o "$T/nopie" || fail "cc -no-pie"
"$CC" -O1 -g -fpie -pie "$SRC/x86_rec.c" -o "$T/pie" || fail "cc -pie"

for kind in nopie pie; do
  P="$T/$kind"
  gdbserver_start "$T" "$P"
  PID=$(sed -n 's/.*pid = \([0-9]*\).*/\1/p' "$T/gs.out")
  LOAD=$(awk -v p="$P" '$6==p {split($1,a,"-"); print a[1]; exit}' "/proc/$PID/maps")
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$P" --breakpoint work --count 20000 -o "$T/$kind.snrt" \
    2>"$T/rec.err" || fail "$kind: record: $(cat "$T/rec.err")"
  grep -q "recorded 20000 instructions" "$T/rec.err" || fail "$kind: summary: $(cat "$T/rec.err")"
  wait $GS; GS=""
  grep -q "^x86_rec " "$T/gs.out" || fail "$kind: the program did not finish after the detach: $(cat "$T/gs.out")"
  "$SNR" trace verify "$T/$kind.snrt" || fail "$kind: verify"
  "$CHECK" "$T/$kind.snrt" || fail "$kind: the trace is not minimal and complete"
  "$SNR" trace info "$T/$kind.snrt" >"$T/info.txt"
  grep -q "^isa *x86-64" "$T/info.txt" || fail "$kind: isa: $(cat "$T/info.txt")"
  grep -q "^instructions 20000 of 20000" "$T/info.txt" || fail "$kind: count: $(cat "$T/info.txt")"

  WORK=$(nm "$P" | awk '$3=="work"{print $1}')
  SEED=$(nm "$P" | awk '$3=="seed"{print $1}')
  BIAS=0
  [ "$kind" = pie ] && BIAS=$((16#$LOAD))
  "$SNR" trace dump "$T/$kind.snrt" --limit 400 >"$T/dump.txt" || fail "$kind: dump"
  first=$(awk 'NR==1{print $2}' "$T/dump.txt")
  [ $((first)) -eq $((BIAS + 16#$WORK)) ] ||
    fail "$kind: first pc $first, work is at $(printf %#x $((BIAS + 16#$WORK)))"
  # dump disassembles: a call and a ret, by mnemonic
  grep -q " call 0x" "$T/dump.txt" && grep -q " ret " "$T/dump.txt" || fail "$kind: no call/ret disassembled"
  grep -m1 " push " "$T/dump.txt" | grep -q "rsp=0x" || fail "$kind: rsp not captured at the first push"
  # seed (= 7) read once, captured with its value
  want=$(printf 'mem[%#x+8]=0700000000000000' $((BIAS + 16#$SEED)))
  grep -F "$want" "$T/dump.txt" >"$T/seed.txt" || fail "$kind: the load of seed was not captured as $want"
  if [ "$kind" = pie ]; then
    grep -q "\[rip + 0x" "$T/seed.txt" || fail "pie: the load of seed is not rip-relative: $(cat "$T/seed.txt")"
  fi
  # the return address pushed by call and read by ret is never captured
  grep " ret " "$T/dump.txt" | grep -q "mem\[" && fail "$kind: ret captured a stack slot the call wrote"
  # the JSON dump is one object per instruction
  n=$("$SNR" trace dump "$T/$kind.snrt" --json --limit 50 | grep -c '"disasm"')
  [ "$n" -eq 50 ] || fail "$kind: --json dump gave $n instructions, not 50"
done
echo "ok: gdbserver windows of 20000 recorded and checked, -no-pie and PIE"
