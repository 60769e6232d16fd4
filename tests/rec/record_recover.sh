#!/usr/bin/env bash
# snr record --method sim when the target does not do what the simulation
# did: planted non-determinism, each found at a checkpoint and recovered by
# putting the target back at the last verified checkpoint and stepping the
# rest of the window; the trace is exactly the one --method step records
# (trace_same), both replay verified, and the summary and `snr trace info`
# say where and why it fell back and that the part before was verified.
#   * TA1, chip 1 of a 2-chip pod: a write into the recorded chip's HBM in
#     the middle of the window, as another chip's DMA would land there
#     (planted with `snr device --test-dma`: the device's own chips cannot,
#     as the recorder holds them stopped); tests/rec/dma_prog.c.
#   * x86-64 through ptrace and through gdbserver: one page mapped twice
#     (tests/rec/x86_rec.c alias): writes through one mapping change what
#     the other reads, which the simulator, holding the page it read
#     earlier, cannot know.
#   * a TA1 window of 1.2M instructions by --method sim: a checkpoint at
#     least every 65,536 instructions, verified, replay verified.
# usage: record_recover.sh SNR TRACE_SAME SRCDIR
set -u
SNR=$1; SAME=$2; SRC=$3
T=$(mktemp -d); DEV=""; GS=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; [ -n "$GS" ] && kill "$GS" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

. "$(dirname "$0")/../gdb_device.sh"
. "$(dirname "$0")/../gdbserver.sh"

replayed() { # TRACE
  "$SNR" replay "$1" >"$1.replay" 2>&1 && grep -q "end state matches the recording" "$1.replay" ||
    fail "$1: replay: $(cat "$1.replay")"
}

# The summary and trace info of a recording that fell back at a checkpoint
# after instruction 0 (so that a verified part was kept).
fell_back() { # NAME TRACE ERR
  grep -q "^fallback: the target did not match the simulation at the checkpoint at instruction [0-9]*" "$3" ||
    fail "$1: the summary says no fallback: $(cat "$3")"
  local at
  at=$(sed -n 's/.*it was put back at the checkpoint at instruction \([0-9]*\), verified to there.*/\1/p' "$3")
  [ -n "$at" ] && [ "$at" -gt 0 ] || fail "$1: no verified part was kept: $(cat "$3")"
  "$SNR" trace info "$2" >"$2.info" || fail "$1: trace info"
  grep -q "^verified     to instruction $at against the target" "$2.info" ||
    fail "$1: trace info shows no verification to $at: $(cat "$2.info")"
  grep -q "^fallback     instructions $at on recorded by stepping" "$2.info" ||
    fail "$1: trace info shows no fallback: $(cat "$2.info")"
  echo "$1: verified to $at, stepped from there: $(sed -n 's/^fallback: //p' "$3" | cut -c1-200)"
}

# ---- TA1: a planted DMA into the recorded chip's HBM
"$SNR" cc -O1 "$SRC/tests/rec/dma_prog.c" -o "$T/dma.elf" || fail "snr cc dma_prog"
"$SNR" device "$T/dma.elf" --chips 2 >"$T/dma.out" || fail "dma_prog: $(cat "$T/dma.out")"
AT=$(sed -n 's/^dma_prog at \([0-9]*\) in \(0x[0-9a-f]*\).*/\1/p' "$T/dma.out" | head -1)
IN=$(sed -n 's/^dma_prog at \([0-9]*\) in \(0x[0-9a-f]*\).*/\2/p' "$T/dma.out" | head -1)
[ -n "$AT" ] && [ -n "$IN" ] || fail "dma_prog printed: $(cat "$T/dma.out")"
# the write lands in the second loop, after the cycle-counter checkpoint,
# on in[64..128), which the window reads only after it
PLANT="1,$((AT + 14000)),$((IN + 64)),64"
ta1() { # METHOD [DEVICE ARGS...]
  local m=$1; shift
  gdb_device "$SNR" "$T" "$T/dma.elf" --chips 2 "$@"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/dma.elf" --breakpoint window --until-return \
    --count 100000 --chip 1 --method "$m" --kill -o "$T/dma.$m$#.snrt" 2>"$T/dma.$m$#.err" ||
    fail "dma_prog --method $m $*: $(cat "$T/dma.$m$#.err")"
  wait $DEV; DEV=""
  replayed "$T/dma.$m$#.snrt"
}
ta1 sim # no planted write: verified to the end, no fallback
grep -q "^verified against the target" "$T/dma.sim0.err" || fail "dma_prog: $(cat "$T/dma.sim0.err")"
grep -q "fallback" "$T/dma.sim0.err" && fail "dma_prog fell back with nothing planted: $(cat "$T/dma.sim0.err")"
ta1 step --test-dma "$PLANT"
ta1 sim --test-dma "$PLANT"
"$SAME" "$T/dma.step2.snrt" "$T/dma.sim2.snrt" || fail "dma_prog with a planted DMA: sim and step differ"
fell_back "TA1 planted DMA (chip 1 of 2)" "$T/dma.sim2.snrt" "$T/dma.sim2.err"
# the planted bytes are in the trace: what the window read after they landed
"$SNR" trace dump "$T/dma.sim2.snrt" --json | grep -q "\"data\":\"a5a4a7a6a1a0a3a2" ||
  fail "dma_prog: the planted bytes are not what the window read"

# ---- TA1: checkpoints in a window longer than 1M instructions
"$SNR" cc -O1 -DITERS=100000 "$SRC/bench/window_prog.c" -o "$T/long.elf" || fail "snr cc window_prog"
gdb_device "$SNR" "$T" "$T/long.elf"
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/long.elf" --breakpoint window --count 1100000 \
  --method sim --kill -o "$T/long.snrt" 2>"$T/long.err" || fail "1.1M window: $(cat "$T/long.err")"
wait $DEV; DEV=""
replayed "$T/long.snrt"
"$SNR" trace info "$T/long.snrt" >"$T/long.info"
CK=$(sed -n 's/^verified     to instruction 1100000 against the target: \([0-9]*\) checkpoints.*/\1/p' "$T/long.info")
[ -n "$CK" ] && [ "$CK" -ge $((1100000 / 65536)) ] ||
  fail "1.1M window: want a checkpoint at least every 65,536 instructions: $(cat "$T/long.info")"
echo "TA1 1.1M-instruction window: $CK checkpoints, verified to its end"

# ---- x86-64: a page mapped twice
NOAVX=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX
if [ "$(uname -m)" = x86_64 ] && command -v setarch >/dev/null && setarch -R true 2>/dev/null &&
  cc -O1 -no-pie -Wl,-z,now "$SRC/tests/rec/x86_rec.c" -o "$T/x86" 2>/dev/null; then
  for m in step sim; do
    GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint aliased --until-return --count 20000 --method $m \
      --kill -o "$T/alias.$m.snrt" -- "$T/x86" alias >/dev/null 2>"$T/alias.$m.err" ||
      fail "alias --method $m: $(cat "$T/alias.$m.err")"
    replayed "$T/alias.$m.snrt"
  done
  "$SAME" "$T/alias.step.snrt" "$T/alias.sim.snrt" || fail "x86-64 alias (ptrace): sim and step differ"
  fell_back "x86-64 aliased page (ptrace)" "$T/alias.sim.snrt" "$T/alias.sim.err"
  # the same after 100 system calls (each a checkpoint the recorder commits
  # to) with thousands of separate ranges in its sets, 800 more added after
  # the last: the undo logs put exactly the last commit's sets back
  for m in step sim; do
    GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint aliased_many --until-return --count 200000 \
      --method $m --kill -o "$T/many.$m.snrt" -- "$T/x86" aliasmany >/dev/null 2>"$T/many.$m.err" ||
      fail "aliasmany --method $m: $(cat "$T/many.$m.err")"
    replayed "$T/many.$m.snrt"
  done
  "$SAME" "$T/many.step.snrt" "$T/many.sim.snrt" || fail "x86-64 aliasmany (ptrace): sim and step differ"
  fell_back "x86-64 aliased page after 100 system calls (ptrace)" "$T/many.sim.snrt" "$T/many.sim.err"
  CK=$(sed -n 's/^verified     to instruction [0-9]* against the target: \([0-9]*\) checkpoints.*/\1/p' \
    "$T/many.sim.snrt.info")
  [ -n "$CK" ] && [ "$CK" -gt 100 ] ||
    fail "aliasmany: want the mismatch after the 100 system calls' checkpoints: $(cat "$T/many.sim.snrt.info")"
  if command -v gdbserver >/dev/null; then
    for m in step sim; do
      gdbserver_start "$T" "$T/x86" alias
      "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/x86" --breakpoint aliased --until-return --count 20000 \
        --method $m -o "$T/gs.$m.snrt" 2>"$T/gs.$m.err" || fail "gdbserver alias --method $m: $(cat "$T/gs.$m.err")"
      wait $GS; GS=""
      replayed "$T/gs.$m.snrt"
    done
    "$SAME" "$T/gs.step.snrt" "$T/gs.sim.snrt" || fail "x86-64 alias (gdbserver): sim and step differ"
    fell_back "x86-64 aliased page (gdbserver)" "$T/gs.sim.snrt" "$T/gs.sim.err"
  fi
else
  echo "x86-64 part skipped (needs an x86-64 host, cc and setarch -R)"
fi
echo "record_recover: all passed"
