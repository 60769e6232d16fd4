/*
 * suggest_order.c: see suggest_order.h.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/rename.h"
#include "analyzer/suggest_order.h"
#include "lib/snr_util.h"

/* The instructions the moves of `moves` (n suggestions) take earlier, in
 * an_wi_cmp_slotted order: each move's slice and DMA ISSUE, in their original
 * order, just before its point. An instruction in the slices of several
 * moves goes to the earliest of their points. Returns them (*nmoved of
 * them), allocated; their count, not the window's, is the memory. */
static struct slotted *moved_set(const struct capture *c, const struct suggestion *const *moves, size_t n,
				 size_t *nmoved)
{
	size_t cap = 0, m = 0;
	for (size_t j = 0; j < n; j++)
		cap += moves[j]->m->nslice + 1;
	struct slotted *v = snr_xmalloc((cap ? cap : 1) * sizeof(*v));
	for (size_t j = 0; j < n; j++) {
		const struct suggestion *s = moves[j];
		const struct snr_deps_dma *dm = s->m;
		for (size_t k = s->slice0; k <= dm->nslice; k++) {
			uint64_t q = k < dm->nslice ? dm->slice[k] : (uint64_t)dm->issue_index;
			if (q < c->n)
				v[m++] = (struct slotted){s->at + 1, q};
		}
	}
	/* one entry per instruction, at its earliest point */
	snr_qsort(v, m, sizeof(*v), an_wi_cmp_slotted_index);
	size_t u = 0;
	for (size_t k = 0; k < m; k++)
		if (!u || v[u - 1].index != v[k].index)
			v[u++] = v[k];
	snr_qsort(v, u, sizeof(*v), an_wi_cmp_slotted);
	*nmoved = u;
	return v;
}

static int cmp_rename(const void *a, const void *b)
{
	const struct an_rename *x = a, *y = b;
	return x->dma < y->dma ? -1 : x->dma > y->dma;
}

/* The what-if order of n moves: their moved instructions and the buffers
 * they rename (allocated; an_sg_order_free). */
void an_sg_order_of(const struct capture *c, const struct suggestion *const *moves, size_t n, struct an_wi_order *o)
{
	memset(o, 0, sizeof(*o));
	o->moved = moved_set(c, moves, n, &o->nmoved);
	struct an_rename *rn = snr_xcalloc(2 * n + 1, sizeof(*rn));
	for (size_t j = 0; j < n; j++)
		if (moves[j]->rename)
			rn[o->nrn++] = (struct an_rename){(uint64_t)moves[j]->m->issue_index, moves[j]->m->dst_addr,
							  moves[j]->m->dst_addr + moves[j]->m->bytes, moves[j]->free_lo,
							  moves[j]->m->flag, -1, -1};
	for (size_t j = 0; j < n; j++) {
		const struct suggestion *s = moves[j];
		if (!s->rename_flag)
			continue;
		struct an_rename *x = NULL;
		for (size_t k = 0; k < o->nrn && !x; k++)
			if (rn[k].dma == (uint64_t)s->m->issue_index)
				x = &rn[k];
		if (!x) {
			x = &rn[o->nrn++];
			*x = (struct an_rename){(uint64_t)s->m->issue_index, 0, 0, 0, s->m->flag, -1, -1};
		}
		x->flag_to = s->flag_to;
		x->wait = s->m->wait_index;
	}
	snr_qsort(rn, o->nrn, sizeof(*rn), cmp_rename);
	o->rn = rn;
}

void an_sg_order_free(struct an_wi_order *o)
{
	free((void *)o->moved);
	free((void *)o->rn);
	memset(o, 0, sizeof(*o));
}

uint64_t an_sg_what_if_moves(struct capture *c, const struct suggestion *const *moves, size_t n,
			     const struct snr_tracker *tracker, struct ta1_timing_totals *totals,
			     struct an_conflict *conflict)
{
	struct an_wi_order o;
	an_sg_order_of(c, moves, n, &o);
	uint64_t cyc = an_wi_run_order(c, &o, tracker, false, totals);
	if (conflict)
		*conflict = o.conflict;
	an_sg_order_free(&o);
	return cyc;
}
