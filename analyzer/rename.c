/*
 * rename.c: buffer renaming in a what-if (rename.h).
 *
 * In the new order the renamed DMA comes first; from then on, an execution
 * that comes after it in the original order and reads its old buffer read
 * what it wrote: the read goes to the new region, until an execution after
 * it in the original order writes the old buffer (the data is dead). An
 * execution before it in the original order (one the move takes it across)
 * read the old buffer's earlier contents and is left alone. Any other
 * access to the new region while a read of the moved data is still to come
 * is a clash: the region was not free for the data's whole lifetime. Cost:
 * per execution, the renames whose data is live (few), not all of them.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/rename.h"
#include "analyzer/whatif.h"
#include "lib/snr_util.h"

/* The bytes a region spans, [lo, hi) (rows apart by stride, either sign). */
static void region_span(const struct ta1_region *g, uint64_t *lo, uint64_t *hi)
{
	uint64_t rows = g->rows ? g->rows : 1, reach = (rows - 1) * (uint64_t)(g->stride < 0 ? -g->stride : g->stride);
	*lo = g->stride < 0 ? g->addr - reach : g->addr;
	*hi = (g->stride < 0 ? g->addr : g->addr + reach) + g->row_bytes;
}

void an_rename_begin(struct an_renamer *r, const struct capture *c, const struct an_rename *rn, size_t n)
{
	memset(r, 0, sizeof(*r));
	r->c = c;
	r->rn = rn;
	r->n = n;
	r->state = snr_xcalloc(n ? n : 1, sizeof(*r->state));
	r->foreign = snr_xcalloc(n ? n : 1, sizeof(*r->foreign));
	r->kill = snr_xmalloc((n ? n : 1) * sizeof(*r->kill));
	for (size_t k = 0; k < n; k++)
		r->kill[k] = UINT64_MAX;
	r->live = snr_xcalloc(n ? n : 1, sizeof(*r->live));
	r->waits = snr_xcalloc(n ? n : 1, sizeof(*r->waits));
	for (size_t k = 0; k < n; k++)
		if (rn[k].flag_to >= 0 && rn[k].wait >= 0) {
			r->waits[r->nwaits][0] = (uint64_t)rn[k].wait;
			r->waits[r->nwaits++][1] = k;
		}
	snr_qsort(r->waits, r->nwaits, sizeof(*r->waits), an_wi_cmp_u64);
}

void an_rename_end(struct an_renamer *r)
{
	free(r->state);
	free(r->foreign);
	free(r->kill);
	free(r->live);
	free(r->waits);
	r->state = NULL;
	r->foreign = NULL;
	r->kill = NULL;
	r->live = NULL;
	r->waits = NULL;
}

static void clash(struct an_renamer *r, uint64_t dma, uint64_t index, uint64_t reader, bool partial)
{
	if (r->clash)
		return;
	r->clash = true;
	r->clash_dma = dma;
	r->clash_index = index;
	r->clash_reader = reader;
	r->clash_partial = partial;
}

/* The flag of a DMA (x[rd]; ta.dma2d: x[rs3] bits 63:48; ta.dma.notify:
 * x[rd] bits 31:0) or of its WAIT (x[rs1]) set to x->flag_to. */
static void flag_rename(struct an_renamer *r, struct cap_rec *rec, const struct an_rename *x, bool wait)
{
	const struct cap_static *s = &r->c->st[rec->sidx];
	if (wait) {
		if (rec->xv[1] != (uint64_t)x->flag_from)
			return;
		rec->xv[1] = (uint64_t)x->flag_to;
	} else if (s->in.op == TA1_OP_TA_DMA2D) {
		rec->xv[3] = (rec->xv[3] & 0x0000ffffffffffffull) | (uint64_t)x->flag_to << 48;
	} else if (s->in.op == TA1_OP_TA_DMA_NOTIFY) {
		rec->xv[0] = (rec->xv[0] & ~0xffffffffull) | (uint64_t)x->flag_to;
	} else {
		rec->xv[0] = (uint64_t)x->flag_to;
	}
	rec->flag_renamed = true;
	rec->flag_from = (uint8_t)x->flag_from;
	rec->flag_to = (uint8_t)x->flag_to;
}

void an_rename_apply(struct an_renamer *r, struct cap_rec *rec, uint64_t index, bool moved)
{
	/* the renamed DMA itself: its destination (region 1) goes to the new place */
	size_t lo = 0, hi = r->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (r->rn[mid].dma < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	size_t self = r->n;
	if (lo < r->n && r->rn[lo].dma == index && r->rn[lo].flag_to >= 0)
		flag_rename(r, rec, &r->rn[lo], false);
	size_t wlo = 0, whi = r->nwaits;
	while (wlo < whi) {
		size_t mid = wlo + (whi - wlo) / 2;
		if (r->waits[mid][0] < index)
			wlo = mid + 1;
		else
			whi = mid;
	}
	if (wlo < r->nwaits && r->waits[wlo][0] == index)
		flag_rename(r, rec, &r->rn[r->waits[wlo][1]], true);
	if (lo < r->n && r->rn[lo].dma == index && r->rn[lo].old_hi > r->rn[lo].old_lo && rec->nregions == 2 && rec->region[1].space == TA1_SPACE_VMEM &&
	    rec->region[1].addr >= r->rn[lo].old_lo && rec->region[1].addr < r->rn[lo].old_hi) {
		const struct an_rename *x = &r->rn[lo];
		rec->region[1].addr = rec->region[1].addr - x->old_lo + x->new_lo;
		self = lo;
	}
	size_t by[TA1_MAX_REGIONS]; /* the rename that moved region g, or r->n */
	for (unsigned g = 0; g < TA1_MAX_REGIONS; g++)
		by[g] = r->n;
	if (self < r->n)
		by[1] = self;
	for (size_t k = 0; k < r->nlive;) {
		size_t j = r->live[k];
		const struct an_rename *x = &r->rn[j];
		uint64_t nlo = x->new_lo, nhi = x->new_lo + (x->old_hi - x->old_lo);
		/* past the execution that writes its old buffer again (in
		 * place: every execution before it, moved or not, is behind) */
		bool dead = !moved && index > r->kill[j];
		for (unsigned pass = 0; pass < 2 * rec->nregions; pass++) { /* its reads, then its writes */
			unsigned g = pass % rec->nregions;
			struct ta1_region *rg = &rec->region[g];
			if (rg->space != TA1_SPACE_VMEM || by[g] == j || rg->write != (pass >= rec->nregions))
				continue;
			uint64_t a, b;
			region_span(rg, &a, &b);
			bool in_old = by[g] == r->n && a < x->old_hi && b > x->old_lo, in_new = a < nhi && b > nlo;
			if (index > x->dma && index < r->kill[j] && in_old && !rg->write) {
				if (a >= x->old_lo && b <= x->old_hi) { /* a read of the moved data */
					if (r->foreign[j])
						clash(r, x->dma, r->foreign[j] - 1, index, false);
					rg->addr = rg->addr - x->old_lo + x->new_lo;
					by[g] = j;
				} else {
					clash(r, x->dma, index, index, true);
				}
				continue;
			}
			if (index > x->dma && in_old && rg->write && index < r->kill[j])
				r->kill[j] = index; /* written again: reads after it (original order) are not the data's */
			if (in_new && !r->foreign[j])
				r->foreign[j] = index + 1;
		}
		if (dead) {
			r->state[j] = 2;
			r->live[k] = r->live[--r->nlive];
		} else {
			k++;
		}
	}
	if (self < r->n && r->state[self] == 0) {
		r->state[self] = 1;
		r->live[r->nlive++] = self;
	}
}
