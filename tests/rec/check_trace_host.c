/*
 * check_trace_host.c: proves a host trace (x86-64, aarch64: any ISA whose
 * simulator reports memory events from its own execution, as the unicorn
 * engine does from its hooks) minimal and complete from the trace itself,
 * with an oracle independent of the recorder's ISA plugin:
 *
 *   memory complete: every byte an instruction reads (unicorn's read hook)
 *             was captured at or before it or written earlier in the window;
 *   memory minimal: every captured byte is read by the instruction it is
 *             attached to (the read hook), and was neither captured before
 *             nor written earlier in the window (the write hook, and the
 *             post-step memory of system calls);
 *   registers complete: the window is run twice more, every register the
 *             trace never captured filled with a different pattern each
 *             time; the register files after every step and the memory the
 *             window wrote must come out identical, so no uncaptured
 *             register influenced the window;
 *   registers minimal: every captured register is captured once, and no
 *             earlier instruction of the window changed its value (a write
 *             of the same value cannot be seen this way);
 *   faithful: the pc sequence is the recorded one, and the simulator's own
 *             poison checks pass.
 *
 * usage: check_trace_host T.snrt   (exit 0 and a summary line, or 1 and the
 * first violations)
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "replayer/replay.h"
#include "replayer/window.h"

static int violations;

#define VIOLATION(...)                                         \
	do {                                                   \
		if (violations++ < 20) {                       \
			fprintf(stderr, "check_trace_host: "); \
			fprintf(stderr, __VA_ARGS__);          \
			fputc('\n', stderr);                   \
		}                                              \
	} while (0)

struct range {
	uint64_t lo, hi;
};

struct step {
	uint64_t pc;
	uint16_t *regs; /* captured before it */
	unsigned nregs;
	struct range *mem;
	unsigned nmem;
	struct range *post_mem;
	unsigned npost_mem;
};

struct event {
	uint64_t index, addr, bytes;
	bool write;
};

struct events {
	struct event *e;
	size_t n, cap;
};

static void on_mem(void *u, const struct snr_ev_mem *m)
{
	struct events *v = u;
	if (v->n == v->cap) {
		v->cap = v->cap ? 2 * v->cap : 4096;
		v->e = snr_xrealloc(v->e, v->cap * sizeof(*v->e));
	}
	v->e[v->n++] = (struct event){m->index, m->addr, m->bytes, m->write != 0};
}

/* What one run saw: per step the register file after it (for the filled
 * runs), the steps at which each register's value changed first, the
 * memory events. */
struct run {
	uint8_t *vals;  /* steps x file bytes, register r at off[r] */
	uint8_t *have;  /* steps x registers: get_reg answered */
	int64_t *first_change; /* per register, -1 if never */
	struct events ev;
	uint64_t mem_hash; /* of every range the window wrote, at the end */
	uint64_t steps;
	bool failed;
	char err[1024];
};

/* A register's fill for run `pattern` (1 or 2). Flags registers get only
 * their status bits (and x86's direction flag) flipped: other bits would
 * change how the engine runs, not what the program computes. */
static void fill(const struct snr_trace_reg *r, int pattern, uint8_t *v)
{
	memset(v, pattern == 1 ? 0x00 : 0x5a, r->size);
	if (!strcmp(r->name, "eflags") || !strcmp(r->name, "rflags")) {
		uint64_t f = 0x202 | (pattern == 1 ? 0 : 0x0cd5); /* IF and bit 1 set; CF PF AF ZF SF DF OF */
		memcpy(v, &f, r->size < 8 ? r->size : 8);
	} else if (!strcmp(r->name, "cpsr") || !strcmp(r->name, "nzcv") || !strcmp(r->name, "pstate")) {
		uint64_t f = pattern == 1 ? 0 : 0xf0000000ull;
		memcpy(v, &f, r->size < 8 ? r->size : 8);
	} else if (!strcmp(r->name, "mxcsr") || !strcmp(r->name, "fpcr") || !strcmp(r->name, "fpsr")) {
		uint64_t f = !strcmp(r->name, "mxcsr") ? (pattern == 1 ? 0x1f80 : 0x7f80) /* rounding mode */
							: (pattern == 1 ? 0 : 0x00c00000);
		memcpy(v, &f, r->size < 8 ? r->size : 8);
	}
}

/* Runs the window through the simulator. pattern 0: only what the trace
 * captured; 1, 2: never-captured registers filled too. */
static void run_window(const struct snr_sim_ops *ops, const char *cfg, unsigned chip, unsigned nchips,
		       struct snr_trace *t, const struct step *steps, uint64_t nsteps, const bool *captured_ever,
		       int pattern, struct run *out)
{
	memset(out, 0, sizeof(*out));
	size_t nregs = snr_trace_nregs(t);
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	size_t file = 0;
	for (size_t r = 0; r < nregs; r++)
		file += regs[r].size;
	if (pattern) {
		out->vals = snr_xcalloc(nsteps + 1, file);
		out->have = snr_xcalloc(nsteps + 1, nregs);
	}
	out->first_change = snr_xcalloc(nregs, sizeof(int64_t));
	for (size_t r = 0; r < nregs; r++)
		out->first_change[r] = -1;
	struct snr_sim *s = ops->create(cfg, chip, nchips, out->err, sizeof(out->err));
	if (!s) {
		out->failed = true;
		return;
	}
	struct snr_tracker tr = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = &out->ev, .on_mem = on_mem};
	ops->attach_tracker(s, &tr);
	struct snr_ranges written = {0};
	uint8_t *prev = snr_xcalloc(nregs, 256), *cur = snr_xcalloc(1, 256);
	bool *have = snr_xcalloc(nregs, sizeof(bool));
	size_t next_post = 0;
	/* load: as the replayer's pass 1 */
	struct snr_window w;
	if (snr_window_load(t, ops, s, &w, out->err, sizeof(out->err)))
		goto fail_quiet;
	const int pc_reg = w.pc_reg;
	if (pattern)
		for (size_t r = 0; r < nregs; r++) {
			uint8_t v[256];
			if (captured_ever[r] || (int)r == pc_reg || regs[r].size > sizeof(v))
				continue;
			fill(&regs[r], pattern, v);
			ops->set_reg(s, (unsigned)r, v, regs[r].size); /* registers the engine keeps aside may refuse */
		}
	for (size_t r = 0; r < nregs; r++)
		have[r] = regs[r].size <= 256 && ops->get_reg(s, (unsigned)r, prev + 256 * r, regs[r].size) == 0;

	for (uint64_t i = 0; i < nsteps; i++) {
		/* one instruction at a time, as the replayer drives the simulator
		 * (with run(), a step that left a rep instruction mid-way is
		 * finished when the recording moved on) */
		struct snr_sim_run ro;
		if (snr_window_run(ops, s, &w, regs, i, 1, &ro))
			goto fail;
		if (ro.diverged) {
			snr_fmt(out->err, sizeof(out->err), "instruction %llu: the simulator is at 0x%llx, the trace at 0x%llx",
				(unsigned long long)i, (unsigned long long)ro.pc, (unsigned long long)steps[i].pc);
			goto fail_quiet;
		}
		const bool exited = ro.exited;
		out->steps = i + 1;
		/* post values: the recorder's copy of what a system call left */
		if (next_post < w.npost && w.post[next_post].index == i)
			snr_window_apply_post(ops, s, regs, &w.post[next_post++]);
		size_t off = 0;
		for (size_t r = 0; r < nregs; off += regs[r].size, r++) {
			if (regs[r].size > 256 || ops->get_reg(s, (unsigned)r, cur, regs[r].size))
				continue;
			if (pattern) {
				memcpy(out->vals + i * file + off, cur, regs[r].size);
				out->have[i * nregs + r] = 1;
			}
			if (have[r] && memcmp(cur, prev + 256 * r, regs[r].size) && out->first_change[r] < 0)
				out->first_change[r] = (int64_t)i;
			memcpy(prev + 256 * r, cur, regs[r].size);
			have[r] = true;
		}
		if (exited)
			break;
	}
	/* the memory the window wrote, at the end */
	for (size_t k = 0; k < out->ev.n; k++)
		if (out->ev.e[k].write)
			snr_ranges_add(&written, 0, out->ev.e[k].addr, out->ev.e[k].addr + out->ev.e[k].bytes);
	out->mem_hash = 0;
	const struct snr_range_list *l = snr_ranges_get(&written, 0);
	for (size_t k = 0; l && k < l->n; k++) {
		uint64_t n = l->r[k].hi - l->r[k].lo;
		uint8_t *b = snr_xmalloc(n);
		if (ops->read_mem(s, 0, 0, l->r[k].lo, b, n) == 0)
			out->mem_hash = out->mem_hash * 31 + (snr_trace_hash(&l->r[k].lo, 8) ^ snr_trace_hash(b, n));
		free(b);
	}
	goto done;
fail:
	snr_fmt(out->err, sizeof(out->err), "%s", ops->error(s));
fail_quiet:
	out->failed = true;
done:
	snr_window_free(&w);
	snr_ranges_free(&written);
	free(prev);
	free(cur);
	free(have);
	ops->destroy(s);
}

static bool overlaps(const struct snr_ranges *set, uint64_t lo, uint64_t hi)
{
	struct snr_range *miss = NULL;
	size_t n = 0, cap = 0;
	snr_ranges_missing(set, 0, lo, hi, &miss, &n, &cap);
	uint64_t missing = 0;
	for (size_t i = 0; i < n; i++)
		missing += miss[i].hi - miss[i].lo;
	free(miss);
	return missing != hi - lo;
}

static bool covered(const struct snr_ranges *set, uint64_t lo, uint64_t hi)
{
	struct snr_range *miss = NULL;
	size_t n = 0, cap = 0;
	snr_ranges_missing(set, 0, lo, hi, &miss, &n, &cap);
	free(miss);
	return n == 0;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: check_trace_host T.snrt\n");
		return 2;
	}
	char err[1024];
	struct snr_trace *t = snr_trace_open(argv[1], err, sizeof(err));
	if (!t) {
		fprintf(stderr, "check_trace_host: %s\n", err);
		return 1;
	}
	json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	const char *isa = json_string_value(json_object_get(meta, "isa"));
	if (!isa || !strcmp(isa, "ta1")) {
		fprintf(stderr, "check_trace_host: host traces only (tests/rec/check_trace checks TA1)\n");
		return 2;
	}
	const struct snr_sim_ops *ops = snr_sim_find(NULL, isa, err, sizeof(err));
	if (!ops) {
		fprintf(stderr, "check_trace_host: %s\n", err);
		return 1;
	}
	char *cfg = json_object_get(meta, "config") ? json_dumps(json_object_get(meta, "config"), JSON_COMPACT) : NULL;
	unsigned chip = (unsigned)json_integer_value(json_object_get(meta, "chip"));
	json_int_t nchips = json_integer_value(json_object_get(meta, "chips"));
	size_t nregs = snr_trace_nregs(t);

	/* the trace's steps: pcs and what was captured where */
	struct step *steps = NULL;
	uint64_t nsteps = 0, cap = 0;
	bool *captured_ever = snr_xcalloc(nregs, sizeof(bool));
	struct snr_trace_step st;
	int rc;
	while ((rc = snr_trace_next(t, &st)) == 1) {
		if (nsteps == cap) {
			cap = cap ? 2 * cap : 4096;
			steps = snr_xrealloc(steps, cap * sizeof(*steps));
		}
		struct step *s = &steps[nsteps++];
		memset(s, 0, sizeof(*s));
		s->pc = st.pc;
		s->nregs = st.nregs;
		s->regs = snr_xcalloc(st.nregs + 1, sizeof(uint16_t));
		for (unsigned i = 0; i < st.nregs; i++) {
			s->regs[i] = st.regs[i].reg;
			if (st.regs[i].reg < nregs)
				captured_ever[st.regs[i].reg] = true;
		}
		s->nmem = st.nmem;
		s->mem = snr_xcalloc(st.nmem + 1, sizeof(struct range));
		for (unsigned i = 0; i < st.nmem; i++)
			s->mem[i] = (struct range){st.mem[i].addr, st.mem[i].addr + st.mem[i].len};
		s->npost_mem = st.npost_mem;
		s->post_mem = snr_xcalloc(st.npost_mem + 1, sizeof(struct range));
		for (unsigned i = 0; i < st.npost_mem; i++)
			s->post_mem[i] = (struct range){st.post_mem[i].addr, st.post_mem[i].addr + st.post_mem[i].len};
	}
	if (rc < 0 || nsteps == 0) {
		fprintf(stderr, "check_trace_host: %s\n", rc < 0 ? snr_trace_error(t) : "no instructions");
		return 1;
	}

	/* 1. the window as recorded: the simulator's poison checks, then memory
	 * from its hooks and register changes */
	struct run main_run, a, b;
	run_window(ops, cfg, chip, nchips > 0 ? (unsigned)nchips : 1, t, steps, nsteps, captured_ever, 0, &main_run);
	if (main_run.failed)
		VIOLATION("the window does not replay as recorded: %s", main_run.err);
	struct snr_ranges captured = {0}, written = {0}, read_now = {0};
	uint64_t cap_bytes = 0, cap_regs = 0, reads = 0;
	size_t k = 0;
	for (uint64_t i = 0; i < main_run.steps; i++) {
		const struct step *s = &steps[i];
		/* the reads and writes of instruction i, from the hooks */
		size_t k0 = k;
		for (; k < main_run.ev.n && main_run.ev.e[k].index == i; k++)
			;
		/* What a capture must be read by: the instruction, and for a run of
		 * steps at one pc (a rep string instruction, whose captures cover all
		 * its iterations at its first step) the whole run. */
		if (i == 0 || steps[i - 1].pc != s->pc) {
			snr_ranges_free(&read_now);
			uint64_t j = i;
			for (size_t e = k0; e < main_run.ev.n && main_run.ev.e[e].index < main_run.steps; e++) {
				const struct event *ev = &main_run.ev.e[e];
				while (j + 1 < main_run.steps && steps[j + 1].pc == s->pc && ev->index > j)
					j++;
				if (ev->index > j)
					break;
				if (!ev->write)
					snr_ranges_add(&read_now, 0, ev->addr, ev->addr + ev->bytes);
			}
		}
		for (unsigned m = 0; m < s->nmem; m++) {
			const struct range *r = &s->mem[m];
			cap_bytes += r->hi - r->lo;
			if (overlaps(&written, r->lo, r->hi))
				VIOLATION("instruction %llu (pc 0x%llx): captured [0x%llx, 0x%llx), which the window wrote "
					  "earlier: not minimal",
					  (unsigned long long)i, (unsigned long long)s->pc, (unsigned long long)r->lo,
					  (unsigned long long)r->hi);
			if (overlaps(&captured, r->lo, r->hi))
				VIOLATION("instruction %llu: [0x%llx, 0x%llx) captured a second time: not minimal",
					  (unsigned long long)i, (unsigned long long)r->lo, (unsigned long long)r->hi);
			if (!covered(&read_now, r->lo, r->hi))
				VIOLATION("instruction %llu (pc 0x%llx): captured [0x%llx, 0x%llx), which it does not read: "
					  "not minimal",
					  (unsigned long long)i, (unsigned long long)s->pc, (unsigned long long)r->lo,
					  (unsigned long long)r->hi);
		}
		for (unsigned m = 0; m < s->nmem; m++)
			snr_ranges_add(&captured, 0, s->mem[m].lo, s->mem[m].hi);
		for (size_t e = k0; e < k; e++) {
			const struct event *ev = &main_run.ev.e[e];
			if (ev->write)
				continue;
			reads++;
			if (!covered(&captured, ev->addr, ev->addr + ev->bytes) &&
			    !covered(&written, ev->addr, ev->addr + ev->bytes)) {
				/* bytes may come partly from each */
				for (uint64_t x = ev->addr; x < ev->addr + ev->bytes; x++)
					if (!covered(&captured, x, x + 1) && !covered(&written, x, x + 1)) {
						VIOLATION("instruction %llu (pc 0x%llx) reads 0x%llx, neither captured nor "
							  "written earlier: not complete",
							  (unsigned long long)i, (unsigned long long)s->pc,
							  (unsigned long long)x);
						break;
					}
			}
		}
		for (size_t e = k0; e < k; e++)
			if (main_run.ev.e[e].write)
				snr_ranges_add(&written, 0, main_run.ev.e[e].addr,
					       main_run.ev.e[e].addr + main_run.ev.e[e].bytes);
		for (unsigned m = 0; m < s->npost_mem; m++)
			snr_ranges_add(&written, 0, s->post_mem[m].lo, s->post_mem[m].hi);
	}
	/* registers: captured once, and not changed before their capture */
	int64_t *capture_at = snr_xcalloc(nregs, sizeof(int64_t));
	for (size_t r = 0; r < nregs; r++)
		capture_at[r] = -1;
	for (uint64_t i = 0; i < nsteps; i++)
		for (unsigned m = 0; m < steps[i].nregs; m++) {
			unsigned r = steps[i].regs[m];
			cap_regs++;
			if (r >= nregs)
				continue;
			if (capture_at[r] >= 0)
				VIOLATION("register %s captured at instructions %lld and %llu: not minimal",
					  snr_trace_regs(t)[r].name, (long long)capture_at[r], (unsigned long long)i);
			else
				capture_at[r] = (int64_t)i;
			if (main_run.first_change[r] >= 0 && (uint64_t)main_run.first_change[r] < i)
				VIOLATION("register %s captured at instruction %llu, but instruction %lld changed it: not "
					  "minimal",
					  snr_trace_regs(t)[r].name, (unsigned long long)i, (long long)main_run.first_change[r]);
		}

	/* 2. registers complete: never-captured registers filled two ways */
	run_window(ops, cfg, chip, nchips > 0 ? (unsigned)nchips : 1, t, steps, nsteps, captured_ever, 1, &a);
	run_window(ops, cfg, chip, nchips > 0 ? (unsigned)nchips : 1, t, steps, nsteps, captured_ever, 2, &b);
	if (a.failed || b.failed)
		VIOLATION("with uncaptured registers filled, the window does not replay: %s", a.failed ? a.err : b.err);
	else if (a.steps != b.steps)
		VIOLATION("with uncaptured registers filled two ways, the windows ran %llu and %llu instructions",
			  (unsigned long long)a.steps, (unsigned long long)b.steps);
	else {
		/* A register the trace captured must come out the same in both runs.
		 * One it never captured starts as the fill; a bit still holding its
		 * fill in both runs was left alone, any other bit must agree. */
		const struct snr_trace_reg *regs = snr_trace_regs(t);
		size_t file = 0;
		for (size_t r = 0; r < nregs; r++)
			file += regs[r].size;
		bool reported = false;
		for (uint64_t i = 0; i < a.steps && !reported; i++) {
			size_t off = 0;
			for (size_t r = 0; r < nregs && !reported; off += regs[r].size, r++) {
				if (!a.have[i * nregs + r] || !b.have[i * nregs + r] || regs[r].size > 256)
					continue;
				const uint8_t *va = a.vals + i * file + off, *vb = b.vals + i * file + off;
				uint8_t fa[256], fb[256];
				fill(&regs[r], 1, fa);
				fill(&regs[r], 2, fb);
				for (unsigned byte = 0; byte < regs[r].size; byte++) {
					uint8_t differ = va[byte] ^ vb[byte];
					if (!captured_ever[r])
						differ &= (uint8_t)~((uint8_t)~(va[byte] ^ fa[byte]) & (uint8_t)~(vb[byte] ^ fb[byte]));
					if (differ) {
						VIOLATION("instruction %llu (pc 0x%llx): register %s after it depends on registers "
							  "the trace never captured: not complete",
							  (unsigned long long)i, (unsigned long long)steps[i].pc, regs[r].name);
						reported = true;
						break;
					}
				}
			}
		}
		if (a.mem_hash != b.mem_hash)
			VIOLATION("the memory the window wrote depends on registers the trace never captured: not complete");
	}
	unsigned filled = 0;
	for (size_t r = 0; r < nregs; r++)
		filled += !captured_ever[r];
	if (violations) {
		fprintf(stderr, "check_trace_host: %d violations\n", violations);
		return 1;
	}
	printf("check_trace_host: %llu instructions (%s): %llu memory reads, %llu bytes and %llu registers captured; "
	       "minimal and complete (%u uncaptured registers filled two ways)\n",
	       (unsigned long long)main_run.steps, isa, (unsigned long long)reads, (unsigned long long)cap_bytes,
	       (unsigned long long)cap_regs, filled);
	return 0;
}
