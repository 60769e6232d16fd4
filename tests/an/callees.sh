#!/usr/bin/env bash
# snr annotate's inclusive figures on tests/an/softmax.c (snr cc -g, -O2):
# a row softmax whose float division is a call to libgcc's __divsf3 on
# RV64IM. Recorded from softmax_rows' entry to the program's end: the
# division line's inclusive cycles are its own plus every cycle of
# __divsf3 (which only it calls, 64 times), its calls row says so, and
# the text ranks it above every libgcc line (by self cycles it is not);
# main's call line gets softmax_rows' cycles through the return the window
# saw without its call. Then a window that starts inside __divsf3 and
# ends inside a later call of it: everything before the first return is
# charged to the division line (found by the return address).
# usage: callees.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
PROG=$HERE/softmax.c
line_of() { grep -n "/\* $1 \*/" "$PROG" | head -1 | cut -d: -f1; }
DIV=$(line_of KNOWN-DIVIDE); CALL=$(line_of KNOWN-CALL)
"$SNR" cc -g "$PROG" -o "$T/p.elf" || fail "snr cc softmax.c"
rec() { # rec NAME BREAKPOINT COUNT
  gdb_device "$SNR" "$T" "$T/p.elf"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint "$2" --count "$3" \
    -o "$T/$1.snrt" 2>"$T/rec.err" || { kill $DEV; fail "record $1: $(cat "$T/rec.err")"; }
  wait $DEV
  "$SNR" replay "$T/$1.snrt" -o "$T/$1.snrm" >"$T/replay.txt" 2>&1 || fail "replay $1: $(cat "$T/replay.txt")"
}
rec a softmax_rows 1000000
for f in a.snrt a.snrm; do
  "$SNR" annotate "$T/$f" --json >"$T/ann.json" || fail "annotate --json $f"
  python3 - "$T/ann.json" "$DIV" "$CALL" <<'PY' || fail "inclusive figures ($f)"
import json, sys
a = json.load(open(sys.argv[1])); div, call = int(sys.argv[2]), int(sys.argv[3])
# self cycles still add up to the window's
assert sum(l["cycles"] for l in a["lines"]) + a["drain_cycles"] == a["total_cycles"]
for cause, total in a["stall_cycles"].items():
    assert sum(l["stall_cycles"][cause] for l in a["lines"]) == total, cause
mine = lambda n: [l for l in a["lines"] if l["file"] and l["file"].endswith("softmax.c") and l["line"] == n][0]
d = mine(div)
lib = [l for l in a["lines"] if l["function"] == "__divsf3"]
assert lib, "no __divsf3 lines"
callee = sum(l["cycles"] for l in lib)
# the division line: its own cycles plus all of __divsf3's (a leaf only it calls)
assert d["inclusive_cycles"] == d["cycles"] + callee, (d, callee)
for cause in a["stall_cycles"]:
    assert d["inclusive_stall_cycles"][cause] == d["stall_cycles"][cause] + sum(l["stall_cycles"][cause] for l in lib)
c = [c for c in a["calls"] if c["line"] == div and c["callee"] == "__divsf3"]
assert len(c) == 1 and c[0]["calls"] == 64 and c[0]["cycles"] == callee, c
# the bottleneck: more than a third of the window in the division's callee
assert callee * 3 > a["total_cycles"], (callee, a["total_cycles"])
assert d["cycles"] * 10 < d["inclusive_cycles"], d
# every line: inclusive >= self; no line more than the window
assert all(a["total_cycles"] >= l["inclusive_cycles"] >= l["cycles"] for l in a["lines"])
# main's call of softmax_rows (made before the window): all of softmax_rows' time
m = mine(call)
sm = [c for c in a["calls"] if c["line"] == call and c["callee"] == "softmax_rows"]
assert len(sm) == 1 and sm[0]["calls"] == 0, sm
assert m["inclusive_cycles"] >= sum(l["cycles"] for l in a["lines"] if l["function"] in ("softmax_rows", "__divsf3", "__addsf3"))
PY
done
# the text: ranked by inclusive cycles (the default) the division line is above every libgcc line
"$SNR" annotate "$T/a.snrm" --top 0 >"$T/ann.txt" || fail "annotate (text)"
rank() { awk '/^hottest lines/{h=1; next} h && /^$/{exit} h' "$T/$1" | grep -n "$2" | head -1 | cut -d: -f1; }
R_DIV=$(rank ann.txt "softmax.c:$DIV (softmax_rows)"); R_LIB=$(rank ann.txt "(__divsf3)")
[ -n "$R_DIV" ] && [ -n "$R_LIB" ] && [ "$R_DIV" -lt "$R_LIB" ] ||
  fail "by inclusive cycles the division line ($R_DIV) is not above __divsf3's lines ($R_LIB)"
grep -q "hottest lines, by inclusive cycles" "$T/ann.txt" || fail "the text does not say how it ranks"
grep -Eq "^ +[0-9]+ +[0-9.]+% +64  .*softmax.c:$DIV \(softmax_rows\) -> __divsf3$" "$T/ann.txt" ||
  fail "no calls row for the division line -> __divsf3: $(grep -- '->' "$T/ann.txt" | head -5)"
"$SNR" annotate "$T/a.snrm" --top 0 --sort self >"$T/self.txt" || fail "annotate --sort self"
R_DIV=$(rank self.txt "softmax.c:$DIV (softmax_rows)"); R_LIB=$(rank self.txt "(__divsf3)")
[ "$R_DIV" -gt "$R_LIB" ] || fail "--sort self does not rank by self cycles"
"$SNR" annotate "$T/a.snrm" --sort size >/dev/null 2>"$T/err.txt" && fail "--sort size accepted"
grep -q "\-\-sort takes inclusive or self, not 'size'" "$T/err.txt" || fail "--sort's error: $(cat "$T/err.txt")"

# a window that starts inside __divsf3 (its 1st call) and ends inside its 3rd
# (two and a half calls' instructions)
"$SNR" annotate "$T/a.snrm" --json >"$T/full.json"
N=$(python3 -c "
import json; a = json.load(open('$T/full.json'))
print(sum(p['executions'] for p in a['pcs'] if p['function'] == '__divsf3') * 5 // (2 * 64))")
rec b __divsf3 "$N"
"$SNR" annotate "$T/b.snrm" --json >"$T/b.json" || fail "annotate window b"
python3 - "$T/b.json" "$DIV" <<'PY' || fail "a window starting and ending inside a call"
import json, sys
a = json.load(open(sys.argv[1])); div = int(sys.argv[2])
d = [l for l in a["lines"] if l["file"] and l["file"].endswith("softmax.c") and l["line"] == div][0]
lib = sum(l["cycles"] for l in a["lines"] if l["function"] == "__divsf3")
assert d["inclusive_cycles"] == d["cycles"] + lib, (d, lib)
c = {(x["line"], x["callee"]): x for x in a["calls"]}
# the first call was before the window; the calls made in it are the jal's executions (2: the
# second, and the third, open at the end)
jal = [p for p in a["pcs"] if p["line"] == div and p["disasm"].startswith("jal")]
assert len(jal) == 1 and jal[0]["executions"] == 2, jal
assert c[(div, "__divsf3")]["calls"] == 2 and c[(div, "__divsf3")]["cycles"] == lib, c
# the window ends inside the third call: __divsf3 entered 3 times (the breakpoint, 2 calls), left twice
fn = [p for p in a["pcs"] if p["function"] == "__divsf3"]
entry = min(fn, key=lambda p: p["pc"])
assert entry["executions"] == 3, entry
assert sum(p["executions"] for p in fn if p["disasm"] == "ret" or p["disasm"].startswith("jalr zero, 0(ra)")) == 2, fn
assert sum(l["cycles"] for l in a["lines"]) + a["drain_cycles"] == a["total_cycles"]
PY
# two windows added up (an_annot_merge): each line's inclusive cycles and each call's the sum of the windows'
"$SNR" annotate "$T/a.snrm" "$T/b.snrm" --json >"$T/two.json" || fail "annotate of two windows"
python3 - "$T/two.json" <<'PY' || fail "two windows' inclusive figures added up"
import json, sys
w = json.load(open(sys.argv[1]))
key = lambda l: (l["file"], l["line"], l["function"])
for l in w["together"]["lines"]:
    want = sum(x["inclusive_cycles"] for r in w["windows"] for x in r["result"]["lines"] if key(x) == key(l))
    assert l["inclusive_cycles"] == want, (l, want)
ck = lambda c: (c["file"], c["line"], c["callee"])
for c in w["together"]["calls"]:
    want = [sum(x[f] for r in w["windows"] for x in r["result"]["calls"] if ck(x) == ck(c)) for f in ("calls", "cycles")]
    assert [c["calls"], c["cycles"]] == want, (c, want)
assert len({key(l) for l in w["together"]["lines"]}) == len(w["together"]["lines"])
PY
echo "ok: inclusive cycles, calls, --sort; windows starting and ending inside a call; two windows added up"
