#!/usr/bin/env python3
"""Known answers of tests/an/an_prog.c (its header comment derives them)."""
import json, sys

dma, vmem, util = (json.load(open(p)) for p in sys.argv[1:4])
errs = []
def want(what, got, exp):
    if got != exp:
        errs.append('%s: got %r, want %r' % (what, got, exp))

assert dma['schema'] == 'snr.analyze.dma/1'
by = {d['id']: d for d in dma['dmas']}
want('dma count', sorted(by), [1, 2, 3, 4, 5])
exp = {  # id: (case, stall_base, stall_transfer, slack, transfer_cycles, bytes, link)
    1: ('base+transfer', 500, 10, 0, 10, 12000, 'hbm0->vmem0'),
    2: ('transfer', 0, 50, 0, 100, 120000, 'hbm0->vmem0'),
    3: ('slack', 0, 0, 90, 10, 12000, 'hbm0->vmem0'),
    4: ('base+transfer', 500, 2, 0, 2, 2048, 'hbm0->vmem0'),
    5: ('base+transfer', 500, 2, 0, 2, 2048, 'vmem0->hbm0'),
}
for i, e in exp.items():
    d = by.get(i)
    if not d:
        continue
    got = (d['case'], d['stall_base_cycles'], d['stall_transfer_cycles'], d['slack_cycles'], d['transfer_cycles'],
           d['bytes'], d['link'])
    want('dma %d' % i, got, e)
    want('dma %d start = issue + 1 + Tb' % i, d['start_cycle'], d['issue']['cycle'] + 501)
    want('dma %d complete' % i, d['complete_cycle'], d['start_cycle'] + e[4])
    want('dma %d issue symbol' % i, (d['issue']['symbol'] or '').split('+')[0], 'window')
    if e[0] != 'slack':
        want('dma %d wait = complete' % i, d['wait']['cycle'], d['complete_cycle'])
want('dma 2: WAIT 551 cycles after ISSUE', by[2]['wait']['cycle'] - by[2]['issue']['cycle'], 601)
want('sorted by stall', [d['id'] for d in dma['dmas']], [1, 4, 5, 2, 3])
want('totals', {k: dma['totals'][k] for k in ('stall_base_cycles', 'stall_transfer_cycles', 'slack_cycles')},
     {'stall_base_cycles': 1500, 'stall_transfer_cycles': 64, 'slack_cycles': 90})

assert vmem['schema'] == 'snr.analyze.vmem/1'
want('vmem geometry', (vmem['pages'], vmem['page_bytes'], vmem['blocks'], vmem['pages_per_block']),
     (32768, 1024, 128, 256))
want('page classes', vmem['page_classes'], {'used': 2, 'unused': 142, 'livein': 0, 'untouched': 32768 - 144})
s = vmem['samples']
want('interval', vmem['interval_cycles'], 1)
want('max occupied', max(x['occupied_pages'] for x in s), 144)
tight = min(s, key=lambda x: x['largest_free_pages'])
want('smallest largest-free region', (tight['largest_free_pages'], tight['largest_free_first_page']), (19732, 268))
want('last sample', (s[-1]['occupied_pages'], s[-1]['unused_pages'], s[-1]['largest_free_pages'],
                     s[-1]['largest_free_first_page']), (142, 142, 32500, 268))
held = [x for x in s if x['used_pages'] == 2]
want('pages 20000-20001 held from #4 completion to #5 transfer',
     (held[0]['cycle'], held[-1]['cycle']) if held else None, (by[4]['complete_cycle'], by[5]['active_cycle']))
hm = vmem['heatmap']
want('heatmap shape', (len(hm), len(hm[-1])), (len(s), 128))
want('heatmap last sample, blocks 0, 1, 78', (hm[-1][0], hm[-1][1], hm[-1][78]), (130, 12, 0))
med = vmem['medians']
if not (abs(med['free_pct'] - 100 * (32768 - 142) / 32768) < 0.5 and med['largest_free_pct'] <= med['free_pct']):
    errs.append('medians %r' % med)

assert util['schema'] == 'snr.analyze.util/1'
cyc = util['source']['cycles']
tot = util['total']
want('units', util['units'][:5], ['scalar', 'vector', 'mxu', 'dma', 'hbm_bw'])
want('link hbm0->vmem0 busy cycles', round(tot['hbm0->vmem0'] * cyc), 10 + 100 + 10 + 2)
want('link vmem0->hbm0 busy cycles', round(tot['vmem0->hbm0'] * cyc), 2)
want('dma engine busy cycles', round(tot['dma'] * cyc), 124)
want('one window', len(util['windows']), 1)
want('hbm bytes / B_hbm', round(tot['hbm_bw'] * cyc * 1200), 148096)

for e in errs:
    print('FAIL', e)
sys.exit(1 if errs else 0)
