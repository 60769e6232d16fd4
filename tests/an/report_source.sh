#!/usr/bin/env bash
# The report's source page and --compare on workloads/attn.c (snr cc -g -O2),
# rendered in headless Chromium with no virtual-time budget: the hottest line
# (annotate's first, the KNOWN-DMA-WAIT line) is named first among the
# hottest lines and its text, read from the source through --source-dir
# (the source moved after the build), is drawn there (a DOM check and a
# screenshot check: ink in its cell); its row in the function's source is
# selected with its instructions listed, and a click on another line's row
# (KNOWN-VMEM-HAZARD) selects that one's instructions; the DMA timeline's rows are named by
# the issuing line (KNOWN-DMA-ISSUE); --compare against a window with half
# the rows shows both windows' cycles and each cause before and after, as
# `snr annotate --compare --json` gives them (check_report_source.py).
# usage: report_source.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
# build from a copy of the source, then move the copy: the line table names a
# path that is gone, --source-dir finds the file by its base name
mkdir -p "$T/src/workloads" && cp "$SRC/workloads/attn.c" "$T/src/workloads/" || fail "copy attn.c"
record_attn "$SNR" "$T/src" "$T" -g -O2
mkdir -p "$T/half"
record_attn "$SNR" "$T/src" "$T/half" -g -O2 -DROWS=16
mv "$T/src" "$T/moved"
"$SNR" report "$T/a.snrm" --compare "$T/half/a.snrm" --source-dir "$T/moved/workloads" -o "$T/r.html" \
  2>"$T/report.err" || fail "snr report --compare: $(cat "$T/report.err")"
"$SNR" annotate "$T/a.snrm" --json >"$T/ann.json" || fail "annotate --json"
"$SNR" annotate "$T/a.snrm" --compare "$T/half/a.snrm" --json >"$T/cmp.json" || fail "annotate --compare --json"
render_report "$T" "$T/r.html" 1200,1600
python3 "$HERE/check_report_source.py" "$T/dom.html" "$T/shot.png" "$T/ann.json" "$T/cmp.json" \
  "$T/moved/workloads/attn.c" || fail "source page check"
# a click on the KNOWN-VMEM-HAZARD line's row selects it and lists its instructions
HAZ=$(grep -n KNOWN-VMEM-HAZARD "$T/moved/workloads/attn.c" | head -1 | cut -d: -f1)
python3 - "$T/r.html" "$T/click.html" "$T/ann.json" "$HAZ" <<'PY' || fail "click page"
import json, sys
s = open(sys.argv[1], encoding='utf-8').read()
hot = [l for l in json.load(open(sys.argv[3]))['lines'] if l['line'] == int(sys.argv[4]) and l['file']][0]
i = s.rindex('</body>')
open(sys.argv[2], 'w', encoding='utf-8').write(s[:i] + """<script>
document.getElementById(%s).click();
var sel = Array.prototype.map.call(document.querySelectorAll('tr.pc.sel'), function (e) { return e.children[0].textContent; });
document.body.setAttribute('data-clicked', JSON.stringify({ pcs: sel, text: document.getElementById('selected').textContent }));
</script>""" % json.dumps('L-%s:%d' % (hot['file'], hot['line'])) + s[i:])
PY
mkdir -p "$T/click" && render_report "$T/click" "$T/click.html" 1200,1600
python3 - "$T/click/dom.html" "$T/ann.json" "$HAZ" <<'PY' || fail "clicking a line"
import html, json, re, sys
dom = open(sys.argv[1], encoding='utf-8').read()
c = json.loads(html.unescape(re.search(r'data-clicked="([^"]*)"', dom).group(1)))
ann, line = json.load(open(sys.argv[2])), int(sys.argv[3])
pcs = ['0x%x' % p['pc'] for p in ann['pcs'] if p['line'] == line and p['file'] and p['file'].endswith('attn.c')]
assert pcs and c['pcs'] == pcs, (c, pcs)
assert c['text'].startswith('attn.c:%d (attn)' % line) and 'vmem-hazard' in c['text'], c
PY
echo "ok: the hottest line's text on the source page (DOM and screenshot), DMA rows by line, compare's cycles"
