#!/usr/bin/python3
"""check_perfetto_proto.py PROTO_DIR TRACE.pb TRACE.json: `snr export
perfetto --format proto` (TRACE.pb) holds what the JSON export of the same
inputs (TRACE.json) holds: the same processes and threads, every slice
(track, name, category, start and duration in ns, args), every instant (a
host trace's samples), every flow (from the same slice to the same slice)
and every counter value. The protobuf is
decoded by python3-protobuf against analyzer/perfetto_trace.proto (compiled
by protoc into PROTO_DIR), the slices rebuilt from their begin and end
events by nesting per track as Perfetto does."""
import json, sys
from collections import defaultdict

sys.path.insert(0, sys.argv[1])
import perfetto_trace_pb2 as P  # noqa: E402

errs = []


def args_of(e):
    """a JSON event's args as text, an empty array or object as None: in the protobuf it is a debug
    annotation with no value (Perfetto's messages have no empty container)"""
    def norm(v):
        if isinstance(v, dict):
            return {k: norm(x) for k, x in v.items()} if v else None
        if isinstance(v, list):
            return [norm(x) for x in v] if v else None
        return v
    return json.dumps({k: norm(v) for k, v in e.get('args', {}).items()}, sort_keys=True)


# ---- the JSON export
doc = json.load(open(sys.argv[3]))
ns = lambda us: round(us * 1000)  # noqa: E731
jnames, jslices, jflows, jcounters, jinstants = {}, [], {}, set(), []
by_track = defaultdict(list)
for e in doc['traceEvents']:
    if e['ph'] == 'M' and e['name'] in ('process_name', 'thread_name'):
        jnames[(e['pid'], e['tid'] if e['name'] == 'thread_name' else 0)] = e['args']['name']
    elif e['ph'] == 'X':
        s = (e['pid'], e['tid'], e['name'], e['cat'], ns(e['ts']), ns(e['dur']), args_of(e))
        jslices.append(s)
        by_track[(e['pid'], e['tid'])].append(s)
    elif e['ph'] == 'i':
        jinstants.append((e['pid'], e['tid'], e['name'], e['cat'], ns(e['ts']), args_of(e)))
    elif e['ph'] == 'C':
        for k, v in e['args'].items():
            jcounters.add((e['pid'], e['name'] + ' ' + k, ns(e['ts']), v))


def enclosing(pid, tid, t):
    """the innermost JSON slice on the track that holds time t (ns)"""
    best = None
    for s in by_track[(pid, tid)]:
        if s[4] <= t < s[4] + max(s[5], 1) and (best is None or s[5] < best[5]):
            best = s
    return best


for e in doc['traceEvents']:
    if e['ph'] in ('s', 'f'):
        s = enclosing(e['pid'], e['tid'], ns(e['ts']))
        jflows.setdefault(e['id'], {})[e['ph']] = s[:5] if s else None

# ---- the protobuf export
t = P.Trace()
t.ParseFromString(open(sys.argv[2], 'rb').read())
names, cats, anames, astrings = {}, {}, {}, {}
tracks, counters = {}, {}
pnames, pslices, pflows, pcounters, pinstants = {}, [], {}, set(), []
open_ = defaultdict(list)
# as Perfetto's trace processor does: interned data and descriptors in the file's order
# (each interned name before its first use), then the events sorted by timestamp (a stable
# sort: ties keep the file's order)
if not t.packet or not t.packet[0].sequence_flags & 1:
    errs.append('the first packet does not clear the incremental state')
for p in t.packet:
    if p.HasField('interned_data'):
        i = p.interned_data
        names.update({x.iid: x.name for x in i.event_names})
        cats.update({x.iid: x.name for x in i.event_categories})
        anames.update({x.iid: x.name for x in i.debug_annotation_names})
        astrings.update({x.iid: x.str.decode() for x in i.debug_annotation_string_values})
    if p.HasField('track_descriptor'):
        d = p.track_descriptor
        if d.HasField('thread'):
            tracks[d.uuid] = (d.thread.pid, d.thread.tid)
            pnames[(d.thread.pid, d.thread.tid)] = d.thread.thread_name
        elif d.HasField('process'):
            tracks[d.uuid] = (d.process.pid, 0)
            pnames[(d.process.pid, 0)] = d.process.process_name
        elif d.HasField('counter'):
            counters[d.uuid] = (tracks[d.parent_uuid][0], d.name)
    if p.HasField('track_event') and p.track_event.type == P.TrackEvent.TYPE_SLICE_BEGIN:
        te = p.track_event
        used = [te.name_iid] if te.HasField('name_iid') else []
        if not p.sequence_flags & 2:
            errs.append('a packet using interned names does not say it needs the incremental state')
        if any(i not in names for i in used) or any(i not in cats for i in te.category_iids):
            errs.append('a name used before it is interned: %r' % te)
            break
for k in sorted(range(len(t.packet)), key=lambda k: (t.packet[k].timestamp, k)):
    p = t.packet[k]
    if not p.HasField('track_event'):
        continue
    te = p.track_event

    def value(a):
        if a.dict_entries:
            return {anames[x.name_iid] if x.HasField('name_iid') else x.name: value(x) for x in a.dict_entries}
        if a.array_values:
            return [value(x) for x in a.array_values]
        for f in ('int_value', 'uint_value', 'double_value', 'bool_value', 'string_value'):
            if a.HasField(f):
                return getattr(a, f)
        if a.HasField('string_value_iid'):
            return astrings[a.string_value_iid]
        return None

    if te.type == P.TrackEvent.TYPE_INSTANT:
        args = {anames[a.name_iid] if a.HasField('name_iid') else a.name: value(a) for a in te.debug_annotations}
        name = names[te.name_iid] if te.HasField('name_iid') else te.name
        cat = cats[te.category_iids[0]] if te.category_iids else te.categories[0]
        pid, tid = tracks.get(te.track_uuid, (None, None))
        pinstants.append((pid, tid, name, cat, p.timestamp, json.dumps(args, sort_keys=True)))
    if te.type == P.TrackEvent.TYPE_SLICE_BEGIN:
        args = {anames[a.name_iid] if a.HasField('name_iid') else a.name: value(a) for a in te.debug_annotations}
        name = names[te.name_iid] if te.HasField('name_iid') else te.name
        cat = cats[te.category_iids[0]] if te.category_iids else te.categories[0]
        open_[te.track_uuid].append([name, cat, p.timestamp, args, list(te.flow_ids), list(te.terminating_flow_ids)])
    elif te.type == P.TrackEvent.TYPE_SLICE_END:
        if not open_[te.track_uuid]:
            errs.append('an end with no slice open on track %d at %d' % (te.track_uuid, p.timestamp))
            continue
        name, cat, ts, args, out, end = open_[te.track_uuid].pop()
        pid, tid = tracks[te.track_uuid]
        s = (pid, tid, name, cat, ts, p.timestamp - ts, json.dumps(args, sort_keys=True))
        pslices.append(s)
        for f in out:
            pflows.setdefault(f, {})['s'] = s[:5]
        for f in end:
            pflows.setdefault(f, {})['f'] = s[:5]
    elif te.type == P.TrackEvent.TYPE_COUNTER:
        pid, name = counters[te.track_uuid]
        pcounters.add((pid, name, p.timestamp, te.counter_value))
left = sum(len(v) for v in open_.values())
if left:
    errs.append('%d slices never end' % left)

if pnames != jnames:
    errs.append('process and thread names: protobuf %r, JSON %r' % (pnames, jnames))
if sorted(pslices) != sorted(jslices):
    a, b = set(pslices), set(jslices)
    errs.append('slices: %d in protobuf, %d in JSON; only in protobuf %r; only in JSON %r' %
                (len(pslices), len(jslices), sorted(a - b)[:3], sorted(b - a)[:3]))
if pflows != jflows or not jflows:
    diff = [k for k in set(pflows) | set(jflows) if pflows.get(k) != jflows.get(k)]
    errs.append('flows: %d in protobuf, %d in JSON; differing %r' %
                (len(pflows), len(jflows), [(k, pflows.get(k), jflows.get(k)) for k in diff[:3]]))
if pcounters != jcounters or not jcounters:
    errs.append('counters: %d in protobuf, %d in JSON' % (len(pcounters), len(jcounters)))
if sorted(pinstants) != sorted(jinstants):
    a, b = set(pinstants), set(jinstants)
    errs.append('instants: %d in protobuf, %d in JSON; only in protobuf %r; only in JSON %r' %
                (len(pinstants), len(jinstants), sorted(a - b)[:3], sorted(b - a)[:3]))
for e in errs:
    print('FAIL', e)
if not errs:
    print('protobuf = JSON: %d slices, %d instants, %d flows, %d counter values, %d tracks' %
          (len(pslices), len(pinstants), len(pflows), len(pcounters), len(pnames)))
sys.exit(1 if errs else 0)
