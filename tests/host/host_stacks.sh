#!/usr/bin/env bash
# snr host record's default DWARF unwinding against stacks and times known in
# advance, on tests/host/host_stacks.c built twice (-O2 -g, with and without
# frame pointers): the report must name the same functions either way.
#   - off-CPU time in sleeper() (libc's nanosleep) within 5% of the time the
#     program measured around its calls, under main;sleeper
#   - on-CPU samples in spinner() (clock_gettime in the vDSO) within 10% of
#     its own CPU time x HZ, every frame named (no [unknown])
#   - blocking in read() on a pipe under main;pipe_reader, within 5%
#   - a tail call: tail_target's caller is main (tail_caller jumped away)
#   - a 150-deep recursion: stacks reach main through >= 100 recurse frames
# The references are the program's own clocks, so a loaded machine changes
# both sides alike. Needs root and eBPF: exits 77 (skip) otherwise.
. "$(dirname "$0")/../cli/lib.sh"
FP=${2:?host_stacks_fp}
NOFP=${3:?host_stacks_nofp}
skip() { echo "SKIP: $*"; exit 77; }

[ "$(id -u)" -eq 0 ] || skip "needs root to load eBPF programs"
[ -r /sys/kernel/btf/vmlinux ] || skip "kernel has no BTF (/sys/kernel/btf/vmlinux)"
run "$SNR" host record -o "$T/probe.snrh" -- /bin/true
grep -q "built without eBPF" "$T/err" && skip "snr built without eBPF"
[ "$rc" -eq 0 ] || skip "eBPF unavailable here: $(head -c 300 "$T/err")"

run "$SNR" host record --unwind frames -o "$T/x.snrh" -- /bin/true
expect_rc 2; expect_err "--unwind wants dwarf or fp"
run "$SNR" host record --stack-bytes 100 -o "$T/x.snrh" -- /bin/true
expect_rc 2; expect_err "--stack-bytes wants bytes from 256 to 65536"

# weight PREFIX FOLDED REGEX: the summed weight (us) of the folded lines matching REGEX
weight() { awk -v re="$2" '$0 ~ re { s += $NF } END { print s + 0 }' "$1"; }
# within A B PCT: A is within PCT% of B
within() { awk -v a="$1" -v b="$2" -v p="$3" 'BEGIN { exit !(b > 0 && a >= b * (1 - p / 100) && a <= b * (1 + p / 100)) }'; }

HZ=997
for bin in "$FP" "$NOFP"; do
  name=$(basename "$bin")
  comm=${name:0:15}
  # 1. sleep through libc, spin through the vDSO
  run "$SNR" host record -F $HZ -o "$T/ss.snrh" -- "$bin" sleepspin 10
  expect_rc 0
  read -r sleep_wall spin_cpu < <(sed -n 's/^sleep_wall \([0-9.]*\) spin_cpu \([0-9.]*\)$/\1 \2/p' "$T/out")
  [ -n "${spin_cpu:-}" ] || fail "$name printed no times: $(cat "$T/out")"
  run "$SNR" host report "$T/ss.snrh" --folded "$T/ss"
  expect_rc 0
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

  # 2. blocked reading a pipe
  run "$SNR" host record -o "$T/pipe.snrh" -- "$bin" pipe 5
  expect_rc 0
  pipe_wall=$(sed -n 's/^pipe_wall \([0-9.]*\)$/\1/p' "$T/out")
  run "$SNR" host report "$T/pipe.snrh" --folded "$T/pipe"
  expect_rc 0
  w=$(weight "$T/pipe.offcpu.folded" ";main;pipe_reader;(__libc_)?read;")
  within "$w" "$(awk -v s="$pipe_wall" 'BEGIN { print s * 1e6 }')" 5 || \
    fail "$name: off-CPU under main;pipe_reader;read = $w us, want $pipe_wall s +- 5%: $(sort -t' ' -k2 -n "$T/pipe.offcpu.folded" | tail -3)"
  echo "$name: main;pipe_reader;read $w us off-CPU (blocked $pipe_wall s)"

  # 3. a tail call: tail_caller jumped to tail_target, whose caller is main
  run "$SNR" host record -o "$T/tail.snrh" -- "$bin" tail 5
  expect_rc 0
  tail_wall=$(sed -n 's/^tail_wall \([0-9.]*\)$/\1/p' "$T/out")
  run "$SNR" host report "$T/tail.snrh" --folded "$T/tail"
  expect_rc 0
  w=$(weight "$T/tail.offcpu.folded" ";main;tail_target;")
  within "$w" "$(awk -v s="$tail_wall" 'BEGIN { print s * 1e6 }')" 5 || \
    fail "$name: off-CPU under main;tail_target = $w us, want $tail_wall s +- 5%: $(sort -t' ' -k2 -n "$T/tail.offcpu.folded" | tail -3; cat "$T/err")"

  # 4. 150 frames of recursion reach main
  run "$SNR" host record -o "$T/deep.snrh" -- "$bin" deep 150 3
  expect_rc 0
  deep_wall=$(sed -n 's/^deep_wall \([0-9.]*\)$/\1/p' "$T/out")
  run "$SNR" host report "$T/deep.snrh" --folded "$T/deep"
  expect_rc 0
  w=$(awk '/;main;recurse;/ && /;sleeper;/ { n = gsub(/;recurse/, ";recurse"); if (n >= 100) s += $NF } END { print s + 0 }' "$T/deep.offcpu.folded")
  within "$w" "$(awk -v s="$deep_wall" 'BEGIN { print s * 1e6 }')" 5 || \
    fail "$name: off-CPU in main;recurse x >= 100;sleeper = $w us, want $deep_wall s +- 5%: $(awk '{ print gsub(/;recurse/, ""), $NF }' "$T/deep.offcpu.folded" | sort -n | tail -3)"
  echo "$name: tail call main;tail_target ok; 150-deep recursion reaches main ($w us)"
done
# 5. SIGKILL of the recorder 2 s into a longer command: the file holds what
# was drained up to then (>= 1.5 s of it), reads as truncated (exit 1, or 0
# with --allow-truncated; "truncated": true in the JSON), and the command
# dies with the recorder.
"$SNR" host record -o "$T/kill.snrh" -- "$NOFP" sleepspin 25 >"$T/kill.out" 2>"$T/kill.err" &
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
expect_rc 1; expect_out "TRUNCATED: "; expect_err "truncated"
covers=$(sed -n 's/.*; this covers \([0-9.]*\) s.*/\1/p' "$T/out")
awk -v c="$covers" 'BEGIN { exit !(c >= 1.5) }' || fail "a recorder killed after 2 s left $covers s: $(head -3 "$T/out")"
w=$(weight "$T/kill.offcpu.folded" ";main;sleeper;")
awk -v w="$w" -v c="$covers" 'BEGIN { exit !(w >= 0.25e6 * c) }' || \
  fail "only $w us under main;sleeper in the $covers s kept: $(sort -t' ' -k2 -n "$T/kill.offcpu.folded" | tail -2)"
python3 -c "import json,sys; sys.exit(json.load(open(sys.argv[1]))['truncated'] is not True)" "$T/kill.json" || \
  fail "trace-event JSON of a truncated trace lacks \"truncated\": true"
run "$SNR" host report --allow-truncated "$T/kill.snrh"
expect_rc 0; expect_out "TRUNCATED: "
echo "SIGKILL after 2 s: $covers s kept, $w us under main;sleeper; command $child gone"
echo "host_stacks: ok"
