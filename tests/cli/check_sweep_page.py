#!/usr/bin/env python3
"""check_sweep_page.py DOM.html SHOT.png RESULTS.json: the sweep's page (snr sweep's
report.html) finished its script with no error (body[data-ready], empty #errors); its two
charts' boxes (body[data-charts]) are drawn in the screenshot, not blank; its table of every
point holds each point's cycles as results.json has them, and the best points' table the
best points in order."""
import html, json, os, re, sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), '..', 'an'))
from png import blank_boxes, png  # noqa: E402

dom = open(sys.argv[1], encoding='utf-8', errors='replace').read()
res = json.load(open(sys.argv[3]))
errs = []
body = re.search(r'<body([^>]*)>', dom[dom.find('</head>'):])
attrs = body.group(1) if body else ''
if 'data-ready="1"' not in attrs:
    errs.append('the page script did not finish (no data-ready)')
m = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', dom, re.S)
if m and m.group(1).strip():
    errs.append('script errors: ' + html.unescape(m.group(1)))
boxes = json.loads(html.unescape(re.search(r'data-charts="([^"]*)"', attrs).group(1))) if 'data-charts' in attrs else []
if sorted(b['id'] for b in boxes) != ['c-elasticity', 'c-points']:
    errs.append('chart boxes: %r' % boxes)
else:
    errs += blank_boxes(png(sys.argv[2]), boxes)


def rows(section):
    part = dom[dom.find('id="%s"' % section):]
    part = part[:part.find('</table>')]
    return [[html.unescape(re.sub('<[^>]*>', '', c)) for c in re.findall(r'<td[^>]*>(.*?)</td>', r)]
            for r in re.findall(r'<tr>(.*?)</tr>', part, re.S) if '<td' in r]


naxes = len(res['params'])
every = rows('points')
want = [[str(p['point']), str(p['cycles'])] for p in res['points']]
got = [[r[0], r[naxes + 1]] for r in every]
if got != want:
    errs.append('every point: %r, want %r' % (got[:5], want[:5]))
best = [r[0] for r in rows('best')]
if best != [str(b) for b in res['best']]:
    errs.append('best points: %r, want %r' % (best, res['best']))
if errs:
    print('\n'.join(errs))
    sys.exit(1)
