#!/usr/bin/env python3
"""Checks `snr analyze pod --json` against `snr device --timing --stats` of the
same run (tests/cli/pod_analyze.sh): the critical path's steps are disjoint and
add up to the last chip's cycles; Elk's breakdown adds up to each chip's
cycles, its waiting part equals the chip's WAIT stalls and its preloading part
its DMA engine's busy cycles; every port's and link's series sums to the
fabric's totals, and no period moves more than bandwidth x busy.
usage: check_pod.py POD.json STATS.txt"""
import json
import math
import sys

pod = json.load(open(sys.argv[1]))
lines = open(sys.argv[2]).read().splitlines()

# --stats: the chips' table and the fabric's
chips, fabric, mode, head = {}, {}, None, None
for line in lines:
    f = line.split()
    if line.startswith("chip ") and "cycles" in f and "peer" in f:
        mode, head = "chips", f
        continue
    if line.startswith("port or link"):
        mode = "fabric"
        continue
    if mode == "chips" and f and f[0].isdigit():
        chips[int(f[0])] = dict(zip(head, f))
    elif mode == "fabric" and len(f) >= 7:
        name = " ".join(f[:-5])
        fabric[name] = [float(x) for x in f[-5:]]  # B/cycle bytes busy contended B/busy

errors = []
def check(cond, what):
    if not cond:
        errors.append(what)

last = pod["last_chip"]
check(int(chips[last]["cycles"]) == pod["cycles"], "last chip's cycles %d, --stats %s" % (pod["cycles"], chips[last]["cycles"]))
check(max(int(c["cycles"]) for c in chips.values()) == pod["cycles"], "the last chip is not the one with the most cycles")
cp = pod["critical_path"]
at = 0
for s in cp:
    check(s["start"] == at, "step %s starts at %d, the one before ended at %d" % (s, s["start"], at))
    check(s["cycles"] == s["end"] - s["start"], "step cycles %s" % s)
    check(isinstance(s["pc"], int) and s["pc"] > 0 and s["where"] and s["source"], "step without pc or place: %s" % s)
    at = s["end"]
check(at == pod["cycles"], "the critical path ends at %d, the last chip at %d" % (at, pod["cycles"]))
check(sum(s["cycles"] for s in cp) == pod["cycles"], "the path's cycles do not add up to the step")

for c in pod["chips"]:
    e, st = c["elk"], chips[c["chip"]]
    check(sum(e.values()) == c["cycles"], "chip %d: Elk's parts add up to %d, not its %d cycles" % (c["chip"], sum(e.values()), c["cycles"]))
    check(c["cycles"] == int(st["cycles"]), "chip %d cycles" % c["chip"])
    waits = int(st["dma-base"]) + int(st["dma-transfer"]) + int(st["peer"])
    check(e["preload_only"] + e["stall"] == waits, "chip %d: preload only + stall = %d, its WAITs' stalls %d" % (c["chip"], e["preload_only"] + e["stall"], waits))
    check(e["preload_only"] + e["overlapped"] == int(st["dma-busy"]), "chip %d: preloading %d, its DMA engine busy %s" % (c["chip"], e["preload_only"] + e["overlapped"], st["dma-busy"]))

seen = set()
for r in pod["resources"]:
    name = r["name"]
    seen.add(name)
    check(name in fabric, "%s is not in --stats" % name)
    if name not in fabric:
        continue
    bw, bytes_, busy, cont, _ = fabric[name]
    ser = r["series"]
    sb, sy, sc = (sum(x[i] for x in ser) for i in (2, 3, 4))
    check(abs(sb - bytes_) <= 1, "%s: the series move %.3f bytes, --stats %d" % (name, sb, bytes_))
    check(abs(max(0, math.ceil(sy - 1e-6)) - busy) <= 1, "%s: the series are busy %.3f cycles, --stats %d" % (name, sy, busy))
    check(abs(max(0, math.ceil(sc - 1e-6)) - cont) <= 1, "%s: the series are contended %.3f cycles, --stats %d" % (name, sc, cont))
    for s, e, b, y, c in ser:
        check(y <= e - s + 1e-6 and c <= y + 1e-6, "%s: period %d: busy %.3f, contended %.3f" % (name, s, y, c))
        # the file keeps bytes and cycles in 1/256 units
        check(b <= r["bytes_per_cycle"] * (y + 2 / 256) + 1, "%s: period %d moved %.1f bytes in %.3f busy cycles" % (name, s, b, y))
check(seen == set(fabric), "resources: analyze pod %s, --stats %s" % (sorted(seen), sorted(fabric)))

if errors:
    print("\n".join(errors[:20]))
    sys.exit(1)
print("pod checks: %d path steps, %d chips, %d resources" % (len(cp), len(pod["chips"]), len(pod["resources"])))
