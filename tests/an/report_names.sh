#!/usr/bin/env bash
# snr report on a program whose functions are named "<!--<script>" and
# "</script><snrinjected>x" (tests/an/an_names.c; each issues a DMA): the
# page renders in headless Chromium with no console message, its DMA
# timeline names both functions as text, and so does the timeline's tooltip
# (shown through ECharts' showTip on each DMA row): no element made from a
# name appears anywhere in the DOM.
# usage: report_names.sh SNR
set -u
SNR=$1; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
"$SNR" cc -O1 "$HERE/an_names.c" -o "$T/p.elf" || fail "snr cc"
gdb_device "$SNR" "$T" "$T/p.elf"
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 1000 -o "$T/a.snrt" \
  2>"$T/rec.err" || { kill $DEV; fail "record: $(cat "$T/rec.err")"; }
wait $DEV
"$SNR" replay "$T/a.snrt" -o "$T/a.snrm" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"
"$SNR" report "$T/a.snrm" -o "$T/r.html" || fail "snr report"
# the page, then a copy that shows each DMA row's tooltip into a
# <pre id=tips> once the charts are drawn
python3 - "$T/r.html" "$T/tips.html" <<'PY' || fail "making the tooltip page"
import sys
s = open(sys.argv[1], encoding='utf-8').read()
probe = """<pre id="tips"></pre><script>
setTimeout(function () {
  var c = echarts.getInstanceByDom(document.getElementById('c-dma')), out = [];
  for (var i = 0; i < 2; i++) {
    c.dispatchAction({ type: 'showTip', seriesIndex: 0, dataIndex: i });
    var tip = document.querySelector('#c-dma > div:last-child');
    out.push(tip ? tip.innerHTML : '(no tooltip)');
  }
  document.getElementById('tips').textContent = out.join('\\n----\\n');
}, 0);
</script></body>"""
assert s.endswith('</body></html>\n') or s.endswith('</body></html>'), s[-40:]
k = s.rindex('</body>')
open(sys.argv[2], 'w', encoding='utf-8').write(s[:k] + probe + s[k + len('</body>'):])
PY
render_report "$T" "$T/r.html" 1200,2400
grep -q '<snrinjected' "$T/dom.html" && fail "a function name became an element in the page"
grep -qF '&lt;!--&lt;script&gt;' "$T/dom.html" || fail "the page does not show <!--<script> as text"
grep -qF '&lt;/script&gt;&lt;snrinjected&gt;x' "$T/dom.html" || fail "the page does not show </script><snrinjected>x as text"
cp "$T/dom.html" "$T/page-dom.html"
render_report "$T" "$T/tips.html" 1200,2400
python3 - "$T/dom.html" <<'PY' || fail "tooltips: $(grep -A6 'id="tips"' "$T/dom.html")"
import html, re, sys
d = open(sys.argv[1], encoding='utf-8').read()
m = re.search(r'<pre id="tips">(.*?)</pre>', d, re.S)
assert m, "no tooltip probe output"
tips = html.unescape(m.group(1))  # the tooltips' innerHTML, as markup
print(tips)
assert '(no tooltip)' not in tips, "a tooltip was not shown"
# in the tooltip's markup each name is text: its '<' escaped, no element made of it
assert '&lt;!--&lt;script&gt;' in tips or '&lt;!--&lt;script>' in tips, "<!--<script> not shown as text"
assert '&lt;/script&gt;&lt;snrinjected&gt;x' in tips or '&lt;/script>&lt;snrinjected>x' in tips, "</script><snrinjected>x not shown as text"
assert '<snrinjected' not in tips, "a name became an element in the tooltip"
PY
echo "ok: names made to break the page show as text, in the page and its tooltips"
