#!/usr/bin/env python3
"""check_report.py DOM.html SHOT.png [DEPS.json [REPLAY.json UTIL.json]]: the report's script finished
with no error (body[data-ready], empty #errors), and in the screenshot each
chart's box (body[data-charts], page coordinates) is drawn: it has many
distinct colors and a good share of non-background pixels. The DMA
timeline's backtail series holds one whisker per DMA of the chart with a
backtail (body[data-dma-series] against the report's data), each DMA's
backtail is the one `snr analyze deps --json` (DEPS.json) gives, and the
whiskers' color is drawn inside the plot area (below the legend, which has
it too). Every stall cause of `snr replay --json` (REPLAY.json) is in the
summary's table with the replay's cycles. The lane timeline's intervals
(window.SNR_LANES), averaged over `snr analyze util --json`'s windows
(UTIL.json), give util's busy fractions for every unit and link, and its
first view drew every lane's busy cycles. The heatmap's last column is
drawn. The full data (every DMA, every busy interval) is read from the
page's packed form (gzip + base64), as the page itself decodes it. The PNG is decoded by png.py (no imaging package needed)."""
import html, json, os, re, sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from png import blank_boxes, png  # noqa: E402

from packed import packed, rows  # noqa: E402


dom = open(sys.argv[1], encoding='utf-8', errors='replace').read()
body = re.search(r'<body([^>]*)>', dom[dom.find('</head>'):] if '</head>' in dom else dom)
attrs = body.group(1) if body else ''
errs = []
if 'data-ready="1"' not in attrs:
    errs.append('the report script did not finish (no data-ready)')
m = re.search(r'<pre id="errors"[^>]*>(.*?)</pre>', dom, re.S)
if m and m.group(1).strip():
    errs.append('script errors: ' + html.unescape(m.group(1)))
# the suggestions table was rendered (a row per stalled DMA, or the reason there is none)
sm = re.search(r'<div id="suggest">(.*?)</div>', dom, re.S)
if not sm or not ('<table>' in sm.group(1) or '<p>' in sm.group(1)):
    errs.append('the suggestions section is empty')
boxes = json.loads(html.unescape(re.search(r'data-charts="([^"]*)"', attrs).group(1))) if 'data-charts' in attrs else []
if [b['id'] for b in boxes] != ['c-dma', 'c-util', 'c-vmem', 'c-heat']:
    errs.append('chart boxes: %r' % boxes)

# the backtail series of the DMA timeline
BACKTAIL_RGB = bytes.fromhex('7b3fc4')  # report.js COLORS.backtail
m = re.search(r'window\.SNR = (\{.*?\});\s*</script>', dom, re.S)
snr = json.loads(m.group(1)) if m else None
series = json.loads(html.unescape(re.search(r'data-dma-series="([^"]*)"', attrs).group(1))) \
    if 'data-dma-series' in attrs else {}
if not snr:
    errs.append('no report data (window.SNR) in the page')
else:
    shown = snr['dma']['dmas'][:100]  # report.c DMA_ROWS
    # the timeline says whether it shows every DMA
    what = re.search(r'<p id="dma-what">([^<]*)</p>', dom)
    n = snr['dma']['count']
    want_what = 'All %d DMAs.' % n if n <= len(shown) else 'The %d worst-stalled of %d DMAs' % (len(shown), n)
    if not what or not what.group(1).startswith(want_what):
        errs.append('the DMA timeline says %r, want %r' % (what.group(1) if what else None, want_what))
    want = sum(1 for d in shown if d['issue'] and d['issue']['cycle'] is not None and d.get('backtail_cycles'))
    if 'backtail' not in series:
        errs.append('the DMA timeline has no backtail series: %r' % series)
    elif series['backtail'] != want or want == 0:
        errs.append('backtail series holds %r whiskers, the data has %d DMAs with a backtail' % (series['backtail'], want))
    # every DMA: the timeline's worst ones (objects) and the DMA table's packed rows (all of them,
    # worst first, the timeline's the first)
    table = packed(dom, 'dmas')
    every = rows(table) if table else []
    if not table or len(every) != snr['dma']['count'] or \
            [d['id'] for d in every[:len(shown)]] != [d['id'] for d in shown]:
        errs.append('the packed DMA table (%r rows) is not every DMA (%r) with the timeline\'s first' %
                    (len(every), snr['dma']['count']))
    if len(sys.argv) > 3:
        deps = {d['id']: d for d in json.load(open(sys.argv[3]))['dmas']}
        if len(every) != len(deps):
            errs.append('the DMA table has %d DMAs, deps %d' % (len(every), len(deps)))
        for d in shown + every:
            r = deps[d['id']]['relaxed']
            got = (d.get('backtail_cycles'), d.get('backtail_insns'), d.get('relaxed_anchor'))
            exp = (r['backtail_cycles'], r['backtail_insns'], r['anchor']) if r else (None, None, None)
            if got != exp:
                errs.append('DMA %d: report backtail %r, deps %r' % (d['id'], got, exp))

# every stall cause, as the replay summed it
if len(sys.argv) > 5:
    want = json.load(open(sys.argv[4]))['stall_cycles']
    got = dict(re.findall(r'<tr data-cause="([a-z-]+)"><td>[^<]*</td><td>(\d+)</td>', dom))
    if {k: int(v) for k, v in got.items()} != want:
        errs.append('stall causes in the summary %r, the replay %r' % (got, want))
    # the lanes against util's windows
    m = re.search(r'window\.SNR_LANES = (\{.*?\});\s*</script>', dom, re.S)
    lanes = json.loads(m.group(1)) if m else None
    if lanes:
        n_intervals = lanes['intervals']  # the count; the intervals themselves are packed
        lanes['intervals'] = packed(dom, 'lanes')
    util = json.load(open(sys.argv[5]))
    if not lanes:
        errs.append('no lane data (window.SNR_LANES)')
    else:
        W, cycles = util['window_cycles'], lanes['cycles']
        want_units = [u for u in util['units'] if u != 'hbm_bw']
        if lanes['units'] != want_units:
            errs.append('lanes %r, util units %r' % (lanes['units'], want_units))
        drawn = json.loads(html.unescape(re.search(r'data-lanes="([^"]*)"', attrs).group(1))) \
            if 'data-lanes' in attrs else {}
        for li, name in enumerate(lanes['units']):
            ivs, t, busy = [], 0, [0.0] * len(util['windows'])
            a = lanes['intervals'][li]
            for k in range(0, len(a), 2):
                s0 = t + a[k]; t = s0 + a[k + 1]; ivs.append((s0, t))
            for s0, e0 in ivs:
                for w in range(s0 // W, min(len(busy), (e0 + W - 1) // W)):
                    ws, we = w * W, min(w * W + W, cycles)
                    busy[w] += max(0, min(e0, we) - max(s0, ws)) / (we - ws)
            col = util['units'].index(name)
            for w, win in enumerate(util['windows']):
                if abs(min(busy[w], 1.0) - win['busy'][col]) > 1e-9:
                    errs.append('%s window %d: lanes give %.6f busy, util %.6f' % (name, w, busy[w], win['busy'][col]))
                    break
            total = sum(e0 - s0 for s0, e0 in ivs)
            if total != lanes['busy_cycles'][li] or abs(total / cycles - util['total'][name]) > 1e-9:
                errs.append('%s: lanes %d busy cycles, util total %r' % (name, total, util['total'][name]))
            if drawn.get(name, {}).get('busy_cycles') != total:
                errs.append('%s: the first view drew %r busy cycles of %d' % (name, drawn.get(name), total))
        if not any(lanes['busy_cycles']):
            errs.append('no lane has a busy interval')
        # the view at load says whether it merges intervals, and how many it draws
        lod = re.search(r'<p id="util-lod" data-merged="(\d+)">([^<]*)</p>', dom)
        first = [lanes['first'][k:k + 5] for k in range(0, len(lanes['first']), 5)]
        merged = sum(1 for v in first if v[4] > 1)
        if not lod or int(lod.group(1)) != merged or \
                ('exact' in lod.group(2)) != (merged == 0) or '%d rectangles' % len(first) not in lod.group(2):
            errs.append('the lane chart\'s level of detail is not said as drawn (%d spans, %d merged): %r' %
                        (len(first), merged, lod.group(0) if lod else None))
        if sum(v[4] for v in first) != n_intervals or n_intervals != sum(len(a) // 2 for a in lanes['intervals']):
            errs.append('the view at load covers %d intervals of %d' % (sum(v[4] for v in first), n_intervals))

w, h, bpp, rows = image = png(sys.argv[2])
errs += blank_boxes(image, boxes)
# the heatmap's last column (plot area: report.js grid top 20, right 140, bottom 50) is drawn:
# its cells are never white, even empty ones (#f7fbff)
for b in [b for b in boxes if b['id'] == 'c-heat' and b['y'] + b['h'] <= h]:
    x = b['x'] + b['w'] - 140 - 2
    ys = range(b['y'] + 25, b['y'] + b['h'] - 55)
    white = sum(1 for y in ys if rows[y][x * bpp:x * bpp + 3] == b'\xff\xff\xff')
    if white > len(ys) // 10:
        errs.append('the heatmap\'s last column is not drawn (%d of %d pixels white at x=%d)' % (white, len(ys), x))
dma_box = [b for b in boxes if b['id'] == 'c-dma']
if dma_box:
    b, drawn = dma_box[0], 0
    for y in range(b['y'] + 40, min(b['y'] + b['h'], h)):  # the plot area: below the legend (grid top 40)
        r = rows[y]
        for x in range(b['x'], min(b['x'] + b['w'], w)):
            if r[x * bpp:x * bpp + 3] == BACKTAIL_RGB:
                drawn += 1
    if drawn < 30:
        errs.append('no backtail whisker drawn in the DMA timeline (%d pixels of its color)' % drawn)
for e in errs:
    print('FAIL', e)
sys.exit(1 if errs else 0)
