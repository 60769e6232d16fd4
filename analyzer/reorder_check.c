/*
 * reorder_check.c: does a moved window compute what the original did?
 *
 * A move takes some executions earlier; each then passes the executions
 * between its new place and its old one. The window computes the same end
 * state (the registers and memory the replay checks; a renamed buffer at
 * its new place) when no moved execution has a dependence on one it passes:
 * it must not read memory they write, write memory they read or write, read
 * an x register they compute (register names are the compiler's to choose:
 * an x register one of them only reads or overwrites is not a dependence at
 * source level), or share a DMA sync flag with them (a WAIT passed by a DMA
 * on its flag could count that DMA instead of the one it waits for). A
 * DMA's destination counts as written at its issue: it is written at some
 * point before its WAIT. Memory is compared by the span of each region (its
 * rows and stride), in its space and chip.
 *
 * The check runs in the same pass as the what-if's timing model: it keeps
 * the moved executions still ahead of their original place (a move's slice
 * and DMA, a few per instance in flight) and compares each execution that
 * comes after them in the new order but before them in the original. Cost:
 * per execution, the moved ones it passes.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/reorder_check.h"
#include "analyzer/whatif.h"
#include "lib/snr_util.h"

struct an_checker_entry {
	uint64_t index;
	struct cap_rec rec;
};

bool an_check_moved(const struct an_checker *k, uint64_t index)
{
	size_t lo = 0, hi = k->nmoved;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (k->moved_idx[mid] < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < k->nmoved && k->moved_idx[lo] == index;
}

void an_check_begin(struct an_checker *k, const struct capture *c, const uint64_t *moved_idx, size_t nmoved)
{
	memset(k, 0, sizeof(*k));
	k->c = c;
	k->moved_idx = snr_xcalloc(nmoved ? nmoved : 1, sizeof(*moved_idx));
	if (nmoved)
		memcpy(k->moved_idx, moved_idx, nmoved * sizeof(*moved_idx));
	k->nmoved = nmoved;
}

void an_check_end(struct an_checker *k)
{
	free(k->moved_idx);
	free(k->act);
	k->moved_idx = NULL;
	k->act = NULL;
}

static void span(const struct ta1_region *g, uint64_t *lo, uint64_t *hi)
{
	uint64_t rows = g->rows ? g->rows : 1, reach = (rows - 1) * (uint64_t)(g->stride < 0 ? -g->stride : g->stride);
	*lo = g->stride < 0 ? g->addr - reach : g->addr;
	*hi = (g->stride < 0 ? g->addr : g->addr + reach) + g->row_bytes;
}

/* The sync flags an execution uses (as renamed in the what-if). */
static uint64_t flags_of(const struct cap_static *s, const struct cap_rec *r)
{
	uint64_t f = (s->regs_read | s->regs_written) & (((1ull << TA1_NUM_FLAGS) - 1) << TA1_REG_FLAG0);
	if (r->flag_renamed && (f >> (TA1_REG_FLAG0 + r->flag_from) & 1))
		f = (f & ~(1ull << (TA1_REG_FLAG0 + r->flag_from))) | 1ull << (TA1_REG_FLAG0 + r->flag_to);
	return f;
}

/* The dependence of moved execution q on p, which it now passes. */
static enum an_conflict_kind depends(const struct an_checker *k, const struct an_checker_entry *q,
				     const struct cap_rec *p, uint64_t *addr)
{
	const struct cap_static *sq = &k->c->st[q->rec.sidx], *sp = &k->c->st[p->sidx];
	for (unsigned a = 0; a < q->rec.nregions; a++)
		for (unsigned b = 0; b < p->nregions; b++) {
			const struct ta1_region *x = &q->rec.region[a], *y = &p->region[b];
			if (x->space != y->space || (!x->write && !y->write) ||
			    (x->space == TA1_SPACE_HBM && x->chip != y->chip))
				continue;
			uint64_t xl, xh, yl, yh;
			span(x, &xl, &xh);
			span(y, &yl, &yh);
			if (xl >= yh || yl >= xh)
				continue;
			*addr = xl > yl ? xl : yl;
			return x->write && y->write ? AN_CONFLICT_WRITES_WRITTEN
			       : x->write	   ? AN_CONFLICT_WRITES_READ
						   : AN_CONFLICT_READS_WRITTEN;
		}
	uint64_t fq = flags_of(sq, &q->rec), fp = flags_of(sp, p);
	if (fq & fp) {
		*addr = (uint64_t)__builtin_ctzll(fq & fp) - TA1_REG_FLAG0;
		return AN_CONFLICT_FLAG;
	}
	/* x registers q reads that p computes (an_check_exec drops those a
	 * moved execution between them computes again) */
	uint64_t raw = sq->regs_read & sp->regs_written & 0xfffffffeull;
	if (raw) {
		*addr = (uint64_t)__builtin_ctzll(raw);
		return AN_CONFLICT_REGISTER;
	}
	return AN_CONFLICT_NONE;
}

void an_check_exec(struct an_checker *k, const struct cap_rec *r, uint64_t index)
{
	bool moved = an_check_moved(k, index);
	if (!moved) /* the moved executions it reaches the place of are behind it now */
		for (size_t j = 0; j < k->nact;) {
			if (k->act[j].index < index)
				k->act[j] = k->act[--k->nact];
			else
				j++;
		}
	if (k->first.kind == AN_CONFLICT_NONE)
		for (size_t j = 0; j < k->nact; j++) {
			const struct an_checker_entry *q = &k->act[j];
			if (q->index <= index)
				continue;
			uint64_t addr = 0;
			enum an_conflict_kind kind = depends(k, q, r, &addr);
			if (kind == AN_CONFLICT_REGISTER) {
				/* recomputed by a moved execution between them: not q's input */
				unsigned reg = (unsigned)addr;
				for (size_t m = 0; m < k->nact; m++)
					if (k->act[m].index > index && k->act[m].index < q->index &&
					    (k->c->st[k->act[m].rec.sidx].regs_written >> reg & 1)) {
						kind = AN_CONFLICT_NONE;
						break;
					}
			}
			if (kind != AN_CONFLICT_NONE) {
				k->first = (struct an_conflict){kind, q->index, index, q->rec.sidx, r->sidx, addr};
				break;
			}
		}
	if (moved) {
		if (k->nact == k->capact) {
			k->capact = k->capact ? 2 * k->capact : 16;
			k->act = snr_xrealloc(k->act, k->capact * sizeof(*k->act));
		}
		k->act[k->nact++] = (struct an_checker_entry){index, *r};
	}
}

const char *an_conflict_kind_words(enum an_conflict_kind k)
{
	switch (k) {
	case AN_CONFLICT_READS_WRITTEN: return "reads memory that an instruction it would pass writes first";
	case AN_CONFLICT_WRITES_READ: return "writes memory that an instruction it would pass still reads";
	case AN_CONFLICT_WRITES_WRITTEN: return "writes memory that an instruction it would pass also writes";
	case AN_CONFLICT_REGISTER: return "reads a register that an instruction it would pass computes";
	case AN_CONFLICT_FLAG: return "uses the DMA sync flag of a WAIT or DMA it would pass";
	case AN_CONFLICT_RENAMED: return "its new buffer is used by another instruction before the moved data's last read";
	case AN_CONFLICT_PARTIAL: return "a read covers part of the renamed buffer and part of something else";
	default: return "none";
	}
}
