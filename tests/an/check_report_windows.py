#!/usr/bin/env python3
"""check_report_windows.py DOM.html SHOT.png REPLAY.json ALONE.json K: the page of several
windows (snr report SET... -o r.html) finished its script with no error (body[data-ready],
empty #errors); both charts' boxes (body[data-charts]) are drawn in the screenshot; every
window's row, every group's row and the total row of its table hold the figures of `snr
replay SET... --json` (REPLAY.json: each window replayed on its own, the groups and the total
added up); and window K's row holds the figures of that window recorded alone and replayed
(ALONE.json, `snr replay --json`)."""
import html, json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png import blank_boxes, png  # noqa: E402

dom = open(sys.argv[1], encoding='utf-8', errors='replace').read()
replay = json.load(open(sys.argv[3]))
alone = json.load(open(sys.argv[4]))
k = int(sys.argv[5])
errs = []
body = re.search(r'<body([^>]*)>', dom[dom.find('</head>'):])
attrs = body.group(1) if body else ''
if 'data-ready="1"' not in attrs:
    errs.append('the page script did not finish (no data-ready)')
m = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', dom, re.S)
if m and m.group(1).strip():
    errs.append('script errors: ' + html.unescape(m.group(1)))
boxes = json.loads(html.unescape(re.search(r'data-charts="([^"]*)"', attrs).group(1))) if 'data-charts' in attrs else []
if [b['id'] for b in boxes] != ['c-windows', 'c-groups']:
    errs.append('chart boxes: %r' % boxes)

causes = ['dma-base', 'dma-transfer', 'vmem-hazard', 'unit-busy', 'register', 'branch', 'peer']
table = re.search(r'<h2 id="windows">.*?<table class="sum">(.*?)</table>', dom, re.S).group(1)
rows = []
for tr in re.findall(r'<tr>(.*?)</tr>', table, re.S):
    cells = [re.sub(r'<[^>]+>', '', c) for c in re.findall(r'<td[^>]*>(.*?)</td>', tr, re.S)]
    if cells:
        rows.append(cells)


def figures(s):
    return [str(s['instructions']), str(s['cycles'])] + [str(s['stall_cycles'][c]) for c in causes] + [str(s['dma_count'])]


def row_figures(r):
    return [r[2], r[3]] + r[5:5 + len(causes)] + [r[5 + len(causes)]]


wins, groups = replay['windows'], replay['groups']
if len(rows) != len(wins) + len(groups) + 1:
    errs.append('%d table rows for %d windows and %d groups' % (len(rows), len(wins), len(groups)))
else:
    for i, w in enumerate(wins):
        if rows[i][0] != str(i) or rows[i][1] != w['group'] or row_figures(rows[i]) != figures(w['summary']):
            errs.append('window %d: row %r, replay %r' % (i, rows[i], figures(w['summary'])))
    for j, g in enumerate(groups):
        r = rows[len(wins) + j]
        if r[1] != g['group'] or row_figures(r) != figures(g):
            errs.append('group %s: row %r, replay %r' % (g['group'], r, figures(g)))
    r = rows[-1]
    if r[1] != 'together' or row_figures(r) != figures(replay['total']):
        errs.append('together: row %r, replay %r' % (r, figures(replay['total'])))
    if row_figures(rows[k]) != figures(alone):
        errs.append('window %d: row %r, recorded alone %r' % (k, rows[k], figures(alone)))
    if replay['total']['windows'] != len(wins) or sum(g['windows'] for g in groups) != len(wins):
        errs.append('window counts: %r' % replay['total'])

errs += blank_boxes(png(sys.argv[2]), boxes)
for e in errs:
    print('FAIL', e)
sys.exit(1 if errs else 0)
