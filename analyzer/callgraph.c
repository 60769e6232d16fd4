/*
 * callgraph.c: see callgraph.h. A stack of open frames (return address,
 * caller line, edge); per line and per edge the number of its frames open
 * and the running counts when the first of them opened. Memory: the
 * deepest stack, the lines and the edges, not the window.
 */
#include "callgraph.h"

#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

struct frame {
	uint64_t ret;
	size_t line, edge;
};

/* open frames of a line or an edge, and the running counts at the first */
struct open {
	uint64_t depth, cycles, stall[SNR_STALL_COUNT];
};

struct an_cg {
	/* pass 1 */
	uint64_t *scan;
	size_t nscan, capscan;
	uint64_t *outer_to, *outer_pc;
	size_t nouter, capouter;
	/* pass 2 */
	size_t nlines;
	struct an_cg_incl *incl;
	struct open *lopen, *eopen;
	struct an_cg_edge *edges;
	size_t nedges, capedges;
	size_t *etab; /* edge index + 1; 0 empty */
	size_t etabn;
	struct frame *st;
	size_t nst, capst, nouter_open; /* st[0 .. nouter_open): outer frames still open */
	uint64_t t, ts[SNR_STALL_COUNT]; /* the running counts */
};

struct an_cg *an_cg_new(void) { return snr_xcalloc(1, sizeof(struct an_cg)); }

void an_cg_free(struct an_cg *g)
{
	if (!g)
		return;
	free(g->scan);
	free(g->outer_to);
	free(g->outer_pc);
	free(g->incl);
	free(g->lopen);
	free(g->eopen);
	free(g->edges);
	free(g->etab);
	free(g->st);
	free(g);
}

void an_cg_scan(struct an_cg *g, uint64_t pc, enum an_flow flow, unsigned len, bool has_next, uint64_t next_pc)
{
	if (!has_next)
		return;
	if (flow == AN_FLOW_CALL) {
		if (g->nscan == g->capscan) {
			g->capscan = g->capscan ? 2 * g->capscan : 64;
			g->scan = snr_xrealloc(g->scan, g->capscan * sizeof(*g->scan));
		}
		g->scan[g->nscan++] = pc + len;
	} else if (flow == AN_FLOW_RETURN) {
		for (size_t k = g->nscan; k > 0; k--)
			if (g->scan[k - 1] == next_pc) {
				g->nscan = k - 1;
				return;
			}
		if (g->nscan) /* not to an open frame: ignored (as an_cg_step does) */
			return;
		if (g->nouter == g->capouter) {
			g->capouter = g->capouter ? 2 * g->capouter : 8;
			g->outer_to = snr_xrealloc(g->outer_to, g->capouter * sizeof(*g->outer_to));
			g->outer_pc = snr_xrealloc(g->outer_pc, g->capouter * sizeof(*g->outer_pc));
		}
		g->outer_to[g->nouter] = next_pc;
		g->outer_pc[g->nouter++] = pc;
	}
}

size_t an_cg_outer(const struct an_cg *g, const uint64_t **ret_to, const uint64_t **ret_pc)
{
	*ret_to = g->outer_to;
	*ret_pc = g->outer_pc;
	return g->nouter;
}

static uint64_t str_hash(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

static size_t edge_slot(const struct an_cg *g, size_t caller, const char *callee)
{
	size_t mask = g->etabn - 1, i = (size_t)((str_hash(callee) ^ (caller * 0x9e3779b97f4a7c15ull)) >> 7) & mask;
	while (g->etab[i]) {
		const struct an_cg_edge *e = &g->edges[g->etab[i] - 1];
		if (e->caller == caller && !strcmp(e->callee, callee))
			break;
		i = (i + 1) & mask;
	}
	return i;
}

static size_t edge_of(struct an_cg *g, size_t caller, const char *callee)
{
	size_t k = edge_slot(g, caller, callee);
	if (g->etab[k])
		return g->etab[k] - 1;
	if (g->nedges == g->capedges) {
		g->capedges = g->capedges ? 2 * g->capedges : 64;
		g->edges = snr_xrealloc(g->edges, g->capedges * sizeof(*g->edges));
		g->eopen = snr_xrealloc(g->eopen, g->capedges * sizeof(*g->eopen));
	}
	g->edges[g->nedges] = (struct an_cg_edge){.caller = caller, .callee = callee};
	memset(&g->eopen[g->nedges], 0, sizeof(*g->eopen));
	g->nedges++;
	if (2 * g->nedges > g->etabn) { /* rehash */
		free(g->etab);
		g->etabn *= 2;
		g->etab = snr_xcalloc(g->etabn, sizeof(*g->etab));
		for (size_t e = 0; e < g->nedges; e++)
			g->etab[edge_slot(g, g->edges[e].caller, g->edges[e].callee)] = e + 1;
	} else {
		g->etab[k] = g->nedges;
	}
	return g->nedges - 1;
}

static void open_(const struct an_cg *g, struct open *o)
{
	if (!o->depth++) {
		o->cycles = g->t;
		memcpy(o->stall, g->ts, sizeof(o->stall));
	}
}

static void close_(const struct an_cg *g, struct open *o, uint64_t *cycles, uint64_t *stall)
{
	if (--o->depth)
		return;
	*cycles += g->t - o->cycles;
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		stall[c] += g->ts[c] - o->stall[c];
}

static void push(struct an_cg *g, uint64_t ret, size_t line, const char *callee, bool counted)
{
	if (g->nst == g->capst) {
		g->capst = g->capst ? 2 * g->capst : 64;
		g->st = snr_xrealloc(g->st, g->capst * sizeof(*g->st));
	}
	size_t e = edge_of(g, line, callee);
	g->edges[e].calls += counted;
	g->st[g->nst++] = (struct frame){ret, line, e};
	open_(g, &g->lopen[line]);
	open_(g, &g->eopen[e]);
}

static void pop(struct an_cg *g)
{
	const struct frame *f = &g->st[--g->nst];
	close_(g, &g->lopen[f->line], &g->incl[f->line].cycles, g->incl[f->line].stall);
	close_(g, &g->eopen[f->edge], &g->edges[f->edge].cycles, g->edges[f->edge].stall);
}

void an_cg_start(struct an_cg *g, size_t nlines, const size_t *outer_line, const char *const *outer_callee)
{
	g->nlines = nlines;
	g->incl = snr_xcalloc(nlines ? nlines : 1, sizeof(*g->incl));
	g->lopen = snr_xcalloc(nlines ? nlines : 1, sizeof(*g->lopen));
	g->etabn = 64;
	g->etab = snr_xcalloc(g->etabn, sizeof(*g->etab));
	for (size_t k = g->nouter; k > 0; k--) /* the outermost at the bottom */
		push(g, g->outer_to[k - 1], outer_line[k - 1], outer_callee[k - 1], false);
	g->nouter_open = g->nouter;
}

void an_cg_step(struct an_cg *g, size_t line, uint64_t cycles, const uint64_t *stall, uint64_t pc, enum an_flow flow,
		unsigned len, bool has_next, uint64_t next_pc, const char *callee)
{
	if (!g->lopen[line].depth) { /* else counted by its open frame */
		g->incl[line].cycles += cycles;
		for (int c = 0; c < SNR_STALL_COUNT; c++)
			g->incl[line].stall[c] += stall[c];
	}
	g->t += cycles;
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		g->ts[c] += stall[c];
	if (!has_next)
		return;
	if (flow == AN_FLOW_CALL && callee) {
		push(g, pc + len, line, callee, true);
	} else if (flow == AN_FLOW_RETURN) {
		for (size_t k = g->nst; k > g->nouter_open; k--)
			if (g->st[k - 1].ret == next_pc) {
				while (g->nst >= k)
					pop(g);
				return;
			}
		if (g->nst == g->nouter_open && g->nouter_open && g->st[g->nst - 1].ret == next_pc) {
			pop(g);
			g->nouter_open--;
		}
	}
}

const struct an_cg_incl *an_cg_finish(struct an_cg *g, const struct an_cg_edge **edges, size_t *nedges)
{
	while (g->nst)
		pop(g);
	g->nouter_open = 0;
	*edges = g->edges;
	*nedges = g->nedges;
	return g->incl;
}
