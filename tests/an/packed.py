"""packed.py: the report's packed data (analyzer/report.c packed_write and
columns_write), decoded as the page decodes it, for the report tests."""
import base64, gzip, html, json, os, re


def packed(dom, name, base='.'):
    """the report's packed data z-NAME (report.c packed_write: gzip, base64), decoded: in the
    page, or in the file beside it that the element's data-src names (relative to base, the
    page's folder)"""
    m = re.search(r'<script type="application/x-snr-packed" id="z-%s"( data-src="([^"]*)")?>([^<]*)</script>' %
                  re.escape(name), dom)
    if not m:
        return None
    text = m.group(3)
    if m.group(2):
        side = open(os.path.join(base, html.unescape(m.group(2))), encoding='utf-8').read()
        text = re.search(r'window\.SNR_PACKED\["%s"\] = "([^"]*)";' % re.escape(name), side).group(1)
    return json.loads(gzip.decompress(base64.b64decode(text)))


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

