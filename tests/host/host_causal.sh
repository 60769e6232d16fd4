#!/usr/bin/env bash
# snr host record --progress/--latency, snr host report's progress points and
# snr host causal against real speedups (issue 25's known answers), the
# functions of a token loop and of a serving loop, and the serving loop's
# device kernel (a TA1 program with 20% fewer rounds).
#
# causal_tokens (tests/host/causal_tokens.c: two threads work in parallel,
# work_a the longer, then serial_step, then a token) is recorded, and
# `snr host causal --speedup 20` predicts each function's effect on the
# token rate. The -DFAST_A/-DFAST_B/-DFAST_S builds make work_a, work_b or
# serial_step 20% faster for real; they run alternately with the baseline
# and the medians give each measured change. Wanted: each prediction within
# max(30% of the measured change, 3 points) of it; work_b (off the critical
# path) predicted within 3 points of zero; the three ranked as measured.
#
# Robust under load: the programs run under SCHED_FIFO (causal_tokens
# `fifo`), so the other jobs of a shared 2-CPU machine do not preempt them
# (at load 16 the spread between runs was about 1%; without it, 20%); the
# work is a fixed number of iterations (CPU work), 150 tokens a run, the
# prediction is the median of 3 recordings and each measured change the
# median over $ROUNDS rounds of alternating runs of each round's pair (the
# FAST build against the baseline run just before it), each run's rate taken
# from its median token: this guest's virtual CPUs now and then run slowly
# for a token or a stretch of tokens (no steal reported), which moved a run's
# mean rate by several percent (a CI run measured serial_step +11.3% against
# +6.9% predicted, and work_b +3.7%, its BASE runs' mean 104 tokens/s against
# 107-110 in quiet runs) but hardly its median token. Needs root (eBPF, SCHED_FIFO): 77 otherwise.
. "$(dirname "$0")/lib.sh"
BASE=${2:?causal_tokens}
FAST_A=${3:?causal_tokens_fast_a}
FAST_B=${4:?causal_tokens_fast_b}
FAST_S=${5:?causal_tokens_fast_s}
SERVE_CTRL=${6:?ta1_serve_ctrl}
SERVE_CTRL_FAST=${7:?ta1_serve_ctrl_fast}
SERVE_DEV=${8:?ta1_serve_dev}
SERVE_DEV_FAST=${9:?ta1_serve_dev_fast}
ROUNDS=${CAUSAL_ROUNDS:-9}
TOKENS=150

need_host_record
"$BASE" 10 fifo >/dev/null 2>"$T/fifo.err" || skip "SCHED_FIFO refused here: $(cat "$T/fifo.err")"
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

# --- errors, named where they are ---
run "$SNR" host record --progress 'no such' -o "$T/x.snrh" -- "$BASE" 10
expect_rc 2; expect_err "--progress 'no such'"
run "$SNR" host record --latency begin_only -o "$T/x.snrh" -- "$BASE" 10
expect_rc 2; expect_err "--latency 'begin_only'"
run "$SNR" host record --latency a:b:byname -o "$T/x.snrh" -- "$BASE" 10
expect_rc 2; expect_err "BEGIN:END:arg"
run "$SNR" host record --progress not_a_function_here -o "$T/x.snrh" -- "$BASE" 10
expect_rc 1; expect_err "'not_a_function_here'"
[ -e "$T/x.snrh" ] && fail "a refused recording left $T/x.snrh"
run "$SNR" host record -o "$T/plain.snrh" -- "$BASE" 10
expect_rc 0
run "$SNR" host causal "$T/plain.snrh"
expect_rc 1; expect_err "no progress point"
run "$SNR" host causal "$T/plain.snrh" --speedup 0
expect_rc 2; expect_err "--speedup"
run "$SNR" host causal "$T/nothing.snrh"
expect_rc 1; expect_err "nothing.snrh"

# --- progress points and latency: counts and matching ---
# per thread (request_begin and request_end run on the main thread) and by
# argument; every call of emit_token is one unit
run "$SNR" host record -F 997 --progress emit_token --latency request_begin:request_end \
  --latency request_begin:emit_token:arg -o "$T/p.snrh" -- "$BASE" 40 fifo
expect_rc 0
run "$SNR" host report "$T/p.snrh" --json
expect_rc 0
python3 - "$T/out" <<'PY' || fail "progress JSON: $(head -c 1500 "$T/out")"
import json, sys
d = json.load(open(sys.argv[1]))
p = {x['name']: x for x in d['progress']}
assert set(p) == {'emit_token', 'request_begin:request_end', 'request_begin:emit_token'}, p.keys()
for n, x in p.items():
    assert x['count'] == 40 and x['unmatched'] == 0, (n, x['count'], x['unmatched'])
    assert len(x['over_time']) == 10 and sum(w['count'] for w in x['over_time']) == 40, n
e, l = p['emit_token'], p['request_begin:request_end']
# a token every ~10 ms: rate and inter-arrival agree with each other
assert abs(e['per_second'] * e['interarrival_ms']['p50'] / 1000 - 1) < 0.5, e
assert 0 < l['latency_ms']['p50'] <= l['latency_ms']['p90'] <= l['latency_ms']['p99'] <= l['latency_ms']['max']
# request_end comes just before emit_token: the by-argument pairs are a bit longer
assert p['request_begin:emit_token']['latency_ms']['p50'] >= l['latency_ms']['p50']
PY
run "$SNR" host report "$T/p.snrh"
expect_rc 0; expect_out "progress points"; expect_out "emit_token over time"

# --- causal: predictions from 3 recordings of the baseline ---
for i in 1 2 3; do
  run "$SNR" host record -F 997 --progress emit_token -o "$T/base$i.snrh" -- "$BASE" $TOKENS fifo
  expect_rc 0
  run "$SNR" host causal "$T/base$i.snrh" --speedup 20 --json
  expect_rc 0
  cp "$T/out" "$T/causal$i.json"
  # every wait of the token loop is ended by another of its threads (the
  # workers by the main thread's broadcast, the main thread by a worker's
  # signal): the waker must be the thread that woke it, whichever CPU ran the
  # wakee (a wake-up queued to an idle CPU once read as woken by nobody)
  python3 - "$T/out" <<'PY' || fail "recording $i: waits not linked to their wakers: $(head -c 400 "$T/out")"
import json, sys
m = json.load(open(sys.argv[1]))['model']
assert m['threads'] == 3 and m['waits'] >= 2 * 150, m
assert m['dependent_waits'] >= 0.95 * m['waits'], m
PY
done
run "$SNR" host causal "$T/base1.snrh" --speedup 20
expect_rc 0
cp "$T/out" "$T/causal1.txt"
grep -q "^  work_b (causal_tokens.c:[0-9]* 0x[0-9a-f]*, .*off the critical path\|^off the critical path" "$T/out" &&
  grep -q "^  work_b (causal_tokens.c:" "$T/out" ||
  fail "work_b not named off the critical path with its file:line and pc: $(cat "$T/out")"

# --- reality: the FAST builds against the baseline, alternately ---
for r in $(seq "$ROUNDS"); do
  for v in BASE FAST_A FAST_B FAST_S; do
    "${!v}" $TOKENS fifo >"$T/run.out" || fail "$v did not run"
    sed -n "s/^token_ms_median /$v /p" "$T/run.out" >>"$T/measured"
    sed -n "s/^tokens_per_s /$v /p" "$T/run.out" >>"$T/measured_mean"
  done
done
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
python3 - "$T" <<'PY' || fail "causal predictions against the real speedups"
import json, statistics, sys
T = sys.argv[1]
# each run's token rate from its median token (1000 / ms): a token or a
# stretch of tokens the virtual CPU ran slowly moves a run's mean rate, not its
# median token (causal_tokens.c)
runs, means = {}, {}
for line in open(f'{T}/measured'):
    v, r = line.split()
    runs.setdefault(v, []).append(1000 / float(r))
for line in open(f'{T}/measured_mean'):
    v, r = line.split()
    means.setdefault(v, []).append(float(r))
# each round's FAST run against the BASE run just before it (load that drifts
# over the test cancels in a pair), then the median over the rounds
def paired(v, b='BASE'):
    return statistics.median(f / x - 1 for f, x in zip(runs[v], runs[b])) * 100
meas = {f: paired(v) for f, v in (('work_a', 'FAST_A'), ('work_b', 'FAST_B'), ('serial_step', 'FAST_S'))}
preds = {f: [] for f in meas}
for i in (1, 2, 3):
    d = json.load(open(f'{T}/causal{i}.json'))
    assert d['progress'][0]['name'] == 'emit_token'
    got = {c['function']: c for c in d['candidates'] if 'function' in c}
    for f in meas:
        assert f in got, f'{f} is no candidate in recording {i}: {sorted(got)}'
        c = got[f]
        assert c['speedup_pct'] == 20 and c['file'].endswith('causal_tokens.c') and c['line'] > 0, c
        preds[f].append(c['effect']['emit_token']['throughput_pct'])
pred = {f: statistics.median(v) for f, v in preds.items()}
ok = True
for f in meas:
    tol = max(0.3 * abs(meas[f]), 3.0)
    good = abs(pred[f] - meas[f]) <= tol
    ok &= good
    print(f'{f}: predicted {pred[f]:+.2f}% (recordings {", ".join("%+.2f" % p for p in preds[f])}), '
          f'measured {meas[f]:+.2f}% (median of {len(runs["BASE"])} paired runs), tolerance {tol:.2f} points: '
          f'{"ok" if good else "OFF"}')
if abs(pred['work_b']) > 3.0:
    ok = False
    print(f'work_b is off the critical path: predicted {pred["work_b"]:+.2f}%, want within 3 points of 0')
rank_p = sorted(meas, key=lambda f: -pred[f])
rank_m = sorted(meas, key=lambda f: -meas[f])
print('ranked by prediction:', rank_p, ' by measurement:', rank_m)
ok &= rank_p == rank_m
print('tokens/s from the median token, medians of the runs:', {v: round(statistics.median(r), 2) for v, r in runs.items()})
print('mean tokens/s, medians of the runs:', {v: round(statistics.median(r), 2) for v, r in means.items()})
sys.exit(0 if ok else 1)
PY

# --- the serving loop (runtime/ta1_serve.c): one request = tokenize (the
# control step, on the CPU), stage to a file, launch, wait for the device
# (a thread of the process), read back. Built with a heavy control step
# (ctrl) and with the default one (dev: the device is the bottleneck), each
# also with tokenize 20% faster for real; the progress point is
# read_response, once per request. The device thread inherits SCHED_FIFO
# from `chrt`, the recorder too (it starts the command), so the other jobs
# do not preempt either.
# The requests are staged in /dev/shm when it is there: fsync on a disk other
# jobs share swung the request rate by 3-5% between runs at load 24.
"$SNR" cc "$(dirname "$0")/../../workloads/mlp.c" -o "$T/mlp.elf" >/dev/null || fail "snr cc mlp"
SDIR=$T
if [ -d /dev/shm ] && SDIR=$(mktemp -d /dev/shm/snr-causal.XXXXXX); then
  trap 'rm -rf "$T" "$SDIR"' EXIT
else
  SDIR=$T
fi
REQ=30
# The device's kernel 20% faster for real: the device-bound serving loop
# (ta1_serve_dev) running tests/host/causal_kernel.c, ITERS rounds a launch,
# against the same with 22.5% fewer rounds: a run also has a fixed part
# (loading the program, its exit), so that makes the run about 22% shorter
# (12.4 against 9.7 ms a launch on a quiet machine), and the prediction for
# the candidate `kernel ta1rt_device_run` (the run of each launch on the
# ta1-device thread) is made at 20%.
#
# The recordings' run per launch is checked against that: each build's
# shortest run, base and fast recorded one after the other, the median over
# 5 such pairs 15-30% shorter. Not the mean per launch: on the 2-vCPU
# Firecracker/PVM guest the same run takes 12-13 ms or 17-30 ms, in
# stretches of a second or more that can switch between two launches of one
# process, and medians of three recordings' means came out anywhere from 1%
# slower to 36% shorter (in CI once 40% slower). That is the machine, not
# the figure. Measured with a copy of libta1rt that reads CLOCK_MONOTONIC,
# the thread's CPU clock and getrusage around each ta1rt_device_run (10
# recordings of each build, load 4.7-6): the recording's pieces are that
# clock's intervals to within 13-25 us; the thread's CPU time equals its
# wall time (no voluntary switch, 0-1 involuntary ones per 30 launches in 19
# recordings of 20, 16 in one: it is never off the CPU), 4 page faults a
# launch, no steal in /proc/stat. What changes is the speed of the vCPU, for
# this kind of code only: a branchy, memory-touching native loop timed
# before each launch slows with the run (correlation 0.70 and 0.87 over 180
# launches of each build), a dependent multiply chain does not (0.37 and
# 0.15 over 240; its median per process within 5%): consistent with another
# guest's work sharing the host's core (its other hyperthread, its caches),
# which the guest cannot see (PVM reports no steal here). Noise of that kind only adds time to a run, so
# the shortest of 30 is the run with the least of it, and a pair recorded
# 3 s apart mostly shares the machine's state. On 30 such pairs recorded
# (load 4.7-6), every window of 5 consecutive pairs gave 19.0-23.3% shorter
# (the medians of means of three: 1% slower to 36% shorter). This check in 8
# runs at load 5-11: 20.8-24.0% (one pair of 40 outside 15-30%: 39.8%), while
# the same pairs' means differed by -3% to +55%.
# A recorder whose runs began at their upload (25 ms more, the same in both
# builds) read 10.0% shorter (median of 10 pairs) and failed; one whose
# pieces did not add up to the candidate's device_ms, or not 30 of them,
# fails too.
KSRC="$(dirname "$0")/causal_kernel.c"
"$SNR" cc "$KSRC" -DITERS=2000000 -o "$T/kernel.elf" >/dev/null || fail "snr cc causal_kernel"
"$SNR" cc "$KSRC" -DITERS=1550000 -o "$T/kernel_fast.elf" >/dev/null || fail "snr cc causal_kernel (fast)"
record_causal() { # NAME SERVER ELF: $T/NAME.snrh recorded, its `host causal --json` in $T/NAME.json
  run chrt -f 10 "$SNR" host record -F 997 --progress read_response -o "$T/$1.snrh" -- "$2" "$3" $REQ "$SDIR"
  expect_rc 0
  run "$SNR" host causal "$T/$1.snrh" --speedup 20 --json
  expect_rc 0
  cp "$T/out" "$T/$1.json"
}
record_kernel_pairs() { # FIRST LAST: pairs FIRST..LAST, base then fast; each one's host report --json too
  for i in $(seq "$1" "$2"); do
    for v in KERNEL KERNEL_FAST; do
      elf=$T/kernel.elf
      [ $v = KERNEL_FAST ] && elf=$T/kernel_fast.elf
      record_causal "$v$i" "$SERVE_DEV" "$elf"
      run "$SNR" host report "$T/$v$i.snrh" --json
      expect_rc 0
      cp "$T/out" "$T/$v$i.report.json"
    done
  done
}
record_kernel_pairs 1 5
kernel_check() { # N: the median over pairs 1..N of each pair's shortest runs
python3 - "$T" "$1" <<'PY' >"$T/kspeed"
import json, statistics, sys
T, N = sys.argv[1], int(sys.argv[2])
def runs(name):
    """The recording's runs of ta1rt_device_run, ms: the pieces of the
    candidate (30, adding up to its device_ms), one per launch."""
    c = [c for c in json.load(open(f'{T}/{name}.json'))['candidates'] if c.get('kernel') == 'ta1rt_device_run']
    assert c and c[0]['device'].startswith('TA1 device') and c[0]['pieces'] == 30, f'{name}: {c[:1]}'
    waits = json.load(open(f'{T}/{name}.report.json'))['on_off_device']['host_waits']['waits']
    by_seq = {w['ended_by']['seq']: w['ended_by'] for w in waits
              if w.get('ended_by') and w['ended_by']['name'] == 'ta1rt_device_run'}
    assert sorted(by_seq) == list(range(1, 31)), f'{name}: runs of launches {sorted(by_seq)}'
    ns = [w['end_ns'] - w['start_ns'] for w in by_seq.values()]
    assert abs(sum(ns) / 1e6 - c[0]['device_ms']) < 1e-3, f'{name}: runs add up to {sum(ns) / 1e6} ms, device_ms {c[0]["device_ms"]}'
    return [x / 1e6 for x in ns]
pairs = []
for i in range(1, N + 1):
    b, f = runs(f'KERNEL{i}'), runs(f'KERNEL_FAST{i}')
    pairs.append(1 - min(f) / min(b))
    print(f'pair {i}: run per launch min/median/max {min(b):.2f}/{statistics.median(b):.2f}/{max(b):.2f} ms, '
          f'fast build {min(f):.2f}/{statistics.median(f):.2f}/{max(f):.2f} ms: shortest {pairs[-1] * 100:+.1f}% shorter, '
          f'mean {(1 - statistics.mean(f) / statistics.mean(b)) * 100:+.1f}%', file=sys.stderr)
med = statistics.median(pairs)
print(f'ta1rt_device_run: the shortest run per launch {med * 100:.1f}% shorter in the fast build (median of {N} pairs)', file=sys.stderr)
print(f'{med * 100:.1f}')
assert 0.15 <= med <= 0.30, pairs
PY
}
# a window of pairs can still straddle the machine's slow stretches: then
# five more pairs, and the median of all ten
if ! kernel_check 5; then
  record_kernel_pairs 6 10
  kernel_check 10 || fail "kernel ta1rt_device_run: no device candidate with its device and 30 runs adding up to its device_ms, or the fast build's shortest run per launch not 15-30% shorter (median of 10 pairs): $(cat "$T/kspeed")"
fi
echo "ta1rt_device_run: the fast build's shortest run per launch was $(cat "$T/kspeed")% shorter in the recordings; predictions at 20%"
for v in SERVE_CTRL SERVE_DEV; do
  for i in 1 2 3; do
    record_causal "$v$i" "${!v}" "$T/mlp.elf"
  done
done
serve_rounds() { # N: N more alternating rounds of the four serving builds
  for r in $(seq "$1"); do
    for v in SERVE_CTRL SERVE_CTRL_FAST SERVE_DEV SERVE_DEV_FAST KERNEL KERNEL_FAST; do
      case $v in
        KERNEL) cmd=("$SERVE_DEV" "$T/kernel.elf") ;;
        KERNEL_FAST) cmd=("$SERVE_DEV" "$T/kernel_fast.elf") ;;
        *) cmd=("${!v}" "$T/mlp.elf") ;;
      esac
      chrt -f 10 "${cmd[@]}" $REQ "$SDIR" | sed -n "s/.*(\([0-9.]*\) requests\/s).*/$v \1/p" >>"$T/served" ||
        fail "$v did not run"
    done
  done
  echo "load after the serving loop: $(cut -d' ' -f1-3 /proc/loadavg)"
}
# The serving loop's request rate swings more between runs than the token
# loop's (the device thread's fresh memory per launch): a comparison that
# misses is measured again with twice the rounds, all pairs kept, and judged
# on the median of every pair; the figures of both are printed.
serve_rounds "$ROUNDS"
serve_check() {
python3 - "$T" <<'PY'
import json, statistics, sys
T = sys.argv[1]
runs = {}
for line in open(f'{T}/served'):
    v, r = line.split()
    runs.setdefault(v, []).append(float(r))
ok, pred, meas = True, {}, {}
for case in ('SERVE_CTRL', 'SERVE_DEV'):
    meas[case] = statistics.median(f / x - 1 for f, x in zip(runs[case + '_FAST'], runs[case])) * 100
    preds = []
    for i in (1, 2, 3):
        d = json.load(open(f'{T}/{case}{i}.json'))
        # a static function GCC cloned at -O2 keeps its clone's name (tokenize.constprop.0)
        got = [c for c in d['candidates'] if c.get('function', '').split('.')[0] == 'tokenize']
        assert got and got[0]['file'].endswith('ta1_serve.c'), f'{case}: tokenize is no candidate with its file'
        preds.append(got[0]['effect']['read_response']['throughput_pct'])
    pred[case] = statistics.median(preds)
    tol = max(0.3 * abs(meas[case]), 3.0)
    good = abs(pred[case] - meas[case]) <= tol
    # Device-bound, a faster control step measures 1-10% slower on a 2-CPU
    # machine (request rates bimodal, 15-16 or 21-24 per second: the host and
    # device threads contend for the CPUs), which the causal model does not
    # represent (docs/host.md, "Causal profile", limits): printed, and only
    # its rank against the control-bound case asserted below.
    if case == 'SERVE_CTRL':
        ok &= good
    print(f'{case} requests/s, base: {" ".join("%.2f" % x for x in runs[case])}; fast: {" ".join("%.2f" % x for x in runs[case + "_FAST"])}')
    print(f'{case}: tokenize 20% faster: predicted {pred[case]:+.2f}% ({", ".join("%+.2f" % p for p in preds)}), '
          f'measured {meas[case]:+.2f}% (median of {len(runs[case])} paired runs; medians {statistics.median(runs[case]):.2f} -> '
          f'{statistics.median(runs[case + "_FAST"]):.2f} requests/s), tolerance {tol:.2f} points: {"ok" if good else "OFF"}'
          f'{"" if case == "SERVE_CTRL" else " (reported, not asserted)"}')
# the device's kernel 20% faster: predicted from the device candidate
meas['KERNEL'] = statistics.median(f / x - 1 for f, x in zip(runs['KERNEL_FAST'], runs['KERNEL'])) * 100
preds = []
for i in (1, 2, 3):
    d = json.load(open(f'{T}/KERNEL{i}.json'))
    got = [c for c in d['candidates'] if c.get('kernel') == 'ta1rt_device_run']
    assert got and got[0]['device'].startswith('TA1 device'), 'kernel ta1rt_device_run is no candidate'
    preds.append(got[0]['effect']['read_response']['throughput_pct'])
pred['KERNEL'] = statistics.median(preds)
tol = max(0.3 * abs(meas['KERNEL']), 3.0)
good = abs(pred['KERNEL'] - meas['KERNEL']) <= tol
ok &= good
print(f'KERNEL requests/s, base: {" ".join("%.2f" % x for x in runs["KERNEL"])}; fast: {" ".join("%.2f" % x for x in runs["KERNEL_FAST"])}')
print(f'KERNEL: kernel ta1rt_device_run {got[0]["speedup_pct"]:g}% faster: predicted {pred["KERNEL"]:+.2f}% ({", ".join("%+.2f" % p for p in preds)}), '
      f'measured {meas["KERNEL"]:+.2f}% (median of {len(runs["KERNEL"])} paired runs; medians {statistics.median(runs["KERNEL"]):.2f} -> '
      f'{statistics.median(runs["KERNEL_FAST"]):.2f} requests/s), tolerance {tol:.2f} points: {"ok" if good else "OFF"}')
# where the device is the bottleneck the control step gains less, as measured
if (pred['SERVE_DEV'] < pred['SERVE_CTRL']) != (meas['SERVE_DEV'] < meas['SERVE_CTRL']):
    ok = False
    print('the two serving cases rank differently predicted and measured')
sys.exit(0 if ok else 1)
PY
}
if ! serve_check; then
  echo "measured again with $((2 * ROUNDS)) more rounds"
  serve_rounds $((2 * ROUNDS))
  serve_check || fail "causal predictions on the serving loop against the real speedups"
fi

# --- the page: COZ-style plots; never over an existing file without --force ---
run "$SNR" host causal "$T/base1.snrh" --html "$T/causal.html"
expect_rc 0
grep -q "causal-data" "$T/causal.html" || fail "no data in the causal page"
grep -q '"function":"work_a"' "$T/causal.html" || fail "work_a missing from the page"
run "$SNR" host causal "$T/base1.snrh" --html "$T/causal.html"
expect_rc 1; expect_err "causal.html"
run "$SNR" host causal "$T/base1.snrh" --html "$T/base1.snrh" --force
expect_rc 1; expect_err "base1.snrh"
# device candidates on the page and in the text, with their device
run "$SNR" host causal "$T/KERNEL1.snrh" --html "$T/kernel.html"
expect_rc 0
grep -q '"kernel":"ta1rt_device_run"' "$T/kernel.html" || fail "kernel ta1rt_device_run missing from the page"
grep -q '"transfer":"ta1rt_device_upload"' "$T/kernel.html" || fail "transfer ta1rt_device_upload missing from the page"
run "$SNR" host causal "$T/KERNEL1.snrh" --speedup 20
expect_rc 0
expect_out "kernel ta1rt_device_run on TA1 device, thread ta1-device"
echo "host_causal: ok"
