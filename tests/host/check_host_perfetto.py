#!/usr/bin/env python3
"""Checks `snr export perfetto H.snrh M.snrm --launch K` (COMBINED) against
the trace-event format and against what the serving loop did, using
`snr export perfetto M.snrm` (SOLO, the window alone from time 0):
  - every event has ph/ts/pid/tid/name; X slices nest per track (instants
    count as zero-length slices); flows pair s -> f by id;
  - the host process names its threads; per thread the on-CPU and off-CPU
    slices never overlap, off-CPU slices carry state, waker and stacks, and
    those inside ta1rt_wait are in bucket H:WAIT_DEV with a futex kernel stack;
  - the calls track holds N ta1rt_launch (H:CTRL) and N ta1rt_wait
    (H:WAIT_DEV) slices; the TA1 device process holds N launches, launch j
    spanning from the j-th ta1rt_launch call's start to the end of the
    ta1rt_wait after it, each joined to its call by a flow;
  - the replayed window is SOLO shifted by launch K's start: same events,
    same durations, every timestamp + that start.
usage: check_host_perfetto.py COMBINED SOLO K N"""
import json, sys
from collections import defaultdict

comb = json.load(open(sys.argv[1]))['traceEvents']
solo = json.load(open(sys.argv[2]))['traceEvents']
K, N = int(sys.argv[3]), int(sys.argv[4])
errs = []
# Timestamps are exact decimals of whole nanoseconds, but on CLOCK_MONOTONIC
# after hours of uptime they are ~1e10 us, where a double's ts + dur is off by
# a few 1e-6 us: order and nesting are compared in integer nanoseconds.
def ns(us):
    return round(us * 1000)

for e in comb:
    for k in ('ph', 'ts', 'pid', 'tid', 'name'):
        if k not in e:
            errs.append('missing %s: %r' % (k, e))
    if e.get('ph') not in ('X', 'M', 's', 'f', 'C', 'i'):
        errs.append('unexpected phase %r' % e)
    if e.get('ph') == 'X' and not (isinstance(e.get('dur'), (int, float)) and e['dur'] >= 0):
        errs.append('X without dur >= 0: %r' % e)

tracks = defaultdict(list)
for e in comb:
    if e['ph'] in ('X', 'i'):
        tracks[(e['pid'], e['tid'])].append(e)
for key, xs in tracks.items():
    xs = sorted(xs, key=lambda e: (ns(e['ts']), -ns(e.get('dur', 0))))
    stack = []
    for e in xs:
        end = ns(e['ts']) + ns(e.get('dur', 0))
        while stack and stack[-1] <= ns(e['ts']):
            stack.pop()
        if stack and end > stack[-1]:
            errs.append('%s [%f, %f) overlaps its parent on %r' % (e['name'], e['ts'], end / 1e3, key))
            break
        stack.append(end)

flows = defaultdict(dict)
for e in comb:
    if e['ph'] in ('s', 'f'):
        flows[(e.get('cat'), e.get('id'))][e['ph']] = e
for i, p in flows.items():
    if set(p) != {'s', 'f'} or ns(p['f']['ts']) < ns(p['s']['ts']):
        errs.append('flow %r unpaired or backwards' % (i,))

procs = {e['pid']: e['args']['name'] for e in comb if e['ph'] == 'M' and e['name'] == 'process_name'}
hosts = [p for p, n in procs.items() if n.startswith('host: ')]
if len(hosts) != 1:
    errs.append('want one host process: %r' % procs)
    hosts = [None]
hp = hosts[0]
tnames = {(e['pid'], e['tid']): e['args']['name'] for e in comb if e['ph'] == 'M' and e['name'] == 'thread_name'}
main = [t for (p, t), n in tnames.items() if p == hp and n.startswith('ta1_serve ') and not n.endswith(' calls')]
dev = [t for (p, t), n in tnames.items() if p == hp and n.startswith('ta1-device ') and not n.endswith(' calls')]
if len(main) != 1 or len(dev) != 1:
    errs.append('want thread tracks ta1_serve and ta1-device: %r' % tnames)
    main, dev = main or [None], dev or [None]

# on/off-CPU slices per thread: disjoint, off-CPU with stacks
for tid in (main[0], dev[0]):
    cpu = sorted((e for e in comb if e['ph'] == 'X' and e['pid'] == hp and e['tid'] == tid
                  and e['cat'] in ('oncpu', 'offcpu')), key=lambda e: e['ts'])
    if not any(e['cat'] == 'oncpu' for e in cpu) or not any(e['cat'] == 'offcpu' for e in cpu):
        errs.append('thread %r: no on-CPU or no off-CPU slices' % tid)
    for a, b in zip(cpu, cpu[1:]):
        if ns(b['ts']) < ns(a['ts']) + ns(a['dur']):
            errs.append('thread %r: %s and %s overlap' % (tid, a['name'], b['name']))
            break
    for e in cpu:
        if e['cat'] == 'offcpu':
            a = e.get('args', {})
            if a.get('state') not in ('R', 'S', 'D', 'other') or 'waker' not in a or \
               not isinstance(a.get('user_stack'), list) or not isinstance(a.get('kernel_stack'), list):
                errs.append('off-CPU slice without state/waker/stacks: %r' % e)
                break
waits = [e for e in comb if e['ph'] == 'X' and e['pid'] == hp and e['tid'] == main[0] and e['cat'] == 'offcpu'
         and e['args'].get('bucket') == 'H:WAIT_DEV']
# the blocked waits (S) are in futex; a preemption inside ta1rt_wait (R, e.g.
# at its uprobe's int3 on a loaded machine) is not a wait
blocked = [e for e in waits if e['args'].get('state') == 'S' and e['dur'] > 100]
if not blocked or not all(any('futex' in f for f in e['args']['kernel_stack']) for e in blocked):
    errs.append('blocked off-CPU in H:WAIT_DEV without a futex kernel stack: %r' % (blocked or waits)[:2])
# ta1rt_wait's caller is named although its return address on the stack is
# the uretprobe's trampoline while the call is pending
for e in blocked:
    us = [f.split('+')[0] for f in e['args']['user_stack']]
    if 'ta1rt_wait' not in us or us.index('ta1rt_wait') + 1 >= len(us) or us[us.index('ta1rt_wait') + 1] != 'main':
        errs.append('a wait in ta1rt_wait without main as its caller: %r' % e['args']['user_stack'])
        break

calls = [e for e in comb if e['ph'] == 'X' and e['pid'] == hp and e['tid'] == 0x40000000 + main[0]]
launch_calls = sorted((e for e in calls if e['name'] == 'H:CTRL: ta1rt_launch'), key=lambda e: e['ts'])
wait_calls = sorted((e for e in calls if e['name'] == 'H:WAIT_DEV: ta1rt_wait'), key=lambda e: e['ts'])
if len(launch_calls) != N or len(wait_calls) != N:
    errs.append('want %d ta1rt_launch and ta1rt_wait calls, got %d and %d' % (N, len(launch_calls), len(wait_calls)))
ta1 = [p for p, n in procs.items() if n == 'TA1 device (libta1rt)']
launches = sorted((e for e in comb if e['ph'] == 'X' and ta1 and e['pid'] == ta1[0] and e['cat'] == 'ta1.launch'),
                  key=lambda e: e['ts'])
if len(launches) != N:
    errs.append('want %d device launches, got %d' % (N, len(launches)))
for j, (l, c, w) in enumerate(zip(launches, launch_calls, wait_calls)):
    if l['name'] != 'launch #%d' % (j + 1) or ns(l['ts']) != ns(c['ts']) or \
       abs(l['ts'] + l['dur'] - (w['ts'] + w['dur'])) > 1e-3:
        errs.append('launch #%d spans [%f, %f), want the call at %f to the wait ending %f' %
                    (j + 1, l['ts'], l['ts'] + l['dur'], c['ts'], w['ts'] + w['dur']))
    if ('ta1.launch', (1 << 40) | (j + 1)) not in flows:
        errs.append('no flow from launch call #%d to the device' % (j + 1))

# the replayed window: SOLO shifted by launch K's start
base = launch_calls[K - 1]['ts'] if len(launch_calls) >= K else 0
win = [p for p, n in procs.items() if n.endswith('(at ta1rt_launch #%d)' % K)]
if len(win) != 1:
    errs.append('want one replayed window placed at launch #%d: %r' % (K, procs))
else:
    sp = {e['pid'] for e in solo}
    a = [e for e in comb if e['pid'] == win[0] and e['ph'] != 'M']
    b = [e for e in solo if e['ph'] != 'M']
    if len(sp) != 1 or len(a) != len(b) or not a:
        errs.append('window: %d events, the window alone %d' % (len(a), len(b)))
    for x, y in zip(a, b):
        if (x['ph'], x['name'], x['tid']) != (y['ph'], y['name'], y['tid']) or \
           abs(x['ts'] - (y['ts'] + base)) > 1e-3 or abs(x.get('dur', 0) - y.get('dur', 0)) > 1e-6:
            errs.append('window event %r is not %r shifted by %f us' % (x, y, base))
            break

for e in errs[:20]:
    print('FAIL', e)
sys.exit(1 if errs else 0)
