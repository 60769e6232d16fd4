/*
 * suggest.c: `snr analyze suggest`, the paper's Algorithm 2 on the graph of
 * deps.c, and its what-if check (docs/analyses.md "suggest").
 *
 * For each DMA whose WAIT stalled on it (DMA_BASE + DMA_TRANSFER stall
 * cycles S attributed to it): if its backtail B (cycles between the farthest
 * point it could move to and its issue) exceeds S, it moves to the latest
 * point that hides S; if VMEM holds a contiguous region at least as large as
 * its destination that holds no other value from that point until the last
 * read of what it wrote, the move is suggested, predicting S cycles saved.
 *
 * --verify runs the window in the TA1 timing model in the original order
 * (which must give the replay's cycles) and with the moves applied, one
 * static move at a time and all together, and reports the differences (the
 * captured stream and its what-if runs: whatif.c).
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/deps.h"
#include "analyzer/suggest_words.h"
#include "analyzer/rename.h"
#include "analyzer/roundtrip.h"
#include "analyzer/schedule.h"
#include "analyzer/wait_move.h"
#include "analyzer/whatif.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_trace.h"
#include "lib/snr_spill.h"
#include "lib/snr_util.h"
#include "replayer/metrics.h"
#include "replayer/replay.h"
#include "sim/snr_sim.h"
#include "sim/ta1_timing.h"

void snr_deps_print_dma_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m);
void snr_deps_print_dma_brief_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m);

#include "analyzer/suggest_alg2.h"
#include "analyzer/suggest_order.h"


/* ---- static moves: the dynamic suggestions grouped, verified as groups -- */

/* One static move: the DMA at dma_pc issued before before_pc, for every
 * dynamic instance of that pair. */
struct move_group {
	uint64_t dma_pc, before_pc;
	size_t *members, n; /* indices into the plan's suggestions, in window order */
	uint64_t estimate;  /* Algorithm 2's: the instances' stalls summed, an upper bound */
	bool verified, confirmed;
	bool refused;        /* the moved window would compute something else (reason says what) */
	size_t renamed;      /* instances that write a second buffer (every other one: by parity) */
	size_t flagged;      /* instances that use a flag of their own (every other one: by parity) */
	uint64_t cycles_after;
	int64_t realized;
	char reason[1024];   /* for an unconfirmed group: what the moved replay shows */
};

/* The moves of all the confirmed groups applied together. */
struct combined {
	bool done;
	size_t moves;        /* confirmed groups */
	uint64_t moved;      /* the window's cycles with all of them */
	int64_t realized;    /* baseline - moved */
	int64_t sum_groups;  /* the confirmed groups' realized, each alone, summed */
};

struct plan {
	const struct snr_deps *d;
	struct suggestion *sg; /* one per stalled DMA issued in the window, in id order */
	size_t n, nsug;
	struct move_group *g;  /* confirmed by realized, then unconfirmed, then unverified by estimate */
	size_t ng, nverified;
	bool verified;
	uint64_t baseline;
	struct ta1_timing_totals base_totals;
	struct combined cb;
	int free_flag;         /* a sync flag no DMA of the window uses, -1 none */
};

static uint64_t sg_dma_pc(const struct snr_deps *d, const struct suggestion *s)
{
	return snr_deps_insn_get(d, s->m->issue_index).pc;
}

static uint64_t sg_before_pc(const struct snr_deps *d, const struct suggestion *s)
{
	return s->at < d->ninsn ? snr_deps_insn_get(d, s->at).pc : 0;
}

/* A suggestion's place in the order of moves: its DMA's pc, the pc it moves
 * before, its issue index; read from the graph once per suggestion, not in
 * every comparison (the instructions are in a temporary file: a lookup there
 * may be a 4 KiB read) */
struct move_key {
	uint64_t dma_pc, before_pc;
	int64_t issue;
	size_t k; /* the suggestion */
};

static int cmp_by_move(const void *a, const void *b)
{
	const struct move_key *x = a, *y = b;
	if (x->dma_pc != y->dma_pc)
		return x->dma_pc < y->dma_pc ? -1 : 1;
	if (x->before_pc != y->before_pc)
		return x->before_pc < y->before_pc ? -1 : 1;
	return x->issue < y->issue ? -1 : x->issue > y->issue;
}

static int group_rank(const struct move_group *g)
{
	return g->confirmed ? 0 : g->verified ? 1 : 2;
}

static int cmp_group(const void *a, const void *b)
{
	const struct move_group *x = a, *y = b;
	if (group_rank(x) != group_rank(y))
		return group_rank(x) - group_rank(y);
	if (x->confirmed && x->realized != y->realized)
		return x->realized > y->realized ? -1 : 1;
	if (x->estimate != y->estimate)
		return x->estimate > y->estimate ? -1 : 1;
	if (x->dma_pc != y->dma_pc)
		return x->dma_pc < y->dma_pc ? -1 : 1;
	return x->before_pc < y->before_pc ? -1 : x->before_pc > y->before_pc;
}

/* Algorithm 2 on every stalled DMA of d, the suggestions grouped by static
 * move (the groups in the order of their estimates). */
static void plan_moves(const struct snr_deps *d, struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->d = d;
	p->sg = snr_xcalloc(d->ndmas + 1, sizeof(*p->sg));
	unsigned used = 0;
	for (size_t k = 0; k < d->ndmas; k++)
		used |= d->dmas[k].flag < TA1_NUM_FLAGS ? 1u << d->dmas[k].flag : 0;
	p->free_flag = -1;
	for (int f = TA1_NUM_FLAGS - 1; f >= 0; f--)
		if (!(used >> f & 1))
			p->free_flag = f;
	for (size_t k = 0; k < d->ndmas; k++) {
		const struct snr_deps_dma *m = &d->dmas[k];
		if (m->stall_cycles == 0 || m->issue_index < 0)
			continue; /* not stalled, or issued before the window: nothing to move */
		an_sg_evaluate(d, m, &p->sg[p->n]);
		p->nsug += p->sg[p->n++].suggested;
	}
	struct move_key *idx = snr_xcalloc(p->nsug + 1, sizeof(*idx));
	size_t r = 0;
	for (size_t k = 0; k < p->n; k++)
		if (p->sg[k].suggested)
			idx[r++] = (struct move_key){sg_dma_pc(d, &p->sg[k]), sg_before_pc(d, &p->sg[k]),
						     p->sg[k].m->issue_index, k};
	snr_qsort(idx, r, sizeof(*idx), cmp_by_move);
	size_t ng = 0; /* one group per static move, not per instance: a group is over 1 KiB */
	for (size_t k = 0; k < r; k++)
		ng += !k || idx[k].dma_pc != idx[k - 1].dma_pc || idx[k].before_pc != idx[k - 1].before_pc;
	p->g = snr_xcalloc(ng + 1, sizeof(*p->g));
	for (size_t k = 0; k < r;) {
		struct move_group *g = &p->g[p->ng++];
		g->dma_pc = idx[k].dma_pc;
		g->before_pc = idx[k].before_pc;
		size_t e = k;
		while (e < r && idx[e].dma_pc == g->dma_pc && idx[e].before_pc == g->before_pc)
			e++;
		g->n = e - k;
		g->members = snr_xcalloc(g->n, sizeof(*g->members));
		for (size_t j = 0; j < g->n; j++) {
			g->members[j] = idx[k + j].k;
			g->estimate += p->sg[idx[k + j].k].predicted;
		}
		k = e;
	}
	free(idx);
	/* A move whose own destination is in use gets a second buffer: every
	 * other instance of the group writes it (by iteration parity), so that
	 * one instance's data is not overwritten by the next's while still read
	 * (the what-if checks that it is not) */
	for (size_t k = 0; k < p->ng; k++) {
		struct move_group *g = &p->g[k];
		size_t in_use = 0, flagged = 0;
		for (size_t j = 0; j < g->n; j++) {
			struct suggestion *s = &p->sg[g->members[j]];
			if (s->vmem_checked && !s->own_region && in_use++ % 2 == 0) {
				s->rename = true;
				g->renamed++;
			}
			if (s->other_flag && flagged++ % 2 == 0) {
				if (p->free_flag < 0) {
					s->suggested = false;
					s->reason = "held back by a WAIT on its own flag, and no sync flag is free in the window";
					continue;
				}
				s->rename_flag = true;
				s->flag_to = p->free_flag;
				g->flagged++;
			}
		}
	}
	snr_qsort(p->g, p->ng, sizeof(*p->g), cmp_group);
	for (size_t k = 0; k < p->ng; k++)
		for (size_t j = 0; j < p->g[k].n; j++)
			p->sg[p->g[k].members[j]].group = k;
}

static void plan_free(struct plan *p)
{
	for (size_t k = 0; k < p->ng; k++)
		free(p->g[k].members);
	free(p->g);
	free(p->sg);
	memset(p, 0, sizeof(*p));
}

/* The suggestions of group g (or of every confirmed group when g is NULL). */
static size_t group_moves(const struct plan *p, const struct move_group *g, const struct suggestion **out)
{
	size_t n = 0;
	for (size_t k = 0; k < p->ng; k++) {
		const struct move_group *x = &p->g[k];
		if (g ? x != g : !x->confirmed)
			continue;
		for (size_t j = 0; j < x->n; j++)
			out[n++] = &p->sg[x->members[j]];
	}
	return n;
}

/* What a moved run shows, for the reason a group realizes less than its
 * estimate: the DMA stalls of each WAIT by the DMA responsible, and each
 * DMA's completion and transfer time (by its ISSUE's original index). */
struct diag_stall {
	uint64_t index, cycles;
	int64_t responsible;
};
struct diag_dma {
	int64_t issue_index;
	uint64_t complete, transfer;
};
struct diag {
	struct diag_stall *st;
	size_t nst, capst;
	struct diag_dma *dm;
	size_t ndm, capdm;
};

static void diag_on_stall(void *u, const struct snr_ev_stall *e)
{
	struct diag *g = u;
	if (e->cause != SNR_STALL_DMA_BASE && e->cause != SNR_STALL_DMA_TRANSFER)
		return;
	if (g->nst == g->capst) {
		g->capst = g->capst ? 2 * g->capst : 256;
		g->st = snr_xrealloc(g->st, g->capst * sizeof(*g->st));
	}
	g->st[g->nst++] = (struct diag_stall){e->index, e->cycles, e->responsible};
}

static void diag_on_dma(void *u, const struct snr_ev_dma *e)
{
	struct diag *g = u;
	if (e->phase != SNR_DMA_COMPLETED)
		return;
	if (g->ndm == g->capdm) {
		g->capdm = g->capdm ? 2 * g->capdm : 256;
		g->dm = snr_xrealloc(g->dm, g->capdm * sizeof(*g->dm));
	}
	g->dm[g->ndm++] = (struct diag_dma){e->issue_index, e->cycle, e->transfer_cycles};
}

static int cmp_diag_stall(const void *a, const void *b)
{
	const struct diag_stall *x = a, *y = b;
	return x->index < y->index ? -1 : x->index > y->index;
}

static int cmp_diag_dma(const void *a, const void *b)
{
	const struct diag_dma *x = a, *y = b;
	return x->issue_index < y->issue_index ? -1 : x->issue_index > y->issue_index;
}

/* After the run: both tables sorted, for the lookups below. */
static void diag_sort(struct diag *g)
{
	snr_qsort(g->st, g->nst, sizeof(*g->st), cmp_diag_stall);
	snr_qsort(g->dm, g->ndm, sizeof(*g->dm), cmp_diag_dma);
}

static const struct diag_dma *diag_dma_of(const struct diag *g, int64_t issue_index)
{
	struct diag_dma key = {.issue_index = issue_index};
	return g->ndm ? bsearch(&key, g->dm, g->ndm, sizeof(*g->dm), cmp_diag_dma) : NULL;
}

/* The first stall of instruction `index` (the others follow it), or nst. */
static size_t diag_stalls_of(const struct diag *g, uint64_t index)
{
	size_t lo = 0, hi = g->nst;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->st[mid].index < index)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* The DMA issued at instruction index i in d (NULL if none). */
static const struct snr_deps_dma *dma_at(const struct snr_deps *d, int64_t i)
{
	size_t lo = 0, hi = d->ndmas; /* ids are in issue order */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (d->dmas[mid].issue_index < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < d->ndmas && d->dmas[lo].issue_index == i ? &d->dmas[lo] : NULL;
}

static const char *space_name(unsigned s)
{
	static const char *const names[] = {"core", "vmem", "mxuw", "hbm"};
	return s < 4 ? names[s] : "?";
}

/* Runs group g's moves again with a tracker and states why they realize
 * less than their estimate. */
static void diagnose(struct capture *c, const struct plan *p, struct move_group *g)
{
	const struct snr_deps *d = p->d;
	const struct suggestion **moves = snr_xcalloc(g->n, sizeof(*moves));
	size_t n = group_moves(p, g, moves);
	struct diag dg = {0};
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION,
				.user = &dg,
				.on_stall = diag_on_stall,
				.on_dma = diag_on_dma};
	struct ta1_timing_totals tot;
	an_sg_what_if_moves(c, moves, n, &t, &tot, NULL);
	diag_sort(&dg);
	/* the instance whose WAIT stalls most on another DMA, or on its own */
	const struct suggestion *worst_other = NULL, *worst_own = NULL;
	uint64_t other_cycles = 0, own_cycles = 0;
	int64_t other_dma = -1;
	for (size_t k = 0; k < n; k++) {
		const struct snr_deps_dma *m = moves[k]->m;
		if (m->wait_index < 0)
			continue;
		for (size_t j = diag_stalls_of(&dg, (uint64_t)m->wait_index);
		     j < dg.nst && dg.st[j].index == (uint64_t)m->wait_index; j++) {
			const struct diag_stall *x = &dg.st[j];
			if (x->responsible == m->issue_index) {
				if (x->cycles > own_cycles) {
					own_cycles = x->cycles;
					worst_own = moves[k];
				}
			} else if (x->cycles > other_cycles) {
				other_cycles = x->cycles;
				other_dma = x->responsible;
				worst_other = moves[k];
			}
		}
	}
	char ws[256], os[256];
	if (worst_other && other_cycles >= own_cycles) {
		const struct snr_deps_dma *m = worst_other->m, *o = dma_at(d, other_dma);
		const struct diag_dma *oc = diag_dma_of(&dg, other_dma);
		uint64_t wpc = snr_deps_insn_get(d, m->wait_index).pc, opc = other_dma >= 0 ? snr_deps_insn_get(d, other_dma).pc : 0;
		snr_source_where(&d->an.src, wpc, ws, sizeof(ws));
		snr_source_where(&d->an.src, opc, os, sizeof(os));
		snprintf(g->reason, sizeof(g->reason),
			 "the WAIT at %s (pc 0x%" PRIx64 ") also waits for DMA %" PRIu64 " (%s, pc 0x%" PRIx64
			 ") completing at cycle %" PRIu64 ": it still stalls %" PRIu64 " cycles",
			 ws, wpc, o ? o->id : 0, os, opc, oc ? oc->complete : 0, other_cycles);
	} else if (worst_own) {
		const struct snr_deps_dma *m = worst_own->m;
		const struct diag_dma *mc = diag_dma_of(&dg, m->issue_index);
		uint64_t before = m->complete_cycle > m->start_cycle ? m->complete_cycle - m->start_cycle : 0;
		/* the latest of the other DMAs its WAIT consumes, in the moved run:
		 * if it completes at or after this one, the WAIT waits for it anyway
		 * (the stall is then attributed to whichever completes first) */
		const struct snr_deps_dma *late = NULL;
		const struct diag_dma *late_c = NULL;
		for (size_t k = 0; mc && k < d->ndmas; k++) {
			const struct snr_deps_dma *o = &d->dmas[k];
			const struct diag_dma *oc = o->issue_index >= 0 ? diag_dma_of(&dg, o->issue_index) : NULL;
			if (o != m && o->wait_index == m->wait_index && oc && oc->complete >= mc->complete &&
			    (!late_c || oc->complete > late_c->complete)) {
				late = o;
				late_c = oc;
			}
		}
		if (late) {
			uint64_t wpc = snr_deps_insn_get(d, m->wait_index).pc, opc = snr_deps_insn_get(d, late->issue_index).pc;
			snr_source_where(&d->an.src, wpc, ws, sizeof(ws));
			snr_source_where(&d->an.src, opc, os, sizeof(os));
			snprintf(g->reason, sizeof(g->reason),
				 "the WAIT at %s (pc 0x%" PRIx64 ") also waits for DMA %" PRIu64 " (%s, pc 0x%" PRIx64
				 ") completing at cycle %" PRIu64 ", after the moved DMA (%" PRIu64
				 "): it still stalls %" PRIu64 " cycles",
				 ws, wpc, late->id, os, opc, late_c->complete, mc->complete, own_cycles);
		} else if (mc && mc->transfer > before + before / 10)
			snprintf(g->reason, sizeof(g->reason),
				 "the link %s>%s is saturated: moved, the DMA's transfer takes %" PRIu64
				 " cycles against %" PRIu64 " in the replay, and its WAIT still stalls %" PRIu64 " cycles",
				 space_name(m->src_space), space_name(m->dst_space), mc->transfer, before, own_cycles);
		else
			snprintf(g->reason, sizeof(g->reason),
				 "moved, the DMA still stalls its WAIT %" PRIu64 " cycles: the point is not early enough",
				 own_cycles);
	} else {
		/* its WAITs no longer stall: the cycles went elsewhere */
		unsigned worst = SNR_STALL_COUNT;
		uint64_t grew = 0;
		for (unsigned k = 0; k < SNR_STALL_COUNT; k++)
			if (tot.stall_cycles[k] > p->base_totals.stall_cycles[k] &&
			    tot.stall_cycles[k] - p->base_totals.stall_cycles[k] > grew) {
				grew = tot.stall_cycles[k] - p->base_totals.stall_cycles[k];
				worst = k;
			}
		if (worst == SNR_STALL_VMEM_HAZARD)
			snprintf(g->reason, sizeof(g->reason),
				 "the VMEM region is taken: its WAITs no longer stall, but VMEM hazard stalls grow by %" PRIu64
				 " cycles",
				 grew);
		else if (worst == SNR_STALL_DMA_BASE || worst == SNR_STALL_DMA_TRANSFER)
			snprintf(g->reason, sizeof(g->reason),
				 "the link is saturated: its WAITs no longer stall, but other WAITs stall %" PRIu64
				 " cycles longer on DMAs that now share the link with it",
				 grew);
		else if (worst < SNR_STALL_COUNT)
			snprintf(g->reason, sizeof(g->reason),
				 "its WAITs no longer stall, but %s stalls grow by %" PRIu64 " cycles",
				 snr_stall_cause_name((enum snr_stall_cause)worst), grew);
		else
			snprintf(g->reason, sizeof(g->reason),
				 "its WAITs no longer stall, but the cycles they hid were not on the critical path");
	}
	free(dg.st);
	free(dg.dm);
	free(moves);
}

/* A refused move's reason: what it would change, in the program's terms. */
static void refusal(const struct capture *c, const struct snr_deps *d, const struct an_conflict *cf, char *buf,
		    size_t len)
{
	char a[512], b[512];
	uint64_t mpc = snr_deps_insn_get(d, cf->moved).pc, opc = snr_deps_insn_get(d, cf->other).pc;
	(void)c;
	an_sg_place(&d->an.src, mpc, "the instruction", a, sizeof(a));
	an_sg_place(&d->an.src, opc, "the instruction", b, sizeof(b));
	if (cf->kind == AN_CONFLICT_RENAMED)
		snr_fmt(buf, len,
			"refused: it would change what the program computes: the second buffer of %s is used by %s "
			"before the moved data's last read",
			a, b);
	else if (cf->kind == AN_CONFLICT_PARTIAL)
		snr_fmt(buf, len,
			"refused: it would change what the program computes: %s reads part of the renamed buffer of %s "
			"and part of something else",
			b, a);
	else if (cf->kind == AN_CONFLICT_REGISTER)
		snr_fmt(buf, len, "refused: it would change what the program computes: moved, %s %s, %s (x%" PRIu64 ")",
			a, an_conflict_kind_words(cf->kind), b, cf->addr);
	else if (cf->kind == AN_CONFLICT_FLAG)
		snr_fmt(buf, len,
			"refused: it would change what the program computes: moved, %s %s, %s (flag %" PRIu64
			"; give it a flag of its own)",
			a, an_conflict_kind_words(cf->kind), b, cf->addr);
	else
		snr_fmt(buf, len, "refused: it would change what the program computes: moved, %s %s, %s (at 0x%" PRIx64 ")",
			a, an_conflict_kind_words(cf->kind), b, cf->addr);
}

/* Each group's what-if (all its instances moved; the verify_max largest
 * estimates), then all the confirmed groups together. */
static void verify_plan(struct capture *c, struct plan *p, unsigned verify_max)
{
	const struct suggestion **moves = snr_xcalloc(p->nsug + 1, sizeof(*moves));
	/* the window as captured and each group's what-if (the groups are in
	 * estimate order), in one pass over the stream */
	size_t nv = p->ng < verify_max ? p->ng : verify_max;
	struct an_wi_order *ord = snr_xcalloc(nv + 1, sizeof(*ord));
	uint64_t *cycles = snr_xcalloc(nv + 1, sizeof(*cycles));
	for (size_t k = 0; k < nv; k++)
		an_sg_order_of(c, moves, group_moves(p, &p->g[k], moves), &ord[k + 1]);
	an_wi_run_many(c, ord, nv + 1, cycles, &p->base_totals);
	p->baseline = cycles[0];
	p->verified = true;
	for (size_t k = 0; k < nv; k++) {
		struct move_group *g = &p->g[k];
		g->cycles_after = cycles[k + 1];
		g->realized = (int64_t)p->baseline - (int64_t)g->cycles_after;
		g->verified = true;
		if (ord[k + 1].conflict.kind != AN_CONFLICT_NONE) {
			g->refused = true;
			refusal(c, p->d, &ord[k + 1].conflict, g->reason, sizeof(g->reason));
		}
		g->confirmed = !g->refused && g->realized > 0 && 2 * (uint64_t)g->realized >= g->estimate;
		if (!g->confirmed && !g->refused)
			diagnose(c, p, g);
		p->nverified++;
	}
	for (size_t k = 0; k <= nv; k++)
		an_sg_order_free(&ord[k]);
	free(ord);
	free(cycles);
	snr_qsort(p->g, p->ng, sizeof(*p->g), cmp_group); /* the confirmed first, by what they realize */
	for (size_t k = 0; k < p->ng; k++)
		if (p->g[k].confirmed) {
			p->cb.moves++;
			p->cb.sum_groups += p->g[k].realized;
		}
	/* All the confirmed moves together; when together they would compute
	 * something else (each is safe alone), the one that realizes least is
	 * refused and the rest are run again. */
	while (p->cb.moves) {
		struct an_conflict cf;
		size_t n = group_moves(p, NULL, moves);
		p->cb.moved = an_sg_what_if_moves(c, moves, n, NULL, NULL, &cf);
		if (cf.kind == AN_CONFLICT_NONE) {
			p->cb.realized = (int64_t)p->baseline - (int64_t)p->cb.moved;
			p->cb.done = true;
			break;
		}
		struct move_group *last = &p->g[p->cb.moves - 1];
		char why[1024];
		refusal(c, p->d, &cf, why, sizeof(why));
		snr_fmt(last->reason, sizeof(last->reason), "with the moves that realize more applied too: %s", why);
		last->confirmed = false;
		last->refused = true;
		p->cb.moves--;
		p->cb.sum_groups -= last->realized;
	}
	free(moves);
	snr_qsort(p->g, p->ng, sizeof(*p->g), cmp_group);
	for (size_t k = 0; k < p->ng; k++)
		for (size_t j = 0; j < p->g[k].n; j++)
			p->sg[p->g[k].members[j]].group = k;
}

/* ---- --rounds: the confirmed moves applied, Algorithm 2 again ----------- */

/* A round's confirmed moves, kept for printing after its graph is gone. */
struct round_feed {
	struct capture *c;
	const struct snr_source *orig;
};

/* snr_deps_feed_fn: the reordered window's events, from the timing model;
 * symbols from the original trace or metrics file. */
static int feed_round(void *user, struct snr_source *src, const struct snr_tracker *t, char *err, size_t errlen)
{
	const struct round_feed *f = user;
	memset(src, 0, sizeof(*src));
	src->path = snr_xstrdup(f->orig->path);
	src->is_trace = f->orig->is_trace;
	src->cfg = f->c->cfg;
	src->meta_json = snr_xstrdup(f->orig->meta_json ? f->orig->meta_json : "{}");
	if (f->orig->trace && !(src->trace = snr_trace_open(f->orig->path, err, errlen)))
		return -1;
	if (f->orig->metrics && !(src->metrics = snr_metrics_open(f->orig->path, err, errlen)))
		return -1;
	src->instructions = f->c->n;
	src->cycles = an_wi_run(f->c, NULL, 0, t, true, NULL);
	src->verified = true;
	return 0;
}

static void round_record(const struct plan *p, struct round *r)
{
	r->cycles_before = p->baseline;
	r->cycles = p->cb.done ? p->cb.moved : p->baseline;
	r->moves = snr_xcalloc(p->cb.moves + 1, sizeof(*r->moves));
	for (size_t k = 0; k < p->ng; k++)
		if (p->g[k].confirmed)
			r->moves[r->nmoves++] = (struct round_move){p->g[k].dma_pc, p->g[k].before_pc, p->g[k].n,
								     p->g[k].estimate, p->g[k].realized};
}

/* Rounds after round 1's plan (p on c): each applies its round's confirmed
 * DMA moves to the stream, then the WAIT moves the what-if keeps
 * (wait_move.c), builds the moved window's graph and runs Algorithm 2 and
 * the what-ifs on it for the next round. Stops after `rounds` rounds or at a
 * round that applies nothing. Returns the rounds filled in r, or -1 with err
 * filled. */
static int run_rounds(struct capture *c, const struct snr_deps *d, const struct plan *p,
		      const struct snr_deps_opts *o, unsigned rounds, unsigned verify_max, struct round *r, char *err,
		      size_t errlen)
{
	size_t nr = 0;
	round_record(p, &r[nr++]);
	struct capture cur = {0}, next = {0}, *base = c;
	const struct plan *prev_p = p;
	struct plan pl = {0};
	struct snr_deps dn = {0};
	bool have_cur = false, have_pl = false, applied = false;
	int rc = 0;
	for (;;) {
		struct round *rr = &r[nr - 1];
		if (prev_p->cb.moves) {
			const struct suggestion **moves = snr_xcalloc(prev_p->nsug + 1, sizeof(*moves));
			struct an_wi_order ord;
			an_sg_order_of(base, moves, group_moves(prev_p, NULL, moves), &ord);
			rc = an_wi_capture_reordered(base, &ord, &next, err, errlen);
			an_sg_order_free(&ord);
			free(moves);
		}
		if (!rc && prev_p->cb.moves) {
			if (have_cur)
				an_wi_capture_free(&cur);
			cur = next;
			have_cur = true;
			base = &cur;
		}
		rr->cycles_dma = rr->cycles;
		if (!rc && !(rc = an_wm_round(base, &d->an.src, &rr->wm, &next, &applied, err, errlen)) && applied) {
			if (have_cur)
				an_wi_capture_free(&cur);
			cur = next;
			have_cur = true;
			base = &cur;
			rr->cycles = rr->wm.cycles_after;
		}
		rr->has_wm = !rc;
		if (rc || nr >= rounds || (!rr->nmoves && !applied))
			break;
		if (have_pl) {
			plan_free(&pl);
			snr_deps_free(&dn);
		}
		have_pl = true;
		struct round_feed f = {&cur, &d->an.src};
		if ((rc = snr_deps_build(&dn, feed_round, &f, o, err, errlen)))
			break;
		plan_moves(&dn, &pl);
		verify_plan(&cur, &pl, verify_max);
		if (cur.io_failed) {
			snr_fmt(err, errlen, "%s", cur.io_err);
			rc = -1;
			break;
		}
		round_record(&pl, &r[nr++]);
		prev_p = &pl;
	}
	if (have_pl) {
		plan_free(&pl);
		snr_deps_free(&dn);
	}
	if (have_cur)
		an_wi_capture_free(&cur);
	if (rc && next.f && next.f != cur.f)
		an_wi_capture_free(&next);
	return rc ? -1 : (int)nr;
}

/* ---- output -------------------------------------------------------------- */

static void print_operands(FILE *f, const struct snr_deps *d, const struct suggestion *s)
{
	const struct snr_deps_dma *m = s->m;
	for (size_t k = s->slice0; k < m->nslice; k++)
		fprintf(f, "%s0x%" PRIx64, k > s->slice0 ? ", " : "", snr_deps_insn_get(d, m->slice[k]).pc);
}

static void print_group_text(FILE *f, const struct plan *p, size_t k)
{
	const struct snr_deps *d = p->d;
	const struct move_group *g = &p->g[k];
	const struct suggestion *s = &p->sg[g->members[0]];
	fprintf(f, "%3zu. ", k + 1);
	char label[1200];
	fputs(an_sg_move_label(&d->an.src, g->dma_pc, g->before_pc, g->n, label, sizeof(label)), f);
	fputs("\n     ", f);
	if (s->slice0 < s->m->nslice) {
		fputs("with the instructions that compute its operands (pcs ", f);
		print_operands(f, d, s);
		fputs("); ", f);
	}
	if (s->vmem_checked && s->own_region)
		fprintf(f, "VMEM [0x%" PRIx64 ", 0x%" PRIx64 ") is free from the point to the data's last read "
			   "(its own destination)\n",
			s->free_lo, s->free_hi);
	else if (s->vmem_checked && g->renamed < g->n)
		fprintf(f, "its own destination is still being read then: double-buffer it: a second %" PRIu64
			   "-byte buffer at VMEM [0x%" PRIx64 ", 0x%" PRIx64 "), free from the point to the data's last "
			   "read; alternate by iteration parity (%zu of the %zu instances write the second buffer, their "
			   "readers read there)\n",
			s->m->bytes, s->free_lo, s->free_lo + s->m->bytes, g->renamed, g->n);
	else if (s->vmem_checked)
		fprintf(f, "its own destination is still being read then: its buffer moves to VMEM [0x%" PRIx64 ", 0x%" PRIx64
			   "), free from the point to the data's last read (its readers read there)\n",
			s->free_lo, s->free_lo + s->m->bytes);
	else
		fputs("its destination is not in VMEM\n", f);
	if (g->flagged)
		fprintf(f, "     it moves above a WAIT on its own sync flag %u: give it a flag of its own: flag %d for %zu of the "
			   "%zu instances (by iteration parity), their WAITs waiting on it\n",
			s->m->flag, p->free_flag, g->flagged, g->n);
	if (!g->verified)
		fprintf(f, "     estimate: at most %" PRIu64 " cycles (Algorithm 2; not verified)\n", g->estimate);
	else if (g->confirmed)
		fprintf(f, "     saves %" PRId64 " cycles (what-if, all %zu moved: %" PRIu64 " -> %" PRIu64
			   "); estimate at most %" PRIu64 "\n",
			g->realized, g->n, p->baseline, g->cycles_after, g->estimate);
	else
		fprintf(f, "     saves %" PRId64 " of at most %" PRIu64 " cycles (what-if, all %zu moved): %s\n", g->realized,
			g->estimate, g->n, g->reason);
}

static void print_text(FILE *f, const struct plan *p, unsigned verify_max, bool per_dma, const struct round *r,
		       size_t nr)
{
	const struct snr_deps *d = p->d;
	fprintf(f, "suggest: %s: %" PRIu64 " instructions, %" PRIu64 " cycles; %zu stalled DMAs; %zu moves in %zu place%s\n",
		d->an.src.path, d->an.src.instructions, d->an.src.cycles, p->n, p->nsug, p->ng, p->ng == 1 ? "" : "s");
	size_t nconf = 0, nunconf = 0;
	for (size_t k = 0; k < p->ng; k++) {
		nconf += p->g[k].confirmed;
		nunconf += p->g[k].verified && !p->g[k].confirmed;
	}
	if (p->verified) {
		if (p->baseline != d->an.src.cycles)
			fprintf(f, "what-if baseline: %" PRIu64 " cycles (the replay: %" PRIu64 ")\n", p->baseline,
				d->an.src.cycles);
		uint64_t est = 0;
		for (size_t k = 0; k < p->ng; k++)
			est += p->g[k].confirmed ? p->g[k].estimate : 0;
		if (p->cb.done)
			fprintf(f, "what-if: %" PRIu64 " -> %" PRIu64 " cycles with the %zu confirmed move%s together (saves %" PRId64
				   ", %.1f%%; their estimates sum to %" PRIu64 ", an upper bound)\n",
				p->baseline, p->cb.moved, p->cb.moves, p->cb.moves == 1 ? "" : "s", p->cb.realized,
				p->baseline ? 100.0 * (double)p->cb.realized / (double)p->baseline : 0.0, est);
		else
			fprintf(f, "what-if: no move is confirmed (none realizes half its estimate)\n");
	} else if (p->ng)
		fprintf(f, "estimates only (Algorithm 2's upper bounds): --verify measures each move with a what-if replay\n");
	size_t k = 0;
	if (nconf)
		fputs("\nconfirmed (the what-if of all its instances moved realizes at least half the estimate):\n", f);
	for (; k < p->ng && p->g[k].confirmed; k++)
		print_group_text(f, p, k);
	if (nunconf)
		fputs("\nunconfirmed (the what-if realizes less than half the estimate, or the moved window would compute "
		      "something else):\n",
		      f);
	for (; k < p->ng && p->g[k].verified; k++)
		print_group_text(f, p, k);
	if (k < p->ng)
		fprintf(f, p->verified ? "\nnot verified (beyond the %u largest estimates, --verify-max):\n" : "\nmoves:\n",
			verify_max);
	for (; k < p->ng; k++)
		print_group_text(f, p, k);
	/* the stalled DMAs without a move, by pc and reason */
	struct an_sg_nomoves nm = {0};
	for (size_t a = 0; a < p->n; a++)
		if (!p->sg[a].suggested)
			an_sg_nomove_add(&nm, snr_deps_insn_get(d, p->sg[a].m->issue_index).pc, p->sg[a].reason,
					 p->sg[a].m->stall_cycles);
	if (nm.n)
		fputs("\nstalled DMAs with no move:\n", f);
	for (size_t k = 0; k < nm.n; k++) {
		const struct an_sg_nomove *g = &nm.g[k];
		char a1[400];
		fprintf(f, "     %s, %" PRIu64 " instance%s, %" PRIu64 " stall cycles: %s\n",
			an_sg_place(&d->an.src, g->pc, "the DMA ", a1, sizeof(a1)), g->instances, g->instances == 1 ? "" : "s",
			g->stall_cycles, g->reason);
	}
	an_sg_nomoves_free(&nm);
	if (r)
		an_sched_print_text(f, &d->an.src, r, nr);
	if (per_dma) {
		fputs("\nper DMA:\n", f);
		for (size_t a = 0; a < p->n; a++) {
			const struct suggestion *s = &p->sg[a];
			const struct snr_deps_dma *m = s->m;
			char a1[400];
			fprintf(f, "  DMA %" PRIu64 " at %s, #%" PRId64 ": stall %" PRIu64 " cycles, backtail %" PRIu64
				   " insns / %" PRIu64 " cycles; ",
				m->id, an_sg_place(&d->an.src, snr_deps_insn_get(d, m->issue_index).pc, NULL, a1, sizeof(a1)), m->issue_index, m->stall_cycles,
				m->backtail_insns, m->backtail_cycles);
			if (s->suggested)
				fprintf(f, "move %zu, before #%" PRIu64 "%s\n", s->group + 1, s->at,
					s->lifted ? " (lifted to its own function)" : "");
			else
				fprintf(f, "no move: %s\n", s->reason);
		}
	}
}

static void print_move_json(FILE *f, const struct snr_deps *d, uint64_t dma_pc, uint64_t before_pc)
{
	fputs("\"dma\":", f);
	an_sched_place_json(f, &d->an.src, dma_pc);
	fputs(",\"before\":", f);
	an_sched_place_json(f, &d->an.src, before_pc);
}

static void print_json(FILE *f, const struct plan *p, unsigned verify_max, const struct round *r, size_t nr,
		       bool brief)
{
	const struct snr_deps *d = p->d;
	fputs("{\"analysis\":\"suggest\",\"source\":", f);
	snr_deps_json_str(f, d->an.src.path);
	fprintf(f, ",\"instructions\":%" PRIu64 ",\"cycles\":%" PRIu64 ",\"max_chain\":%u,\"verified\":%s",
		d->an.src.instructions, d->an.src.cycles, d->max_chain, p->verified ? "true" : "false");
	if (p->verified)
		fprintf(f, ",\"what_if_baseline_cycles\":%" PRIu64 ",\"verify_max\":%u", p->baseline, verify_max);
	fputs(",\"moves\":[", f);
	for (size_t k = 0; k < p->ng; k++) {
		const struct move_group *g = &p->g[k];
		const struct suggestion *s = &p->sg[g->members[0]];
		fputs(k ? ",\n{" : "\n{", f);
		print_move_json(f, d, g->dma_pc, g->before_pc);
		fputs(",\"operand_pcs\":[", f);
		for (size_t j = s->slice0; j < s->m->nslice; j++)
			fprintf(f, "%s%" PRIu64, j > s->slice0 ? "," : "", snr_deps_insn_get(d, s->m->slice[j]).pc);
		fprintf(f, "],\"instances\":%zu,\"dma_ids\":[", g->n);
		for (size_t j = 0; j < g->n; j++)
			fprintf(f, "%s%" PRIu64, j ? "," : "", p->sg[g->members[j]].m->id);
		fprintf(f, "],\"estimate_cycles\":%" PRIu64, g->estimate);
		if (g->verified) {
			fprintf(f, ",\"realized_cycles\":%" PRId64 ",\"cycles_after\":%" PRIu64
				   ",\"confirmed\":%s,\"refused\":%s,\"reason\":",
				g->realized, g->cycles_after, g->confirmed ? "true" : "false", g->refused ? "true" : "false");
			if (g->confirmed)
				fputs("null", f);
			else
				snr_deps_json_str(f, g->reason);
		} else
			fputs(",\"realized_cycles\":null,\"cycles_after\":null,\"confirmed\":null,\"refused\":null,"
			      "\"reason\":null",
			      f);
		fprintf(f, ",\"renamed_instances\":%zu,\"own_flag_instances\":%zu", g->renamed, g->flagged);
		if (s->vmem_checked)
			fprintf(f, ",\"vmem_free\":{\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"own_destination\":%s}}", s->free_lo,
				s->free_hi, s->own_region ? "true" : "false");
		else
			fputs(",\"vmem_free\":null}", f);
	}
	fputs("]", f);
	if (p->cb.done)
		fprintf(f, ",\"combined\":{\"moves\":%zu,\"realized_cycles\":%" PRId64 ",\"cycles_before\":%" PRIu64
			   ",\"cycles_after\":%" PRIu64 ",\"moved_cycles\":%" PRIu64 ",\"sum_of_single_realized\":%" PRId64 "}",
			p->cb.moves, p->cb.realized, p->baseline, p->cb.moved, p->cb.moved, p->cb.sum_groups);
	else if (p->verified)
		fprintf(f, ",\"combined\":{\"moves\":0,\"realized_cycles\":0,\"cycles_before\":%" PRIu64
			   ",\"cycles_after\":%" PRIu64 ",\"moved_cycles\":%" PRIu64 ",\"sum_of_single_realized\":0}",
			p->baseline, p->baseline, p->baseline);
	else
		fputs(",\"combined\":null", f);
	if (r)
		an_sched_print_json(f, &d->an.src, r, nr);
	fputs(",\"stalled_dmas\":[", f);
	for (size_t k = 0; k < p->n; k++) {
		const struct suggestion *s = &p->sg[k];
		const struct snr_deps_dma *m = s->m;
		fprintf(f, "%s\n{\"dma\":", k ? "," : "");
		if (brief)
			snr_deps_print_dma_brief_json(f, d, m);
		else
			snr_deps_print_dma_json(f, d, m);
		fprintf(f, ",\"suggested\":%s", s->suggested ? "true" : "false");
		if (brief && s->suggested) {
			fputc('}', f);
			continue;
		}
		if (!s->suggested) {
			fputs(",\"reason\":", f);
			snr_deps_json_str(f, s->reason);
			fputc('}', f);
			continue;
		}
		uint64_t ypc = s->at < d->ninsn ? snr_deps_insn_get(d, s->at).pc : 0;
		fprintf(f, ",\"move_index\":%zu,\"move\":{\"dma_pc\":%" PRIu64 ",\"operand_pcs\":[", s->group,
			snr_deps_insn_get(d, m->issue_index).pc);
		for (size_t j = s->slice0; j < m->nslice; j++)
			fprintf(f, "%s%" PRIu64, j > s->slice0 ? "," : "", snr_deps_insn_get(d, m->slice[j]).pc);
		fprintf(f, "],\"before_pc\":%" PRIu64 ",\"before_index\":%" PRIu64 ",\"lifted\":%s},\"predicted_cycles\":%" PRIu64,
			ypc, s->at, s->lifted ? "true" : "false", s->predicted);
		if (s->vmem_checked)
			fprintf(f, ",\"vmem_free\":{\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"own_destination\":%s}",
				s->free_lo, s->free_hi, s->own_region ? "true" : "false");
		else
			fputs(",\"vmem_free\":null", f);
		fputc('}', f);
	}
	fputs("]", f);
}

/* ---- entry points -------------------------------------------------------- */

/* The capture for --verify: the trace, or the one a metrics file was
 * replayed from. 0, or 1 with err filled. */
static int capture_for(const struct snr_deps *d, const struct snr_deps_opts *o, struct capture *c, char *err,
		       size_t errlen)
{
	struct snr_replay_opts ro = {.config_path = o->config_path};
	struct snr_trace_id id;
	char *cfg_text = NULL, cfg_source[600];
	json_t *meta = NULL;
	int rc = 1;
	memset(c, 0, sizeof(*c));
	if (d->an.src.is_trace && o->trace_path) {
		snr_fmt(err, errlen, "--trace names the trace of a metrics file; %s is a trace itself", d->an.src.path);
		goto out;
	} else if (d->an.src.is_trace) {
		ro.trace_path = d->an.src.path;
	} else if (d->an.src.metrics) {
		/* A metrics file names the trace it was replayed from and records its
		 * identity: the what-ifs run on that trace or on none. */
		const char *mpath = d->an.src.path;
		meta = json_loads(snr_metrics_meta_json(d->an.src.metrics), 0, NULL);
		const char *named = json_string_value(json_object_get(meta, "trace"));
		json_t *bytes = json_object_get(meta, "trace_bytes");
		bool has_id = json_is_integer(bytes) &&
			      snr_trace_id_parse(json_string_value(json_object_get(meta, "trace_digest")),
						 (uint64_t)json_integer_value(bytes), &id);
		ro.trace_path = o->trace_path ? o->trace_path : named;
		if (has_id) {
			ro.expect_id = &id;
			ro.expect_from = mpath;
		} else if (o->trace_path) {
			snr_warn("%s records no digest of its trace (written by an older snr): %s is used unchecked", mpath,
				 o->trace_path);
		} else {
			snr_fmt(err, errlen,
				"%s records its trace only by path (%s), without the digest that tells that trace from "
				"another one at that path (written by an older snr): name the trace with --trace PATH",
				mpath, named ? named : "none");
			goto out;
		}
		/* the what-ifs use the config the metrics file's replay used */
		json_t *cj = json_object_get(meta, "config");
		if (cj) {
			cfg_text = json_dumps(cj, JSON_COMPACT);
			snr_fmt(cfg_source, sizeof(cfg_source), "%s (its machine config)", mpath);
			ro.config_json = cfg_text;
			ro.config_source = cfg_source;
		}
	}
	if (!d->ta1)
		snr_fmt(err, errlen, "--verify runs the TA1 timing model; this trace is not TA1 code");
	else if (!ro.trace_path)
		snr_fmt(err, errlen, "--verify needs the trace");
	else if (o->sim && strcmp(o->sim, "ta1"))
		snr_fmt(err, errlen, "--verify runs the TA1 timing model; --sim %s has none", o->sim);
	else if (an_wi_capture_trace(c, &ro, err, errlen)) {
		an_wi_capture_free(c);
		memset(c, 0, sizeof(*c));
	} else
		rc = 0;
out:
	json_decref(meta);
	free(cfg_text);
	return rc;
}

int snr_suggest_report(struct snr_deps *d, const struct snr_deps_opts *o, const struct snr_suggest_opts *so,
		       FILE *out, char *err, size_t errlen)
{
	struct plan p;
	plan_moves(d, &p);
	int rc = 0;
	struct round *r = NULL;
	int nr = 0;
	struct an_rt rt;
	an_rt_find(d, &rt);
	if (so->verify_max) {
		struct capture c;
		rc = capture_for(d, o, &c, err, errlen);
		if (!rc) {
			verify_plan(&c, &p, so->verify_max);
			an_rt_verify(&rt, &c, d);
			if (c.io_failed) { /* nothing the what-ifs gave can be trusted: the plan without them */
				snr_fmt(err, errlen, "%s", c.io_err);
				plan_free(&p);
				plan_moves(d, &p);
				rc = 1;
			} else if (so->rounds) {
				r = snr_xcalloc(so->rounds, sizeof(*r));
				nr = run_rounds(&c, d, &p, o, so->rounds, so->verify_max, r, err, errlen);
				if (nr < 0) {
					rc = 1;
					nr = 0;
				}
			}
			an_wi_capture_free(&c);
		}
	}
	if (so->json)
		print_json(out, &p, so->verify_max, r, (size_t)nr, so->brief);
	else
		print_text(out, &p, so->verify_max, so->per_dma, r, (size_t)nr);
	an_rt_report(out, d, &rt, so->json);
	if (r)
		an_sched_free(r, (size_t)nr);
	plan_free(&p);
	return rc;
}

static const char suggest_usage[] =
	"usage: snr analyze suggest T.snrt|M.snrm [--verify] [--verify-max N] [--rounds N] [--json] [--dmas]\n"
	"                           [--max-chain K] [--sim NAME] [--config M.json] [--trace T.snrt]\n"
	"\n"
	"Algorithm 2 of Snap & Replay: for each DMA a WAIT stalled on, if its relaxed dependency\n"
	"distance (backtail, `snr analyze deps`) exceeds the stall and VMEM has a contiguous free\n"
	"region as large as its destination from the earlier point to the last read of what it\n"
	"writes, suggest moving it there (no further than its stall needs, at a point of its own\n"
	"function), with the instructions that compute its operands. The moves are grouped by place\n"
	"(the DMA's pc and the pc it moves before), with their number of instances; a move's\n"
	"estimate (the stalls it hides) is an upper bound. A DMA whose buffer is still being read\n"
	"at the earlier point moves with a second buffer (and, held back by a WAIT on its own flag,\n"
	"a second flag), every other instance using it (by iteration parity).\n"
	"\n"
	"  --verify        run each move, all its instances together, in a what-if of the timing model:\n"
	"                  a move realizing at least half its estimate is confirmed, the others are\n"
	"                  listed after it with the reason the moved run shows; a move after which the\n"
	"                  window would compute something else (memory, register inputs or sync flags\n"
	"                  of the instructions it passes) is refused with the reason; then all the confirmed\n"
	"                  moves together, the headline (needs the trace; for a metrics file, the trace\n"
	"                  it was replayed from, checked against the digest the metrics file records)\n"
	"  --verify-max N  what-ifs for at most the N moves of largest estimate (default 16)\n"
	"  --rounds N      (with --verify) apply the confirmed DMA moves and the WAIT moves the what-if\n"
	"                  keeps (each deferred to its data's first use, merged with the next on its flag),\n"
	"                  and run Algorithm 2 and the what-ifs again, up to N rounds or until a round\n"
	"                  applies nothing; prints each round and the final schedule in source terms\n"
	"  --json          machine-readable output (docs/analyses.md, \"suggest\")\n"
	"  --dmas          also list every stalled DMA with its move or the reason it has none\n"
	"  --max-chain K   the lightweight threshold of the relaxed dependencies (default 16)\n"
	"  --config M.json the machine config for a trace's replay and its what-ifs (default: the\n"
	"                  recorded one); refused for a metrics file, whose replay used the config it\n"
	"                  carries (its what-ifs use that one too)\n"
	"  --trace T.snrt  (with --verify, for a metrics file) the trace it was replayed from, instead\n"
	"                  of the path it records; checked against its digest all the same\n"
	"A pod (snr record --pod's set, or its snr replay -o metrics set): snr analyze suggest POD --help\n";

int snr_analyze_suggest(int argc, char **argv)
{
	static const struct option opts[] = {{"verify", no_argument, NULL, 'v'},
					     {"verify-max", required_argument, NULL, 'n'},
					     {"rounds", required_argument, NULL, 'r'},
					     {"json", no_argument, NULL, 'j'},
					     {"dmas", no_argument, NULL, 'd'},
					     {"max-chain", required_argument, NULL, 'k'},
					     {"sim", required_argument, NULL, 's'},
					     {"config", required_argument, NULL, 'c'},
					     {"trace", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	bool do_verify = false;
	struct snr_suggest_opts so = {.verify_max = SNR_SUGGEST_DEFAULT_VERIFY_MAX};
	struct snr_deps_opts o = {0};
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'v': do_verify = true; break;
		case 'n':
			if (snr_deps_parse_count(optarg, "suggest", "--verify-max", &so.verify_max))
				return 2;
			break;
		case 'r':
			if (snr_deps_parse_count(optarg, "suggest", "--rounds", &so.rounds))
				return 2;
			break;
		case 'j': so.json = true; break;
		case 'd': so.per_dma = true; break;
		case 'k':
			if (snr_deps_parse_count(optarg, "suggest", "--max-chain", &o.max_chain))
				return 2;
			break;
		case 's': o.sim = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 't': o.trace_path = optarg; break;
		case 'h': fputs(suggest_usage, stdout); return 0;
		default: fputs(suggest_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(suggest_usage, stderr);
		return 2;
	}
	if (so.rounds && !do_verify) {
		snr_err("analyze suggest: --rounds needs --verify (each round applies the moves the what-if confirmed)");
		return 2;
	}
	if (o.trace_path && !do_verify) {
		snr_err("analyze suggest: --trace needs --verify (the what-ifs are what run the trace)");
		return 2;
	}
	if (!do_verify)
		so.verify_max = 0;
	char err[4096] = "";
	struct snr_deps d;
	if (snr_deps_run(&d, argv[optind], &o, err, sizeof(err))) {
		snr_deps_free(&d);
		snr_err("analyze suggest: %s", err);
		return 1;
	}
	int rc = snr_suggest_report(&d, &o, &so, stdout, err, sizeof(err));
	snr_deps_free(&d);
	if (rc)
		snr_err("analyze suggest: --verify: %s", err);
	return rc;
}
