#!/usr/bin/env python3
"""Checks `snr export perfetto` output against the Chrome trace-event format:
required fields, microsecond timestamps (cycles / clock_hz; the default
clock is 1 GHz, so one cycle is 0.001 us), complete events (X) that nest
per thread, flows (s -> f) paired by id, counters, thread names."""
import json, sys
from collections import defaultdict

doc = json.load(open(sys.argv[1]))
ev = doc['traceEvents']
errs = []
for e in ev:
    for k in ('ph', 'ts', 'pid', 'tid', 'name'):
        if k not in e:
            errs.append('missing %s: %r' % (k, e))
    if e.get('ph') == 'X' and not (isinstance(e.get('dur'), (int, float)) and e['dur'] >= 0):
        errs.append('X without dur >= 0: %r' % e)
    if e.get('ph') not in ('X', 'M', 's', 'f', 'C'):
        errs.append('unexpected phase %r' % e)
pids = {e['pid'] for e in ev}
if pids != {1, 2}:
    errs.append('one process per input file: %r' % pids)
# nesting: per (pid, tid) the X slices are properly nested
by = defaultdict(list)
for e in ev:
    if e['ph'] == 'X':
        by[(e['pid'], e['tid'])].append((e['ts'], -e['dur'], e))
eps = 1e-9
for key, xs in by.items():
    xs.sort(key=lambda x: (x[0], x[1]))
    stack = []
    for ts, negdur, e in xs:
        end = ts - negdur
        while stack and stack[-1] <= ts + eps:
            stack.pop()
        if stack and end > stack[-1] + eps:
            errs.append('slice %s [%g, %g) overlaps its parent on %r' % (e['name'], ts, end, key))
        stack.append(end)
# units: DMA #1 of an_prog (Tb 500, 12000 B at 1200 B/cycle) in microseconds
# a DMA's slice is named by its id and the place of its ISSUE ("dma#1 window+0x8" without line tables)
d1 = [e for e in ev if e['ph'] == 'X' and e['pid'] == 1 and e.get('cat') == 'dma' and e['name'].split()[0] == 'dma#1']
if d1 and not d1[0]['name'].startswith('dma#1 window+0x'):
    errs.append('dma#1 is not named by its issuing pc: %r' % d1[0]['name'])
base = [e for e in ev if e['ph'] == 'X' and e['pid'] == 1 and e['name'] == 'base latency' and d1 and e['tid'] == d1[0]['tid']]
xfer = [e for e in ev if e['ph'] == 'X' and e['pid'] == 1 and e['name'] == 'transfer' and d1 and e['tid'] == d1[0]['tid']]
if not d1 or abs(base[0]['dur'] - 0.5) > 1e-9 or abs(xfer[0]['dur'] - 0.010) > 1e-9:
    errs.append('dma#1 phases in microseconds: %r %r' % (base[:1], xfer[:1]))
stalls = [e['name'] for e in ev if e['ph'] == 'X' and e['pid'] == 1 and e.get('cat') == 'dma.stall']
if sorted(set(stalls)) != ['stall: base latency', 'stall: transfer']:
    errs.append('stall phases: %r' % stalls)
if not [e for e in ev if e['ph'] == 'X' and e.get('cat') == 'dma.slack']:
    errs.append('no slack phase')
# flows: every s has one f with the same id, later or equal
flows = defaultdict(dict)
for e in ev:
    if e['ph'] in ('s', 'f'):
        if 'id' not in e:
            errs.append('flow without id: %r' % e)
        flows[e['id']][e['ph']] = e
if len(flows) != 10:
    errs.append('want 10 flows (5 DMAs x 2 files), got %d' % len(flows))
for i, p in flows.items():
    if set(p) != {'s', 'f'} or p['f']['ts'] < p['s']['ts']:
        errs.append('flow %r unpaired or backwards' % i)
counters = {e['name'] for e in ev if e['ph'] == 'C'}
if counters != {'VMEM occupied (KiB)', 'VMEM largest free region (KiB)'}:
    errs.append('counters: %r' % counters)
names = {e['args']['name'] for e in ev if e['ph'] == 'M' and e['name'] == 'thread_name'}
for n in ('scalar', 'vector', 'mxu', 'dma engine', 'link hbm0->vmem0 #0', 'link vmem0->hbm0 #0'):
    if n not in names:
        errs.append('no track %r' % n)
for e in errs[:20]:
    print('FAIL', e)
sys.exit(1 if errs else 0)
