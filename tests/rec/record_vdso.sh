#!/usr/bin/env bash
# A window that reads the time the way users do: tests/rec/x86_clock.c
# (-O2, libc) calls clock_gettime(CLOCK_MONOTONIC) and time(), both through
# the vDSO, whose code loads the clock from the kernel's [vvar] pages. No debugger can read those (ptrace and
# /proc/PID/mem answer EIO, gdbserver an error), so each such load runs on
# the target and its outputs are recorded as post registers, its step
# marked unread. Through ptrace and through gdbserver, by --method step and
# --method sim:
#   * the window is recorded, the summary counts the unread loads and
#     `snr trace dump` marks as many steps unread, each with its outputs;
#   * the trace replays in unicorn with every pc matched and the target's
#     end state (the time values it read included);
#   * sim and step record the same window outside the vDSO (trace_same
#     --skip over the vDSO's pcs: inside it the seqlock loop retries when
#     the kernel updated the clock meanwhile, and the values read differ
#     between runs): the same pcs, captured registers and bytes, and digest
#     shape; under sim every unread load was run by the target at a
#     checkpoint (none was simulated);
#   * the program's printed result is the one of a run without snr.
#   * an instruction that reads [vvar] and writes memory is refused by name,
#     and a read through a null pointer is an error naming it.
# Stepping through gdbserver is slow enough (a round trip per instruction)
# that the kernel's clock update, every tick, often falls inside a pass of
# the seqlock loop, which then retries; on a loaded machine it may retry
# for long. Those windows are capped at 20,000 instructions: one that
# reaches the cap is still checked (recorded, replay verified) but not
# compared, and the test says so.
# usage: record_vdso.sh SNR TRACE_SAME SRCDIR
set -u
SNR=$1; SAME=$2; SRC=$3
T=$(mktemp -d); GS=""
cleanup() { [ -n "$GS" ] && kill "$GS" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

. "$(dirname "$0")/../gdbserver.sh"

if [ "$(uname -m)" != x86_64 ] || ! command -v setarch >/dev/null || ! setarch -R true 2>/dev/null; then
  echo "skipped: needs an x86-64 host and setarch -R"
  exit 77
fi
grep -q '\[vvar' /proc/self/maps || { echo "skipped: this kernel maps no [vvar] page"; exit 77; }
cc -O2 -no-pie -Wl,-z,now "$SRC/tests/rec/x86_clock.c" -o "$T/clk" || fail "cc x86_clock.c"
want=$("$T/clk" | grep '^clock ') || fail "x86_clock did not run"

# checks one recording: NAME (its files $T/NAME.*), METHOD
checked() {
  local name=$1 method=$2 n
  grep -q "^method $method:" "$T/$name.err" || fail "$name: the summary names no method: $(cat "$T/$name.err")"
  n=$(sed -n 's/^\([0-9]*\) loads\{0,1\} from memory the debugger cannot read.*/\1/p' "$T/$name.err")
  [ -n "$n" ] && [ "$n" -ge 9 ] || fail "$name: expected the vDSO's [vvar] loads to be counted: $(cat "$T/$name.err")"
  "$SNR" trace dump "$T/$name.snrt" >"$T/$name.dump" || fail "$name: trace dump"
  [ "$(grep -c ' unread$' "$T/$name.dump")" -eq "$n" ] ||
    fail "$name: $n unread loads in the summary, $(grep -c ' unread$' "$T/$name.dump") steps marked unread"
  grep ' unread$' "$T/$name.dump" | grep -qv ' after:' && fail "$name: an unread step without outputs"
  "$SNR" trace info "$T/$name.snrt" | grep -q "^unread       $n loads from memory the debugger could not read" ||
    fail "$name: trace info: $("$SNR" trace info "$T/$name.snrt")"
  grep -q ' rdtscp ' "$T/$name.dump" || fail "$name: no rdtscp in the window: not the vDSO's clock read"
  "$SNR" replay "$T/$name.snrt" >"$T/$name.replay" 2>&1 && grep -q "end state matches the recording" "$T/$name.replay" ||
    fail "$name: replay: $(cat "$T/$name.replay")"
  if [ "$method" = sim ]; then
    grep -q "^verified against the target" "$T/$name.err" || fail "$name: not verified: $(cat "$T/$name.err")"
    local ran
    ran=$(sed -n 's/.*, \([0-9]*\) instructions it ran for the simulator.*/\1/p' "$T/$name.err")
    [ -n "$ran" ] && [ "$ran" -ge "$n" ] || fail "$name: the target ran $ran instructions for the simulator, fewer than the $n unread loads"
  fi
  echo "$name: $n unread loads; replay verified"
}

NOAVX=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX
# ptrace: ASLR off (setarch -R) so that both launches put the vDSO and the stack at the same addresses
for m in step sim; do
  GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint timed --until-return --count 100000 --method $m \
    -o "$T/p-$m.snrt" -- "$T/clk" >"$T/p-$m.out" 2>"$T/p-$m.err" || fail "ptrace --method $m: $(cat "$T/p-$m.err")"
  grep -q "^$want\$" "$T/p-$m.out" || fail "ptrace --method $m: the program printed $(cat "$T/p-$m.out"), not $want"
  checked "p-$m" $m
done
vd=$(sed -n 's/^vdso \([0-9a-f]*\) \([0-9a-f]*\)$/\1:\2/p' "$T/p-step.out")
[ -n "$vd" ] && [ "$vd" = "$(sed -n 's/^vdso \([0-9a-f]*\) \([0-9a-f]*\)$/\1:\2/p' "$T/p-sim.out")" ] ||
  fail "the two launches put the vDSO at different addresses: $(cat "$T/p-step.out" "$T/p-sim.out")"
"$SAME" --skip "$vd" "$T/p-step.snrt" "$T/p-sim.snrt" >"$T/p.same" || fail "ptrace: sim and step differ outside the vDSO"
echo "ptrace: $(cat "$T/p.same")"

# A window that ends right after an instruction that leaves eflags' AF
# undefined (the vDSO's first `shl`; the CPU and unicorn set AF otherwise):
# the replay's end-state check leaves AF, PF and OF out, as the recording's
# checkpoints do, so it verifies.
k=$(awk '$4 == "shl" {print $1; exit}' "$T/p-step.dump")
[ -n "$k" ] || fail "no shl in the vDSO's code: $(head -40 "$T/p-step.dump")"
GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint timed --count $((k + 1)) --method step \
  -o "$T/af.snrt" -- "$T/clk" >/dev/null 2>"$T/af.err" || fail "window to the shl: $(cat "$T/af.err")"
awk -v k="$k" '$1 == k' <("$SNR" trace dump "$T/af.snrt") | grep -q ' shl ' || fail "the window does not end at the shl"
"$SNR" replay "$T/af.snrt" >"$T/af.replay" 2>&1 && grep -q "end state matches the recording" "$T/af.replay" ||
  fail "window ending after shl: replay: $(cat "$T/af.replay")"
echo "window ending after the vDSO's shl (instruction $k): replay verified"

# refused NAME FUNCTION ARG PATTERN: recording from FUNCTION of `clk ARG`
# fails (exit 1) by both methods with an error matching PATTERN
refused() {
  local m rc
  for m in step sim; do
    setarch -R "$SNR" record --breakpoint "$2" --count 10 --method $m -o "$T/$1-$m.snrt" -- "$T/clk" "$3" \
      >/dev/null 2>"$T/$1-$m.err"
    rc=$?
    [ $rc -eq 1 ] && grep -q "$4" "$T/$1-$m.err" || fail "$1 --method $m: exit $rc: $(cat "$T/$1-$m.err")"
  done
}
# An instruction that reads [vvar] and writes memory (push qword ptr [vvar])
# is refused by name: what it stores cannot be recorded.
refused push pushed push \
  "instruction 0 at 0x[0-9a-f]* reads memory the debugger cannot read (at 0x[0-9a-f]*) and writes memory"
echo "push qword ptr [vvar]: refused by name (step and sim)"
# A read through a null pointer: neither the debugger nor the program can
# read it; an error names the instruction, the address and the signal (not a
# window that ends by the fault with a load the replay cannot reproduce).
refused null nulled null \
  "instruction [0-9]* at 0x[0-9a-f]*: reading its input at 0x0: the debugger cannot read it, and the target stopped there on signal 11"
echo "a read through a null pointer: an error naming it (step and sim)"

if command -v gdbserver >/dev/null; then
  capped=""
  for m in step sim; do
    gdbserver_start "$T" "$T/clk"
    "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/clk" --breakpoint timed --until-return --count 20000 \
      --method $m -o "$T/g-$m.snrt" 2>"$T/g-$m.err" || fail "gdbserver --method $m: $(cat "$T/g-$m.err")"
    wait $GS; GS=""
    grep -q "ended by the function's return" "$T/g-$m.err" || capped="$capped $m"
    grep -q "^$want\$" "$T/gs.out" || fail "gdbserver --method $m: the program printed $(cat "$T/gs.out"), not $want"
    sed -n 's/^vdso \([0-9a-f]*\) \([0-9a-f]*\)$/\1:\2/p' "$T/gs.out" >"$T/g-$m.vdso"
    checked "g-$m" $m
  done
  cmp -s "$T/g-step.vdso" "$T/g-sim.vdso" && [ -s "$T/g-step.vdso" ] ||
    fail "gdbserver: the two launches put the vDSO at different addresses"
  if [ -n "$capped" ]; then
    echo "gdbserver: NOT compared: --method$capped reached the 20,000-instruction cap inside the vDSO's retries (load: $(cut -d' ' -f1-3 /proc/loadavg))"
  else
    "$SAME" --skip "$(cat "$T/g-step.vdso")" "$T/g-step.snrt" "$T/g-sim.snrt" >"$T/g.same" ||
      fail "gdbserver: sim and step differ outside the vDSO"
    echo "gdbserver: $(cat "$T/g.same")"
  fi
else
  echo "gdbserver part skipped (no gdbserver)"
fi
echo "record_vdso: all passed"
