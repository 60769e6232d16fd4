/*
 * deps.c: `snr analyze deps`, the dynamic dependency graph (see deps.h and
 * docs/analyses.md "deps").
 *
 * One pass over the tracker's events builds the register edges as they come
 * (events of one instruction arrive together, reads before writes) and
 * collects the memory events in an unlinked temporary file, sorted by cycle
 * in runs of 16 MiB (lib/snr_spill.h); merged back in order they run through
 * a last-writer interval map per memory (space, chip), so a read depends on
 * exactly the writers of the bytes it reads. A DMA's source is read when its
 * transfer starts and its destination written when it completes, both under
 * its ISSUE's index, so a consumer of DMA'd data depends on the ISSUE.
 * The DMA records are collect.c's (an_data), whose callbacks run in the same
 * pass; host code (another ISA) gets its register names from its plugin.
 * Kept in memory: per DMA ISSUE its index, and fixed budgets. In
 * temporary files (lib/snr_spill.h): the VMEM page values (deps_pages.c,
 * filed by page from the same pass over the memory events), per instruction
 * 16 bytes (struct snr_deps_insn, read by index through a 4 KiB block), the
 * edges (16 bytes each, about 1.6 an instruction on the serving loop) in two
 * lists, register edges as they come and memory edges as their sorted runs
 * merge, each written once (in memory the first consumer of every 256th, so
 * that an instruction's edges are one 4 KiB read in each), the pcs
 * collect.c keeps, the memory events (40 bytes each).
 * Cost: O(E log E) for E memory events plus the interval map's splits; the
 * relaxed walk takes in at most max_chain instructions per DMA (plus its
 * anchors and what it skips as already before the position).
 */
#include "deps.h"

#include <getopt.h>
#include <inttypes.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "analyzer/annotate.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_util.h"
#include "isa/snr_isa.h"

/* ---- collection ---------------------------------------------------------- */

struct mem_ev {
	uint64_t index, cycle, addr, bytes;
	uint8_t write, space;
	uint16_t chip;
};

struct collect {
	struct snr_deps *d;
	/* register edges come in consumer order: the current consumer's in
	 * group, sorted and written to d->reg_list when the next consumer's
	 * come (a simulator that reports them otherwise sends them all through
	 * reg_sorted, into reg_list at the end); memory edges (found in cycle
	 * order) here, merged into d->mem_list at the end */
	struct snr_sorted mem_edges;
	struct snr_dep_edge *group;
	size_t ngroup, group_cap;
	struct snr_sorted reg_sorted;
	bool reg_unordered; /* a register edge came after a later consumer's (not seen from the GRM) */
	int64_t last_reg_writer[SNR_ISA_MAX_REGS];
	struct snr_sorted mem; /* the memory events, by cmp_mem (spilled past 16 MiB) */
	struct snr_tracker an; /* collect.c's callbacks, fed from these */
	bool isa_known;
	bool too_long; /* an index or a cycle beyond SNR_DEPS_MAX_INDEX */
	uint64_t not_data[SNR_ISA_MAX_REGS / 64]; /* registers that carry no data dependency */
};

static void isa_of(struct collect *c);
static uint64_t canon_addr(const struct mem_ev *e);

_Static_assert(sizeof(struct snr_dep_edge) == 16, "an edge is 16 bytes (docs/analyses.md, deps)");
_Static_assert(sizeof(struct snr_deps_insn) == 16, "an instruction is 16 bytes (docs/analyses.md, deps)");

/* A memory event to the VMEM page values (d->pages) */
static void page_event(struct collect *c, const struct mem_ev *e)
{
	struct snr_deps *d = c->d;
	if (!e->bytes || e->index == UINT64_MAX || e->space != TA1_SPACE_VMEM)
		return;
	uint64_t lo = canon_addr(e);
	if (d->npages && lo >= TA1_VMEM_BASE)
		snr_deps_pages_access(d->pages, lo - TA1_VMEM_BASE, e->bytes, e->cycle, e->write, e->index);
}

static void grow_insn(struct collect *c, uint64_t index)
{
	struct snr_deps *d = c->d;
	if (index >= d->insn->n) { /* zero records up to it */
		struct snr_deps_insn zero;
		memset(&zero, 0, sizeof(zero));
		snr_spill_set(d->insn, index, &zero);
		d->ninsn = d->insn->n;
	}
}
static void push_edge(struct snr_dep_edge **v, size_t *n, size_t *cap, struct snr_dep_edge e)
{
	if (*n == *cap) {
		*cap = *cap ? 2 * *cap : 4096;
		*v = snr_xrealloc(*v, *cap * sizeof(**v));
	}
	(*v)[(*n)++] = e;
}

static int cmp_edge(const void *a, const void *b);

static void list_init(struct snr_deps_edge_list *l, const char *what)
{
	memset(l, 0, sizeof(*l));
	l->s = snr_xmalloc(sizeof(*l->s));
	snr_spill_init(l->s, sizeof(struct snr_dep_edge), 4u << 20, what);
}

static void list_free(struct snr_deps_edge_list *l)
{
	if (l->s)
		snr_spill_free(l->s);
	free(l->s);
	free(l->block);
	memset(l, 0, sizeof(*l));
}

/* e after the list's last edge (in cmp_edge order, not equal to it) */
static void list_push(struct snr_deps_edge_list *l, const struct snr_dep_edge *e)
{
	if (l->n % SNR_DEPS_EDGE_BLOCK == 0) {
		size_t b = l->n / SNR_DEPS_EDGE_BLOCK;
		if (b == l->block_cap) {
			l->block_cap = l->block_cap ? 2 * l->block_cap : 1024;
			l->block = snr_xrealloc(l->block, l->block_cap * sizeof(*l->block));
		}
		l->block[b] = e->consumer;
	}
	snr_spill_push(l->s, e);
	l->n++;
}

/* The first edge of l whose consumer is >= i: the block index narrows the
 * search to one block (SNR_DEPS_EDGE_BLOCK edges, 4 KiB: the spill's read
 * block), then a scan. */
static size_t list_first(const struct snr_deps_edge_list *l, uint64_t i)
{
	size_t a = 0, b = (l->n + SNR_DEPS_EDGE_BLOCK - 1) / SNR_DEPS_EDGE_BLOCK;
	while (a < b) { /* the first block whose first consumer is >= i */
		size_t mid = (a + b) / 2;
		if (l->block[mid] < i)
			a = mid + 1;
		else
			b = mid;
	}
	size_t k = a ? (a - 1) * SNR_DEPS_EDGE_BLOCK : 0;
	while (k < l->n && ((const struct snr_dep_edge *)snr_spill_at(l->s, k))->consumer < i)
		k++;
	return k;
}

/* The current consumer's register edges, sorted, into d->reg_list (one per
 * (producer, register): an instruction that reads a register twice) */
static void flush_group(struct collect *c)
{
	if (c->ngroup > 1)
		snr_qsort(c->group, c->ngroup, sizeof(*c->group), cmp_edge);
	for (size_t k = 0; k < c->ngroup; k++)
		if (!k || cmp_edge(&c->group[k - 1], &c->group[k]))
			list_push(&c->d->reg_list, &c->group[k]);
	c->ngroup = 0;
}

static void add_edge(struct collect *c, uint64_t consumer, uint64_t producer, uint8_t kind, uint8_t space,
		     uint16_t reg)
{
	struct snr_dep_edge e = {.consumer = consumer, .producer = producer, .kind = kind, .space = space, .reg = reg};
	if (kind == SNR_DEP_MEM) {
		snr_sorted_push(&c->mem_edges, &e);
		return;
	}
	if (!c->reg_unordered && c->ngroup && c->group[0].consumer != consumer) {
		if (consumer > c->group[0].consumer) {
			flush_group(c);
		} else { /* out of order: from now on every register edge is sorted */
			flush_group(c);
			c->reg_unordered = true;
			struct snr_deps_edge_list *l = &c->d->reg_list;
			for (uint64_t k = 0; k < l->n; k++)
				snr_sorted_push(&c->reg_sorted, snr_spill_at(l->s, k));
			list_free(l);
			list_init(l, "register dependency edges");
		}
	}
	if (c->reg_unordered) {
		snr_sorted_push(&c->reg_sorted, &e);
		return;
	}
	push_edge(&c->group, &c->ngroup, &c->group_cap, e);
}

/* A DMA ISSUE at instruction index i (in the order they issue) */
static void issue_at_add(struct snr_deps *d, uint64_t i)
{
	if (d->nissue_at == d->cap_issue_at) {
		d->cap_issue_at = d->cap_issue_at ? 2 * d->cap_issue_at : 1024;
		d->issue_at = snr_xrealloc(d->issue_at, d->cap_issue_at * sizeof(*d->issue_at));
	}
	d->issue_at[d->nissue_at++] = i;
}

static void on_issue(void *u, const struct snr_ev_insn *e)
{
	struct collect *c = u;
	if (e->index > SNR_DEPS_MAX_INDEX || e->issue > SNR_DEPS_MAX_INDEX) {
		c->too_long = true;
		return;
	}
	struct snr_deps_insn in;
	memset(&in, 0, sizeof(in));
	in.pc = e->pc;
	in.issue = e->issue;
	in.cls = e->cls;
	in.unit = e->unit;
	in.seen = 1;
	snr_spill_set(c->d->insn, e->index, &in);
	if (c->d->insn->n > c->d->ninsn)
		c->d->ninsn = c->d->insn->n;
	if (e->cls == TA1_CLASS_DMA_ISSUE)
		issue_at_add(c->d, e->index);
	/* collect.c's pcs (an.pcs) are filled from d->insn after the memory
	 * pass (collect_pcs), not during it: the two copies of every pc never
	 * take room at the pass's peak */
}

static void on_reg(void *u, const struct snr_ev_reg *e)
{
	struct collect *c = u;
	if (e->reg >= SNR_ISA_MAX_REGS)
		return;
	if (!c->isa_known)
		isa_of(c);
	if (snr_regset_has(c->not_data, e->reg))
		return;
	if (e->write) {
		c->last_reg_writer[e->reg] = (int64_t)e->index;
		return;
	}
	int64_t w = c->last_reg_writer[e->reg];
	if (w >= 0 && (uint64_t)w != e->index)
		add_edge(c, e->index, (uint64_t)w, SNR_DEP_REG, 0, e->reg);
}

static void on_mem(void *u, const struct snr_ev_mem *e)
{
	struct collect *c = u;
	struct mem_ev m;
	memset(&m, 0, sizeof(m)); /* the padding too: it goes to the file */
	m.index = e->index;
	m.cycle = e->cycle;
	m.addr = e->addr;
	m.bytes = e->bytes;
	m.write = e->write;
	m.space = e->space;
	m.chip = e->chip;
	snr_sorted_push(&c->mem, &m);
	if (c->an.on_mem)
		c->an.on_mem(c->an.user, e);
}

static void on_dma(void *u, const struct snr_ev_dma *e)
{
	struct collect *c = u;
	c->an.on_dma(c->an.user, e);
}

static void on_busy(void *u, const struct snr_ev_busy *e)
{
	struct collect *c = u;
	c->an.on_busy(c->an.user, e);
}

/* The DMA table, from collect.c's records (an_load's, one per DMA merged
 * from its phase events), which are dropped unless the caller asked for
 * them (keep). The table is made from the last record back and, when they
 * are dropped, their array shrunk every 4,096, so that the two are not both
 * whole in memory (the table's pages are touched as it fills). Phases not
 * seen are 0. */
static void dmas_from_an(struct snr_deps *d, bool keep)
{
	struct an_data *a = &d->an;
	d->ndmas = a->ndmas;
	d->dmas = snr_xmalloc((d->ndmas ? d->ndmas : 1) * sizeof(*d->dmas));
	for (size_t k = a->ndmas; k-- > 0;) {
		const struct an_dma *x = &a->dmas[k];
		struct snr_deps_dma *m = &d->dmas[k];
		memset(m, 0, sizeof(*m));
		m->id = k + 1;
		m->issue_index = x->id ? x->issue_index : -1;
		m->wait_index = x->wait_index;
		m->bytes = x->bytes;
		m->issue_cycle = x->issue == AN_NONE ? 0 : x->issue;
		m->start_cycle = x->start == AN_NONE ? 0 : x->start;
		m->complete_cycle = x->complete == AN_NONE ? 0 : x->complete;
		m->wait_cycle = x->wait == AN_NONE ? 0 : x->wait;
		m->completed = x->complete != AN_NONE;
		m->waited = x->wait != AN_NONE;
		m->src_space = x->src_space;
		m->dst_space = x->dst_space;
		m->src_chip = x->src_chip;
		m->dst_chip = x->dst_chip;
		m->flag = x->flag;
		m->src_addr = x->src_addr;
		m->dst_addr = x->dst_addr;
		m->stall_cycles = an_dma_stall(x);
		if (!keep && k && k % 4096 == 0) {
			a->dmas = snr_xrealloc(a->dmas, k * sizeof(*a->dmas));
			a->capdmas = k;
		}
	}
	if (!keep) {
		free(a->dmas);
		a->dmas = NULL;
		a->ndmas = a->capdmas = 0;
	}
}

/* The trace's ISA (its META is read before the first event): for another
 * ISA than TA1, the register names from its plugin, and its program counter
 * is no data dependency (host ISAs report it read and written by every
 * instruction). */
static void isa_of(struct collect *c)
{
	struct snr_deps *d = c->d;
	c->isa_known = true;
	json_t *meta = json_loads(d->an.src.meta_json ? d->an.src.meta_json : "{}", 0, NULL);
	const char *isa_name = json_string_value(json_object_get(meta, "isa"));
	d->ta1 = !isa_name || !strcmp(isa_name, "ta1");
	const struct snr_isa_ops *isa = d->ta1 ? NULL : snr_isa_find(isa_name);
	char err[256];
	void *self = isa ? isa->create(NULL, err, sizeof(err)) : NULL;
	if (self) {
		size_t n;
		const struct snr_isa_reg *r = isa->registers(self, &n);
		d->reg_names = snr_xcalloc(n ? n : 1, sizeof(*d->reg_names));
		for (size_t i = 0; i < n; i++) {
			snprintf(d->reg_names[i], sizeof(d->reg_names[i]), "%s", r[i].name);
			if (r[i].pc && i < SNR_ISA_MAX_REGS)
				snr_regset_add(c->not_data, (unsigned)i);
		}
		d->nreg_names = n;
		isa->destroy(self);
	}
	json_decref(meta);
}

/* ---- memory: last writer by byte range ----------------------------------- */

struct ivl {
	uint64_t lo, hi;
	uint64_t writer;
};

struct ivl_map {
	uint32_t key;
	struct ivl *v;
	size_t n, cap;
};

static size_t ivl_first(const struct ivl_map *m, uint64_t lo)
{
	size_t a = 0, b = m->n; /* first with hi > lo */
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (m->v[mid].hi > lo)
			b = mid;
		else
			a = mid + 1;
	}
	return a;
}

static void ivl_write(struct ivl_map *m, uint64_t lo, uint64_t hi, uint64_t w)
{
	size_t i = ivl_first(m, lo), j = i;
	while (j < m->n && m->v[j].lo < hi)
		j++;
	struct ivl put[3];
	size_t np = 0;
	if (i < j && m->v[i].lo < lo)
		put[np++] = (struct ivl){m->v[i].lo, lo, m->v[i].writer};
	put[np++] = (struct ivl){lo, hi, w};
	if (i < j && m->v[j - 1].hi > hi)
		put[np++] = (struct ivl){hi, m->v[j - 1].hi, m->v[j - 1].writer};
	size_t newn = m->n - (j - i) + np;
	if (newn > m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		while (m->cap < newn)
			m->cap *= 2;
		m->v = snr_xrealloc(m->v, m->cap * sizeof(*m->v));
	}
	memmove(m->v + i + np, m->v + j, (m->n - j) * sizeof(*m->v));
	memcpy(m->v + i, put, np * sizeof(*put));
	m->n = newn;
}

static uint64_t canon_addr(const struct mem_ev *e)
{
	if (e->space == TA1_SPACE_HBM) {
		if (e->addr >= TA1_HBM_GLOBAL_BASE)
			return (e->addr - TA1_HBM_GLOBAL_BASE) & ((1ull << TA1_HBM_GLOBAL_SHIFT) - 1);
		return e->addr - TA1_HBM_BASE;
	}
	return e->addr;
}

static int cmp_mem(const void *a, const void *b)
{
	const struct mem_ev *x = a, *y = b;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	if (x->write != y->write)
		return x->write ? -1 : 1; /* a write lands before a read of the same cycle */
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return 0;
}

static bool is_dma_issue(const struct snr_deps *d, uint64_t i)
{
	if (!d->ta1 || i >= d->ninsn)
		return false;
	size_t a = 0, b = d->nissue_at;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (d->issue_at[mid] < i)
			a = mid + 1;
		else
			b = mid;
	}
	return a < d->nissue_at && d->issue_at[a] == i;
}

static int cmp_edge(const void *a, const void *b)
{
	const struct snr_dep_edge *x = a, *y = b;
	if (x->consumer != y->consumer)
		return x->consumer < y->consumer ? -1 : 1;
	if (x->producer != y->producer)
		return x->producer < y->producer ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	if (x->space != y->space)
		return (int)x->space - (int)y->space;
	return (int)x->reg - (int)y->reg;
}

static void mem_edges(struct collect *c)
{
	struct ivl_map *maps = NULL;
	size_t nmaps = 0;
	snr_sorted_rewind(&c->mem);
	for (const struct mem_ev *e; (e = snr_sorted_next(&c->mem));) {
		page_event(c, e);
		if (!e->bytes || e->index == UINT64_MAX)
			continue;
		uint32_t key = ((uint32_t)e->space << 16) | e->chip;
		struct ivl_map *m = NULL;
		for (size_t i = 0; i < nmaps; i++)
			if (maps[i].key == key)
				m = &maps[i];
		if (!m) {
			maps = snr_xrealloc(maps, (nmaps + 1) * sizeof(*maps));
			m = &maps[nmaps++];
			memset(m, 0, sizeof(*m));
			m->key = key;
		}
		uint64_t lo = canon_addr(e), hi = lo + e->bytes;
		if (e->write) {
			ivl_write(m, lo, hi, e->index);
			continue;
		}
		uint64_t prev = UINT64_MAX;
		for (size_t i = ivl_first(m, lo); i < m->n && m->v[i].lo < hi; i++) {
			uint64_t w = m->v[i].writer;
			/* Only program-order dependencies: a writer later than the
			 * reader (a racy program) is not one. */
			if (w == prev || w >= e->index)
				continue;
			prev = w;
			add_edge(c, e->index, w, SNR_DEP_MEM, e->space, 0); /* counted by build_edges */
		}
	}
	for (size_t i = 0; i < nmaps; i++)
		free(maps[i].v);
	free(maps);
}

/* ---- relaxed dependencies ------------------------------------------------ */

/* The walk keeps nothing per instruction of the window: an instruction's
 * edges are found by binary search in the sorted graph, the DMA issued by an
 * instruction in the DMAs' issue order, and what one walk has taken in in a
 * small hash set emptied after each DMA. */
struct walk {
	struct snr_deps *d;
	uint64_t (*issue_dma)[2]; /* (issue index, dma index), ascending */
	size_t nissue_dma;
	uint64_t *seen;     /* open addressing on index + 1 (0: empty) */
	size_t *seen_list; /* its slots in use */
	size_t seen_cap, nseen;
	uint64_t *stack, *slice;
	size_t nstack, stack_cap, nslice, slice_cap;
	/* the best anchor so far, and the best that is not the flag rule */
	uint64_t pos, pos_nf;
	uint8_t kind;
	int64_t anchor_index;
	uint64_t anchor_dma;
};

static int64_t dma_at(const struct walk *w, uint64_t q)
{
	size_t a = 0, b = w->nissue_dma;
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (w->issue_dma[mid][0] < q)
			a = mid + 1;
		else
			b = mid;
	}
	return a < w->nissue_dma && w->issue_dma[a][0] == q ? (int64_t)w->issue_dma[a][1] : -1;
}

static size_t seen_slot(const uint64_t *seen, size_t cap, uint64_t key)
{
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (cap - 1);
	while (seen[h] && seen[h] != key)
		h = (h + 1) & (cap - 1);
	return h;
}

/* Adds q to this walk's set; false if it was there already. */
static bool seen_add(struct walk *w, uint64_t q)
{
	if (2 * (w->nseen + 1) > w->seen_cap) {
		size_t cap = w->seen_cap ? 2 * w->seen_cap : 256;
		uint64_t *seen = snr_xcalloc(cap, sizeof(*seen));
		w->seen_list = snr_xrealloc(w->seen_list, cap / 2 * sizeof(*w->seen_list));
		for (size_t k = 0; k < w->nseen; k++) {
			uint64_t key = w->seen[w->seen_list[k]];
			size_t h = seen_slot(seen, cap, key);
			seen[h] = key;
			w->seen_list[k] = h;
		}
		free(w->seen);
		w->seen = seen;
		w->seen_cap = cap;
	}
	size_t h = seen_slot(w->seen, w->seen_cap, q + 1);
	if (w->seen[h])
		return false;
	w->seen[h] = q + 1;
	w->seen_list[w->nseen++] = h;
	return true;
}

static void seen_clear(struct walk *w)
{
	for (size_t k = 0; k < w->nseen; k++)
		w->seen[w->seen_list[k]] = 0;
	w->nseen = 0;
}

static bool lightweight(uint8_t cls)
{
	return cls == TA1_CLASS_ALU || cls == TA1_CLASS_MUL || cls == TA1_CLASS_DIV || cls == TA1_CLASS_LOAD;
}

static void anchor(struct walk *w, uint8_t kind, uint64_t pos, int64_t idx, uint64_t dma)
{
	if (kind != SNR_ANCHOR_FLAG && pos > w->pos_nf)
		w->pos_nf = pos;
	/* on a tie, what the walk found names the anchor rather than the flag rule */
	if (pos > w->pos || (pos == w->pos && (w->kind == SNR_ANCHOR_WINDOW_START ||
					       (w->kind == SNR_ANCHOR_FLAG && kind != SNR_ANCHOR_FLAG)))) {
		w->pos = pos;
		w->kind = kind;
		w->anchor_index = idx;
		w->anchor_dma = dma;
	}
}

/* Producer q of something the DMA at index i needs. */
static void anchor_of(struct walk *w, uint64_t i, uint64_t q)
{
	struct snr_deps *d = w->d;
	int64_t k = q < d->ninsn ? dma_at(w, q) : -1;
	if (k >= 0) {
		const struct snr_deps_dma *e = &d->dmas[k];
		if (e->waited && e->wait_index >= 0 && (uint64_t)e->wait_index < i)
			anchor(w, SNR_ANCHOR_DMA, (uint64_t)e->wait_index + 1, (int64_t)q, e->id);
		else
			anchor(w, SNR_ANCHOR_NO_WAIT, i, (int64_t)q, e->id);
		return;
	}
	anchor(w, SNR_ANCHOR_INSN, q + 1, (int64_t)q, 0);
}

/* The walk's frontier is a max-heap of instruction indices: the latest
 * producer is taken first, so by the time an instruction is taken every
 * anchor after it is known. */
static void push(struct walk *w, uint64_t q)
{
	if (w->nstack == w->stack_cap) {
		w->stack_cap = w->stack_cap ? 2 * w->stack_cap : 64;
		w->stack = snr_xrealloc(w->stack, w->stack_cap * sizeof(*w->stack));
	}
	size_t k = w->nstack++;
	while (k && w->stack[(k - 1) / 2] < q) {
		w->stack[k] = w->stack[(k - 1) / 2];
		k = (k - 1) / 2;
	}
	w->stack[k] = q;
}

static uint64_t pop(struct walk *w)
{
	uint64_t top = w->stack[0], last = w->stack[--w->nstack];
	size_t k = 0, n = w->nstack;
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= n)
			break;
		if (c + 1 < n && w->stack[c + 1] > w->stack[c])
			c++;
		if (w->stack[c] <= last)
			break;
		w->stack[k] = w->stack[c];
		k = c;
	}
	if (n)
		w->stack[k] = last;
	return top;
}

/* It must not move above a WAIT on its own flag: it would satisfy it. The
 * latest such WAIT before it decides (anchor keeps the latest position), found
 * by binary search in the WAITs sorted by (flag, index): no scan of every WAIT
 * per DMA, which made the pass quadratic in the DMAs. */
static void flag_anchor(struct walk *w, const struct snr_deps_dma *m, const uint64_t (*waits)[2], size_t nwaits)
{
	size_t a = 0, b = nwaits; /* the first (flag, index) >= (m->flag, its issue index) */
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (waits[mid][0] < m->flag || (waits[mid][0] == m->flag && waits[mid][1] < (uint64_t)m->issue_index))
			a = mid + 1;
		else
			b = mid;
	}
	if (a && waits[a - 1][0] == m->flag)
		anchor(w, SNR_ANCHOR_FLAG, waits[a - 1][1] + 1, (int64_t)waits[a - 1][1], 0);
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}



static void relax_one(struct walk *w, struct snr_deps_dma *m, const uint64_t (*waits)[2], size_t nwaits)
{
	struct snr_deps *d = w->d;
	uint64_t i = (uint64_t)m->issue_index;
	seen_clear(w);
	w->nstack = w->nslice = 0;
	w->pos = w->pos_nf = 0;
	w->kind = SNR_ANCHOR_WINDOW_START;
	w->anchor_index = -1;
	w->anchor_dma = 0;
	flag_anchor(w, m, waits, nwaits);
	uint64_t latest_direct = 0;
	bool any_direct = false;
	size_t ne;
	const struct snr_dep_edge *edges = snr_deps_edges_of(d, i, &ne);
	for (size_t k = 0; k < ne; k++) {
		const struct snr_dep_edge *e = &edges[k];
		if (e->kind == SNR_DEP_REG && e->reg >= 32)
			continue; /* sync flags: ordered by the flag rule */
		if (!any_direct || e->producer > latest_direct)
			latest_direct = e->producer;
		any_direct = true;
		if (e->kind == SNR_DEP_REG)
			push(w, e->producer);
		else
			anchor_of(w, i, e->producer); /* its source was written in the window */
	}
	bool heavy = false;
	while (w->nstack && !heavy) {
		uint64_t p = pop(w);
		if (p >= d->ninsn || !seen_add(w, p))
			continue;
		if (p < w->pos)
			continue; /* already before the point it can move to, and so is all it needs */
		if (!lightweight(snr_deps_insn_get(d, p).cls)) {
			anchor_of(w, i, p);
			continue;
		}
		if (w->nslice == w->slice_cap) {
			w->slice_cap = w->slice_cap ? 2 * w->slice_cap : 64;
			w->slice = snr_xrealloc(w->slice, w->slice_cap * sizeof(*w->slice));
		}
		w->slice[w->nslice++] = p;
		if (w->nslice > d->max_chain) { /* counts only what would move with it */
			heavy = true;
			break;
		}
		edges = snr_deps_edges_of(d, p, &ne);
		for (size_t k = 0; k < ne; k++) {
			const struct snr_dep_edge *e = &edges[k];
			if (e->kind == SNR_DEP_MEM)
				anchor_of(w, i, e->producer); /* a load of bytes written in the window */
			else if (e->reg < 32)
				push(w, e->producer);
		}
	}
	if (heavy) {
		w->nslice = 0;
		w->pos = w->pos_nf = any_direct ? latest_direct + 1 : 0;
		w->kind = SNR_ANCHOR_HEAVY;
		w->anchor_index = any_direct ? (int64_t)latest_direct : -1;
		w->anchor_dma = 0;
		flag_anchor(w, m, waits, nwaits);
	}
	if (w->pos > i)
		w->pos = i;
	if (w->pos_nf > w->pos)
		w->pos_nf = w->pos;
	m->anchor_kind = w->kind;
	m->anchor_index = w->anchor_index;
	m->anchor_dma = w->anchor_dma;
	m->position = w->pos;
	m->slice_total = w->nslice;
	size_t n = 0;
	for (size_t k = 0; k < w->nslice; k++)
		if (w->slice[k] >= w->pos)
			w->slice[n++] = w->slice[k];
	snr_qsort(w->slice, n, sizeof(*w->slice), cmp_u64);
	m->slice = n ? snr_xcalloc(n, sizeof(*m->slice)) : NULL;
	if (n)
		memcpy(m->slice, w->slice, n * sizeof(*m->slice));
	m->nslice = n;
	m->backtail_insns = i - w->pos;
	uint64_t at = w->pos < d->ninsn ? snr_deps_insn_get(d, w->pos).issue : 0;
	m->backtail_cycles = snr_deps_insn_get(d, i).issue > at ? snr_deps_insn_get(d, i).issue - at : 0;
	m->position_other_flag = w->pos_nf;
	at = w->pos_nf < d->ninsn ? snr_deps_insn_get(d, w->pos_nf).issue : 0;
	m->backtail_other_flag_cycles = snr_deps_insn_get(d, i).issue > at ? snr_deps_insn_get(d, i).issue - at : 0;
}

static void relax(struct snr_deps *d)
{
	struct walk w = {.d = d};
	w.issue_dma = snr_xcalloc(d->ndmas + 1, sizeof(*w.issue_dma));
	uint64_t(*waits)[2] = snr_xcalloc(d->ndmas + 1, sizeof(*waits));
	size_t nw = 0;
	for (size_t k = 0; k < d->ndmas; k++) {
		const struct snr_deps_dma *m = &d->dmas[k];
		if (m->issue_index >= 0 && (uint64_t)m->issue_index < d->ninsn) {
			w.issue_dma[w.nissue_dma][0] = (uint64_t)m->issue_index;
			w.issue_dma[w.nissue_dma++][1] = k;
		}
		if (m->waited && m->wait_index >= 0) {
			waits[nw][0] = m->flag;
			waits[nw++][1] = (uint64_t)m->wait_index;
		}
	}
	snr_qsort(w.issue_dma, w.nissue_dma, sizeof(*w.issue_dma), an_cmp_u64pair);
	snr_qsort(waits, nw, sizeof(*waits), an_cmp_u64pair);
	for (size_t k = 0; k < d->ndmas; k++) {
		struct snr_deps_dma *m = &d->dmas[k];
		if (m->issue_index >= 0 && (uint64_t)m->issue_index < d->ninsn)
			relax_one(&w, m, waits, nw);
	}
	free(waits);
	free(w.issue_dma);
	free(w.seen);
	free(w.seen_list);
	free(w.stack);
	free(w.slice);
}

/* ---- entry points -------------------------------------------------------- */

/* collect.c's pc per instruction (an_data.pcs), as its on_issue would have
 * filled it: 0 for an index with no ISSUE event. */
static void collect_pcs(struct snr_deps *d)
{
	struct an_data *a = &d->an;
	uint64_t n = d->ninsn;
	while (n && !snr_deps_insn_get(d, n - 1).seen)
		n--;
	for (uint64_t i = 0; i < n; i++) {
		uint64_t pc = snr_deps_insn_get(d, i).pc;
		snr_spill_push(a->pcs, &pc);
	}
}

struct snr_deps_edge_buf {
	struct snr_dep_edge *v;
	size_t cap;
};

/* The two edge lists complete, one per (consumer, producer, kind, what),
 * without a sort of the whole graph: the register edges came sorted per
 * consumer and in consumer order (else they are merged from reg_sorted's
 * runs now), the memory edges are merged from their sorted runs. 0, or -1
 * (a temporary file failed: err filled). */
static int build_edges(struct collect *c, char *err, size_t errlen)
{
	struct snr_deps *d = c->d;
	if (!c->reg_unordered) {
		flush_group(c);
	} else {
		snr_sorted_rewind(&c->reg_sorted);
		struct snr_dep_edge prev;
		for (const struct snr_dep_edge *e; (e = snr_sorted_next(&c->reg_sorted));) {
			if (d->reg_list.n && !cmp_edge(&prev, e))
				continue;
			prev = *e;
			list_push(&d->reg_list, e);
		}
	}
	list_init(&d->mem_list, "memory dependency edges");
	d->edge_buf = snr_xcalloc(1, sizeof(*d->edge_buf));
	d->ndma_mem_edges = 0;
	snr_sorted_rewind(&c->mem_edges);
	struct snr_dep_edge prev;
	for (const struct snr_dep_edge *e; (e = snr_sorted_next(&c->mem_edges));) {
		if (d->mem_list.n && !cmp_edge(&prev, e))
			continue;
		prev = *e;
		list_push(&d->mem_list, e);
		if (is_dma_issue(d, e->producer))
			d->ndma_mem_edges++;
	}
	d->nreg_edges = d->reg_list.n;
	d->nmem_edges = d->mem_list.n;
	d->nedges = d->reg_list.n + d->mem_list.n;
	const char *fail = snr_sorted_failed(&c->reg_sorted)   ? snr_sorted_error(&c->reg_sorted)
			   : snr_sorted_failed(&c->mem_edges)  ? snr_sorted_error(&c->mem_edges)
			   : snr_spill_failed(d->reg_list.s)   ? d->reg_list.s->err
			   : snr_spill_failed(d->mem_list.s)   ? d->mem_list.s->err
							       : NULL;
	if (fail) {
		snr_fmt(err, errlen, "%s", fail);
		return -1;
	}
	return 0;
}

static void collect_free(struct collect *c)
{
	snr_sorted_free(&c->mem);
	snr_sorted_free(&c->mem_edges);
	snr_sorted_free(&c->reg_sorted);
	free(c->group);
	c->group = NULL;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

struct source_feed {
	const char *path;
	const struct snr_deps_opts *o;
};

static int feed_source(void *user, struct snr_source *src, const struct snr_tracker *t, char *err, size_t errlen)
{
	const struct source_feed *f = user;
	return snr_source_run(src, f->path, f->o->sim, f->o->config_path, t, err, errlen);
}

int snr_deps_run(struct snr_deps *d, const char *path, const struct snr_deps_opts *o, char *err, size_t errlen)
{
	struct source_feed f = {path, o};
	return snr_deps_build(d, feed_source, &f, o, err, errlen);
}

int snr_deps_build(struct snr_deps *d, snr_deps_feed_fn feed, void *feed_user, const struct snr_deps_opts *o,
		   char *err, size_t errlen)
{
	double t0 = now_s();
	memset(d, 0, sizeof(*d));
	d->max_chain = o->max_chain ? o->max_chain : SNR_DEPS_DEFAULT_MAX_CHAIN;
	struct collect c = {.d = d};
	d->insn = snr_xmalloc(sizeof(*d->insn));
	snr_spill_init(d->insn, sizeof(struct snr_deps_insn), 8u << 20, "instructions");
	snr_sorted_init(&c.mem, sizeof(struct mem_ev), cmp_mem, 16u << 20, "memory events");
	snr_sorted_init(&c.mem_edges, sizeof(struct snr_dep_edge), cmp_edge, 16u << 20, "memory dependency edges");
	snr_sorted_init(&c.reg_sorted, sizeof(struct snr_dep_edge), cmp_edge, 16u << 20, "register dependency edges");
	list_init(&d->reg_list, "register dependency edges");
	for (unsigned r = 0; r < SNR_ISA_MAX_REGS; r++)
		c.last_reg_writer[r] = -1;
	an_collect_tracker(&d->an, o->an_want | AN_WANT_DMA, &c.an);
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION,
				.user = &c,
				.on_issue = on_issue,
				.on_dma = on_dma,
				.on_mem = on_mem,
				.on_reg = on_reg,
				.on_busy = c.an.on_busy ? on_busy : NULL};
	struct snr_tracker run = t;
	if (o->annot)
		an_annot_tracker(o->annot, &t, &run);
	int rc = feed(feed_user, &d->an.src, &run, err, errlen);
	if (!rc && c.too_long) {
		snr_fmt(err, errlen, "%s: the window has an instruction index or cycle beyond 2^48, more than the graph holds",
			d->an.src.path ? d->an.src.path : "the window");
		rc = -1;
	}
	if (rc) {
		collect_free(&c);
		return -1;
	}
	an_collect_finish(&d->an);
	dmas_from_an(d, o->an_want & AN_WANT_DMA);
	if (!c.isa_known)
		isa_of(&c);
	d->page_bytes = d->an.src.cfg.vmem_page_bytes ? d->an.src.cfg.vmem_page_bytes : 4096;
	d->npages = d->an.src.cfg.vmem_bytes / d->page_bytes;
	d->pages = snr_xmalloc(sizeof(*d->pages));
	snr_deps_pages_init(d->pages, d->npages, d->page_bytes);
	grow_insn(&c, 0);
	if (d->an.src.instructions > d->ninsn) {
		grow_insn(&c, d->an.src.instructions - 1);
	}
	mem_edges(&c);
	if (snr_sorted_failed(&c.mem)) {
		snr_fmt(err, errlen, "%s", snr_sorted_error(&c.mem));
		rc = -1;
	}
	snr_sorted_free(&c.mem);
	if (snr_deps_pages_finish(d->pages, d->an.src.cycles + 1, err, errlen))
		rc = -1;
	/* sorted (the ISSUEs came in index order from every simulator here),
	 * one entry per index */
	snr_qsort(d->issue_at, d->nissue_at, sizeof(*d->issue_at), cmp_u64);
	size_t u = 0;
	for (size_t k = 0; k < d->nissue_at; k++)
		if (!u || d->issue_at[u - 1] != d->issue_at[k])
			d->issue_at[u++] = d->issue_at[k];
	d->nissue_at = u;
	/* collect.c's pcs only for a caller that asked for its data (snr
	 * report's DMA table): deps and suggest read the pcs from d->insn */
	if (o->an_want & AN_WANT_DMA)
		collect_pcs(d);
	if (!rc && an_spill_error(&d->an)) {
		snr_fmt(err, errlen, "%s", an_spill_error(&d->an));
		rc = -1;
	}
	if (!rc)
		rc = build_edges(&c, err, errlen);
	collect_free(&c);
	if (rc)
		return -1;
	relax(d);
	d->seconds = now_s() - t0;
	return 0;
}

static void free_edges(struct snr_deps *d)
{
	list_free(&d->reg_list);
	list_free(&d->mem_list);
	if (d->edge_buf)
		free(d->edge_buf->v);
	free(d->edge_buf);
	d->edge_buf = NULL;
}

static void free_insn(struct snr_deps *d)
{
	if (d->insn)
		snr_spill_free(d->insn);
	free(d->insn);
	d->insn = NULL;
}

static void free_pages(struct snr_deps *d)
{
	if (d->pages)
		snr_deps_pages_free(d->pages);
	free(d->pages);
	d->pages = NULL;
}

void snr_deps_drop_graph(struct snr_deps *d)
{
	free_insn(d);
	free_edges(d);
	free_pages(d);
	d->insn = NULL;
	d->ninsn = d->nedges = d->npages = 0;
}

void snr_deps_free(struct snr_deps *d)
{
	for (size_t k = 0; k < d->ndmas; k++)
		free(d->dmas[k].slice);
	free(d->dmas);
	free_insn(d);
	free_edges(d);
	free_pages(d);
	free(d->issue_at);
	free(d->reg_names);
	an_free(&d->an);
	memset(d, 0, sizeof(*d));
}

/* The next edge of the merge of the two lists (each sorted; no edge is in
 * both: their kinds differ) */
bool snr_deps_edge_next(const struct snr_deps *d, struct snr_deps_edge_iter *it, struct snr_dep_edge *e)
{
	const struct snr_deps_edge_list *rl = &d->reg_list, *ml = &d->mem_list;
	bool r = it->r < rl->n, m = it->m < ml->n;
	if (!r && !m)
		return false;
	struct snr_dep_edge re, me;
	if (r)
		re = *(const struct snr_dep_edge *)snr_spill_at(rl->s, it->r);
	if (m)
		me = *(const struct snr_dep_edge *)snr_spill_at(ml->s, it->m);
	if (r && (!m || cmp_edge(&re, &me) <= 0)) {
		*e = re;
		it->r++;
	} else {
		*e = me;
		it->m++;
	}
	return true;
}

/* Instruction i's edges from both lists, merged (an instruction has a few:
 * each list's are one block read) */
const struct snr_dep_edge *snr_deps_edges_of(const struct snr_deps *d, uint64_t i, size_t *n)
{
	*n = 0;
	if (!d->nedges)
		return NULL;
	struct snr_deps_edge_iter it = {d->reg_list.n ? list_first(&d->reg_list, i) : 0,
					 d->mem_list.n ? list_first(&d->mem_list, i) : 0};
	struct snr_deps_edge_buf *buf = d->edge_buf;
	struct snr_dep_edge e;
	while (snr_deps_edge_next(d, &it, &e) && e.consumer == i) {
		if (*n == buf->cap) {
			buf->cap = buf->cap ? 2 * buf->cap : 16;
			buf->v = snr_xrealloc(buf->v, buf->cap * sizeof(*buf->v));
		}
		buf->v[(*n)++] = e;
	}
	return buf->v;
}

const char *snr_anchor_kind_name(enum snr_anchor_kind k)
{
	switch (k) {
	case SNR_ANCHOR_WINDOW_START: return "window-start";
	case SNR_ANCHOR_DMA: return "dma";
	case SNR_ANCHOR_INSN: return "insn";
	case SNR_ANCHOR_FLAG: return "flag";
	case SNR_ANCHOR_HEAVY: return "heavy";
	case SNR_ANCHOR_NO_WAIT: return "unwaited-dma";
	}
	return "?";
}

/* ---- output -------------------------------------------------------------- */

const char *snr_deps_space_name(const struct snr_deps *d, unsigned s)
{
	static const char *n[] = {"core", "vmem", "mxuw", "hbm", "none"};
	if (!d->ta1)
		return "mem"; /* one address space */
	return s < 5 ? n[s] : "?";
}

static const char *reg_name(const struct snr_deps *d, unsigned r, char *buf, size_t len)
{
	if (!d->ta1) {
		if (r < d->nreg_names)
			return d->reg_names[r];
	} else if (r < 32) {
		return ta1_reg_name(r);
	} else if (r >= TA1_REG_FLAG0 && r < TA1_REG_FLAG0 + TA1_NUM_FLAGS) {
		snprintf(buf, len, "flag%u", r - TA1_REG_FLAG0);
		return buf;
	}
	snprintf(buf, len, "r%u", r);
	return buf;
}

void snr_deps_json_str(FILE *f, const char *s)
{
	fputc('"', f);
	for (; *s; s++) {
		if (*s == '"' || *s == '\\')
			fprintf(f, "\\%c", *s);
		else if ((unsigned char)*s < 0x20)
			fprintf(f, "\\u%04x", *s);
		else
			fputc(*s, f);
	}
	fputc('"', f);
}

static void print_anchor(const struct snr_deps *d, const struct snr_deps_dma *m, char *buf, size_t len)
{
	switch (m->anchor_kind) {
	case SNR_ANCHOR_WINDOW_START: snprintf(buf, len, "window start"); break;
	case SNR_ANCHOR_DMA: snprintf(buf, len, "DMA %" PRIu64 " (wait #%" PRId64 ")", m->anchor_dma,
				      d->dmas[m->anchor_dma - 1].wait_index); break;
	case SNR_ANCHOR_NO_WAIT: snprintf(buf, len, "DMA %" PRIu64 " (no wait)", m->anchor_dma); break;
	case SNR_ANCHOR_INSN: snprintf(buf, len, "insn #%" PRId64 " (%s)", m->anchor_index,
				       ta1_class_name(snr_deps_insn_get(d, m->anchor_index).cls)); break;
	case SNR_ANCHOR_FLAG: snprintf(buf, len, "wait #%" PRId64 " (flag %u)", m->anchor_index, m->flag); break;
	case SNR_ANCHOR_HEAVY: snprintf(buf, len, "heavy: #%" PRId64, m->anchor_index); break;
	}
}

/* A DMA's id, issue index, pc, symbol and source: the first members of its
 * object in both forms below */
static void print_dma_head(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m)
{
	char sym[256];
	uint64_t pc = m->issue_index >= 0 ? snr_deps_insn_get(d, m->issue_index).pc : 0;
	fprintf(f, "{\"id\":%" PRIu64 ",\"issue_index\":%" PRId64 ",\"pc\":%" PRIu64 ",\"symbol\":", m->id,
		m->issue_index, pc);
	snr_deps_json_str(f, m->issue_index >= 0 ? snr_source_symbolize(&d->an.src, pc, sym, sizeof(sym)) : "");
	fputs(",\"source\":", f);
	if (m->issue_index >= 0)
		snr_source_json_print(f, &d->an.src, pc);
	else
		fputs("null", f);
}

/* The same DMA's members as the full object, only those up to its source
 * and its stall cycles: what snr report's table of stalled DMAs takes from
 * suggest's document (without its dependencies, the bulk of it). */
void snr_deps_print_dma_brief_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m);
void snr_deps_print_dma_brief_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m)
{
	print_dma_head(f, d, m);
	fprintf(f, ",\"stall_cycles\":%" PRIu64 "}", m->stall_cycles);
}

void snr_deps_print_dma_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m);
void snr_deps_print_dma_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m)
{
	print_dma_head(f, d, m);
	fprintf(f,
		",\"wait_index\":%" PRId64 ",\"flag\":%u,\"bytes\":%" PRIu64 ",\"src\":\"%s\",\"dst\":\"%s\""
		",\"src_addr\":%" PRIu64 ",\"dst_addr\":%" PRIu64 ",\"issue_cycle\":%" PRIu64
		",\"complete_cycle\":%" PRIu64 ",\"stall_cycles\":%" PRIu64,
		m->waited ? m->wait_index : -1, m->flag, m->bytes, snr_deps_space_name(d, m->src_space), snr_deps_space_name(d, m->dst_space),
		m->src_addr, m->dst_addr, m->issue_cycle, m->complete_cycle, m->stall_cycles);
	if (m->issue_index < 0) {
		fputs(",\"relaxed\":null}", f);
		return;
	}
	size_t ne;
	const struct snr_dep_edge *e = snr_deps_edges_of(d, (uint64_t)m->issue_index, &ne);
	fputs(",\"conservative\":[", f);
	for (size_t k = 0; k < ne; k++) {
		char rb[16];
		fprintf(f, "%s{\"producer\":%" PRIu64 ",\"kind\":\"%s\",\"what\":\"%s\"}", k ? "," : "", (uint64_t)e[k].producer,
			e[k].kind == SNR_DEP_REG ? "reg" : "mem",
			e[k].kind == SNR_DEP_REG ? reg_name(d, e[k].reg, rb, sizeof(rb)) : snr_deps_space_name(d, e[k].space));
	}
	fprintf(f,
		"],\"relaxed\":{\"anchor\":\"%s\",\"anchor_index\":%" PRId64 ",\"anchor_dma\":%" PRIu64
		",\"position\":%" PRIu64 ",\"position_pc\":%" PRIu64 ",\"slice\":[",
		snr_anchor_kind_name(m->anchor_kind), m->anchor_index, m->anchor_dma, m->position,
		m->position < d->ninsn ? snr_deps_insn_get(d, m->position).pc : 0);
	for (size_t k = 0; k < m->nslice; k++)
		fprintf(f, "%s%" PRIu64, k ? "," : "", m->slice[k]);
	fprintf(f, "],\"slice_pcs\":[");
	for (size_t k = 0; k < m->nslice; k++)
		fprintf(f, "%s%" PRIu64, k ? "," : "", snr_deps_insn_get(d, m->slice[k]).pc);
	fprintf(f, "],\"backtail_insns\":%" PRIu64 ",\"backtail_cycles\":%" PRIu64 "}}", m->backtail_insns,
		m->backtail_cycles);
}

/* ---- dependencies by pc: edges grouped by (consumer pc, producer pc,
 * kind, what), counted, the most frequent first ---------------------------- */

struct pc_pair {
	uint64_t cpc, ppc, count;
	uint16_t what; /* REG: the register, MEM: the space */
	uint8_t kind, used;
};

static uint64_t pair_hash(uint64_t cpc, uint64_t ppc, unsigned what, unsigned kind)
{
	uint64_t h = cpc * 0x9e3779b97f4a7c15ull ^ (ppc + 0x632be59bd9b4e019ull) * 0xbf58476d1ce4e5b9ull;
	h ^= ((uint64_t)what << 8 | kind) * 0x94d049bb133111ebull;
	return h ^ (h >> 31);
}

static int cmp_pair(const void *a, const void *b)
{
	const struct pc_pair *x = a, *y = b;
	if (x->count != y->count)
		return x->count > y->count ? -1 : 1;
	if (x->cpc != y->cpc)
		return x->cpc < y->cpc ? -1 : 1;
	if (x->ppc != y->ppc)
		return x->ppc < y->ppc ? -1 : 1;
	if (x->kind != y->kind)
		return x->kind < y->kind ? -1 : 1;
	return (int)x->what - (int)y->what;
}

/* The top (at most) n pairs, sorted; *out holds them (free it). */
static size_t top_pairs(const struct snr_deps *d, size_t n, struct pc_pair **out)
{
	size_t cap = 1024, used = 0;
	struct pc_pair *t = snr_xcalloc(cap, sizeof(*t));
	struct snr_deps_edge_iter it = {0, 0};
	for (struct snr_dep_edge ek; snr_deps_edge_next(d, &it, &ek);) {
		const struct snr_dep_edge *e = &ek;
		uint64_t cpc = e->consumer < d->ninsn ? snr_deps_insn_get(d, e->consumer).pc : 0;
		uint64_t ppc = e->producer < d->ninsn ? snr_deps_insn_get(d, e->producer).pc : 0;
		uint16_t what = e->kind == SNR_DEP_REG ? e->reg : e->space;
		if (2 * (used + 1) > cap) { /* keep the table at most half full */
			struct pc_pair *old = t;
			size_t ocap = cap;
			cap *= 2;
			t = snr_xcalloc(cap, sizeof(*t));
			for (size_t i = 0; i < ocap; i++)
				if (old[i].used) {
					size_t j = pair_hash(old[i].cpc, old[i].ppc, old[i].what, old[i].kind) & (cap - 1);
					while (t[j].used)
						j = (j + 1) & (cap - 1);
					t[j] = old[i];
				}
			free(old);
		}
		size_t j = pair_hash(cpc, ppc, what, e->kind) & (cap - 1);
		while (t[j].used && !(t[j].cpc == cpc && t[j].ppc == ppc && t[j].what == what && t[j].kind == e->kind))
			j = (j + 1) & (cap - 1);
		if (!t[j].used) {
			t[j] = (struct pc_pair){.cpc = cpc, .ppc = ppc, .what = what, .kind = e->kind, .used = 1};
			used++;
		}
		t[j].count++;
	}
	size_t m = 0;
	for (size_t i = 0; i < cap; i++)
		if (t[i].used)
			t[m++] = t[i];
	snr_qsort(t, m, sizeof(*t), cmp_pair);
	*out = t;
	return m < n ? m : n;
}

static void print_json(FILE *f, const struct snr_deps *d, bool edges, unsigned top)
{
	fprintf(f,
		"{\"analysis\":\"deps\",\"source\":");
	snr_deps_json_str(f, d->an.src.path);
	fprintf(f,
		",\"instructions\":%" PRIu64 ",\"cycles\":%" PRIu64 ",\"max_chain\":%u,\"register_edges\":%" PRIu64
		",\"memory_edges\":%" PRIu64 ",\"dma_memory_edges\":%" PRIu64 ",\"dmas\":[",
		d->an.src.instructions, d->an.src.cycles, d->max_chain, d->nreg_edges, d->nmem_edges, d->ndma_mem_edges);
	for (size_t k = 0; k < d->ndmas; k++) {
		if (k)
			fputc(',', f);
		fputs("\n", f);
		snr_deps_print_dma_json(f, d, &d->dmas[k]);
	}
	fputs("],\"top_dependencies\":[", f);
	struct pc_pair *pp;
	size_t np = top_pairs(d, top, &pp);
	for (size_t k = 0; k < np; k++) {
		char cs[256], ps[256], rb[16];
		fprintf(f, "%s\n{\"consumer_pc\":%" PRIu64 ",\"consumer_symbol\":", k ? "," : "", pp[k].cpc);
		snr_deps_json_str(f, snr_source_symbolize(&d->an.src, pp[k].cpc, cs, sizeof(cs)));
		fputs(",\"consumer_source\":", f);
		snr_source_json_print(f, &d->an.src, pp[k].cpc);
		fprintf(f, ",\"producer_pc\":%" PRIu64 ",\"producer_symbol\":", pp[k].ppc);
		snr_deps_json_str(f, snr_source_symbolize(&d->an.src, pp[k].ppc, ps, sizeof(ps)));
		fputs(",\"producer_source\":", f);
		snr_source_json_print(f, &d->an.src, pp[k].ppc);
		fprintf(f, ",\"kind\":\"%s\",\"what\":\"%s\",\"count\":%" PRIu64 "}",
			pp[k].kind == SNR_DEP_REG ? "reg" : "mem",
			pp[k].kind == SNR_DEP_REG ? reg_name(d, pp[k].what, rb, sizeof(rb)) : snr_deps_space_name(d, pp[k].what),
			pp[k].count);
	}
	free(pp);
	fputs("]", f);
	if (edges) {
		fputs(",\"edges\":[", f);
		struct snr_deps_edge_iter it = {0, 0};
		size_t k = 0;
		for (struct snr_dep_edge ek; snr_deps_edge_next(d, &it, &ek); k++) {
			const struct snr_dep_edge *e = &ek;
			char rb[16];
			fprintf(f, "%s\n[%" PRIu64 ",%" PRIu64 ",\"%s\",\"%s\"]", k ? "," : "", (uint64_t)e->consumer, (uint64_t)e->producer,
				e->kind == SNR_DEP_REG ? "reg" : "mem",
				e->kind == SNR_DEP_REG ? reg_name(d, e->reg, rb, sizeof(rb)) : snr_deps_space_name(d, e->space));
		}
		fputs("]", f);
	}
	fputs("}\n", f);
}

static void print_text(FILE *f, const struct snr_deps *d, bool edges, unsigned top)
{
	fprintf(f, "deps: %s: %" PRIu64 " instructions, %" PRIu64 " cycles\n", d->an.src.path, d->an.src.instructions,
		d->an.src.cycles);
	fprintf(f, "edges: %" PRIu64 " register, %" PRIu64 " memory (%" PRIu64 " from DMAs)\n", d->nreg_edges,
		d->nmem_edges, d->ndma_mem_edges);
	fprintf(f, "relaxed rule: operand slices of at most %u lightweight scalar instructions "
		   "(docs/analyses.md)\n\n",
		d->max_chain);
	fprintf(f, "%4s %7s %-24s %9s %-9s %6s %-24s %6s %7s\n", "dma", "issue#", "pc", "bytes", "link", "stall",
		"relaxed dependency", "insns", "cycles");
	for (size_t k = 0; k < d->ndmas; k++) {
		const struct snr_deps_dma *m = &d->dmas[k];
		char sym[256], link[16], anc[64];
		snprintf(link, sizeof(link), "%s>%s", snr_deps_space_name(d, m->src_space), snr_deps_space_name(d, m->dst_space));
		if (m->issue_index < 0) {
			fprintf(f, "%4" PRIu64 " %7s %-24s %9s %-9s %6" PRIu64 " %-24s\n", m->id, "-", "(before window)",
				"-", "-", m->stall_cycles, "-");
			continue;
		}
		snr_source_where_short(&d->an.src, snr_deps_insn_get(d, m->issue_index).pc, sym, sizeof(sym));
		sym[24] = 0;
		print_anchor(d, m, anc, sizeof(anc));
		anc[24] = 0;
		fprintf(f, "%4" PRIu64 " %7" PRId64 " %-24s %9" PRIu64 " %-9s %6" PRIu64 " %-24s %6" PRIu64 " %7" PRIu64 "\n",
			m->id, m->issue_index, sym, m->bytes, link, m->stall_cycles, anc, m->backtail_insns,
			m->backtail_cycles);
	}
	struct pc_pair *pp;
	size_t np = top_pairs(d, top, &pp);
	if (np)
		fprintf(f, "\nmost frequent dependencies by pc (of %" PRIu64 " edges):\n%9s  %-28s    %-28s %-4s %s\n",
			(uint64_t)d->nedges, "count", "consumer", "producer", "kind", "what");
	for (size_t k = 0; k < np; k++) {
		char cs[256], ps[256], rb[16];
		snr_source_where_short(&d->an.src, pp[k].cpc, cs, sizeof(cs));
		snr_source_where_short(&d->an.src, pp[k].ppc, ps, sizeof(ps));
		cs[28] = ps[28] = 0;
		fprintf(f, "%9" PRIu64 "  %-28s <- %-28s %-4s %s\n", pp[k].count, cs, ps,
			pp[k].kind == SNR_DEP_REG ? "reg" : "mem",
			pp[k].kind == SNR_DEP_REG ? reg_name(d, pp[k].what, rb, sizeof(rb)) : snr_deps_space_name(d, pp[k].what));
	}
	free(pp);
	if (edges) {
		fputs("\nconsumer <- producer  kind  what\n", f);
		struct snr_deps_edge_iter it = {0, 0};
		for (struct snr_dep_edge ek; snr_deps_edge_next(d, &it, &ek);) {
			const struct snr_dep_edge *e = &ek;
			char rb[16];
			fprintf(f, "%8" PRIu64 " <- %-8" PRIu64 "  %-4s  %s\n", (uint64_t)e->consumer, (uint64_t)e->producer,
				e->kind == SNR_DEP_REG ? "reg" : "mem",
				e->kind == SNR_DEP_REG ? reg_name(d, e->reg, rb, sizeof(rb)) : snr_deps_space_name(d, e->space));
		}
	}
}

/* The DMA whose ISSUE is instruction i, or NULL (DMAs are in issue order). */
int snr_deps_parse_count(const char *arg, const char *cmd, const char *opt, unsigned *out)
{
	uint64_t v;
	if (!snr_parse_u64(arg, &v, false) || !v || v > UINT32_MAX) {
		snr_err("analyze %s: %s needs a positive count, not '%s'", cmd, opt, arg);
		return -1;
	}
	*out = (unsigned)v;
	return 0;
}

static const char deps_usage[] =
	"usage: snr analyze deps T.snrt|M.snrm [--dot FILE] [--json] [--edges] [--max-chain K]\n"
	"                        [--top N] [--sim NAME] [--config M.json]\n"
	"\n"
	"The dynamic dependency graph of a replayed window through registers (x registers and\n"
	"sync flags) and memory (core, VMEM, HBM, by byte range). Conservative: each instruction\n"
	"depends on the last producer of each input. Relaxed: a DMA ISSUE depends on the DMA that\n"
	"brought its transitive inputs into memory, through at most K lightweight scalar\n"
	"instructions (default 16). Per DMA: its backtail, how many instructions and cycles\n"
	"earlier it could issue. Then the N (default 10) most frequent dependencies by pc:\n"
	"the edges grouped by consumer pc, producer pc, kind and what. Host code (x86-64 traces\n"
	"replayed by the unicorn simulator) has no DMAs: the graph and that list are its answer.\n"
	"\n"
	"  --dot FILE     write a DMA-centric Graphviz graph\n"
	"  --json         machine-readable output (docs/analyses.md, \"deps\")\n"
	"  --edges        also list every edge (consumer <- producer)\n"
	"  --max-chain K  the lightweight threshold\n"
	"  --top N        the N most frequent dependencies by pc (0: none)\n";

int snr_analyze_deps(int argc, char **argv)
{
	static const struct option opts[] = {{"dot", required_argument, NULL, 'd'},
					     {"json", no_argument, NULL, 'j'},
					     {"edges", no_argument, NULL, 'e'},
					     {"max-chain", required_argument, NULL, 'k'},
					     {"top", required_argument, NULL, 't'},
					     {"sim", required_argument, NULL, 's'},
					     {"config", required_argument, NULL, 'c'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *dot = NULL;
	unsigned top = 10;
	uint64_t top64;
	bool json = false, edges = false;
	struct snr_deps_opts o = {0};
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'd': dot = optarg; break;
		case 'j': json = true; break;
		case 'e': edges = true; break;
		case 'k':
			if (snr_deps_parse_count(optarg, "deps", "--max-chain", &o.max_chain))
				return 2;
			break;
		case 't':
			if (!snr_parse_u64(optarg, &top64, false) || top64 > UINT32_MAX) {
				snr_err("analyze deps: --top needs a count, not '%s'", optarg);
				return 2;
			}
			top = (unsigned)top64;
			break;
		case 's': o.sim = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 'h': fputs(deps_usage, stdout); return 0;
		default: fputs(deps_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(deps_usage, stderr);
		return 2;
	}
	struct snr_deps d;
	char err[4096];
	o.want_edges = edges;
	if (snr_deps_run(&d, argv[optind], &o, err, sizeof(err))) {
		snr_err("analyze deps: %s", err);
		snr_deps_free(&d);
		return 1;
	}
	int rc = 0;
	if (json)
		print_json(stdout, &d, edges, top);
	else
		print_text(stdout, &d, edges, top);
	if (dot && snr_deps_write_dot(dot, &d))
		rc = 1;
	snr_deps_free(&d);
	return rc;
}
