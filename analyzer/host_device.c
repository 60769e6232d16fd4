/*
 * host_device.c: on/off-device time and the host waits it causes (see
 * host_device.h and docs/host.md, "On/off-device").
 *
 * The split of a device's window is one sweep over its work sorted by time:
 * each piece adds a +1/-1 pair to the compute or the transfer count at its
 * start and end, and to the queued count at its submission and start; each
 * stretch between two consecutive event times goes, by the counts then, to
 * both (compute > 0 and transfer > 0), compute only, transfer only, queued
 * (nothing running, queued > 0) or idle. O(n log n) in the pieces of work.
 *
 * A host wait is ended by the piece of work that completed last within it
 * (on any device of the process; on its stream when CUPTI recorded a
 * stream synchronization inside the wait): a binary search over the work
 * sorted by end, then back over the completions inside the wait to the
 * first on that stream. A wait within which nothing completed was not held
 * by the device (the work it waited for had finished before it began).
 */
#include "analyzer/host_device.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/host_events.h"
#include "lib/snr_util.h"

/* ---- building the work list ---- */

static const struct snrh_probe *probe_of(const struct snrh_trace *t, uint32_t id)
{
	if (id & 0x80000000u)
		return NULL;
	for (size_t i = 0; i < t->probes.n; i++)
		if (t->probes.v[i].id == id)
			return &t->probes.v[i];
	return NULL;
}

static int u64_start_cmp(const void *a, const void *b)
{
	const struct snrh_interval *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int work_cmp(const void *a, const void *b)
{
	const struct snrh_dev_work *x = a, *y = b;
	if (x->src != y->src)
		return x->src - y->src;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->end < y->end ? -1 : x->end > y->end;
}

struct corr_api {
	uint32_t corr, tid;
	uint64_t start;
};

static int corr_cmp(const void *a, const void *b)
{
	const struct corr_api *x = a, *y = b;
	if (x->corr != y->corr)
		return x->corr < y->corr ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const char *comm_of(const struct snrh_trace *t, uint32_t tid)
{
	for (size_t i = 0; i < t->threads.n; i++)
		if (t->threads.v[i].tid == tid)
			return snrh_str(t, t->threads.v[i].comm);
	return "?";
}

static const struct snrh_dev_work *order_base;

static int order_cmp(const void *a, const void *b)
{
	const struct snrh_dev_work *x = &order_base[*(const size_t *)a], *y = &order_base[*(const size_t *)b];
	return x->start < y->start ? -1 : x->start > y->start;
}

/* Work run in a host thread and marked by G:COMP / G:XFER probes. A launch
 * is an upload (transfer) and the run after it, or a run alone; each
 * launch takes the next ta1rt_launch call in order (FIFO, exact with one
 * device) as its submission. */
static void probed_work(const struct snrh_trace *t, struct snrh_ondev *o, size_t *cap)
{
	size_t nl = 0, nw0 = o->nwork;
	struct snrh_interval *launches = snr_xcalloc(t->intervals.n + 1, sizeof(*launches));
	for (size_t i = 0; i < t->intervals.n; i++) {
		const struct snrh_interval *iv = &t->intervals.v[i];
		const struct snrh_probe *p = probe_of(t, iv->probe);
		if (!p)
			continue;
		if (!strcmp(p->symbol, "ta1rt_launch")) {
			launches[nl++] = *iv;
			continue;
		}
		int comp = !strcmp(p->bucket, "G:COMP"), xfer = !strcmp(p->bucket, "G:XFER");
		if (!comp && !xfer)
			continue;
		int src = strstr(p->lib, "ta1rt") ? SNRH_ONDEV_TA1 : SNRH_ONDEV_PROBES;
		if (o->nwork == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			o->work = snr_xrealloc(o->work, *cap * sizeof(*o->work));
		}
		o->work[o->nwork++] = (struct snrh_dev_work){.src = src,
							     .key = iv->tid,
							     .xfer = xfer,
							     .submit = iv->start,
							     .start = iv->start,
							     .end = iv->end < iv->start ? iv->start : iv->end,
							     .name = p->symbol,
							     .stream = iv->tid};
	}
	snr_qsort(launches, nl, sizeof(*launches), u64_start_cmp);
	if (o->nwork > nw0) /* o->work may still be NULL */
		snr_qsort(o->work + nw0, o->nwork - nw0, sizeof(*o->work), work_cmp);
	/* FIFO over the launches in the order the launches begin on the devices */
	size_t *order = snr_xcalloc(o->nwork - nw0 + 1, sizeof(*order)), nb = 0;
	for (size_t i = nw0; i < o->nwork; i++) {
		const struct snrh_dev_work *prev =
		    i > nw0 && o->work[i - 1].src == o->work[i].src && o->work[i - 1].key == o->work[i].key
			? &o->work[i - 1]
			: NULL;
		if (o->work[i].xfer || !prev || !prev->xfer)
			order[nb++] = i; /* begins a launch */
		else
			o->work[i].seq = UINT32_MAX; /* the run of the launch its upload began */
	}
	order_base = o->work;
	snr_qsort(order, nb, sizeof(*order), order_cmp);
	size_t next = 0;
	for (size_t k = 0; k < nb; k++) {
		struct snrh_dev_work *w = &o->work[order[k]];
		if (next < nl && launches[next].start <= w->start) {
			w->submit = launches[next].start;
			w->submit_tid = launches[next].tid;
			w->seq = (uint32_t)(next + 1);
			next++;
		} else {
			w->seq = 0;
		}
	}
	for (size_t i = nw0; i < o->nwork; i++)
		if (o->work[i].seq == UINT32_MAX) /* a run: the launch of its upload, not queued itself */
			o->work[i].seq = o->work[i - 1].seq;
	free(order);
	free(launches);
}

/* CUPTI kernels, copies and memsets. */
static void cupti_work(const struct snrh_trace *t, struct snrh_ondev *o, size_t *cap)
{
	struct corr_api *api = snr_xcalloc(t->device.n + 1, sizeof(*api));
	size_t na = 0;
	for (size_t i = 0; i < t->device.n; i++) {
		const struct snrh_device_rec *d = &t->device.v[i];
		if ((d->kind == SNRH_DEV_RUNTIME_API || d->kind == SNRH_DEV_DRIVER_API) && d->corr)
			api[na++] = (struct corr_api){d->corr, d->tid, d->start};
	}
	snr_qsort(api, na, sizeof(*api), corr_cmp);
	for (size_t i = 0; i < t->device.n; i++) {
		const struct snrh_device_rec *d = &t->device.v[i];
		if (d->kind != SNRH_DEV_KERNEL && d->kind != SNRH_DEV_MEMCPY && d->kind != SNRH_DEV_MEMSET)
			continue;
		struct snrh_dev_work w = {.src = SNRH_ONDEV_CUPTI,
					  .key = d->device,
					  .xfer = d->kind != SNRH_DEV_KERNEL,
					  .start = d->start,
					  .end = d->end < d->start ? d->start : d->end,
					  .name = snrh_str(t, d->name),
					  .seq = d->corr,
					  .stream = d->stream,
					  .bytes = d->bytes};
		w.submit = w.start;
		/* the earliest API record with its correlation id */
		size_t lo = 0, hi = na;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (api[mid].corr < d->corr)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (d->corr && lo < na && api[lo].corr == d->corr) {
			if (api[lo].start < w.start)
				w.submit = api[lo].start;
			w.submit_tid = api[lo].tid;
		}
		if (o->nwork == *cap) {
			*cap = *cap ? 2 * *cap : 64;
			o->work = snr_xrealloc(o->work, *cap * sizeof(*o->work));
		}
		o->work[o->nwork++] = w;
	}
	free(api);
}

/* ---- the split ---- */

struct edge {
	uint64_t ts;
	int what; /* 0 compute, 1 transfer, 2 queued */
	int delta;
};

static int edge_cmp(const void *a, const void *b)
{
	const struct edge *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static uint64_t clip(uint64_t v, uint64_t lo, uint64_t hi)
{
	return v < lo ? lo : v > hi ? hi : v;
}

void snrh_ondev_partition(const struct snrh_dev_work *w, size_t n, struct snrh_dev_stats *s)
{
	struct edge *e = snr_xcalloc(4 * n + 1, sizeof(*e));
	size_t ne = 0;
	s->compute_only = s->xfer_only = s->both = s->queued = s->idle = 0;
	s->items = n;
	s->compute_sum = s->xfer_sum = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = clip(w[i].start, s->t0, s->t1), b = clip(w[i].end, s->t0, s->t1);
		uint64_t q = clip(w[i].submit < w[i].start ? w[i].submit : w[i].start, s->t0, s->t1);
		if (b > a) {
			e[ne++] = (struct edge){a, w[i].xfer, +1};
			e[ne++] = (struct edge){b, w[i].xfer, -1};
		}
		if (a > q) {
			e[ne++] = (struct edge){q, 2, +1};
			e[ne++] = (struct edge){a, 2, -1};
		}
		if (w[i].xfer)
			s->xfer_sum += b - a;
		else
			s->compute_sum += b - a;
	}
	snr_qsort(e, ne, sizeof(*e), edge_cmp);
	long count[3] = {0, 0, 0};
	uint64_t at = s->t0;
	for (size_t i = 0; i <= ne; i++) {
		uint64_t ts = i < ne ? e[i].ts : s->t1;
		uint64_t len = ts - at;
		if (count[0] > 0 && count[1] > 0)
			s->both += len;
		else if (count[0] > 0)
			s->compute_only += len;
		else if (count[1] > 0)
			s->xfer_only += len;
		else if (count[2] > 0)
			s->queued += len;
		else
			s->idle += len;
		at = ts;
		if (i < ne)
			count[e[i].what] += e[i].delta;
	}
	free(e);
}

/* ---- host waits ---- */

static int wait_cmp(const void *a, const void *b)
{
	const struct snrh_host_wait *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int off_cmp(const void *a, const void *b)
{
	const struct snrh_offcpu *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int sync_cmp(const void *a, const void *b)
{
	const struct snrh_device_rec *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

static const struct snrh_dev_work *by_end_base;

static int end_cmp(const void *a, const void *b)
{
	const struct snrh_dev_work *x = &by_end_base[*(const size_t *)a],
				   *y = &by_end_base[*(const size_t *)b];
	return x->end < y->end ? -1 : x->end > y->end;
}

static void link_waits(const struct snrh_trace *t, struct snrh_ondev *o)
{
	for (size_t i = 0; i < t->intervals.n; i++) {
		const struct snrh_interval *iv = &t->intervals.v[i];
		const struct snrh_probe *p = probe_of(t, iv->probe);
		if (!p || strcmp(p->bucket, "H:WAIT_DEV"))
			continue;
		o->waits = snr_xrealloc(o->waits, (o->nwaits + 1) * sizeof(*o->waits));
		o->waits[o->nwaits++] = (struct snrh_host_wait){
		    iv->tid, iv->start, iv->end < iv->start ? iv->start : iv->end, 0, p->symbol, -1, 0, {0}};
	}
	snr_qsort(o->waits, o->nwaits, sizeof(*o->waits), wait_cmp);

	/* off-CPU time inside each wait (a thread's intervals do not overlap) */
	struct snrh_offcpu *off = snr_xcalloc(t->offcpu.n + 1, sizeof(*off));
	if (t->offcpu.n)
		memcpy(off, t->offcpu.v, t->offcpu.n * sizeof(*off));
	snr_qsort(off, t->offcpu.n, sizeof(*off), off_cmp);
	size_t j = 0;
	for (size_t i = 0; i < o->nwaits; i++) {
		struct snrh_host_wait *w = &o->waits[i];
		while (j < t->offcpu.n &&
		       (off[j].tid < w->tid || (off[j].tid == w->tid && off[j].end <= w->start)))
			j++;
		for (size_t k = j; k < t->offcpu.n && off[k].tid == w->tid && off[k].start < w->end; k++) {
			uint64_t a = off[k].start > w->start ? off[k].start : w->start;
			uint64_t b = off[k].end < w->end ? off[k].end : w->end;
			if (b > a)
				w->offcpu_ns += b - a;
		}
	}
	free(off);

	/* CUPTI's stream synchronizations, by start: a wait holding one waits
	 * for that stream only */
	struct snrh_device_rec *sync = snr_xcalloc(t->device.n + 1, sizeof(*sync));
	size_t nsync = 0;
	for (size_t i = 0; i < t->device.n; i++) {
		const struct snrh_device_rec *d = &t->device.v[i];
		if (d->kind == SNRH_DEV_SYNC && d->stream &&
		    !strcmp(snrh_str(t, d->name), "cudaStreamSynchronize"))
			sync[nsync++] = *d;
	}
	snr_qsort(sync, nsync, sizeof(*sync), sync_cmp);

	/* the work that completed last within each wait (on its stream) */
	size_t *idx = snr_xcalloc(o->nwork + 1, sizeof(*idx));
	for (size_t i = 0; i < o->nwork; i++)
		idx[i] = i;
	by_end_base = o->work;
	snr_qsort(idx, o->nwork, sizeof(*idx), end_cmp);
	for (size_t i = 0; i < o->nwaits; i++) {
		struct snrh_host_wait *w = &o->waits[i];
		size_t lo = 0, hi = nsync; /* the first synchronization starting in the wait */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (sync[mid].start < w->start)
				lo = mid + 1;
			else
				hi = mid;
		}
		if (lo < nsync && sync[lo].end <= w->end)
			w->stream = sync[lo].stream;
		lo = 0, hi = o->nwork; /* the first work with end > w->end */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (o->work[idx[mid]].end <= w->end)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo > 0 && o->work[idx[lo - 1]].end > w->start; lo--) {
			struct snrh_dev_work *d = &o->work[idx[lo - 1]];
			if (w->stream && (d->src != SNRH_ONDEV_CUPTI || d->stream != w->stream))
				continue;
			w->work = (long)idx[lo - 1];
			d->waits++;
			d->wait_ns += w->end - w->start;
			d->wake_ns += w->end - d->end;
			break;
		}
	}
	free(idx);
	free(sync);
}

/* The split of [t0, t1] as segments of one part each, in time order. */
struct seg {
	uint64_t a, b;
	int part;
};

static size_t split_segments(const struct snrh_dev_work *w, size_t n, uint64_t t0, uint64_t t1,
			     struct seg **out)
{
	struct edge *e = snr_xcalloc(4 * n + 1, sizeof(*e));
	size_t ne = 0, ns = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t a = clip(w[i].start, t0, t1), b = clip(w[i].end, t0, t1);
		uint64_t q = clip(w[i].submit < w[i].start ? w[i].submit : w[i].start, t0, t1);
		if (b > a) {
			e[ne++] = (struct edge){a, w[i].xfer, +1};
			e[ne++] = (struct edge){b, w[i].xfer, -1};
		}
		if (a > q) {
			e[ne++] = (struct edge){q, 2, +1};
			e[ne++] = (struct edge){a, 2, -1};
		}
	}
	snr_qsort(e, ne, sizeof(*e), edge_cmp);
	struct seg *sg = snr_xcalloc(ne + 2, sizeof(*sg));
	long count[3] = {0, 0, 0};
	uint64_t at = t0;
	for (size_t i = 0; i <= ne; i++) {
		uint64_t ts = i < ne ? e[i].ts : t1;
		int part = count[0] > 0 && count[1] > 0 ? SNRH_SPLIT_BOTH
			   : count[0] > 0		? SNRH_SPLIT_COMPUTE
			   : count[1] > 0		? SNRH_SPLIT_XFER
			   : count[2] > 0		? SNRH_SPLIT_QUEUED
							: SNRH_SPLIT_IDLE;
		if (ts > at) {
			if (ns && sg[ns - 1].part == part && sg[ns - 1].b == at)
				sg[ns - 1].b = ts;
			else
				sg[ns++] = (struct seg){at, ts, part};
		}
		at = ts;
		if (i < ne)
			count[e[i].what] += e[i].delta;
	}
	free(e);
	*out = sg;
	return ns;
}

/* Each linked wait's time by its device's split, and each piece of work's
 * overlap with the linked waits on its device. */
static const struct snrh_ondev *wait_dev_base;

static int wait_dev_cmp(const void *a, const void *b)
{
	const struct snrh_ondev *o = wait_dev_base;
	uint32_t x = o->work[o->waits[*(const size_t *)a].work].device;
	uint32_t y = o->work[o->waits[*(const size_t *)b].work].device;
	return x < y ? -1 : x > y;
}

static void waits_during(struct snrh_ondev *o)
{
	/* the linked waits grouped by device, so each device visits its own */
	size_t *lw = snr_xcalloc(o->nwaits + 1, sizeof(*lw)), nlw = 0, next = 0;
	for (size_t j = 0; j < o->nwaits; j++)
		if (o->waits[j].work >= 0)
			lw[nlw++] = j;
	wait_dev_base = o;
	snr_qsort(lw, nlw, sizeof(*lw), wait_dev_cmp);
	for (size_t d = 0, i = 0; d < o->ndev; d++) {
		size_t first = i;
		while (i < o->nwork && o->work[i].device == d)
			i++;
		struct seg *sg;
		size_t ns = split_segments(o->work + first, i - first, o->dev[d].t0, o->dev[d].t1, &sg);
		uint64_t *maxend = snr_xcalloc(i - first + 1, sizeof(*maxend));
		for (size_t k = first; k < i; k++)
			maxend[k - first] = k > first && maxend[k - first - 1] > o->work[k].end
						? maxend[k - first - 1]
						: o->work[k].end;
		for (; next < nlw && o->work[o->waits[lw[next]].work].device == d; next++) {
			struct snrh_host_wait *w = &o->waits[lw[next]];
			size_t lo = 0, hi = ns; /* the first segment ending after the wait starts */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (sg[mid].b <= w->start)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (; lo < ns && sg[lo].a < w->end; lo++) {
				uint64_t a = sg[lo].a > w->start ? sg[lo].a : w->start;
				uint64_t b = sg[lo].b < w->end ? sg[lo].b : w->end;
				w->during[sg[lo].part] += b - a;
			}
			lo = first, hi = i; /* the first piece starting at or after the wait's end */
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (o->work[mid].start < w->end)
					lo = mid + 1;
				else
					hi = mid;
			}
			for (size_t k = lo; k > first && maxend[k - 1 - first] > w->start; k--) {
				struct snrh_dev_work *p = &o->work[k - 1];
				uint64_t a = p->start > w->start ? p->start : w->start,
					 b = p->end < w->end ? p->end : w->end;
				if (b > a)
					p->waited_during_ns += b - a;
			}
		}
		free(maxend);
		free(sg);
	}
	free(lw);
}

void snrh_ondev_build(const struct snrh_trace *t, struct snrh_ondev *o)
{
	memset(o, 0, sizeof(*o));
	long long pid = (long long)json_integer_value(json_object_get(t->meta, "pid"));
	long long cupti_pid = pid;
	json_t *merged = json_object_get(t->meta, "merged"), *one;
	size_t mi;
	json_array_foreach(merged, mi, one)
	{
		if (json_object_get(one, "cupti")) {
			cupti_pid = (long long)json_integer_value(json_object_get(one, "pid"));
			break;
		}
	}
	if (json_object_get(t->meta, "cupti"))
		cupti_pid = pid;
	size_t cap = 0;
	probed_work(t, o, &cap);
	cupti_work(t, o, &cap);
	if (!o->nwork)
		return;
	snr_qsort(o->work, o->nwork, sizeof(*o->work), work_cmp);
	/* one device per (source, key), in that order */
	o->dev = snr_xcalloc(o->nwork, sizeof(*o->dev));
	static const char *const sources[] = {"libta1rt", "probes", "CUPTI"};
	for (size_t i = 0; i < o->nwork; i++) {
		struct snrh_dev_work *w = &o->work[i];
		if (!o->ndev || o->dev[o->ndev - 1].key != w->key ||
		    strcmp(o->dev[o->ndev - 1].source, sources[w->src])) {
			struct snrh_dev_stats *d = &o->dev[o->ndev++];
			d->source = sources[w->src];
			d->key = w->key;
			d->pid = w->src == SNRH_ONDEV_CUPTI ? cupti_pid : pid;
			if (w->src == SNRH_ONDEV_CUPTI)
				snprintf(d->label, sizeof(d->label), "GPU %u (CUPTI)", w->key);
			else
				snprintf(d->label, sizeof(d->label), "%s %s %u",
					 w->src == SNRH_ONDEV_TA1 ? "TA1 device, thread" : "device thread",
					 comm_of(t, w->key), w->key);
		}
		w->device = (uint32_t)(o->ndev - 1);
	}
	/* the window: the recording, widened to hold all the work */
	uint64_t t0 = (uint64_t)json_integer_value(json_object_get(t->meta, "t_start_ns"));
	uint64_t t1 = (uint64_t)json_integer_value(json_object_get(t->meta, "t_end_ns"));
	if (!t0 || t1 < t0) {
		t0 = UINT64_MAX;
		t1 = 0;
	}
	for (size_t i = 0; i < o->nwork; i++) {
		uint64_t s = o->work[i].submit < o->work[i].start ? o->work[i].submit : o->work[i].start;
		if (s < t0)
			t0 = s;
		if (o->work[i].end > t1)
			t1 = o->work[i].end;
	}
	for (size_t d = 0, i = 0; d < o->ndev; d++) {
		size_t first = i;
		while (i < o->nwork && o->work[i].device == d)
			i++;
		o->dev[d].t0 = t0;
		o->dev[d].t1 = t1;
		snrh_ondev_partition(o->work + first, i - first, &o->dev[d]);
	}
	link_waits(t, o);
	waits_during(o);
}

void snrh_ondev_free(struct snrh_ondev *o)
{
	free(o->dev);
	free(o->work);
	free(o->waits);
	memset(o, 0, sizeof(*o));
}

/* ---- per name ---- */

struct by_name {
	uint32_t device;
	int xfer;
	const char *name;
	uint64_t count, busy, queued, waits, wait_ns, during;
};

static int name_cmp(const void *a, const void *b)
{
	const struct by_name *x = a, *y = b;
	if (x->device != y->device)
		return x->device < y->device ? -1 : 1;
	if (x->xfer != y->xfer)
		return x->xfer - y->xfer;
	return strcmp(x->name, y->name);
}

static int name_wait_cmp(const void *a, const void *b)
{
	const struct by_name *x = a, *y = b;
	if (x->wait_ns != y->wait_ns)
		return x->wait_ns < y->wait_ns ? 1 : -1;
	return x->busy < y->busy ? 1 : x->busy > y->busy ? -1 : 0;
}

static size_t group_by_name(const struct snrh_ondev *o, struct by_name **out)
{
	struct by_name *v = snr_xcalloc(o->nwork + 1, sizeof(*v));
	for (size_t i = 0; i < o->nwork; i++) {
		const struct snrh_dev_work *w = &o->work[i];
		v[i] = (struct by_name){w->device, w->xfer,	      w->name,
					1,	   w->end - w->start, w->start - w->submit,
					w->waits,  w->wait_ns,	      w->waited_during_ns};
	}
	snr_qsort(v, o->nwork, sizeof(*v), name_cmp);
	size_t m = 0;
	for (size_t i = 0; i < o->nwork; i++) {
		if (m && !name_cmp(&v[m - 1], &v[i])) {
			v[m - 1].count++;
			v[m - 1].busy += v[i].busy;
			v[m - 1].queued += v[i].queued;
			v[m - 1].waits += v[i].waits;
			v[m - 1].wait_ns += v[i].wait_ns;
			v[m - 1].during += v[i].during;
		} else {
			v[m++] = v[i];
		}
	}
	snr_qsort(v, m, sizeof(*v), name_wait_cmp);
	*out = v;
	return m;
}

struct wait_totals {
	uint64_t n, ns, off, linked, linked_ns, wake_ns, during[SNRH_SPLIT_N];
};

static struct wait_totals wait_totals(const struct snrh_ondev *o)
{
	struct wait_totals s = {0};
	for (size_t i = 0; i < o->nwaits; i++) {
		const struct snrh_host_wait *w = &o->waits[i];
		s.n++;
		s.ns += w->end - w->start;
		s.off += w->offcpu_ns;
		if (w->work >= 0) {
			s.linked++;
			s.linked_ns += w->end - w->start;
			s.wake_ns += w->end - o->work[w->work].end;
			for (int k = 0; k < SNRH_SPLIT_N; k++)
				s.during[k] += w->during[k];
		}
	}
	return s;
}

static double ms(uint64_t ns)
{
	return (double)ns / 1e6;
}

static int work_wait_cmp(const void *a, const void *b)
{
	const struct snrh_dev_work *x = *(const struct snrh_dev_work *const *)a,
				   *y = *(const struct snrh_dev_work *const *)b;
	return x->wait_ns < y->wait_ns ? 1 : x->wait_ns > y->wait_ns ? -1 : 0;
}

void snrh_ondev_print(const struct snrh_ondev *o, unsigned top, FILE *out)
{
	if (!o->ndev)
		return;
	fprintf(out,
		"\non/off-device (on-device = compute U transfer, each instant once; queued = submitted, "
		"not started, nothing running; docs/host.md \"On/off-device\")\n");
	fprintf(out, "%-36s %8s %10s %10s %10s %10s %9s %9s %10s %7s\n", "device", "pid", "window ms",
		"on-device", "compute", "transfer", "both", "queued", "idle", "active");
	fprintf(out, "%-36s %8s %10s %10s %10s %10s %9s %9s %10s %7s\n", "", "", "", "ms", "only ms",
		"only ms", "ms", "ms", "ms", "");
	for (size_t d = 0; d < o->ndev; d++) {
		const struct snrh_dev_stats *s = &o->dev[d];
		uint64_t win = s->t1 - s->t0, on = s->compute_only + s->xfer_only + s->both;
		fprintf(out, "%-36s %8lld %10.3f %10.3f %10.3f %10.3f %9.3f %9.3f %10.3f %6.1f%%\n", s->label,
			s->pid, ms(win), ms(on), ms(s->compute_only), ms(s->xfer_only), ms(s->both),
			ms(s->queued), ms(s->idle), win ? 100.0 * (double)on / (double)win : 0.0);
	}
	struct wait_totals wt = wait_totals(o);
	if (wt.n)
		fprintf(out,
			"host waits (H:WAIT_DEV): %llu, %.3f ms (%.3f ms of it off-CPU); %llu ended by "
			"device work "
			"completing in them, %.3f ms (%.3f ms of it after the work completed: wake-up); %llu "
			"found "
			"their work done, %.3f ms\n",
			(unsigned long long)wt.n, ms(wt.ns), ms(wt.off), (unsigned long long)wt.linked,
			ms(wt.linked_ns), ms(wt.wake_ns), (unsigned long long)(wt.n - wt.linked),
			ms(wt.ns - wt.linked_ns));
	if (wt.linked)
		fprintf(
		    out,
		    "  the device while those %llu waited: compute only %.3f ms, transfer only %.3f ms, both "
		    "%.3f ms, queued %.3f ms, idle %.3f ms\n",
		    (unsigned long long)wt.linked, ms(wt.during[SNRH_SPLIT_COMPUTE]),
		    ms(wt.during[SNRH_SPLIT_XFER]), ms(wt.during[SNRH_SPLIT_BOTH]),
		    ms(wt.during[SNRH_SPLIT_QUEUED]), ms(wt.during[SNRH_SPLIT_IDLE]));
	struct by_name *v;
	size_t m = group_by_name(o, &v);
	fprintf(out, "%-36s %-8s %-28s %8s %11s %11s %7s %12s %12s\n", "device", "kind", "work", "count",
		"busy ms", "queued ms", "ended", "ended ms", "waited in ms");
	for (size_t i = 0; i < m; i++)
		fprintf(out, "%-36.36s %-8s %-28.28s %8llu %11.3f %11.3f %7llu %12.3f %12.3f\n",
			o->dev[v[i].device].label, v[i].xfer ? "transfer" : "compute", v[i].name,
			(unsigned long long)v[i].count, ms(v[i].busy), ms(v[i].queued),
			(unsigned long long)v[i].waits, ms(v[i].wait_ns), ms(v[i].during));
	free(v);
	/* the pieces of work the host waited on longest */
	const struct snrh_dev_work **p = snr_xcalloc(o->nwork + 1, sizeof(*p));
	size_t np = 0;
	for (size_t i = 0; i < o->nwork; i++)
		if (o->work[i].waits)
			p[np++] = &o->work[i];
	snr_qsort(p, np, sizeof(*p), work_wait_cmp);
	if (np && top)
		fprintf(out, "device work the host waited on longest (ms from the window's start)\n");
	for (size_t i = 0; i < np && i < top; i++) {
		const struct snrh_dev_work *w = p[i];
		char seq[32] = "";
		if (w->seq)
			snprintf(seq, sizeof(seq), " %s%u",
				 strcmp(o->dev[w->device].source, "CUPTI") ? "launch #" : "corr ", w->seq);
		fprintf(
		    out,
		    "  %s: %s%s ran %.3f-%.3f (%.3f ms, queued %.3f ms before), %u wait%s %.3f ms (%.3f ms "
		    "after it completed)\n",
		    o->dev[w->device].label, w->name, seq, ms(w->start - o->dev[w->device].t0),
		    ms(w->end - o->dev[w->device].t0), ms(w->end - w->start), ms(w->start - w->submit),
		    w->waits, w->waits == 1 ? "" : "s", ms(w->wait_ns), ms(w->wake_ns));
	}
	free(p);
}

static json_t *during_json(const uint64_t *d)
{
	return json_pack("{s:I, s:I, s:I, s:I, s:I}", "compute_only", (json_int_t)d[SNRH_SPLIT_COMPUTE],
			 "transfer_only", (json_int_t)d[SNRH_SPLIT_XFER], "both",
			 (json_int_t)d[SNRH_SPLIT_BOTH], "queued", (json_int_t)d[SNRH_SPLIT_QUEUED], "idle",
			 (json_int_t)d[SNRH_SPLIT_IDLE]);
}

json_t *snrh_ondev_json(const struct snrh_ondev *o)
{
	json_t *devs = json_array();
	for (size_t d = 0; d < o->ndev; d++) {
		const struct snrh_dev_stats *s = &o->dev[d];
		uint64_t win = s->t1 - s->t0, on = s->compute_only + s->xfer_only + s->both;
		json_array_append_new(
		    devs,
		    json_pack(
			"{s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:I, s:f, s:I, s:I, s:I}",
			"device", s->label, "source", s->source, "key", (json_int_t)s->key, "pid",
			(json_int_t)s->pid, "window_start_ns", (json_int_t)s->t0, "window_ns",
			(json_int_t)win, "on_device_ns", (json_int_t)on, "compute_only_ns",
			(json_int_t)s->compute_only, "transfer_only_ns", (json_int_t)s->xfer_only, "both_ns",
			(json_int_t)s->both, "queued_ns", (json_int_t)s->queued, "idle_ns",
			(json_int_t)s->idle, "active_ratio", win ? (double)on / (double)win : 0.0, "items",
			(json_int_t)s->items, "compute_sum_ns", (json_int_t)s->compute_sum, "transfer_sum_ns",
			(json_int_t)s->xfer_sum));
	}
	struct by_name *v;
	size_t m = group_by_name(o, &v);
	json_t *work = json_array();
	for (size_t i = 0; i < m; i++)
		json_array_append_new(
		    work, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I, s:I, s:I}", "device",
				    o->dev[v[i].device].label, "kind", v[i].xfer ? "transfer" : "compute",
				    "name", v[i].name, "count", (json_int_t)v[i].count, "busy_ns",
				    (json_int_t)v[i].busy, "queued_ns", (json_int_t)v[i].queued, "waits",
				    (json_int_t)v[i].waits, "host_wait_ns", (json_int_t)v[i].wait_ns,
				    "waited_during_ns", (json_int_t)v[i].during));
	free(v);
	json_t *waits = json_array();
	for (size_t i = 0; i < o->nwaits; i++) {
		const struct snrh_host_wait *w = &o->waits[i];
		json_t *j = json_pack("{s:I, s:s, s:I, s:I, s:I, s:I}", "tid", (json_int_t)w->tid, "call",
				      w->call, "start_ns", (json_int_t)w->start, "end_ns", (json_int_t)w->end,
				      "offcpu_ns", (json_int_t)w->offcpu_ns, "stream", (json_int_t)w->stream);
		if (w->work >= 0) {
			const struct snrh_dev_work *d = &o->work[w->work];
			json_object_set_new(j, "ended_by",
					    json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:I}", "device",
						      o->dev[d->device].label, "kind",
						      d->xfer ? "transfer" : "compute", "name", d->name,
						      "seq", (json_int_t)d->seq, "submit_ns",
						      (json_int_t)d->submit, "start_ns", (json_int_t)d->start,
						      "end_ns", (json_int_t)d->end));
			json_object_set_new(j, "during_ns", during_json(w->during));
		} else {
			json_object_set_new(j, "ended_by", json_null());
		}
		json_array_append_new(waits, j);
	}
	struct wait_totals wt = wait_totals(o);
	return json_pack("{s:o, s:o, s:{s:I, s:I, s:I, s:I, s:I, s:I, s:o, s:o}}", "devices", devs, "work",
			 work, "host_waits", "count", (json_int_t)wt.n, "ns", (json_int_t)wt.ns, "offcpu_ns",
			 (json_int_t)wt.off, "linked", (json_int_t)wt.linked, "linked_ns",
			 (json_int_t)wt.linked_ns, "wake_ns", (json_int_t)wt.wake_ns, "during_ns",
			 during_json(wt.during), "waits", waits);
}

/* ---- Perfetto ---- */

static double us(uint64_t ns)
{
	return (double)ns / 1e3;
}

static json_t *slice(const char *name, const char *cat, long long pid, long long tid, uint64_t a, uint64_t b)
{
	return json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I}", "name", name, "cat", cat, "ph", "X", "ts",
			 us(a), "dur", us(b - a), "pid", (json_int_t)pid, "tid", (json_int_t)tid);
}

static void meta(json_t *events, const char *what, long long pid, long long tid, const char *name)
{
	json_array_append_new(events, json_pack("{s:s, s:s, s:I, s:I, s:f, s:{s:s}}", "name", what, "ph", "M",
						"pid", (json_int_t)pid, "tid", (json_int_t)tid, "ts", 0.0,
						"args", "name", name));
}

/* Where a device's tracks go: the libta1rt process (tids from
 * SNRH_EV_TID_ONDEV + a stride per device), or the GPU's process (its own stream
 * tracks hold the work already). Per device, SNRH_EV_ONDEV_STRIDE tids:
 * the split, compute, transfer, then the queued tracks. */
static long long dev_pid(const struct snrh_dev_stats *s)
{
	return strcmp(s->source, "CUPTI") ? SNRH_EV_PID_TA1 : SNRH_EV_PID_GPU + (long long)s->key;
}

static int submit_cmp(const void *a, const void *b)
{
	const struct snrh_dev_work *x = *(const struct snrh_dev_work *const *)a,
				   *y = *(const struct snrh_dev_work *const *)b;
	return x->submit < y->submit ? -1 : x->submit > y->submit;
}

void snrh_ondev_trace_events(const struct snrh_ondev *o, json_t *events, long long host_pid)
{
	char name[256];
	for (size_t d = 0; d < o->ndev; d++) {
		const struct snrh_dev_stats *s = &o->dev[d];
		long long pid = dev_pid(s), base = SNRH_EV_TID_ONDEV + SNRH_EV_ONDEV_STRIDE * (long long)d;
		if (pid == SNRH_EV_PID_TA1) {
			meta(events, "process_name", pid, 0, "TA1 device (libta1rt)");
			snprintf(name, sizeof(name), "%s: compute", s->label);
			meta(events, "thread_name", pid, base + 1, name);
			snprintf(name, sizeof(name), "%s: transfer", s->label);
			meta(events, "thread_name", pid, base + 2, name);
		}
		snprintf(name, sizeof(name), "%s: on/off-device", s->label);
		meta(events, "thread_name", pid, base, name);
	}
	/* the split as slices: compute only, transfer only, compute+transfer, queued */
	for (size_t d = 0, i = 0; d < o->ndev; d++) {
		size_t first = i;
		while (i < o->nwork && o->work[i].device == d)
			i++;
		const struct snrh_dev_stats *s = &o->dev[d];
		long long pid = dev_pid(s), base = SNRH_EV_TID_ONDEV + SNRH_EV_ONDEV_STRIDE * (long long)d;
		struct edge *e = snr_xcalloc(4 * (i - first) + 1, sizeof(*e));
		size_t ne = 0;
		for (size_t k = first; k < i; k++) {
			const struct snrh_dev_work *w = &o->work[k];
			if (w->end > w->start) {
				e[ne++] = (struct edge){w->start, w->xfer, +1};
				e[ne++] = (struct edge){w->end, w->xfer, -1};
			}
			if (w->start > w->submit) {
				e[ne++] = (struct edge){w->submit, 2, +1};
				e[ne++] = (struct edge){w->start, 2, -1};
			}
		}
		snr_qsort(e, ne, sizeof(*e), edge_cmp);
		long count[3] = {0, 0, 0};
		const char *cur = NULL;
		uint64_t since = 0;
		for (size_t k = 0; k <= ne; k++) {
			if (k < ne)
				count[e[k].what] += e[k].delta;
			if (k + 1 < ne && e[k + 1].ts == e[k].ts)
				continue;
			const char *now = count[0] > 0 && count[1] > 0 ? "compute+transfer"
					  : count[0] > 0	       ? "compute"
					  : count[1] > 0	       ? "transfer"
					  : count[2] > 0	       ? "queued"
								       : NULL;
			uint64_t ts = k < ne ? e[k].ts : s->t1;
			if (now != cur || k == ne) {
				if (cur && ts > since)
					json_array_append_new(events,
							      slice(cur, "ondev", pid, base, since, ts));
				cur = now;
				since = ts;
			}
		}
		free(e);
		/* libta1rt's work on its own tracks */
		for (size_t k = first; k < i && pid == SNRH_EV_PID_TA1; k++) {
			const struct snrh_dev_work *w = &o->work[k];
			snprintf(name, sizeof(name), "%s%s%.0u", w->name, w->seq ? " #" : "", w->seq);
			json_t *ev = slice(name, w->xfer ? "G:XFER" : "G:COMP", pid, base + 1 + w->xfer,
					   w->start, w->end);
			json_object_set_new(ev, "args",
					    json_pack("{s:I, s:f}", "launch", (json_int_t)w->seq, "queued_us",
						      us(w->start - w->submit)));
			json_array_append_new(events, ev);
		}
		/* queued spans (they may overlap) on as many "queued" tracks as
		 * needed, each span on the first whose last span has ended */
		size_t nq = 0, nlanes = 0;
		const struct snrh_dev_work **q = snr_xcalloc(i - first + 1, sizeof(*q));
		for (size_t k = first; k < i; k++)
			if (o->work[k].start > o->work[k].submit)
				q[nq++] = &o->work[k];
		snr_qsort(q, nq, sizeof(*q), submit_cmp);
		uint64_t *lane_end = snr_xcalloc(nq + 1, sizeof(*lane_end));
		for (size_t k = 0; k < nq; k++) {
			size_t l = 0;
			while (l < nlanes && lane_end[l] > q[k]->submit)
				l++;
			if (l == nlanes && nlanes < SNRH_EV_ONDEV_STRIDE - 3) {
				snprintf(name, sizeof(name), "%s: queued%s%.0zu", s->label, nlanes ? " " : "",
					 nlanes ? nlanes + 1 : 0);
				meta(events, "thread_name", pid, base + 3 + (long long)nlanes, name);
				nlanes++;
			}
			if (l == nlanes)
				l--;
			lane_end[l] = q[k]->start;
			snprintf(name, sizeof(name), "queued: %s", q[k]->name);
			json_t *ev =
			    slice(name, "queued", pid, base + 3 + (long long)l, q[k]->submit, q[k]->start);
			json_object_set_new(ev, "args",
					    json_pack("{s:I, s:I}", "seq", (json_int_t)q[k]->seq,
						      "submit_tid", (json_int_t)q[k]->submit_tid));
			json_array_append_new(events, ev);
		}
		free(lane_end);
		free(q);
	}
	/* a flow from each host wait (its slice on the calls track) to the work
	 * whose completion ended it */
	for (size_t i = 0; i < o->nwaits; i++) {
		const struct snrh_host_wait *w = &o->waits[i];
		if (w->work < 0)
			continue;
		const struct snrh_dev_work *d = &o->work[w->work];
		const struct snrh_dev_stats *s = &o->dev[d->device];
		long long pid = dev_pid(s);
		long long tid =
		    pid == SNRH_EV_PID_TA1
			? SNRH_EV_TID_ONDEV + SNRH_EV_ONDEV_STRIDE * (long long)d->device + 1 + d->xfer
			: (long long)d->stream;
		uint64_t at = d->end > d->start ? d->end - 1 : d->start;
		json_array_append_new(events,
				      json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:f}", "name", "waited for",
						"cat", "ondev.wait", "ph", "s", "id",
						(json_int_t)((3ull << 40) | i), "pid", (json_int_t)host_pid,
						"tid", (json_int_t)(SNRH_EV_TID_CALLS + (long long)w->tid),
						"ts", us(w->start)));
		json_array_append_new(
		    events, json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:f, s:s}", "name", "waited for", "cat",
				      "ondev.wait", "ph", "f", "id", (json_int_t)((3ull << 40) | i), "pid",
				      (json_int_t)pid, "tid", (json_int_t)tid, "ts", us(at), "bp", "e"));
	}
}
