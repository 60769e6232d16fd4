#!/usr/bin/env bash
# snr record --method sim against --method step through QEMU's user-mode
# stubs, where unicorn runs the window ahead of the halted program: aarch64
# under qemu-aarch64 -g (tests/uc/uc_kernel.c's copy loop and matmul, with
# the default CPU's SVE registers in the target description, and
# tests/rec/user_prog.c built -O2 -static against glibc, on a cortex-a57
# whose glibc takes no SVE string routines) and plain RV64 under
# qemu-riscv64 -g (tests/rec/rv_rec.c and user_prog.c through snr cc,
# picolibc). user_prog's window calls strtol, qsort and snprintf and writes
# its line with a system call (svc, ecall), which runs on the target under
# sim. Both methods must record the same window (trace_same: pcs, captured
# registers and bytes per instruction, post-step values, the end-state
# digest; qemu-riscv64's cycle and instret read the host's clock, so their
# end values are left out), both traces replay verified, and the sim
# recording says it was verified against the target with far fewer requests.
# qemu-user's -seed 1 makes AT_RANDOM (glibc's stack guard, which qsort_r's
# canary reads) the same in both launches.
# usage: record_qemu_method.sh SNR TRACE_SAME UC_KERNEL_A64 USER_PROG_A64 SRCDIR
set -u
SNR=$1; SAME=$2; KERNEL=$3; USER_A64=$4; SRC=$5
T=$(mktemp -d); QEMU=""
cleanup() { [ -n "$QEMU" ] && kill "$QEMU" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v qemu-aarch64 >/dev/null && command -v qemu-riscv64 >/dev/null ||
  fail "qemu-aarch64 and qemu-riscv64 are needed (scripts/install-deps: qemu-user)"
[ -n "$KERNEL" ] && [ -f "$KERNEL" ] && [ -n "$USER_A64" ] && [ -f "$USER_A64" ] ||
  fail "no aarch64 programs: aarch64-linux-gnu-gcc was missing at meson setup (scripts/install-deps)"

# record NAME METHOD QEMU ELF ISA BREAKPOINT RECORD-ARGS -- QEMU-ARGS...
record() {
  local name=$1 method=$2 qemu=$3 elf=$4 isa=$5 bp=$6; shift 6
  local args=()
  while [ $# -gt 0 ] && [ "$1" != -- ]; do args+=("$1"); shift; done
  shift
  local port ok=""
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$qemu" "$@" -g "$port" "$elf" >"$T/$name.$method.qemu" 2>&1 &
  QEMU=$!
  for _ in $(seq 100); do
    "$SNR" record --target tcp:127.0.0.1:$port --elf "$elf" --isa "$isa" --breakpoint "$bp" --method "$method" \
      "${args[@]}" -o "$T/$name.$method.snrt" 2>"$T/$name.$method.err" && { ok=1; break; }
    grep -q "refused" "$T/$name.$method.err" || break
    sleep 0.05
  done
  [ -n "$ok" ] || fail "$name --method $method: $(cat "$T/$name.$method.err")"
  wait $QEMU; QEMU=""
  grep -q "^method $method:" "$T/$name.$method.err" || fail "$name: the summary names no method: $(cat "$T/$name.$method.err")"
  "$SNR" replay "$T/$name.$method.snrt" >"$T/$name.$method.replay" 2>&1 ||
    fail "$name --method $method: replay: $(cat "$T/$name.$method.replay")"
  grep -q "end state matches the recording" "$T/$name.$method.replay" ||
    fail "$name --method $method: replay verification: $(cat "$T/$name.$method.replay")"
}

# compare NAME QEMU ELF ISA BREAKPOINT RECORD-ARGS -- QEMU-ARGS...
compare() {
  local name=$1; shift
  record "$name" step "$@"
  record "$name" sim "$@"
  local clocks=()
  [ "$1" = qemu-riscv64 ] && clocks=(--clock cycle --clock instret)
  "$SAME" "${clocks[@]}" "$T/$name.step.snrt" "$T/$name.sim.snrt" ||
    fail "$name: --method sim and --method step recorded different traces"
  grep -q "^verified against the target" "$T/$name.sim.err" || fail "$name: no verification line: $(cat "$T/$name.sim.err")"
  ! grep -q "^fallback" "$T/$name.sim.err" || fail "$name: the sim recording fell back: $(cat "$T/$name.sim.err")"
  "$SNR" trace info "$T/$name.sim.snrt" >"$T/$name.info"
  grep -q "^method       sim" "$T/$name.info" || fail "$name: trace info shows no method: $(cat "$T/$name.info")"
  # the simulation, not a round trip per instruction: under a tenth of stepping's requests
  local qs qm
  qs=$(sed -n 's/^method step: \([0-9]*\) debugger requests.*/\1/p' "$T/$name.step.err")
  qm=$(sed -n 's/^method sim: \([0-9]*\) debugger requests.*/\1/p' "$T/$name.sim.err")
  [ -n "$qs" ] && [ -n "$qm" ] && [ $((qm * 10)) -lt "$qs" ] ||
    fail "$name: sim took $qm debugger requests, stepping $qs"
  echo "$name: same trace by sim and step ($qm requests against $qs); $(grep '^method sim' "$T/$name.sim.err")"
}

"$SNR" cc -O1 "$SRC/tests/rec/rv_rec.c" -o "$T/rv_rec.elf" || fail "snr cc rv_rec"
"$SNR" cc "$SRC/tests/rec/user_prog.c" -o "$T/user_rv.elf" || fail "snr cc user_prog"

compare a64-kernel qemu-aarch64 "$KERNEL" aarch64 copy_loop --count 40000 -- -seed 1
compare a64-user qemu-aarch64 "$USER_A64" aarch64 report --count 200000 --until-return -- -cpu cortex-a57 -seed 1
grep -q "svc #0" <("$SNR" trace dump "$T/a64-user.sim.snrt") || fail "a64-user: no svc in the window"
grep -q "1 instructions it ran for the simulator" "$T/a64-user.sim.err" ||
  fail "a64-user: the svc did not run on the target: $(cat "$T/a64-user.sim.err")"
compare rv-rec qemu-riscv64 "$T/rv_rec.elf" ta1 work --count 20000 --
compare rv-user qemu-riscv64 "$T/user_rv.elf" ta1 report --count 200000 --until-return --
grep -q "ecall" <("$SNR" trace dump "$T/rv-user.sim.snrt") || fail "rv-user: no ecall in the window"
grep -q "1 instructions it ran for the simulator" "$T/rv-user.sim.err" ||
  fail "rv-user: the ecall did not run on the target: $(cat "$T/rv-user.sim.err")"
grep -q "^user_prog 68994" "$T/rv-user.sim.qemu" || fail "rv-user: the program did not finish: $(cat "$T/rv-user.sim.qemu")"
# The whole call of rv_rec's work() (168,026 instructions, one long loop):
# without breakpoint hit counts a stride's checkpoint waits for the loop's
# exit instead of stopping at every iteration since the last (12,584
# requests when every 65,536 instructions were a checkpoint, 6,342 now: the
# first stride, before the recorder knows the stub cannot count, still
# stops per iteration).
record rv-call sim qemu-riscv64 "$T/rv_rec.elf" ta1 work --count 1000000 --until-return --
grep -q "^recorded 168026 instructions" "$T/rv-call.sim.err" || fail "rv-call: $(cat "$T/rv-call.sim.err")"
req=$(sed -n 's/^method sim: \([0-9]*\) debugger requests.*/\1/p' "$T/rv-call.sim.err")
[ -n "$req" ] && [ "$req" -lt 8000 ] || fail "rv-call: $req debugger requests (at most 8000 expected)"
echo "rv-call: the whole call by sim in $req requests"
echo "record_qemu_method: all passed"
