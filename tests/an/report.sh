#!/usr/bin/env bash
# snr report on tests/an/an_prog.c: the HTML loads nothing from outside,
# opens in headless Chromium with no console errors, and every chart area is
# drawn without a virtual-time budget (the screenshot is taken at load), the
# DMA timeline's backtail whiskers included (checked on a screenshot by
# check_report.py); the summary's stall causes are the replay's; the lane
# timeline's busy intervals are the ones `snr analyze util --json` averages.
# Chromium: lib.sh's render_report (installs Debian's when missing).
# usage: report.sh SNR
set -u
SNR=$1; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
record_an_prog "$SNR" "$T"
"$SNR" report "$T/a.snrm" -o "$T/r.html" || fail "snr report"
# self-contained: no element loads a URL (the bundled library's code is not markup, so
# only the report's own markup, outside <script> bodies, is checked)
python3 - "$T/r.html" <<'PY' || fail "the report references an external resource"
import re, sys
s = open(sys.argv[1], encoding='utf-8').read()
markup = re.sub(r'(?s)(<script>).*?(</script>)', r'\1\2', s)
bad = re.findall(r'(?i)<[a-z]+[^>]*\b(?:src|href)\s*=\s*(?!"#)', markup)  # in-page links are fine
sys.exit(1 if bad or '<script src' in markup else 0)
PY

render_report "$T" "$T/r.html" 1200,3600
# the backtails the timeline draws are deps' (DMA #5 reads what #4 brought: it could issue
# only after #4's WAIT)
"$SNR" analyze deps "$T/a.snrm" --json >"$T/deps.json" || fail "analyze deps"
python3 - "$T/deps.json" <<'PY' || fail "deps of an_prog: $(cat "$T/deps.json")"
import json, sys
d = {m["id"]: m for m in json.load(open(sys.argv[1]))["dmas"]}
assert d[5]["relaxed"]["anchor"] == "dma" and d[5]["relaxed"]["anchor_dma"] == 4, d[5]
assert d[2]["relaxed"]["backtail_cycles"] > 500, d[2]
PY
# the replay's stall causes and the util windows the lanes must reproduce
"$SNR" replay "$T/a.snrt" --json >"$T/replay.json" || fail "replay --json"
"$SNR" analyze util "$T/a.snrm" --json >"$T/util.json" || fail "analyze util --json"
python3 "$HERE/check_report.py" "$T/dom.html" "$T/shot.png" "$T/deps.json" "$T/replay.json" "$T/util.json" ||
  fail "report check"
# zoom: the lane chart zoomed to a 100-cycle span (dataZoom, as the wheel or slider does)
# draws exactly each lane's intervals clipped to it, one rectangle each, decoded from the
# page's packed intervals; paging: the DMA table's last page shows the last DMAs of
# `snr analyze dma --json`
# (the same with every packed element in files beside the page: --inline-max 0)
zoom_and_page() { # page name
  local page=$1 name=$2
python3 - "$page" "$T/$name.html" <<'PY' || fail "zoom page"
import sys
s = open(sys.argv[1], encoding='utf-8').read()
i = s.rindex('</body>')
open(sys.argv[2], 'w', encoding='utf-8').write(s[:i] + """<script>
var L = window.SNR_LANES, lo = Math.floor(L.cycles / 3), hi = lo + 100, R = window.snrReport;
R.zoomLanes(lo, hi).then(function (items) {
  var lod = document.getElementById('util-lod');
  document.body.setAttribute('data-zoomed', JSON.stringify({ lo: lo, hi: hi, items: items,
    merged: lod.getAttribute('data-merged'), said: lod.textContent }));
  return R.page('dmas', 1e9);
}).then(function () {
  var ids = [];
  document.querySelectorAll('#dma-table tr[data-row]').forEach(function (tr) { ids.push(tr.firstChild.textContent); });
  document.body.setAttribute('data-dma-last-page', JSON.stringify({ ids: ids,
    info: document.querySelector('#dma-table .pageinfo').textContent }));
}).catch(function (e) { document.body.setAttribute('data-zoom-error', String(e)); });
</script>""" + s[i:])
PY
mkdir -p "$T/$name" && render_report "$T/$name" "$T/$name.html" 1200,3600 20000
python3 - "$T/$name/dom.html" "$T/dma.json" "$HERE" "$T" <<'PY' || fail "the zoomed lane timeline or the DMA table's last page"
import html, json, re, sys
sys.path.insert(0, sys.argv[3])
from packed import packed  # noqa: E402
dom = open(sys.argv[1], encoding='utf-8').read()
err = re.search(r'data-zoom-error="([^"]*)"', dom)
assert not err, html.unescape(err.group(1))
z = json.loads(html.unescape(re.search(r'data-zoomed="([^"]*)"', dom).group(1)))
want = []
for l, a in enumerate(packed(dom, 'lanes', sys.argv[4])):
    t = 0
    for k in range(0, len(a), 2):
        s0 = t + a[k]; t = s0 + a[k + 1]
        s1, e1 = max(s0, z['lo']), min(t, z['hi'])
        if s0 < z['hi'] and t > z['lo']:
            want.append([l, s1, e1, e1 - s1, 1])
assert want, 'no interval in the zoomed span'
assert sorted(z['items']) == sorted(want), (z['items'], want)
assert z['merged'] == '0' and 'exact' in z['said'], z
# the DMA table's last page: the last DMAs of analyze dma (sorted by stall, as the table)
dmas = json.load(open(sys.argv[2]))['dmas']
p = json.loads(html.unescape(re.search(r'data-dma-last-page="([^"]*)"', dom).group(1)))
n = len(dmas)
per = 50
last = dmas[(n - 1) // per * per:]
assert p['ids'] == ['#%d' % d['id'] for d in last], (p, [d['id'] for d in last])
assert p['info'].startswith('rows %d-%d of %d ' % ((n - 1) // per * per + 1, n, n)), p['info']
PY
}
"$SNR" analyze dma "$T/a.snrm" --json >"$T/dma.json" || fail "analyze dma --json"
zoom_and_page "$T/r.html" zoom
"$SNR" report "$T/a.snrm" -o "$T/s.html" --inline-max 0 || fail "snr report --inline-max 0"
for z in lanes dmas no_move; do
  [ -s "$T/s.html.d/$z.js" ] || fail "--inline-max 0 left no $z beside the page"
done
zoom_and_page "$T/s.html" side
grep -q '<p id="side-data">[^<]*s.html.d/ beside this page' "$T/side/dom.html" ||
  fail "the page with its data beside it does not say so"
echo "ok: report self-contained, no console errors, every chart drawn, backtails drawn as deps gives them," \
  "stall causes as the replay sums them, lanes as util averages them, a zoom draws the exact intervals," \
  "the DMA table's last page is analyze dma's last DMAs, also with the data in files beside the page"
