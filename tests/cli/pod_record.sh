#!/usr/bin/env bash
# snr record --pod (docs/recording.md, "A pod"): every chip of a pod on
# `snr device --gdb` into one trace set, the chips stepped in turns through
# the device's pod mode (QSnrPod), none running unrecorded.
# - the ring all-reduce (workloads/allreduce.c) on 2, 4 and 8 chips, all-to-all
#   and ring, and with chip 1 late (-DLATE); the All-Gather (workloads/
#   allgather.c) on a ring and all-to-all: every chip's window is the function's
#   whole call (--until-return), as many instructions as `snr profile` counts
#   per call; the last chip's pc sequence (and chip 0's on 4 chips) equals the
#   one `record --chip C` records of that chip alone (a chip that ran unrecorded inside the windows would
#   leave a gap); the program run on after the recording detached computes
#   the right result on every chip; each pod's replay is the same bytes
#   (table, --json, -o MSET) with --threads 1, 2, 3 and 8 (pod_same_threads.sh);
# - `snr trace info POD` lists the chips; a pod's windows are not replayed one
#   by one as if independent;
# - refused, named: a chip that never hits the breakpoint (it exits), a chip
#   that cannot reach it (it waits for a signal from a chip stopped at its
#   hit), a deadlock inside the windows (both chips wait; or the signalling
#   chip's window ended by --count), a manifest naming a missing chip file, a
#   chip trace from another pod or program, --pod with an unknown --method,
#   --windows or a target other than a stub (--method sim: pod_record_sim.sh).
# usage: pod_record.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
. "$(dirname "$0")/pod_same_threads.sh"
SRC=${2:?usage: pod_record.sh SNR SRCDIR}

"$SNR" cc "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"
"$SNR" cc "$SRC/workloads/allreduce.c" -DLATE=2000 -o "$T/arl.elf" || fail "snr cc allreduce -DLATE"
"$SNR" cc "$SRC/workloads/allgather.c" -o "$T/ag.elf" || fail "snr cc allgather"
echo '{"ici": {"topology": "ring"}}' >"$T/ring.json"
echo '{"ici": {"topology": "all-to-all"}}' >"$T/a2a.json"

pcs() { # trace -> its pc sequence, one per line
  "$SNR" trace dump "$1" --json | sed 's/.*"pc":\([0-9]*\).*/\1/'
}

# pod ELF FUNC CHIPS CONFIG NAME: records the pod, checks it against profile,
# --chip C and the program's own output
pod() {
  local elf=$1 fn=$2 n=$3 cfg=$4 name=$5
  gdb_device "$SNR" "$T" "$elf" --chips "$n" --config "$cfg"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$elf" --config "$cfg" --breakpoint "$fn" \
    --until-return --count 10M -o "$T/$name.snrs"
  expect_rc 0
  wait "$DEV" || fail "$name: the device exited $? after the pod recording detached: $(cat "$T/dev.err")"
  case $fn in
    allreduce) [ "$(grep -c ", 0 wrong$" "$T/dev.out")" -eq "$n" ] || fail "$name: after the recording: $(cat "$T/dev.out")" ;;
    gather) grep -q "checksum" "$T/dev.out" || fail "$name: after the recording: $(cat "$T/dev.out")" ;;
  esac
  run "$SNR" trace info "$T/$name.snrs" --json
  expect_rc 0
  cp "$T/out" "$T/$name.info.json"
  "$SNR" profile "$elf" --chips "$n" --config "$cfg" --json >"$T/prof.json" 2>/dev/null || fail "$name: snr profile"
  python3 - "$T/$name.info.json" "$T/prof.json" "$fn" "$n" <<'EOF' || fail "$name: the chips' windows against snr profile"
import json, sys
info, prof, fn, n = json.load(open(sys.argv[1])), json.load(open(sys.argv[2])), sys.argv[3], int(sys.argv[4])
chips = info["chips"]
assert [c["chip"] for c in chips] == list(range(n)), chips
f = [x for x in prof["functions"] if x["function"] == fn][0]
ipc = f["instructions_per_call"]
assert f["calls"] == n, f
for c in chips:
    assert c["end"] == "returned", c
    assert ipc["min"] <= c["instructions"] <= ipc["max"], (c, ipc)
if ipc["min"] == ipc["max"]:
    assert all(c["instructions"] == ipc["min"] for c in chips), (chips, ipc)
EOF
  # the pod replayed whole (snr replay POD): every chip's pcs and end state verified, and its cycles
  # against the device's --timing figures for the same window (docs/cases.md, "Ring all-reduce")
  run "$SNR" replay "$T/$name.snrs" --json
  expect_rc 0
  cp "$T/out" "$T/$name.replay.json"
  run "$SNR" replay "$T/$name.snrs" --json
  cmp -s "$T/out" "$T/$name.replay.json" || fail "$name: two pod replays differ: $(diff "$T/out" "$T/$name.replay.json" | head -5)"
  same_every_threads "$name" "$n" # and whatever the thread count
  "$SNR" device "$elf" --chips "$n" --config "$cfg" --timing >"$T/$name.timing" || fail "$name: snr device --timing"
  python3 - "$T/$name.replay.json" "$T/$name.info.json" "$T/$name.timing" "$fn" "$n" "$name" "$T" <<'EOF' || fail "$name: the pod replay against the device's --timing figures"
import json, re, sys
rep, info, timing, fn, n, name, tdir = sys.argv[1:8]
n = int(n)
j, info = json.load(open(rep)), json.load(open(info))
chips = j["chips"]
assert [c["chip"] for c in chips] == list(range(n)), chips
for c, i in zip(chips, info["chips"]):
    assert c["verified"] and c["end_state_checked"], c
    assert c["instructions"] == i["instructions"], (c, i)
assert j["verified"] and j["cycles"] == max(c["cycles"] for c in chips), j
cyc = [c["cycles"] for c in chips]
out = open(timing).read()
# The device's figures are ta_cycles() read around the call: they add the 5 cycles
# of the caller's instructions outside the window (the read before the call to the
# call's jump, the return's landing to the read after it).
OUTSIDE = 5
if fn == "allreduce":
    dev = {int(m.group(1)): int(m.group(2)) for m in re.finditer(r"chip (\d+) of \d+, \d+ floats, (\d+) cycles", out)}
    assert sorted(dev) == list(range(n)), out
    if name.startswith("late"):
        # the windows start together at each chip's own hit: no lateness in them; every
        # chip's replay is the one of the pod without the late chip
        plain = json.load(open(tdir + "/ar%d.replay.json" % n))
        assert cyc == [c["cycles"] for c in plain["chips"]], (cyc, plain)
        assert dev[1] < cyc[1] + OUTSIDE and all(dev[k] > cyc[k] + OUTSIDE + 10000 for k in dev if k != 1), (dev, cyc)
    else:
        assert all(dev[k] - cyc[k] == OUTSIDE for k in dev), (dev, cyc)
else:
    m = re.search(r"setup (\d+) cycles, total (\d+) cycles", out)
    gather0 = int(m.group(2)) - int(m.group(1))  # chip 0's figure for gather()
    # on a ring chips 1 and 2 reach gather() 2 cycles after chips 0 and 3 on the device;
    # the replay starts every window at its cycle 0, and chip 0's shards meet theirs 2
    # cycles later: chip 0's gather is 2 cycles longer (docs/cases.md)
    want = OUTSIDE - 2 if name.endswith("ring") else OUTSIDE
    assert gather0 - cyc[0] == want, (gather0, cyc, want)
print(name, "replay", cyc, "pod", j["cycles"], file=sys.stderr)
EOF
  # each chip's pcs as record --chip C records that chip alone (the others run through its waits)
  for c in $([ "$name" = ar4 ] && echo 0) $((n - 1)); do
    gdb_device "$SNR" "$T" "$elf" --chips "$n" --config "$cfg"
    run "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$elf" --config "$cfg" --breakpoint "$fn" --chip $c \
      --until-return --count 10M --method step --kill -o "$T/$name.c$c.snrt"
    expect_rc 0
    wait "$DEV" 2>/dev/null
    pcs "$T/$name.snrs/window-$c.snrt" >"$T/a.pcs"
    pcs "$T/$name.c$c.snrt" >"$T/b.pcs"
    [ -s "$T/a.pcs" ] && cmp -s "$T/a.pcs" "$T/b.pcs" ||
      fail "$name: chip $c's pcs in the pod recording ($(wc -l <"$T/a.pcs")) differ from record --chip $c's ($(wc -l <"$T/b.pcs")): $(diff "$T/a.pcs" "$T/b.pcs" | head -5)"
  done
}

for n in 2 4 8; do
  pod "$T/ar.elf" allreduce $n "$T/a2a.json" ar$n
  pod "$T/ar.elf" allreduce $n "$T/ring.json" ar${n}ring
done
pod "$T/arl.elf" allreduce 4 "$T/a2a.json" late4
pod "$T/ag.elf" gather 4 "$T/a2a.json" ag4
pod "$T/ag.elf" gather 4 "$T/ring.json" ag4ring

# trace info lists the chips
run "$SNR" trace info "$T/ar4.snrs"
expect_rc 0
expect_out "4 chips"
for c in 0 1 2 3; do grep -Eq "^$c +134 +returned +.*window-$c.snrt" "$T/out" || fail "trace info lacks chip $c: $(cat "$T/out")"; done
# every chip's sync flags as the windows started, in the manifest
python3 -c "
import json
w = json.load(open('$T/ar4.snrs/set.json'))['windows']
assert [x['chip'] for x in w] == [0, 1, 2, 3] and all(len(x['flags_at_start']) == 16 for x in w), w
" || fail "the pod manifest's chips and flags_at_start"
# a pod's windows are not replayed one by one as independent windows: the set
# replays whole (above), and what a pod replay does not take is refused
run "$SNR" replay "$T/ar4.snrs"
expect_rc 0
expect_out "pod cycles    8400"
for c in 0 1 2 3; do grep -Eq "^$c +134 +8400 .*pcs, end state$" "$T/out" || fail "replay POD lacks chip $c: $(cat "$T/out")"; done
# -o MSET: the pod's metrics set in the layout of `snr device --timing -o MSET`; snr analyze pod reads both
run "$SNR" replay "$T/ar4.snrs" -o "$T/ar4.msnrs"
expect_rc 0
expect_out "metrics set   $T/ar4.msnrs: 4 chips"
run "$SNR" analyze pod "$T/ar4.msnrs" --json
expect_rc 0
cp "$T/out" "$T/ar4.pod.json"
"$SNR" device "$T/ar.elf" --chips 4 --config "$T/a2a.json" --timing -o "$T/ar4dev.msnrs" >/dev/null ||
  fail "snr device --timing -o MSET"
run "$SNR" analyze pod "$T/ar4dev.msnrs" --json
expect_rc 0
python3 - "$T/ar4.pod.json" "$T/out" "$T/ar4.replay.json" <<'EOF' || fail "analyze pod of the pod replay's metrics set"
import json, sys
rp, dev, rep = (json.load(open(f)) for f in sys.argv[1:4])
assert rp["chips_in_pod"] == dev["chips_in_pod"] == 4, (rp, dev)
assert rp["cycles"] == rep["cycles"] == 8400, (rp["cycles"], rep["cycles"])
for a, b in zip(rp["chips"], rep["chips"]):
    assert (a["chip"], a["cycles"], a["instructions"]) == (b["chip"], b["cycles"], b["instructions"]), (a, b)
# every chip's 2(N - 1) peer signals, in the replay's set as in the device's
assert [c["peer_signals"] for c in rp["chips"]] == [6] * 4 == [c["peer_signals"] for c in dev["chips"]], (rp, dev)
assert sum(s["cycles"] for s in rp["critical_path"]) == 8400, rp["critical_path"]
EOF
run "$SNR" replay "$T/ar4.snrs" -o "$T/ar4.msnrs"
expect_rc 1
expect_err "ar4.msnrs"
run "$SNR" replay "$T/ar4.snrs" --sim unicorn
expect_rc 1
expect_err "a pod replays in the TA1 GRM only"
run "$SNR" replay "$T/ar4.snrs" "$T/ar2.snrs"
expect_rc 1
expect_err "is a pod recording"

# bad pods: a missing chip file; a chip of another pod (2 chips); a chip of another program (LATE)
cp -r "$T/ar4.snrs" "$T/miss.snrs"
rm "$T/miss.snrs/window-2.snrt"
run "$SNR" trace info "$T/miss.snrs"
expect_rc 1
expect_err "chip 2's trace"
cp -r "$T/ar4.snrs" "$T/other.snrs"
cp "$T/ar2.snrs/window-1.snrt" "$T/other.snrs/window-1.snrt"
run "$SNR" trace info "$T/other.snrs"
expect_rc 1
expect_err "is chip 1 of 2 chips: not a trace of this pod"
cp -r "$T/ar4.snrs" "$T/prog.snrs"
cp "$T/late4.snrs/window-3.snrt" "$T/prog.snrs/window-3.snrt"
run "$SNR" trace info "$T/prog.snrs"
expect_rc 1
expect_err "chip 3 was recorded from another program or machine than chip 0"

# chips that cannot be recorded, each named
cat >"$T/nohit.c" <<'EOF'
#include <stdint.h>
#include "ta1.h"
TA_HBM_DATA static uint64_t box[4];
volatile uint64_t sink;
__attribute__((noinline)) void step(uint64_t me) { sink = me * 3 + 1; }
static void signal_chip1(void)
{
	ta_dma_notify(ta_hbm_of(1, ta_addr(box) - TA_HBM_BASE), ta_addr(box), 8, 1, 3);
	ta_wait(1, 1);
}
__attribute__((noinline)) void handoff(uint64_t me)
{
#ifdef DEADLOCK
	ta_wait(3, 1); /* both chips wait first: neither signals */
#endif
	if (me == 0) {
		for (volatile int i = 0; i < 200; i++)
			;
		signal_chip1();
	} else {
		ta_wait(3, 1);
	}
}
int main(void)
{
	uint64_t me = ta_chip_id();
#ifdef NOHIT
	if (me == 0) /* chip 1 never calls step */
		step(me);
#elif defined(AFTER)
	if (me == 1) /* chip 1 reaches step only after chip 0 signalled it from past step */
		ta_wait(3, 1);
	step(me);
	if (me == 0)
		signal_chip1();
#else
	handoff(me);
#endif
	return 0;
}
EOF
for v in NOHIT AFTER DEADLOCK PLAIN; do "$SNR" cc -g "$T/nohit.c" -D$v -o "$T/$v.elf" || fail "snr cc nohit.c -D$v"; done
rec2() { # ELF BREAKPOINT OUT [record args]: a 2-chip pod
  local elf=$1 bp=$2 out=$3
  shift 3
  gdb_device "$SNR" "$T" "$elf" --chips 2
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$elf" --breakpoint "$bp" -o "$T/$out" "$@"
  kill "$DEV" 2>/dev/null
  wait "$DEV" 2>/dev/null
}
rec2 "$T/NOHIT.elf" step nohit.snrs --count 100
expect_rc 1
expect_err "chip 1: the program exited with status 0 before reaching breakpoint step"
[ ! -e "$T/nohit.snrs" ] || fail "a pod with a chip that never hit was written as complete"
rec2 "$T/AFTER.elf" step after.snrs --count 100
expect_rc 1
expect_err "chip 1 cannot reach the breakpoint"
expect_err "chip 0: stopped at its breakpoint hit; chip 1: blocked at a ta.wait at pc 0x"
expect_err "nohit.c:3"
rec2 "$T/DEADLOCK.elf" handoff dead.snrs --count 100
expect_rc 1
expect_err "the pod deadlocked inside the windows"
expect_err "chip 0: blocked at a ta.wait at pc 0x"
expect_err "chip 1: blocked at a ta.wait at pc 0x"
grep -q "(handoff)" "$T/err" || fail "the deadlock does not name the function: $(cat "$T/err")"
rec2 "$T/PLAIN.elf" handoff short.snrs --count 50
expect_rc 1
expect_err "chip 0: its window ended; chip 1: blocked at a ta.wait"
# the same pod whole: chip 1's window passes its wait once chip 0 signalled
rec2 "$T/PLAIN.elf" handoff whole.snrs --until-return --count 100k
expect_rc 0
run "$SNR" trace info "$T/whole.snrs" --json
python3 -c "
import json, sys
c = json.load(open('$T/out'))['chips']
assert [x['end'] for x in c] == ['returned', 'returned'] and c[0]['instructions'] > 1000 and c[1]['instructions'] > 2, c
" || fail "the handoff pod: $(cat "$T/out")"
same_every_threads whole 2

# usage
run "$SNR" record --pod --target tcp:127.0.0.1:1 --elf "$T/ar.elf" --breakpoint allreduce --count 10 --method simx -o "$T/x"
expect_rc 2
expect_err "--method must be auto, sim or step, not 'simx'"
run "$SNR" record --pod --target tcp:127.0.0.1:1 --elf "$T/ar.elf" --breakpoint allreduce --count 10 --windows 2 -o "$T/x"
expect_rc 2
expect_err "not with --windows"
run "$SNR" record --pod --pid 1 --breakpoint allreduce --count 10 -o "$T/x"
expect_rc 2
expect_err "give --target"
exit 0

# the pod replay takes a peer's replayed write where a chip's trace captured the
# peer's bytes, and checks the capture: chip 0 pushes 32 bytes into chip 1's HBM
# (ta_dma_notify), chip 1 reads them after a spin. Recorded clean, the pod
# replays verified; recorded with the device planting other bytes there during
# chip 1's spin (--test-dma), chip 1's trace captured bytes chip 0 never wrote,
# and the replay names chip 1, its instruction and chip 0's write.
cat >"$T/peer.c" <<'EOF'
#include <stdint.h>
#include "ta1.h"
TA_HBM_DATA static uint64_t box[4];
static uint64_t mine[4] = {0x1111, 0x2222, 0x3333, 0x4444}, got[4];
volatile uint64_t sink;
__attribute__((noinline)) void handoff(uint64_t me)
{
	if (me == 0) {
		ta_dma_notify(ta_hbm_of(1, ta_addr(box) - TA_HBM_BASE), ta_addr(mine), sizeof(box), 1, 3);
		ta_wait(1, 1);
	} else {
		ta_wait(3, 1);
		for (volatile int i = 0; i < 20000; i++)
			;
		ta_dma(ta_addr(got), ta_addr(box), sizeof(box), 2);
		ta_wait(2, 1);
		sink = got[0] + got[1] + got[2] + got[3];
	}
}
int main(void)
{
	handoff(ta_chip_id());
	return 0;
}
EOF
"$SNR" cc -g "$T/peer.c" -o "$T/peer.elf" || fail "snr cc peer.c"
peer() { # OUT [device args]
  local out=$1
  shift
  gdb_device "$SNR" "$T" "$T/peer.elf" --chips 2 "$@"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$T/peer.elf" --breakpoint handoff --until-return \
    --count 1M -o "$T/$out"
  expect_rc 0
  kill "$DEV" 2>/dev/null
  wait "$DEV" 2>/dev/null
}
peer peer.snrs
run "$SNR" replay "$T/peer.snrs"
expect_rc 0
expect_out "verified      every chip's pcs matched; end state matches the recording on 2 of 2 chips"
# where chip 1's DMA read box: the capture's address (chip 1's HBM, global)
addr=$("$SNR" trace dump "$T/peer.snrs/window-1.snrt" --json | grep '"disasm":"ta.dma' | grep -o '"addr":[0-9]*' | head -1 | cut -d: -f2)
[ -n "$addr" ] || fail "chip 1's trace has no captured read of box"
peer peerbad.snrs --test-dma 1,50000,$addr,32
run "$SNR" replay "$T/peerbad.snrs"
expect_rc 3
expect_err "DIVERGED"
expect_err "chip 1: instruction "
expect_err "peer.c:15 (handoff): ta.dma"
expect_err "takes 0x11 from the pod's replay (its 4 KiB block last written in the replay by chip 0's instruction"
expect_err "but chip 1's trace captured 0xa5 there"
grep -q "not finished\|NO" "$T/out" || fail "the diverged pod replay's table: $(cat "$T/out")"
run "$SNR" replay "$T/peerbad.snrs" -o "$T/peerbad.msnrs"
expect_rc 3
expect_err "peerbad.msnrs was not written"
[ ! -e "$T/peerbad.msnrs" ] && [ ! -e "$T/peerbad.msnrs.partial" ] || fail "a diverged pod replay left its metrics set"
run "$SNR" replay "$T/peerbad.snrs" --json
expect_rc 3
python3 -c "
import json
j = json.load(open('$T/out'))
assert not j['verified'] and [c['verified'] for c in j['chips']] == [True, False], j
assert 'chip 1: instruction' in j['report'], j
" || fail "the diverged pod replay's JSON: $(cat "$T/out")"

# a pod manifest without a chip's flags_at_start (the replay starts the flags from them) or with a bad one
cp -r "$T/ar4.snrs" "$T/noflags.snrs"
python3 -c "
import json
p = '$T/noflags.snrs/set.json'
j = json.load(open(p))
del j['windows'][2]['flags_at_start']
json.dump(j, open(p, 'w'))
"
run "$SNR" trace info "$T/noflags.snrs"
expect_rc 0
run "$SNR" replay "$T/noflags.snrs"
expect_rc 1
expect_err "chip 2's entry has no \"flags_at_start\""
cp -r "$T/ar4.snrs" "$T/badflags.snrs"
python3 -c "
import json
p = '$T/badflags.snrs/set.json'
j = json.load(open(p))
j['windows'][1]['flags_at_start'][3] = -1
json.dump(j, open(p, 'w'))
"
run "$SNR" replay "$T/badflags.snrs"
expect_rc 1
expect_err "chip 1's flags_at_start[3] is not a count"
