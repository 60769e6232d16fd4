#!/usr/bin/env bash
# snr annotate on workloads/attn.c (snr cc -g, -O2), whose lines' costs are
# known (see the comment at its top): the DMA stall is at the KNOWN-DMA-WAIT
# line, all of it; the VMEM hazard of exp(S) at the KNOWN-VMEM-HAZARD line;
# the totals (cycles, each stall cause) equal `snr replay --json`'s exactly,
# from the trace and from the metrics file; every pc's cycles plus the
# drain add up to the window's. Then: --asm/--function/--top text; a build
# without -g annotates per function; --compare against a window with half
# the rows, matched by file:line; a host program (x86-64, unicorn) recorded
# through ptrace annotates with its lines and reconciles the same way.
# A damaged host trace's replay failure names the source line.
# usage: annotate.sh SNR SRCDIR UC_KERNEL TRACE_EDIT
set -u
SNR=$1; SRC=$2; KERNEL=$3; EDIT=$4; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
record_attn "$SNR" "$SRC" "$T" -g
line_of() { grep -n "$1" "$SRC/workloads/attn.c" | head -1 | cut -d: -f1; }
WAIT=$(line_of KNOWN-DMA-WAIT); HAZ=$(line_of KNOWN-VMEM-HAZARD)

"$SNR" replay "$T/a.snrt" --json >"$T/replay.json" || fail "replay --json"
# the same figures when the instructions and stalls go through temporary files (a 1 KiB
# budget: lib/snr_spill.h)
"$SNR" annotate "$T/a.snrm" --json >"$T/ann-mem.json" || fail "annotate --json"
SNR_SPILL_MEM=1024 "$SNR" annotate "$T/a.snrm" --json >"$T/ann-spill.json" || fail "annotate --json (spilled)"
cmp -s "$T/ann-mem.json" "$T/ann-spill.json" || fail "annotate differs when its data goes through temporary files"
for f in a.snrt a.snrm; do
  "$SNR" annotate "$T/$f" --json >"$T/ann.json" || fail "annotate --json $f"
  python3 - "$T/ann.json" "$T/replay.json" "$WAIT" "$HAZ" <<'PY' || fail "annotate's figures ($f)"
import json, sys
a = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
wait, haz = int(sys.argv[3]), int(sys.argv[4])
assert a["total_cycles"] == r["cycles"], (a["total_cycles"], r["cycles"])
assert a["stall_cycles"] == r["stall_cycles"], (a["stall_cycles"], r["stall_cycles"])
assert sum(p["cycles"] for p in a["pcs"]) + a["drain_cycles"] == r["cycles"]
assert sum(l["cycles"] for l in a["lines"]) + a["drain_cycles"] == r["cycles"]
for cause, total in r["stall_cycles"].items():
    assert sum(p["stall_cycles"][cause] for p in a["pcs"]) == total, cause
    assert sum(l["stall_cycles"][cause] for l in a["lines"]) == total, cause
assert sum(p["executions"] for p in a["pcs"]) == r["instructions"]
by_line = {(l["file"], l["line"]): l for l in a["lines"]}
attn = [l for l in a["lines"] if l["file"] and l["file"].endswith("workloads/attn.c")]
w = [l for l in attn if l["line"] == wait][0]
# every DMA stall at the ta_wait line; 4 tiles x base latency 500
assert w["stall_cycles"]["dma-base"] == r["stall_cycles"]["dma-base"] == 4 * 500, w
assert w["stall_cycles"]["dma-transfer"] == r["stall_cycles"]["dma-transfer"] > 0, w
assert w["executions"] == 4 and w["function"] == "attn", w
assert a["lines"][0] is not None and a["lines"][0]["line"] == wait, a["lines"][0]  # the hottest line
h = [l for l in attn if l["line"] == haz][0]
# docs/ta1-timing.md with the default config: exp(S) issues in the last cycle of the matmul it reads
# (MXU fill 128 + 32 rows x 1 cycle): 159 cycles of VMEM hazard per tile; the DMA's transfer
# 65536 B / 1200 B per cycle = 55 cycles
assert h["stall_cycles"]["vmem-hazard"] == 4 * (128 + 32 - 1), h
assert w["stall_cycles"]["dma-transfer"] == 4 * 55, w
assert all(l["stall_cycles"]["vmem-hazard"] <= h["stall_cycles"]["vmem-hazard"] for l in attn), attn
# per pc: the WAIT instruction holds the DMA stall, with its source object and disassembly
p = [p for p in a["pcs"] if p["disasm"].startswith("ta.wait")][0]
assert p["line"] == wait and p["source"]["inlined"][0]["function"] == "ta_wait", p
assert p["stall_cycles"]["dma-base"] == 2000
PY
done

# text: the hottest line first, the source with its margin, instructions under --asm
"$SNR" annotate "$T/a.snrm" --function attn --asm --top 3 >"$T/ann.txt" || fail "annotate text"
grep -A2 "^hottest lines" "$T/ann.txt" | tail -1 | grep -q "attn.c:$WAIT (attn)" ||
  fail "the hottest line is not attn.c:$WAIT: $(cat "$T/ann.txt")"
[ "$(sed -n '/^hottest lines/,/^$/p' "$T/ann.txt" | grep -c "attn.c:")" = 3 ] || fail "--top 3"
grep -E "^ +[0-9]+ .* $WAIT +ta_wait\(1, 1\);" "$T/ann.txt" >/dev/null || fail "no margin on the source line $WAIT"
grep -q "ta.wait a3" "$T/ann.txt" || grep -q "ta.wait" "$T/ann.txt" || fail "--asm shows no instruction"
# functions are named as "(FUNC)" after a place and "FILE: FUNC" above a source
# listing; the file's own path may contain any word (a checkout in /work/main)
grep -Eq '\((out_put|main)\)|: (out_put|main)$' "$T/ann.txt" && fail "--function attn shows other functions"
"$SNR" annotate "$T/a.snrm" --function nosuch >/dev/null 2>"$T/err" && fail "an unknown --function was accepted"
grep -q "nosuch" "$T/err" || fail "the unknown function is not named"
# sources moved: --source-dir finds them
mkdir "$T/srcs" && cp "$SRC/workloads/attn.c" "$T/srcs/"
"$SNR" annotate "$T/a.snrm" --function attn --source-dir "$T/srcs" >"$T/ann2.txt" || fail "--source-dir"
grep -q "ta_wait(1, 1)" "$T/ann2.txt" || fail "no source text with --source-dir"

# without -g: per function, same totals
T2=$T/nog; mkdir -p "$T2"
record_attn "$SNR" "$SRC" "$T2"
"$SNR" annotate "$T2/a.snrt" --json >"$T2/ann.json" || fail "annotate (no -g)"
"$SNR" replay "$T2/a.snrt" --json >"$T2/replay.json" || fail "replay (no -g)"
python3 - "$T2/ann.json" "$T2/replay.json" <<'PY' || fail "annotate without -g"
import json, sys
a = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert a["total_cycles"] == r["cycles"] and a["stall_cycles"] == r["stall_cycles"]
attn = [l for l in a["lines"] if l["function"] == "attn"]
assert len(attn) == 1 and attn[0]["file"] is None, attn
assert attn[0]["stall_cycles"]["dma-base"] == 2000
PY
"$SNR" annotate "$T2/a.snrt" >"$T2/ann.txt" && grep -q "attn (no line table)" "$T2/ann.txt" ||
  fail "the text without -g does not name the function"

# --compare: half the rows (less MXU and vector work), matched by file:line
T3=$T/half; mkdir -p "$T3"
record_attn "$SNR" "$SRC" "$T3" -g -DROWS=16
"$SNR" annotate "$T/a.snrm" --compare "$T3/a.snrm" --json >"$T/cmp.json" || fail "annotate --compare"
"$SNR" annotate "$T3/a.snrm" --json >"$T3/ann.json" || fail "annotate (half)"
python3 - "$T/cmp.json" "$T/ann.json" "$T3/ann.json" "$HAZ" "$WAIT" <<'PY' || fail "--compare"
import json, sys
c = json.load(open(sys.argv[1])); a = json.load(open(sys.argv[2])); b = json.load(open(sys.argv[3]))
haz, wait = int(sys.argv[4]), int(sys.argv[5])
assert c["total_cycles"] == {"before": a["total_cycles"], "after": b["total_cycles"]}
for k, v in c["stall_cycles"].items():
    assert v == {"before": a["stall_cycles"][k], "after": b["stall_cycles"][k]}, k
def line(doc, n):
    return [l for l in doc["lines"] if l["file"] and l["file"].endswith("attn.c") and l["line"] == n][0]
for n in (haz, wait):
    e = [l for l in c["lines"] if l["file"] and l["file"].endswith("attn.c") and l["line"] == n][0]
    assert e["before"]["cycles"] == line(a, n)["cycles"] and e["after"]["cycles"] == line(b, n)["cycles"], e
    assert e["after"]["stall_cycles"] == line(b, n)["stall_cycles"], e
    assert e["delta_cycles"] == e["after"]["cycles"] - e["before"]["cycles"]
# half the rows: less of the hazard on exp(S)
e = [l for l in c["lines"] if l["line"] == haz and l["file"] and l["file"].endswith("attn.c")][0]
assert e["after"]["stall_cycles"]["vmem-hazard"] < e["before"]["stall_cycles"]["vmem-hazard"], e
PY
"$SNR" annotate "$T/a.snrm" --compare "$T3/a.snrm" >"$T/cmp.txt" || fail "annotate --compare (text)"
grep -q "attn.c:$HAZ (attn)" "$T/cmp.txt" || fail "the compare text does not name line $HAZ"

# host code: x86-64 through ptrace, replayed in unicorn
"$SNR" record --breakpoint kernels --count 20000 -o "$T/h.snrt" -- "$KERNEL" >"$T/rec.out" 2>&1 ||
  fail "ptrace record: $(cat "$T/rec.out")"
"$SNR" replay "$T/h.snrt" --json >"$T/hr.json" || fail "replay (host)"
"$SNR" annotate "$T/h.snrt" --json >"$T/ha.json" 2>"$T/ha.err" || fail "annotate (host): $(cat "$T/ha.err")"
python3 - "$T/ha.json" "$T/hr.json" <<'PY' || fail "annotate on host code"
import json, sys
a = json.load(open(sys.argv[1])); r = json.load(open(sys.argv[2]))
assert a["total_cycles"] == r["cycles"] and a["stall_cycles"] == r["stall_cycles"], (a["total_cycles"], r["cycles"])
assert sum(p["cycles"] for p in a["pcs"]) + a["drain_cycles"] == r["cycles"]
k = [l for l in a["lines"] if l["file"] and l["file"].endswith("uc_kernel.c")]
assert k, "no line of uc_kernel.c"
assert {"kernels", "copy_loop"} <= set(l["function"] for l in k), set(l["function"] for l in k)
assert sum(l["cycles"] for l in k) > r["cycles"] // 2, "the kernel's own lines hold little of the window"
PY
# replay's failure messages place the pc too
"$EDIT" drop-page "$T/h.snrt" "$T/bad.snrt" >/dev/null || fail "trace_edit drop-page"
"$SNR" replay "$T/bad.snrt" >"$T/bad.out" 2>&1 && fail "a trace missing a page replayed"
grep -E "instruction [0-9]+ \(pc 0x[0-9a-f]+ <[^>]+> [^ ]*uc_kernel.c:[0-9]+ \([a-z_]+\): " "$T/bad.out" >/dev/null ||
  fail "the replay's failure does not name the line: $(cat "$T/bad.out")"
echo "ok: annotate's lines and causes known and equal to replay's (trace, metrics, host); no -g; --compare"
