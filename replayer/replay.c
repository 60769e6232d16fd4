/*
 * replay.c: see replay.h.
 *
 * Two passes over the trace. The first is the trace-load command: every
 * captured register, every captured memory range and every code word goes
 * into the simulator before anything runs (captures are first uses, so
 * their values held at the window's start). The second steps the recorded
 * instructions: before each, the simulator's pc must be the recorded pc;
 * values the recorder saved after a step (system calls, counters) are applied
 * after it. At the end the registers and the memory the window wrote are
 * compared with the trace's digest. On any difference the report names the
 * instruction: the one that diverged, or the last one that wrote a register
 * or memory block whose final value differs.
 */
#include "replay.h"

#include <dlfcn.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/snr_line_pack.h"
#include "lib/snr_lines.h"
#include "lib/snr_partial.h"
#include "lib/snr_config.h"
#include "lib/snr_trace.h"
#include "lib/snr_plugin.h"
#include "lib/snr_util.h"
#include "isa/snr_isa.h"
#include "replayer/metrics.h"
#include "replayer/metrics_write.h"
#include "replayer/window.h"
#include "sim/snr_cache.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


const struct snr_sim_ops *snr_sim_find(const char *name, const char *isa, char *err, size_t errlen)
{
	if (!name) {
		if (isa && !strcmp(isa, "ta1"))
			return &snr_sim_ta1;
		if (isa && !strcmp(isa, "x86-64"))
			return &snr_sim_unicorn;
		if (isa && !strcmp(isa, "aarch64"))
			return &snr_sim_unicorn_aarch64;
		snr_fmt(err, errlen, "no simulator in snr replays %s traces; name one with --sim PATH.so",
			isa ? isa : "(unknown ISA)");
		return NULL;
	}
	if (!strcmp(name, "ta1"))
		return &snr_sim_ta1;
	if (!strcmp(name, "unicorn")) /* one engine per ISA, under one name */
		return isa && !strcmp(isa, "aarch64") ? &snr_sim_unicorn_aarch64 : &snr_sim_unicorn;
	if (!strchr(name, '/')) {
		snr_fmt(err, errlen, "unknown simulator '%s' (ta1, unicorn, or a path to a plugin .so)", name);
		return NULL;
	}
	void *h;
	const struct snr_sim_ops *ops = snr_plugin_open(name, "snr_sim_plugin", "simulator", "sim/snr_sim.h",
							SNR_SIM_ABI_MIN_VERSION, SNR_SIM_ABI_VERSION, &h, err, errlen);
	if (!ops)
		return NULL;
	/* Every method but run is required: a NULL one would crash in the middle of a replay. */
	const char *missing = !ops->name ? "name" : !ops->isa ? "isa" : !ops->create ? "create"
		: !ops->destroy ? "destroy" : !ops->error ? "error" : !ops->attach_tracker ? "attach_tracker"
		: !ops->set_reg ? "set_reg" : !ops->get_reg ? "get_reg" : !ops->load_mem ? "load_mem"
		: !ops->read_mem ? "read_mem" : !ops->load_code ? "load_code" : !ops->step ? "step"
		: !ops->finish ? "finish" : NULL;
	if (missing) {
		snr_fmt(err, errlen, "%s: snr_sim_plugin.%s is NULL; every member but run is required", name, missing);
		dlclose(h);
		return NULL;
	}
	return ops; /* the library stays loaded for the life of the process */
}

/* ---- the replayer's own tracker: totals and last writers, forwarding ------ */

#define BLOCK SNR_TRACE_DIGEST_BLOCK

struct block_writer {
	uint64_t block; /* address / BLOCK */
	uint32_t key;
	int64_t index;
};

/* Cache misses of one instruction address (--cache-report). */
struct pc_misses {
	uint64_t pc; /* pc + 1: 0 marks an empty slot */
	uint64_t accesses, l1_misses, l2_misses;
};

struct collector {
	struct snr_replay_result *r;
	struct snr_cache *cache; /* NULL unless a cache report was asked for */
	const struct snr_window *win; /* the window's pcs, by instruction index */
	uint64_t npcs;
	struct pc_misses *pm;
	size_t pm_cap, pm_n;
	struct snr_metrics_writer *metrics; /* events forwarded with direct calls, if any */
	const struct snr_tracker *fwd;      /* the caller's tracker, if any */
	int64_t *last_reg_writer;
	size_t nregs;
	struct block_writer *bw; /* open-addressing map: (key, block) -> last writer */
	size_t bw_cap, bw_n;
	/* The slots written last, by the block's low bits (all NULL after the
	 * map grew): most writes go to a block written shortly before. */
	struct block_writer *bw_recent[64];
};

static struct block_writer *bw_slot(struct collector *c, uint32_t key, uint64_t block)
{
	if ((c->bw_n + 1) * 2 > c->bw_cap) {
		size_t old = c->bw_cap;
		struct block_writer *ob = c->bw;
		c->bw_cap = c->bw_cap ? c->bw_cap * 2 : 1024;
		c->bw = snr_xcalloc(c->bw_cap, sizeof(*c->bw));
		c->bw_n = 0;
		memset(c->bw_recent, 0, sizeof(c->bw_recent));
		for (size_t i = 0; i < old; i++)
			if (ob[i].index) {
				struct block_writer *s = bw_slot(c, ob[i].key, ob[i].block);
				*s = ob[i];
				c->bw_n++;
			}
		free(ob);
	}
	size_t h = (size_t)(((block * 0x9e3779b97f4a7c15ull) ^ key) >> 7) & (c->bw_cap - 1);
	while (c->bw[h].index && (c->bw[h].block != block || c->bw[h].key != key))
		h = (h + 1) & (c->bw_cap - 1);
	return &c->bw[h];
}

#define FWD(name, type)                                                          \
	static void c_##name(void *u, const type *e)                             \
	{                                                                        \
		struct collector *c = u;                                         \
		if (c->metrics)                                                  \
			snr_metrics_on_##name(c->metrics, e);                    \
		if (c->fwd && c->fwd->on_##name)                                 \
			c->fwd->on_##name(c->fwd->user, e);                      \
		collect_##name(c, e);                                            \
	}

static void collect_issue(struct collector *c, const struct snr_ev_insn *e) { (void)c, (void)e; }
static void collect_retire(struct collector *c, const struct snr_ev_insn *e) { (void)c, (void)e; }
static void collect_busy(struct collector *c, const struct snr_ev_busy *e) { (void)c, (void)e; }
static void collect_stall(struct collector *c, const struct snr_ev_stall *e)
{
	c->r->stall_cycles[e->cause] += e->cycles;
}
static void collect_dma(struct collector *c, const struct snr_ev_dma *e)
{
	if (e->phase == SNR_DMA_ISSUED && e->issue_index >= 0) {
		c->r->dma_count++;
		c->r->dma_bytes += e->bytes;
	}
}
static void collect_reg(struct collector *c, const struct snr_ev_reg *e)
{
	if (e->write && e->reg < c->nregs)
		c->last_reg_writer[e->reg] = (int64_t)e->index;
}
static struct pc_misses *pm_slot(struct collector *c, uint64_t pc)
{
	if ((c->pm_n + 1) * 2 > c->pm_cap) {
		struct pc_misses *old = c->pm;
		size_t ocap = c->pm_cap;
		c->pm_cap = ocap ? ocap * 2 : 1024;
		c->pm = snr_xcalloc(c->pm_cap, sizeof(*c->pm));
		for (size_t i = 0; i < ocap; i++)
			if (old[i].pc)
				*pm_slot(c, old[i].pc - 1) = old[i];
		free(old);
	}
	size_t h = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 17) & (c->pm_cap - 1);
	while (c->pm[h].pc && c->pm[h].pc != pc + 1)
		h = (h + 1) & (c->pm_cap - 1);
	if (!c->pm[h].pc) {
		c->pm[h].pc = pc + 1;
		c->pm_n++;
	}
	return &c->pm[h];
}

static void collect_cache(struct collector *c, const struct snr_ev_mem *e)
{
	enum snr_cache_served lvl = snr_cache_access(c->cache, e->addr, e->bytes, NULL);
	struct pc_misses *m = pm_slot(c, e->index < c->npcs ? snr_window_pc(c->win, e->index) : 0);
	m->accesses++;
	m->l1_misses += lvl != SNR_CACHE_L1;
	m->l2_misses += lvl == SNR_CACHE_MEMORY;
}

static void collect_mem(struct collector *c, const struct snr_ev_mem *e)
{
	if (c->cache)
		collect_cache(c, e);
	if (!e->write || !e->bytes)
		return;
	uint32_t key = ((uint32_t)e->space << 16) | e->chip;
	for (uint64_t b = e->addr / BLOCK; b <= (e->addr + e->bytes - 1) / BLOCK; b++) {
		struct block_writer **r = &c->bw_recent[(b ^ key) & 63], *s = *r;
		if (s && s->block == b && s->key == key) {
			s->index = (int64_t)e->index + 1;
			continue;
		}
		s = *r = bw_slot(c, key, b); /* after it: a map that grew cleared bw_recent */
		if (!s->index)
			c->bw_n++;
		s->block = b;
		s->key = key;
		s->index = (int64_t)e->index + 1; /* 0 marks an empty slot */
	}
}

FWD(issue, struct snr_ev_insn)
FWD(retire, struct snr_ev_insn)
FWD(stall, struct snr_ev_stall)
FWD(dma, struct snr_ev_dma)
FWD(mem, struct snr_ev_mem)
FWD(reg, struct snr_ev_reg)
FWD(busy, struct snr_ev_busy)

/* `snr replay -o` (a metrics file and no caller's tracker): each event is
 * encoded by the writer's inline code and collected in one call. */
#define MW(name, type)                                                           \
	static void m_##name(void *u, const type *e)                             \
	{                                                                        \
		struct collector *c = u;                                         \
		collect_##name(c, e);                                            \
		snr_mw_##name(c->metrics, e); /* last: its rare calls are jumps */ \
	}
MW(issue, struct snr_ev_insn)
MW(retire, struct snr_ev_insn)
MW(stall, struct snr_ev_stall)
MW(dma, struct snr_ev_dma)
MW(mem, struct snr_ev_mem)
MW(reg, struct snr_ev_reg)
MW(busy, struct snr_ev_busy)

/* An instruction's events in one call: of them the collector keeps only the
 * register writes' last writer. */
static void m_insn(void *u, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread, unsigned nwrite)
{
	struct collector *c = u;
	for (unsigned k = nread; k < nread + nwrite; k++)
		if (regs[k] < c->nregs)
			c->last_reg_writer[regs[k]] = (int64_t)e->index;
	snr_mw_insn_regs(c->metrics, e, regs, nread, nwrite);
}

/* The collector alone (no metrics file, no caller's tracker): the events it
 * does nothing with are not asked for. */
#define COLLECT(name, type)                                                      \
	static void o_##name(void *u, const type *e) { collect_##name(u, e); }
COLLECT(stall, struct snr_ev_stall)
COLLECT(dma, struct snr_ev_dma)
COLLECT(mem, struct snr_ev_mem)
COLLECT(reg, struct snr_ev_reg)

/* ---- helpers -------------------------------------------------------------------- */

static void describe(struct snr_trace *t, const struct snr_isa_ops *isa, void *isa_self, const struct snr_window *w,
		     uint64_t pc, char *buf, size_t len)
{
	char sym[160], where[400], dis[128] = "?";
	snr_trace_symbolize(t, pc, sym, sizeof(sym));
	/* opened only on this failure path: said once if the program is missing */
	struct snr_lines *lines = snr_lines_open_trace(t, NULL);
	snr_lines_where(lines, pc, sym, where, sizeof(where));
	snr_lines_free(lines);
	unsigned n;
	const uint8_t *code = snr_window_code(w, pc, &n);
	if (isa_self && code)
		isa->disasm(isa_self, code, n, pc, dis, sizeof(dis));
	int n0 = snprintf(buf, len, "pc 0x%llx <%s>", (unsigned long long)pc, sym);
	size_t at = n0 > 0 && (size_t)n0 < len ? (size_t)n0 : 0;
	if (strcmp(where, sym))
		at += (size_t)snprintf(buf + at, len - at, " %s", where);
	if (at < len)
		snprintf(buf + at, len - at, ": %s", dis);
}

static void report_add(struct snr_replay_result *r, const char *fmt, ...) SNR_PRINTF(2, 3);
static void report_add(struct snr_replay_result *r, const char *fmt, ...)
{
	size_t used = strlen(r->report);
	if (used + 1 >= sizeof(r->report))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r->report + used, sizeof(r->report) - used, fmt, ap);
	va_end(ap);
}

static void hex_le(char *out, const uint8_t *p, size_t n)
{
	strcpy(out, "0x");
	for (size_t i = n; i-- > 0;)
		sprintf(out + 2 + 2 * (n - 1 - i), "%02x", p[i]);
}

static int by_misses(const void *a, const void *b)
{
	const struct pc_misses *x = a, *y = b;
	if (x->l1_misses != y->l1_misses)
		return x->l1_misses < y->l1_misses ? 1 : -1;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

static void cache_report(FILE *f, unsigned rows, struct collector *c, const struct snr_cache_cfg *cfg,
			 struct snr_trace *t, const struct snr_isa_ops *isa, void *isa_self, const struct snr_window *cm)
{
	struct pc_misses *v = snr_xcalloc(c->pm_n + 1, sizeof(*v));
	size_t n = 0;
	uint64_t acc = 0, m1 = 0, m2 = 0;
	for (size_t i = 0; i < c->pm_cap; i++)
		if (c->pm[i].pc) {
			v[n++] = c->pm[i];
			acc += c->pm[i].accesses;
			m1 += c->pm[i].l1_misses;
			m2 += c->pm[i].l2_misses;
		}
	snr_qsort(v, n, sizeof(*v), by_misses);
	fprintf(f,
		"cache model: L1 %llu B, %llu-way, %llu B lines; L2 %llu B, %llu-way; %llu accesses, %llu L1 misses "
		"(%.2f%%), %llu L2 misses\n",
		(unsigned long long)cfg->l1.size, (unsigned long long)cfg->l1.assoc, (unsigned long long)cfg->l1.line,
		(unsigned long long)cfg->l2.size, (unsigned long long)cfg->l2.assoc, (unsigned long long)acc,
		(unsigned long long)m1, acc ? 100.0 * (double)m1 / (double)acc : 0.0, (unsigned long long)m2);
	fprintf(f, "%10s %10s %10s  instruction\n", "accesses", "L1 misses", "L2 misses");
	for (size_t i = 0; i < n && i < rows && v[i].l1_misses; i++) {
		char at[300];
		describe(t, isa, isa_self, cm, v[i].pc - 1, at, sizeof(at));
		fprintf(f, "%10llu %10llu %10llu  %s\n", (unsigned long long)v[i].accesses,
			(unsigned long long)v[i].l1_misses, (unsigned long long)v[i].l2_misses, at);
	}
	free(v);
}

json_t *snr_replay_summary(const struct snr_replay_result *r)
{
	json_t *j = json_object();
	json_object_set_new(j, "instructions", json_integer((json_int_t)r->instructions));
	json_object_set_new(j, "cycles", json_integer((json_int_t)r->cycles));
	json_object_set_new(j, "ipc", json_real(r->cycles ? (double)r->instructions / (double)r->cycles : 0));
	json_t *st = json_object();
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		json_object_set_new(st, snr_stall_cause_name((enum snr_stall_cause)k),
				    json_integer((json_int_t)r->stall_cycles[k]));
	json_object_set_new(j, "stall_cycles", st);
	json_object_set_new(j, "dma_count", json_integer((json_int_t)r->dma_count));
	json_object_set_new(j, "dma_bytes", json_integer((json_int_t)r->dma_bytes));
	json_object_set_new(j, "verified", json_boolean(r->ok));
	json_object_set_new(j, "end_state_checked", json_boolean(r->end_state_checked));
	json_object_set_new(j, "truncated_trace", json_boolean(r->truncated));
	json_object_set_new(j, "truncated", json_boolean(r->truncated || r->interrupted));
	json_object_set_new(j, "program_exited", json_boolean(r->exited));
	return j;
}

json_t *snr_replay_json(const char *trace_path, const struct snr_replay_result *r)
{
	json_t *j = snr_replay_summary(r);
	json_object_set_new(j, "trace", json_string(trace_path));
	if (!r->ok)
		json_object_set_new(j, "report", json_string(r->report));
	return j;
}

/* ---- the replay ------------------------------------------------------------------ */

int snr_replay(const struct snr_replay_opts *o, struct snr_replay_result *r, char *err, size_t errlen)
{
	struct snr_trace *t = NULL;
	const struct snr_sim_ops *sim = NULL;
	struct snr_sim *s = NULL;
	struct snr_metrics_writer *mw = NULL;
	const struct snr_isa_ops *isa = NULL;
	void *isa_self = NULL;
	json_t *meta = NULL;
	char *cfg_json = NULL, *meta_out = NULL;
	struct collector col = {0};
	struct snr_window win = {0};
	int rc = -1;
	double t0 = now_s();

	memset(r, 0, sizeof(*r));
	t = snr_trace_open(o->trace_path, err, errlen);
	if (!t)
		return -1;
	char partial[256];
	if (snr_trace_partial_text(t, partial, sizeof(partial)) &&
	    snr_partial_check(o->trace_path, partial, err, errlen)) {
		snr_trace_close(t);
		return -1;
	}
	meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	const char *isa_name = json_string_value(json_object_get(meta, "isa"));
	unsigned chip = (unsigned)json_integer_value(json_object_get(meta, "chip"));
	json_int_t nchips = json_integer_value(json_object_get(meta, "chips"));
	struct snr_trace_id tid;
	snr_trace_id_of(t, &tid);
	if (o->expect_id && (tid.fnv1a64 != o->expect_id->fnv1a64 || tid.bytes != o->expect_id->bytes)) {
		char a[32], b[32];
		snr_fmt(err, errlen,
			"%s is not the trace %s was replayed from: its digest is %s (%llu bytes), the metrics file's "
			"is %s (%llu bytes); name the right trace with --trace PATH",
			o->trace_path, o->expect_from, snr_trace_id_text(&tid, a, sizeof(a)), (unsigned long long)tid.bytes,
			snr_trace_id_text(o->expect_id, b, sizeof(b)), (unsigned long long)o->expect_id->bytes);
		goto out;
	}
	/* Every config goes through the one validator, named by where it came
	 * from: the user's file, the caller's (a metrics file's), or the trace's. */
	{
		struct snr_config vcfg;
		struct snr_config_text ct = {0};
		char src[600];
		if (o->config_path) {
			/* checked as read (all its bytes, a NUL inside included) */
			if (snr_config_read(&ct, o->config_path, err, errlen))
				goto out;
			int bad = snr_config_check(&vcfg, &ct, err, errlen);
			if (!bad)
				cfg_json = snr_xstrdup(ct.text);
			snr_config_text_free(&ct);
			if (bad)
				goto out;
		} else if (o->config_json) {
			cfg_json = snr_xstrdup(o->config_json);
			ct.source = o->config_source ? o->config_source : "the machine config";
		} else if (json_object_get(meta, "config")) {
			cfg_json = json_dumps(json_object_get(meta, "config"), JSON_COMPACT);
			snr_fmt(src, sizeof(src), "%s (its recorded machine config)", o->trace_path);
			ct.source = src;
		}
		ct.text = cfg_json;
		ct.len = cfg_json ? strlen(cfg_json) : 0;
		if (cfg_json && !o->config_path && snr_config_check(&vcfg, &ct, err, errlen))
			goto out;
	}
	isa = isa_name ? snr_isa_find(isa_name) : NULL;
	if (isa)
		isa_self = isa->create(cfg_json, err, errlen);
	sim = o->sim_ops ? o->sim_ops : snr_sim_find(o->sim, isa_name, err, errlen);
	if (!sim)
		goto out;
	if (isa_name && strcmp(sim->isa, isa_name)) {
		snr_fmt(err, errlen, "simulator %s replays %s traces; this trace is %s", sim->name, sim->isa, isa_name);
		goto out;
	}
	s = sim->create(cfg_json, chip, nchips > 0 ? (unsigned)nchips : 1, err, errlen);
	if (!s)
		goto out;

	size_t nregs = snr_trace_nregs(t);
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	col.r = r;
	col.nregs = nregs;
	col.last_reg_writer = snr_xcalloc(nregs, sizeof(*col.last_reg_writer));
	for (size_t i = 0; i < nregs; i++)
		col.last_reg_writer[i] = -1;
	col.fwd = o->tracker;
	struct snr_cache_cfg cache_cfg;
	if (o->cache_report) {
		if (snr_cache_cfg_parse(&cache_cfg, cfg_json, err, errlen))
			goto out;
		col.cache = snr_cache_new(&cache_cfg);
	}
	if (o->metrics_path) {
		json_t *m = json_object();
		json_object_set_new(m, "format", json_string("snr metrics"));
		json_object_set_new(m, "trace", json_string(o->trace_path));
		char idt[32];
		json_object_set_new(m, "trace_digest", json_string(snr_trace_id_text(&tid, idt, sizeof(idt))));
		json_object_set_new(m, "trace_bytes", json_integer((json_int_t)tid.bytes));
		json_object_set_new(m, "simulator", json_string(sim->name));
		json_object_set(m, "trace_meta", meta);
		if (cfg_json)
			json_object_set_new(m, "config", json_loads(cfg_json, 0, NULL));
		meta_out = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(m);
		mw = snr_metrics_create(o->metrics_path, meta_out, err, errlen);
		if (!mw)
			goto out;
		snr_metrics_write_trace_tables(mw, t);
		col.metrics = mw;
	}
	struct snr_tracker tr = {
		.abi_version = SNR_TRACKER_ABI_VERSION,
		.user = &col,
		.on_issue = c_issue,
		.on_retire = c_retire,
		.on_stall = c_stall,
		.on_dma = c_dma,
		.on_mem = c_mem,
		.on_reg = c_reg,
		.on_busy = c_busy,
	};
	if (!col.fwd && col.metrics)
		tr = (struct snr_tracker){
			.abi_version = SNR_TRACKER_ABI_VERSION,
			.user = &col,
			.on_issue = m_issue,
			.on_retire = m_retire,
			.on_stall = m_stall,
			.on_dma = m_dma,
			.on_mem = m_mem,
			.on_reg = m_reg,
			.on_busy = m_busy,
			.on_insn = m_insn,
		};
	else if (!col.fwd)
		tr = (struct snr_tracker){
			.abi_version = SNR_TRACKER_ABI_VERSION,
			.user = &col,
			.on_stall = o_stall,
			.on_dma = o_dma,
			.on_mem = o_mem,
			.on_reg = o_reg,
		};
	if (sim->attach_tracker(s, &tr)) {
		snr_fmt(err, errlen, "attaching the tracker: %s", sim->error(s));
		goto out;
	}

	/* Pass 1: trace load. The pcs, and the effects to apply after steps the
	 * simulator cannot compute, are kept for pass 2, which then reads no
	 * trace. */
	if (snr_window_load(t, sim, s, &win, err, errlen))
		goto out;
	r->recorded = win.n;
	r->truncated = snr_trace_truncated(t);
	r->interrupted = snr_trace_interrupted(t);
	if (win.n == 0) {
		snr_fmt(err, errlen, "%s holds no instructions", o->trace_path);
		goto out;
	}
	col.win = &win;
	col.npcs = win.n;

	/* Pass 2: run and compare, in runs that end at each step with effects to
	 * apply and at least every 64k instructions (for the progress line). */
	r->ok = true;
	double last_draw = 0;
	size_t next_post = 0;
	uint64_t at = 0;
	while (at < win.n) {
		if (next_post < win.npost && win.post[next_post].call && win.post[next_post].index == at) {
			/* a call the target ran as a unit (a vDSO function): its
			 * outputs, the pc at its return among them, instead of its code */
			if (snr_window_apply_post(sim, s, regs, &win.post[next_post++]))
				goto sim_fail;
			r->instructions++;
			at++;
			continue;
		}
		uint64_t end = at + 65536 < win.n ? at + 65536 : win.n;
		if (next_post < win.npost && win.post[next_post].index < end)
			end = win.post[next_post].index + !win.post[next_post].call;
		if (next_post < win.npost && win.post[next_post].unread && win.post[next_post].index < end) {
			/* memory the recorder could not read: up to the step, then it alone, on zeros there */
			if (at < win.post[next_post].index) {
				end = win.post[next_post].index;
			} else if (snr_window_unread_zeros(sim, s, regs, nregs, isa, isa_self, &win, &win.post[next_post],
							   err, errlen)) {
				goto out;
			}
		}
		struct snr_sim_run run;
		int src = snr_window_run(sim, s, &win, regs, at, end - at, &run);
		r->instructions += run.done;
		at += run.done;
		if (src && snr_window_error(&win)) {
			snr_fmt(err, errlen, "%s", snr_window_error(&win));
			goto out;
		}
		if (src) {
			char where[300];
			describe(t, isa, isa_self, &win, snr_window_pc(&win, at), where, sizeof(where));
			r->ok = false;
			report_add(r, "instruction %llu (%s) failed in the simulator: %s\n", (unsigned long long)at, where,
				   sim->error(s));
			break;
		}
		if (run.diverged) {
			char want[300], got[300];
			describe(t, isa, isa_self, &win, snr_window_pc(&win, at), want, sizeof(want));
			describe(t, isa, isa_self, &win, run.pc, got, sizeof(got));
			r->ok = false;
			report_add(r, "diverged at instruction %llu: the trace executed %s; the simulator is at %s\n",
				   (unsigned long long)at, want, got);
			if (at > 0)
				report_add(r, "the instruction before it (%llu) decided the path: its inputs differ from the "
					      "recording's\n",
					   (unsigned long long)at - 1);
			break;
		}
		if (next_post < win.npost && win.post[next_post].index == at - 1 && run.done) {
			if (snr_window_apply_post(sim, s, regs, &win.post[next_post++]))
				goto sim_fail;
		}
		if (run.exited) {
			r->exited = true;
			break;
		}
		if (o->progress && now_s() - last_draw > 0.2) {
			fprintf(stderr, "\rreplayed %llu of %llu instructions", (unsigned long long)r->instructions,
				(unsigned long long)r->recorded);
			last_draw = now_s();
		}
	}
	if (o->progress && last_draw > 0)
		fputc('\n', stderr);
	r->cycles = sim->finish(s);
	if (col.cache)
		cache_report(o->cache_report, o->cache_report_rows ? o->cache_report_rows : 20, &col, &cache_cfg, t, isa,
			     isa_self, &win);

	/* End state (not a partial trace's: a DIGEST beside an END that
	 * contradicts the steps describes an end they may not reach). */
	const uint8_t *const *dregs;
	size_t nblocks;
	const struct snr_trace_mem *blocks;
	const uint64_t *hashes;
	if (r->ok && !r->exited && !r->truncated && snr_trace_digest(t, &dregs, &nblocks, &blocks, &hashes)) {
		r->end_state_checked = true;
		unsigned bad = 0;
		for (size_t i = 0; i < nregs; i++) {
			uint8_t v[256];
			if (!dregs[i] || (int)i == win.pc_reg || regs[i].size > sizeof(v))
				continue;
			if (sim->get_reg(s, (unsigned)i, v, regs[i].size))
				continue; /* no value the simulator can compare (never captured nor written) */
			if (isa_name && !strcmp(isa_name, "x86-64") && !strcmp(regs[i].name, "eflags") && regs[i].size >= 2) {
				/* AF, PF and OF, which shifts, multiplies, logic and bit
				 * scans leave undefined, and which unicorn sets otherwise
				 * than the CPU: not compared, as at the recording's
				 * checkpoints (a window can end right after such an
				 * instruction: `and` leaves AF undefined) */
				v[0] = (uint8_t)((v[0] & ~0x14) | (dregs[i][0] & 0x14));
				v[1] = (uint8_t)((v[1] & ~0x08) | (dregs[i][1] & 0x08));
			}
			if (memcmp(v, dregs[i], regs[i].size)) {
				char a[600], b[600], at[300] = "";
				hex_le(a, dregs[i], regs[i].size);
				hex_le(b, v, regs[i].size);
				int64_t w = col.last_reg_writer[i];
				if (w >= 0)
					snprintf(at, sizeof(at), "; last written by instruction %lld", (long long)w);
				if (bad++ < 16)
					report_add(r, "end state: register %s is %s, the device had %s%s\n", regs[i].name, b,
						   a, at);
			}
		}
		uint8_t *buf = snr_xmalloc(BLOCK);
		for (size_t i = 0; i < nblocks; i++) {
			if (sim->read_mem(s, (uint8_t)blocks[i].space, blocks[i].chip, blocks[i].addr, buf, blocks[i].len)) {
				free(buf);
				goto sim_fail;
			}
			if (snr_trace_hash(buf, blocks[i].len) == hashes[i])
				continue;
			struct block_writer *bw =
				bw_slot(&col, ((uint32_t)blocks[i].space << 16) | blocks[i].chip, blocks[i].addr / BLOCK);
			char at[400] = "";
			if (bw->index) {
				uint64_t idx = (uint64_t)(bw->index - 1);
				snprintf(at, sizeof(at), "; last written by instruction %llu", (unsigned long long)idx);
			}
			if (bad++ < 32)
				report_add(r, "end state: memory [0x%llx, 0x%llx) differs from the device's%s\n",
					   (unsigned long long)blocks[i].addr,
					   (unsigned long long)(blocks[i].addr + blocks[i].len), at);
		}
		free(buf);
		if (bad) {
			r->ok = false;
			if (bad > 16)
				report_add(r, "(%u differences in all)\n", bad);
		}
	}
	r->seconds = now_s() - t0;
	if (mw && !r->ok) { /* a diverged replay's metrics would mislead: the file is not written */
		snr_metrics_abandon(mw);
		mw = NULL;
		report_add(r, "%s was not written (any file there before is unchanged)\n", o->metrics_path);
	}
	if (mw) {
		json_t *sj = snr_replay_summary(r);
		char *ss = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(sj);
		int frc = snr_metrics_finish(mw, ss, err, errlen);
		mw = NULL;
		free(ss);
		if (frc)
			goto out;
	}
	rc = 0;
	goto out;
sim_fail:
	snr_fmt(err, errlen, "simulator %s: %s", sim->name, sim->error(s));
out:
	if (mw)
		snr_metrics_abandon(mw);
	if (s)
		sim->destroy(s);
	if (isa_self)
		isa->destroy(isa_self);
	snr_trace_close(t);
	json_decref(meta);
	free(cfg_json);
	free(meta_out);
	free(col.last_reg_writer);
	free(col.bw);
	free(col.pm);
	snr_cache_free(col.cache);
	snr_window_free(&win);
	return rc;
}
