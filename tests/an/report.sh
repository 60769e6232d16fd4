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
# the page's data is the same when everything the report collects (annotate's instructions
# and stalls, the graph) goes through temporary files (a 1 KiB budget, lib/snr_spill.h); its
# tables and suggestions' document always do: without a temporary folder it stops, naming it
SNR_SPILL_MEM=1024 "$SNR" report "$T/a.snrm" -o "$T/r-spill.html" || fail "snr report (spilled)"
cmp -s "$T/r.html" "$T/r-spill.html" || fail "the report differs when its data goes through temporary files"
TMPDIR=/nonexistent-snr-tmp "$SNR" report "$T/a.snrm" -o "$T/r-notmp.html" >"$T/o" 2>"$T/e"
rc=$?
[ $rc = 1 ] || fail "report without a temporary folder: exit $rc, not 1 ($(cat "$T/e"))"
grep -q "temporary file in /nonexistent-snr-tmp" "$T/e" || fail "report without a temporary folder: $(cat "$T/e")"
[ ! -e "$T/r-notmp.html" ] || fail "report without a temporary folder left a page"
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
# the heatmap is one image of the plot's pixels: at load at most one column per pixel (each the most
# occupied of its samples, said so when columns merge samples), zoomed to the 60 samples around the
# most occupied one column per sample, each cell's pixel (read back from the chart's canvas) the colour of
# that sample's share of the row's pages occupied, as the page's data (window.SNR.vmem) gives it
python3 - "$T/r.html" "$T/heat.html" <<'PY' || fail "heat page"
import sys
s = open(sys.argv[1], encoding='utf-8').read()
i = s.rindex('</body>')
open(sys.argv[2], 'w', encoding='utf-8').write(s[:i] + """<script>
var R = window.snrReport, H = window.SNR.vmem, ns = H.heatmap.length, rows = H.heat_rows.length;
var sum = function (r) { return r.reduce(function (a, x) { return a + x; }, 0); }, most = 0;
H.heatmap.forEach(function (r, i) { if (sum(r) > sum(H.heatmap[most])) most = i; });
var at = R.zoomHeat(), lo = Math.max(0, most - 30), hi = Math.min(ns - 1, lo + 59), z = R.zoomHeat(lo, hi);
var cv = document.querySelector('#c-heat canvas'), k = window.devicePixelRatio || 1, px = [];
var d = cv.getContext('2d').getImageData(0, 0, cv.width, cv.height).data;
for (var c = 0; c < z.columns; c++)
  for (var b = 0; b < rows; b++) {
    var o = 4 * (Math.floor(k * (z.box.y + (b + 0.5) * z.box.h / rows)) * cv.width + Math.floor(k * (z.box.x + (c + 0.5) * z.box.w / z.columns)));
    px.push([c, b, d[o], d[o + 1], d[o + 2]]);
  }
document.body.setAttribute('data-heat', JSON.stringify({ load: at, lo: lo, hi: hi, zoom: z, px: px }));
</script>""" + s[i:])
PY
mkdir -p "$T/heat" && render_report "$T/heat" "$T/heat.html" 1200,3600
python3 - "$T/heat/dom.html" <<'PY' || fail "the heatmap's columns or colours"
import html, json, math, re, sys
dom = open(sys.argv[1], encoding='utf-8').read()
V = json.loads(re.search(r'window\.SNR = (\{.*?\});\s*</script>', dom, re.S).group(1))['vmem']
h = json.loads(html.unescape(re.search(r'data-heat="([^"]*)"', dom).group(1)))
rows, R, ns = V['heatmap'], V['heat_rows'], len(V['heatmap'])
assert ns and R, 'no heatmap data'
at, z = h['load'], h['zoom']
w = math.floor(at['box']['w'])
assert at["lo"] == 0 and at["hi"] == ns - 1 and at["columns"] == min(ns, w), (at, ns, w)
assert ('in %d columns' % at['columns']) in at['said'] and \
    (('most occupied' in at['said']) if ns > w else ('exact' in at['said'])), at['said']
assert (z['lo'], z['hi'], z['columns']) == (h['lo'], h['hi'], h['hi'] - h['lo'] + 1) and 'exact' in z['said'], z
HEAT = [(0xf7, 0xfb, 0xff), (0x6b, 0xae, 0xd6), (0x08, 0x30, 0x6b)]
def color(share):  # the visual map's linear interpolation (ECharts color.lerp)
    v = round(1000 * share) / 1000 * (len(HEAT) - 1)
    i, j = math.floor(v), math.ceil(v)
    return [math.floor(a + (b - a) * (v - i) + 0.5) for a, b in zip(HEAT[i], HEAT[j])]
assert len(h['px']) == z['columns'] * len(R), len(h['px'])
bad = [(c, b, p, color(rows[h['lo'] + c][b] / R[b]['pages'])) for c, b, *p in h['px']
       if max(abs(x - y) for x, y in zip(p, color(rows[h['lo'] + c][b] / R[b]['pages']))) > 2]
assert not bad, 'cells (column, row, drawn, want): %r' % bad[:5]
assert len(set(tuple(p[2:]) for p in h['px'])) >= 2, 'the zoomed cells are all one colour: nothing checked'
PY
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
  "the heatmap at most a column per pixel and each sample's colour when zoomed," \
  "the DMA table's last page is analyze dma's last DMAs, also with the data in files beside the page"
