/*
 * causal_device.c: see causal_device.h. Everything here is built once per
 * trace: the CUPTI devices' timelines and the rewritten host waits before
 * the graph is built, each candidate's cover of its device's runs after.
 */
#include "analyzer/causal_device.h"

#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

#define MAX_DEV_CANDS 20
#define STATE_SLEEPING 1 /* snrh_offcpu.state: a blocking wait (not preempted) */

static int off_cmp(const void *a, const void *b)
{
	const struct snrh_offcpu *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

static void push_off(struct snrh_offcpu **v, size_t *n, size_t *cap, struct snrh_offcpu o)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 64;
		*v = snr_xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = o;
}

static void push_wake(struct causal_wake **v, size_t *n, struct causal_wake w)
{
	*v = snr_xrealloc(*v, (*n + 1) * sizeof(**v));
	(*v)[(*n)++] = w;
}

size_t causal_device_offcpu(const struct snrh_trace *t, const struct snrh_ondev *o, struct snrh_offcpu **out,
			    struct causal_wake **wakes, size_t *nwakes)
{
	size_t n = t->offcpu.n, cap = n + 1;
	struct snrh_offcpu *v = snr_xcalloc(cap, sizeof(*v));
	if (n)
		memcpy(v, t->offcpu.v, n * sizeof(*v));
	snr_qsort(v, n, sizeof(*v), off_cmp);
	char *drop = snr_xcalloc(n + 1, 1);
	*wakes = NULL;
	*nwakes = 0;
	size_t nreal = n;
	/* host waits CUPTI work ended: one wait each, ended by that device
	 * when the work completed (a synchronization may spin on the CPU or
	 * block several times: its own switches are dropped) */
	for (size_t i = 0; i < o->nwaits; i++) {
		const struct snrh_host_wait *w = &o->waits[i];
		if (w->work < 0 || o->work[w->work].src != SNRH_ONDEV_CUPTI || w->end <= w->start)
			continue;
		size_t lo = 0, hi = nreal; /* the first off-CPU interval of the thread ending after the wait starts */
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (v[mid].tid < w->tid || (v[mid].tid == w->tid && v[mid].end <= w->start))
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < nreal && v[lo].tid == w->tid && v[lo].start < w->end; lo++)
			drop[lo] = 1;
		push_off(&v, &n, &cap,
			 (struct snrh_offcpu){w->tid, CAUSAL_DEV_TID + o->work[w->work].device, STATE_SLEEPING, w->start,
					      w->end, -1, -1});
		push_wake(wakes, nwakes, (struct causal_wake){w->tid, w->start, o->work[w->work].end});
	}
	/* each CUPTI device's idle gaps between its busy stretches */
	for (size_t i = 0; i < o->nwork;) {
		size_t first = i;
		uint32_t d = o->work[i].device;
		while (i < o->nwork && o->work[i].device == d)
			i++;
		if (o->work[first].src != SNRH_ONDEV_CUPTI)
			continue;
		uint32_t dtid = CAUSAL_DEV_TID + d;
		uint64_t t0 = o->dev[d].t0 < o->work[first].start ? o->dev[d].t0 : o->work[first].start - 1;
		uint64_t busy_end = t0; /* the end of the busy stretch so far (t0: none yet) */
		for (size_t k = first; k < i; k++) {
			const struct snrh_dev_work *p = &o->work[k];
			if (p->start > busy_end) { /* a gap, then a new busy stretch that p begins */
				uint32_t waker = 0;
				if (p->submit_tid && p->submit > busy_end && p->submit <= p->start) {
					waker = p->submit_tid;
					push_wake(wakes, nwakes, (struct causal_wake){dtid, busy_end, p->submit});
				}
				push_off(&v, &n, &cap,
					 (struct snrh_offcpu){dtid, waker, STATE_SLEEPING, busy_end, p->start, -1, -1});
			}
			if (p->end > busy_end)
				busy_end = p->end;
		}
		uint64_t t1 = o->dev[d].t1 > busy_end ? o->dev[d].t1 : busy_end + 1;
		push_off(&v, &n, &cap, (struct snrh_offcpu){dtid, 0, STATE_SLEEPING, busy_end, t1, -1, -1});
	}
	size_t m = 0;
	for (size_t k = 0; k < n; k++)
		if (k >= nreal || !drop[k])
			v[m++] = v[k];
	free(drop);
	*out = v;
	return m;
}

static long thread_of(const struct causal_model *m, uint32_t tid)
{
	size_t lo = 0, hi = m->nth;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->th[mid].tid < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < m->nth && m->th[lo].tid == tid ? (long)lo : -1;
}

void causal_device_wakes(struct causal_model *m, const struct causal_wake *w, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		long k = thread_of(m, w[i].tid);
		if (k < 0)
			continue;
		struct thread_tl *th = &m->th[k];
		size_t lo = 0, hi = th->it.n;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (th->it.v[mid].a < w[i].start)
				lo = mid + 1;
			else
				hi = mid;
		}
		for (; lo < th->it.n && th->it.v[lo].a == w[i].start; lo++)
			if (th->it.v[lo].off && th->it.v[lo].waker_th) {
				th->it.v[lo].wake_at = w[i].wake_at;
				break;
			}
	}
}

/* ---- candidates ---- */

struct group {
	uint32_t device;
	int xfer;
	const char *name;
	size_t pieces;
	uint64_t busy;
};

static int group_key_cmp(const struct group *x, const struct snrh_dev_work *w)
{
	if (x->device != w->device)
		return x->device < w->device ? -1 : 1;
	if (x->xfer != w->xfer)
		return x->xfer - w->xfer;
	return strcmp(x->name, w->name ? w->name : "?");
}

static int group_busy_cmp(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	return x->busy < y->busy ? 1 : x->busy > y->busy ? -1 : 0;
}

static size_t groups_of(const struct snrh_ondev *o, struct group **out)
{
	struct group *g = NULL;
	size_t ng = 0;
	for (size_t i = 0; i < o->nwork; i++) {
		const struct snrh_dev_work *w = &o->work[i];
		size_t k = 0;
		while (k < ng && group_key_cmp(&g[k], w))
			k++;
		if (k == ng) {
			g = snr_xrealloc(g, (ng + 1) * sizeof(*g));
			g[ng++] = (struct group){w->device, w->xfer, w->name ? w->name : "?", 0, 0};
		}
		g[k].pieces++;
		g[k].busy += w->end - w->start;
	}
	snr_qsort(g, ng, sizeof(*g), group_busy_cmp);
	*out = g;
	return ng < MAX_DEV_CANDS ? ng : MAX_DEV_CANDS;
}

size_t causal_device_count(const struct snrh_ondev *o)
{
	struct group *g;
	size_t n = groups_of(o, &g);
	free(g);
	return n;
}

struct span {
	uint64_t a, b;
};

/* The time the union of the group's pieces covers in each run of its
 * device's thread. */
static struct causal_dev_cover *cover_of(const struct causal_model *m, const struct snrh_ondev *o,
					 const struct group *g)
{
	const struct snrh_dev_work *w0 = NULL;
	SNRH_VEC(struct span) u = {0};
	for (size_t i = 0; i < o->nwork; i++) { /* o->work is by (device, start) */
		const struct snrh_dev_work *w = &o->work[i];
		if (w->device != g->device || w->xfer != g->xfer || strcmp(w->name ? w->name : "?", g->name) ||
		    w->end <= w->start)
			continue;
		w0 = w0 ? w0 : w;
		if (u.n && w->start <= u.v[u.n - 1].b) {
			if (w->end > u.v[u.n - 1].b)
				u.v[u.n - 1].b = w->end;
		} else {
			struct span s = {w->start, w->end};
			SNRH_PUSH(u, s);
		}
	}
	if (!w0) {
		free(u.v);
		return NULL;
	}
	uint32_t tid = w0->src == SNRH_ONDEV_CUPTI ? CAUSAL_DEV_TID + g->device : w0->key;
	long k = thread_of(m, tid);
	if (k < 0) {
		free(u.v);
		return NULL;
	}
	const struct thread_tl *th = &m->th[k];
	struct causal_dev_cover *cv = snr_xcalloc(1, sizeof(*cv));
	cv->tid = tid;
	cv->ns = snr_xcalloc(th->it.n + 1, sizeof(double));
	size_t j = 0;
	for (size_t i = 0; i < th->it.n; i++) {
		const struct item *it = &th->it.v[i];
		while (j < u.n && u.v[j].b <= it->a)
			j++;
		if (it->off)
			continue;
		for (size_t q = j; q < u.n && u.v[q].a < it->b; q++) {
			uint64_t a = u.v[q].a > it->a ? u.v[q].a : it->a, b = u.v[q].b < it->b ? u.v[q].b : it->b;
			if (b > a)
				cv->ns[i] += (double)(b - a);
		}
	}
	free(u.v);
	return cv;
}

void causal_device_cands(struct snrh_causal *c, const struct snrh_ondev *o)
{
	struct group *g;
	size_t ng = groups_of(o, &g);
	for (size_t i = 0; i < ng; i++) {
		struct causal_dev_cover *cv = cover_of(c->model, o, &g[i]);
		if (!cv)
			continue;
		struct snrh_causal_cand *cd = &c->cands[c->ncands];
		memset(cd, 0, sizeof(*cd));
		cd->name = snr_xstrdup(g[i].name);
		cd->device_kind = g[i].xfer ? SNRH_CAUSAL_TRANSFER : SNRH_CAUSAL_KERNEL;
		cd->device = snr_xstrdup(o->dev[g[i].device].label);
		cd->pieces = g[i].pieces;
		cd->device_ms = (double)g[i].busy / 1e6;
		uint64_t win = o->dev[g[i].device].t1 - o->dev[g[i].device].t0;
		cd->device_pct = win ? 100.0 * (double)g[i].busy / (double)win : 0;
		cd->cover = cv;
		c->model->cand_id[c->ncands++] = 0;
	}
	free(g);
}

void causal_dev_cover_free(struct causal_dev_cover *cv)
{
	if (!cv)
		return;
	free(cv->ns);
	free(cv);
}
