/*
 * roundtrip.c: scalar round trips and units idle behind a WAIT (see
 * roundtrip.h).
 *
 * Found on the window's dependency graph (deps.c): a round trip is a DMA
 * into core memory that a WAIT consumed and a scalar load reads after that
 * WAIT (a memory edge from the DMA's ISSUE to the load); the DMAs issued at
 * one pc that do so at least twice are one round trip, once per iteration.
 * Its cost: the stall cycles the replay measured at their WAITs (of every
 * DMA each WAIT waits for).
 *
 * The rewrite modelled: for each instance but the first, the DMA and every
 * instruction after the previous instance's WAIT it depends on (registers
 * and memory, transitively: the vector work that computes what it sends,
 * its address arithmetic) move to just after the previous instance's WAIT.
 * When one of them reads the previous instance's bytes (the next transfer
 * needs this iteration's scalar result), there is no such move: the saving
 * is only an estimate. An idle unit: after a stalled WAIT, the first vector
 * or MXU operation before the next WAIT; when neither it nor what it
 * depends on after the WAIT reads bytes of a DMA the WAIT completes, it and
 * they move to just before the WAIT.
 *
 * Each move is replayed alone by the what-if (whatif.c) on the window's
 * stream; the timing model does not look at values, and the moved DMA of a
 * round trip writing a buffer the scalar code still reads is stated as the
 * second buffer the rewrite needs.
 */
#include "analyzer/roundtrip.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/schedule.h"
#include "analyzer/suggest_words.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_util.h"

/* The most instructions one instance's move may take along (a longer chain
 * is not the usual rewrite of a round trip: the saving is then an estimate). */
#define RT_CHAIN_MAX 256
/* How far past a stalled WAIT the idle-unit search looks for a vector or
 * MXU operation. */
#define RT_LOOK_MAX 512

struct dma_at {
	uint64_t issue;
	size_t id; /* index into d->dmas */
};

static int cmp_dma_at(const void *a, const void *b)
{
	const struct dma_at *x = a, *y = b;
	return x->issue < y->issue ? -1 : x->issue > y->issue;
}

static const struct snr_deps_dma *dma_issued_at(const struct snr_deps *d, const struct dma_at *tab, size_t n,
						uint64_t i)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (tab[mid].issue < i)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && tab[lo].issue == i ? &d->dmas[tab[lo].id] : NULL;
}

/* The instructions in (lo, x] that x depends on, transitively, with x
 * (ascending, in *out, *n of them); false when there are more than
 * RT_CHAIN_MAX, one is a WAIT, or one reads bytes DMA `avoid` wrote
 * (avoid < 0: none) or bytes of a DMA whose WAIT is `avoid_wait` (< 0:
 * none). */
static bool closure(const struct snr_deps *d, const struct dma_at *tab, size_t ntab, uint64_t lo, uint64_t x,
		    int64_t avoid, int64_t avoid_wait, uint64_t **out, size_t *n)
{
	uint64_t *v = snr_xmalloc((RT_CHAIN_MAX + 1) * sizeof(*v));
	size_t nv = 0, head = 0;
	bool ok = true;
	v[nv++] = x;
	while (head < nv && ok) {
		uint64_t i = v[head++];
		size_t ne;
		const struct snr_dep_edge *e = snr_deps_edges_of(d, i, &ne);
		/* copied: the edge buffer is good until the next call */
		struct snr_dep_edge *ec = snr_xmalloc((ne ? ne : 1) * sizeof(*ec));
		memcpy(ec, e, ne * sizeof(*ec));
		for (size_t k = 0; k < ne && ok; k++) {
			uint64_t p = ec[k].producer;
			if (ec[k].kind == SNR_DEP_MEM) {
				const struct snr_deps_dma *m = dma_issued_at(d, tab, ntab, p);
				if (m && ((avoid >= 0 && p == (uint64_t)avoid) ||
					  (avoid_wait >= 0 && m->wait_index == avoid_wait))) {
					ok = false;
					break;
				}
			}
			if (p <= lo)
				continue;
			bool seen = false;
			for (size_t j = 0; j < nv && !seen; j++)
				seen = v[j] == p;
			if (seen)
				continue;
			/* a WAIT does not move up: it would wait for less */
			if (nv > RT_CHAIN_MAX || snr_deps_insn_get(d, p).cls == TA1_CLASS_DMA_WAIT)
				ok = false;
			else
				v[nv++] = p;
		}
		free(ec);
	}
	if (!ok) {
		free(v);
		return false;
	}
	snr_qsort(v, nv, sizeof(*v), an_wi_cmp_u64);
	*out = v;
	*n = nv;
	return true;
}

static struct an_rt_item *rt_add(struct an_rt *rt)
{
	if (rt->n == rt->cap) {
		rt->cap = rt->cap ? 2 * rt->cap : 8;
		rt->it = snr_xrealloc(rt->it, rt->cap * sizeof(*rt->it));
	}
	struct an_rt_item *t = &rt->it[rt->n++];
	memset(t, 0, sizeof(*t));
	return t;
}

static void mv_add(struct an_rt_item *t, uint64_t slot, const uint64_t *v, size_t n)
{
	t->mv = snr_xrealloc(t->mv, (t->nmv + n + 1) * sizeof(*t->mv));
	for (size_t k = 0; k < n; k++)
		t->mv[t->nmv++] = (struct slotted){slot, v[k]};
	t->moved_insns += n;
	t->moves++;
}

static bool overlaps(const struct snr_deps_dma *a, const struct snr_deps_dma *b)
{
	return a->dst_space == b->dst_space && a->dst_addr < b->dst_addr + b->bytes &&
	       b->dst_addr < a->dst_addr + a->bytes;
}

/* One DMA's first scalar read of its bytes after its WAIT (UINT64_MAX: none) */
struct first_use {
	uint64_t use;
};

/* The stall cycles of the DMAs WAIT wi waits for (ws: by wait index). */
struct wait_st {
	int64_t wait;
	uint64_t stall;
};

static int cmp_wait_st(const void *a, const void *b)
{
	const struct wait_st *x = a, *y = b;
	return x->wait < y->wait ? -1 : x->wait > y->wait;
}

static uint64_t wait_stall(const struct wait_st *ws, size_t n, int64_t wi)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (ws[mid].wait < wi)
			lo = mid + 1;
		else
			hi = mid;
	}
	uint64_t s = 0;
	for (; lo < n && ws[lo].wait == wi; lo++)
		s += ws[lo].stall;
	return s;
}

static void find_round_trips(const struct snr_deps *d, const struct dma_at *tab, size_t ntab,
			     struct an_rt *rt)
{
	struct wait_st *ws = snr_xmalloc((d->ndmas ? d->ndmas : 1) * sizeof(*ws));
	size_t nws = 0;
	for (size_t k = 0; k < d->ndmas; k++)
		if (d->dmas[k].waited && d->dmas[k].wait_index >= 0)
			ws[nws++] = (struct wait_st){d->dmas[k].wait_index, d->dmas[k].stall_cycles};
	snr_qsort(ws, nws, sizeof(*ws), cmp_wait_st);
	uint64_t *use = snr_xmalloc((d->ndmas ? d->ndmas : 1) * sizeof(*use));
	for (size_t k = 0; k < d->ndmas; k++)
		use[k] = UINT64_MAX;
	struct snr_deps_edge_iter it = {0};
	struct snr_dep_edge e;
	while (snr_deps_edge_next(d, &it, &e)) {
		if (e.kind != SNR_DEP_MEM || e.space != TA1_SPACE_CORE)
			continue;
		const struct snr_deps_dma *m = dma_issued_at(d, tab, ntab, e.producer);
		if (!m || !m->waited || m->wait_index < 0 || e.consumer <= (uint64_t)m->wait_index)
			continue;
		if (snr_deps_insn_get(d, e.consumer).cls != TA1_CLASS_LOAD)
			continue;
		size_t id = (size_t)(m - d->dmas);
		if (e.consumer < use[id])
			use[id] = e.consumer;
	}
	/* by issuing pc, in issue order (tab is) */
	bool *done = snr_xcalloc(ntab ? ntab : 1, sizeof(*done));
	for (size_t a = 0; a < ntab; a++) {
		const struct snr_deps_dma *m0 = &d->dmas[tab[a].id];
		if (done[a] || use[tab[a].id] == UINT64_MAX || m0->dst_space != TA1_SPACE_CORE)
			continue;
		uint64_t pc = snr_deps_insn_get(d, tab[a].issue).pc;
		size_t *inst = snr_xmalloc((ntab - a) * sizeof(*inst)), ni = 0;
		for (size_t b = a; b < ntab; b++)
			if (!done[b] && use[tab[b].id] != UINT64_MAX &&
			    d->dmas[tab[b].id].dst_space == TA1_SPACE_CORE &&
			    snr_deps_insn_get(d, tab[b].issue).pc == pc) {
				done[b] = true;
				inst[ni++] = b;
			}
		/* the stalls at its WAITs: of every DMA each of them waits for (a WAIT
		 * that waits for several stalls for them all) */
		uint64_t stall = 0;
		for (size_t k = 0; k < ni; k++) {
			int64_t wi = d->dmas[tab[inst[k]].id].wait_index;
			if (k && d->dmas[tab[inst[k - 1]].id].wait_index == wi)
				continue;
			stall += wait_stall(ws, nws, wi);
		}
		if (ni < 2 || !stall) {
			free(inst);
			continue;
		}
		struct an_rt_item *t = rt_add(rt);
		t->kind = AN_RT_ROUND_TRIP;
		t->dma_pc = pc;
		t->wait_pc = snr_deps_insn_get(d, (uint64_t)m0->wait_index).pc;
		t->use_pc = snr_deps_insn_get(d, use[tab[a].id]).pc;
		t->instances = ni;
		t->stall_cycles = stall;
		t->modelled = true;
		for (size_t k = 1; k < ni && t->modelled; k++) {
			const struct snr_deps_dma *prev = &d->dmas[tab[inst[k - 1]].id],
						  *m = &d->dmas[tab[inst[k]].id];
			uint64_t w = (uint64_t)prev->wait_index, *v;
			size_t nv;
			if ((int64_t)w >= m->issue_index) {
				snr_fmt(t->why_not, sizeof(t->why_not),
					"the DMAs are not one per iteration (DMA %" PRIu64
					" issues before DMA %" PRIu64 "'s WAIT)",
					m->id, prev->id);
				t->modelled = false;
			} else if (!closure(d, tab, ntab, w, (uint64_t)m->issue_index, prev->issue_index, -1,
					    &v, &nv)) {
				snr_fmt(t->why_not, sizeof(t->why_not),
					"the next DMA depends on the scalar work on the previous one's "
					"bytes, on a WAIT, or "
					"on more than %d instructions after the previous WAIT: no move "
					"issues it earlier",
					RT_CHAIN_MAX);
				t->modelled = false;
			} else {
				mv_add(t, w + 2, v,
				       nv); /* just after the previous WAIT: before instruction w + 1 */
				free(v);
				t->own_buffer |= overlaps(prev, m);
			}
		}
		if (!t->modelled) {
			free(t->mv);
			t->mv = NULL;
			t->nmv = t->moved_insns = t->moves = 0;
		}
		free(inst);
	}
	free(done);
	free(use);
	free(ws);
}

static void find_idle_units(const struct snr_deps *d, const struct dma_at *tab, size_t ntab, struct an_rt *rt)
{
	/* the stalled WAITs: the waited DMAs' wait indices, with their stalls */
	struct wst {
		uint64_t wait, stall;
		const struct snr_deps_dma *m;
	} *w = snr_xmalloc((d->ndmas ? d->ndmas : 1) * sizeof(*w));
	size_t nw = 0;
	for (size_t k = 0; k < d->ndmas; k++) {
		const struct snr_deps_dma *m = &d->dmas[k];
		if (m->waited && m->wait_index >= 0 && m->stall_cycles)
			w[nw++] = (struct wst){(uint64_t)m->wait_index, m->stall_cycles, m};
	}
	for (size_t k = 0; k < nw; k++) {
		uint64_t W = w[k].wait, op = UINT64_MAX;
		for (uint64_t i = W + 1; i < d->ninsn && i <= W + RT_LOOK_MAX; i++) {
			unsigned cls = snr_deps_insn_get(d, i).cls;
			if (cls == TA1_CLASS_DMA_WAIT)
				break;
			if (cls == TA1_CLASS_VECTOR || cls == TA1_CLASS_MATRIX) {
				op = i;
				break;
			}
		}
		if (op == UINT64_MAX)
			continue;
		uint64_t *v;
		size_t nv;
		if (!closure(d, tab, ntab, W, op, -1, (int64_t)W, &v, &nv))
			continue; /* it needs the WAIT's data, or too much moves with it */
		uint64_t wpc = snr_deps_insn_get(d, W).pc, opc = snr_deps_insn_get(d, op).pc;
		struct an_rt_item *t = NULL;
		for (size_t j = 0; j < rt->n && !t; j++)
			if (rt->it[j].kind == AN_RT_IDLE_UNIT && rt->it[j].wait_pc == wpc &&
			    rt->it[j].use_pc == opc)
				t = &rt->it[j];
		if (!t) {
			t = rt_add(rt);
			t->kind = AN_RT_IDLE_UNIT;
			t->dma_pc = snr_deps_insn_get(d, (uint64_t)w[k].m->issue_index).pc;
			t->wait_pc = wpc;
			t->use_pc = opc;
			t->op_cls = snr_deps_insn_get(d, op).cls;
			t->modelled = true;
		}
		t->instances++;
		t->stall_cycles += w[k].stall;
		mv_add(t, W + 1, v, nv); /* just before the WAIT */
		free(v);
	}
	free(w);
}

void an_rt_find(const struct snr_deps *d, struct an_rt *rt)
{
	memset(rt, 0, sizeof(*rt));
	struct dma_at *tab = snr_xmalloc((d->ndmas ? d->ndmas : 1) * sizeof(*tab));
	size_t ntab = 0;
	for (size_t k = 0; k < d->ndmas; k++)
		if (d->dmas[k].issue_index >= 0)
			tab[ntab++] = (struct dma_at){(uint64_t)d->dmas[k].issue_index, k};
	snr_qsort(tab, ntab, sizeof(*tab), cmp_dma_at);
	find_round_trips(d, tab, ntab, rt);
	find_idle_units(d, tab, ntab, rt);
	for (size_t k = 0; k < rt->n; k++)
		if (rt->it[k].nmv)
			snr_qsort(rt->it[k].mv, rt->it[k].nmv, sizeof(*rt->it[k].mv), an_wi_cmp_slotted);
	free(tab);
}

void an_rt_verify(struct an_rt *rt, struct capture *c, const struct snr_deps *d)
{
	uint64_t base = 0;
	bool have_base = false;
	for (size_t k = 0; k < rt->n; k++) {
		struct an_rt_item *t = &rt->it[k];
		if (!t->modelled || !t->nmv)
			continue;
		if (!have_base) {
			base = an_wi_run(c, NULL, 0, NULL, false, NULL);
			have_base = true;
		}
		struct an_wi_order o = {.moved = t->mv, .nmoved = t->nmv};
		t->cycles_before = base;
		t->cycles_after = an_wi_run_order(c, &o, NULL, false, NULL);
		t->saved = (int64_t)base - (int64_t)t->cycles_after;
		t->verified = !c->io_failed;
		/* Would the moved window compute something else? A round trip's DMA
		 * writing bytes the scalar work still reads is the second buffer
		 * the rewrite has; a register is the compiler's to allocate. */
		const struct an_conflict *cf = &o.conflict;
		if (o.in_flight.kind != AN_CONFLICT_NONE) { /* whatever else it breaks: the rewrite must avoid this */
			char a[400], b[400];
			const struct an_conflict *w = &o.in_flight;
			snr_fmt(t->conflict, sizeof(t->conflict),
				"moved above a WAIT, %s writes 0x%" PRIx64
				", which %s still reads until the WAIT (its source): the rewrite needs a buffer of its own "
				"for it",
				an_sg_place(&d->an.src, snr_deps_insn_get(d, w->moved).pc, "the instruction ", a, sizeof(a)),
				w->addr, an_sg_place(&d->an.src, snr_deps_insn_get(d, w->other).pc, "the DMA ", b, sizeof(b)));
			continue;
		}
		struct snr_deps_insn mi =
		    cf->moved < d->ninsn ? snr_deps_insn_get(d, cf->moved) : (struct snr_deps_insn){0};
		if (cf->kind == AN_CONFLICT_NONE || cf->kind == AN_CONFLICT_REGISTER ||
		    (t->kind == AN_RT_ROUND_TRIP && mi.pc == t->dma_pc &&
		     (cf->kind == AN_CONFLICT_WRITES_READ || cf->kind == AN_CONFLICT_WRITES_WRITTEN)))
			continue;
		char a[400], b[400];
		snr_fmt(t->conflict, sizeof(t->conflict), "moved, %s %s, %s (at 0x%" PRIx64 ")",
			an_sg_place(&d->an.src, mi.pc, "the instruction ", a, sizeof(a)),
			an_conflict_kind_words(cf->kind),
			an_sg_place(&d->an.src, cf->other < d->ninsn ? snr_deps_insn_get(d, cf->other).pc : 0,
				    "the instruction ", b, sizeof(b)),
			cf->addr);
	}
}

static const char *unit_name(unsigned cls)
{
	return cls == TA1_CLASS_MATRIX ? "MXU" : "vector unit";
}

void an_rt_print_text(FILE *f, const struct snr_deps *d, const struct an_rt *rt)
{
	const struct snr_source *src = &d->an.src;
	for (int kind = AN_RT_ROUND_TRIP; kind <= AN_RT_IDLE_UNIT; kind++) {
		bool head = false;
		for (size_t k = 0; k < rt->n; k++) {
			const struct an_rt_item *t = &rt->it[k];
			if ((int)t->kind != kind)
				continue;
			char a[400], b[400], u[400];
			if (!head)
				fputs(kind == AN_RT_ROUND_TRIP ? "\nscalar round trips (a DMA to core "
								 "memory, its WAIT, scalar reads of its "
								 "bytes, once per iteration):\n"
							       : "\nunits idle behind a WAIT (the core "
								 "blocked at it; the next operation "
								 "of the unit does not need its data):\n",
				      f);
			head = true;
			if (kind == AN_RT_ROUND_TRIP) {
				fprintf(f,
					"  %s, %zu instances: its WAIT %s stalls %" PRIu64
					" cycles in all (the replay's stalls) before the scalar read %s\n",
					an_sg_place(src, t->dma_pc, "the DMA ", a, sizeof(a)), t->instances,
					an_sg_place(src, t->wait_pc, "", b, sizeof(b)), t->stall_cycles,
					an_sg_place(src, t->use_pc, "", u, sizeof(u)));
				char with[64] = "";
				if (t->moves)
					snr_fmt(with, sizeof(with), " (and the %zu instructions it needs)",
						t->moved_insns / t->moves - 1);
				fprintf(
				    f,
				    "     usual rewrite: issue the next iteration's DMA%s right after this "
				    "WAIT, before "
				    "the scalar work%s; or batch the transfers (one DMA and one WAIT for "
				    "many "
				    "iterations), or keep the data in VMEM for the vector unit\n",
				    with,
				    t->own_buffer
					? ", into a second buffer (it would overwrite bytes the scalar work "
					  "still reads: alternate two by iteration parity)"
					: "");
			} else {
				fprintf(
				    f,
				    "  the %s is idle behind %s, %zu instance%s, %" PRIu64
				    " stall cycles in all (the replay's stalls); %s does not need its data\n",
				    unit_name(t->op_cls),
				    an_sg_place(src, t->wait_pc, "the WAIT ", b, sizeof(b)), t->instances,
				    t->instances == 1 ? "" : "s", t->stall_cycles,
				    an_sg_place(src, t->use_pc, "the operation ", u, sizeof(u)));
				fprintf(f,
					"     usual rewrite: issue it (and the %zu instructions it needs) "
					"before the WAIT, "
					"or defer the WAIT to the first use of its data (suggest --rounds)\n",
					t->moves ? t->moved_insns / t->moves - 1 : 0);
			}
			if (t->conflict[0])
				fprintf(f,
					"     the move as replayed would compute something else (the rewrite "
					"must avoid it): "
					"%s\n",
					t->conflict);
			if (t->verified)
				fprintf(f,
					"     what-if (the rewrite's move, %zu instance%s, %zu instructions "
					"moved): %" PRIu64 " -> %" PRIu64 " cycles, saves %" PRId64 "\n",
					t->moves, t->moves == 1 ? "" : "s", t->moved_insns, t->cycles_before,
					t->cycles_after, t->saved);
			else if (t->modelled)
				fprintf(f,
					"     estimate: saves at most %" PRIu64
					" cycles (the stalls; --verify replays the rewrite's move)\n",
					t->stall_cycles);
			else
				fprintf(f,
					"     estimate: saves at most %" PRIu64
					" cycles (the stalls; not modelled: %s)\n",
					t->stall_cycles, t->why_not);
		}
	}
}

void an_rt_print_json(FILE *f, const struct snr_deps *d, const struct an_rt *rt)
{
	const struct snr_source *src = &d->an.src;
	for (int kind = AN_RT_ROUND_TRIP; kind <= AN_RT_IDLE_UNIT; kind++) {
		fputs(kind == AN_RT_ROUND_TRIP ? ",\"round_trips\":[" : ",\"idle_units\":[", f);
		bool first = true;
		for (size_t k = 0; k < rt->n; k++) {
			const struct an_rt_item *t = &rt->it[k];
			if ((int)t->kind != kind)
				continue;
			fputs(first ? "\n{\"dma\":" : ",\n{\"dma\":", f);
			first = false;
			an_sched_place_json(f, src, t->dma_pc);
			fputs(",\"wait\":", f);
			an_sched_place_json(f, src, t->wait_pc);
			fputs(kind == AN_RT_ROUND_TRIP ? ",\"use\":" : ",\"op\":", f);
			an_sched_place_json(f, src, t->use_pc);
			if (kind == AN_RT_IDLE_UNIT)
				fprintf(f, ",\"unit\":\"%s\"",
					t->op_cls == TA1_CLASS_MATRIX ? "mxu" : "vector");
			fprintf(f, ",\"instances\":%zu,\"stall_cycles\":%" PRIu64 ",\"modelled\":%s",
				t->instances, t->stall_cycles, t->modelled ? "true" : "false");
			if (kind == AN_RT_ROUND_TRIP)
				fprintf(f, ",\"own_buffer\":%s", t->own_buffer ? "true" : "false");
			fprintf(f, ",\"moves\":%zu,\"moved_instructions\":%zu,\"reason\":", t->moves,
				t->moved_insns);
			if (t->modelled)
				fputs("null", f);
			else
				snr_deps_json_str(f, t->why_not);
			fputs(",\"conflict\":", f);
			if (t->conflict[0])
				snr_deps_json_str(f, t->conflict);
			else
				fputs("null", f);
			if (t->verified)
				fprintf(f,
					",\"what_if\":{\"cycles_before\":%" PRIu64
					",\"cycles_after\":%" PRIu64 ",\"saved_cycles\":%" PRId64
					"},\"estimate_cycles\":null}",
					t->cycles_before, t->cycles_after, t->saved);
			else
				fprintf(f, ",\"what_if\":null,\"estimate_cycles\":%" PRIu64 "}",
					t->stall_cycles);
		}
		fputs("]", f);
	}
}

void an_rt_free(struct an_rt *rt)
{
	for (size_t k = 0; k < rt->n; k++) {
		free(rt->it[k].mv);
	}
	free(rt->it);
	memset(rt, 0, sizeof(*rt));
}

void an_rt_report(FILE *f, const struct snr_deps *d, struct an_rt *rt, bool json)
{
	if (json) {
		an_rt_print_json(f, d, rt);
		fputs("}\n", f);
	} else
		an_rt_print_text(f, d, rt);
	an_rt_free(rt);
}
