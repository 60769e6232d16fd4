#!/usr/bin/env python3
"""On/off-device of a recorded ta1_serve run, worked out independently of
analyzer/host_device.c from the raw probe intervals in the trace-event
export, and compared with `snr host report --json` to the nanosecond.

usage: check_host_device.py REPORT.json EVENTS.json LAUNCHES SELF_WAIT_S MODE
"""
import json
import sys

CALLS = 0x40000000
ONDEV = 0x70000000
PID_TA1 = 900000


def ns(us):
    return round(us * 1000)


def union(ivs):
    """Sorted disjoint union of [a, b) intervals."""
    out = []
    for a, b in sorted(ivs):
        if b <= a:
            continue
        if out and a <= out[-1][1]:
            out[-1][1] = max(out[-1][1], b)
        else:
            out.append([a, b])
    return out


def length(ivs):
    return sum(b - a for a, b in ivs)


def intersect(x, y):
    out, i, j = [], 0, 0
    while i < len(x) and j < len(y):
        a, b = max(x[i][0], y[j][0]), min(x[i][1], y[j][1])
        if b > a:
            out.append([a, b])
        if x[i][1] < y[j][1]:
            i += 1
        else:
            j += 1
    return out


def main():
    rep = json.load(open(sys.argv[1]))
    events = json.load(open(sys.argv[2]))['traceEvents']
    launches, self_wait, mode = int(sys.argv[3]), float(sys.argv[4]), sys.argv[5]
    errors = []

    def check(cond, what):
        if not cond:
            errors.append(what)

    calls = {}
    for e in events:
        if e.get('ph') == 'X' and e.get('tid', 0) >= CALLS and e['tid'] < CALLS + 0x10000000 and 'args' in e:
            a = ns(e['ts'])
            calls.setdefault(e['args']['call'], []).append((a, a + ns(e['dur']), e['tid'] - CALLS))
    for k in calls:
        calls[k].sort()
    launch, upload, run, wait = (calls.get(k, []) for k in
                                 ('ta1rt_launch', 'ta1rt_device_upload', 'ta1rt_device_run', 'ta1rt_wait'))
    check(len(launch) == launches and len(upload) == launches and len(run) == launches and len(wait) == launches,
          'want %d launches, uploads, runs and waits: %d %d %d %d' %
          (launches, len(launch), len(upload), len(run), len(wait)))

    t0, t1 = rep['t_start_ns'], rep['t_end_ns']
    devs = rep['on_off_device']['devices']
    check(len(devs) == 1, 'one device, not %d' % len(devs))
    d = devs[0]
    compute = union([(a, b) for a, b, _ in run])
    xfer = union([(a, b) for a, b, _ in upload])
    on = union(compute + xfer)
    both = intersect(compute, xfer)
    # launch k (in call order) is queued from its call to its upload
    queued_spans = union([(launch[k][0], upload[k][0]) for k in range(min(len(launch), len(upload)))])
    busy_or_queued = union(on + queued_spans)
    want = {
        'window_ns': t1 - t0,
        'on_device_ns': length(on),
        'both_ns': length(both),
        'compute_only_ns': length(compute) - length(both),
        'transfer_only_ns': length(xfer) - length(both),
        'queued_ns': length(busy_or_queued) - length(on),
        'idle_ns': (t1 - t0) - length(busy_or_queued),
    }
    for k, v in want.items():
        check(d[k] == v, '%s: report %d, from the intervals %d' % (k, d[k], v))
    check(d['both_ns'] == 0, 'libta1rt runs upload and run in turn on one thread: no overlap')
    check(abs(d['active_ratio'] - length(on) / (t1 - t0)) < 1e-12, 'active ratio %r' % d['active_ratio'])
    parts = sum(d[k] for k in ('compute_only_ns', 'transfer_only_ns', 'both_ns', 'queued_ns', 'idle_ns'))
    check(parts == d['window_ns'], 'the parts add up to %d, not the window %d' % (parts, d['window_ns']))

    # the k-th wait follows the k-th launch on the main thread: it is held by
    # run k exactly when run k ends inside it
    hw = rep['on_off_device']['host_waits']
    waits = sorted(hw['waits'], key=lambda w: w['start_ns'])
    held = 0
    for k, w in enumerate(waits):
        ws, we = w['start_ns'], w['end_ns']
        check((ws, we) == wait[k][:2], 'wait %d is %r in the report, %r in the trace' % (k + 1, (ws, we), wait[k][:2]))
        r = run[k]
        if ws < r[1] <= we:
            held += 1
            eb = w['ended_by']
            check(eb is not None and eb['name'] == 'ta1rt_device_run' and eb['seq'] == k + 1 and
                  eb['end_ns'] == r[1], 'wait %d should be ended by run #%d: %r' % (k + 1, k + 1, eb))
        else:
            check(r[1] <= ws, 'run %d ends after its wait returned' % (k + 1))
            check(w['ended_by'] is None, 'wait %d began after run #%d ended: held by nothing, not %r' %
                  (k + 1, k + 1, w['ended_by']))
    check(hw['linked'] == held, 'linked %d, want %d' % (hw['linked'], held))
    # the device while the linked waits ran, by the same split
    during = {'compute_only': 0, 'transfer_only': 0, 'both': 0, 'queued': 0, 'idle': 0}
    for w in waits:
        if w['ended_by'] is None:
            continue
        span = [[w['start_ns'], w['end_ns']]]
        c, x = length(intersect(span, compute)), length(intersect(span, xfer))
        b = length(intersect(span, both))
        q = length(intersect(span, busy_or_queued)) - length(intersect(span, on))
        during['compute_only'] += c - b
        during['transfer_only'] += x - b
        during['both'] += b
        during['queued'] += q
        during['idle'] += (w['end_ns'] - w['start_ns']) - length(intersect(span, busy_or_queued))
    check(hw['during_ns'] == during, 'during the waits: report %r, from the intervals %r' % (hw['during_ns'], during))
    total = sum(b - a for a, b, _ in wait)
    check(hw['ns'] == total, 'host wait %d ns, want %d' % (hw['ns'], total))
    # the program's own clock around its ta1rt_wait calls: the probed call
    # lies inside that bracket; with real waits (plain) within 5% of it
    # (near-zero waits, as in overlap, are mostly the bracket's own cost)
    check(total / 1e9 <= self_wait + 1e-6,
          'H:WAIT_DEV %.6f s, more than ta1_serve measured around its ta1rt_wait calls, %.6f s' %
          (total / 1e9, self_wait))
    if mode == 'plain':
        check(total / 1e9 >= 0.95 * self_wait,
              'H:WAIT_DEV %.6f s, ta1_serve measured %.6f s inside ta1rt_wait' % (total / 1e9, self_wait))
    if mode == 'plain':
        # the host waits right after each launch: every run ends inside a wait
        check(held == launches, 'plain loop: %d of %d waits held by their run' % (held, launches))
    else:
        # the host tokenizes 150x longer than usual first: the device is
        # usually done before the wait begins
        check(held < launches, 'overlap: every wait still held by its run (%d)' % held)

    # Perfetto: one flow per held wait, from the main thread's calls track to
    # the run on the device's compute track
    starts = [e for e in events if e.get('cat') == 'ondev.wait' and e['ph'] == 's']
    ends = [e for e in events if e.get('cat') == 'ondev.wait' and e['ph'] == 'f']
    check(len(starts) == held and len(ends) == held, 'flows %d/%d, want %d' % (len(starts), len(ends), held))
    by_id = {e['id']: e for e in ends}
    main_tid = wait[0][2] if wait else 0
    for s in starts:
        f = by_id.get(s['id'])
        check(f is not None and s['tid'] == CALLS + main_tid and f['pid'] == PID_TA1 and f['tid'] == ONDEV + 1,
              'flow %r -> %r' % (s, f))
        if f:
            check(any(r[0] <= ns(f['ts']) < r[1] for r in run), 'flow ends outside every run: %r' % f)
    print('%s: window %.3f ms, on-device %.3f ms (compute %.3f, transfer %.3f), queued %.3f, idle %.3f, '
          'active %.1f%%; %d of %d waits held by the device' %
          (mode, want['window_ns'] / 1e6, want['on_device_ns'] / 1e6, length(compute) / 1e6, length(xfer) / 1e6,
           want['queued_ns'] / 1e6, want['idle_ns'] / 1e6, 100 * d['active_ratio'], held, launches))
    for e in errors:
        print('FAIL:', e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == '__main__':
    sys.exit(main())
