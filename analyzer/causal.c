/*
 * causal.c: see causal.h. The model is built once (threads' runs and
 * waits, each wait's waker, each run's samples); each prediction is one
 * replay, linear in the runs, waits and samples, so all candidates at all
 * speedups cost (candidates x speedups) replays.
 */
#include "analyzer/causal.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/causal_device.h"
#include "analyzer/causal_model.h"
#include "analyzer/host_report.h"
#include "lib/snr_lines.h"
#include "lib/snr_util.h"

#define MAX_FUNC_CANDS 20
#define MIN_FUNC_SHARE 0.01 /* a function with less of the samples is no candidate */
#define STATE_PREEMPTED 0 /* snrh_offcpu.state: switched out while runnable (recorder/host/host.h) */

static int order_cmp(const void *a, const void *b)
{
	const struct order *x = a, *y = b;
	if (x->b != y->b)
		return x->b < y->b ? -1 : 1;
	if (x->off != y->off) /* at one instant a switch-out comes before a switch-in */
		return x->off < y->off ? -1 : 1;
	if (x->th != y->th)
		return x->th < y->th ? -1 : 1;
	return x->i < y->i ? -1 : x->i > y->i;
}

static int offcpu_cmp(const void *a, const void *b)
{
	const struct snrh_offcpu *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static int sample_cmp(const void *a, const void *b)
{
	const struct snrh_sample *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static long thread_index(const struct causal_model *m, uint32_t tid)
{
	size_t lo = 0, hi = m->nth;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->th[mid].tid == tid)
			return (long)mid;
		if (m->th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

static int tid_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return x < y ? -1 : x > y;
}

/* The last item of th starting at or before ts, or -1. */
static long item_at(const struct thread_tl *th, uint64_t ts)
{
	size_t lo = 0, hi = th->it.n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (th->it.v[mid].a <= ts)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (long)lo - 1;
}

static uint32_t bucket_id(struct causal_model *m, const char *name)
{
	for (size_t i = 0; i < m->nbuckets; i++)
		if (!strcmp(m->bucket_names[i], name))
			return (uint32_t)i;
	m->bucket_names = snr_xrealloc(m->bucket_names, (m->nbuckets + 1) * sizeof(*m->bucket_names));
	m->bucket_names[m->nbuckets] = name;
	return (uint32_t)m->nbuckets++;
}

/* ---- the model ---- */

static void build_threads(const struct snrh_trace *t, const struct snrh_offcpu *offv, size_t noff,
			  struct causal_model *m, struct snrh_bucketer *bk, struct snrh_causal *c)
{
	uint64_t t0 = (uint64_t)json_integer_value(json_object_get(t->meta, "t_start_ns"));
	uint64_t t1 = (uint64_t)json_integer_value(json_object_get(t->meta, "t_end_ns"));
	uint32_t pid = (uint32_t)json_integer_value(json_object_get(t->meta, "pid"));
	/* the threads: every tid with an event */
	uint32_t *tids = snr_xcalloc(noff + t->samples.n + t->marks.n + 1, sizeof(*tids));
	size_t ntids = 0;
	for (size_t i = 0; i < noff; i++)
		tids[ntids++] = offv[i].tid;
	for (size_t i = 0; i < t->samples.n; i++)
		tids[ntids++] = t->samples.v[i].tid;
	for (size_t i = 0; i < t->marks.n; i++)
		tids[ntids++] = t->marks.v[i].tid;
	snr_qsort(tids, ntids, sizeof(*tids), tid_cmp);
	size_t u = 0;
	for (size_t i = 0; i < ntids; i++)
		if (!u || tids[u - 1] != tids[i])
			tids[u++] = tids[i];
	m->nth = u;
	m->th = snr_xcalloc(u + 1, sizeof(*m->th));
	for (size_t i = 0; i < u; i++)
		m->th[i].tid = tids[i];
	free(tids);

	struct snrh_offcpu *off = snr_xcalloc(noff + 1, sizeof(*off));
	if (noff)
		memcpy(off, offv, noff * sizeof(*off));
	snr_qsort(off, noff, sizeof(*off), offcpu_cmp);
	struct snrh_sample *smp = snr_xcalloc(t->samples.n + 1, sizeof(*smp));
	if (t->samples.n)
		memcpy(smp, t->samples.v, t->samples.n * sizeof(*smp));
	snr_qsort(smp, t->samples.n, sizeof(*smp), sample_cmp);

	/* each thread's first and last mark, in one pass */
	uint64_t *mark_first = snr_xcalloc(m->nth + 1, sizeof(uint64_t)), *mark_last = snr_xcalloc(m->nth + 1, sizeof(uint64_t));
	for (size_t k = 0; k < m->nth; k++)
		mark_first[k] = UINT64_MAX;
	for (size_t i = 0; i < t->marks.n; i++) {
		long k = thread_index(m, t->marks.v[i].tid);
		if (k < 0)
			continue;
		if (t->marks.v[i].ts < mark_first[k])
			mark_first[k] = t->marks.v[i].ts;
		if (t->marks.v[i].ts > mark_last[k])
			mark_last[k] = t->marks.v[i].ts;
	}
	/* function ids: the user stack's leaf symbol */
	uint32_t *fid_of_sym = snr_xcalloc(t->strings.n + 1, sizeof(*fid_of_sym)); /* string -> id + 1 */
	size_t oi = 0, si = 0;
	for (size_t k = 0; k < m->nth; k++) {
		struct thread_tl *th = &m->th[k];
		uint32_t tid = th->tid;
		while (oi < noff && off[oi].tid < tid)
			oi++;
		while (si < t->samples.n && smp[si].tid < tid)
			si++;
		size_t o0 = oi, s0 = si;
		while (oi < noff && off[oi].tid == tid)
			oi++;
		while (si < t->samples.n && smp[si].tid == tid)
			si++;
		/* the thread's span: the trace's start for the process's main
		 * thread, else its first event; its last event or the trace's end */
		uint64_t first = UINT64_MAX, last = 0;
		if (oi > o0) {
			first = off[o0].start;
			last = off[oi - 1].end;
		}
		if (si > s0) {
			first = smp[s0].ts < first ? smp[s0].ts : first;
			last = smp[si - 1].ts > last ? smp[si - 1].ts : last;
		}
		if (mark_first[k] < first)
			first = mark_first[k];
		if (mark_last[k] > last)
			last = mark_last[k];
		if (tid == pid && t0 && t0 < first)
			first = t0;
		if (t1 > last && oi > o0 && off[oi - 1].end >= last)
			last = off[oi - 1].end; /* ended off CPU: nothing after */
		/* samples of the thread */
		th->nsamples = si - s0;
		th->sfunc = snr_xcalloc(th->nsamples + 1, sizeof(*th->sfunc));
		th->sbucket = snr_xcalloc(th->nsamples + 1, sizeof(*th->sbucket));
		for (size_t j = 0; j < th->nsamples; j++) {
			const struct snrh_sample *s = &smp[s0 + j];
			if (s->ustack >= 0 && (size_t)s->ustack < t->stacks.n && t->stacks.v[s->ustack].nframes) {
				uint32_t sym = t->stacks.v[s->ustack].frames[0].sym;
				if (sym < t->strings.n) {
					if (!fid_of_sym[sym]) {
						m->func_sym = snr_xrealloc(m->func_sym, (m->nfuncs + 1) * sizeof(*m->func_sym));
						m->func_sym[m->nfuncs++] = sym;
						fid_of_sym[sym] = (uint32_t)m->nfuncs;
					}
					th->sfunc[j] = fid_of_sym[sym];
				}
			}
			const char *b = snrh_bucket_for(bk, tid, s->ts, s->kstack);
			th->sbucket[j] = bucket_id(m, b ? b : "H:APP");
		}
		c->samples += th->nsamples;
		/* runs and waits */
		uint64_t at = first;
		size_t sj = 0;
		for (size_t i = o0; i <= oi; i++) {
			/* Preemption does not end a run: the time a thread waited for a
			 * CPU while runnable goes with the work around it (at the same
			 * CPU share, less work waits proportionally less). Overlapping
			 * or empty intervals are not part of this timeline. */
			if (i < oi && (off[i].state == STATE_PREEMPTED || off[i].end <= off[i].start || off[i].start < at))
				continue;
			uint64_t run_end = i < oi ? off[i].start : last;
			if (run_end > at) {
				struct item r = {at, run_end, 0, 0, 0, 0, 0, 0, 0};
				while (sj < th->nsamples && smp[s0 + sj].ts < at)
					sj++;
				r.s0 = (uint32_t)sj;
				while (sj < th->nsamples && smp[s0 + sj].ts <= run_end)
					sj++;
				r.s1 = (uint32_t)sj;
				SNRH_PUSH(th->it, r);
				c->runs++;
			}
			if (i == oi)
				break;
			struct item w = {off[i].start, off[i].end, 0, 1, (uint8_t)off[i].state, 0, 0, 0, 0};
			const char *b = snrh_bucket_for(bk, tid, off[i].start, off[i].kstack);
			if (b)
				w.bucket = (uint16_t)(bucket_id(m, b) + 1);
			w.waker_th = off[i].waker; /* a tid for now */
			SNRH_PUSH(th->it, w);
			c->waits++;
			at = off[i].end;
		}
	}
	free(fid_of_sym);
	free(mark_first);
	free(mark_last);
	free(off);
	free(smp);
	/* wakers: tid -> thread index + 1, only threads of the process */
	for (size_t k = 0; k < m->nth; k++)
		for (size_t i = 0; i < m->th[k].it.n; i++) {
			struct item *w = &m->th[k].it.v[i];
			if (!w->off)
				continue;
			long wt = w->waker_th && w->waker_th != m->th[k].tid && w->state != STATE_PREEMPTED
					  ? thread_index(m, w->waker_th)
					  : -1;
			w->waker_th = wt >= 0 ? (uint32_t)wt + 1 : 0;
			if (w->waker_th)
				c->dependent_waits++;
		}
	c->threads = m->nth;
	for (size_t k = 0; k < m->nth; k++)
		c->device_timelines += m->th[k].tid >= CAUSAL_DEV_TID;
	/* the replay's order: by end */
	for (size_t k = 0; k < m->nth; k++)
		m->nord += m->th[k].it.n;
	m->ord = snr_xcalloc(m->nord + 1, sizeof(*m->ord));
	size_t n = 0;
	for (size_t k = 0; k < m->nth; k++) {
		for (size_t i = 0; i < m->th[k].it.n; i++)
			m->ord[n++] = (struct order){m->th[k].it.v[i].b, (uint32_t)k, (uint32_t)i, m->th[k].it.v[i].off};
		m->th[k].nend = snr_xcalloc(m->th[k].it.n + 1, sizeof(double));
	}
	snr_qsort(m->ord, m->nord, sizeof(*m->ord), order_cmp);
}

/* ---- the replay ---- */

struct shrink {
	const struct causal_dev_cover *cover; /* a device candidate: the runs it shrinks */
	bool bucket;
	uint32_t id;   /* function id + 1 (as sfunc), or bucket id */
	size_t cand;   /* for the thread shares */
	double s;      /* fraction, 0..1 */
};

/* How much shorter item i of th gets. */
static double item_cut(const struct thread_tl *th, const struct item *it, const struct shrink *k)
{
	double d = (double)(it->b - it->a);
	if (k->cover)
		return !it->off && th->tid == k->cover->tid ? k->cover->ns[it - th->it.v] * k->s : 0;
	if (it->off)
		return k->bucket && !it->waker_th && it->state != STATE_PREEMPTED && it->bucket == k->id + 1 ? d * k->s : 0;
	size_t n = it->s1 - it->s0, hit = 0;
	if (!n)
		return d * k->s * th->share[k->cand];
	for (size_t j = it->s0; j < it->s1; j++)
		hit += k->bucket ? th->sbucket[j] == k->id : th->sfunc[j] == k->id;
	return d * k->s * (double)hit / (double)n;
}

static double nstart_of(const struct thread_tl *th, size_t i)
{
	return i ? th->nend[i - 1] : (double)th->it.v[0].a;
}

/* The new time of instant ts of thread th (on CPU then, or at a wait's
 * start), as far as the replay has got. */
static double map_time(const struct thread_tl *th, uint64_t ts, const struct shrink *k)
{
	long i = item_at(th, ts);
	if (i < 0)
		return (double)ts;
	if ((size_t)i == th->done + 1 && !th->it.v[i - 1].off && th->it.v[i].off) {
		/* a wait whose run before it ends when the wait being replayed
		 * does: that run's new end needs nothing else */
		const struct item *r = &th->it.v[i - 1];
		return nstart_of(th, (size_t)i - 1) + (double)(r->b - r->a) - item_cut(th, r, k);
	}
	if ((size_t)i > th->done) { /* not reached yet (equal end times): shift as the last one done */
		double shift = th->done ? th->nend[th->done - 1] - (double)th->it.v[th->done - 1].b : 0;
		return (double)ts + shift;
	}
	const struct item *it = &th->it.v[i];
	double ns = nstart_of(th, (size_t)i);
	if (it->off || it->b == it->a)
		return ns;
	double d = (double)(it->b - it->a), nd = d - item_cut(th, it, k);
	uint64_t x = ts > it->b ? it->b : ts;
	return ns + (double)(x - it->a) * nd / d;
}

static void replay(struct causal_model *m, const struct shrink *k)
{
	for (size_t t = 0; t < m->nth; t++)
		m->th[t].done = 0;
	for (size_t o = 0; o < m->nord; o++) {
		struct thread_tl *th = &m->th[m->ord[o].th];
		size_t i = m->ord[o].i;
		const struct item *it = &th->it.v[i];
		double ns = nstart_of(th, i), d = (double)(it->b - it->a), ne = ns + d - item_cut(th, it, k);
		if (it->off && it->waker_th) {
			/* the waker's last moment on CPU at or before the wake-up */
			const struct thread_tl *w = &m->th[it->waker_th - 1];
			uint64_t x = it->wake_at ? it->wake_at : it->b;
			long j = item_at(w, x);
			uint64_t at = j < 0 ? 0 : w->it.v[j].off ? w->it.v[j].a : x;
			if (j >= 0 && at >= it->a) {
				double nw = map_time(w, at, k) + (double)(it->b - at);
				ne = nw > ns ? nw : ns;
			}
		}
		th->nend[i] = ne;
		th->done = i + 1;
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* A point's units on the replayed timeline -> its figures. */
static void point_figures(const struct causal_model *m, const struct snrh_point *p, const struct shrink *k,
			  struct snrh_point_stats *s)
{
	size_t n = p->u.n;
	uint64_t *ends = snr_xcalloc(n + 1, sizeof(*ends)), *lat = p->latency ? snr_xcalloc(n + 1, sizeof(*lat)) : NULL;
	for (size_t i = 0; i < n; i++) {
		long te = thread_index(m, p->u.v[i].tid), tb = thread_index(m, p->u.v[i].btid);
		double e = te >= 0 ? map_time(&m->th[te], p->u.v[i].end, k) : (double)p->u.v[i].end;
		double b = tb >= 0 ? map_time(&m->th[tb], p->u.v[i].begin, k) : (double)p->u.v[i].begin;
		ends[i] = e > 0 ? (uint64_t)llround(e) : 0;
		if (lat)
			lat[i] = e > b ? (uint64_t)llround(e - b) : 0;
	}
	snr_qsort(ends, n, sizeof(*ends), u64_cmp);
	snrh_point_stats(ends, lat, n, s);
	free(ends);
	free(lat);
}

static double pct(double now, double was)
{
	return was > 0 ? (now / was - 1.0) * 100.0 : 0.0;
}

void snrh_causal_predict(const struct snrh_causal *c, size_t cand, double speedup_pct,
			 struct snrh_causal_effect *per_point)
{
	struct causal_model *m = c->model;
	const struct snrh_causal_cand *cd = &c->cands[cand];
	struct shrink k = {cd->cover, cd->bucket, cd->bucket ? m->cand_id[cand] : m->cand_id[cand] + 1, cand,
			   speedup_pct / 100.0};
	replay(m, &k);
	for (int p = 0; p < c->npoints; p++) {
		struct snrh_point_stats s;
		point_figures(m, &c->points[p], &k, &s);
		per_point[p].throughput_pct = pct(s.per_second, c->base[p].per_second);
		per_point[p].latency_p50_pct = pct(s.p50_ms, c->base[p].p50_ms);
		per_point[p].latency_p99_pct = pct(s.p99_ms, c->base[p].p99_ms);
	}
}

/* ---- candidates ---- */

/* The DWARF place of a function candidate's most-sampled pc: the trace's
 * MAPS hold the executable mappings, each file loaded at start - offset
 * (p_vaddr == p_offset in the segments of the usual executables and
 * libraries). */
static void place_function(const struct snrh_trace *t, struct snrh_causal_cand *cd, uint64_t pc, uint32_t module,
			   struct snr_lines **lines, json_t *added)
{
	size_t i;
	json_t *e;
	cd->module = snr_xstrdup(snrh_str(t, module));
	cd->pc = pc;
	json_array_foreach(t->maps, i, e)
	{
		const char *path = json_string_value(json_object_get(e, "path"));
		uint64_t start = (uint64_t)json_integer_value(json_object_get(e, "start"));
		uint64_t end = (uint64_t)json_integer_value(json_object_get(e, "end"));
		uint64_t offset = (uint64_t)json_integer_value(json_object_get(e, "offset"));
		if (!path || path[0] != '/' || pc < start || pc >= end || offset > start)
			continue;
		uint64_t bias = start - offset;
		if (!*lines)
			*lines = snr_lines_new();
		if (!json_object_get(added, path)) {
			char err[600];
			const char *bid = json_string_value(json_object_get(e, "build_id"));
			json_object_set_new(added, path,
					    json_boolean(snr_lines_add(*lines, path, bias, bid && *bid ? bid : NULL, err,
								       sizeof(err)) == 0));
		}
		const struct snr_place *pl = snr_lines_find(*lines, pc);
		if (pl && pl->file) {
			cd->file = snr_xstrdup(pl->file);
			cd->line = pl->line;
		}
		cd->pc = pc - bias;
		return;
	}
}

static int cand_rank_cmp(const void *a, const void *b, const struct snrh_causal *c)
{
	const struct snrh_causal_cand *x = a, *y = b;
	size_t last = (size_t)(c->nspeedups - 1) * (size_t)c->npoints;
	double ex = x->effect[last].throughput_pct, ey = y->effect[last].throughput_pct;
	if (fabs(ex - ey) > 1e-9)
		return ex > ey ? -1 : 1;
	return x->samples > y->samples ? -1 : x->samples < y->samples;
}

/* Each thread's share of each candidate, for its runs without samples. */
static void compute_shares(struct snrh_causal *c)
{
	struct causal_model *m = c->model;
	for (size_t k = 0; k < m->nth; k++) {
		struct thread_tl *th = &m->th[k];
		free(th->share);
		th->share = snr_xcalloc(c->ncands + 1, sizeof(double));
		for (size_t ci = 0; ci < c->ncands && th->nsamples; ci++) {
			size_t hit = 0;
			if (c->cands[ci].device_kind)
				continue;
			for (size_t j = 0; j < th->nsamples; j++)
				hit += c->cands[ci].bucket ? th->sbucket[j] == m->cand_id[ci]
							   : th->sfunc[j] == m->cand_id[ci] + 1;
			th->share[ci] = (double)hit / (double)th->nsamples;
		}
	}
}

int snrh_causal_run(const struct snrh_trace *t, const double *speedups, unsigned nspeedups, struct snrh_causal *out,
		    char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	int np = snrh_points_build(t, &out->points, err, errlen);
	if (np < 0)
		return -1;
	out->npoints = np;
	if (!np) {
		snprintf(err, errlen, "the trace has no progress point (record with --progress SYM or --latency BEGIN:END)");
		return -1;
	}
	out->base = snr_xcalloc((size_t)np, sizeof(*out->base));
	for (int p = 0; p < np; p++) {
		snrh_point_stats_of(&out->points[p], &out->base[p]);
		if (out->base[p].count < 3) {
			snprintf(err, errlen, "progress point %s has %zu units: too few to predict a rate (want 3 or more)",
				 out->points[p].name, out->base[p].count);
			return -1;
		}
	}
	if (!t->samples.n) {
		snprintf(err, errlen, "the trace has no on-CPU samples (recorded with -F 0?): nothing says where time goes");
		return -1;
	}
	out->nspeedups = nspeedups;
	out->speedups = snr_xcalloc(nspeedups, sizeof(double));
	memcpy(out->speedups, speedups, nspeedups * sizeof(double));
	out->hz = (double)json_integer_value(json_object_get(t->meta, "hz"));
	struct causal_model *m = snr_xcalloc(1, sizeof(*m));
	out->model = m;
	struct snrh_bucketer *bk = snrh_bucketer_new(t);
	struct snrh_ondev ondev;
	snrh_ondev_build(t, &ondev);
	struct snrh_offcpu *offv;
	struct causal_wake *wakes;
	size_t nwakes, noff = causal_device_offcpu(t, &ondev, &offv, &wakes, &nwakes);
	build_threads(t, offv, noff, m, bk, out);
	causal_device_wakes(m, wakes, nwakes);
	free(offv);
	free(wakes);
	snrh_bucketer_free(bk);

	/* self samples per function and bucket, and the most-sampled pc */
	size_t *fcount = snr_xcalloc(m->nfuncs + 1, sizeof(*fcount)), *bcount = snr_xcalloc(m->nbuckets + 1, sizeof(*bcount));
	for (size_t k = 0; k < m->nth; k++)
		for (size_t j = 0; j < m->th[k].nsamples; j++) {
			if (m->th[k].sfunc[j])
				fcount[m->th[k].sfunc[j] - 1]++;
			bcount[m->th[k].sbucket[j]]++;
		}
	double off_ns_b[256] = {0};
	for (size_t k = 0; k < m->nth; k++)
		for (size_t i = 0; i < m->th[k].it.n; i++) {
			const struct item *it = &m->th[k].it.v[i];
			if (it->off && !it->waker_th && it->state != STATE_PREEMPTED && it->bucket && it->bucket <= 256)
				off_ns_b[it->bucket - 1] += (double)(it->b - it->a);
		}
	/* functions by self samples, the top ones with at least 1% */
	size_t *fidx = snr_xcalloc(m->nfuncs + 1, sizeof(*fidx));
	for (size_t f = 0; f < m->nfuncs; f++)
		fidx[f] = f;
	for (size_t a = 0; a < m->nfuncs; a++) /* selection of the top MAX_FUNC_CANDS */
		for (size_t b = a + 1; b < m->nfuncs; b++)
			if (fcount[fidx[b]] > fcount[fidx[a]]) {
				size_t x = fidx[a];
				fidx[a] = fidx[b];
				fidx[b] = x;
			}
	double sample_ms = out->hz > 0 ? 1000.0 / out->hz : 0;
	size_t ndev = causal_device_count(&ondev);
	out->cands = snr_xcalloc(MAX_FUNC_CANDS + m->nbuckets + ndev + 1, sizeof(*out->cands));
	m->cand_id = snr_xcalloc(MAX_FUNC_CANDS + m->nbuckets + ndev + 1, sizeof(*m->cand_id));
	struct snr_lines *lines = NULL;
	json_t *added = json_object();
	for (size_t a = 0; a < m->nfuncs && a < MAX_FUNC_CANDS; a++) {
		size_t f = fidx[a];
		if ((double)fcount[f] < MIN_FUNC_SHARE * (double)out->samples || !fcount[f])
			break;
		struct snrh_causal_cand *cd = &out->cands[out->ncands];
		cd->name = snr_xstrdup(snrh_str(t, m->func_sym[f]));
		cd->samples = fcount[f];
		cd->self_ms = (double)fcount[f] * sample_ms;
		cd->self_pct = 100.0 * (double)fcount[f] / (double)out->samples;
		/* its most-sampled pc (the leaf frame's address) */
		uint64_t best_pc = 0;
		uint32_t best_mod = 0;
		size_t best_n = 0;
		SNRH_VEC(struct pcn { uint64_t pc; uint32_t mod; size_t n; }) pcs = {0};
		for (size_t s = 0; s < t->samples.n; s++) {
			int32_t us = t->samples.v[s].ustack;
			if (us < 0 || (size_t)us >= t->stacks.n || !t->stacks.v[us].nframes ||
			    t->stacks.v[us].frames[0].sym != m->func_sym[f])
				continue;
			const struct snrh_frame *fr = &t->stacks.v[us].frames[0];
			size_t q = 0;
			while (q < pcs.n && pcs.v[q].pc != fr->addr)
				q++;
			if (q == pcs.n) {
				if (pcs.n >= 4096)
					continue;
				struct pcn z = {fr->addr, fr->module, 0};
				SNRH_PUSH(pcs, z);
			}
			if (++pcs.v[q].n > best_n) {
				best_n = pcs.v[q].n;
				best_pc = pcs.v[q].pc;
				best_mod = pcs.v[q].mod;
			}
		}
		free(pcs.v);
		place_function(t, cd, best_pc, best_mod, &lines, added);
		m->cand_id[out->ncands++] = (uint32_t)f;
	}
	for (size_t b = 0; b < m->nbuckets; b++) {
		if (!bcount[b] && !(b < 256 && off_ns_b[b] > 0))
			continue;
		struct snrh_causal_cand *cd = &out->cands[out->ncands];
		cd->name = snr_xstrdup(m->bucket_names[b]);
		cd->bucket = true;
		cd->samples = bcount[b];
		cd->self_ms = (double)bcount[b] * sample_ms;
		cd->self_pct = 100.0 * (double)bcount[b] / (double)out->samples;
		cd->off_ms = b < 256 ? off_ns_b[b] / 1e6 : 0;
		m->cand_id[out->ncands++] = (uint32_t)b;
	}
	causal_device_cands(out, &ondev);
	snrh_ondev_free(&ondev);
	snr_lines_free(lines);
	json_decref(added);
	free(fidx);
	compute_shares(out);
	free(fcount);
	free(bcount);
	for (size_t ci = 0; ci < out->ncands; ci++) {
		out->cands[ci].effect = snr_xcalloc((size_t)nspeedups * (size_t)np, sizeof(struct snrh_causal_effect));
		for (unsigned s = 0; s < nspeedups; s++)
			snrh_causal_predict(out, ci, speedups[s], &out->cands[ci].effect[(size_t)s * (size_t)np]);
	}
	/* ranked by the first point's throughput at the largest speedup; the
	 * model's ids move with their candidates */
	struct { struct snrh_causal_cand c; uint32_t id; } *tmp = snr_xcalloc(out->ncands + 1, sizeof(*tmp));
	for (size_t ci = 0; ci < out->ncands; ci++) {
		tmp[ci].c = out->cands[ci];
		tmp[ci].id = m->cand_id[ci];
	}
	for (size_t a = 1; a < out->ncands; a++) /* insertion sort: stable, few candidates */
		for (size_t b = a; b > 0 && cand_rank_cmp(&tmp[b].c, &tmp[b - 1].c, out) < 0; b--) {
			__typeof__(*tmp) x = tmp[b];
			tmp[b] = tmp[b - 1];
			tmp[b - 1] = x;
		}
	for (size_t ci = 0; ci < out->ncands; ci++) {
		out->cands[ci] = tmp[ci].c;
		m->cand_id[ci] = tmp[ci].id;
	}
	free(tmp);
	compute_shares(out); /* by the new order */
	return 0;
}

void snrh_causal_free(struct snrh_causal *c)
{
	struct causal_model *m = c->model;
	if (m) {
		for (size_t k = 0; k < m->nth; k++) {
			free(m->th[k].it.v);
			free(m->th[k].sfunc);
			free(m->th[k].sbucket);
			free(m->th[k].share);
			free(m->th[k].nend);
		}
		free(m->th);
		free(m->ord);
		free(m->func_sym);
		free(m->bucket_names);
		free(m->cand_id);
		free(m);
	}
	for (size_t i = 0; i < c->ncands; i++) {
		free(c->cands[i].name);
		free(c->cands[i].module);
		free(c->cands[i].file);
		free(c->cands[i].device);
		causal_dev_cover_free(c->cands[i].cover);
		free(c->cands[i].effect);
	}
	free(c->cands);
	free(c->speedups);
	free(c->base);
	snrh_points_free(c->points, c->npoints);
	memset(c, 0, sizeof(*c));
}

/* ---- output ---- */

#define OFF_PATH_PCT 1.0   /* |effect| below this at the largest speedup: gains nothing */
#define HOT_SELF_PCT 5.0   /* a function with this much of the samples is hot */

/* The largest change a candidate makes to any point at speedup s: of the
 * throughput and the median latency (tail: of the p99 instead). */
static double max_abs_effect(const struct snrh_causal *c, const struct snrh_causal_cand *cd, unsigned s, bool tail)
{
	double mx = 0;
	for (int p = 0; p < c->npoints; p++) {
		const struct snrh_causal_effect *e = &cd->effect[(size_t)s * (size_t)c->npoints + (size_t)p];
		double v = tail ? fabs(e->latency_p99_pct) : fmax(fabs(e->throughput_pct), fabs(e->latency_p50_pct));
		mx = fmax(mx, v);
	}
	return mx;
}

/* A hot function (of the on-CPU samples) or device candidate (of its
 * device's window) that moves no point. */
bool snrh_causal_off_path(const struct snrh_causal *c, const struct snrh_causal_cand *cd)
{
	if (cd->bucket || (cd->device_kind ? cd->device_pct : cd->self_pct) < HOT_SELF_PCT)
		return false;
	return max_abs_effect(c, cd, c->nspeedups - 1, false) < OFF_PATH_PCT;
}

const char *snrh_causal_where(const struct snrh_causal_cand *cd, char *buf, size_t len)
{
	if (cd->device_kind)
		snprintf(buf, len, "%s", cd->device);
	else if (cd->bucket)
		snprintf(buf, len, "(bucket)");
	else if (cd->file) {
		const char *base = strrchr(cd->file, '/');
		snprintf(buf, len, "%s:%u 0x%llx", base ? base + 1 : cd->file, cd->line, (unsigned long long)cd->pc);
	} else
		snprintf(buf, len, "%s+0x%llx", cd->module ? cd->module : "?", (unsigned long long)cd->pc);
	return buf;
}

void snrh_causal_text(const struct snrh_causal *c, FILE *out)
{
	char dev[80] = "";
	if (c->device_timelines)
		snprintf(dev, sizeof(dev), " (%zu of them CUPTI devices' timelines)", c->device_timelines);
	fprintf(out, "causal profile: predicted by replaying the recorded dependency graph (%zu threads%s, %zu runs, "
		     "%zu waits, %zu of them ended by a thread of the process; %zu on-CPU samples at %.0f Hz)\n",
		c->threads, dev, c->runs, c->waits, c->dependent_waits, c->samples, c->hz);
	for (int p = 0; p < c->npoints; p++) {
		const struct snrh_point_stats *b = &c->base[p];
		fprintf(out, "progress %s: %zu units, %.2f per second, %s p50 %.3f ms, p99 %.3f ms (as recorded)\n",
			c->points[p].name, b->count, b->per_second, c->points[p].latency ? "latency" : "inter-arrival",
			b->p50_ms, b->p99_ms);
	}
	unsigned last = c->nspeedups - 1;
	for (int p = 0; p < c->npoints; p++) {
		fprintf(out, "\n%s: predicted throughput change if the candidate were N%% faster (ranked at %g%%)\n",
			c->points[p].name, c->speedups[last]);
		fprintf(out, "  %-4s %-28s %-32s %7s", "rank", "candidate", "where", "self");
		for (unsigned s = 0; s < c->nspeedups; s++)
			fprintf(out, " %6g%%", c->speedups[s]);
		fprintf(out, "   p50 lat  p99 lat (at %g%%)\n", c->speedups[last]);
		for (size_t ci = 0; ci < c->ncands; ci++) {
			const struct snrh_causal_cand *cd = &c->cands[ci];
			char wb[300];
			char nb[300];
			snprintf(nb, sizeof(nb), "%s%s",
				 cd->device_kind == SNRH_CAUSAL_KERNEL	   ? "kernel "
				 : cd->device_kind == SNRH_CAUSAL_TRANSFER ? "transfer "
									   : "",
				 cd->name);
			if (cd->device_kind)
				fprintf(out, "  %-4zu %-28.28s %-32.32s %7s", ci + 1, nb, snrh_causal_where(cd, wb, sizeof(wb)), "-");
			else
				fprintf(out, "  %-4zu %-28.28s %-32.32s %6.1f%%", ci + 1, nb, snrh_causal_where(cd, wb, sizeof(wb)),
					cd->self_pct);
			for (unsigned s = 0; s < c->nspeedups; s++)
				fprintf(out, " %+6.1f%%",
					cd->effect[(size_t)s * (size_t)c->npoints + (size_t)p].throughput_pct);
			const struct snrh_causal_effect *e = &cd->effect[(size_t)last * (size_t)c->npoints + (size_t)p];
			fprintf(out, "  %+7.1f%% %+7.1f%%\n", e->latency_p50_pct, e->latency_p99_pct);
		}
	}
	int said = 0;
	for (size_t ci = 0; ci < c->ncands; ci++) {
		const struct snrh_causal_cand *cd = &c->cands[ci];
		if (!cd->device_kind)
			continue;
		if (!said++)
			fprintf(out, "\ndevice candidates (their time on the device, measured; a kernel or transfer N%% "
				     "faster shrinks each of its pieces by N%%):\n");
		fprintf(out, "  %s %s on %s: %zu piece%s, %.3f ms (%.1f%% of the device's window)\n",
			cd->device_kind == SNRH_CAUSAL_KERNEL ? "kernel" : "transfer", cd->name, cd->device, cd->pieces,
			cd->pieces == 1 ? "" : "s", cd->device_ms, cd->device_pct);
	}
	said = 0;
	for (size_t ci = 0; ci < c->ncands; ci++) {
		const struct snrh_causal_cand *cd = &c->cands[ci];
		if (!snrh_causal_off_path(c, cd))
			continue;
		if (!said++)
			fprintf(out, "\noff the critical path (hot, yet speeding them up gains nothing):\n");
		char wb[300];
		if (cd->device_kind)
			fprintf(out, "  %s %s (%s, %.1f%% of the device's window)",
				cd->device_kind == SNRH_CAUSAL_KERNEL ? "kernel" : "transfer", cd->name, cd->device,
				cd->device_pct);
		else
			fprintf(out, "  %s (%s, %.1f%% of on-CPU samples)", cd->name, snrh_causal_where(cd, wb, sizeof(wb)),
				cd->self_pct);
		fprintf(out, ": %g%% faster changes no progress point's throughput or median latency by %.0f%% or more; "
			     "what the progress waits for runs elsewhere meanwhile",
			c->speedups[last], OFF_PATH_PCT);
		double tail = max_abs_effect(c, cd, last, true);
		if (tail >= OFF_PATH_PCT)
			fprintf(out, " (but a p99 latency moves %.1f%%: on a few units it was the last to finish)", tail);
		fputc('\n', out);
	}
	fprintf(out, "\nthroughput: units per second between the first and the last unit; latency: a --latency point's "
		     "end - begin, a --progress point's inter-arrival time. Predictions, not measurements: "
		     "docs/host.md, \"Causal profile\", says what the model leaves out.\n");
}

json_t *snrh_causal_json(const struct snrh_causal *c)
{
	json_t *prog = json_array(), *cands = json_array();
	for (int p = 0; p < c->npoints; p++) {
		const struct snrh_point_stats *b = &c->base[p];
		json_array_append_new(
			prog, json_pack("{s:s, s:s, s:I, s:f, s:{s:f, s:f, s:f, s:f}}", "name", c->points[p].name, "kind",
					c->points[p].latency ? "latency" : "progress", "count", (json_int_t)b->count,
					"per_second", b->per_second, "latency_ms", "p50", b->p50_ms, "p90", b->p90_ms, "p99",
					b->p99_ms, "max", b->max_ms));
	}
	for (size_t ci = 0; ci < c->ncands; ci++) {
		const struct snrh_causal_cand *cd = &c->cands[ci];
		for (unsigned s = 0; s < c->nspeedups; s++) {
			json_t *eff = json_object();
			for (int p = 0; p < c->npoints; p++) {
				const struct snrh_causal_effect *e = &cd->effect[(size_t)s * (size_t)c->npoints + (size_t)p];
				json_object_set_new(eff, c->points[p].name,
						    json_pack("{s:f, s:f, s:f}", "throughput_pct", e->throughput_pct,
							      "latency_p50_pct", e->latency_p50_pct, "latency_p99_pct",
							      e->latency_p99_pct));
			}
			json_t *o = json_pack("{s:s, s:I, s:f, s:f, s:f, s:I, s:f, s:o, s:b}",
					      cd->device_kind == SNRH_CAUSAL_KERNEL	? "kernel"
					      : cd->device_kind == SNRH_CAUSAL_TRANSFER ? "transfer"
					      : cd->bucket				? "bucket"
											: "function",
					      cd->name, "rank", (json_int_t)(ci + 1), "self_ms", cd->self_ms, "self_pct",
					      cd->self_pct, "off_cpu_ms", cd->off_ms, "samples", (json_int_t)cd->samples,
					      "speedup_pct", c->speedups[s], "effect", eff, "off_critical_path",
					      snrh_causal_off_path(c, cd));
			json_object_set_new(o, "file", cd->file ? json_string(cd->file) : json_null());
			json_object_set_new(o, "line", cd->file ? json_integer(cd->line) : json_null());
			if (cd->device_kind) {
				json_object_set_new(o, "device", json_string(cd->device));
				json_object_set_new(o, "pieces", json_integer((json_int_t)cd->pieces));
				json_object_set_new(o, "device_ms", json_real(cd->device_ms));
				json_object_set_new(o, "device_pct", json_real(cd->device_pct));
			} else if (!cd->bucket) {
				json_object_set_new(o, "module", json_string(cd->module ? cd->module : "?"));
				json_object_set_new(o, "pc", json_integer((json_int_t)cd->pc));
			}
			json_array_append_new(cands, o);
		}
	}
	return json_pack("{s:o, s:o, s:{s:s, s:I, s:I, s:I, s:I, s:I, s:I, s:f}}", "progress", prog, "candidates", cands,
			 "model", "method", "dependency-graph replay", "threads", (json_int_t)c->threads,
			 "device_timelines", (json_int_t)c->device_timelines, "runs",
			 (json_int_t)c->runs, "waits", (json_int_t)c->waits, "dependent_waits",
			 (json_int_t)c->dependent_waits, "samples", (json_int_t)c->samples, "hz", c->hz);
}
