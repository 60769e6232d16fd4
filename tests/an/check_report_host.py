#!/usr/bin/env python3
"""Checks the host page of `snr report H.snrh` (the DOM after its scripts ran,
from headless Chromium) against `snr host report --json` and `snr host causal
--json` of the same trace.

usage: check_report_host.py DOM.html REPORT.json CAUSAL.json PAGE.html [PROBE.html]
CAUSAL.json is empty when the trace has no progress point. PROBE.html: the
DOM of the page with tests/an/host_page_probe.js run at its end, in a window
1200 px wide: what the browser drew on the timeline (the device's lanes and
their intervals, the host's waits and their links, the tooltips) and whether
each ranking table fits the window.
"""
import html
import html.parser
import json
import re
import sys


class Page(html.parser.HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tables = {}   # class -> [[cell text]]
        self.rank = {}     # data-point -> [[cell text]]
        self.plots = []    # (data-candidate, data-series)
        self.off_path = []
        self.ids = {}      # id -> text
        self._table = None
        self._row = None
        self._cell = None
        self._id = []      # (id, depth) of open elements with an id whose text we keep
        self._depth = 0

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        self._depth += 1
        if tag == 'table':
            rows = []
            if a.get('class') == 'causal-rank':
                self.rank[a.get('data-point')] = rows
            elif a.get('class'):
                self.tables[a['class']] = rows
            self._table = rows
        elif tag == 'tr' and self._table is not None:
            self._row = []
        elif tag in ('td', 'th') and self._row is not None:
            self._cell = ''
        elif tag == 'div' and a.get('class') == 'plot' and 'data-series' in a:
            self.plots.append((a['data-candidate'], json.loads(a['data-series'])))
        elif tag == 'li' and 'data-name' in a:
            self.off_path.append(a['data-name'])
        if a.get('id') in ('errors', 'causal-none', 'host-timeline-what', 'host-truncated', 'host-no-device', 'host-no-progress'):
            self.ids[a['id']] = ''
            self._id.append((a['id'], self._depth))

    def handle_endtag(self, tag):
        if tag in ('td', 'th') and self._cell is not None and self._row is not None:
            self._row.append(self._cell.strip())
            self._cell = None
        elif tag == 'tr' and self._row is not None:
            if self._row and self._table is not None:
                self._table.append(self._row)
            self._row = None
        elif tag == 'table':
            self._table = None
        if self._id and self._id[-1][1] == self._depth:
            self._id.pop()
        self._depth -= 1

    def handle_data(self, data):
        if self._cell is not None:
            self._cell += data
        for i, _ in self._id:
            self.ids[i] += data


def near(text, want, places):
    got = float(text.replace('%', '').replace('~', '').replace('+', ''))
    return abs(got - want) <= 0.5 * 10 ** -places + 1e-9


NO_DEVICE = {'lanes': [], 'lane_source': [], 'work': [], 'work_total': 0, 'waits': [], 'waits_total': 0}


def dev_of(lane, source):
    """the device (snr host report's name) of a timeline lane"""
    m = re.fullmatch(r'GPU (\d+) stream \d+', lane)
    return f'GPU {m.group(1)} (CUPTI)' if source == 'CUPTI' and m else lane


def check_device_lanes(dv, od):
    """The device's lanes (window.SNR_HOST_TL.device) against snr host report --json's on_off_device: every
    piece of work drawn (the recordings are short), as many per device and name as it counts; every host wait
    drawn, linked to the work that ended it, that work's end as far from the wait's start as the report says."""
    bad = []
    devs = [d['device'] for d in od['devices']]
    want = {(w['device'], w['name']): w['count'] for w in od['work']}
    total = sum(want.values())
    got = {}
    for w in dv['work']:
        k = (dev_of(dv['lanes'][w[0]], dv['lane_source'][w[0]]), w[4])
        got[k] = got.get(k, 0) + 1
    if got != want or dv['work_total'] != total:
        bad.append(f'device lanes: work {got} ({dv["work_total"]} in all), the report counts {want}')
    if sorted({dev_of(l, s) for l, s in zip(dv['lanes'], dv['lane_source'])}) != sorted(devs):
        bad.append(f'device lanes {dv["lanes"]} are not of the devices {devs}')
    hw = od.get('host_waits', {'count': 0, 'linked': 0, 'waits': []})
    if len(dv['waits']) != hw['count'] or dv['waits_total'] != hw['count'] or \
            sum(1 for v in dv['waits'] if v[4] >= 0) != hw['linked']:
        bad.append(f'{len(dv["waits"])} host waits drawn, {sum(1 for v in dv["waits"] if v[4] >= 0)} linked; '
                   f'the report: {hw["count"]}, {hw["linked"]} linked')
    for v, w in zip(dv['waits'], hw['waits']):
        e = w.get('ended_by')
        if abs((v[2] - v[1]) - (w['end_ns'] - w['start_ns']) / 1e6) > 1e-5 or (v[4] >= 0) != bool(e):
            bad.append(f'wait {v} is not {w}')
        elif e:
            d = dv['work'][v[4]]
            if d[4] != e['name'] or dev_of(dv['lanes'][d[0]], dv['lane_source'][d[0]]) != e['device'] or \
                    abs((d[2] - v[1]) - (e['end_ns'] - w['start_ns']) / 1e6) > 1e-5:
                bad.append(f'wait {v} is linked to {d}, the report: {e}')
    return bad


def check_probe(path, tl):
    """what the browser drew and laid out (tests/an/host_page_probe.js)"""
    bad = []
    m = re.search(r'<pre id="probe">(.*?)</pre>', open(path, encoding='utf-8').read(), re.S)
    if not m:
        return ['the probe left no result (a script error before it?)']
    r = json.loads(html.unescape(m.group(1)))
    for t in r['rank']:
        if t['right'] > r['viewport'] or t['last'] > r['viewport'] or t['right'] > t['box'] + 0.5 or \
                t['overflow'] > 0:
            bad.append(f'ranking {t["point"]} does not fit {r["viewport"]} px: its right edge at {t["right"]}, '
                       f'its last column\'s at {t["last"]}, its box\'s at {t["box"]}, {t["overflow"]} px scrolled off')
    if r['scroll'] > r['viewport']:
        bad.append(f'the page is {r["scroll"]} px wide in a {r["viewport"]} px window')
    dv = tl['device']
    if r['lanes'] != tl['lanes'] + dv['lanes']:
        bad.append(f'the timeline\'s lanes are {r["lanes"]}, want the threads\' then the device\'s')
    drawn = dict(r['series'])
    want = {'device: compute (kernel)': sum(1 for w in dv['work'] if not w[3]),
            'device: transfer': sum(1 for w in dv['work'] if w[3]),
            'host wait for the device': len(dv['waits']),
            'wait ended by': sum(1 for v in dv['waits'] if v[4] >= 0)}
    for k, n in want.items():
        if drawn.get(k) != n:
            bad.append(f'the timeline draws {drawn.get(k)} items of "{k}", want {n}')
    # each series' first item's tooltip names it and, where known, the thread that launched it
    for k, x in (('device: compute (kernel)', 0), ('device: transfer', 1)):
        w = next((w for w in dv['work'] if w[3] == x), None)
        tip = html.unescape(r['tips'].get(k, ''))
        if w and (not tip.startswith(w[4] + '<br>' + dv['lanes'][w[0]] + ':') or
                  (w[6] and 'launched by ' + w[6] not in tip) or (w[9] and w[9] not in tip) or
                  (w[5] and f'{w[5]} bytes' not in tip)):
            bad.append(f'tooltip of {w}: {tip!r}')
    v = dv['waits'][0] if dv['waits'] else None
    tip = html.unescape(r['tips'].get('host wait for the device', ''))
    if v and (not tip.startswith(v[3]) or (v[4] >= 0 and 'ended by ' + dv['work'][v[4]][4] not in tip)):
        bad.append(f'tooltip of wait {v}: {tip!r}')
    print(f'drawn: {r["series"]}; rankings\' right edges {[t["right"] for t in r["rank"]]} in {r["viewport"]} px')
    return bad


def main():
    dom, rep_path, causal_path, page_path = sys.argv[1:5]
    probe = sys.argv[5] if len(sys.argv) > 5 else None
    p = Page()
    p.feed(open(dom, encoding='utf-8').read())
    rep = json.load(open(rep_path))
    ctext = open(causal_path).read().strip()
    causal = json.loads(ctext) if ctext else None
    bad = []

    # self-contained: the page's own markup loads no URL
    s = open(page_path, encoding='utf-8').read()
    markup = re.sub(r'(?s)(<script[^>]*>).*?(</script>)', r'\1\2', s)
    if re.findall(r'(?i)<[a-z]+[^>]*\b(?:src|href)\s*=\s*(?!"#)', markup):
        bad.append('the page references an external resource')
    if p.ids.get('errors', '').strip():
        bad.append('script errors on the page: ' + p.ids['errors'])

    # threads: the scheduler's totals
    th = p.tables.get('host-threads', [])[1:]
    if len(th) != len(rep['threads']):
        bad.append(f'{len(th)} thread rows, want {len(rep["threads"])}')
    for row, t in zip(th, rep['threads']):
        st = t['offcpu_ns_by_state']
        if row[0] != t['comm'] or int(row[1]) != t['tid'] or not near(row[2], t['oncpu_ns'] / 1e6, 3) or \
                not near(row[3], sum(st) / 1e6, 3) or not all(near(row[4 + k], st[k] / 1e6, 3) for k in range(4)):
            bad.append(f'thread row {row} is not {t}')
    # the timeline: each thread's off-CPU intervals add up to its buckets' off-CPU time, its
    # on-CPU samples to its buckets' samples (all drawn: the recordings are short)
    m = re.search(r'window\.SNR_HOST_TL = (\{.*?\});\n', s)
    tl = json.loads(m.group(1)) if m else None
    if not tl:
        bad.append('no timeline data on the page')
    else:
        for lane, t in enumerate(rep['threads']):
            off = sum(e - b for l, b, e, _ in tl['offcpu'] if l == lane)
            want = sum(b['offcpu_ns'] for b in rep['buckets'] if b['tid'] == t['tid']) / 1e6
            n = sum(1 for l, _ in tl['samples'] if l == lane)
            nwant = sum(b['oncpu_samples'] for b in rep['buckets'] if b['tid'] == t['tid'])
            if abs(off - want) > 1e-3 or n != nwant:
                bad.append(f'timeline lane {lane} ({t["tid"]}): {off:.6f} ms off CPU, {n} samples; '
                           f'the buckets: {want:.6f} ms, {nwant} samples')
        said = f'Off-CPU intervals: {len(tl["offcpu"])} drawn of {tl["offcpu_total"]}; ' \
               f'on-CPU samples: {len(tl["samples"])} drawn of {tl["samples_total"]}.'
        if 'device' not in tl:
            bad.append('the timeline has no device lanes')
        dv = tl.setdefault('device', NO_DEVICE)
        linked = sum(1 for v in dv['waits'] if v[4] >= 0)
        if dv['lanes']:
            said += f' Device work: {len(dv["work"])} drawn of {dv["work_total"]} in {len(dv["lanes"])} lane{"s" if len(dv["lanes"]) > 1 else ""}; ' \
                    f'host waits for the device: {len(dv["waits"])} drawn of {dv["waits_total"]}, {linked} linked ' \
                    f'to the work that ended them.'
        bad += check_device_lanes(dv, rep['on_off_device'])
        if p.ids.get('host-timeline-what') != said or len(tl['offcpu']) != tl['offcpu_total']:
            bad.append(f'the timeline says {p.ids.get("host-timeline-what")!r}, want {said!r}, all drawn')
    # buckets
    bk = p.tables.get('host-buckets', [])[1:]
    if len(bk) != len(rep['buckets']) or not bk:
        bad.append(f'{len(bk)} bucket rows, want {len(rep["buckets"])} (and some)')
    for row, b in zip(bk, rep['buckets']):
        if int(row[1]) != b['tid'] or row[2] != b['bucket'] or not near(row[3], b['in_call_ns'] / 1e6, 3) or \
                int(row[4]) != b['oncpu_samples'] or not near(row[6], b['offcpu_ns'] / 1e6, 3):
            bad.append(f'bucket row {row} is not {b}')
    # progress points: the same figures as the causal profile's (recorded) ones
    pr = p.tables.get('host-progress', [])[1:]
    if len(pr) != len(rep['progress']):
        bad.append(f'{len(pr)} progress rows, want {len(rep["progress"])}')
    cprog = {x['name']: x for x in causal['progress']} if causal else {}
    for row, x in zip(pr, rep['progress']):
        d = x['latency_ms'] if x['kind'] == 'latency' else x['interarrival_ms']
        if row[0] != x['name'] or int(row[2]) != x['count'] or not near(row[3], x['per_second'], 3) or \
                not all(near(row[5 + k], d[q], 3) for k, q in enumerate(('p50', 'p90', 'p99', 'max'))):
            bad.append(f'progress row {row} is not {x}')
        c = cprog.get(x['name'])
        if causal and (not c or int(row[2]) != c['count'] or not near(row[3], c['per_second'], 3) or
                       not all(near(row[5 + k], c['latency_ms'][q], 3) for k, q in enumerate(('p50', 'p90', 'p99')))):
            bad.append(f'progress row {row} is not the causal profile\'s {c}')
    if not rep['progress'] and 'host-no-progress' not in p.ids:
        bad.append('no progress point, and the page does not say so')
    # devices
    devs = rep['on_off_device']['devices']
    dv = p.tables.get('host-devices', [])[1:]
    if len(dv) != len(devs) or (not devs and 'host-no-device' not in p.ids):
        bad.append(f'{len(dv)} device rows, want {len(devs)}')
    for row, d in zip(dv, devs):
        keys = ('window_ns', 'on_device_ns', 'compute_only_ns', 'transfer_only_ns', 'both_ns', 'queued_ns', 'idle_ns')
        if row[0] != d['device'] or not all(near(row[2 + k], d[key] / 1e6, 3) for k, key in enumerate(keys)) or \
                not near(row[9], 100 * d['active_ratio'], 1):
            bad.append(f'device row {row} is not {d}')

    if not causal:
        if 'causal-none' not in p.ids or 'progress point' not in p.ids['causal-none']:
            bad.append('no causal profile, and the page does not say why')
        if p.plots:
            bad.append('plots without a causal profile')
    else:
        def key(c):
            if 'kernel' in c:
                return f'kernel {c["kernel"]} ({c["device"]})'
            if 'transfer' in c:
                return f'transfer {c["transfer"]} ({c["device"]})'
            return ('bucket ' + c['bucket']) if 'bucket' in c else c['function']
        by = {}
        for c in causal['candidates']:
            by.setdefault(key(c), []).append(c)
        plots = dict(p.plots)
        if sorted(plots) != sorted(by):
            bad.append(f'plots for {sorted(plots)}, candidates {sorted(by)}')
        for k, rows in by.items():
            series = {s['name']: s['data'] for s in plots.get(k, [])}
            for pt in causal['progress']:
                for m, label in (('throughput_pct', 'throughput'), ('latency_p50_pct', 'p50 latency'),
                                 ('latency_p99_pct', 'p99 latency')):
                    want = [[0, 0]] + [[r['speedup_pct'], r['effect'][pt['name']][m]] for r in rows]
                    got = series.get(f'{pt["name"]} {label}')
                    if got != want:
                        bad.append(f'{k}: plot {pt["name"]} {label} is {got}, want {want}')
        # the ranking, per point: rank order and the throughput change at each speedup
        ranked = sorted(by.values(), key=lambda rows: rows[0]['rank'])
        for pt in causal['progress']:
            t = p.rank.get(pt['name'], [])[1:]
            if len(t) != len(ranked):
                bad.append(f'{pt["name"]}: {len(t)} ranked rows, want {len(ranked)}')
            for row, rows in zip(t, ranked):
                c = rows[0]
                name = c.get('function') or c.get('bucket') or c.get('kernel') or c.get('transfer')
                if int(row[0]) != c['rank'] or row[2] != name:
                    bad.append(f'{pt["name"]}: rank row {row[:3]} is not #{c["rank"]} {name}')
                for i, r in enumerate(rows):
                    if not near(row[5 + i], r['effect'][pt['name']]['throughput_pct'], 1):
                        bad.append(f'{pt["name"]}: {name} at {r["speedup_pct"]}%: {row[5 + i]}, want '
                                   f'{r["effect"][pt["name"]]["throughput_pct"]:+.1f}%')
                if c.get('file') and not row[3].startswith(c['file'].split('/')[-1] + ':' + str(c['line'])):
                    bad.append(f'{name}: where {row[3]!r}, want {c["file"]}:{c["line"]}')
        off = sorted({c.get('function') or c.get('kernel') or c.get('transfer')
                      for c in causal['candidates'] if c['off_critical_path']})
        if sorted(p.off_path) != off:
            bad.append(f'off the critical path: the page names {sorted(p.off_path)}, the profile {off}')
        print(f'{len(by)} candidates plotted, {len(causal["progress"])} points; off the critical path: {off}')
    if probe and tl:
        bad += check_probe(probe, tl)
    for b in bad[:20]:
        print(b)
    sys.exit(1 if bad else 0)


main()
