/*
 * record_sim.c: the target's side of `snr record --method sim`.
 *
 * With --method sim the recorder runs the window in the ISA's simulator
 * and asks the halted target only for what the simulation reads first:
 * registers at the breakpoint, code and input bytes on their first use.
 * Reads go through a cache of 4 KiB pages (one 'm' exchange brings a page,
 * so walking an array costs one request per page, not one per element).
 * The target stays where the breakpoint stopped it while the simulation
 * runs ahead; this file logs the pcs the simulation passed and then brings
 * the target to a window index for real, cheaply: to reach index i from
 * index t it picks the j in (t, i] that minimizes
 *
 *     4 * (times pcs[j] occurs in (t, j])  +  (i - j)
 *
 * (a continue to a breakpoint at pcs[j] per occurrence, stepping off the
 * breakpoint between them, then i - j single steps), or plain stepping
 * when that is cheaper. A window that ends after a loop reaches its end
 * with a handful of requests; one that ends inside a long loop pays a
 * request per iteration still to come, as a breakpoint has no hit count in
 * GDB's protocol. Every stop is checked against the simulation's pcs.
 */
#include "recorder/record_sim.h"

#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

#define PAGE 4096u

struct page {
	uint64_t base; /* PAGE-aligned; UINT64_MAX: empty slot */
	uint8_t *bytes; /* NULL: the page cannot be read whole */
};

struct snr_ahead {
	struct snr_ahead_log log; /* first: record_sim.h's inline snr_ahead_log_pc() */
	const struct snr_dbg_ops *dbg;
	struct snr_dbg *d;
	struct snr_ahead_stats st;
	struct page *pages;
	size_t npages, cap;
	uint64_t *hkey; /* advance()'s hit counts, by pc */
	uint32_t *hval;
	size_t hcap;
	bool no_hit_count; /* cont_to_hit said the target cannot count hits */
	uint64_t *seen; /* pcs logged since the target last moved, + 1 (0: empty slot) */
	size_t nseen, seen_cap;
	struct snr_dbg_stop diverged_stop; /* where the last divergence left the target */
};

static void forget_seen(struct snr_ahead *a);
static bool counts_hits(const struct snr_ahead *a);

struct snr_ahead *snr_ahead_new(const struct snr_dbg_ops *dbg, struct snr_dbg *d)
{
	struct snr_ahead *a = snr_xcalloc(1, sizeof(*a));
	a->dbg = dbg;
	a->d = d;
	a->log.counts_hits = counts_hits(a);
	return a;
}

void snr_ahead_free(struct snr_ahead *a)
{
	if (!a)
		return;
	for (size_t i = 0; i < a->cap; i++)
		free(a->pages[i].bytes);
	free(a->pages);
	free(a->log.pcs);
	free(a->hkey);
	free(a->hval);
	free(a->seen);
	free(a);
}

struct snr_ahead_stats *snr_ahead_stats(struct snr_ahead *a) { return &a->st; }

const struct snr_dbg_stop *snr_ahead_diverged_stop(const struct snr_ahead *a) { return &a->diverged_stop; }

void snr_ahead_restart(struct snr_ahead *a, uint64_t index)
{
	forget_seen(a);
	a->log.npcs = 0;
	a->log.first = index;
	for (size_t i = 0; i < a->cap; i++) {
		free(a->pages[i].bytes);
		a->pages[i].bytes = NULL;
		a->pages[i].base = UINT64_MAX;
	}
	a->npages = 0;
}

static size_t hash64(uint64_t v, size_t cap) { return (size_t)((v * 0x9e3779b97f4a7c15ull) >> 17) & (cap - 1); }

static struct page *page_slot(struct snr_ahead *a, uint64_t base)
{
	if (a->npages * 2 >= a->cap) {
		struct page *old = a->pages;
		size_t oldcap = a->cap;
		a->cap = a->cap ? a->cap * 2 : 256;
		a->pages = snr_xcalloc(a->cap, sizeof(*a->pages));
		for (size_t i = 0; i < a->cap; i++)
			a->pages[i].base = UINT64_MAX;
		for (size_t i = 0; i < oldcap; i++)
			if (old[i].base != UINT64_MAX) {
				size_t h = hash64(old[i].base, a->cap);
				while (a->pages[h].base != UINT64_MAX)
					h = (h + 1) & (a->cap - 1);
				a->pages[h] = old[i];
			}
		free(old);
	}
	size_t h = hash64(base, a->cap);
	while (a->pages[h].base != UINT64_MAX && a->pages[h].base != base)
		h = (h + 1) & (a->cap - 1);
	return &a->pages[h];
}

static int read_target(struct snr_ahead *a, uint64_t addr, void *buf, size_t len, char *err, size_t errlen)
{
	a->st.requests++;
	a->st.fetches++;
	if (a->dbg->read_mem(a->d, addr, buf, len)) {
		snr_fmt(err, errlen, "%s", a->dbg->error(a->d));
		return -1;
	}
	a->st.bytes_fetched += len;
	return 0;
}

int snr_ahead_fetch(struct snr_ahead *a, uint64_t addr, void *buf, size_t len, char *err, size_t errlen)
{
	uint64_t base = addr & ~(uint64_t)(PAGE - 1);
	if (len > PAGE || addr + len > base + PAGE) /* large, or across pages: as it is */
		return read_target(a, addr, buf, len, err, errlen);
	struct page *p = page_slot(a, base);
	if (p->base == UINT64_MAX) {
		p->base = base;
		p->bytes = snr_xmalloc(PAGE);
		a->npages++;
		if (read_target(a, base, p->bytes, PAGE, err, errlen)) {
			/* the page runs past the end of a memory: exact reads only */
			free(p->bytes);
			p->bytes = NULL;
		}
	}
	if (!p->bytes)
		return read_target(a, addr, buf, len, err, errlen);
	memcpy(buf, p->bytes + (addr - base), len);
	return 0;
}

/* Adds pc to the pcs seen since the target last moved; true if it was not there.
 * Not inlined: only a target that cannot count hits asks, and inlined it made
 * snr_ahead_log_pc, called per instruction, save and restore registers it
 * does not otherwise need. */
__attribute__((noinline)) static bool see_pc(struct snr_ahead *a, uint64_t pc)
{
	if (a->nseen * 2 >= a->seen_cap) {
		uint64_t *old = a->seen;
		size_t oldcap = a->seen_cap;
		a->seen_cap = oldcap ? oldcap * 2 : 1024;
		a->seen = snr_xcalloc(a->seen_cap, sizeof(*a->seen));
		for (size_t k = 0; k < oldcap; k++)
			if (old[k]) {
				size_t h = hash64(old[k], a->seen_cap);
				while (a->seen[h])
					h = (h + 1) & (a->seen_cap - 1);
				a->seen[h] = old[k];
			}
		free(old);
	}
	size_t h = hash64(pc + 1, a->seen_cap);
	while (a->seen[h] && a->seen[h] != pc + 1)
		h = (h + 1) & (a->seen_cap - 1);
	if (a->seen[h])
		return false;
	a->seen[h] = pc + 1;
	a->nseen++;
	return true;
}

static void forget_seen(struct snr_ahead *a)
{
	if (a->nseen)
		memset(a->seen, 0, a->seen_cap * sizeof(*a->seen));
	a->nseen = 0;
}

/*
 * A target that counts breakpoint hits (snr device, ptrace) reaches any
 * index with one continue, so a checkpoint is due once `stride`
 * instructions are pending. One that cannot (QEMU's stubs, gdbserver) pays
 * about four requests per arrival at the breakpoint's pc: inside a loop, a
 * checkpoint costs four requests per iteration since the last one (a
 * 100k-instruction window of tests/rec/rv_rec.c's loop: ~10,000 requests of
 * the window's 12,000 under qemu). There the checkpoint waits, up to
 * 16 strides, for an instruction whose pc the log has not seen since the
 * target last moved: a loop's exit, which one continue reaches.
 */
/* Whether the target reaches any arrival at a breakpoint with one continue. */
static bool counts_hits(const struct snr_ahead *a)
{
	return a->dbg->abi_version >= 3 && a->dbg->cont_to_hit && !a->no_hit_count;
}

bool snr_ahead_stride_past(const struct snr_ahead *a, uint64_t stride)
{
	if (!a->no_hit_count || a->log.npcs > 16 * stride)
		return true;
	return a->log.new_pc;
}

void snr_ahead_log_more(struct snr_ahead *a, uint64_t index, uint64_t pc)
{
	if (index < a->log.first + a->log.npcs)
		return; /* logged already */
	/* only a target that cannot count hits waits for a new pc (a hash
	 * insert per instruction, 2.7% of a 10M TA1 recording's CPU, is
	 * not spent on one that can); the set is emptied whenever the target
	 * moves, so it is whole from the move on where the target turns out
	 * not to count */
	if (a->log.npcs == a->log.pcs_cap) {
		a->log.pcs_cap = a->log.pcs_cap ? a->log.pcs_cap * 2 : 4096;
		a->log.pcs = snr_xrealloc(a->log.pcs, a->log.pcs_cap * sizeof(*a->log.pcs));
	}
	a->log.pcs[a->log.npcs++] = pc;
	a->log.new_pc = counts_hits(a) ? false : see_pc(a, pc);
}

uint64_t snr_ahead_pending(const struct snr_ahead *a) { return a->log.npcs; }
uint64_t snr_ahead_target_index(const struct snr_ahead *a) { return a->log.first; }

/* Drops the log up to the target's new position `index`. */
static void passed(struct snr_ahead *a, uint64_t index)
{
	forget_seen(a);
	size_t k = (size_t)(index - a->log.first);
	memmove(a->log.pcs, a->log.pcs + k, (a->log.npcs - k) * sizeof(*a->log.pcs));
	a->log.npcs -= k;
	a->log.first = index;
}

void snr_ahead_target_stepped(struct snr_ahead *a)
{
	forget_seen(a);
	if (a->log.npcs > 0)
		passed(a, a->log.first + 1);
	else
		a->log.first++;
}

static int diverged(struct snr_ahead *a, uint64_t index, const struct snr_dbg_stop *s, const char *how, char *err,
		    size_t errlen)
{
	uint64_t want = index - a->log.first < a->log.npcs ? a->log.pcs[index - a->log.first] : 0;
	const char *kind = s->kind == SNR_DBG_STOP_TRAP	     ? "stopped"
			   : s->kind == SNR_DBG_STOP_SIGNAL  ? "took a signal"
			   : s->kind == SNR_DBG_STOP_EXITED  ? "exited"
			   : s->kind == SNR_DBG_STOP_KILLED  ? "was killed"
							     : "timed out";
	snr_fmt(err, errlen,
		"the target diverged from the simulation at instruction %llu: %s, it %s at pc 0x%llx where the simulation "
		"had 0x%llx",
		(unsigned long long)index, how, kind, (unsigned long long)s->pc, (unsigned long long)want);
	a->diverged_stop = *s;
	return SNR_AHEAD_DIVERGED;
}

static int step_target(struct snr_ahead *a, uint64_t *cur, char *err, size_t errlen)
{
	struct snr_dbg_stop s;
	a->st.requests++;
	a->st.target_steps++;
	if (a->dbg->step(a->d, &s)) {
		snr_fmt(err, errlen, "stepping the target at instruction %llu: %s", (unsigned long long)*cur,
			a->dbg->error(a->d));
		return -1;
	}
	(*cur)++;
	uint64_t want = a->log.pcs[*cur - a->log.first];
	if (s.kind != SNR_DBG_STOP_TRAP || s.pc != want)
		return diverged(a, *cur, &s, "single-stepped", err, errlen);
	return 0;
}

/* Continues the selected thread alone where the backend can. */
static int cont_target(struct snr_ahead *a, struct snr_dbg_stop *s)
{
	a->st.requests++;
	a->st.target_conts++;
	if (a->dbg->abi_version >= 3 && a->dbg->cont_selected)
		return a->dbg->cont_selected(a->d, 0, s);
	return a->dbg->cont(a->d, 0, s);
}

int snr_ahead_advance(struct snr_ahead *a, uint64_t index, char *err, size_t errlen)
{
	uint64_t t = a->log.first;
	if (index < t || index - t >= a->log.npcs) {
		snr_fmt(err, errlen, "internal: the target is at instruction %llu, asked for %llu with %zu logged",
			(unsigned long long)t, (unsigned long long)index, a->log.npcs);
		return -1;
	}
	uint64_t n = index - t;
	if (n == 0)
		return 0;
	/* the cheapest breakpoint */
	size_t cap = 16;
	while (cap < 2 * n)
		cap *= 2;
	if (cap > a->hcap) {
		free(a->hkey);
		free(a->hval);
		a->hkey = snr_xmalloc(cap * sizeof(*a->hkey));
		a->hval = snr_xmalloc(cap * sizeof(*a->hval));
		a->hcap = cap;
	}
	/* a target that counts hits reaches any arrival with one continue:
	 * its cost needs no hit count (counting them, a hash per pending pc,
	 * was 2% of a 10M TA1 recording's CPU) */
	bool counts = counts_hits(a);
	if (!counts)
		memset(a->hval, 0, cap * sizeof(*a->hval));
	uint64_t best_cost = n, best_j = 0;
	/* there a breakpoint at pcs[j] costs 4 + (n - j), 3 more at pcs[0]'s pc:
	 * at most 7 for j = n, at least 8 for any j <= n - 4, so the first j of
	 * the least cost is among the last four (scanning every pending pc was
	 * 19 of the 1,227 million instructions of the 1M serving window's
	 * recording, callgrind) */
	for (uint64_t j = counts && n > 4 ? n - 3 : 1; j <= n; j++) {
		uint64_t pc = a->log.pcs[j];
		uint64_t cost = (a->log.pcs[0] == pc ? 3 : 0) + (n - j);
		if (counts) {
			cost += 4;
		} else {
			size_t h = hash64(pc, cap);
			while (a->hval[h] && a->hkey[h] != pc)
				h = (h + 1) & (cap - 1);
			a->hkey[h] = pc;
			cost += 4 * (uint64_t)++a->hval[h];
		}
		if (cost < best_cost) {
			best_cost = cost;
			best_j = j;
		}
	}
	uint64_t cur = t;
	if (best_j) {
		uint64_t bp = a->log.pcs[best_j];
		uint64_t target = t + best_j;
		a->st.requests++;
		if (a->dbg->set_breakpoint(a->d, bp)) {
			snr_fmt(err, errlen, "setting a breakpoint at 0x%llx: %s", (unsigned long long)bp, a->dbg->error(a->d));
			return -1;
		}
		bool set = true;
		while (cur < target) {
			if (a->log.pcs[cur - t] == bp) { /* step off the breakpoint */
				a->st.requests += 2;
				if (a->dbg->clear_breakpoint(a->d, bp))
					goto bp_failed;
				set = false;
				int sr = step_target(a, &cur, err, errlen);
				if (sr)
					return sr;
				continue;
			}
			if (!set) {
				if (a->dbg->set_breakpoint(a->d, bp))
					goto bp_failed;
				set = true;
			}
			struct snr_dbg_stop s;
			uint64_t next = cur + 1;
			while (next < target && a->log.pcs[next - t] != bp)
				next++;
			if (counts) {
				uint64_t hits = 0;
				for (uint64_t k = cur + 1; k <= target; k++)
					hits += a->log.pcs[k - t] == bp;
				a->st.requests += 2;
				a->st.target_conts++;
				int r = a->dbg->cont_to_hit(a->d, bp, hits, &s);
				if (r < 0) {
					snr_fmt(err, errlen, "continuing the target to arrival %llu at 0x%llx: %s",
						(unsigned long long)hits, (unsigned long long)bp, a->dbg->error(a->d));
					return -1;
				}
				if (r == 0) {
					if (s.kind != SNR_DBG_STOP_TRAP || s.pc != bp) {
						int dr = diverged(a, target, &s, "continued to a breakpoint", err, errlen);
						a->dbg->clear_breakpoint(a->d, bp);
						return dr;
					}
					cur = target;
					continue;
				}
				a->st.requests -= 2;
				a->st.target_conts--;
				a->no_hit_count = true; /* the target cannot: one arrival at a time */
				a->log.counts_hits = false;
				counts = false;
			}
			if (cont_target(a, &s)) {
				snr_fmt(err, errlen, "continuing the target to 0x%llx: %s", (unsigned long long)bp,
					a->dbg->error(a->d));
				return -1;
			}
			if (s.kind != SNR_DBG_STOP_TRAP || s.pc != bp) {
				int dr = diverged(a, next, &s, "continued to a breakpoint", err, errlen);
				a->dbg->clear_breakpoint(a->d, bp);
				return dr;
			}
			cur = next;
		}
		a->st.requests++;
		if (set && a->dbg->clear_breakpoint(a->d, bp))
			goto bp_failed;
	}
	while (cur < index) {
		int sr = step_target(a, &cur, err, errlen);
		if (sr)
			return sr;
	}
	passed(a, index);
	return 0;
bp_failed:
	snr_fmt(err, errlen, "breakpoint at 0x%llx: %s", (unsigned long long)a->log.pcs[best_j],
		a->dbg->error(a->d));
	return -1;
}
