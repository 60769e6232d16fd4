/*
 * wait_move.c: WAIT moves and merges (see wait_move.h).
 *
 * Planning reads the stream once in its order. Each `ta.wait f, n` covers
 * the DMAs on flag f issued before it whose completions no earlier WAIT
 * consumed. It can be deferred past every instruction that does not need
 * them, and stops just before the first that:
 *   - touches a covered DMA's destination, or writes its source (the
 *     program contract: both only after a WAIT consumed the completion);
 *   - is a WAIT on the same flag (the merge point: the two are chained, the
 *     first goes where the second goes, and together they wait for all);
 *   - reads the cycle or instret counter (the program measures itself);
 *   - returns from the WAIT's function (a move stays in its function).
 * A first use inside a function the WAIT's function calls stops at the call.
 * A source edit moves every execution of a statement: the static move is
 * the WAIT's pc to the point most of its executions stop at, and each
 * execution goes to the next execution of that point in the same call.
 *
 * The check: in the original order and in the moved one, each read of a
 * covered DMA's destination (or write of its source) either follows a WAIT
 * on its flag that left no completion of that flag unconsumed (so the DMA
 * has completed, whatever order the DMAs complete in) or does not. A moved
 * order where a read that was covered no longer is would compute something
 * else: the move is refused, naming the read and the DMA.
 *
 * Memory: per execution its static index and call depth (8 bytes), and the
 * DMAs not yet consumed (at most ACCT_MAX; beyond, the oldest counts as
 * complete: an approximation only for a flag no WAIT ever drains).
 */
#include "analyzer/wait_move.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/suggest_words.h"
#include "lib/snr_util.h"

struct pend {
	uint64_t index;
	unsigned flag;
	uint8_t nregions;
	struct ta1_region region[TA1_MAX_REGIONS];
};

/* At most this many DMAs are followed at once (the cost per execution): a
 * window whose WAITs never drain a flag (each waits for fewer completions
 * than are outstanding) would otherwise follow every DMA it issues. */
#define ACCT_MAX 256

/* Strict accounting of the DMAs of each flag: a DMA is known complete once a
 * WAIT on its flag leaves no completion unconsumed. */
struct acct {
	uint64_t issued[TA1_NUM_FLAGS], waited[TA1_NUM_FLAGS];
	struct pend *p;
	size_t n, cap;
};

/* The first uncovered use of a DMA's data: reader and DMA, original
 * indices. */
struct use {
	uint64_t reader, dma;
};

static bool is_call(const struct cap_static *s)
{
	return (s->in.op == TA1_OP_JAL || s->in.op == TA1_OP_JALR) && s->in.rd == 1;
}

static bool is_ret(const struct cap_static *s)
{
	return s->in.op == TA1_OP_JALR && s->in.rd == 0 && s->in.rs1 == 1;
}

static bool is_wait(const struct cap_static *s)
{
	return s->in.op < TA1_OP_COUNT && ta1_insn_table[s->in.op].cls == TA1_CLASS_DMA_WAIT;
}

static bool is_dma(const struct cap_static *s)
{
	return s->in.op < TA1_OP_COUNT && ta1_insn_table[s->in.op].cls == TA1_CLASS_DMA_ISSUE;
}

static bool reads_counter(const struct cap_static *s)
{
	return (s->regs_read >> TA1_REG_CYCLE & 1) || (s->regs_read >> TA1_REG_INSTRET & 1);
}

/* The flag a DMA signals (x[rd]; ta.dma2d: x[rs3] bits 63:48; ta.dma.notify:
 * x[rd] bits 31:0), or a WAIT waits on (x[rs1]). */
static void span(const struct ta1_region *g, uint64_t *lo, uint64_t *hi)
{
	uint64_t rows = g->rows ? g->rows : 1, reach = (rows - 1) * (uint64_t)(g->stride < 0 ? -g->stride : g->stride);
	*lo = g->stride < 0 ? g->addr - reach : g->addr;
	*hi = (g->stride < 0 ? g->addr : g->addr + reach) + g->row_bytes;
}

static bool overlap(const struct ta1_region *x, const struct ta1_region *y)
{
	if (x->space != y->space || (x->space == TA1_SPACE_HBM && x->chip != y->chip))
		return false;
	uint64_t xl, xh, yl, yh;
	span(x, &xl, &xh);
	span(y, &yl, &yh);
	return xl < yh && yl < xh;
}

/* Execution r needs DMA p complete: it touches its destination or writes
 * its source. */
static bool needs(const struct cap_rec *r, const struct pend *p)
{
	for (unsigned a = 0; a < r->nregions; a++)
		for (unsigned b = 0; b < p->nregions; b++)
			if ((p->region[b].write || r->region[a].write) && overlap(&r->region[a], &p->region[b]))
				return true;
	return false;
}

/* Feeds execution `index` to the accounting; the DMAs it needs that are not
 * known complete (their indices) go to unc (*nunc of them, at most cap). */
static void acct_exec(struct acct *a, const struct capture *c, const struct cap_rec *r, uint64_t index,
		      uint64_t *unc, size_t *nunc, size_t cap)
{
	const struct cap_static *s = &c->st[r->sidx];
	*nunc = 0;
	for (size_t k = 0; k < a->n; k++)
		if (*nunc < cap && needs(r, &a->p[k]))
			unc[(*nunc)++] = a->p[k].index;
	if (is_dma(s)) {
		unsigned f = an_sync_flag(s, r);
		a->issued[f]++;
		if (a->n == ACCT_MAX) { /* a flag never drained: its oldest DMA counts as complete */
			memmove(a->p, a->p + 1, (a->n - 1) * sizeof(*a->p));
			a->n--;
		}
		if (a->n == a->cap) {
			a->cap = a->cap ? 2 * a->cap : 16;
			a->p = snr_xrealloc(a->p, a->cap * sizeof(*a->p));
		}
		struct pend *p = &a->p[a->n++];
		p->index = index;
		p->flag = f;
		p->nregions = r->nregions;
		memcpy(p->region, r->region, sizeof(p->region));
	} else if (is_wait(s)) {
		unsigned f = an_sync_flag(s, r);
		a->waited[f] += r->xv[2];
		if (a->waited[f] >= a->issued[f]) {
			a->waited[f] = a->issued[f] = 0;
			size_t u = 0;
			for (size_t k = 0; k < a->n; k++)
				if (a->p[k].flag != f)
					a->p[u++] = a->p[k];
			a->n = u;
		}
	}
}

/* ---- planning ------------------------------------------------------------ */

enum stop { STOP_NONE, STOP_USE, STOP_MERGE, STOP_COUNTER, STOP_RETURN };

struct inst {
	uint64_t w, target; /* target: the natural stop (no move when w + 1) */
	unsigned flag;
	int depth;
	int why;            /* enum stop; + 10: the end of a chain of merged WAITs */
	bool lifted;
	struct pend *cov;   /* the DMAs it covers (pending on its flag at it) */
	size_t ncov;
	uint64_t last_same; /* the last execution at its depth after it */
	bool open;
	size_t group;       /* (size_t)-1: none */
	uint64_t st_target; /* the static move's point for this execution, UINT64_MAX: not reached */
};

struct plan_state {
	const struct capture *c;
	uint32_t *sidx;
	int32_t *depth;
	int d;
	struct acct a;
	struct inst *v;
	size_t n, cap;
	size_t *open;
	size_t nopen, capopen;
	struct use *orig_unc; /* uncovered uses in the original order, sorted */
	size_t nunc, capunc;
};

static void close_at(struct inst *o, uint64_t i, int d, enum stop why)
{
	o->open = false;
	o->why = why;
	if (d > o->depth) {
		o->target = o->last_same;
		o->lifted = true;
	} else
		o->target = i;
}

static void plan_emit(void *user, const struct cap_rec *r, uint64_t index, uint64_t pos)
{
	(void)pos;
	struct plan_state *ps = user;
	const struct cap_static *s = &ps->c->st[r->sidx];
	ps->sidx[index] = r->sidx;
	ps->depth[index] = ps->d;
	for (size_t k = 0; k < ps->nopen;) {
		struct inst *o = &ps->v[ps->open[k]];
		enum stop why = STOP_NONE;
		if (is_wait(s) && an_sync_flag(s, r) == o->flag)
			why = STOP_MERGE;
		else if (reads_counter(s))
			why = STOP_COUNTER;
		else if (ps->d == o->depth && is_ret(s))
			why = STOP_RETURN;
		else if (ps->d < o->depth)
			why = STOP_RETURN;
		else
			for (size_t j = 0; j < o->ncov && why == STOP_NONE; j++)
				if (needs(r, &o->cov[j]))
					why = STOP_USE;
		if (why != STOP_NONE) {
			close_at(o, index, ps->d, why);
			ps->open[k] = ps->open[--ps->nopen];
			continue;
		}
		if (ps->d == o->depth)
			o->last_same = index;
		k++;
	}
	if (is_wait(s)) {
		if (ps->n == ps->cap) {
			ps->cap = ps->cap ? 2 * ps->cap : 16;
			ps->v = snr_xrealloc(ps->v, ps->cap * sizeof(*ps->v));
		}
		struct inst *o = &ps->v[ps->n];
		memset(o, 0, sizeof(*o));
		o->w = index;
		o->target = index + 1;
		o->flag = an_sync_flag(s, r);
		o->depth = ps->d;
		o->last_same = index;
		o->open = true;
		o->group = (size_t)-1;
		/* the DMAs it covers: those on its flag not consumed before it */
		for (size_t k = 0; k < ps->a.n; k++)
			if (ps->a.p[k].flag == o->flag) {
				o->cov = snr_xrealloc(o->cov, (o->ncov + 1) * sizeof(*o->cov));
				o->cov[o->ncov++] = ps->a.p[k];
			}
		ps->n++;
		if (ps->nopen == ps->capopen) {
			ps->capopen = ps->capopen ? 2 * ps->capopen : 16;
			ps->open = snr_xrealloc(ps->open, ps->capopen * sizeof(*ps->open));
		}
		ps->open[ps->nopen++] = ps->n - 1;
	}
	uint64_t unc[64];
	size_t nu;
	acct_exec(&ps->a, ps->c, r, index, unc, &nu, 64);
	for (size_t k = 0; k < nu; k++) {
		if (ps->nunc == ps->capunc) {
			ps->capunc = ps->capunc ? 2 * ps->capunc : 16;
			ps->orig_unc = snr_xrealloc(ps->orig_unc, ps->capunc * sizeof(*ps->orig_unc));
		}
		ps->orig_unc[ps->nunc++] = (struct use){index, unc[k]};
	}
	if (is_call(s))
		ps->d++;
	else if (is_ret(s))
		ps->d--;
}

/* ---- orders and their check --------------------------------------------- */

struct mv {
	uint64_t w, t;
};

static int cmp_mv(const void *a, const void *b)
{
	const struct mv *x = a, *y = b;
	return x->w < y->w ? -1 : x->w > y->w;
}

static int cmp_use(const void *a, const void *b)
{
	const struct use *x = a, *y = b;
	if (x->reader != y->reader)
		return x->reader < y->reader ? -1 : 1;
	return x->dma < y->dma ? -1 : x->dma > y->dma;
}

/* The moved instructions of the WAIT moves mv (n, sorted by w; chained and
 * capped here): every execution between a moved WAIT and its point, other
 * than the moved WAITs, goes just before the earliest moved WAIT it is
 * between. */
static struct slotted *order_of_moves(const struct capture *c, const uint32_t *sidx, struct mv *mv, size_t n,
				      size_t *nmoved, size_t *passed_dmas)
{
	/* chain merges (a point that is a moved WAIT: go where it goes) and cap
	 * (a WAIT does not go past the point of a moved WAIT it passes) */
	for (size_t k = n; k-- > 0;) {
		for (size_t j = k + 1; j < n && mv[j].w <= mv[k].t; j++)
			if (mv[j].w == mv[k].t && mv[j].t > mv[k].t)
				mv[k].t = mv[j].t;
		for (size_t j = k + 1; j < n && mv[j].w < mv[k].t; j++)
			if (mv[j].t < mv[k].t)
				mv[k].t = mv[j].t;
	}
	size_t cap = 16, m = 0, na = 0;
	struct slotted *v = snr_xmalloc(cap * sizeof(*v));
	struct mv *act = snr_xcalloc(n + 1, sizeof(*act)); /* the moves whose span holds i, by w */
	*passed_dmas = 0;
	size_t j = 0;
	for (uint64_t i = n ? mv[0].w : c->n; i < c->n && (j < n || na); i++) {
		size_t u = 0;
		for (size_t k = 0; k < na; k++)
			if (act[k].t > i)
				act[u++] = act[k];
		na = u;
		if (j < n && mv[j].w == i) {
			act[na++] = mv[j++];
			continue;
		}
		if (!na)
			continue;
		if (m == cap)
			v = snr_xrealloc(v, (cap *= 2) * sizeof(*v));
		v[m++] = (struct slotted){act[0].w + 1, i};
		*passed_dmas += is_dma(&c->st[sidx[i]]);
	}
	free(act);
	snr_qsort(v, m, sizeof(*v), an_wi_cmp_slotted);
	*nmoved = m;
	return v;
}

struct check_state {
	const struct capture *c;
	struct acct a;
	const struct use *orig;
	size_t norig;
	bool bad;
	struct use first;
};

static void check_emit(void *user, const struct cap_rec *r, uint64_t index, uint64_t pos)
{
	(void)pos;
	struct check_state *k = user;
	uint64_t unc[64];
	size_t nu;
	acct_exec(&k->a, k->c, r, index, unc, &nu, 64);
	for (size_t j = 0; j < nu && !k->bad; j++) {
		struct use u = {index, unc[j]};
		if (!bsearch(&u, k->orig, k->norig, sizeof(u), cmp_use)) {
			k->bad = true;
			k->first = u;
		}
	}
}

/* ---- the round ----------------------------------------------------------- */

const char *an_wm_label(const struct snr_source *src, const struct an_wm_group *g, char *buf, size_t len)
{
	char a[400], b[400];
	snprintf(buf, len, "defer %s to just before %s%s (%zu instance%s%s)",
		 an_sg_place(src, g->wait_pc, "the WAIT ", a, sizeof(a)), an_sg_place(src, g->before_pc, NULL, b, sizeof(b)),
		 g->lifted ? ", the call that leads to its first use" : "", g->instances, g->instances == 1 ? "" : "s",
		 g->passes_dmas ? "; the DMAs it lets go ahead issue back to back, then the WAITs" : "");
	return buf;
}

static const char *stop_words(int s)
{
	switch (s) {
	case STOP_USE + 10: return "the first use of what it and the later WAITs on its flag wait for (merged with them)";
	case STOP_COUNTER + 10: return "a read of the cycle counter (merged with the later WAITs on its flag)";
	case STOP_RETURN + 10: return "its function's return (merged with the later WAITs on its flag)";
	case STOP_USE: return "the first use of what it waits for";
	case STOP_MERGE: return "the next WAIT on its flag (merged with it)";
	case STOP_COUNTER: return "a read of the cycle counter";
	case STOP_RETURN: return "its function's return";
	default: return "";
	}
}

/* The WAIT moves of the groups sel[0..ns) as mv entries (sorted). */
static struct mv *moves_of(const struct plan_state *ps, const size_t *sel, size_t ns, size_t *nmv)
{
	struct mv *mv = snr_xcalloc(ps->n + 1, sizeof(*mv));
	size_t m = 0;
	for (size_t k = 0; k < ps->n; k++) {
		const struct inst *o = &ps->v[k];
		if (o->group == (size_t)-1 || o->st_target == UINT64_MAX)
			continue;
		for (size_t j = 0; j < ns; j++)
			if (sel[j] == o->group) {
				mv[m++] = (struct mv){o->w, o->st_target};
				break;
			}
	}
	qsort(mv, m, sizeof(*mv), cmp_mv);
	*nmv = m;
	return mv;
}

/* Runs the moves of the groups sel: cycles, and whether the check passes
 * (else *bad the first read it breaks). Returns the cycles. */
static uint64_t try_moves(struct capture *c, struct plan_state *ps, const size_t *sel, size_t ns, bool *ok,
			  struct use *bad, size_t *passed, struct slotted **keep, size_t *nkeep)
{
	size_t nmv, nmoved;
	struct mv *mv = moves_of(ps, sel, ns, &nmv);
	struct slotted *o = order_of_moves(c, ps->sidx, mv, nmv, &nmoved, passed);
	free(mv);
	struct check_state k = {.c = c, .orig = ps->orig_unc, .norig = ps->nunc};
	an_wi_walk(c, o, nmoved, check_emit, &k);
	free(k.a.p);
	/* and the common check's rule this accounting does not make: no moved
	 * write into the source of a DMA that the WAIT it passes consumes */
	struct an_wi_order ord = {.moved = o, .nmoved = nmoved};
	uint64_t cyc = an_wi_run_order(c, &ord, NULL, false, NULL);
	if (!k.bad && ord.in_flight.kind != AN_CONFLICT_NONE) {
		k.bad = true;
		k.first = (struct use){ord.in_flight.moved, ord.in_flight.other};
	}
	*ok = !k.bad;
	if (bad)
		*bad = k.first;
	if (keep) {
		*keep = o;
		*nkeep = nmoved;
	} else
		free(o);
	return cyc;
}

static uint64_t pc_of(const struct plan_state *ps, uint64_t i)
{
	return ps->c->st[ps->sidx[i]].pc;
}

static void refusal(const struct snr_source *src, const struct plan_state *ps, const struct use *u, char *buf,
		    size_t len)
{
	char a[400], b[400];
	snprintf(buf, len,
		 "the moved window would compute something else: %s (#%" PRIu64 ") would read what %s (#%" PRIu64
		 ") writes, or write what it still reads, before a WAIT has consumed that DMA's completion (a WAIT shows "
		 "a DMA complete only when it consumes every completion outstanding on its flag: DMAs complete in any "
		 "order)",
		 an_sg_place(src, pc_of(ps, u->reader), "the instruction ", a, sizeof(a)), u->reader,
		 an_sg_place(src, pc_of(ps, u->dma), "the DMA ", b, sizeof(b)), u->dma);
}

int an_wm_round(struct capture *c, const struct snr_source *src, struct an_wm_round *r, struct capture *out,
		bool *applied, char *err, size_t errlen)
{
	int ret = 0;
	memset(r, 0, sizeof(*r));
	*applied = false;
	struct plan_state ps = {.c = c};
	ps.sidx = snr_xcalloc(c->n + 1, sizeof(*ps.sidx));
	ps.depth = snr_xcalloc(c->n + 1, sizeof(*ps.depth));
	an_wi_walk(c, NULL, 0, plan_emit, &ps);
	for (size_t k = 0; k < ps.nopen; k++) /* nothing in the window needs it: no move */
		ps.v[ps.open[k]].open = false;
	snr_qsort(ps.orig_unc, ps.nunc, sizeof(*ps.orig_unc), cmp_use);
	/* a WAIT that stops at the next WAIT on its flag goes where that one
	 * goes (the two merged): the chain's end is the static point */
	for (size_t k = ps.n; k-- > 0;) {
		struct inst *o = &ps.v[k];
		if (o->open || o->why != STOP_MERGE)
			continue;
		for (size_t j = k + 1; j < ps.n && ps.v[j].w <= o->target; j++)
			if (ps.v[j].w == o->target && !ps.v[j].open && ps.v[j].target > ps.v[j].w + 1 &&
			    ps.v[j].depth == o->depth) {
				o->target = ps.v[j].target;
				o->lifted = ps.v[j].lifted;
				o->why = ps.v[j].why >= 10 || ps.v[j].why == STOP_MERGE ? ps.v[j].why : ps.v[j].why + 10;
			}
	}
	/* static moves: per WAIT pc, the point most of its moved executions stop at */
	struct an_wm_group *g = snr_xcalloc(ps.n + 1, sizeof(*g));
	size_t ng = 0;
	/* count (wait pc, point pc) pairs; the largest per wait pc wins */
	struct pair {
		uint64_t wpc, tpc;
		size_t n;
		int why;
		bool lifted;
		unsigned flag;
	} *pairs = snr_xcalloc(ps.n + 1, sizeof(*pairs));
	size_t np = 0;
	for (size_t k = 0; k < ps.n; k++) {
		struct inst *o = &ps.v[k];
		if (o->open || o->target <= o->w + 1 || o->target >= c->n)
			continue;
		uint64_t wpc = pc_of(&ps, o->w), tpc = pc_of(&ps, o->target);
		size_t x = 0;
		while (x < np && !(pairs[x].wpc == wpc && pairs[x].tpc == tpc))
			x++;
		if (x == np)
			pairs[np++] = (struct pair){wpc, tpc, 0, o->why, o->lifted, o->flag};
		pairs[x].n++;
	}
	for (size_t x = 0; x < np; x++) {
		size_t y = 0;
		while (y < ng && g[y].wait_pc != pairs[x].wpc)
			y++;
		if (y < ng && pairs[x].n <= g[y].instances)
			continue;
		if (y == ng)
			ng++;
		g[y] = (struct an_wm_group){.wait_pc = pairs[x].wpc, .before_pc = pairs[x].tpc, .flag = pairs[x].flag,
					    .instances = pairs[x].n, .lifted = pairs[x].lifted};
		snprintf(g[y].why_here, sizeof(g[y].why_here), "%s", stop_words(pairs[x].why));
	}
	free(pairs);
	/* every execution of a grouped WAIT: the next execution of the point,
	 * in the same call (at its depth, before its function returns) */
	for (size_t k = 0; k < ps.n; k++) {
		struct inst *o = &ps.v[k];
		uint64_t wpc = pc_of(&ps, o->w);
		o->st_target = UINT64_MAX;
		for (size_t y = 0; y < ng && o->group == (size_t)-1; y++)
			if (g[y].wait_pc == wpc)
				o->group = y;
		if (o->group == (size_t)-1)
			continue;
		g[o->group].instances = 0;
	}
	for (size_t k = 0; k < ps.n; k++) {
		struct inst *o = &ps.v[k];
		if (o->group == (size_t)-1)
			continue;
		struct an_wm_group *gg = &g[o->group];
		gg->instances++;
		for (uint64_t i = o->w + 1; i < c->n && ps.depth[i] >= o->depth; i++)
			if (ps.depth[i] == o->depth && pc_of(&ps, i) == gg->before_pc) {
				o->st_target = i;
				break;
			}
		if (o->st_target == UINT64_MAX && !gg->refused) {
			char a[400];
			gg->refused = true;
			snprintf(gg->reason, sizeof(gg->reason),
				 "its execution #%" PRIu64 " does not reach %s in the same call: the statement cannot move there",
				 o->w, an_sg_place(src, gg->before_pc, NULL, a, sizeof(a)));
		}
	}
	/* verify each alone, then take them greedily, best first */
	r->cycles_before = an_wi_run(c, NULL, 0, NULL, false, NULL);
	for (size_t y = 0; y < ng; y++) {
		if (g[y].refused)
			continue;
		bool ok;
		struct use bad;
		g[y].cycles_after = try_moves(c, &ps, &y, 1, &ok, &bad, &g[y].passes_dmas, NULL, NULL);
		g[y].verified = true;
		g[y].realized = (int64_t)r->cycles_before - (int64_t)g[y].cycles_after;
		if (!ok) {
			g[y].refused = true;
			refusal(src, &ps, &bad, g[y].reason, sizeof(g[y].reason));
		}
	}
	size_t *sel = snr_xcalloc(ng + 1, sizeof(*sel)), ns = 0;
	uint64_t cur = r->cycles_before;
	for (;;) {
		size_t best = ng;
		for (size_t y = 0; y < ng; y++) {
			bool taken = false;
			for (size_t j = 0; j < ns; j++)
				taken |= sel[j] == y;
			if (taken || g[y].refused || !g[y].verified || g[y].reason[0])
				continue;
			if (best == ng || g[y].realized > g[best].realized)
				best = y;
		}
		if (best == ng)
			break;
		struct an_wm_group *b = &g[best];
		if (b->realized < 0 || (b->realized == 0 && !b->passes_dmas)) {
			snprintf(b->reason, sizeof(b->reason),
				 b->realized < 0 ? "the what-if costs %" PRId64 " cycles" :
						   "the what-if saves nothing and it lets no DMA issue earlier",
				 -b->realized);
			continue;
		}
		sel[ns] = best;
		bool ok;
		struct use bad;
		size_t passed;
		uint64_t cyc = try_moves(c, &ps, sel, ns + 1, &ok, &bad, &passed, NULL, NULL);
		if (!ok) {
			refusal(src, &ps, &bad, b->reason, sizeof(b->reason));
			b->refused = true;
			continue;
		}
		if (cyc > cur) {
			snprintf(b->reason, sizeof(b->reason),
				 "with the WAIT moves taken before it, the what-if costs %" PRIu64 " cycles", cyc - cur);
			continue;
		}
		b->applied = true;
		cur = cyc;
		ns++;
	}
	r->cycles_after = cur;
	if (ns) {
		struct slotted *o;
		size_t no, passed;
		bool ok;
		try_moves(c, &ps, sel, ns, &ok, NULL, &passed, &o, &no);
		struct an_wi_order ord = {.moved = o, .nmoved = no};
		int rc = an_wi_capture_reordered(c, &ord, out, err, errlen);
		free(o);
		if (!rc) {
			*applied = true;
			r->napplied = ns;
		}
		ret = rc ? -1 : 0;
	}
	free(sel);
	r->g = g;
	r->ng = ng;
	for (size_t k = 0; k < ps.n; k++)
		free(ps.v[k].cov);
	free(ps.v);
	free(ps.open);
	free(ps.a.p);
	free(ps.orig_unc);
	free(ps.sidx);
	free(ps.depth);
	return ret;
}

void an_wm_round_free(struct an_wm_round *r)
{
	free(r->g);
	memset(r, 0, sizeof(*r));
}
