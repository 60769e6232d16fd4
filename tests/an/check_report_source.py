#!/usr/bin/env python3
"""check_report_source.py DOM.html SHOT.png ANN.json CMP.json ATTN.c: the
report's source page and compare section against `snr annotate --json` and
`snr annotate --compare --json` (report_source.sh says what is checked)."""
import html, json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png import png  # noqa: E402

dom = open(sys.argv[1], encoding='utf-8', errors='replace').read()
ann, cmp = json.load(open(sys.argv[3])), json.load(open(sys.argv[4]))
src = open(sys.argv[5]).read().split('\n')
body = re.search(r'<body([^>]*)>', dom[dom.find('</head>'):])
attrs = body.group(1) if body else ''
errs = []


def attr(name):
    m = re.search(name + r'="([^"]*)"', attrs)
    return json.loads(html.unescape(m.group(1))) if m else None


def text(frag):
    return html.unescape(re.sub(r'<[^>]+>', '', frag))


if 'data-ready="1"' not in attrs:
    errs.append('the report script did not finish (no data-ready)')
m = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', dom, re.S)
if m and m.group(1).strip():
    errs.append('script errors: ' + html.unescape(m.group(1)))

# the hottest line: annotate's first, the ta_wait line, its text from the file
hot = ann['lines'][0]
want_text = src[hot['line'] - 1].replace('\t', ' ')
if 'KNOWN-DMA-WAIT' not in want_text:
    errs.append('annotate\'s hottest line is not the KNOWN-DMA-WAIT line: %r' % hot)
h = attr('data-hottest') or {}
if (h.get('file'), h.get('line'), h.get('cycles'), h.get('text')) != (hot['file'], hot['line'], hot['cycles'], want_text):
    errs.append('the page\'s hottest line %r, annotate\'s %r with text %r' % (h, hot, want_text))
rows = re.findall(r'<tr class="hotrow"[^>]*data-rank="(\d+)"[^>]*>(.*?)</tr>', dom, re.S)
if not rows:
    errs.append('no hottest-lines table')
else:
    cells = re.findall(r'<td[^>]*>(.*?)</td>', rows[0][1], re.S)
    where = os.path.basename(hot['file']) + ':%d (%s)' % (hot['line'], hot['function'])
    if text(cells[0]) != where or text(cells[1]) != want_text or text(cells[2]) != str(hot['cycles']):
        errs.append('first hottest row %r, want %r, %r, %d' % ([text(c) for c in cells[:3]], where, want_text, hot['cycles']))
    if text(cells[4]) != str(hot['inclusive_cycles']):
        errs.append('first hottest row\'s inclusive cycles %r, want %d' % (text(cells[4]), hot['inclusive_cycles']))
    order = [int(r[0]) for r in rows]
    if order != sorted(order):
        errs.append('hottest rows out of order: %r' % order)
# its row in the function's source: selected, its text, its instructions listed
key = '%s:%d' % (hot['file'], hot['line'])
m = re.search(r'<tr id="L-%s" data-key="[^"]*" class="([^"]*)">(.*?)</tr>' % re.escape(key), dom, re.S)
if not m:
    errs.append('no row for %s in the function\'s source' % key)
else:
    if 'sel' not in m.group(1).split():
        errs.append('the hottest line\'s row is not selected: %r' % m.group(1))
    if want_text not in text(m.group(2)):
        errs.append('the function\'s source row for %s lacks its text' % key)
sel = text(re.search(r'<div id="selected">(.*?)</div>', dom, re.S).group(1)) if '<div id="selected">' in dom else ''
pcs = [p for p in ann['pcs'] if p['file'] == hot['file'] and p['line'] == hot['line']]
for p in pcs:
    if '0x%x  %s' % (p['pc'], p['disasm']) not in sel:
        errs.append('the selected line\'s instructions lack 0x%x %s: %r' % (p['pc'], p['disasm'], sel[:300]))
# every line that ran has its row, with its cycles
for l in ann['lines']:
    if l['file'] and l['file'].endswith('attn.c'):
        r = re.search(r'<tr id="L-%s"[^>]*>(.*?)</tr>' % re.escape('%s:%d' % (l['file'], l['line'])), dom, re.S)
        if not r or re.findall(r'<td[^>]*>(.*?)</td>', r.group(1), re.S)[1:3] != [str(l['cycles']), str(l['inclusive_cycles'])]:
            errs.append('line %d: no row with %d cycles, %d inclusive' % (l['line'], l['cycles'], l['inclusive_cycles']))
# DMA rows by the issuing line
issue = [i + 1 for i, t in enumerate(src) if 'KNOWN-DMA-ISSUE' in t][0]
dma_rows = attr('data-dma-rows') or []
if not dma_rows or not all(r.startswith('attn.c:%d #' % issue) for r in dma_rows):
    errs.append('DMA rows %r, want attn.c:%d' % (dma_rows, issue))
# compare: on top (before the hottest lines), named in the summary, no message that there is none
tc = cmp['total_cycles']
at_cmp, at_hot = dom.find('id="compare-page"'), dom.find('id="hottest"')
if not 0 <= at_cmp < at_hot:
    errs.append('the comparison is not above the hottest lines (at %d, hottest at %d)' % (at_cmp, at_hot))
if dom.count('id="compare-page"') != 1 or 'no window to compare' in dom or 'none: <code>snr report' in dom:
    errs.append('the page says there is no comparison, or has two')
m = re.search(r'<tr id="summary-compare">(.*?)</tr>', dom, re.S)
if not m or '%d cycles here, %d there (%+d' % (tc['before'], tc['after'], tc['after'] - tc['before']) not in text(m.group(1)):
    errs.append('the summary does not give the comparison: %r' % (m and text(m.group(1))))
m = re.search(r'<p id="compare-totals">(.*?)</p>', dom, re.S)
if not m or ' %d, after' % tc['before'] not in text(m.group(1)) or ' %d (' % tc['after'] not in text(m.group(1)):
    errs.append('compare totals %r, want %r' % (m and text(m.group(1)), tc))
if tc['before'] == tc['after']:
    errs.append('the two windows have the same cycles: %r' % tc)
for cause, v in cmp['stall_cycles'].items():
    r = re.search(r'<tr data-cause="%s"><td>[^<]*</td><td class="num">(\d+)</td><td class="num">(\d+)</td>' % cause,
                  dom[dom.find('id="compare-causes"'):])
    if not r or (int(r.group(1)), int(r.group(2))) != (v['before'], v['after']):
        errs.append('compare %s: %r, want %r' % (cause, r and r.groups(), v))
crow = re.findall(r'<table id="compare-lines">(.*?)</table>', dom, re.S)
first = cmp['lines'][0]
if not crow or re.findall(r'<td[^>]*>(.*?)</td>', crow[0], re.S)[2:5] != [
        str(first['before']['cycles'] if first['before'] else '-'), str(first['after']['cycles'] if first['after'] else '-'),
        ('+' if first['delta_cycles'] > 0 else '') + str(first['delta_cycles'])]:
    errs.append('compare\'s first line is not annotate\'s %r' % first)

# the screenshot: the hottest line's text cell holds ink (text drawn), in the viewport
w, h, bpp, px = png(sys.argv[2])
b = attr('data-hot-box')
if not b or b['y'] + b['h'] > h or b['x'] + b['w'] > w:
    errs.append('the hottest line\'s cell %r is not in the %dx%d screenshot' % (b, w, h))
else:
    dark = sum(1 for y in range(b['y'], b['y'] + b['h']) for x in range(b['x'], b['x'] + b['w'])
               if sum(px[y][x * bpp:x * bpp + 3]) < 3 * 110)
    glyphs = len(re.sub(r'\s', '', want_text))
    if dark < 4 * glyphs:
        errs.append('the hottest line\'s cell %r has %d dark pixels for %d characters' % (b, dark, glyphs))
for e in errs:
    print('FAIL', e)
sys.exit(1 if errs else 0)
