/*
 * annotate.c: per-pc and per-line cycles and stall causes (annotate.h
 * defines the accounting), and `snr annotate`: the hottest lines, then each
 * function's source with the figures in the margin (disassembly interleaved
 * under --asm), --json, and --compare B (per line and cause, matched by
 * file:line).
 *
 * The accumulator keeps, per instruction of the window, its pc and issue
 * cycle (16 bytes) and the stall events (index, cause, cycles: 24 bytes
 * each), both in unlinked temporary files beyond 4 MiB each
 * (lib/snr_spill.h; the stalls sorted by index); the per-pc figures are
 * summed at the end in one pass over both in index order through a hash of
 * the distinct pcs, so that an instruction's stall may be reported before
 * or after its issue. Memory: the two budgets and the distinct pcs, not
 * the window.
 */
#include "annotate.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/callgraph.h"
#include "analyzer/pcinfo.h"
#include "lib/snr_line_pack.h"
#include "lib/snr_lines.h"
#include "lib/snr_output.h"
#include "lib/snr_spill.h"
#include "lib/snr_util.h"

struct insn_rec {
	uint64_t pc, issue; /* pc UINT64_MAX: an index the engine skipped */
};

struct stall_ev {
	uint64_t index, cycles;
	uint8_t cause;
};

#define ANNOT_SPILL_MEM (4u << 20)

struct an_annot_acc {
	const struct snr_tracker *next;
	struct snr_spill insns;	  /* struct insn_rec by instruction index */
	struct snr_sorted stalls; /* struct stall_ev by index */
};

static int cmp_stall_index(const void *a, const void *b)
{
	const struct stall_ev *x = a, *y = b;
	return x->index != y->index ? (x->index < y->index ? -1 : 1) : 0;
}

struct an_annot_acc *an_annot_acc_new(void)
{
	struct an_annot_acc *a = snr_xcalloc(1, sizeof(struct an_annot_acc));
	snr_spill_init(&a->insns, sizeof(struct insn_rec), ANNOT_SPILL_MEM, "annotate instructions");
	snr_sorted_init(&a->stalls, sizeof(struct stall_ev), cmp_stall_index, ANNOT_SPILL_MEM, "annotate stalls");
	return a;
}

static void acc_free(struct an_annot_acc *a)
{
	snr_spill_free(&a->insns);
	snr_sorted_free(&a->stalls);
	free(a);
}

static void on_issue(void *user, const struct snr_ev_insn *e)
{
	struct an_annot_acc *a = user;
	while (a->insns.n < e->index) { /* an engine that skipped an index: no pc, no time */
		struct insn_rec gap = {UINT64_MAX, 0};
		if (a->insns.n)
			gap.issue = ((const struct insn_rec *)snr_spill_at(&a->insns, a->insns.n - 1))->issue;
		snr_spill_push(&a->insns, &gap);
	}
	struct insn_rec r = {e->pc, e->issue};
	snr_spill_set(&a->insns, e->index, &r);
	if (a->next && a->next->on_issue)
		a->next->on_issue(a->next->user, e);
}

static void on_stall(void *user, const struct snr_ev_stall *e)
{
	struct an_annot_acc *a = user;
	struct stall_ev s;
	memset(&s, 0, sizeof(s)); /* the padding too: it goes to the file */
	s.index = e->index;
	s.cycles = e->cycles;
	s.cause = e->cause;
	snr_sorted_push(&a->stalls, &s);
	if (a->next && a->next->on_stall)
		a->next->on_stall(a->next->user, e);
}

#define FORWARD(name, type)                                                                                       \
	static void fwd_##name(void *user, const type *e)                                                         \
	{                                                                                                         \
		const struct an_annot_acc *a = user;                                                              \
		a->next->on_##name(a->next->user, e);                                                             \
	}
FORWARD(retire, struct snr_ev_insn)
FORWARD(dma, struct snr_ev_dma)
FORWARD(mem, struct snr_ev_mem)
FORWARD(reg, struct snr_ev_reg)
FORWARD(busy, struct snr_ev_busy)

void an_annot_tracker(struct an_annot_acc *acc, const struct snr_tracker *next, struct snr_tracker *out)
{
	memset(out, 0, sizeof(*out));
	out->abi_version = SNR_TRACKER_ABI_VERSION;
	out->user = acc;
	acc->next = next;
	out->on_issue = on_issue;
	out->on_stall = on_stall;
	if (next) {
		out->on_retire = next->on_retire ? fwd_retire : NULL;
		out->on_dma = next->on_dma ? fwd_dma : NULL;
		out->on_mem = next->on_mem ? fwd_mem : NULL;
		out->on_reg = next->on_reg ? fwd_reg : NULL;
		out->on_busy = next->on_busy ? fwd_busy : NULL;
	}
}

/* ---- finishing: per pc, per line ----------------------------------------------- */

struct pc_slot {
	uint64_t pc;
	size_t row; /* index into rows + 1; 0 = empty */
};

static size_t slot_of(const struct pc_slot *t, size_t mask, uint64_t pc)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 24) & mask;
	while (t[i].row && t[i].pc != pc)
		i = (i + 1) & mask;
	return i;
}

static char *own(struct an_annot *a, const char *s)
{
	a->strings = snr_xrealloc(a->strings, (a->nstrings + 1) * sizeof(*a->strings));
	return a->strings[a->nstrings++] = snr_xstrdup(s);
}

static int cmp_str(const char *x, const char *y)
{
	if (!x || !y)
		return (x != NULL) - (y != NULL);
	return strcmp(x, y);
}

/* Rows in source order: file, line, function; pcs without a line after
 * those with one, by function. */
static int cmp_source_order(const void *pa, const void *pb)
{
	const struct an_annot_row *x = pa, *y = pb;
	if (!x->file != !y->file)
		return x->file ? -1 : 1;
	int c = cmp_str(x->file, y->file);
	if (c)
		return c;
	if (x->line != y->line)
		return x->line < y->line ? -1 : 1;
	if ((c = cmp_str(x->function, y->function)))
		return c;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static bool same_line(const struct an_annot_row *x, const struct an_annot_row *y)
{
	return !cmp_str(x->file, y->file) && x->line == y->line && !cmp_str(x->function, y->function);
}

static int cmp_hottest(const void *pa, const void *pb)
{
	const struct an_annot_row *x = pa, *y = pb;
	if (x->cycles != y->cycles)
		return x->cycles > y->cycles ? -1 : 1;
	return cmp_source_order(pa, pb);
}

static void build_lines(struct an_annot *a, struct an_annot_row *rows, size_t nrows);

/* The stall events of one instruction index: their sum, and per cause */
struct index_stalls {
	uint64_t total;
	uint64_t cause[SNR_STALL_COUNT];
};

/* Takes the events of instruction `index` from the sorted stalls (*pending:
 * the next one not yet taken, NULL at the end) into *out. */
static void take_stalls(struct an_annot_acc *acc, const struct stall_ev **pending, uint64_t index,
			struct index_stalls *out)
{
	memset(out, 0, sizeof(*out));
	while (*pending && (*pending)->index <= index) {
		if ((*pending)->index == index) {
			out->total += (*pending)->cycles;
			if ((*pending)->cause < SNR_STALL_COUNT)
				out->cause[(*pending)->cause] += (*pending)->cycles;
		}
		*pending = snr_sorted_next(&acc->stalls);
	}
}

/* A walk over the window's instructions in index order: instruction i's
 * issue and stalls beside instruction i + 1's (annotate.h's cycles). */
struct walk {
	struct an_annot_acc *acc;
	const struct stall_ev *pending;
	struct index_stalls cur, next;
	struct insn_rec in;
	size_t i, n;
	uint64_t issue0;
};

static void walk_start(struct walk *w, struct an_annot_acc *acc)
{
	memset(w, 0, sizeof(*w));
	w->acc = acc;
	w->n = acc->insns.n;
	snr_sorted_rewind(&acc->stalls);
	w->pending = snr_sorted_next(&acc->stalls);
	take_stalls(acc, &w->pending, 0, &w->cur);
	if (w->n)
		w->in = *(const struct insn_rec *)snr_spill_at(&acc->insns, 0);
	w->issue0 = w->in.issue;
}

/* The next instruction that has a pc: false at the end; else its pc, its
 * cycles, its stalls, and the next instruction's pc (*next_pc UINT64_MAX
 * for the window's last). */
static bool walk_next(struct walk *w, uint64_t *pc, uint64_t *cycles, struct index_stalls *st, uint64_t *next_pc)
{
	while (w->i < w->n) {
		size_t i = w->i++;
		struct insn_rec after = {UINT64_MAX, 0};
		if (i + 1 < w->n) {
			after = *(const struct insn_rec *)snr_spill_at(&w->acc->insns, i + 1);
			take_stalls(w->acc, &w->pending, i + 1, &w->next);
		} else {
			memset(&w->next, 0, sizeof(w->next));
		}
		/* signed: an engine whose stall reports overrun its issue gaps
		 * gets 0 here rather than a wrapped count (the drain then
		 * absorbs the difference); TA1's model and unicorn never do */
		int64_t c;
		if (i + 1 < w->n)
			c = (int64_t)(after.issue - w->in.issue) - (int64_t)w->next.total + (int64_t)w->cur.total;
		else
			c = 1 + (int64_t)w->cur.total;
		if (i == 0)
			c += (int64_t)w->issue0 - (int64_t)w->cur.total;
		*pc = w->in.pc;
		*cycles = c < 0 ? 0 : (uint64_t)c;
		*st = w->cur;
		*next_pc = after.pc;
		w->in = after;
		w->cur = w->next;
		if (*pc != UINT64_MAX)
			return true;
	}
	return false;
}

static void add_callees(struct an_annot *a, struct an_annot_acc *acc, const struct snr_source *src,
			struct an_pcinfo *info);

int an_annot_finish(struct an_annot_acc *acc, const struct snr_source *src, struct an_annot *a, char *err,
		    size_t errlen)
{
	memset(a, 0, sizeof(*a));
	size_t n = acc->insns.n;
	a->instructions = n;
	a->total_cycles = src->cycles;

	/* distinct pcs */
	size_t nslots = 1024;
	while (nslots < 4 * 1024 && nslots < 2 * n)
		nslots *= 2;
	struct pc_slot *tab = snr_xcalloc(nslots, sizeof(*tab));
	size_t mask = nslots - 1, nrows = 0, caprows = 0;
	struct an_annot_row *rows = NULL;
	uint64_t sum = 0, pc, c, next_pc;
	struct index_stalls cur;
	struct walk w;
	walk_start(&w, acc);
	while (walk_next(&w, &pc, &c, &cur, &next_pc)) {
		sum += c;
		size_t k = slot_of(tab, mask, pc);
		if (!tab[k].row) {
			if (nrows == caprows) {
				caprows = caprows ? 2 * caprows : 256;
				rows = snr_xrealloc(rows, caprows * sizeof(*rows));
			}
			rows[nrows] = (struct an_annot_row){.pc = pc};
			tab[k] = (struct pc_slot){pc, ++nrows};
			if (2 * nrows > nslots) { /* rehash */
				struct pc_slot *old = tab;
				size_t nold = nslots;
				nslots *= 2;
				mask = nslots - 1;
				tab = snr_xcalloc(nslots, sizeof(*tab));
				for (size_t j = 0; j < nold; j++)
					if (old[j].row)
						tab[slot_of(tab, mask, old[j].pc)] = old[j];
				free(old);
			}
			k = slot_of(tab, mask, pc);
		}
		struct an_annot_row *r = &rows[tab[k].row - 1];
		r->executions++;
		r->cycles += c;
		for (int cause = 0; cause < SNR_STALL_COUNT; cause++) {
			r->stall[cause] += cur.cause[cause];
			r->stall_total += cur.cause[cause];
			a->stall[cause] += cur.cause[cause];
		}
	}
	const char *ferr = snr_spill_failed(&acc->insns) ? acc->insns.err
			   : snr_sorted_failed(&acc->stalls) ? snr_sorted_error(&acc->stalls)
							      : NULL;
	if (ferr) {
		snprintf(err, errlen, "%s", ferr);
		free(tab);
		free(rows);
		acc_free(acc);
		return -1;
	}
	a->drain_cycles = a->total_cycles > sum ? a->total_cycles - sum : 0;
	if (sum > a->total_cycles) /* an engine whose last issue outruns its finish: keep the sum exact */
		a->total_cycles = sum;

	/* places and disassembly */
	struct an_pcinfo *info = an_pcinfo_new(src);
	for (size_t i = 0; i < nrows; i++) {
		struct an_annot_row *r = &rows[i];
		r->place = snr_source_place(src, r->pc);
		if (r->place) {
			r->file = r->place->file;
			r->line = r->place->line;
			r->function = r->place->function ? r->place->function : "?";
			a->have_lines = true;
		} else {
			char sym[160];
			snr_source_symbolize(src, r->pc, sym, sizeof(sym));
			char *plus = strchr(sym, '+');
			if (plus && strncmp(sym, "0x", 2))
				*plus = 0;
			r->function = own(a, sym);
		}
		r->disasm = snr_xstrdup(an_pcinfo_disasm(info, r->pc));
	}
	free(tab);

	build_lines(a, rows, nrows);
	add_callees(a, acc, src, info);
	an_pcinfo_free(info);
	const char *ferr2 = snr_spill_failed(&acc->insns) ? acc->insns.err
			    : snr_sorted_failed(&acc->stalls) ? snr_sorted_error(&acc->stalls)
							       : NULL;
	if (ferr2) {
		snprintf(err, errlen, "%s", ferr2);
		an_annot_free(a);
		acc_free(acc);
		return -1;
	}
	acc_free(acc);
	return 0;
}

/* ---- inclusive figures (analyzer/callgraph.h) -------------------------------------- */

/* pc -> its line's index in a->lines, its flow and length */
struct pc_line {
	uint64_t pc;
	size_t line; /* + 1; 0 = empty */
	uint8_t flow, len;
};

static struct pc_line *pc_line_at(struct pc_line *t, size_t mask, uint64_t pc)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 24) & mask;
	while (t[i].line && t[i].pc != pc)
		i = (i + 1) & mask;
	return &t[i];
}

/* The line row a caller before the window stands at: the line (or the
 * function) of the instruction before the return address; appended with no
 * cycles of its own when it did not run in the window. */
static size_t outer_line(struct an_annot *a, const struct snr_source *src, uint64_t ret_to)
{
	struct an_annot_row key = {.pc = ret_to - 4};
	const struct snr_place *pl = snr_source_place(src, ret_to - 4);
	if (pl) {
		key.file = pl->file;
		key.line = pl->line;
		key.function = pl->function ? pl->function : "?";
	} else {
		char sym[160];
		snr_source_symbolize(src, ret_to - 4, sym, sizeof(sym));
		char *plus = strchr(sym, '+');
		if (plus && strncmp(sym, "0x", 2))
			*plus = 0;
		key.function = strncmp(sym, "0x", 2) ? sym : AN_CALLER_OUTSIDE;
	}
	for (size_t i = 0; i < a->nlines; i++)
		if (same_line(&a->lines[i], &key))
			return i;
	if (!key.file)
		key.function = own(a, key.function);
	a->lines = snr_xrealloc(a->lines, (a->nlines + 1) * sizeof(*a->lines));
	a->lines[a->nlines] = key;
	return a->nlines++;
}

static int cmp_call(const void *pa, const void *pb)
{
	const struct an_annot_call *x = pa, *y = pb;
	if (x->cycles != y->cycles)
		return x->cycles > y->cycles ? -1 : 1;
	int c = cmp_str(x->file, y->file);
	if (!c)
		c = x->line < y->line ? -1 : x->line > y->line;
	if (!c)
		c = cmp_str(x->function, y->function);
	return c ? c : cmp_str(x->callee, y->callee);
}

/* Walks the window twice more (callgraph.h) for each line's inclusive
 * figures and a->calls. */
static void add_callees(struct an_annot *a, struct an_annot_acc *acc, const struct snr_source *src,
			struct an_pcinfo *info)
{
	size_t nslots = 1024;
	while (nslots < 2 * a->npcs)
		nslots *= 2;
	struct pc_line *tab = snr_xcalloc(nslots, sizeof(*tab));
	size_t mask = nslots - 1;
	for (size_t li = 0; li < a->nlines; li++)
		for (size_t k = 0; k < a->lines[li].npcs; k++) {
			uint64_t pc = a->pcs[a->lines[li].first_pc + k].pc;
			unsigned len;
			enum an_flow f = an_pcinfo_flow(info, pc, &len);
			*pc_line_at(tab, mask, pc) = (struct pc_line){pc, li + 1, (uint8_t)f, (uint8_t)len};
		}
	struct an_cg *g = an_cg_new();
	struct walk w;
	uint64_t pc, c, next_pc;
	struct index_stalls st;
	walk_start(&w, acc);
	while (walk_next(&w, &pc, &c, &st, &next_pc)) {
		const struct pc_line *p = pc_line_at(tab, mask, pc);
		an_cg_scan(g, pc, (enum an_flow)p->flow, p->len, next_pc != UINT64_MAX, next_pc);
	}
	const uint64_t *ret_to, *ret_pc;
	size_t nouter = an_cg_outer(g, &ret_to, &ret_pc);
	size_t *oline = snr_xcalloc(nouter + 1, sizeof(*oline));
	const char **ocallee = snr_xcalloc(nouter + 1, sizeof(*ocallee));
	for (size_t k = 0; k < nouter; k++) {
		ocallee[k] = a->lines[pc_line_at(tab, mask, ret_pc[k])->line - 1].function;
		oline[k] = outer_line(a, src, ret_to[k]);
	}
	an_cg_start(g, a->nlines, oline, ocallee);
	walk_start(&w, acc);
	while (walk_next(&w, &pc, &c, &st, &next_pc)) {
		const struct pc_line *p = pc_line_at(tab, mask, pc);
		const char *callee = NULL;
		if (next_pc != UINT64_MAX && p->flow == AN_FLOW_CALL) {
			const struct pc_line *q = pc_line_at(tab, mask, next_pc);
			callee = q->line ? a->lines[q->line - 1].function : NULL;
		}
		an_cg_step(g, p->line - 1, c, st.cause, pc, (enum an_flow)p->flow, p->len, next_pc != UINT64_MAX, next_pc,
			   callee);
	}
	const struct an_cg_edge *edges;
	size_t nedges;
	const struct an_cg_incl *incl = an_cg_finish(g, &edges, &nedges);
	for (size_t li = 0; li < a->nlines; li++) {
		a->lines[li].inclusive_cycles = incl[li].cycles;
		memcpy(a->lines[li].inclusive_stall, incl[li].stall, sizeof(incl[li].stall));
	}
	a->calls = snr_xcalloc(nedges ? nedges : 1, sizeof(*a->calls));
	a->ncalls = nedges;
	for (size_t e = 0; e < nedges; e++) {
		const struct an_annot_row *l = &a->lines[edges[e].caller];
		a->calls[e] = (struct an_annot_call){.file = l->file, .line = l->line, .function = l->function,
						     .callee = edges[e].callee, .calls = edges[e].calls,
						     .cycles = edges[e].cycles};
		memcpy(a->calls[e].stall, edges[e].stall, sizeof(edges[e].stall));
	}
	if (nedges)
		snr_qsort(a->calls, nedges, sizeof(*a->calls), cmp_call);
	snr_qsort(a->lines, a->nlines, sizeof(*a->lines), cmp_hottest);
	an_cg_free(g);
	free(oline);
	free(ocallee);
	free(tab);
}

/* a's pcs (rows, owned) grouped into its lines, hottest first */
static void build_lines(struct an_annot *a, struct an_annot_row *rows, size_t nrows)
{
	if (nrows) /* rows is NULL for a window without instructions */
		snr_qsort(rows, nrows, sizeof(*rows), cmp_source_order);
	struct an_annot_row *lines = snr_xcalloc(nrows ? nrows : 1, sizeof(*lines));
	size_t nlines = 0;
	for (size_t i = 0; i < nrows;) {
		size_t j = i;
		struct an_annot_row *l = &lines[nlines++];
		*l = (struct an_annot_row){.pc = rows[i].pc, .file = rows[i].file, .line = rows[i].line,
					   .function = rows[i].function, .first_pc = i};
		for (; j < nrows && same_line(&rows[i], &rows[j]); j++) {
			if (rows[j].executions > l->executions)
				l->executions = rows[j].executions;
			l->cycles += rows[j].cycles;
			l->stall_total += rows[j].stall_total;
			for (int c = 0; c < SNR_STALL_COUNT; c++)
				l->stall[c] += rows[j].stall[c];
		}
		l->npcs = j - i;
		i = j;
	}
	snr_qsort(lines, nlines, sizeof(*lines), cmp_hottest);
	a->pcs = rows;
	a->npcs = nrows;
	a->lines = lines;
	a->nlines = nlines;
}

static bool same_call(const struct an_annot_call *x, const struct an_annot_call *y)
{
	return !cmp_str(x->file, y->file) && x->line == y->line && !cmp_str(x->function, y->function) &&
	       !strcmp(x->callee, y->callee);
}

/* Adds the inclusive figures of lines `from` to into's same lines; a line
 * into lacks (a caller before a window: no pcs) is appended (own: its
 * symbol name copied, for lines of another window). */
static void add_inclusive(struct an_annot *into, const struct an_annot_row *from, size_t n, bool own_names)
{
	for (size_t i = 0; i < n; i++) {
		size_t k = 0;
		while (k < into->nlines && !same_line(&into->lines[k], &from[i]))
			k++;
		if (k == into->nlines) {
			into->lines = snr_xrealloc(into->lines, (into->nlines + 1) * sizeof(*into->lines));
			into->lines[into->nlines] = (struct an_annot_row){.pc = from[i].pc, .file = from[i].file,
									  .line = from[i].line, .function = from[i].function};
			if (own_names && !from[i].file)
				into->lines[into->nlines].function = own(into, from[i].function);
			into->nlines++;
		}
		into->lines[k].inclusive_cycles += from[i].inclusive_cycles;
		for (int c = 0; c < SNR_STALL_COUNT; c++)
			into->lines[k].inclusive_stall[c] += from[i].inclusive_stall[c];
	}
}

void an_annot_merge(struct an_annot *into, const struct an_annot *add)
{
	into->total_cycles += add->total_cycles;
	into->drain_cycles += add->drain_cycles;
	into->instructions += add->instructions;
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		into->stall[c] += add->stall[c];
	into->have_lines |= add->have_lines;
	size_t n = into->npcs + add->npcs;
	struct an_annot_row *rows = snr_xcalloc(n ? n : 1, sizeof(*rows));
	if (into->npcs)
		memcpy(rows, into->pcs, into->npcs * sizeof(*rows));
	for (size_t i = 0; i < add->npcs; i++) {
		struct an_annot_row *r = &rows[into->npcs + i];
		*r = add->pcs[i];
		r->disasm = snr_xstrdup(add->pcs[i].disasm);
		if (!r->file) /* a symbol's name add owns */
			r->function = own(into, r->function);
	}
	snr_qsort(rows, n, sizeof(*rows), cmp_source_order);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && rows[m - 1].pc == rows[i].pc) { /* the same pc in another window */
			struct an_annot_row *r = &rows[m - 1];
			r->executions += rows[i].executions;
			r->cycles += rows[i].cycles;
			r->stall_total += rows[i].stall_total;
			for (int c = 0; c < SNR_STALL_COUNT; c++)
				r->stall[c] += rows[i].stall[c];
			free(rows[i].disasm);
			continue;
		}
		rows[m++] = rows[i];
	}
	struct an_annot_row *old = into->lines;
	size_t nold = into->nlines;
	free(into->pcs);
	build_lines(into, rows, m);
	/* the inclusive figures and the calls: added per line (and callee) */
	add_inclusive(into, old, nold, false);
	add_inclusive(into, add->lines, add->nlines, true);
	free(old);
	snr_qsort(into->lines, into->nlines, sizeof(*into->lines), cmp_hottest);
	into->calls = snr_xrealloc(into->calls, (into->ncalls + add->ncalls + 1) * sizeof(*into->calls));
	for (size_t i = 0; i < add->ncalls; i++) {
		struct an_annot_call c = add->calls[i];
		c.callee = own(into, c.callee);
		if (!c.file)
			c.function = own(into, c.function);
		size_t k = 0;
		while (k < into->ncalls && !(same_call(&into->calls[k], &c)))
			k++;
		if (k == into->ncalls) {
			into->calls[into->ncalls++] = c;
			continue;
		}
		into->calls[k].calls += c.calls;
		into->calls[k].cycles += c.cycles;
		for (int s = 0; s < SNR_STALL_COUNT; s++)
			into->calls[k].stall[s] += c.stall[s];
	}
	if (into->ncalls)
		snr_qsort(into->calls, into->ncalls, sizeof(*into->calls), cmp_call);
}

void an_annot_free(struct an_annot *a)
{
	for (size_t i = 0; i < a->npcs; i++)
		free(a->pcs[i].disasm);
	for (size_t i = 0; i < a->nstrings; i++)
		free(a->strings[i]);
	free(a->strings);
	free(a->pcs);
	free(a->lines);
	free(a->calls);
	memset(a, 0, sizeof(*a));
}

int an_annotate_load(struct an_annot *a, struct snr_source *src, const char *path, const char *config_path,
		     char *err, size_t errlen)
{
	struct an_annot_acc *acc = an_annot_acc_new();
	struct snr_tracker t;
	an_annot_tracker(acc, NULL, &t);
	memset(a, 0, sizeof(*a));
	if (snr_source_run(src, path, NULL, config_path, &t, err, errlen)) {
		acc_free(acc);
		return -1;
	}
	return an_annot_finish(acc, src, a, err, errlen);
}

/* ---- JSON ------------------------------------------------------------------------ */

static json_t *stalls_json(const uint64_t *stall)
{
	json_t *o = json_object();
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		json_object_set_new(o, snr_stall_cause_name((enum snr_stall_cause)c), json_integer((json_int_t)stall[c]));
	return o;
}

static json_t *line_json(const struct an_annot_row *l, bool inclusive)
{
	json_t *o = json_object();
	json_object_set_new(o, "file", l->file ? json_string(l->file) : json_null());
	json_object_set_new(o, "line", l->file ? json_integer(l->line) : json_null());
	json_object_set_new(o, "function", json_string(l->function ? l->function : "?"));
	json_object_set_new(o, "executions", json_integer((json_int_t)l->executions));
	json_object_set_new(o, "cycles", json_integer((json_int_t)l->cycles));
	json_object_set_new(o, "stall_cycles", stalls_json(l->stall));
	if (inclusive) {
		json_object_set_new(o, "inclusive_cycles", json_integer((json_int_t)l->inclusive_cycles));
		json_object_set_new(o, "inclusive_stall_cycles", stalls_json(l->inclusive_stall));
	}
	return o;
}

static json_t *calls_json(const struct an_annot *a, const char *function)
{
	json_t *arr = json_array();
	for (size_t i = 0; i < a->ncalls; i++) {
		const struct an_annot_call *c = &a->calls[i];
		if (function && strcmp(function, c->function))
			continue;
		json_t *o = json_object();
		json_object_set_new(o, "file", c->file ? json_string(c->file) : json_null());
		json_object_set_new(o, "line", c->file ? json_integer(c->line) : json_null());
		json_object_set_new(o, "function", json_string(c->function ? c->function : "?"));
		json_object_set_new(o, "callee", json_string(c->callee));
		json_object_set_new(o, "calls", json_integer((json_int_t)c->calls));
		json_object_set_new(o, "cycles", json_integer((json_int_t)c->cycles));
		json_object_set_new(o, "stall_cycles", stalls_json(c->stall));
		json_array_append_new(arr, o);
	}
	return arr;
}

json_t *an_annot_json(const struct an_annot *a, const struct snr_source *src, const char *function)
{
	json_t *o = json_object();
	json_object_set_new(o, "total_cycles", json_integer((json_int_t)a->total_cycles));
	json_object_set_new(o, "drain_cycles", json_integer((json_int_t)a->drain_cycles));
	json_object_set_new(o, "instructions", json_integer((json_int_t)a->instructions));
	json_object_set_new(o, "stall_cycles", stalls_json(a->stall));
	json_t *lines = json_array(), *pcs = json_array();
	for (size_t i = 0; i < a->nlines; i++)
		if (!function || !strcmp(function, a->lines[i].function))
			json_array_append_new(lines, line_json(&a->lines[i], true));
	for (size_t i = 0; i < a->npcs; i++) {
		const struct an_annot_row *r = &a->pcs[i];
		if (function && strcmp(function, r->function))
			continue;
		json_t *p = line_json(r, false);
		json_object_set_new(p, "pc", json_integer((json_int_t)r->pc));
		json_object_set_new(p, "disasm", json_string(r->disasm));
		json_object_set_new(p, "source", snr_source_json(src, r->pc));
		json_array_append_new(pcs, p);
	}
	json_object_set_new(o, "lines", lines);
	json_object_set_new(o, "calls", calls_json(a, function));
	json_object_set_new(o, "pcs", pcs);
	return o;
}

/* ---- the source text and --compare (annotate.h) ---- */

char **an_annot_read_source(const char *file, const char *source_dir, size_t *n)
{
	FILE *f = snr_line_pack_fopen(file); /* the text a trace carries, when the file is gone or changed */
	char p[8192];
	snprintf(p, sizeof(p), "%s", file);
	if (!f && source_dir) {
		const char *base = strrchr(file, '/');
		snprintf(p, sizeof(p), "%s/%s", source_dir, file[0] == '/' ? (base ? base + 1 : file) : file);
		f = fopen(p, "r");
		if (!f && base) {
			snprintf(p, sizeof(p), "%s/%s", source_dir, base + 1);
			f = fopen(p, "r");
		}
	}
	*n = 0;
	if (!f)
		return NULL;
	snr_output_input(p);
	char **lines = NULL, *line = NULL;
	size_t cap = 0, lcap = 0;
	ssize_t got;
	while ((got = getline(&line, &lcap, f)) >= 0) {
		if (got && line[got - 1] == '\n')
			line[got - 1] = 0;
		if (*n == cap) {
			cap = cap ? 2 * cap : 256;
			lines = snr_xrealloc(lines, cap * sizeof(*lines));
		}
		for (char *t = line; *t; t++)
			if (*t == '\t')
				*t = ' ';
		lines[(*n)++] = snr_xstrdup(line);
	}
	free(line);
	fclose(f);
	return lines;
}

static json_t *side_json(const struct an_annot_row *r)
{
	if (!r)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "executions", json_integer((json_int_t)r->executions));
	json_object_set_new(o, "cycles", json_integer((json_int_t)r->cycles));
	json_t *s = json_object();
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		json_object_set_new(s, snr_stall_cause_name((enum snr_stall_cause)c), json_integer((json_int_t)r->stall[c]));
	json_object_set_new(o, "stall_cycles", s);
	return o;
}

json_t *an_annot_compare_json(const struct an_annot *a, const struct an_annot *b, const struct an_annot_pair *p, size_t n,
			    const char *pa, const char *pb)
{
	json_t *o = json_object();
	json_object_set_new(o, "before", json_string(pa));
	json_object_set_new(o, "after", json_string(pb));
	json_t *tot = json_object();
	json_object_set_new(tot, "before", json_integer((json_int_t)a->total_cycles));
	json_object_set_new(tot, "after", json_integer((json_int_t)b->total_cycles));
	json_object_set_new(o, "total_cycles", tot);
	json_t *st = json_object();
	for (int c = 0; c < SNR_STALL_COUNT; c++) {
		json_t *e = json_object();
		json_object_set_new(e, "before", json_integer((json_int_t)a->stall[c]));
		json_object_set_new(e, "after", json_integer((json_int_t)b->stall[c]));
		json_object_set_new(st, snr_stall_cause_name((enum snr_stall_cause)c), e);
	}
	json_object_set_new(o, "stall_cycles", st);
	json_t *lines = json_array();
	for (size_t i = 0; i < n; i++) {
		const struct an_annot_row *r = p[i].before ? p[i].before : p[i].after;
		json_t *l = json_object();
		json_object_set_new(l, "file", r->file ? json_string(r->file) : json_null());
		json_object_set_new(l, "line", r->file ? json_integer(r->line) : json_null());
		json_object_set_new(l, "function", json_string(r->function));
		if (p[i].after) { /* where the line is in B (moved by an edit) */
			json_object_set_new(l, "after_file", p[i].after->file ? json_string(p[i].after->file) : json_null());
			json_object_set_new(l, "after_line", p[i].after->file ? json_integer(p[i].after->line) : json_null());
		}
		json_object_set_new(l, "before", side_json(p[i].before));
		json_object_set_new(l, "after", side_json(p[i].after));
		json_object_set_new(l, "delta_cycles", json_integer((json_int_t)p[i].delta));
		json_array_append_new(lines, l);
	}
	json_object_set_new(o, "lines", lines);
	return o;
}
