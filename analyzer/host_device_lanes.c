/*
 * host_device_lanes.c: the device's lanes of the host page's timeline (see
 * host_device_lanes.h). The work and the waits' links are
 * analyzer/host_device.c's (snrh_ondev_build); this lays them out: a lane
 * per (device, CUPTI stream), ordered by device then stream, and each
 * piece's launching thread by name.
 */
#include "analyzer/host_device_lanes.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

const char *snrh_work_direction(const struct snrh_dev_work *w)
{
	if (!w->xfer || !w->name)
		return NULL;
	static const struct {
		const char *suffix, *words;
	} kinds[] = {{"HtoD", "host to device"},
		     {"DtoH", "device to host"},
		     {"DtoD", "device to device"},
		     {"PtoP", "device to peer device"},
		     {"ta1rt_device_upload", "host to device"}};
	size_t n = strlen(w->name);
	for (size_t k = 0; k < sizeof(kinds) / sizeof(kinds[0]); k++) {
		size_t m = strlen(kinds[k].suffix);
		if (n >= m && !strcmp(w->name + n - m, kinds[k].suffix))
			return kinds[k].words;
	}
	return NULL;
}

struct lane_key {
	uint32_t device, stream;
};

static int lane_cmp(const void *a, const void *b)
{
	const struct lane_key *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	return x->stream < y->stream ? -1 : x->stream > y->stream;
}

/* the lane of w: its (device, stream) for CUPTI, its device otherwise */
static struct lane_key key_of(const struct snrh_dev_work *w)
{
	return (struct lane_key){w->device, w->src == SNRH_ONDEV_CUPTI ? w->stream : 0};
}

static const uint64_t *dur_base;

static int longer(const void *a, const void *b)
{
	uint64_t x = dur_base[*(const size_t *)a], y = dur_base[*(const size_t *)b];
	return x < y ? 1 : x > y ? -1 : 0;
}

static int index_cmp(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	return x < y ? -1 : x > y;
}

/* which of n items (durations d) to draw: all, or the max longest, in their
 * own order; keep[i] is the drawn index of item i, -1 not drawn */
static long *choose(const uint64_t *d, size_t n, size_t max)
{
	long *keep = snr_xcalloc(n + 1, sizeof(*keep));
	size_t *idx = snr_xcalloc(n + 1, sizeof(*idx));
	for (size_t i = 0; i < n; i++) {
		idx[i] = i;
		keep[i] = -1;
	}
	size_t m = n;
	if (n > max) {
		dur_base = d;
		snr_qsort(idx, n, sizeof(*idx), longer);
		m = max;
		snr_qsort(idx, m, sizeof(*idx), index_cmp);
	}
	for (size_t k = 0; k < m; k++)
		keep[idx[k]] = (long)k;
	free(idx);
	return keep;
}

static long thread_lane(const struct snrh_trace *t, uint32_t tid)
{
	for (size_t l = 0; l < t->threads.n; l++)
		if (t->threads.v[l].tid == tid)
			return (long)l;
	return -1;
}

static double ms_from(uint64_t ts, uint64_t t0)
{
	return ts >= t0 ? (double)(ts - t0) / 1e6 : -(double)(t0 - ts) / 1e6;
}

json_t *snrh_device_lanes_json(const struct snrh_trace *t, const struct snrh_ondev *o, uint64_t t0,
			       size_t max)
{
	json_t *names = json_array(), *srcs = json_array(), *work = json_array(), *waits = json_array();
	struct lane_key *lanes = snr_xcalloc(o->nwork + 1, sizeof(*lanes));
	size_t nl = 0;
	for (size_t i = 0; i < o->nwork; i++)
		lanes[nl++] = key_of(&o->work[i]);
	snr_qsort(lanes, nl, sizeof(*lanes), lane_cmp);
	size_t u = 0;
	for (size_t i = 0; i < nl; i++)
		if (!u || lane_cmp(&lanes[u - 1], &lanes[i]))
			lanes[u++] = lanes[i];
	nl = u;
	static const char *const src_names[] = {"libta1rt", "probes", "CUPTI"};
	for (size_t l = 0; l < nl; l++) {
		const struct snrh_dev_stats *d = &o->dev[lanes[l].device];
		char name[200];
		if (!strcmp(d->source, "CUPTI"))
			snprintf(name, sizeof(name), "GPU %u stream %u", d->key, lanes[l].stream);
		else
			snprintf(name, sizeof(name), "%s", d->label);
		json_array_append_new(names, json_string(name));
		const struct snrh_dev_work *any = NULL;
		for (size_t i = 0; i < o->nwork && !any; i++)
			if (o->work[i].device == lanes[l].device)
				any = &o->work[i];
		json_array_append_new(srcs, json_string(src_names[any ? any->src : 0]));
	}

	uint64_t *dur = snr_xcalloc(o->nwork + o->nwaits + 1, sizeof(*dur));
	for (size_t i = 0; i < o->nwork; i++)
		dur[i] = o->work[i].end - o->work[i].start;
	long *keep = choose(dur, o->nwork, max);
	for (size_t i = 0; i < o->nwork; i++) {
		const struct snrh_dev_work *w = &o->work[i];
		if (keep[i] < 0)
			continue;
		struct lane_key k = key_of(w);
		const struct lane_key *at = bsearch(&k, lanes, nl, sizeof(*lanes), lane_cmp);
		char by[128] = "";
		uint32_t tid = w->submit_tid;
		/* libta1rt's run after an upload: launched by the upload's call */
		if (!tid && w->src != SNRH_ONDEV_CUPTI && w->seq && i > 0 &&
		    o->work[i - 1].device == w->device && o->work[i - 1].seq == w->seq)
			tid = o->work[i - 1].submit_tid;
		if (tid) {
			long tl = thread_lane(t, tid);
			if (tl >= 0)
				snprintf(by, sizeof(by), "%s %u", snrh_str(t, t->threads.v[tl].comm), tid);
			else
				snprintf(by, sizeof(by), "thread %u", tid);
		}
		const char *dir = snrh_work_direction(w);
		json_array_append_new(work,
				      json_pack("[I, f, f, i, s, I, s, I, f, s]", (json_int_t)(at - lanes),
						ms_from(w->start, t0), ms_from(w->end, t0), w->xfer,
						w->name ? w->name : "?", (json_int_t)w->bytes, by,
						(json_int_t)w->seq, ms_from(w->submit, t0), dir ? dir : ""));
	}

	size_t nw = 0;
	for (size_t i = 0; i < o->nwaits; i++)
		dur[nw++] = o->waits[i].end - o->waits[i].start;
	long *wkeep = choose(dur, nw, max);
	for (size_t i = 0; i < o->nwaits; i++) {
		const struct snrh_host_wait *w = &o->waits[i];
		long tl = thread_lane(t, w->tid);
		if (wkeep[i] < 0 || tl < 0)
			continue;
		json_array_append_new(waits,
				      json_pack("[I, f, f, s, I]", (json_int_t)tl, ms_from(w->start, t0),
						ms_from(w->end, t0), w->call ? w->call : "?",
						(json_int_t)(w->work >= 0 ? keep[w->work] : -1)));
	}
	free(wkeep);
	free(keep);
	free(dur);
	free(lanes);
	return json_pack("{s:o, s:o, s:o, s:I, s:o, s:I}", "lanes", names, "lane_source", srcs, "work", work,
			 "work_total", (json_int_t)o->nwork, "waits", waits, "waits_total",
			 (json_int_t)o->nwaits);
}
