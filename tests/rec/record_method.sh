#!/usr/bin/env bash
# snr record --method sim against --method step, over RSP from `snr device
# --gdb`: for tests/rec/rec_prog.c and every workload in workloads/ (attn and
# tiles end soon after their window starts: 300 and 3000 instructions; one of
# them on a 4-chip pod, recording chip 1 while the others stay stopped),
# both methods record the same window (trace_same: the pcs, the captured
# registers and bytes of every instruction, the end-state digest), both
# traces replay verified in the GRM, and the sim recording says how it was
# verified (`snr trace info`). Windows that read the cycle counter
# (allgather's ta_cycles()) exercise checkpoints: the target runs those
# instructions itself.
# usage: record_method.sh SNR TRACE_SAME SRCDIR
set -u
SNR=$1; SAME=$2; SRC=$3
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

. "$(dirname "$0")/../gdb_device.sh"
. "$(dirname "$0")/../gdbserver.sh"

record() { # NAME METHOD BREAKPOINT COUNT CHIP DEVICE-ARGS...
  local name=$1 method=$2 bp=$3 count=$4 chip=$5; shift 5
  gdb_device "$SNR" "$T" "$T/$name.elf" "$@"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/$name.elf" --breakpoint "$bp" --count "$count" \
    --chip "$chip" --method "$method" --kill -o "$T/$name.$method.snrt" 2>"$T/$name.$method.err" ||
    fail "$name --method $method: $(cat "$T/$name.$method.err")"
  wait $DEV; DEV=""
  grep -q "^method $method:" "$T/$name.$method.err" || fail "$name: the summary names no method: $(cat "$T/$name.$method.err")"
  "$SNR" replay "$T/$name.$method.snrt" >"$T/$name.$method.replay" 2>&1 ||
    fail "$name --method $method: replay: $(cat "$T/$name.$method.replay")"
  grep -q "end state matches the recording" "$T/$name.$method.replay" ||
    fail "$name --method $method: replay verification: $(cat "$T/$name.$method.replay")"
}

compare() { # NAME BREAKPOINT COUNT CHIP DEVICE-ARGS...
  local name=$1 bp=$2 count=$3 chip=$4; shift 4
  record "$name" step "$bp" "$count" "$chip" "$@"
  record "$name" sim "$bp" "$count" "$chip" "$@"
  "$SAME" "$T/$name.step.snrt" "$T/$name.sim.snrt" || fail "$name: --method sim and --method step recorded different traces"
  grep -q "^verified against the target" "$T/$name.sim.err" || fail "$name: no verification line: $(cat "$T/$name.sim.err")"
  "$SNR" trace info "$T/$name.sim.snrt" >"$T/$name.info"
  grep -q "^method       sim" "$T/$name.info" || fail "$name: trace info shows no method: $(cat "$T/$name.info")"
  grep -q "^verified     to instruction $(grep -o 'recorded [0-9]*' "$T/$name.sim.err" | cut -d' ' -f2) " "$T/$name.info" ||
    fail "$name: trace info shows no verification to the window's end: $(cat "$T/$name.info")"
  echo "$name: same trace by sim and step; $(grep '^method sim' "$T/$name.sim.err")"
}

"$SNR" cc -O1 "$SRC/tests/rec/rec_prog.c" -o "$T/rec.elf" || fail "snr cc rec_prog"
for w in mlp decode matmul_chain allgather attn tiles; do
  "$SNR" cc -O1 "$SRC/workloads/$w.c" -o "$T/$w.elf" || fail "snr cc $w"
done

compare rec window 30000 0
compare mlp forward 20000 0
compare decode decode_step 20000 0
compare matmul_chain chain 20000 0
compare allgather gather 1200 1 --chips 4
compare attn attn 300 0
compare tiles attend 3000 0
grep -q "checkpoints" "$T/allgather.sim.err" || fail "allgather: $(cat "$T/allgather.sim.err")"

# x86-64 host code through ptrace (unicorn runs the window): the same
# program, not a PIE and with ASLR off (setarch -R) so that both launches
# put the stack and libraries at the same addresses, and bound at load time
# (-z now: no lazy PLT resolution, whose xsavec is beyond unicorn). work()
# and the rep string instructions (which run on the target under sim) give
# the same traces; rdtsc (stamp()) runs on the target, its result is the
# target's (the two launches read different clocks, so that window is only
# checked to replay verified).
NOAVX=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX
if [ "$(uname -m)" = x86_64 ] && command -v setarch >/dev/null && setarch -R true 2>/dev/null &&
  cc -O1 -no-pie -Wl,-z,now "$SRC/tests/rec/x86_rec.c" -o "$T/x86" 2>/dev/null; then
  host() { # NAME METHOD BREAKPOINT COUNT ARG
    GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint "$3" --count "$4" --method "$2" --kill \
      -o "$T/$1.$2.snrt" -- "$T/x86" $5 >/dev/null 2>"$T/$1.$2.err" || fail "$1 --method $2: $(cat "$T/$1.$2.err")"
    "$SNR" replay "$T/$1.$2.snrt" >"$T/$1.$2.replay" 2>&1 &&
      grep -q "end state matches the recording" "$T/$1.$2.replay" ||
      fail "$1 --method $2: replay: $(cat "$T/$1.$2.replay")"
  }
  for w in "work work 20000" "rep reps 9000 rep"; do
    set -- $w
    host "x86-$1" step "$2" "$3" "${4:-}"
    host "x86-$1" sim "$2" "$3" "${4:-}"
    "$SAME" "$T/x86-$1.step.snrt" "$T/x86-$1.sim.snrt" || fail "x86-64 $1: --method sim and step differ"
    grep -q "^verified against the target" "$T/x86-$1.sim.err" || fail "x86-64 $1: $(cat "$T/x86-$1.sim.err")"
    echo "x86-64 $1 (ptrace): same trace by sim and step; $(grep '^method sim' "$T/x86-$1.sim.err")"
  done
  # and through gdbserver (which launches with ASLR off itself)
  if command -v gdbserver >/dev/null; then
    for m in step sim; do
      gdbserver_start "$T" "$T/x86"
      "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/x86" --breakpoint work --count 20000 --method $m \
        -o "$T/gs.$m.snrt" 2>"$T/gs.$m.err" || fail "gdbserver --method $m: $(cat "$T/gs.$m.err")"
      wait $GS
      "$SNR" replay "$T/gs.$m.snrt" >"$T/gs.$m.replay" 2>&1
      grep -q "end state matches the recording" "$T/gs.$m.replay" ||
        fail "gdbserver --method $m: the replay did not verify: $(cat "$T/gs.$m.replay"); the recording said: $(tail -n 5 "$T/gs.$m.err")"
    done
    "$SAME" "$T/gs.step.snrt" "$T/gs.sim.snrt" || fail "x86-64 work through gdbserver: --method sim and step differ"
    echo "x86-64 work (gdbserver): same trace by sim and step; $(grep '^method sim' "$T/gs.sim.err")"
  fi
  host x86-tsc sim stamp 4000 tsc
  "$SNR" trace dump "$T/x86-tsc.sim.snrt" >"$T/tsc.txt"
  [ "$(grep -c ' rdtsc ' "$T/tsc.txt")" -eq 2 ] || fail "x86-64 tsc: two rdtsc expected in the window: $(grep -c rdtsc "$T/tsc.txt")"
  grep -q "2 instructions it ran for the simulator" "$T/x86-tsc.sim.err" ||
    fail "x86-64 tsc: the rdtsc did not run on the target: $(cat "$T/x86-tsc.sim.err")"
else
  echo "x86-64 host part skipped (needs an x86-64 host, cc and setarch -R)"
fi

# Bad input: an unknown method is a usage error naming it.
"$SNR" record --target tcp:127.0.0.1:1 --breakpoint x --count 1 -o "$T/x.snrt" --method fast 2>"$T/bad.err"
[ $? -eq 2 ] && grep -q "fast" "$T/bad.err" || fail "--method fast: $(cat "$T/bad.err")"
echo "record_method: all passed"
