#!/usr/bin/env python3
"""check_report.py DOM.html SHOT.png: the report's script finished with no
error (body[data-ready], empty #errors), and in the screenshot each chart's
box (body[data-charts], page coordinates) is drawn: it has many distinct
colors and a good share of non-background pixels. The PNG is decoded here
(zlib and the five filters) so the test needs no imaging package."""
import html, json, re, struct, sys, zlib

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

def png(path):
    data = open(path, 'rb').read()
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    pos, idat, w = 8, b'', 0
    while pos < len(data):
        n, typ = struct.unpack('>I4s', data[pos:pos + 8])
        chunk = data[pos + 8:pos + 8 + n]
        if typ == b'IHDR':
            w, h, depth, ctype, _, _, interlace = struct.unpack('>IIBBBBB', chunk)
            assert depth == 8 and ctype in (2, 6) and not interlace, (depth, ctype, interlace)
            bpp = 3 if ctype == 2 else 4
        elif typ == b'IDAT':
            idat += chunk
        pos += 12 + n
    raw, stride, rows, prev = zlib.decompress(idat), w * bpp, [], bytearray(w * bpp)
    for y in range(h):
        f, line = raw[y * (stride + 1)], bytearray(raw[y * (stride + 1) + 1:(y + 1) * (stride + 1)])
        for i in range(stride):
            a = line[i - bpp] if i >= bpp else 0
            b, c = prev[i], prev[i - bpp] if i >= bpp else 0
            if f == 1: line[i] = (line[i] + a) & 255
            elif f == 2: line[i] = (line[i] + b) & 255
            elif f == 3: line[i] = (line[i] + (a + b) // 2) & 255
            elif f == 4:
                p = a + b - c; pa, pb, pc = abs(p - a), abs(p - b), abs(p - c)
                line[i] = (line[i] + (a if pa <= pb and pa <= pc else b if pb <= pc else c)) & 255
        rows.append(bytes(line)); prev = line
    return w, h, bpp, rows

w, h, bpp, rows = png(sys.argv[2])
for b in boxes:
    if b['y'] + b['h'] > h or b['x'] + b['w'] > w:
        errs.append('%s outside the screenshot (%dx%d): %r' % (b['id'], w, h, b))
        continue
    colors, ink, n = set(), 0, 0
    for y in range(b['y'], b['y'] + b['h'], 2):
        r = rows[y]
        for x in range(b['x'], b['x'] + b['w'], 2):
            px = r[x * bpp:x * bpp + 3]
            colors.add(px); n += 1
            if px != b'\xff\xff\xff':
                ink += 1
    if len(colors) < 8 or ink < n * 0.01:
        errs.append('%s looks blank: %d colors, %.2f%% non-white' % (b['id'], len(colors), 100.0 * ink / max(n, 1)))
for e in errs:
    print('FAIL', e)
sys.exit(1 if errs else 0)
