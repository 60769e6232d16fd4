#!/usr/bin/env bash
# snr record checks everything it can while the target is halted, before it
# lets it run, and a failed check leaves the target halted where it was:
#   - against `snr device --gdb --halt`: an x86-64 --elf (architecture), the
#     ELF of another TA1 program (code bytes), a breakpoint symbol the ELF
#     lacks, a --chip the device lacks, an output path in a missing folder,
#     an output that is the ELF (or a link to it; --force or not), an
#     output that exists (without --force).
#     Each exits 1 naming what was wrong and "left it halted at pc ENTRY"
#     (the ELF's entry: nothing ran); then a right recording from the same
#     device succeeds and the program ends as it should.
#   - real peers: gdbserver (without --once) running x86-64 work() with the
#     --elf of another x86-64 program and of a RISC-V one; qemu-riscv64 -g
#     running an RV64 program, with an x86-64 --elf and another program's; a process attached
#     with --pid given another program's ELF, left stopped (state T) at the
#     same pc twice, then recorded; a launched command, killed.
# usage: record_preflight.sh SNR SRC_DIR
set -u
SNR=$1; SRC=$2
CC=${CC:-cc}
T=$(mktemp -d); DEV=""; PEER=""
cleanup() { for p in $DEV $PEER; do kill -9 "$p" 2>/dev/null; done; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
. "$SRC/../gdb_device.sh"
"$SNR" cc -O1 "$SRC/rec_prog.c" -o "$T/p.elf" || fail "snr cc rec_prog"
"$SNR" cc -O2 "$SRC/rv_rec.c" -o "$T/rv.elf" || fail "snr cc rv_rec"
"$CC" -O1 -no-pie -fno-pie "$SRC/x86_rec.c" -o "$T/x86" || fail "cc x86_rec"
printf '#include <stdio.h>\nint main(int c, char **v) { printf("other %%d\\n", c * 3); return 0; }\n' >"$T/other.c"
"$CC" -O2 -no-pie -fno-pie "$T/other.c" -o "$T/x86other" || fail "cc other"
ENTRY=$(riscv64-unknown-elf-readelf -h "$T/p.elf" | awk '/Entry point/{print $4}')

# expect_refusal NAME WANT [record args...]: exit 1, the message names WANT
# and says the target was left halted; sets HALTED_PC.
expect_refusal() {
  local name=$1 want=$2
  shift 2
  "$SNR" record --count 1000 "$@" 2>"$T/rec.err" >/dev/null
  local rc=$?
  [ $rc -eq 1 ] || fail "$name: exit $rc, want 1: $(cat "$T/rec.err")"
  grep -qF -- "$want" "$T/rec.err" || fail "$name: the message does not say '$want': $(cat "$T/rec.err")"
  HALTED_PC=$(sed -n 's/.*the target was not continued: snr left it halted at pc \(0x[0-9a-f]*\).*/\1/p' "$T/rec.err")
  [ -n "$HALTED_PC" ] || fail "$name: the message does not say the target was left halted, and where: $(cat "$T/rec.err")"
}

# 1. snr device: every refusal before the program ran one instruction.
gdb_device "$SNR" "$T" "$T/p.elf"
TGT="--target tcp:127.0.0.1:$PORT"
expect_refusal "x86-64 ELF" "$T/x86 is built for i386:x86-64 (ELF machine 62), but the target reports riscv:rv64" \
  $TGT --elf "$T/x86" --breakpoint main -o "$T/a.snrt"
[ $((HALTED_PC)) -eq $((ENTRY)) ] || fail "x86-64 ELF: halted at $HALTED_PC, the program starts at $ENTRY"
expect_refusal "another TA1 program" "$T/rv.elf does not hold the target's code: at 0x" \
  $TGT --elf "$T/rv.elf" --breakpoint main -o "$T/a.snrt"
grep -q "(main)" "$T/rec.err" || fail "the code mismatch should name the symbol: $(cat "$T/rec.err")"
expect_refusal "missing symbol" "no symbol 'nosuch' in $T/p.elf" $TGT --elf "$T/p.elf" --breakpoint nosuch -o "$T/a.snrt"
expect_refusal "missing chip" "--chip 3: the target has 1 thread" $TGT --elf "$T/p.elf" --breakpoint window --chip 3 \
  -o "$T/a.snrt"
expect_refusal "output folder" "$T/none/a.snrt" $TGT --elf "$T/p.elf" --breakpoint window -o "$T/none/a.snrt"
# the output is the program's ELF (refused even with --force), or a file that exists (refused without it)
cp "$T/p.elf" "$T/p.keep"
expect_refusal "output on the ELF" "$T/p.elf is an input of this command" $TGT --elf "$T/p.elf" --breakpoint window \
  -o "$T/p.elf" --force
ln -s p.elf "$T/link.elf"
expect_refusal "output on a link to the ELF" "$T/link.elf is the input $T/p.elf" $TGT --elf "$T/p.elf" \
  --breakpoint window -o "$T/link.elf" --force
cmp -s "$T/p.elf" "$T/p.keep" || fail "a refused recording replaced the ELF"
echo old >"$T/old.snrt"
expect_refusal "existing output" "$T/old.snrt exists: snr does not replace a file unless given --force" $TGT \
  --elf "$T/p.elf" --breakpoint window -o "$T/old.snrt"
[ "$(cat "$T/old.snrt")" = old ] || fail "a refused recording changed old.snrt"
[ $((HALTED_PC)) -eq $((ENTRY)) ] || fail "after eight refusals the device is at $HALTED_PC, not $ENTRY"
kill -0 "$DEV" 2>/dev/null || fail "the device ended after the refusals: $(cat "$T/dev.err")"
"$SNR" record $TGT --elf "$T/p.elf" --breakpoint window --count 1000 -o "$T/a.snrt" 2>"$T/rec.err" ||
  fail "the right recording after the refusals: $(cat "$T/rec.err")"
wait "$DEV"; DEV=""
grep -q "^rec_prog " "$T/dev.out" || fail "the program did not finish after the recording: $(cat "$T/dev.out")"
"$SNR" replay "$T/a.snrt" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"

# 2. gdbserver (without --once: it keeps the process for the next debugger).
if command -v gdbserver >/dev/null; then
  gdbserver 127.0.0.1:0 "$T/x86" >"$T/gs.out" 2>&1 &
  PEER=$!
  GPORT=""
  for _ in $(seq 200); do
    GPORT=$(sed -n 's/^Listening on port \([0-9]*\)/\1/p' "$T/gs.out" 2>/dev/null | head -1)
    [ -n "$GPORT" ] && break
    sleep 0.05
  done
  [ -n "$GPORT" ] || fail "gdbserver did not start: $(cat "$T/gs.out")"
  expect_refusal "gdbserver: another program" "$T/x86other does not hold the target's code" \
    --target tcp:127.0.0.1:$GPORT --elf "$T/x86other" --breakpoint main -o "$T/g.snrt"
  first=$HALTED_PC
  expect_refusal "gdbserver: RISC-V ELF" "$T/p.elf is built for riscv:rv64 (ELF machine 243), but the target reports i386:x86-64" \
    --target tcp:127.0.0.1:$GPORT --elf "$T/p.elf" --breakpoint window -o "$T/g.snrt"
  [ "$HALTED_PC" = "$first" ] || fail "gdbserver: halted at $first, then at $HALTED_PC"
  "$SNR" record --target tcp:127.0.0.1:$GPORT --elf "$T/x86" --breakpoint work --count 1000 -o "$T/g.snrt" \
    2>"$T/rec.err" || fail "gdbserver: the right recording after the refusals: $(cat "$T/rec.err")"
  wait "$PEER"; PEER=""
  grep -q "^x86_rec " "$T/gs.out" || fail "gdbserver: the program did not finish: $(cat "$T/gs.out")"
else
  echo "skip: gdbserver is not installed (scripts/install-deps)"
fi

# 3. qemu-riscv64 -g (its user-mode stub lets the program run when the
# debugger leaves: only the refusals are checked).
if command -v qemu-riscv64 >/dev/null; then
  for case in x86 rv; do
    QPORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    qemu-riscv64 -g "$QPORT" "$T/rv.elf" >"$T/q.out" 2>&1 &
    PEER=$!
    for _ in $(seq 100); do
      "$SNR" record --target tcp:127.0.0.1:$QPORT --isa ta1 --elf "$T/$([ $case = x86 ] && echo x86 || echo p.elf)" \
        --breakpoint main --count 10 -o "$T/q.snrt" 2>"$T/rec.err" >/dev/null
      grep -q "refused" "$T/rec.err" || break
      sleep 0.05
    done
    if [ $case = x86 ]; then
      grep -qF "$T/x86 is built for i386:x86-64 (ELF machine 62), but the target reports riscv:rv64" "$T/rec.err" ||
        fail "qemu: x86-64 ELF: $(cat "$T/rec.err")"
    else
      grep -qF "$T/p.elf does not hold the target's code" "$T/rec.err" || fail "qemu: another program: $(cat "$T/rec.err")"
    fi
    grep -q "closed the connection without detaching" "$T/rec.err" || fail "qemu: what became of the target: $(cat "$T/rec.err")"
    [ -e "$T/q.snrt" ] && fail "qemu: a refused recording wrote a trace"
    wait "$PEER"; PEER=""
  done
else
  echo "skip: qemu-riscv64 is not installed (scripts/install-deps)"
fi

# 4. ptrace: an attached process is left stopped where it was (twice at the
# same pc), then recorded; a launched one is killed.
"$T/x86" loop >/dev/null &
PEER=$!
sleep 0.2
expect_refusal "ptrace: another program" "$T/x86other does not hold the target's code" \
  --pid "$PEER" --elf "$T/x86other" --breakpoint main -o "$T/p.snrt"
grep -q "detached pid $PEER with SIGSTOP" "$T/rec.err" || fail "ptrace: how it was left: $(cat "$T/rec.err")"
first=$HALTED_PC
sleep 0.2
state=$(awk '{print $3}' "/proc/$PEER/stat")
[ "$state" = T ] || fail "ptrace: the process should be stopped (T), is $state"
expect_refusal "ptrace: RISC-V ELF" "$T/p.elf is built for riscv:rv64" --pid "$PEER" --elf "$T/p.elf" \
  --breakpoint window -o "$T/p.snrt"
[ "$HALTED_PC" = "$first" ] || fail "ptrace: stopped at $first, then at $HALTED_PC"
"$SNR" record --pid "$PEER" --elf "$T/x86" --breakpoint work --count 1000 -o "$T/p.snrt" 2>"$T/rec.err" ||
  fail "ptrace: the right recording of the stopped process: $(cat "$T/rec.err")"
kill -9 "$PEER"; wait "$PEER" 2>/dev/null; PEER=""
"$SNR" record --elf "$T/x86other" --breakpoint main --count 10 -o "$T/l.snrt" -- "$T/x86" 2>"$T/rec.err"
rc=$?
[ $rc -eq 1 ] || fail "ptrace launch: exit $rc"
grep -q "the target was not continued at pc 0x[0-9a-f]*, but the program snr launched (pid [0-9]*) was killed" \
  "$T/rec.err" || fail "ptrace launch: $(cat "$T/rec.err")"
echo "ok: record refuses before the target runs, and leaves it halted where it was"
