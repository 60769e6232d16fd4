/*
 * snr_ranges.c: see snr_ranges.h.
 */
#include "snr_ranges.h"

#include <stdlib.h>
#include <string.h>

#include "snr_util.h"

/* One add that changed the set: the ranges it replaced with the one at
 * lists[list].r[at], in the log's pool from `old` on. */
struct undo {
	size_t list, at;
	size_t old, nold;
	bool created; /* the add made the list (the last one then) */
};

struct snr_ranges_log {
	struct undo *e;
	size_t n, cap;
	struct snr_range *pool;
	size_t npool, pool_cap;
};

static void log_add(struct snr_ranges *s, size_t list, bool created, size_t at, const struct snr_range *old,
		    size_t nold)
{
	struct snr_ranges_log *g = s->log;
	if (g->n == g->cap)
		g->e = snr_xrealloc(g->e, (g->cap = g->cap ? 2 * g->cap : 64) * sizeof(*g->e));
	if (g->npool + nold > g->pool_cap) {
		while (g->npool + nold > g->pool_cap)
			g->pool_cap = g->pool_cap ? 2 * g->pool_cap : 64;
		g->pool = snr_xrealloc(g->pool, g->pool_cap * sizeof(*g->pool));
	}
	if (nold) /* old may be a new list's NULL array */
		memcpy(&g->pool[g->npool], old, nold * sizeof(*old));
	g->e[g->n++] = (struct undo){.list = list, .at = at, .old = g->npool, .nold = nold, .created = created};
	g->npool += nold;
}

static struct snr_range_list *list_for(struct snr_ranges *s, uint32_t key, int create)
{
	for (size_t i = 0; i < s->n; i++)
		if (s->lists[i].key == key)
			return &s->lists[i];
	if (!create)
		return NULL;
	s->lists = snr_xrealloc(s->lists, (s->n + 1) * sizeof(*s->lists));
	struct snr_range_list *l = &s->lists[s->n++];
	memset(l, 0, sizeof(*l));
	l->key = key;
	return l;
}

const struct snr_range_list *snr_ranges_get(const struct snr_ranges *s, uint32_t key)
{
	return list_for((struct snr_ranges *)s, key, 0);
}

void snr_ranges_free(struct snr_ranges *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->lists[i].r);
	free(s->lists);
	s->lists = NULL;
	s->n = 0;
	snr_ranges_log_stop(s);
}

void snr_ranges_copy(struct snr_ranges *dst, const struct snr_ranges *src)
{
	snr_ranges_free(dst);
	dst->n = src->n;
	dst->lists = snr_xcalloc(src->n ? src->n : 1, sizeof(*dst->lists));
	for (size_t i = 0; i < src->n; i++) {
		const struct snr_range_list *l = &src->lists[i];
		dst->lists[i] = (struct snr_range_list){.key = l->key, .n = l->n, .cap = l->n};
		dst->lists[i].r = snr_xmalloc((l->n ? l->n : 1) * sizeof(*l->r));
		memcpy(dst->lists[i].r, l->r, l->n * sizeof(*l->r));
	}
}

/* First range whose hi >= lo (ranges touching lo merge with it). */
static size_t lower(const struct snr_range_list *l, uint64_t lo)
{
	size_t a = 0, b = l->n;
	while (a < b) {
		size_t m = (a + b) / 2;
		if (l->r[m].hi < lo)
			a = m + 1;
		else
			b = m;
	}
	return a;
}

void snr_ranges_add(struct snr_ranges *s, uint32_t key, uint64_t lo, uint64_t hi)
{
	if (hi <= lo)
		return;
	size_t nlists = s->n;
	struct snr_range_list *l = list_for(s, key, 1);
	size_t i = lower(l, lo), j = i;
	while (j < l->n && l->r[j].lo <= hi) {
		if (l->r[j].lo < lo)
			lo = l->r[j].lo;
		if (l->r[j].hi > hi)
			hi = l->r[j].hi;
		j++;
	}
	if (j == i + 1 && l->r[i].lo == lo && l->r[i].hi == hi)
		return; /* already there */
	if (s->log)
		log_add(s, (size_t)(l - s->lists), s->n > nlists, i, &l->r[i], j - i);
	if (j == i) { /* insert */
		if (l->n == l->cap) {
			l->cap = l->cap ? l->cap * 2 : 16;
			l->r = snr_xrealloc(l->r, l->cap * sizeof(*l->r));
		}
		memmove(&l->r[i + 1], &l->r[i], (l->n - i) * sizeof(*l->r));
		l->n++;
	} else if (j > i + 1) { /* merged several */
		memmove(&l->r[i + 1], &l->r[j], (l->n - j) * sizeof(*l->r));
		l->n -= j - i - 1;
	}
	l->r[i].lo = lo;
	l->r[i].hi = hi;
}

void snr_ranges_missing(const struct snr_ranges *s, uint32_t key, uint64_t lo, uint64_t hi, struct snr_range **out,
			size_t *nout, size_t *cap)
{
	if (hi <= lo)
		return;
	const struct snr_range_list *l = snr_ranges_get(s, key);
	size_t i = l ? lower(l, lo + 1) : 0;
	uint64_t at = lo;
	for (; l && i < l->n && l->r[i].lo < hi && at < hi; i++) {
		if (l->r[i].hi <= at)
			continue;
		if (l->r[i].lo > at) {
			if (*nout == *cap) {
				*cap = *cap ? *cap * 2 : 8;
				*out = snr_xrealloc(*out, *cap * sizeof(**out));
			}
			(*out)[(*nout)++] = (struct snr_range){at, l->r[i].lo};
		}
		at = l->r[i].hi;
	}
	if (at < hi) {
		if (*nout == *cap) {
			*cap = *cap ? *cap * 2 : 8;
			*out = snr_xrealloc(*out, *cap * sizeof(**out));
		}
		(*out)[(*nout)++] = (struct snr_range){at, hi};
	}
}

bool snr_ranges_find(const struct snr_ranges *s, uint32_t key, uint64_t addr, struct snr_range *out)
{
	const struct snr_range_list *l = snr_ranges_get(s, key);
	if (!l)
		return false;
	size_t i = lower(l, addr + 1); /* first range with hi > addr */
	if (i == l->n || l->r[i].lo > addr)
		return false;
	*out = l->r[i];
	return true;
}

uint64_t snr_ranges_bytes(const struct snr_ranges *s)
{
	uint64_t n = 0;
	for (size_t i = 0; i < s->n; i++)
		for (size_t k = 0; k < s->lists[i].n; k++)
			n += s->lists[i].r[k].hi - s->lists[i].r[k].lo;
	return n;
}

void snr_ranges_log_commit(struct snr_ranges *s)
{
	if (!s->log)
		s->log = snr_xcalloc(1, sizeof(*s->log));
	s->log->n = 0;
	s->log->npool = 0;
}

void snr_ranges_log_undo(struct snr_ranges *s)
{
	struct snr_ranges_log *g = s->log;
	if (!g)
		return;
	while (g->n) {
		const struct undo *e = &g->e[--g->n];
		struct snr_range_list *l = &s->lists[e->list];
		/* l->r[e->at] is the range the add left: the old ones go back in its place */
		if (e->nold == 0) {
			memmove(&l->r[e->at], &l->r[e->at + 1], (l->n - e->at - 1) * sizeof(*l->r));
			l->n--;
		} else {
			if (l->n + e->nold - 1 > l->cap) {
				l->cap = l->n + e->nold - 1;
				l->r = snr_xrealloc(l->r, l->cap * sizeof(*l->r));
			}
			memmove(&l->r[e->at + e->nold], &l->r[e->at + 1], (l->n - e->at - 1) * sizeof(*l->r));
			memcpy(&l->r[e->at], &g->pool[e->old], e->nold * sizeof(*l->r));
			l->n += e->nold - 1;
		}
		if (e->created) { /* the last list, empty again */
			free(l->r);
			s->n--;
		}
	}
	g->npool = 0;
}

void snr_ranges_log_stop(struct snr_ranges *s)
{
	if (!s->log)
		return;
	free(s->log->e);
	free(s->log->pool);
	free(s->log);
	s->log = NULL;
}

size_t snr_ranges_log_len(const struct snr_ranges *s) { return s->log ? s->log->n : 0; }
