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
 * A DMA's source is read while its transfer runs, until the WAIT that
 * consumes its completion (the program contract, docs/ta1-isa.md), but the
 * functional device and the what-if copy it at the issue, so an end state
 * cannot show a write into it in between. So a moved execution that writes a
 * DMA's source bytes, placed after that DMA's issue (in the new order) and
 * passing the WAIT that consumes it, is refused (AN_CONFLICT_IN_FLIGHT): the
 * original wrote them only once the transfer was done. A WAIT for n
 * completions on flag f consumes the n oldest outstanding on f, those of
 * DMAs from before the window first (the order the program waits in).
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
	uint64_t index, pos;
	struct cap_rec rec;
};

/* A DMA issued and not consumed yet: its source regions. */
struct an_checker_dma {
	uint64_t index, pos;
	uint32_t sidx;
	unsigned flag, nsrc;
	struct ta1_region src[TA1_MAX_REGIONS];
};

/* At most this many DMAs are followed at once (a window whose WAITs never
 * drain a flag would otherwise follow each DMA it issues): beyond, the
 * oldest counts as consumed. */
#define FLY_MAX 256

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
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		k->pre[f] = c->pre_window[f];
}

void an_check_end(struct an_checker *k)
{
	free(k->moved_idx);
	free(k->act);
	free(k->fly);
	k->moved_idx = NULL;
	k->act = NULL;
	k->fly = NULL;
}

static void span(const struct ta1_region *g, uint64_t *lo, uint64_t *hi)
{
	uint64_t rows = g->rows ? g->rows : 1, reach = (rows - 1) * (uint64_t)(g->stride < 0 ? -g->stride : g->stride);
	*lo = g->stride < 0 ? g->addr - reach : g->addr;
	*hi = (g->stride < 0 ? g->addr : g->addr + reach) + g->row_bytes;
}

static bool overlap(const struct ta1_region *x, const struct ta1_region *y, uint64_t *at)
{
	if (x->space != y->space || (x->space == TA1_SPACE_HBM && x->chip != y->chip))
		return false;
	uint64_t xl, xh, yl, yh;
	span(x, &xl, &xh);
	span(y, &yl, &yh);
	*at = xl > yl ? xl : yl;
	return xl < yh && yl < xh;
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

/* DMA d, consumed by the WAIT at index: a moved execution that now passes
 * that WAIT, placed after d's issue, must not write d's source. */
static void consumed(struct an_checker *k, const struct an_checker_dma *d, uint64_t index)
{
	for (size_t j = 0; j < k->nact && k->in_flight.kind == AN_CONFLICT_NONE; j++) {
		const struct an_checker_entry *q = &k->act[j];
		if (q->index <= index || q->pos < d->pos)
			continue;
		for (unsigned a = 0; a < q->rec.nregions; a++) {
			uint64_t at;
			if (!q->rec.region[a].write)
				continue;
			for (unsigned b = 0; b < d->nsrc; b++)
				if (overlap(&q->rec.region[a], &d->src[b], &at)) {
					k->in_flight = (struct an_conflict){AN_CONFLICT_IN_FLIGHT, q->index, d->index,
									    q->rec.sidx, d->sidx, at};
					if (k->first.kind == AN_CONFLICT_NONE)
						k->first = k->in_flight;
					return;
				}
		}
	}
}

/* The DMA accounting in the new order: a DMA's issue, a WAIT's consumption
 * (the flags as renamed: the record's registers already are). */
static void track_dma(struct an_checker *k, const struct cap_rec *r, uint64_t index, uint64_t pos)
{
	const struct cap_static *s = &k->c->st[r->sidx];
	if (s->in.op >= TA1_OP_COUNT)
		return;
	unsigned cls = ta1_insn_table[s->in.op].cls;
	if (cls == TA1_CLASS_DMA_ISSUE) {
		unsigned f = an_sync_flag(s, r);
		if (k->nfly == FLY_MAX) {
			memmove(k->fly, k->fly + 1, (k->nfly - 1) * sizeof(*k->fly));
			k->nfly--;
		}
		if (k->nfly == k->capfly) {
			k->capfly = k->capfly ? 2 * k->capfly : 16;
			k->fly = snr_xrealloc(k->fly, k->capfly * sizeof(*k->fly));
		}
		struct an_checker_dma *d = &k->fly[k->nfly++];
		*d = (struct an_checker_dma){index, pos, r->sidx, f, 0, {{0}}};
		for (unsigned a = 0; a < r->nregions; a++)
			if (!r->region[a].write)
				d->src[d->nsrc++] = r->region[a];
	} else if (cls == TA1_CLASS_DMA_WAIT) {
		unsigned f = an_sync_flag(s, r);
		uint64_t n = r->xv[2], pre = n < k->pre[f] ? n : k->pre[f];
		k->pre[f] -= pre;
		n -= pre;
		size_t u = 0;
		for (size_t j = 0; j < k->nfly; j++) {
			if (n && k->fly[j].flag == f) {
				n--;
				consumed(k, &k->fly[j], index);
				continue;
			}
			k->fly[u++] = k->fly[j];
		}
		k->nfly = u;
	}
}

void an_check_exec(struct an_checker *k, const struct cap_rec *r, uint64_t index)
{
	uint64_t pos = k->pos++;
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
		k->act[k->nact++] = (struct an_checker_entry){index, pos, *r};
	}
	track_dma(k, r, index, pos);
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
	case AN_CONFLICT_IN_FLIGHT:
		return "writes memory that a DMA still reads until the WAIT it would pass (the DMA's source, read while "
		       "its transfer runs)";
	default: return "none";
	}
}
