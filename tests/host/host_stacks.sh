#!/usr/bin/env bash
# snr host record's default DWARF unwinding against stacks and times known in
# advance, on tests/host/host_stacks.c built twice (-O2 -g, with and without
# frame pointers): the report must name the same functions either way.
#   - off-CPU time in sleeper() (libc's nanosleep) within 5% of the time the
#     program measured around its calls, under main;sleeper
#   - on-CPU samples in spinner() (clock_gettime in the vDSO) within 10% of
#     its own CPU time x HZ, every frame named (no [unknown]); it spins for
#     1.5 s of CPU time, not wall time: samples are a binomial count (about
#     1,500 expected, sd 2.6%), and on a loaded machine a wall-time spin got
#     a fraction of that CPU, so few samples that 10% was 1.4 sd (one failure
#     in about six runs at load 20)
#   - blocking in read() on a pipe under main;pipe_reader, within 5%
#   - a tail call: tail_target's caller is main (tail_caller jumped away)
#   - the report's frames carry file:line from the DWARF line tables:
#     sleeper's is its nanosleep call, main's a call (return address - 1)
#   - a 150-deep recursion: stacks reach main through >= 100 recurse frames
#     (its copies are cut at the thread's learned reach, its outermost frame)
#   - a process that exits 20 ms after exec: its sleep in libc is under
#     main;sleeper all the same
# The references are the program's own clocks, so a loaded machine changes
# both sides alike. Needs root and eBPF: exits 77 (skip) otherwise.
. "$(dirname "$0")/lib.sh"
FP=${2:?host_stacks_fp}
NOFP=${3:?host_stacks_nofp}

need_host_record

run "$SNR" host record --unwind frames -o "$T/x.snrh" -- /bin/true
expect_rc 2; expect_err "--unwind wants dwarf or fp"
run "$SNR" host record --stack-bytes 100 -o "$T/x.snrh" -- /bin/true
expect_rc 2; expect_err "--stack-bytes wants bytes from 256 to 65536"

# weight PREFIX FOLDED REGEX: the summed weight (us) of the folded lines matching REGEX
weight() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
# within A B PCT: A is within PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && a >= b * (1 - p / 100) && a <= b * (1 + p / 100)) }'; }

# offcpu_case BIN MODE "ARGS" REGEX: BIN ARGS prints "MODE_wall SECONDS", the
# time it spent in the blocking calls; the off-CPU weight of the stacks
# matching REGEX must be that within 5%.
offcpu_case() {
  local bin=$1 mode=$2 args=$3 re=$4 wall w
  # shellcheck disable=SC2086
  run "$SNR" host record --force -o "$T/$mode.snrh" -- "$bin" $args
  expect_rc 0
  wall=$(sed -n "s/^${mode}_wall \\([0-9.]*\\)\$/\\1/p" "$T/out")
  [ -n "$wall" ] || fail "$(basename "$bin") $args printed no ${mode}_wall: $(cat "$T/out")"
  run "$SNR" host report "$T/$mode.snrh" --folded "$T/$mode" --force
  expect_rc 0
  w=$(weight "$T/$mode.offcpu.folded" "$re")
  within "$w" "$(awk -v s="$wall" 'BEGIN { print s * 1e6 }')" 5 || \
    fail "$(basename "$bin") $args: off-CPU under $re = $w us, want $wall s +- 5%: $(sort -t' ' -k2 -n "$T/$mode.offcpu.folded" | tail -2)"
  echo "$(basename "$bin") $args: $w us off-CPU under $re (measured $wall s)"
}

HZ=997
for bin in "$FP" "$NOFP"; do
  name=$(basename "$bin")
  comm=${name:0:15}
  # 1. sleep through libc, spin through the vDSO
  run "$SNR" host record --force -F $HZ -o "$T/ss.snrh" -- "$bin" sleepspin 10
  expect_rc 0
  read -r sleep_wall spin_cpu < <(sed -n 's/^sleep_wall \([0-9.]*\) spin_cpu \([0-9.]*\)$/\1 \2/p' "$T/out")
  [ -n "${spin_cpu:-}" ] || fail "$name printed no times: $(cat "$T/out")"
  run "$SNR" host report "$T/ss.snrh" --folded "$T/ss" --force
  expect_rc 0
  # the copies stop at the thread's outermost frame once it is known, and
  # every stack below still reaches main (the checks below)
  expect_out "learned for 1 threads, dropped 0 times"
  # frames in the program's DWARF line tables are given their file:line:
  # sleeper's is the nanosleep call, main's a call of sleeper()
  src=$(dirname "$0")/host_stacks.c
  nl=$(awk '/void sleeper\(long ms\)/ { f = 1 } f && /nanosleep\(&ts, NULL\)/ { print NR; exit }' "$src")
  grep -Eq "^ +sleeper\+0x[0-9a-f]+ \($name\) host_stacks.c:$nl$" "$T/out" || \
    fail "$name: sleeper's frame is not placed at host_stacks.c:$nl: $(grep -m3 'sleeper+' "$T/out")"
  ml=$(grep -E "^ +main\+0x[0-9a-f]+ \($name\) host_stacks.c:[0-9]+$" "$T/out" | head -1 | sed 's/.*://')
  [ -n "$ml" ] && sed -n "${ml}p" "$src" | grep -q "sleeper(\|spinner(" || \
    fail "$name: main's frame is not at a call: line ${ml:-none}: $(grep -m3 'main+' "$T/out")"
  w=$(weight "$T/ss.offcpu.folded" ";main;sleeper;")
  within "$w" "$(awk -v s="$sleep_wall" 'BEGIN { print s * 1e6 }')" 5 || \
    fail "$name: off-CPU under main;sleeper = $w us, want $sleep_wall s +- 5%: $(sort -t' ' -k2 -n "$T/ss.offcpu.folded" | tail -3)"
  n=$(awk -v w=$((1000000 / HZ)) '/;main;spinner/ { s += $NF } END { printf "%d", s / w + 0.5 }' "$T/ss.oncpu.folded")
  within "$n" "$(awk -v c="$spin_cpu" -v hz=$HZ 'BEGIN { print c * hz }')" 10 || \
    fail "$name: $n samples under main;spinner, want $spin_cpu s CPU x $HZ Hz +- 10%: $(sort -t' ' -k2 -n "$T/ss.oncpu.folded" | tail -3)"
  grep -q ";main;spinner;.*__vdso_clock_gettime" "$T/ss.oncpu.folded" || \
    fail "$name: no sample named in the vDSO under spinner: $(grep spinner "$T/ss.oncpu.folded" | head -3)"
  grep ";main;spinner" "$T/ss.oncpu.folded" | grep -q "unknown" && \
    fail "$name: unnamed frames under spinner: $(grep ";main;spinner" "$T/ss.oncpu.folded" | grep unknown | head -3)"
  grep -q "^$comm;_start;__libc_start_main;__libc_start_call_main;main;" "$T/ss.offcpu.folded" || \
    fail "$name: stacks do not start at _start through libc's local __libc_start_call_main: $(head -2 "$T/ss.offcpu.folded")"
  echo "$name: main;sleeper $w us off-CPU (slept $sleep_wall s); $n samples in main;spinner (CPU $spin_cpu s x $HZ Hz)"

  # 2. blocked reading a pipe; 3. a tail call: tail_caller jumped to
  # tail_target, whose caller is main; 4. 150 frames of recursion reach main
  offcpu_case "$bin" pipe "pipe 5" ";main;pipe_reader;(__libc_)?read;"
  offcpu_case "$bin" tail "tail 5" ";main;tail_target;"
  # a process that lives 20 ms, less than the tracer's poll: its libraries
  # are read at its exit stop, so its stacks are unwound through libc
  run "$SNR" host record --force -o "$T/short.snrh" -- "$bin" short
  expect_rc 0
  run "$SNR" host report "$T/short.snrh" --folded "$T/short" --force
  expect_rc 0
  w=$(weight "$T/short.offcpu.folded" ";main;sleeper;.*nanosleep")
  awk -v w="$w" 'BEGIN { exit !(w >= 15000) }' || \
    fail "$name short: off-CPU under main;sleeper;...nanosleep = $w us, want >= 15 ms of the 20 ms sleep: $(cat "$T/short.offcpu.folded")"
  grep -q "unknown" "$T/short.offcpu.folded" && fail "$name short: unnamed frames: $(grep unknown "$T/short.offcpu.folded")"
  echo "$name short: $w us off-CPU under main;sleeper in a process that lived ~20 ms"
  offcpu_case "$bin" deep "deep 150 3" ";main;$(printf 'recurse;%.0s' $(seq 100)).*sleeper;"
done
# 5. SIGKILL of the recorder 2 s into a longer command: the file holds what
# was drained up to then (>= 1.5 s of it), reads as truncated (exit 3, or 0
# with --allow-truncated; "truncated": true in the JSON), and the command
# dies with the recorder.
# (deep 2 25: 25 sleeps of 200 ms under main;recurse;recurse;sleeper, so the
# share of the kept time under sleeper does not depend on the machine's load)
"$SNR" host record -o "$T/kill.snrh" -- "$NOFP" deep 2 25 >"$T/kill.out" 2>"$T/kill.err" &
rec=$!
for _ in $(seq 100); do grep -q "Ctrl-C stops" "$T/kill.err" && break; sleep 0.1; done
sleep 2
kill -KILL "$rec"
wait "$rec" 2>/dev/null
child=$(sed -n 's/.*tracing pid \([0-9]*\).*/\1/p' "$T/kill.err")
[ -n "$child" ] || fail "no pid in the recorder's output: $(cat "$T/kill.err")"
for _ in $(seq 100); do kill -0 "$child" 2>/dev/null || break; sleep 0.1; done
kill -0 "$child" 2>/dev/null && { kill -KILL "$child"; fail "the command (pid $child) outlived its SIGKILLed recorder by 10 s"; }
run "$SNR" host report "$T/kill.snrh" --folded "$T/kill" --trace-events "$T/kill.json"
expect_rc 3; expect_out "TRUNCATED: "; expect_err "truncated"
covers=$(sed -n 's/.*; this covers \([0-9.]*\) s.*/\1/p' "$T/out")
awk -v c="$covers" 'BEGIN { exit !(c >= 1.5) }' || fail "a recorder killed after 2 s left $covers s: $(head -3 "$T/out")"
w=$(weight "$T/kill.offcpu.folded" ";main;recurse;recurse;sleeper;")
awk -v w="$w" -v c="$covers" 'BEGIN { exit !(w >= 0.5e6 * c) }' || \
  fail "only $w us under main;sleeper in the $covers s kept: $(sort -t' ' -k2 -n "$T/kill.offcpu.folded" | tail -2)"
python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['truncated'] is not True)" "$T/kill.json" || \
  fail "trace-event JSON of a truncated trace lacks \"truncated\": true"
run "$SNR" host report --allow-truncated "$T/kill.snrh"
expect_rc 0; expect_out "TRUNCATED: "
# the Perfetto export refuses it as every reader refuses a partial file
run "$SNR" export perfetto "$T/kill.snrh" -o "$T/kill.perfetto.json"
expect_rc 3; expect_err "is partial"
[ -e "$T/kill.perfetto.json" ] && fail "a refused export wrote its output"
run "$SNR" export perfetto --allow-truncated "$T/kill.snrh" -o "$T/kill.perfetto.json"
expect_rc 0
echo "SIGKILL after 2 s: $covers s kept, $w us under main;sleeper; command $child gone"
echo "host_stacks: ok"
