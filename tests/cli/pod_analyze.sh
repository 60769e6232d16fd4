#!/usr/bin/env bash
# The analyses of a pod (docs/analyses.md, "A pod"), on metrics sets written by
# `snr device --timing -o MSET` (docs/metrics-format.md, "A pod's metrics set"):
# - the ring all-reduce with chip 1 late (workloads/allreduce.c -DLATE): the
#   critical path's longest step is chip 1 running its late loop's line, and
#   the path reaches the last chip through peer signals; on time, the path
#   still adds up and passes through signals; chips that only pull (no signal)
#   give a path of one step on the last chip;
# - against --stats of the same run (check_pod.py): the path's steps add up to
#   the last chip's cycles, Elk's breakdown to each chip's cycles (its waiting
#   part to the WAIT stalls, its preloading part to the DMA engine's busy
#   cycles), each port's and link's series to the fabric's totals;
# - k chips pulling from one port: its contended cycles are those of --stats,
#   none for one puller;
# - Perfetto of a pod's set: a process per chip and a flow per peer signal, from the notifying chip to the
#   waiting one; the report's pod section holds analyze pod's critical path and draws its charts;
# - bad input refused clearly: a set missing a chip, an unfinished set, a
#   damaged chip file, a plain metrics file, a set that is not a pod's; -o
#   without --timing, over an existing set, and a run that faults (no set).
# usage: pod_analyze.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
SRC=${2:?usage: pod_analyze.sh SNR SRCDIR}
CHECK="$(dirname "$0")/check_pod.py"

"$SNR" cc -g "$SRC/workloads/allreduce.c" -DLATE=20000 -o "$T/arl.elf" || fail "snr cc allreduce -DLATE"
"$SNR" cc -g "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"
late_line=$(grep -n 'i < LATE; i++' "$SRC/workloads/allreduce.c" | cut -d: -f1)
[ -n "$late_line" ] || fail "no late loop in workloads/allreduce.c"

# chip 1 late
run "$SNR" device "$T/arl.elf" --chips 4 --timing --stats -o "$T/late"
expect_rc 0
cp "$T/err" "$T/late.stats"
[ -f "$T/late/set.json" ] && [ "$(ls "$T/late"/window-*.snrm | wc -l)" -eq 4 ] || fail "no set of 4 chips: $(ls "$T/late")"
run "$SNR" analyze pod "$T/late" --json
expect_rc 0
cp "$T/out" "$T/late.json"
python3 "$CHECK" "$T/late.json" "$T/late.stats" || fail "the late all-reduce's pod analysis against --stats"
python3 - "$T/late.json" "$late_line" <<'PY' || fail "the late chip's line is not the critical path's longest step"
import json, sys
pod, line = json.load(open(sys.argv[1])), int(sys.argv[2])
cp = pod["critical_path"]
top = max(cp, key=lambda s: s["cycles"])
assert top["chip"] == 1 and top["kind"] == "run", top
assert top["source"]["file"].endswith("allreduce.c") and top["source"]["line"] == line, top["source"]
assert top["cycles"] > 150000 and top["line_cycles"] > 100000, top
# the path leaves chip 1 by a signal and reaches the last chip through signals
sig = [s for s in cp if s["kind"] == "signal"]
assert sig and sig[0]["chip"] == 1 and cp[-1]["chip"] == pod["last_chip"], cp
for s in sig:
    assert s["signal"]["wait_source"]["line"] > 0 and s["signal"]["waited"] > 0, s
assert pod["last_chip"] != 1
print("late: chip 1's line %d holds %d of %d cycles" % (line, top["cycles"], pod["cycles"]))
PY
# the text names every step with chip, pc and file:line (function)
run "$SNR" analyze pod "$T/late"
expect_rc 0
expect_out "allreduce.c:$late_line (main)"
expect_out "signal to chip 2: ta.dma.notify"
grep -qE '^ +1 +0 +[0-9]+ +[0-9]+ +0x[0-9a-f]+ +.*allreduce\.c:'"$late_line"' \(main\)' "$T/out" ||
  fail "the first step is not chip 1's late line from cycle 0: $(head -8 "$T/out")"

# on time, 8 chips on a ring: the same checks; no step is the late line
echo '{"ici": {"topology": "ring"}}' >"$T/ring.json"
run "$SNR" device "$T/ar.elf" --chips 8 --timing --stats --config "$T/ring.json" -o "$T/ring"
expect_rc 0
cp "$T/err" "$T/ring.stats"
run "$SNR" analyze pod "$T/ring" --json
expect_rc 0
python3 "$CHECK" "$T/out" "$T/ring.stats" || fail "the 8-chip ring all-reduce's pod analysis against --stats"
python3 - "$T/out" <<'PY' || fail "the on-time all-reduce's critical path"
import json, sys
pod = json.load(open(sys.argv[1]))
sig = [s for s in pod["critical_path"] if s["kind"] == "signal"]
assert len(sig) >= 2 and len({s["chip"] for s in sig}) >= 2, pod["critical_path"]
assert all(l["name"].startswith("link ") or "port" in l["name"] for l in pod["resources"])
links = {l["name"] for l in pod["resources"] if l["kind"] == "link"}
assert links == {"link %d->%d" % (i, (i + 1) % 8) for i in range(8)}, links
PY

# k chips pulling 1 MiB each from chip 0's HBM port (100 B/cycle): no signals, so the path is one step on the last
# chip; the port's contended cycles are those of --stats: none for one puller, the k pulls overlapping otherwise
cp "$(dirname "$0")/pull_port.c" "$T/pull.c"
echo '{"dma": {"hbm_bytes_per_cycle": 100, "ici_bytes_per_cycle": 1000}}' >"$T/port.json"
for k in 1 2 3; do
  "$SNR" cc "$T/pull.c" -DPULLERS=$k -o "$T/pull$k.elf" || fail "snr cc pull $k"
  run "$SNR" device "$T/pull$k.elf" --chips 4 --timing --config "$T/port.json" --stats -o "$T/pull$k"
  expect_rc 0
  cp "$T/err" "$T/pull$k.stats"
  run "$SNR" analyze pod "$T/pull$k" --json
  expect_rc 0
  python3 "$CHECK" "$T/out" "$T/pull$k.stats" || fail "$k pullers: the pod analysis against --stats"
  python3 - "$T/out" "$k" <<'PY' || fail "$k pullers from one port"
import json, sys
pod, k = json.load(open(sys.argv[1])), int(sys.argv[2])
cp = pod["critical_path"]
assert len(cp) == 1 and cp[0]["kind"] == "run" and cp[0]["chip"] == pod["last_chip"], cp
port = {r["name"]: r for r in pod["resources"]}["chip 0 HBM port"]
assert abs(port["bytes"] - k * 1048576) <= 1, port["bytes"]
# the k transfers share the port fairly and end together: busy k x 1 MiB / 100 B/cycle, all of it contended
# when k > 1, none of it for one
assert abs(port["busy_cycles"] - k * 1048576 / 100) <= 2, port["busy_cycles"]
assert abs(port["contended_cycles"] - (port["busy_cycles"] if k > 1 else 0)) <= 2, port["contended_cycles"]
print("%d puller(s): port busy %.0f, contended %.0f" % (k, port["busy_cycles"], port["contended_cycles"]))
PY
done

# Perfetto of a pod's set: a process per chip, named so, and a flow from each ta.dma.notify to the WAIT on the
# chip that took its signal (4 chips x 6 ring steps: 24), each between two different chips' processes
"$SNR" cc "$SRC/workloads/allreduce.c" -DELEMS=1024 -o "$T/ars.elf" || fail "snr cc allreduce -DELEMS=1024"
run "$SNR" device "$T/ars.elf" --chips 4 --timing -o "$T/small"
expect_rc 0
run "$SNR" export perfetto "$T/small" -o "$T/small.json"
expect_rc 0
python3 - "$T/small.json" <<'PY' || fail "the pod's Perfetto export"
import json, sys
ev = json.load(open(sys.argv[1]))["traceEvents"]
procs = {e["pid"]: e["args"]["name"] for e in ev if e.get("ph") == "M" and e["name"] == "process_name"}
assert sorted(n.split(":")[0] for n in procs.values()) == ["chip %d of 4" % c for c in range(4)], procs
chip = {pid: int(n.split()[1]) for pid, n in procs.items()}
starts = {e["id"]: e for e in ev if e.get("ph") == "s" and e.get("cat") == "peer.flow"}
ends = [e for e in ev if e.get("ph") == "f" and e.get("cat") == "peer.flow"]
assert len(starts) == 24 and len(ends) == 24, (len(starts), len(ends))
for e in ends:
    s = starts[e["id"]]
    # a ring: chip c's notify lands on chip c + 1
    assert chip[e["pid"]] == (chip[s["pid"]] + 1) % 4, (s, e)
    assert e["ts"] > s["ts"], (s, e)
print("perfetto: 24 peer flows, each from chip c to chip c + 1")
PY
run "$SNR" export perfetto "$T/small" --format proto -o "$T/small.pb"
expect_rc 0

# the report of a pod's set: the pod's section (the critical path's steps with chip, pc and place, as analyze pod
# gives them), its charts drawn in Chromium with no script error
run "$SNR" report "$T/small" -o "$T/r.html"
expect_rc 0
run "$SNR" analyze pod "$T/small" --json
expect_rc 0
cp "$T/out" "$T/small.pod.json"
. "$(dirname "$0")/../an/lib.sh"
mkdir "$T/page"
render_report "$T/page" "$T/r.html" 1300,2400
python3 - "$T/page/dom.html" "$T/small.pod.json" <<'PY' || fail "the pod's report page"
import html, json, re, sys
dom, pod = open(sys.argv[1]).read(), json.load(open(sys.argv[2]))
assert 'data-ready="1"' in dom, "the page script did not finish"
m = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', dom, re.S)
assert not (m and m.group(1).strip()), m.group(1)
for id in ("c-pod-elk", "c-pod-res"):
    div = dom[dom.find('id="%s"' % id):]
    assert "<svg" in div[:div.find("</div>") + 200000][:2000] or "<svg" in div[:5000], id + " not drawn"
table = re.search(r'<table class="pod-path">(.*?)</table>', dom, re.S).group(1)
rows = re.findall(r'<tr><td class="num">(\d+)</td><td class="num">(\d+)</td><td class="num">(\d+)</td>'
                  r'<td class="num">(\d+)</td><td><code>0x([0-9a-f]+)</code></td><td>([^<]*)</td>', table)
want = [(s["chip"], s["start"], s["end"], s["cycles"], s["pc"], s["where"]) for s in pod["critical_path"]]
got = [(int(a), int(b), int(c), int(d), int(e, 16), html.unescape(w)) for a, b, c, d, e, w in rows]
assert got == want, (got[:3], want[:3])
print("report: the pod's section, %d path steps, charts drawn" % len(got))
PY

# bad input
run "$SNR" analyze pod "$T/late/window-0.snrm"
expect_rc 2
expect_err "is not a pod's metrics set"
run "$SNR" analyze pod "$T/nothing"
expect_rc 2
expect_err "nothing"
mkdir "$T/notpod"
python3 - "$T/late/set.json" "$T/notpod/set.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); del m["pod"]; json.dump(m, open(sys.argv[2], "w"))
PY
cp "$T/late"/window-*.snrm "$T/notpod/"
run "$SNR" analyze pod "$T/notpod"
expect_rc 2
expect_err "not a pod's metrics set"
cp -r "$T/late" "$T/missing"
python3 - "$T/missing/set.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m["windows"] = [w for w in m["windows"] if w["chip"] != 2]; json.dump(m, open(sys.argv[1], "w"))
PY
run "$SNR" analyze pod "$T/missing"
expect_rc 3
expect_err "chip 2 of the pod's 4 has no metrics file in the set"
cp -r "$T/late" "$T/unfinished"
sed -i 's/"complete": true/"complete": false/' "$T/unfinished/set.json"
run "$SNR" analyze pod "$T/unfinished"
expect_rc 3
expect_err "unfinished"
cp -r "$T/late" "$T/cut"
head -c 5000 "$T/late/window-3.snrm" >"$T/cut/window-3.snrm"
run "$SNR" analyze pod "$T/cut"
expect_rc 3
expect_err "window-3.snrm"
run "$SNR" analyze pod
expect_rc 2
# the device's -o
run "$SNR" device "$T/ar.elf" --chips 2 -o "$T/x"
expect_rc 2
expect_err "needs --timing"
run "$SNR" device "$T/ar.elf" --chips 4 --timing -o "$T/late"
expect_rc 1
expect_err "never written over"
[ "$(ls "$T/late"/window-*.snrm | wc -l)" -eq 4 ] && cmp -s "$T/late/window-0.snrm" "$T/cut/window-0.snrm" ||
  fail "the existing set changed"
cc_ta1 dead <<'C'
#include "ta1.h"
int main(void)
{
	ta_wait(5, 1);
	ta_dma_notify(ta_hbm_of(ta_chip_id() ^ 1, 0), TA_VMEM_BASE, 64, 0, 5);
	return 0;
}
C
run "$SNR" device "$T/dead.elf" --chips 2 --timing -o "$T/dead"
expect_rc 3
expect_err "no metrics set written"
[ ! -e "$T/dead" ] && [ ! -e "$T/dead.partial" ] || fail "a deadlocked run left a set: $(ls -d "$T"/dead*)"
echo "PASS pod_analyze"
