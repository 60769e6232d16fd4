/*
 * test_callgraph.c: analyzer/callgraph.c's inclusive figures against their
 * definition. A hand-made window of nested calls with every figure known;
 * then random executions (calls, returns, recursion up to 12 deep) cut
 * into random windows that start and end inside calls, each checked
 * against a direct count: an instruction's cycles go once to every line
 * executing or on the stack (its frames opened in the window, and those
 * opened before it whose return the window sees), and once to every edge
 * (caller line, callee function) on the stack.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/callgraph.h"
#include "tests/check.h"

#define NLINES 40
#define NFUNCS 5

struct ev {
	uint64_t pc, cycles, stall[SNR_STALL_COUNT];
	size_t line, func;
	enum an_flow flow;
	size_t callee; /* a call's */
};

static const char *const fname[NFUNCS] = {"f0", "f1", "f2", "f3", "f4"};

/* Runs callgraph.c over ev[s, e) of ev[0, n) and returns the inclusive
 * cycles per line (incl[NLINES]) and the edges; an outer frame's line is
 * that of the call (ret - 4) in ev. */
static struct an_cg *run(const struct ev *ev, size_t n_ev, size_t s, size_t e, const struct an_cg_incl **incl,
			 const struct an_cg_edge **edges, size_t *nedges)
{
	struct an_cg *g = an_cg_new();
	for (size_t i = s; i < e; i++)
		an_cg_scan(g, ev[i].pc, ev[i].flow, 4, i + 1 < e, i + 1 < e ? ev[i + 1].pc : 0);
	const uint64_t *to, *rpc;
	size_t n = an_cg_outer(g, &to, &rpc);
	size_t oline[64];
	const char *ocallee[64];
	for (size_t k = 0; k < n && k < 64; k++) {
		oline[k] = NLINES - 1; /* the call not in ev */
		for (size_t j = 0; j < n_ev; j++)
			if (ev[j].pc == to[k] - 4 && ev[j].flow == AN_FLOW_CALL)
				oline[k] = ev[j].line;
		size_t j = s;
		while (ev[j].pc != rpc[k])
			j++;
		ocallee[k] = fname[ev[j].func];
	}
	an_cg_start(g, NLINES, oline, ocallee);
	for (size_t i = s; i < e; i++)
		an_cg_step(g, ev[i].line, ev[i].cycles, ev[i].stall, ev[i].pc, ev[i].flow, 4, i + 1 < e,
			   i + 1 < e ? ev[i + 1].pc : 0, ev[i].flow == AN_FLOW_CALL ? fname[ev[i].callee] : NULL);
	*incl = an_cg_finish(g, edges, nedges);
	return g;
}

static void test_nested(void)
{
	/* line 0 calls f1 (lines 1), whose line 1 calls f2 (line 2) */
	static const struct ev ev[] = {
		{.pc = 0x100, .cycles = 1, .line = 0, .flow = AN_FLOW_CALL, .callee = 1},
		{.pc = 0x200, .cycles = 5, .line = 1, .func = 1},
		{.pc = 0x204, .cycles = 1, .line = 1, .func = 1, .flow = AN_FLOW_CALL, .callee = 2},
		{.pc = 0x300, .cycles = 7, .line = 2, .func = 2, .stall = {3}},
		{.pc = 0x304, .cycles = 1, .line = 2, .func = 2, .flow = AN_FLOW_RETURN},
		{.pc = 0x208, .cycles = 2, .line = 1, .func = 1},
		{.pc = 0x20c, .cycles = 1, .line = 1, .func = 1, .flow = AN_FLOW_RETURN},
		{.pc = 0x104, .cycles = 1, .line = 0},
	};
	const struct an_cg_incl *incl;
	const struct an_cg_edge *ed;
	size_t ne;
	struct an_cg *g = run(ev, 8, 0, 8, &incl, &ed, &ne);
	CHECK(incl[0].cycles == 19 && incl[1].cycles == 17 && incl[2].cycles == 8, "nested: %llu %llu %llu",
	      (unsigned long long)incl[0].cycles, (unsigned long long)incl[1].cycles, (unsigned long long)incl[2].cycles);
	CHECK(incl[0].stall[0] == 3 && incl[1].stall[0] == 3 && incl[2].stall[0] == 3, "nested: the stall in every line");
	CHECK(ne == 2 && ed[0].caller == 0 && !strcmp(ed[0].callee, "f1") && ed[0].calls == 1 && ed[0].cycles == 17 &&
		      ed[1].caller == 1 && !strcmp(ed[1].callee, "f2") && ed[1].calls == 1 && ed[1].cycles == 8,
	      "nested: the edges");
	an_cg_free(g);
	/* the window starts inside f2 and ends inside f1's call of f2 again:
	 * f2's return to 0x208 is to line 1 (the call at 0x204), f1's to line 0 */
	static const struct ev ev2[] = {
		{.pc = 0x300, .cycles = 7, .line = 2, .func = 2},
		{.pc = 0x304, .cycles = 1, .line = 2, .func = 2, .flow = AN_FLOW_RETURN},
		{.pc = 0x208, .cycles = 2, .line = 1, .func = 1},
		{.pc = 0x20c, .cycles = 1, .line = 1, .func = 1, .flow = AN_FLOW_RETURN},
		{.pc = 0x104, .cycles = 1, .line = 0},
		{.pc = 0x108, .cycles = 1, .line = 3, .flow = AN_FLOW_CALL, .callee = 2},
		{.pc = 0x300, .cycles = 4, .line = 2, .func = 2},
		/* not in the window: the calls before it */
		{.pc = 0x100, .line = 0, .flow = AN_FLOW_CALL},
		{.pc = 0x204, .line = 1, .flow = AN_FLOW_CALL},
	};
	g = run(ev2, 9, 0, 7, &incl, &ed, &ne);
	CHECK(incl[1].cycles == 11 && incl[0].cycles == 12 && incl[3].cycles == 5 && incl[2].cycles == 12,
	      "outer frames and a window ending in a call: %llu %llu %llu %llu", (unsigned long long)incl[0].cycles,
	      (unsigned long long)incl[1].cycles, (unsigned long long)incl[2].cycles, (unsigned long long)incl[3].cycles);
	size_t outer = 0;
	for (size_t k = 0; k < ne; k++)
		outer += ed[k].calls == 0;
	CHECK(ne == 3 && outer == 2, "two edges from before the window (no calls), one in it");
	an_cg_free(g);
}

struct tframe {
	uint64_t ret;
	size_t line, callee;
};

static void test_random(void)
{
	uint64_t rng = 0x2545f4914f6cdd1dull;
	enum { N = 3000 };
	struct ev *ev = calloc(N, sizeof(*ev));
	/* the true stack before each event */
	struct tframe(*stk)[16] = calloc(N + 1, sizeof(*stk));
	size_t *depth = calloc(N + 1, sizeof(*depth));
	size_t *ret_at = calloc(N, sizeof(*ret_at)); /* for a call: the event index of its return (N: none) */
	struct tframe st[16];
	size_t d = 0, func = 0, open_call[16];
	uint64_t pc = 4096, next_pc = 4096; /* fresh pcs 4096 apart: a return's target is a call's + 4 */
	for (size_t i = 0; i < N; i++) {
		memcpy(stk[i], st, sizeof(st));
		depth[i] = d;
		pc = next_pc;
		next_pc = (i + 2) * 4096;
		struct ev *x = &ev[i];
		x->pc = pc;
		x->func = func;
		x->line = func * 8 + check_rand(&rng) % 3; /* a few lines per function */
		x->cycles = 1 + check_rand(&rng) % 9;
		x->stall[check_rand(&rng) % SNR_STALL_COUNT] = check_rand(&rng) % 3;
		ret_at[i] = N;
		uint64_t r = check_rand(&rng) % 10;
		if (r < 2 && d < 12) {
			x->flow = AN_FLOW_CALL;
			x->callee = check_rand(&rng) % NFUNCS; /* often itself: recursion */
			open_call[d] = i;
			st[d++] = (struct tframe){pc + 4, x->line, x->callee};
			func = x->callee;
		} else if (r < 4 && d > 0) {
			x->flow = AN_FLOW_RETURN;
			next_pc = st[--d].ret;
			ret_at[open_call[d]] = i;
			func = d ? st[d - 1].callee : 0;
		}
	}
	for (int round = 0; round < 200; round++) {
		size_t s = check_rand(&rng) % (N - 1), e = s + 1 + check_rand(&rng) % (N - s - 1);
		/* the direct count */
		uint64_t want[NLINES] = {0}, want_stall[NLINES][SNR_STALL_COUNT];
		memset(want_stall, 0, sizeof(want_stall));
		for (size_t i = s; i < e; i++) {
			bool on[NLINES] = {false};
			on[ev[i].line] = true;
			for (size_t k = 0; k < depth[i]; k++) {
				const struct tframe *f = &stk[i][k];
				/* a frame counts if opened in the window or if its return is in it */
				bool opened_in = false, returns_in = false;
				for (size_t c = s; c < i; c++)
					if (ev[c].flow == AN_FLOW_CALL && ev[c].pc + 4 == f->ret && ret_at[c] >= i) {
						opened_in = true;
						break;
					}
				if (!opened_in)
					for (size_t c = i; c + 1 < e; c++)
						if (ev[c].flow == AN_FLOW_RETURN && ev[c + 1].pc == f->ret) {
							returns_in = true;
							break;
						}
				if (opened_in || returns_in)
					on[f->line] = true;
			}
			for (size_t l = 0; l < NLINES; l++)
				if (on[l]) {
					want[l] += ev[i].cycles;
					for (int c = 0; c < SNR_STALL_COUNT; c++)
						want_stall[l][c] += ev[i].stall[c];
				}
		}
		const struct an_cg_incl *incl;
		const struct an_cg_edge *ed;
		size_t ne;
		struct an_cg *g = run(ev, N, s, e, &incl, &ed, &ne);
		for (size_t l = 0; l < NLINES; l++) {
			CHECK(incl[l].cycles == want[l], "window [%zu, %zu) line %zu: %llu, want %llu", s, e, l,
			      (unsigned long long)incl[l].cycles, (unsigned long long)want[l]);
			CHECK(!memcmp(incl[l].stall, want_stall[l], sizeof(want_stall[l])), "window [%zu, %zu) line %zu's stalls",
			      s, e, l);
		}
		uint64_t calls = 0, got = 0;
		for (size_t i = s; i + 1 < e; i++)
			calls += ev[i].flow == AN_FLOW_CALL;
		for (size_t k = 0; k < ne; k++)
			got += ed[k].calls;
		CHECK(got == calls, "window [%zu, %zu): %llu calls, want %llu", s, e, (unsigned long long)got,
		      (unsigned long long)calls);
		an_cg_free(g);
	}
	free(ev);
	free(stk);
	free(depth);
	free(ret_at);
}

int main(void)
{
	test_nested();
	test_random();
	return check_report("test_callgraph");
}
