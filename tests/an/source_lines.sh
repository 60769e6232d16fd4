#!/usr/bin/env bash
# Source lines (lib/snr_lines.c) on workloads/attn.c built with `snr cc -g`
# at -O2 and recorded from `snr device --gdb`: the pc of each intrinsic is
# placed at the user's line that called it (marked KNOWN-... in attn.c),
# with ta1.h's inline frame kept beside it; a build without -g falls back
# to symbols; a rebuilt program (another build-id) and a missing one are
# said once on stderr, and the answers are the lines the trace carries
# (its LINES chunk): the same as with the program (tests/lines/carried_lines.sh
# covers the analyses, annotate and report).
# usage: source_lines.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
record_attn "$SNR" "$SRC" "$T" -g

line_of() { grep -n "$1" "$SRC/workloads/attn.c" | head -1 | cut -d: -f1; }
WAIT=$(line_of KNOWN-DMA-WAIT); ISSUE=$(line_of KNOWN-DMA-ISSUE); HAZ=$(line_of KNOWN-VMEM-HAZARD)

"$SNR" trace dump "$T/a.snrt" --json >"$T/dump.json" 2>"$T/dump.err" || fail "trace dump --json"
[ -s "$T/dump.err" ] && fail "trace dump said something with the right ELF: $(cat "$T/dump.err")"
python3 - "$T/dump.json" "$WAIT" "$ISSUE" "$HAZ" <<'PY' || fail "trace dump's source objects"
import json, sys
steps = [json.loads(l) for l in open(sys.argv[1])]
want = {"ta.wait": int(sys.argv[2]), "ta.dma": int(sys.argv[3]), "ta.vexp": int(sys.argv[4])}
seen = set()
for s in steps:
    op = s["disasm"].split()[0]
    if op not in want:
        continue
    src = s["source"]
    assert src["file"].endswith("workloads/attn.c"), src
    assert src["line"] == want[op], (op, src, want[op])
    assert src["function"] == "attn", src
    inl = src["inlined"]
    assert inl[0]["file"].endswith("ta1.h") and inl[0]["function"] == "ta_" + op[3:].replace("vexp", "vexp"), inl
    assert inl[-1] == {"file": src["file"], "line": src["line"], "function": "attn"}, inl
    seen.add(op)
assert seen == set(want), seen
PY
"$SNR" trace dump "$T/a.snrt" | grep "ta.wait" | head -1 | grep -q "attn.c:$WAIT (attn)" ||
  fail "trace dump's text does not place ta.wait at attn.c:$WAIT: $("$SNR" trace dump "$T/a.snrt" | grep ta.wait | head -1)"

# the analyses and the Perfetto export place their pcs too
"$SNR" analyze dma "$T/a.snrm" --json >"$T/dma.json" || fail "analyze dma --json"
"$SNR" analyze deps "$T/a.snrm" --json >"$T/deps.json" || fail "analyze deps --json"
"$SNR" analyze suggest "$T/a.snrm" --json >"$T/sug.json" || fail "analyze suggest --json"
"$SNR" export perfetto "$T/a.snrm" -o "$T/pf.json" || fail "export perfetto"
python3 - "$T" "$WAIT" "$ISSUE" <<'PY' || fail "sources in dma, deps, suggest, perfetto"
import json, sys
t, wait, issue = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
dma = json.load(open(t + "/dma.json"))
for m in dma["dmas"]:
    assert m["issue"]["source"]["line"] == issue and m["issue"]["source"]["function"] == "attn", m["issue"]
    assert m["wait"]["source"]["line"] == wait, m["wait"]
deps = json.load(open(t + "/deps.json"))
assert all(m["source"]["line"] == issue for m in deps["dmas"] if m["issue_index"] >= 0), deps["dmas"]
assert all("file" in d["consumer_source"] or "function" in d["consumer_source"] for d in deps["top_dependencies"])
sug = json.load(open(t + "/sug.json"))
assert all(s["dma"]["source"]["line"] == issue for s in sug["stalled_dmas"]), sug
ev = json.load(open(t + "/pf.json"))["traceEvents"]
x = [e for e in ev if e.get("ph") == "X"]
waits = [e for e in x if e.get("cat") == "dma.wait"]
assert waits and all(e["name"].endswith("attn.c:%d (attn)" % wait) for e in waits), [e["name"] for e in waits]
assert all(e["args"]["disasm"].startswith("ta.wait") and e["args"]["source"]["line"] == wait for e in waits)
mxu = [e for e in x if e["name"].startswith("ta.mxu.mm attn.c:")]
assert mxu and all(e["args"]["source"]["function"] == "attn" for e in mxu), [e["name"] for e in x][:20]
dm = [e for e in x if e.get("cat") == "dma"]
assert dm and all(e["name"].endswith("attn.c:%d (attn)" % issue) for e in dm), [e["name"] for e in dm]
flows = [e for e in ev if e.get("cat") == "dma.flow"]
assert len([e for e in flows if e["ph"] == "s"]) == len([e for e in flows if e["ph"] == "f"]) == len(dm)
PY

# a rebuilt program: another build-id, said once; the lines the trace carries
"$SNR" cc -g -DROWS=16 "$SRC/workloads/attn.c" -o "$T/other.elf" || fail "snr cc (other)"
"$SNR" trace dump "$T/a.snrt" --json --elf "$T/other.elf" >"$T/d2.json" 2>"$T/d2.err" || fail "dump --elf other"
[ "$(grep -c "build-id" "$T/d2.err")" = 1 ] || fail "a mismatched build-id is not said exactly once: $(cat "$T/d2.err")"
grep -q "lines from $T/a.snrt" "$T/d2.err" || fail "a mismatched build-id does not say the lines are the trace's: $(cat "$T/d2.err")"
cmp -s "$T/dump.json" "$T/d2.json" || fail "lines with a rebuilt program differ from the recorded ones: $(diff "$T/dump.json" "$T/d2.json" | head -4)"

# the program gone: said once; the lines the trace carries
mv "$T/p.elf" "$T/gone.elf"
"$SNR" trace dump "$T/a.snrt" --json >"$T/d3.json" 2>"$T/d3.err" || fail "dump without the ELF"
[ "$(grep -c "cannot read" "$T/d3.err")" = 1 ] || fail "a missing ELF is not said exactly once: $(cat "$T/d3.err")"
cmp -s "$T/dump.json" "$T/d3.json" || fail "lines without the program differ from the recorded ones: $(diff "$T/dump.json" "$T/d3.json" | head -4)"
# --elf finds it again, and nothing is said
"$SNR" trace dump "$T/a.snrt" --elf "$T/gone.elf" 2>"$T/d4.err" | grep -q "attn.c:$WAIT (attn)" ||
  fail "--elf PROG does not give the lines back: $(cat "$T/d4.err")"
[ -s "$T/d4.err" ] && fail "trace dump said something with the right ELF given by --elf: $(cat "$T/d4.err")"

# without -g: symbols, nothing said
T2=$T/nog; mkdir -p "$T2"
record_attn "$SNR" "$SRC" "$T2"
"$SNR" trace dump "$T2/a.snrt" --json >"$T2/dump.json" 2>"$T2/dump.err" || fail "dump (no -g)"
[ -s "$T2/dump.err" ] && fail "a program without -g is not an error: $(cat "$T2/dump.err")"
grep '"symbol":"attn' "$T2/dump.json" | grep -q '"file"' && fail "lines for attn() from a program without -g"
grep -q '"source":{"function":"attn+0x' "$T2/dump.json" || fail "no symbols without -g"
echo "ok: source lines at the user's lines with ta1.h inline frames; no -g falls back to symbols; rebuilt and missing ELFs said once, the trace's lines used"
