"""packed.py: the report's packed data (analyzer/report.c packed_write and
columns_write), decoded as the page decodes it, for the report tests."""
import base64, gzip, json, re


def packed(dom, name):
    """the report's packed data z-NAME (report.c packed_write: gzip, base64), decoded"""
    m = re.search(r'<script type="application/x-snr-packed" id="z-%s">([^<]*)</script>' % re.escape(name), dom)
    return json.loads(gzip.decompress(base64.b64decode(m.group(1)))) if m else None


def rows(cols):
    """a table in columns (report.c columns_write) as a list of dicts, text columns resolved"""
    out = []
    for i in range(cols['n']):
        r = {}
        for k, v in cols['cols'].items():
            d = cols['dicts'].get(k)
            r[k] = d[v[i]] if d is not None and v[i] is not None else v[i]
        out.append(r)
    return out

