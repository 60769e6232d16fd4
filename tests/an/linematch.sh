#!/usr/bin/env bash
# snr annotate --compare across an edit: tests/an/softmax.c, and a second
# version with four comment lines added above softmax_rows (every line
# after them moves down 4) and the KNOWN-SUM statement rewritten
# (`sum = sum + ...`). The lines pair by function and statement text: no
# softmax_rows or main line is "only before" or "only after", the
# KNOWN-DIVIDE line pairs with its moved self (cycles unchanged), the
# rewritten statement with its new version. The text names the move.
# usage: linematch.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
mkdir -p "$T/v1" "$T/v2"
cp "$HERE/softmax.c" "$T/v1/softmax.c"
python3 - "$HERE/softmax.c" "$T/v2/softmax.c" <<'PY' || fail "make version 2"
import sys
s = open(sys.argv[1]).read()
s = s.replace('__attribute__((noinline)) void softmax_rows',
              '/*\n * version 2: the same kernel,\n * moved down four lines\n */\n__attribute__((noinline)) void softmax_rows', 1)
s = s.replace('sum += y[r][c]; /* KNOWN-SUM */', 'sum = sum + y[r][c]; /* KNOWN-SUM */', 1)
open(sys.argv[2], 'w').write(s)
PY
line_of() { grep -n "/\* $2 \*/" "$1" | head -1 | cut -d: -f1; }
for v in v1 v2; do
  "$SNR" cc -g "$T/$v/softmax.c" -o "$T/$v/p.elf" || fail "snr cc $v"
  gdb_device "$SNR" "$T/$v" "$T/$v/p.elf"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/$v/p.elf" --breakpoint softmax_rows --count 1000000 \
    -o "$T/$v/a.snrt" 2>"$T/rec.err" || { kill $DEV; fail "record $v: $(cat "$T/rec.err")"; }
  wait $DEV
  "$SNR" replay "$T/$v/a.snrt" -o "$T/$v/a.snrm" >"$T/replay.txt" 2>&1 || fail "replay $v: $(cat "$T/replay.txt")"
done
D1=$(line_of "$T/v1/softmax.c" KNOWN-DIVIDE); D2=$(line_of "$T/v2/softmax.c" KNOWN-DIVIDE)
S1=$(line_of "$T/v1/softmax.c" KNOWN-SUM); S2=$(line_of "$T/v2/softmax.c" KNOWN-SUM)
[ $((D2 - D1)) -eq 4 ] || fail "version 2 does not move the division line down 4 ($D1, $D2)"
"$SNR" annotate "$T/v1/a.snrm" --compare "$T/v2/a.snrm" --json >"$T/cmp.json" || fail "annotate --compare --json"
python3 - "$T/cmp.json" "$D1" "$D2" "$S1" "$S2" <<'PY' || fail "lines paired across the edit"
import json, sys
c = json.load(open(sys.argv[1])); d1, d2, s1, s2 = map(int, sys.argv[2:])
mine = [l for l in c["lines"] if l["function"] in ("softmax_rows", "main")]
alone = [(l["line"], l.get("after_line"), l["before"] is None) for l in mine if not l["before"] or not l["after"]]
assert not alone, "lines paired with nothing: %r" % alone
# every statement with the same code: the same cycles, 4 lines down
for l in mine:
    if l["function"] == "softmax_rows":
        assert l["after_line"] == l["line"] + 4, l
d = [l for l in mine if l["line"] == d1]
assert len(d) == 1 and d[0]["after_line"] == d2 and d[0]["delta_cycles"] == 0, d
s = [l for l in mine if l["line"] == s1]
assert len(s) == 1 and s[0]["after_line"] == s2, s
PY
"$SNR" annotate "$T/v1/a.snrm" --compare "$T/v2/a.snrm" --top 0 >"$T/cmp.txt" || fail "annotate --compare (text)"
grep -q "softmax.c:$D1 -> $D2 (softmax_rows)" "$T/cmp.txt" || fail "the text does not name the move $D1 -> $D2: $(head -20 "$T/cmp.txt")"
grep -Eq "only (before|after)\).*softmax" "$T/cmp.txt" && fail "a softmax.c line is alone in the text"
echo "ok: --compare pairs lines moved and edited between two versions of the program"
