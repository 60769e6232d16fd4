"""png.py: png(PATH) -> (width, height, bytes per pixel, rows): decodes the
8-bit RGB or RGBA, non-interlaced PNGs Chromium's --screenshot writes (zlib
and the five filters), so the report tests need no imaging package. blank_boxes(IMAGE, boxes), IMAGE
as png returns it: the errors for page elements ({id, x, y, w, h} in screenshot pixels) that fall
outside the screenshot or look blank there."""
import struct
import zlib


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


def blank_boxes(image, boxes):
    w, h, bpp, rows = image
    errs = []
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
                ink += px != b'\xff\xff\xff'
        if len(colors) < 8 or ink < n * 0.01:
            errs.append('%s looks blank: %d colors, %.2f%% non-white' % (b['id'], len(colors), 100.0 * ink / max(n, 1)))
    return errs
