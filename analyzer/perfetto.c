/*
 * perfetto.c: `snr export perfetto FILES... -o trace.json`, the Chrome
 * trace-event JSON format that ui.perfetto.dev and chrome://tracing open.
 * One process per input file; in it one thread (track) per unit (scalar,
 * vector, MXU, DMA engine), one for the core's DMA ISSUE and WAIT
 * instructions, and per DMA link as many lanes as its overlapping DMAs need
 * (base latencies overlap: they are not accumulative). A DMA on a lane is
 * one complete ("X") slice with its phases nested inside it: base latency,
 * transfer (queueing included, as the model counts it), the WAIT's stall
 * on it (base or transfer, nested in that phase), and slack. Flow events
 * (s -> f) join each ISSUE to its WAIT. Counters (C) give VMEM occupancy and
 * the largest contiguous free region at the vmem analysis's samples.
 * Timestamps are microseconds: cycle * 1e6 / clock_hz.
 *
 * Host traces (.snrh, `snr host record`, told apart by their magic) go on
 * the same timeline: their threads, calls, libta1rt launches and CUPTI
 * records (analyzer/host_events.c) on CLOCK_MONOTONIC, and each
 * replayed window shifted onto that clock: it starts where the host trace's
 * matching ta1rt_launch call starts (--launch N, or the only launch), else
 * where the host trace starts; cycles still become time through the
 * config's clock_hz. docs/host.md explains the choice.
 *
 * Large windows are written in Perfetto's own protobuf trace format
 * instead (--format proto, or by default where the JSON would exceed
 * JSON_MAX_BYTES): the same tracks, slices (as begin and end events, in
 * the order that nests them), flows and counters, encoded by protobuf-c
 * from analyzer/perfetto_trace.proto (the subset of Perfetto's messages
 * used), with event, category and argument names interned. Host traces
 * too (--format proto; auto keeps JSON for them): their events as the JSON
 * has them, each flow on the slice that holds it (put_proto).
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "analyzer/pcinfo.h"
#include "lib/snr_outfile.h"
#include "lib/snr_output.h"
#include "lib/snr_partial.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"
#include "analyzer/host_events.h"
#include "lib/snr_host_trace.h"
#include "perfetto_trace.pb-c.h"

/* `--format auto` writes JSON up to this size and protobuf beyond; the JSON
 * costs about JSON_EVENT_BYTES per event (a 1M-instruction serving window:
 * 53 MB for 292k events), the protobuf about a quarter of that */
#define JSON_MAX_BYTES (100ull << 20)
#define JSON_EVENT_BYTES 190

typedef Perfetto__Protos__TracePacket Packet;
typedef Perfetto__Protos__TrackEvent TrackEvent;
typedef Perfetto__Protos__DebugAnnotation Annotation;
typedef Perfetto__Protos__InternedData Interned;
typedef Perfetto__Protos__EventName EventName;

/* A track's slices still open (their ends), so that each slice's end is
 * written before anything that begins at or after it on the track */
#define DEPTH 16
struct track {
	uint64_t end[DEPTH];
	int depth;
	uint64_t last_start;
};

/* The protobuf writer: one packet sequence; names interned in it */
struct proto {
	json_t *iids[4];    /* event names, categories, annotation names, annotation strings -> iid */
	json_t *counters;   /* "pid name" -> counter track uuid */
	json_t *track_of;   /* track uuid (text) -> index in tracks */
	json_t *args_cache; /* an instruction's args after its "index" -> the parsed object */
	struct track *tracks;
	size_t ntracks, last_track;
	uint64_t last_uuid;
	bool started;
	uint64_t out_of_order; /* slices that began before an earlier one on their track */
	/* the interned data of the packet being built */
	void *fresh[4][64]; /* EventName, EventCategory, DebugAnnotationName, InternedString */
	size_t nfresh[4];
	uint8_t *buf; /* a packet's bytes, packed in one pass (see packet_write) */
	size_t buf_cap;
};


enum { TID_SCALAR = 1, TID_VECTOR, TID_MXU, TID_DMA, TID_DMAOPS, TID_LINK0 = 100, LANES = 32 };

struct out {
	FILE *f;
	bool first;
	int64_t base_ns;  /* where cycle 0 of the replayed window lies on the output's clock */
	struct proto *pb; /* NULL: trace-event JSON */
};

/* ---- the protobuf writer ---------------------------------------------- */

/* a track's uuid: small numbers are short varints (a replayed window's
 * pids and tids, below 2^32); a host trace's real pids and its tids with
 * flags (analyzer/host_events.h) take the wide form, 2^32 and up */
static uint64_t track_uuid(int pid, int tid)
{
	if ((uint32_t)pid < 4096 && (uint32_t)tid < (1u << 20))
		return (uint64_t)pid << 20 | (uint32_t)tid;
	return (uint64_t)(uint32_t)pid << 32 | (uint32_t)tid;
}

/* s's iid among kind's strings (0 event names, 1 categories, 2 annotation
 * names, 3 annotation string values); a new one goes into the packet's
 * interned data. 0: no room left in this packet (say it inline). */
static uint64_t intern(struct proto *pb, int kind, const char *s)
{
	json_t *k = json_object_get(pb->iids[kind], s);
	if (k)
		return (uint64_t)json_integer_value(k);
	if (pb->nfresh[kind] == 64)
		return 0;
	uint64_t iid = json_object_size(pb->iids[kind]) + 1;
	json_object_set_new(pb->iids[kind], s, json_integer((json_int_t)iid));
	if (kind == 3) {
		Perfetto__Protos__InternedString *e = snr_xcalloc(1, sizeof(*e));
		perfetto__protos__interned_string__init(e);
		e->has_iid = e->has_str = true;
		e->iid = iid;
		e->str.data = (uint8_t *)snr_xstrdup(s);
		e->str.len = strlen(s);
		pb->fresh[kind][pb->nfresh[kind]++] = e;
		return iid;
	}
	/* EventName, EventCategory and DebugAnnotationName are the same
	 * {iid, name}; each is initialized with its own descriptor */
	EventName *e = snr_xcalloc(1, sizeof(*e));
	static const ProtobufCMessageDescriptor *desc[3] = {
	    &perfetto__protos__event_name__descriptor, &perfetto__protos__event_category__descriptor,
	    &perfetto__protos__debug_annotation_name__descriptor};
	protobuf_c_message_init(desc[kind], e);
	e->has_iid = true;
	e->iid = iid;
	e->name = snr_xstrdup(s);
	pb->fresh[kind][pb->nfresh[kind]++] = e;
	return iid;
}

/* p (with any names interned for it) as one packet of the sequence;
 * interned: p refers to interned names */
static void packet_write(struct out *o, Packet *p, bool interned)
{
	struct proto *pb = o->pb;
	Interned in = PERFETTO__PROTOS__INTERNED_DATA__INIT;
	p->has_trusted_packet_sequence_id = true;
	p->trusted_packet_sequence_id = 1;
	/* the first packet clears the sequence's incremental state (interned
	 * names), and each packet that uses it says so */
	p->sequence_flags = (pb->started ? 0 : 1) | (interned ? 2 : 0);
	p->has_sequence_flags = p->sequence_flags != 0;
	pb->started = true;
	if (pb->nfresh[0] || pb->nfresh[1] || pb->nfresh[2] || pb->nfresh[3]) {
		in.n_event_names = pb->nfresh[0];
		in.event_names = (EventName **)pb->fresh[0];
		in.n_event_categories = pb->nfresh[1];
		in.event_categories = (Perfetto__Protos__EventCategory **)pb->fresh[1];
		in.n_debug_annotation_names = pb->nfresh[2];
		in.debug_annotation_names = (Perfetto__Protos__DebugAnnotationName **)pb->fresh[2];
		in.n_debug_annotation_string_values = pb->nfresh[3];
		in.debug_annotation_string_values = (Perfetto__Protos__InternedString **)pb->fresh[3];
		p->interned_data = &in;
	}
	/* a Trace of one packet is that packet as a field of the whole Trace:
	 * the file is their concatenation */
	Perfetto__Protos__Trace t = PERFETTO__PROTOS__TRACE__INIT;
	t.n_packet = 1;
	t.packet = &p;
	/* sized once and packed into memory, then one write: protobuf-c's
	 * pack_to_buffer sizes every nested message again at each level of
	 * nesting and hands the file every field on its own (a third of the
	 * export's time); pack() writes the same bytes */
	size_t len = perfetto__protos__trace__get_packed_size(&t);
	if (len > pb->buf_cap) {
		pb->buf_cap = len > 2 * pb->buf_cap ? len : 2 * pb->buf_cap;
		pb->buf = snr_xrealloc(pb->buf, pb->buf_cap);
	}
	fwrite(pb->buf, 1, perfetto__protos__trace__pack(&t, pb->buf), o->f);
	p->interned_data = NULL;
	for (int k = 0; k < 4; k++) {
		for (size_t i = 0; i < pb->nfresh[k]; i++) {
			if (k == 3)
				free(((Perfetto__Protos__InternedString *)pb->fresh[k][i])->str.data);
			else
				free(((EventName *)pb->fresh[k][i])->name);
			free(pb->fresh[k][i]);
		}
		pb->nfresh[k] = 0;
	}
}

static void track_describe(struct out *o, int pid, int tid, const char *name)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
	Perfetto__Protos__ProcessDescriptor pd = PERFETTO__PROTOS__PROCESS_DESCRIPTOR__INIT;
	Perfetto__Protos__ThreadDescriptor th = PERFETTO__PROTOS__THREAD_DESCRIPTOR__INIT;
	td.has_uuid = true;
	td.uuid = track_uuid(pid, tid);
	if (tid) {
		td.has_parent_uuid = true;
		td.parent_uuid = track_uuid(pid, 0);
		th.has_pid = th.has_tid = true;
		th.pid = pid;
		th.tid = tid;
		th.thread_name = (char *)name;
		td.thread = &th;
	} else {
		pd.has_pid = true;
		pd.pid = pid;
		pd.process_name = (char *)name;
		td.process = &pd;
	}
	p.track_descriptor = &td;
	packet_write(o, &p, false);
}

/* a JSON value as a debug annotation named name (NULL: an array element) */
static Annotation *annotation_of(struct proto *pb, const char *name, json_t *v)
{
	Annotation *a = snr_xcalloc(1, sizeof(*a));
	perfetto__protos__debug_annotation__init(a);
	if (name) {
		a->name_iid = intern(pb, 2, name);
		a->has_name_iid = a->name_iid != 0;
		if (!a->has_name_iid)
			a->name = snr_xstrdup(name);
	}
	if (json_is_integer(v)) {
		a->has_int_value = true;
		a->int_value = json_integer_value(v);
	} else if (json_is_real(v)) {
		a->has_double_value = true;
		a->double_value = json_real_value(v);
	} else if (json_is_boolean(v)) {
		a->has_bool_value = true;
		a->bool_value = json_is_true(v);
	} else if (json_is_string(v)) {
		a->string_value_iid = intern(pb, 3, json_string_value(v));
		a->has_string_value_iid = a->string_value_iid != 0;
		if (!a->has_string_value_iid)
			a->string_value = snr_xstrdup(json_string_value(v));
	} else if (json_is_object(v)) {
		const char *k;
		json_t *e;
		a->dict_entries = snr_xcalloc(json_object_size(v) + 1, sizeof(*a->dict_entries));
		json_object_foreach(v, k, e) a->dict_entries[a->n_dict_entries++] = annotation_of(pb, k, e);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *e;
		a->array_values = snr_xcalloc(json_array_size(v) + 1, sizeof(*a->array_values));
		json_array_foreach(v, i, e) a->array_values[a->n_array_values++] = annotation_of(pb, NULL, e);
	} else {
		a->string_value = snr_xstrdup("null");
	}
	return a;
}

static void annotation_free(Annotation *a)
{
	for (size_t i = 0; i < a->n_dict_entries; i++)
		annotation_free(a->dict_entries[i]);
	for (size_t i = 0; i < a->n_array_values; i++)
		annotation_free(a->array_values[i]);
	free(a->dict_entries);
	free(a->array_values);
	free(a->string_value);
	free(a->name);
	free(a);
}

static struct track *track_state(struct proto *pb, uint64_t uuid)
{
	/* the last track asked for, again: the common case */
	if (pb->last_track < pb->ntracks && pb->last_uuid == uuid)
		return &pb->tracks[pb->last_track];
	char key[24];
	snprintf(key, sizeof(key), "%llu", (unsigned long long)uuid);
	json_t *k = json_object_get(pb->track_of, key);
	pb->last_uuid = uuid;
	if (k) {
		pb->last_track = (size_t)json_integer_value(k);
		return &pb->tracks[pb->last_track];
	}
	pb->tracks = snr_xrealloc(pb->tracks, (pb->ntracks + 1) * sizeof(*pb->tracks));
	memset(&pb->tracks[pb->ntracks], 0, sizeof(*pb->tracks));
	json_object_set_new(pb->track_of, key, json_integer((json_int_t)pb->ntracks));
	pb->last_track = pb->ntracks;
	return &pb->tracks[pb->ntracks++];
}

static void slice_end_write(struct out *o, uint64_t uuid, uint64_t ns)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	p.has_timestamp = true;
	p.timestamp = ns;
	te.has_type = te.has_track_uuid = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_END;
	te.track_uuid = uuid;
	p.track_event = &te;
	packet_write(o, &p, false);
}

/* the ends of the slices on track t that end by ns */
static void track_close(struct out *o, uint64_t uuid, struct track *t, uint64_t ns)
{
	while (t->depth && t->end[t->depth - 1] <= ns)
		slice_end_write(o, uuid, t->end[--t->depth]);
}

/* A track event's name, category and args (a JSON object's members, or
 * an instruction's: insn_label's "index":N then what its pc gives, parsed
 * once per pc), interned where there is room; what it holds is freed by
 * named_free after the packet is written */
struct named {
	uint64_t cat_iid;
	char *cats[1];
	json_t *aj;
};

static void named_event(struct proto *pb, TrackEvent *te, struct named *n, const char *name, const char *cat,
			const char *args)
{
	uint64_t name_iid = intern(pb, 0, name);
	n->cat_iid = intern(pb, 1, cat);
	te->has_name_iid = name_iid != 0;
	te->name_iid = name_iid;
	te->name = name_iid ? NULL : (char *)name;
	te->n_category_iids = n->cat_iid ? 1 : 0;
	te->category_iids = &n->cat_iid;
	n->cats[0] = (char *)cat;
	te->n_categories = n->cat_iid ? 0 : 1;
	te->categories = n->cats;
	json_t *aj = NULL;
	const char *rest = args;
	long long index = 0;
	bool has_index = false;
	if (args && !strncmp(args, "\"index\":", 8)) {
		char *e;
		index = strtoll(args + 8, &e, 10);
		if (*e == ',' || !*e) {
			has_index = true;
			rest = *e ? e + 1 : e;
		}
	}
	if (rest && rest[0]) {
		aj = has_index ? json_incref(json_object_get(pb->args_cache, rest)) : NULL;
		if (!aj) {
			size_t len = strlen(rest);
			char *b = snr_xmalloc(len + 3);
			b[0] = '{';
			memcpy(b + 1, rest, len);
			b[len + 1] = '}';
			b[len + 2] = 0;
			aj = json_loadb(b, len + 2, 0, NULL);
			free(b);
			if (aj && has_index)
				json_object_set(pb->args_cache, rest, aj);
		}
	}
	n->aj = aj;
	size_t nann = (aj ? json_object_size(aj) : 0) + has_index;
	if (nann) {
		te->debug_annotations = snr_xcalloc(nann, sizeof(*te->debug_annotations));
		if (has_index) {
			json_t *ij = json_integer(index);
			te->debug_annotations[te->n_debug_annotations++] = annotation_of(pb, "index", ij);
			json_decref(ij);
		}
		const char *k;
		json_t *v;
		json_object_foreach(aj, k, v) te->debug_annotations[te->n_debug_annotations++] =
		    annotation_of(pb, k, v);
	}
}

static void named_free(TrackEvent *te, struct named *n)
{
	for (size_t i = 0; i < te->n_debug_annotations; i++)
		annotation_free(te->debug_annotations[i]);
	free(te->debug_annotations);
	json_decref(n->aj);
}

/* A slice [start_ns, end_ns) as its begin event (its end is written when
 * the next slice on the track begins at or after it, or at the end); args
 * as named_event takes them. Slices must come in their track's order: by
 * start, an enclosing one first. */
static void proto_slice(struct out *o, int pid, int tid, const char *name, const char *cat, int64_t start_ns,
			int64_t end_ns, const char *args, const uint64_t *flows, size_t nflows,
			const uint64_t *ends, size_t nends)
{
	struct proto *pb = o->pb;
	uint64_t uuid = track_uuid(pid, tid), s = (uint64_t)start_ns, e = (uint64_t)end_ns;
	struct track *t = track_state(pb, uuid);
	if (s < t->last_start)
		pb->out_of_order++;
	t->last_start = s;
	track_close(o, uuid, t, s);
	if (t->depth == DEPTH || (t->depth && e > t->end[t->depth - 1])) {
		pb->out_of_order++; /* would not nest: written, ended at its parent's end */
		e = t->depth ? t->end[t->depth - 1] : e;
		if (t->depth == DEPTH)
			track_close(o, uuid, t, UINT64_MAX);
	}
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	struct named n;
	p.has_timestamp = true;
	p.timestamp = s;
	te.has_type = te.has_track_uuid = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_SLICE_BEGIN;
	te.track_uuid = uuid;
	named_event(pb, &te, &n, name, cat, args);
	te.n_flow_ids = nflows;
	te.flow_ids = (uint64_t *)flows;
	te.n_terminating_flow_ids = nends;
	te.terminating_flow_ids = (uint64_t *)ends;
	p.track_event = &te;
	packet_write(o, &p, true);
	named_free(&te, &n);
	t->end[t->depth++] = e;
}

/* An instant on thread track (pid, tid) at ns */
static void proto_instant(struct out *o, int pid, int tid, const char *name, const char *cat, int64_t ns,
			  const char *args)
{
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	struct named n;
	p.has_timestamp = true;
	p.timestamp = (uint64_t)ns;
	te.has_type = te.has_track_uuid = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_INSTANT;
	te.track_uuid = track_uuid(pid, tid);
	named_event(o->pb, &te, &n, name, cat, args);
	p.track_event = &te;
	packet_write(o, &p, true);
	named_free(&te, &n);
}

static void proto_counter(struct out *o, int pid, const char *name, int64_t ns, int64_t value)
{
	struct proto *pb = o->pb;
	char key[300];
	snprintf(key, sizeof(key), "counter %d %s", pid, name);
	/* counter tracks get uuids after the process's threads */
	json_t *k = json_object_get(pb->counters, key);
	uint64_t uuid;
	if (k)
		uuid = (uint64_t)json_integer_value(k);
	else {
		uuid = track_uuid(pid, (int)(0x80000 + json_object_size(pb->track_of)));
		track_state(pb, uuid); /* reserves the number */
		json_object_set_new(pb->counters, key, json_integer((json_int_t)uuid));
		Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
		Perfetto__Protos__TrackDescriptor td = PERFETTO__PROTOS__TRACK_DESCRIPTOR__INIT;
		Perfetto__Protos__CounterDescriptor cd = PERFETTO__PROTOS__COUNTER_DESCRIPTOR__INIT;
		td.has_uuid = td.has_parent_uuid = true;
		td.uuid = uuid;
		td.parent_uuid = track_uuid(pid, 0);
		td.name = (char *)name;
		td.counter = &cd;
		p.track_descriptor = &td;
		packet_write(o, &p, false);
	}
	Packet p = PERFETTO__PROTOS__TRACE_PACKET__INIT;
	TrackEvent te = PERFETTO__PROTOS__TRACK_EVENT__INIT;
	p.has_timestamp = true;
	p.timestamp = (uint64_t)ns;
	te.has_type = te.has_track_uuid = te.has_counter_value = true;
	te.type = PERFETTO__PROTOS__TRACK_EVENT__TYPE__TYPE_COUNTER;
	te.track_uuid = uuid;
	te.counter_value = value;
	p.track_event = &te;
	packet_write(o, &p, false);
}

/* every slice still open, ended */
static void proto_finish(struct out *o)
{
	struct proto *pb = o->pb;
	const char *key;
	json_t *v;
	json_object_foreach(pb->track_of, key, v)
	    track_close(o, strtoull(key, NULL, 10), &pb->tracks[json_integer_value(v)], UINT64_MAX);
}

/* A cycle's time on the output's clock, in whole nanoseconds. Every
 * timestamp and every slice end is rounded once, here, and a slice's dur is
 * end - start of two such values: a slice that ends where another starts (in
 * cycles) ends exactly there in the output too. Rounding ts and dur each on
 * their own, as microseconds with six decimals after adding the host trace's
 * start (1e9 us and more), let a slice end up to 1.5 ns after the start of
 * the next or past its parent's end, depending on the launch time's
 * fraction: the host + device export's nesting broke in about one run in
 * four. */
static int64_t t_ns(const struct out *o, const struct an_data *d, uint64_t cycle)
{
	return o->base_ns + llround(an_us(d, cycle) * 1e3);
}

/* ns as trace-event microseconds, exactly ("1234.567"). */
static const char *us_text(char buf[32], int64_t ns)
{
	snprintf(buf, 32, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(ns < 0 ? -ns : ns) / 1000,
		 (long long)(ns < 0 ? -ns : ns) % 1000);
	return buf;
}

static const char *ts_us(char buf[32], const struct out *o, const struct an_data *d, uint64_t cycle)
{
	return us_text(buf, t_ns(o, d, cycle));
}

static void ev_begin(struct out *o)
{
	fputs(o->first ? "\n" : ",\n", o->f);
	o->first = false;
}

static void name_meta(struct out *o, const char *what, int pid, int tid, const char *name, int sort)
{
	if (o->pb) {
		track_describe(o, pid, tid, name);
		return;
	}
	ev_begin(o);
	fprintf(o->f,
		"{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":0,\"args\":{\"name\":", what, pid,
		tid);
	json_t *s = json_string(name);
	json_dumpf(s, o->f, JSON_ENCODE_ANY);
	json_decref(s);
	fputs("}}", o->f);
	ev_begin(o);
	fprintf(o->f,
		"{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%d,\"tid\":%d,\"ts\":0,\"args\":{\"sort_"
		"index\":%d}}",
		!strcmp(what, "process_name") ? "process" : "thread", pid, tid, sort);
}

static const char *json_inner(const char *s, char *buf, size_t len);

/* A slice [start, end) cycles named name (raw text) with args (a JSON
 * object's members, or NULL); flow flow_out (0: none) starts at it, and
 * the flows ends[n] end in it at cycle end_at. */
/* A flow from a chip's ta.dma.notify to the WAIT on another chip of its pod
 * that took its signal: the pod's first process (the one of chip 0) and the
 * DMA, whose ids are the pod's. */
#define PEER_FLOW ((uint64_t)1 << 62)
static uint64_t peer_flow(int pod_pid, uint64_t id) { return PEER_FLOW | (uint64_t)pod_pid << 32 | id; }

static void slice_flows2(struct out *o, const struct an_data *d, int pid, int tid, const char *name,
			 const char *cat, uint64_t start, uint64_t end, const char *args, uint64_t flow_out,
			 uint64_t flow_out2, const uint64_t *ends, size_t nends, uint64_t end_at)
{
	if (end < start)
		end = start;
	int64_t ts_ns = t_ns(o, d, start);
	if (o->pb) {
		uint64_t outs[2];
		size_t nouts = 0;
		if (flow_out)
			outs[nouts++] = flow_out;
		if (flow_out2)
			outs[nouts++] = flow_out2;
		proto_slice(o, pid, tid, name, cat, ts_ns, t_ns(o, d, end), args, outs, nouts, ends, nends);
		return;
	}
	ev_begin(o);
	char ts[32], dur[32], ename[1024];
	fprintf(
	    o->f,
	    "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":%s%s%s%s}",
	    json_inner(name, ename, sizeof(ename)), cat, pid, tid, us_text(ts, ts_ns),
	    us_text(dur, t_ns(o, d, end) - ts_ns), args ? ",\"args\":{" : "", args ? args : "",
	    args ? "}" : "");
	/* flows as s -> f events: named by the DMA (the low 32 bits of the id);
	 * a peer signal's in category peer.flow */
	const uint64_t outs[2] = {flow_out, flow_out2};
	for (int k = 0; k < 2; k++) {
		if (!outs[k])
			continue;
		ev_begin(o);
		fprintf(o->f,
			"{\"ph\":\"s\",\"name\":\"dma#%llu\",\"cat\":\"%s\",\"id\":%llu,\"pid\":%d,"
			"\"tid\":%d,"
			"\"ts\":%s}",
			(unsigned long long)(outs[k] & 0xffffffffu), outs[k] & PEER_FLOW ? "peer.flow" : "dma.flow",
			(unsigned long long)outs[k], pid, tid, ts);
	}
	for (size_t i = 0; i < nends; i++) {
		ev_begin(o);
		fprintf(o->f,
			"{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"dma#%llu\",\"cat\":\"%s\",\"id\":%llu,"
			"\"pid\":%d,"
			"\"tid\":%d,\"ts\":%s}",
			(unsigned long long)(ends[i] & 0xffffffffu), ends[i] & PEER_FLOW ? "peer.flow" : "dma.flow",
			(unsigned long long)ends[i], pid, tid, ts_us(ts, o, d, end_at));
	}
}

static void slice_flows(struct out *o, const struct an_data *d, int pid, int tid, const char *name,
			const char *cat, uint64_t start, uint64_t end, const char *args, uint64_t flow_out,
			const uint64_t *ends, size_t nends, uint64_t end_at)
{
	slice_flows2(o, d, pid, tid, name, cat, start, end, args, flow_out, 0, ends, nends, end_at);
}

static void slice(struct out *o, const struct an_data *d, int pid, int tid, const char *name, const char *cat,
		  uint64_t start, uint64_t end, const char *args)
{
	slice_flows(o, d, pid, tid, name, cat, start, end, args, 0, NULL, 0, 0);
}

/* A counter's values at cycle: JSON one "C" event with a member per value,
 * protobuf one counter track per value ("NAME KEY") */
static void counter(struct out *o, const struct an_data *d, int pid, const char *name,
		    const char *const *keys, const uint64_t *values, int n, uint64_t cycle)
{
	char tbuf[32];
	if (o->pb) {
		for (int i = 0; i < n; i++) {
			char cname[256];
			snprintf(cname, sizeof(cname), "%s %s", name, keys[i]);
			proto_counter(o, pid, cname, t_ns(o, d, cycle), (int64_t)values[i]);
		}
		return;
	}
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"C\",\"name\":\"%s\",\"pid\":%d,\"tid\":0,\"ts\":%s,\"args\":{", name, pid,
		ts_us(tbuf, o, d, cycle));
	for (int i = 0; i < n; i++)
		fprintf(o->f, "%s\"%s\":%llu", i ? "," : "", keys[i], (unsigned long long)values[i]);
	fputs("}}", o->f);
}

/* s as the inside of a JSON string (no quotes) into buf. */
static const char *json_inner(const char *s, char *buf, size_t len)
{
	json_t *j = json_string(s ? s : "");
	char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	size_t n = q ? strlen(q) : 0;
	snprintf(buf, len, "%.*s", n >= 2 ? (int)(n - 2) : 0, n >= 2 ? q + 1 : "");
	free(q);
	json_decref(j);
	return buf;
}

/* What ran at instruction index: a slice name ("prefix" + "ta.mxu.mm
 * attn.c:37 (attn)", the mnemonic and the place of the user's line, or the
 * symbol without line tables; raw text) and its args (pc, disassembly, the
 * "source" object; JSON object members). */
static void insn_label(struct an_pcinfo *info, const struct an_data *d, int64_t index, const char *prefix,
		       bool mnemonic, char *name, size_t nlen, char *args, size_t alen)
{
	if (index < 0 || (uint64_t)index >= d->pcs->n) {
		snprintf(name, nlen, "%s", prefix);
		args[0] = 0;
		return;
	}
	uint64_t pc = an_pc(d, (uint64_t)index);
	char mn[64] = "";
	if (mnemonic)
		an_pcinfo_mnemonic(info, pc, mn, sizeof(mn));
	snprintf(name, nlen, "%s%s%s%s", prefix, mn, mn[0] ? " " : "", an_pcinfo_where(info, pc));
	snprintf(args, alen, "\"index\":%lld,%s", (long long)index, an_pcinfo_args(info, pc));
}

/* Whether path is a chip's file of a pod's metrics set (its folder's
 * manifest says "pod": docs/metrics-format.md, "A pod's metrics set"). */
static bool in_pod_set(const char *path)
{
	const char *slash = strrchr(path, '/');
	char man[4096];
	snprintf(man, sizeof(man), "%.*s/%s", slash ? (int)(slash - path) : 1, slash ? path : ".", SNR_SET_MANIFEST);
	json_t *m = json_load_file(man, 0, NULL);
	bool pod = json_is_true(json_object_get(m, "pod"));
	json_decref(m);
	return pod;
}

static int export_one(struct out *o, const struct an_data *d, int pid, const char *label)
{
	struct an_pcinfo *info = an_pcinfo_new(&d->src);
	/* a chip of a pod (a pod's set gives its chips in order, a process
	 * each): the pod's first process, for its signals' flows; -1 if not */
	int pod_pid = -1;
	json_t *meta = json_loads(d->src.meta_json ? d->src.meta_json : "{}", 0, NULL);
	json_t *chip = json_object_get(meta, "chip"), *chips = json_object_get(meta, "chips");
	if (json_is_integer(chip) && json_is_integer(chips) && json_integer_value(chips) > 1 &&
	    json_integer_value(chip) < pid && in_pod_set(d->src.path))
		pod_pid = pid - (int)json_integer_value(chip);
	char lname[1024], largs[2048];
	if (pod_pid >= 0) {
		size_t n = strlen(label) + 64;
		char *pname = snr_xmalloc(n);
		snprintf(pname, n, "chip %lld of %lld: %s", (long long)json_integer_value(chip),
			 (long long)json_integer_value(chips), label);
		name_meta(o, "process_name", pid, 0, pname, pid);
		free(pname);
	} else {
		name_meta(o, "process_name", pid, 0, label, pid);
	}
	json_decref(meta);
	static const char *unit_names[] = {"scalar", "vector", "mxu", "dma engine"};
	for (int u = 0; u < 4; u++)
		name_meta(o, "thread_name", pid, TID_SCALAR + u, unit_names[u], TID_SCALAR + u);
	name_meta(o, "thread_name", pid, TID_DMAOPS, "core: DMA ISSUE / WAIT", TID_DMAOPS);
	for (uint64_t i = 0; i < d->busy->n; i++) {
		const struct an_busy busy = *(const struct an_busy *)snr_spill_at(d->busy, i), *b = &busy;
		int tid = b->unit < 4 ? TID_SCALAR + b->unit : TID_DMA;
		if (b->index != UINT64_MAX && b->index < d->pcs->n) {
			insn_label(info, d, (int64_t)b->index, "", true, lname, sizeof(lname), largs,
				   sizeof(largs));
			slice(o, d, pid, tid, lname, "unit", b->start, b->end, largs);
		} else {
			slice(o, d, pid, tid, b->unit < 4 ? unit_names[b->unit] : "busy", "unit", b->start,
			      b->end, "\"index\":-1");
		}
	}
	/* lanes per link: greedy, by issue order; named before their slices */
	uint64_t(*lane_free)[LANES] = snr_xcalloc((size_t)(d->nlinks + 1), sizeof(*lane_free));
	int *lanes_used = snr_xcalloc((size_t)(d->nlinks + 1), sizeof(int));
	int *lane_of = snr_xcalloc(d->ndmas + 1, sizeof(int));
	for (size_t i = 0; i < d->ndmas; i++) {
		const struct an_dma *m = &d->dmas[i];
		if (!m->id || m->peer_owner >= 0) /* another chip's DMA: drawn on that chip's process */
			continue;
		int l = m->link >= 0 ? m->link : d->nlinks; /* 0-byte DMAs: a lane group of their own */
		uint64_t s = m->issue == AN_NONE ? 0 : m->issue + 1;
		uint64_t c = m->complete != AN_NONE ? m->complete : (m->start != AN_NONE ? m->start : s);
		uint64_t e = m->wait != AN_NONE && m->wait > c ? m->wait : c;
		int lane = 0;
		while (lane < LANES - 1 && lane_free[l][lane] > s)
			lane++;
		lane_free[l][lane] = e;
		lane_of[i] = lane;
		if (lane + 1 > lanes_used[l])
			lanes_used[l] = lane + 1;
	}
	for (int l = 0; l <= d->nlinks; l++)
		for (int lane = 0; lane < lanes_used[l]; lane++) {
			char name[64];
			snprintf(name, sizeof(name), "link %s #%d",
				 l < d->nlinks ? d->links[l].name : "(no bytes)", lane);
			name_meta(o, "thread_name", pid, TID_LINK0 + l * LANES + lane, name,
				  TID_LINK0 + l * LANES + lane);
		}
	free(lane_free);
	free(lanes_used);
	/* each DMA: its slice, and inside it its phases, in the order they begin */
	for (size_t i = 0; i < d->ndmas; i++) {
		const struct an_dma *m = &d->dmas[i];
		if (!m->id || m->peer_owner >= 0) /* another chip's DMA: only its signal's WAIT is here */
			continue;
		int l = m->link >= 0 ? m->link : d->nlinks;
		uint64_t s = m->issue == AN_NONE ? 0 : m->issue + 1;
		uint64_t c = m->complete != AN_NONE ? m->complete : (m->start != AN_NONE ? m->start : s);
		uint64_t e = m->wait != AN_NONE && m->wait > c ? m->wait : c;
		int tid = TID_LINK0 + l * LANES + lane_of[i];
		char prefix[48], args[3072];
		snprintf(prefix, sizeof(prefix), "dma#%llu ", (unsigned long long)m->id);
		insn_label(info, d, m->issue_index, prefix, false, lname, sizeof(lname), largs,
			   sizeof(largs));
		if (m->issue_index < 0) /* issued before the window */
			snprintf(lname, sizeof(lname), "dma#%llu", (unsigned long long)m->id);
		snprintf(args, sizeof(args),
			 "\"id\":%llu,\"bytes\":%llu,\"flag\":%u,\"case\":\"%s\",\"stall_base_cycles\":%llu,"
			 "\"stall_transfer_cycles\":%llu,\"slack_cycles\":%llu,\"issue_index\":%lld,\"wait_"
			 "index\":%lld%s%s",
			 (unsigned long long)m->id, (unsigned long long)m->bytes, m->flag, an_dma_case(m),
			 (unsigned long long)m->stall_base, (unsigned long long)m->stall_transfer,
			 (unsigned long long)m->slack, (long long)m->issue_index, (long long)m->wait_index,
			 m->issue_index >= 0 ? ",\"issue\":{" : "", "");
		if (m->issue_index >= 0)
			snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s}", largs);
		slice(o, d, pid, tid, lname, "dma", s, e, args);
		uint64_t st = m->start != AN_NONE ? m->start : c;
		slice(o, d, pid, tid, "base latency", "dma.base", s, st, NULL);
		/* the stall on the base latency lies in it, before the transfer */
		if (m->stall_base)
			slice(o, d, pid, tid, "stall: base latency", "dma.stall",
			      c - m->stall_transfer - m->stall_base, c - m->stall_transfer, NULL);
		if (c > st)
			slice(o, d, pid, tid, "transfer", "dma.transfer", st, c, NULL);
		if (m->stall_transfer)
			slice(o, d, pid, tid, "stall: transfer", "dma.stall", c - m->stall_transfer, c, NULL);
		if (m->slack && m->wait != AN_NONE)
			slice(o, d, pid, tid, "slack", "dma.slack", c, m->wait, NULL);
	}
	free(lane_of);
	/* The core's ISSUE and WAIT slices, one track, in the order they begin;
	 * a flow from each ISSUE to the WAIT that consumed its DMA. The DMAs
	 * one WAIT consumed, grouped by sorting (wait index, dma): the WAIT's
	 * slice is drawn once, from the earliest arrival (a stalled DMA's
	 * complete - stall) to the WAIT's end, and the group's flows end in it. */
	uint64_t(*by_wait)[2] = snr_xcalloc(d->ndmas + 1, sizeof(*by_wait));
	size_t nw = 0;
	for (size_t i = 0; i < d->ndmas; i++)
		if (d->dmas[i].id && d->dmas[i].wait != AN_NONE) {
			by_wait[nw][0] = (uint64_t)d->dmas[i].wait_index;
			by_wait[nw++][1] = i;
		}
	snr_qsort(by_wait, nw, sizeof(*by_wait), an_cmp_u64pair);
	/* per WAIT: [arrive, first of its group in by_wait, group size], by arrival */
	uint64_t(*waits)[3] = snr_xcalloc(nw + 1, sizeof(*waits));
	size_t nwaits = 0;
	for (size_t a = 0, b; a < nw; a = b) {
		uint64_t arrive = UINT64_MAX;
		for (b = a; b < nw && by_wait[b][0] == by_wait[a][0]; b++) {
			const struct an_dma *n = &d->dmas[by_wait[b][1]];
			uint64_t st = an_dma_stall(n);
			if (st && n->complete != AN_NONE && n->complete - st < arrive)
				arrive = n->complete - st;
		}
		uint64_t w = d->dmas[by_wait[a][1]].wait;
		waits[nwaits][0] = arrive < w ? arrive : w;
		waits[nwaits][1] = a;
		waits[nwaits++][2] = b - a;
	}
	snr_qsort(waits, nwaits, sizeof(*waits), an_cmp_u64pair);
	uint64_t *ends = snr_xcalloc(nw + 1, sizeof(*ends));
	size_t wi = 0;
	for (size_t i = 0; i <= d->ndmas; i++) {
		const struct an_dma *m = i < d->ndmas ? &d->dmas[i] : NULL;
		bool issue = m && m->id && m->issue_index >= 0 && m->issue != AN_NONE;
		if (m && !issue)
			continue;
		/* the WAITs that begin before this ISSUE (all of them after the last) */
		for (; wi < nwaits && (!m || waits[wi][0] <= m->issue); wi++) {
			const struct an_dma *f = &d->dmas[by_wait[waits[wi][1]][1]];
			size_t n = 0;
			for (size_t k = 0; k < waits[wi][2]; k++) {
				const struct an_dma *g = &d->dmas[by_wait[waits[wi][1] + k][1]];
				if (g->issue_index >= 0 && g->issue != AN_NONE)
					ends[n++] = ((uint64_t)pid << 32) | g->id;
				else if (g->peer_owner >= 0 && pod_pid >= 0) /* another chip's signal */
					ends[n++] = peer_flow(pod_pid, g->id);
			}
			char prefix[48];
			snprintf(prefix, sizeof(prefix), "WAIT flag %u ", f->flag);
			insn_label(info, d, f->wait_index, prefix, false, lname, sizeof(lname), largs,
				   sizeof(largs));
			slice_flows(o, d, pid, TID_DMAOPS, lname, "dma.wait", waits[wi][0], f->wait + 1,
				    largs, 0, ends, n, f->wait);
		}
		if (!m)
			break;
		char prefix[48];
		snprintf(prefix, sizeof(prefix), "ISSUE dma#%llu ", (unsigned long long)m->id);
		insn_label(info, d, m->issue_index, prefix, false, lname, sizeof(lname), largs,
			   sizeof(largs));
		char mn[64] = "";
		if (pod_pid >= 0 && (uint64_t)m->issue_index < d->pcs->n)
			an_pcinfo_mnemonic(info, an_pc(d, (uint64_t)m->issue_index), mn, sizeof(mn));
		slice_flows2(o, d, pid, TID_DMAOPS, lname, "dma.issue", m->issue, m->issue + 1, largs,
			     ((uint64_t)pid << 32) | m->id, !strcmp(mn, "ta.dma.notify") ? peer_flow(pod_pid, m->id) : 0,
			     NULL, 0, 0);
	}
	free(ends);
	free(waits);
	free(by_wait);
	/* VMEM counters */
	struct an_vmem v;
	if (an_vmem_compute(d, 0, &v)) {
		snr_err("export perfetto: %s", v.err);
		an_vmem_free(&v);
		an_pcinfo_free(info);
		return -1;
	}
	static const char *const occ_keys[] = {"used", "unused"}, *const free_keys[] = {"largest_free"};
	for (size_t s = 0; s < v.nsamples; s++) {
		uint64_t occ[2] = {v.used[s] * v.page_bytes / 1024, v.unused[s] * v.page_bytes / 1024};
		uint64_t largest = v.largest[s] * v.page_bytes / 1024;
		counter(o, d, pid, "VMEM occupied (KiB)", occ_keys, occ, 2, v.t[s]);
		counter(o, d, pid, "VMEM largest free region (KiB)", free_keys, &largest, 1, v.t[s]);
	}
	an_vmem_free(&v);
	an_pcinfo_free(info);
	return 0;
}

enum export_format { FORMAT_AUTO, FORMAT_JSON, FORMAT_PROTO };

static void usage(FILE *f)
{
	fprintf(f,
		"usage: snr export perfetto [H.snrh [CUPTI.snrh...]] [T.snrt|M.snrm...] -o trace.json\n"
		"                           [--config M.json] [--launch N] [--format auto|json|proto] [--force]\n"
		"\n"
		"-o is required. It never replaces an existing file unless given --force, and is\n"
		"never written over an input (a trace, metrics file or host trace, the config,\n"
		"the trace a metrics file names), --force or not.\n"
		"\n"
		"Chrome trace-event JSON or Perfetto's protobuf trace format (open either in\n"
		"ui.perfetto.dev): a track per unit, per DMA link\n"
		"lanes with base latency, transfer, stall and slack phases, flows from each DMA ISSUE\n"
		"to its WAIT, counters for VMEM occupancy and the largest free region. Slices are\n"
		"named by what ran and where (\"ta.mxu.mm attn.c:37 (attn)\", from the program's line\n"
		"tables; --elf PROG), with the pc, disassembly and \"source\" object in their args.\n"
		"One process per input file; a trace or metrics set (snr record --windows, snr\n"
		"replay SET -o MSET) gives one per window, named \"GROUP window K: FILE\".\n"
		"docs/analyses.md.\n"
		"\n"
		"With host traces (snr host record; CUPTI files merge into them) everything is on\n"
		"the host's clock (CLOCK_MONOTONIC, microseconds): each host thread's on/off-CPU\n"
		"slices with stacks in args, its probed calls by bucket, libta1rt launches and\n"
		"CUPTI records as device tracks. A replayed window (T.snrt or M.snrm) starts at\n"
		"the host trace's ta1rt_launch number N (--launch N; by default the only launch\n"
		"if there is exactly one), else at the start of the host trace; its cycles become\n"
		"time through the config's clock_hz. docs/host.md.\n"
		"\n"
		"--format: json, proto (Perfetto's protobuf: the same tracks, slices, instants,\n"
		"flows and counters, about a quarter of the size), or auto (the default): JSON\n"
		"unless it would exceed %llu MiB (estimated from the first window's events at\n"
		"%d bytes each, times the number of windows; with a host trace: JSON), then\n"
		"protobuf, said on stderr.\n",
		JSON_MAX_BYTES >> 20, JSON_EVENT_BYTES);
}

/* A host trace (.snrh) by its magic; anything else goes to an_load. */
static bool is_host_trace(const char *path)
{
	char magic[8] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t got = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return got == sizeof(magic) && !memcmp(magic, SNRH_MAGIC, sizeof(magic));
}

static void put_json(struct out *o, json_t *events)
{
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e)
	{
		ev_begin(o);
		json_dumpf(e, o->f, SNRH_EV_JSON_FLAGS);
	}
}

/* A host trace's events (analyzer/host_events.c: X slices, i instants, s
 * and f flows, M names) in the protobuf: the names as track descriptors,
 * each track's slices in the order that nests them (by start, an enclosing
 * one first), each flow on the slice that holds its time (the innermost on
 * its track, as the JSON's viewers bind it: flow ends are bound to their
 * enclosing slice). Times are the JSON's microseconds back in whole ns. */
struct hslice {
	json_t *e;
	int pid, tid;
	int64_t start, end;
	size_t order;
};

struct hflow {
	size_t slice; /* index in the sorted slices */
	uint64_t id;
	bool end;
};

static int hslice_cmp(const void *a, const void *b)
{
	const struct hslice *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	if (x->end != y->end)
		return x->end > y->end ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

static int hflow_cmp(const void *a, const void *b)
{
	const struct hflow *x = a, *y = b;
	return x->slice < y->slice ? -1 : x->slice > y->slice;
}

static int64_t ev_ns(json_t *e, const char *key) { return llround(json_number_value(json_object_get(e, key)) * 1e3); }

static int ev_int(json_t *e, const char *key) { return (int)json_integer_value(json_object_get(e, key)); }

/* the args of event e as an object's members (no braces), or NULL */
static char *ev_args(json_t *e)
{
	json_t *a = json_object_get(e, "args");
	if (!json_object_size(a))
		return NULL;
	char *t = json_dumps(a, JSON_COMPACT);
	size_t n = strlen(t);
	memmove(t, t + 1, n - 2);
	t[n - 2] = 0;
	return t;
}

static void put_proto(struct out *o, json_t *events)
{
	size_t i, n = json_array_size(events), ns = 0, nf = 0;
	struct hslice *sl = snr_xcalloc(n + 1, sizeof(*sl));
	struct hflow *fl = snr_xcalloc(n + 1, sizeof(*fl));
	json_t *e;
	json_array_foreach(events, i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph")), *name = json_string_value(json_object_get(e, "name"));
		if (!ph || !name)
			continue;
		if (!strcmp(ph, "M") && (!strcmp(name, "process_name") || !strcmp(name, "thread_name")))
			track_describe(o, ev_int(e, "pid"), !strcmp(name, "thread_name") ? ev_int(e, "tid") : 0,
				       json_string_value(json_object_get(json_object_get(e, "args"), "name")));
		else if (!strcmp(ph, "X")) {
			int64_t start = ev_ns(e, "ts");
			sl[ns++] = (struct hslice){e, ev_int(e, "pid"), ev_int(e, "tid"), start, start + ev_ns(e, "dur"), i};
		}
	}
	snr_qsort(sl, ns, sizeof(*sl), hslice_cmp);
	/* each flow event on the innermost slice of its track that holds its time */
	json_array_foreach(events, i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));
		if (!ph || (strcmp(ph, "s") && strcmp(ph, "f")))
			continue;
		struct hslice key = {.pid = ev_int(e, "pid"), .tid = ev_int(e, "tid"), .start = INT64_MIN, .end = INT64_MAX};
		int64_t t = ev_ns(e, "ts");
		size_t lo = 0, hi = ns, best = SIZE_MAX;
		while (lo < hi) {
			size_t m = (lo + hi) / 2;
			if (hslice_cmp(&sl[m], &key) < 0)
				lo = m + 1;
			else
				hi = m;
		}
		for (size_t k = lo; k < ns && sl[k].pid == key.pid && sl[k].tid == key.tid && sl[k].start <= t; k++)
			if (t < sl[k].start + (sl[k].end > sl[k].start ? sl[k].end - sl[k].start : 1) &&
			    (best == SIZE_MAX || sl[k].end - sl[k].start < sl[best].end - sl[best].start))
				best = k;
		if (best != SIZE_MAX)
			fl[nf++] = (struct hflow){best, (uint64_t)json_integer_value(json_object_get(e, "id")), ph[0] == 'f'};
	}
	snr_qsort(fl, nf, sizeof(*fl), hflow_cmp);
	uint64_t *ids = snr_xcalloc(nf + 1, sizeof(*ids));
	for (size_t k = 0, f = 0; k < ns; k++) {
		size_t nout = 0, nend = 0, first = f;
		for (; f < nf && fl[f].slice == k; f++)
			nout += !fl[f].end;
		for (size_t g = first; g < f; g++)
			ids[fl[g].end ? nout + nend++ : g - first - nend] = fl[g].id;
		char *args = ev_args(sl[k].e);
		proto_slice(o, sl[k].pid, sl[k].tid, json_string_value(json_object_get(sl[k].e, "name")),
			    json_string_value(json_object_get(sl[k].e, "cat")), sl[k].start, sl[k].end, args, ids, nout,
			    ids + nout, nend);
		free(args);
	}
	json_array_foreach(events, i, e)
	{
		const char *ph = json_string_value(json_object_get(e, "ph"));
		if (!ph || strcmp(ph, "i"))
			continue;
		char *args = ev_args(e);
		proto_instant(o, ev_int(e, "pid"), ev_int(e, "tid"), json_string_value(json_object_get(e, "name")),
			      json_string_value(json_object_get(e, "cat")), ev_ns(e, "ts"), args);
		free(args);
	}
	free(ids);
	free(fl);
	free(sl);
}

/* The export proper: files are the inputs, a set's windows in its place,
 * each labelled (NULL: the file's path alone). */
static int export_files(int nfiles, char **files, char **labels, const char *out_path, const char *config,
			uint64_t launch, enum export_format format)
{
	/* Host traces first: they fix the clock the replayed windows go on. */
	struct snrh_trace host;
	snrh_trace_init(&host);
	json_object_clear(host.meta);
	int nhost = 0, ndev = 0, rc = 0;
	char err[1024];
	for (int i = 0; i < nfiles; i++) {
		if (!is_host_trace(files[i])) {
			ndev++;
			continue;
		}
		/* A host trace cut short (its recorder killed) is refused as a
		 * partial .snrt is, unless --allow-truncated. */
		bool cut = false;
		char why[sizeof(err)] = "";
		if (snrh_trace_read_partial(&host, files[i], &cut, why, sizeof(why))) {
			snr_fmt(err, sizeof(err), "%s", why);
			cut = false;
		}
		size_t plen = strlen(files[i]);
		const char *what =
		    !strncmp(why, files[i], plen) && !strncmp(why + plen, ": ", 2) ? why + plen + 2 : why;
		if ((!cut && why[0]) || (cut && snr_partial_check(files[i], what, err, sizeof(err)))) {
			snr_err("export: %s", err);
			snrh_trace_free(&host);
			return 1;
		}
		nhost++;
	}
	int64_t base_ns = 0;
	char placed[160] = "";
	if (launch && !nhost) {
		snr_err("export: --launch %llu places a replayed window at a launch of a host trace, but no "
			".snrh is given",
			(unsigned long long)launch);
		snrh_trace_free(&host);
		return 2;
	}
	if (nhost) {
		struct snrh_launch *ln = NULL;
		size_t nln = snrh_ta1_launches(&host, &ln);
		if (launch > nln) {
			snr_err("export: --launch %llu, but the host trace has %zu ta1rt_launch call%s",
				(unsigned long long)launch, nln, nln == 1 ? "" : "s");
			free(ln);
			snrh_trace_free(&host);
			return 2;
		}
		if (!launch && nln == 1)
			launch = 1;
		if (launch) {
			base_ns = (int64_t)ln[launch - 1].start;
			snprintf(placed, sizeof(placed), " (at ta1rt_launch #%llu)",
				 (unsigned long long)launch);
		} else {
			base_ns = (int64_t)json_integer_value(json_object_get(host.meta, "t_start_ns"));
			snprintf(placed, sizeof(placed), " (at the host trace's start)");
			if (nln > 1 && ndev)
				fprintf(stderr,
					"snr export: the host trace has %zu ta1rt_launch calls; the replayed "
					"window starts at "
					"the trace's start (choose a launch with --launch N)\n",
					nln);
		}
		free(ln);
	}

	/* auto: the first window's events tell the JSON's size (host traces: JSON) */
	struct an_data first;
	bool have_first = false;
	if (ndev) {
		int k = 0;
		while (is_host_trace(files[k]))
			k++;
		if (an_load(&first, files[k], config, AN_WANT_ALL, err, sizeof(err))) {
			snr_err("export: %s", err);
			an_free(&first);
			snrh_trace_free(&host);
			return 1;
		}
		have_first = true;
		if (format == FORMAT_AUTO && !nhost) {
			unsigned long long events =
			    (unsigned long long)(first.busy->n + 8 * first.ndmas) * (unsigned)ndev;
			if (events * JSON_EVENT_BYTES > JSON_MAX_BYTES) {
				format = FORMAT_PROTO;
				fprintf(stderr,
					"snr export: about %llu events; their JSON would be about %llu MiB "
					"(over %llu): writing "
					"Perfetto's protobuf trace format (--format json for JSON)\n",
					events, events * JSON_EVENT_BYTES >> 20, JSON_MAX_BYTES >> 20);
			}
		}
	}
	struct snr_outfile of;
	char oerr[600];
	FILE *f = snr_outfile_fopen(&of, out_path, oerr, sizeof(oerr));
	if (!f) {
		snr_err("export: %s", oerr);
		if (have_first)
			an_free(&first);
		snrh_trace_free(&host);
		return 1;
	}
	struct proto pb = {0};
	struct out o = {.f = f, .first = true, .base_ns = base_ns, .pb = format == FORMAT_PROTO ? &pb : NULL};
	if (o.pb) {
		for (int k = 0; k < 4; k++)
			pb.iids[k] = json_object();
		pb.counters = json_object();
		pb.track_of = json_object();
		pb.args_cache = json_object();
	} else
		fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	if (nhost) {
		json_t *events = json_array();
		snrh_trace_events(&host, events);
		if (o.pb)
			put_proto(&o, events);
		else
			put_json(&o, events);
		json_decref(events);
	}
	snrh_trace_free(&host);
	int pid = 0;
	for (int i = 0; i < nfiles && !rc; i++) {
		if (is_host_trace(files[i]))
			continue;
		struct an_data d;
		if (have_first) {
			d = first; /* loaded above */
			have_first = false;
		} else if (an_load(&d, files[i], config, AN_WANT_ALL, err, sizeof(err))) {
			snr_err("export: %s", err);
			rc = 1;
			an_free(&d);
			continue;
		}
		char label[4200];
		snprintf(label, sizeof(label), "%s%s%s", labels[i] ? labels[i] : "", d.src.path, placed);
		rc = export_one(&o, &d, ++pid, label);
		an_free(&d);
	}
	if (o.pb) {
		proto_finish(&o);
		if (pb.out_of_order)
			fprintf(stderr,
				"snr export: %llu slices did not nest on their track (written clipped)\n",
				(unsigned long long)pb.out_of_order);
		for (int k = 0; k < 4; k++)
			json_decref(pb.iids[k]);
		json_decref(pb.counters);
		json_decref(pb.track_of);
		json_decref(pb.args_cache);
		free(pb.tracks);
		free(pb.buf);
	} else
		fputs("\n]}\n", f);
	if (snr_outfile_close(&of, !rc, oerr, sizeof(oerr))) {
		if (!rc)
			snr_err("export: %s", oerr);
		return 1;
	}
	return 0;
}

int snr_cmd_export(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2)
			snr_err("export: give a format: perfetto");
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "perfetto")) {
		snr_err("export: unknown format '%s' (perfetto)", argv[1]);
		return 2;
	}
	static const struct option opts[] = {
	    {"output", required_argument, NULL, 'o'}, {"config", required_argument, NULL, 'c'},
	    {"launch", required_argument, NULL, 'l'}, {"format", required_argument, NULL, 'F'},
	    {"help", no_argument, NULL, 'h'},	      {NULL, 0, NULL, 0}};
	const char *out_path = NULL, *config = NULL;
	uint64_t launch = 0;
	enum export_format format = FORMAT_AUTO;
	int opt;
	optind = 1;
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'l':
			if (!snr_parse_u64(optarg, &launch, false) || !launch) {
				snr_err("export: --launch wants a launch number from 1, not '%s'", optarg);
				return 2;
			}
			break;
		case 'F':
			if (!strcmp(optarg, "auto"))
				format = FORMAT_AUTO;
			else if (!strcmp(optarg, "json"))
				format = FORMAT_JSON;
			else if (!strcmp(optarg, "proto"))
				format = FORMAT_PROTO;
			else {
				snr_err("export: --format is auto, json or proto, not '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!out_path) {
		snr_err("export: -o OUT is required");
		usage(stderr);
		return 2;
	}
	if (optind >= argc) {
		snr_err("export: give a trace, metrics file or host trace");
		usage(stderr);
		return 2;
	}
	/* every input named, so that -o is checked against them before any work */
	char cerr[1024];
	if (snr_output_preflight("export", out_path, argv + optind, argc - optind, &config, 1))
		return 1;

	/* a set (snr record --windows, snr replay SET -o MSET): each of its windows
	 * in its place, a process of its own named by the set and window */
	struct snr_inputs in = {0};
	int nfiles = argc - optind;
	char **files = argv + optind, **labels = snr_xcalloc((size_t)nfiles + 1, sizeof(*labels));
	bool sets = false;
	for (int i = optind; i < argc; i++)
		sets |= snr_is_set(argv[i]);
	if (sets) {
		if (snr_inputs_expand(argv + optind, argc - optind, &in, cerr, sizeof(cerr))) {
			snr_err("export: %s", cerr);
			free(labels);
			return 1;
		}
		nfiles = (int)in.n;
		files = snr_xcalloc(in.n + 1, sizeof(*files));
		labels = snr_xrealloc(labels, (in.n + 1) * sizeof(*labels));
		for (size_t i = 0; i < in.n; i++) {
			files[i] = in.v[i].path;
			labels[i] = NULL;
			if (in.any_set) {
				size_t n = strlen(in.v[i].group) + 48;
				labels[i] = snr_xmalloc(n);
				snprintf(labels[i], n, "%s window %llu: ", in.v[i].group,
					 (unsigned long long)in.v[i].set_window);
			}
		}
	}
	int rc = export_files(nfiles, files, labels, out_path, config, launch, format);
	for (int i = 0; sets && i < nfiles; i++)
		free(labels[i]);
	free(labels);
	if (sets) {
		free(files);
		snr_inputs_free(&in);
	}
	return rc;
}
