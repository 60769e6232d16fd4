#!/usr/bin/env bash
# Windows that read the time the way users do: tests/rec/x86_clock.c (-O2,
# libc) calls clock_gettime(CLOCK_MONOTONIC) and time(), both through the
# vDSO, whose code loads the clock from the kernel's [vvar] pages (which no
# debugger can read) in a seqlock loop. A call into the vDSO runs on the
# target as one step, as a system call does: the recorder finds the vDSO by
# the auxiliary vector (ptrace: /proc/PID/auxv; gdbserver: qXfer:auxv:read),
# names the entry by the vDSO's .dynsym, continues the target to the return
# address and records the registers after it and the memory the matching
# system call writes (trace flag 64, "call"). Through ptrace and through
# gdbserver, by --method step and --method sim:
#   * timed() (one clock_gettime, one time()): the summary counts 2 calls,
#     `snr trace dump` marks those 2 steps call, named __vdso_clock_gettime
#     and __vdso_time, each with its outputs (the pc at the return among
#     them), and no vDSO instruction was stepped (no rdtscp, nothing unread);
#     `snr trace info` counts them;
#   * clocks(100) (100 clock_gettime calls): 100 calls;
#   * every trace replays in unicorn with every pc matched and the target's
#     end state; the program's printed result is the one of a run without snr;
#   * sim and step record the same window (trace_same --clock-calls, no pc
#     skipped: the same pcs, captured registers and bytes everywhere, the
#     calls at the same steps with the same output registers and memory
#     ranges; only the time values and the end state that holds them differ);
#     under sim the target ran every call (none was simulated).
# vDSO code reached otherwise (here: a window that starts at the vDSO's
# entry) is stepped instruction by instruction as before: its [vvar] loads
# run on the target, marked unread (flag 32), and replay verified, also for
# a window that ends after the vDSO's `shl` (AF undefined).
#   * an instruction that reads [vvar] and writes memory is refused by name,
#     and a read through a null pointer is an error naming it.
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

# checks one recording: NAME (its files $T/NAME.*), METHOD, CALLS (the vDSO calls in it)
checked() {
  local name=$1 method=$2 calls=$3 n
  grep -q "^method $method:" "$T/$name.err" || fail "$name: the summary names no method: $(cat "$T/$name.err")"
  n=$(sed -n 's/^\([0-9]*\) calls\{0,1\} into the vDSO .* ran on the target as one step each.*/\1/p' "$T/$name.err")
  [ "$n" = "$calls" ] || fail "$name: expected $calls vDSO calls run on the target, the summary says '$n': $(cat "$T/$name.err")"
  grep -q "loads\{0,1\} from memory the debugger cannot read" "$T/$name.err" &&
    fail "$name: vDSO instructions were stepped (unread loads): $(cat "$T/$name.err")"
  "$SNR" trace dump "$T/$name.snrt" >"$T/$name.dump" || fail "$name: trace dump"
  [ "$(grep -c ' call$' "$T/$name.dump")" -eq "$calls" ] ||
    fail "$name: $calls calls in the summary, $(grep -c ' call$' "$T/$name.dump") steps marked call"
  grep ' call$' "$T/$name.dump" | grep -v '__vdso_clock_gettime\|__vdso_time' && fail "$name: a call step not named by its vDSO symbol"
  grep ' call$' "$T/$name.dump" | grep -qv 'after:rip=' && fail "$name: a call step without the pc it returned to"
  grep ' call$' "$T/$name.dump" | grep -q '__vdso_clock_gettime .*after:mem\[0x[0-9a-f]*+16\]' ||
    fail "$name: clock_gettime's timespec is not among the call's outputs"
  grep -q ' rdtscp \| unread$' "$T/$name.dump" && fail "$name: the vDSO's own instructions are in the trace"
  "$SNR" trace info "$T/$name.snrt" | grep -q "^calls        $calls calls the target ran as a unit" ||
    fail "$name: trace info: $("$SNR" trace info "$T/$name.snrt")"
  "$SNR" replay "$T/$name.snrt" >"$T/$name.replay" 2>&1 && grep -q "end state matches the recording" "$T/$name.replay" ||
    fail "$name: replay: $(cat "$T/$name.replay")"
  if [ "$method" = sim ]; then
    grep -q "^verified against the target" "$T/$name.err" || fail "$name: not verified: $(cat "$T/$name.err")"
    local ran
    ran=$(sed -n 's/.*, \([0-9]*\) instructions it ran for the simulator.*/\1/p' "$T/$name.err")
    [ -n "$ran" ] && [ "$ran" -ge "$calls" ] || fail "$name: the target ran $ran steps for the simulator, fewer than the $calls calls"
  fi
  echo "$name: $n vDSO calls run on the target; replay verified"
}

# same LABEL A B: sim and step recorded the same window
same() {
  "$SAME" --clock-calls "$T/$2.snrt" "$T/$3.snrt" >"$T/$1.same" || fail "$1: sim and step differ"
  echo "$1: $(cat "$T/$1.same")"
}

NOAVX=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX
# ptrace: ASLR off (setarch -R) so that both launches put the vDSO and the stack at the same addresses
for m in step sim; do
  GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint timed --until-return --count 100000 --method $m \
    -o "$T/p-$m.snrt" -- "$T/clk" >"$T/p-$m.out" 2>"$T/p-$m.err" || fail "ptrace --method $m: $(cat "$T/p-$m.err")"
  grep -q "^$want\$" "$T/p-$m.out" || fail "ptrace --method $m: the program printed $(cat "$T/p-$m.out"), not $want"
  checked "p-$m" $m 2
  GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint clocks --until-return --count 1000000 --method $m \
    -o "$T/pk-$m.snrt" -- "$T/clk" 100 >"$T/pk-$m.out" 2>"$T/pk-$m.err" || fail "ptrace K=100 --method $m: $(cat "$T/pk-$m.err")"
  grep -q "^clock 100\$" "$T/pk-$m.out" || fail "ptrace K=100 --method $m: the program printed $(cat "$T/pk-$m.out")"
  checked "pk-$m" $m 100
done
same "ptrace timed()" p-step p-sim
same "ptrace clocks(100)" pk-step pk-sim

# vDSO code not entered by a call of the window: a window that starts at
# __vdso_clock_gettime's entry (its address from the trace above) steps it
# instruction by instruction, its [vvar] loads unread, and replays verified.
entry=$(awk '$3 == "__vdso_clock_gettime" {print $2; exit}' "$T/p-step.dump")
[ -n "$entry" ] || fail "no __vdso_clock_gettime step in $(head -30 "$T/p-step.dump")"
unread_window() { # NAME COUNT
  GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint "$entry" --count "$2" --method step \
    -o "$T/$1.snrt" -- "$T/clk" >/dev/null 2>"$T/$1.err" || fail "window from the vDSO's entry: $(cat "$T/$1.err")"
  "$SNR" trace dump "$T/$1.snrt" >"$T/$1.dump" || fail "$1: trace dump"
  "$SNR" replay "$T/$1.snrt" >"$T/$1.replay" 2>&1 && grep -q "end state matches the recording" "$T/$1.replay" ||
    fail "$1: replay: $(cat "$T/$1.replay")"
}
unread_window u 60
n=$(sed -n 's/^\([0-9]*\) loads\{0,1\} from memory the debugger cannot read.*/\1/p' "$T/u.err")
[ -n "$n" ] && [ "$n" -ge 3 ] && [ "$(grep -c ' unread$' "$T/u.dump")" -eq "$n" ] ||
  fail "window from the vDSO's entry: expected its [vvar] loads marked unread: $(cat "$T/u.err")"
# the counter read: rdtscp (clocksource tsc) or lfence; rdtsc (kvm-clock's pvclock page)
grep -qE ' rdtscp? ' "$T/u.dump" || fail "window from the vDSO's entry: no rdtscp or rdtsc stepped"
grep -q ' call$' "$T/u.dump" && fail "window from the vDSO's entry: a step marked call"
echo "window from the vDSO's entry ($entry): stepped, $n unread loads; replay verified"
# A window that ends right after an instruction that leaves eflags' AF
# undefined (the vDSO's first `shl`; the CPU and unicorn set AF otherwise):
# the replay's end-state check leaves AF, PF and OF out, as the recording's
# checkpoints do, so it verifies.
k=$(awk '$4 == "shl" {print $1; exit}' "$T/u.dump")
[ -n "$k" ] || fail "no shl in the vDSO's code: $(head -40 "$T/u.dump")"
unread_window af $((k + 1))
awk -v k="$k" '$1 == k' "$T/af.dump" | grep -q ' shl ' || fail "the window does not end at the shl"
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

# gdbserver (its own ASLR off by default): the same windows, no cap on their length
if command -v gdbserver >/dev/null; then
  for m in step sim; do
    gdbserver_start "$T" "$T/clk"
    "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/clk" --breakpoint timed --until-return --count 100000 \
      --method $m -o "$T/g-$m.snrt" 2>"$T/g-$m.err" || fail "gdbserver --method $m: $(cat "$T/g-$m.err")"
    wait $GS; GS=""
    grep -q "ended by the function's return" "$T/g-$m.err" || fail "gdbserver --method $m: $(cat "$T/g-$m.err")"
    grep -q "^$want\$" "$T/gs.out" || fail "gdbserver --method $m: the program printed $(cat "$T/gs.out"), not $want"
    checked "g-$m" $m 2
    gdbserver_start "$T" "$T/clk" 100
    "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/clk" --breakpoint clocks --until-return --count 1000000 \
      --method $m -o "$T/gk-$m.snrt" 2>"$T/gk-$m.err" || fail "gdbserver K=100 --method $m: $(cat "$T/gk-$m.err")"
    wait $GS; GS=""
    grep -q "^clock 100\$" "$T/gs.out" || fail "gdbserver K=100 --method $m: the program printed $(cat "$T/gs.out")"
    checked "gk-$m" $m 100
  done
  same "gdbserver timed()" g-step g-sim
  same "gdbserver clocks(100)" gk-step gk-sim
else
  echo "gdbserver part skipped (no gdbserver)"
fi
echo "record_vdso: all passed"
