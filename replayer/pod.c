/*
 * pod.c: see pod.h.
 *
 * Every chip's trace is loaded into its chip of one ta1_machine (the GRM in
 * its pod mode, sim/grm_ta1.h), each chip's timing model on one fabric; the
 * chips run in the order of the device's scheduler (device/pod_sched.h), so a
 * DMA meets on the fabric every transfer it overlaps and a peer's signal
 * reaches a waiting chip when the peer's replay sends it.
 *
 * Between the shared instructions (DMAs and WAITs, which meet the fabric,
 * HBM and the peers' flags), a chip's instructions reach its own registers,
 * core memory, VMEM and MXU only: those private stretches run on the crew's
 * threads (pod_threads.h), every chip's at once, and the scheduler puts the
 * shared ones in its order on the caller's thread. Each chip's stretch
 * depends on its own state alone, so the replay is the same whatever the
 * thread count; the same algorithm runs on one thread.
 *
 * Sync flags start from the manifest's flags_at_start: a flag a chip's trace
 * captured at its first read may count a peer's signal sent inside the
 * windows, which the peer's replay sends again.
 *
 * HBM is the pod's: a chip's captured HBM bytes are its first reads, which a
 * peer's write inside the windows may have preceded. They are held back and
 * placed at the chip's first read of them: bytes nobody in the pod has
 * written or placed yet take the capture; bytes the pod's replay already
 * holds (a peer wrote them, or another chip's capture placed them) must
 * equal the capture, or the replay fails naming the reading chip and
 * instruction.
 */
#include "pod.h"

#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/pod_sched.h"
#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_line_pack.h"
#include "lib/snr_lines.h"
#include "lib/snr_pod.h"
#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "lib/snr_set.h"
#include "replayer/metrics.h"
#include "replayer/pod_reorder.h"
#include "replayer/pod_threads.h"
#include "replayer/window.h"
#include "sim/grm_ta1.h"
#include "sim/ta1_fabric.h"
#include "sim/ta1_timing.h"

/* A chip's captured HBM bytes, placed at its first read. */
struct capture {
	unsigned owner;
	uint64_t lo, hi;
	uint8_t *bytes;
};

struct chip {
	unsigned id;
	const char *path; /* its trace */
	struct snr_trace *t;
	struct snr_sim *s;
	struct snr_window win;
	struct snr_replay_result *r;
	struct capture *cap;
	size_t ncap, cap_cap;
	struct snr_ranges consumed; /* captured bytes already placed or checked */
	uint64_t at;                /* the next instruction's index (its position, with ro) */
	struct pod_reorder *ro;     /* a what-if's order of the window (replayer/pod_reorder.h), or NULL */
	size_t next_post;
	bool ended;
	uint64_t *pcs;     /* the recorded pcs of [pcs_first, pcs_first + npcs), read ahead (chip_pc) */
	uint64_t pcs_first;
	size_t npcs;
	struct snr_tracker tracker;
	struct snr_metrics_writer *mw;     /* -o: the chip's metrics file, or NULL */
	const struct snr_tracker *mt;      /* its tracker, which every event goes to */
	/* what this chip's task on a thread (pod_threads.h) found: a failure, or
	 * the end-state differences, merged in chip order afterwards */
	char err[1200];
	bool bad;
	char *notes; /* as long as the pod's report */
	const char *summary; /* -o: its metrics file's SUMMARY */
	/* a private stretch's failed instruction (task_private), reported in chip order afterwards */
	bool private_failed;
	uint64_t fail_pc, fail_index;
};

/* Captured HBM bytes a what-if's moved instruction read first: in the
 * recording it read them later, so a peer's write of them that comes after
 * in the what-if was before it in the recording, and the capture is that
 * write's value, not what the moved read would find. */
struct early {
	unsigned chip, owner;
	uint64_t lo, hi, index;
};

/* The last writer of an HBM block in the replay: a chip's instruction, or a
 * chip's capture placed there (index -1). */
struct writer {
	uint64_t block; /* (owner << 48 | addr / WRITER_BLOCK) + 1: 0 marks an empty slot */
	unsigned chip;
	int64_t index;
};
#define WRITER_BLOCK 4096

struct pod {
	unsigned n;
	struct writer *w; /* open addressing, by block */
	size_t w_cap, w_n;
	unsigned step_chip; /* the chip whose instruction runs now, and its index */
	uint64_t step_index;
	bool step_moved;    /* a what-if's instruction taken earlier */
	struct early *early; /* what-if: captured bytes a moved instruction placed (early_read) */
	size_t nearly, cap_early;
	struct chip *c;
	struct ta1_machine *m;
	struct snr_ranges held; /* HBM bytes the replay holds: written, or placed from a capture */
	struct snr_pod_replay *out;
	char err[1024];        /* a failure that is not a divergence */
	bool failed;
	struct snr_pod_crew *crew; /* the private stretches' threads, or NULL: the caller's */
};

/* What a chip's task on a thread is given (pod_threads.h). */
struct task {
	struct pod *p;
	const struct snr_pod *pod;
};

/* The chip's tracker: its totals, and every event forwarded to its metrics
 * file's tracker (-o). */
static void on_stall(void *u, const struct snr_ev_stall *e)
{
	struct chip *c = u;
	c->r->stall_cycles[e->cause] += e->cycles;
	if (c->mt && c->mt->on_stall)
		c->mt->on_stall(c->mt->user, e);
}

static void on_dma(void *u, const struct snr_ev_dma *e)
{
	struct chip *c = u;
	if (e->phase == SNR_DMA_ISSUED && e->issue_index >= 0) {
		c->r->dma_count++;
		c->r->dma_bytes += e->bytes;
	}
	if (c->mt && c->mt->on_dma)
		c->mt->on_dma(c->mt->user, e);
}

#define FORWARD(name, type)                                                      \
	static void on_##name(void *u, const type *e)                            \
	{                                                                        \
		struct chip *c = u;                                              \
		c->mt->on_##name(c->mt->user, e);                                \
	}
FORWARD(issue, struct snr_ev_insn)
FORWARD(retire, struct snr_ev_insn)
FORWARD(mem, struct snr_ev_mem)
FORWARD(reg, struct snr_ev_reg)
FORWARD(busy, struct snr_ev_busy)
FORWARD(peer, struct snr_ev_peer)
FORWARD(fabric, struct snr_ev_fabric)

static void on_insn(void *u, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread, unsigned nwrite)
{
	struct chip *c = u;
	c->mt->on_insn(c->mt->user, e, regs, nread, nwrite);
}

static void chip_tracker(struct chip *c)
{
	const struct snr_tracker *m = c->mt;
	c->tracker = (struct snr_tracker){.abi_version = SNR_TRACKER_ABI_VERSION, .user = c,
					  .on_stall = on_stall, .on_dma = on_dma};
	if (!m)
		return;
	c->tracker.on_issue = m->on_issue ? on_issue : NULL;
	c->tracker.on_retire = m->on_retire ? on_retire : NULL;
	c->tracker.on_mem = m->on_mem ? on_mem : NULL;
	c->tracker.on_reg = m->on_reg ? on_reg : NULL;
	c->tracker.on_busy = m->on_busy ? on_busy : NULL;
	c->tracker.on_insn = m->on_insn ? on_insn : NULL;
	c->tracker.on_peer = m->on_peer ? on_peer : NULL;
	c->tracker.on_fabric = m->on_fabric ? on_fabric : NULL;
}

/* -o MSET: the pod's metrics set, as `snr device --timing -o MSET` writes it
 * (docs/metrics-format.md, "A pod's metrics set"): window-C.snrm per chip, a
 * replay's metrics file of chip C's trace, and a manifest saying "pod". */
static struct snr_set_writer *mset_new(const char *mset, const char *dir, struct chip *c, unsigned n,
				       const char *config_json, char *err, size_t errlen)
{
	json_t *meta0 = json_loads(snr_trace_meta_json(c[0].t), 0, NULL);
	json_t *info = json_object();
	json_object_set_new(info, "pod", json_true());
	json_object_set_new(info, "chips", json_integer(n));
	json_object_set_new(info, "source", json_string("snr replay"));
	json_object_set_new(info, "trace", json_string(dir));
	const char *elf = json_string_value(json_object_get(meta0, "elf"));
	char abs[PATH_MAX];
	if (elf) /* absolute, as the device's set names it, where the program is still there */
		json_object_set_new(info, "program", json_string(realpath(elf, abs) ? abs : elf));
	json_decref(meta0);
	struct snr_set_writer *set = snr_set_create(mset, "metrics", info, err, errlen);
	if (!set)
		return NULL;
	for (unsigned k = 0; k < n; k++) {
		struct snr_trace_id tid;
		char idt[32];
		snr_trace_id_of(c[k].t, &tid);
		json_t *m = json_object();
		json_object_set_new(m, "format", json_string("snr metrics"));
		json_object_set_new(m, "source", json_string("snr replay"));
		json_object_set_new(m, "trace", json_string(c[k].path));
		json_object_set_new(m, "trace_digest", json_string(snr_trace_id_text(&tid, idt, sizeof(idt))));
		json_object_set_new(m, "trace_bytes", json_integer((json_int_t)tid.bytes));
		json_object_set_new(m, "simulator", json_string("ta1"));
		json_object_set_new(m, "chip", json_integer(k));
		json_object_set_new(m, "trace_meta", json_loads(snr_trace_meta_json(c[k].t), 0, NULL));
		json_object_set_new(m, "config", json_loads(config_json, 0, NULL));
		char *text = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(m);
		c[k].mw = snr_metrics_create(snr_set_window_path(set, k), text, err, errlen);
		free(text);
		if (!c[k].mw)
			return set; /* the caller abandons it */
		snr_metrics_write_trace_tables(c[k].mw, c[k].t);
		c[k].mt = snr_metrics_tracker(c[k].mw);
	}
	return set;
}

static void mset_abandon(struct snr_set_writer *set, struct chip *c, unsigned n)
{
	for (unsigned k = 0; k < n; k++)
		if (c[k].mw) {
			snr_metrics_abandon(c[k].mw);
			c[k].mw = NULL;
		}
	if (set)
		snr_set_abandon(set, "error");
}

/* Every chip's metrics file closed (on threads: task_metrics), then the
 * set's manifest in chip order. */
static void task_metrics(void *user, unsigned k);
static bool first_failure(const struct pod *p, char *err, size_t errlen);

static int mset_finish(struct snr_set_writer *set, struct pod *p, unsigned threads, char *err, size_t errlen)
{
	struct chip *c = p->c;
	unsigned n = p->n;
	char **text = snr_xcalloc(n, sizeof(*text));
	for (unsigned k = 0; k < n; k++) {
		json_t *sj = snr_replay_summary(c[k].r);
		text[k] = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(sj);
		c[k].summary = text[k];
		c[k].bad = false;
	}
	unsigned used = snr_pod_each_chip(threads, n, task_metrics, &(struct task){.p = p});
	if (used > p->out->threads) /* the most threads any part ran on */
		p->out->threads = used;
	int rc = first_failure(p, err, errlen) ? -1 : 0;
	for (unsigned k = 0; k < n; k++) {
		free(text[k]);
		c[k].summary = NULL;
		json_t *e = json_object();
		json_object_set_new(e, "chip", json_integer(k));
		json_object_set_new(e, "trace", json_string(c[k].path));
		json_object_set_new(e, "instructions", json_integer((json_int_t)c[k].r->instructions));
		if (!rc)
			rc = snr_set_add(set, k, e, err, errlen);
		else
			json_decref(e);
	}
	free(text);
	if (rc)
		snr_set_abandon(set, "error");
	else
		rc = snr_set_finish(set, "complete", err, errlen);
	return rc;
}

/* ---- HBM: captures placed at first read ------------------------------------------ */

static void hook_defer(void *user, unsigned chip, unsigned owner, uint64_t addr, const void *data, uint64_t len)
{
	struct chip *c = &((struct pod *)user)->c[chip];
	if (!len)
		return;
	if (c->ncap == c->cap_cap) {
		c->cap_cap = c->cap_cap ? 2 * c->cap_cap : 64;
		c->cap = snr_xrealloc(c->cap, c->cap_cap * sizeof(*c->cap));
	}
	uint8_t *b = snr_xmalloc(len);
	memcpy(b, data, len);
	c->cap[c->ncap++] = (struct capture){owner, addr, addr + len, b};
}

static int by_place(const void *a, const void *b)
{
	const struct capture *x = a, *y = b;
	if (x->owner != y->owner)
		return x->owner < y->owner ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static struct writer *writer_slot(struct pod *p, uint64_t key)
{
	if ((p->w_n + 1) * 2 > p->w_cap) {
		struct writer *old = p->w;
		size_t ocap = p->w_cap;
		p->w_cap = ocap ? 2 * ocap : 256;
		p->w = snr_xcalloc(p->w_cap, sizeof(*p->w));
		for (size_t i = 0; i < ocap; i++)
			if (old[i].block)
				*writer_slot(p, old[i].block) = old[i];
		free(old);
	}
	size_t h = (size_t)((key * 0x9e3779b97f4a7c15ull) >> 20) & (p->w_cap - 1);
	while (p->w[h].block && p->w[h].block != key)
		h = (h + 1) & (p->w_cap - 1);
	if (!p->w[h].block) {
		p->w[h].block = key;
		p->w_n++;
	}
	return &p->w[h];
}

static uint64_t writer_key(unsigned owner, uint64_t addr)
{
	return ((uint64_t)owner << 48 | (addr / WRITER_BLOCK & 0xffffffffffffull)) + 1;
}

static void note_writer(struct pod *p, unsigned owner, uint64_t lo, uint64_t hi, unsigned chip, int64_t index)
{
	for (uint64_t b = lo / WRITER_BLOCK; b <= (hi - 1) / WRITER_BLOCK; b++) {
		struct writer *w = writer_slot(p, writer_key(owner, b * WRITER_BLOCK));
		w->chip = chip;
		w->index = index;
	}
}

static void report(struct pod *p, const char *fmt, ...) SNR_PRINTF(2, 3);

static void early_written(struct pod *p, unsigned owner, uint64_t lo, uint64_t hi)
{
	for (size_t i = 0; i < p->nearly; i++) {
		struct early *e = &p->early[i];
		if (e->owner != owner || e->chip == p->step_chip || e->hi <= lo || hi <= e->lo || !p->c[e->chip].r->ok)
			continue;
		p->c[e->chip].r->ok = false;
		report(p,
		       "chip %u's moved instruction %llu reads chip %u's HBM at 0x%llx before chip %u's instruction %llu "
		       "writes it; in the recording it read it after: the move reads it too early\n",
		       e->chip, (unsigned long long)e->index, owner, (unsigned long long)(lo > e->lo ? lo : e->lo), p->step_chip,
		       (unsigned long long)p->step_index);
	}
}

static void hook_wrote(void *user, unsigned owner, uint64_t lo, uint64_t hi)
{
	struct pod *p = user;
	if (p->nearly)
		early_written(p, owner, lo, hi);
	snr_ranges_add(&p->held, snr_ranges_key(TA1_SPACE_HBM, owner), lo, hi);
	note_writer(p, owner, lo, hi, p->step_chip, (int64_t)p->step_index);
}

/* [lo, hi) of capture k, which the pod already holds: equal, or the error. */
static int check_held(struct pod *p, struct chip *c, const struct capture *k, uint64_t lo, uint64_t hi, char *err,
		      size_t errlen)
{
	uint8_t buf[256];
	for (uint64_t a = lo; a < hi; a += sizeof(buf)) {
		uint64_t len = hi - a < sizeof(buf) ? hi - a : sizeof(buf);
		if (ta1_chip_read_mem(ta1_machine_chip(p->m, c->id), a, buf, len) != len) {
			snr_fmt(err, errlen, "chip %u's HBM at 0x%llx cannot be read", k->owner, (unsigned long long)a);
			return -1;
		}
		const uint8_t *want = k->bytes + (a - k->lo);
		if (!memcmp(buf, want, len))
			continue;
		uint64_t i = 0;
		while (buf[i] == want[i])
			i++;
		char by[200] = "placed there by another chip's capture";
		struct writer *w = writer_slot(p, writer_key(k->owner, a + i));
		if (w->index >= 0)
			snr_fmt(by, sizeof(by), "its 4 KiB block last written in the replay by chip %u's instruction %lld",
				w->chip, (long long)w->index);
		else if (w->chip != c->id)
			snr_fmt(by, sizeof(by), "placed there from chip %u's capture", w->chip);
		snr_fmt(err, errlen,
			"its read of chip %u's HBM at 0x%llx takes 0x%02x from the pod's replay (%s), but chip %u's "
			"trace captured 0x%02x there: the trace's captured bytes differ from what the pod's replay "
			"wrote",
			k->owner, (unsigned long long)(a + i), buf[i], by, c->id, want[i]);
		return -1;
	}
	return 0;
}

static int hook_read(void *user, unsigned chip, uint64_t index, uint64_t pc, const struct ta1_insn *in,
		     unsigned owner, uint64_t lo, uint64_t hi, char *err, size_t errlen)
{
	(void)index, (void)pc, (void)in;
	struct pod *p = user;
	struct chip *c = &p->c[chip];
	if (!c->ncap)
		return 0;
	/* the first capture of owner ending past lo (captures do not overlap) */
	size_t a = 0, b = c->ncap;
	while (a < b) {
		size_t mid = (a + b) / 2;
		const struct capture *k = &c->cap[mid];
		if (k->owner < owner || (k->owner == owner && k->hi <= lo))
			a = mid + 1;
		else
			b = mid;
	}
	uint32_t key = snr_ranges_key(TA1_SPACE_HBM, owner);
	int rc = 0;
	for (; rc == 0 && a < c->ncap && c->cap[a].owner == owner && c->cap[a].lo < hi; a++) {
		const struct capture *k = &c->cap[a];
		uint64_t x = k->lo > lo ? k->lo : lo, y = k->hi < hi ? k->hi : hi;
		struct snr_range *fresh = NULL, *open = NULL;
		size_t nfresh = 0, nopen = 0, cfresh = 0, copen = 0;
		snr_ranges_missing(&c->consumed, key, x, y, &fresh, &nfresh, &cfresh);
		for (size_t f = 0; rc == 0 && f < nfresh; f++) {
			/* not read by the chip before: what the pod holds is checked, the rest placed */
			nopen = 0;
			snr_ranges_missing(&p->held, key, fresh[f].lo, fresh[f].hi, &open, &nopen, &copen);
			uint64_t at = fresh[f].lo;
			for (size_t o = 0; rc == 0 && o <= nopen; o++) {
				uint64_t end = o < nopen ? open[o].lo : fresh[f].hi;
				if (at < end)
					rc = check_held(p, c, k, at, end, err, errlen);
				if (rc || o == nopen)
					break;
				uint64_t len = open[o].hi - open[o].lo;
				if (ta1_chip_write_mem(ta1_machine_chip(p->m, chip), open[o].lo, k->bytes + (open[o].lo - k->lo),
						       len) != len) {
					snr_fmt(err, errlen, "chip %u's captured bytes at 0x%llx lie outside chip %u's HBM",
						chip, (unsigned long long)open[o].lo, owner);
					rc = -1;
					break;
				}
				snr_ranges_add(&p->held, key, open[o].lo, open[o].hi);
				note_writer(p, owner, open[o].lo, open[o].hi, chip, -1);
				if (p->step_moved) {
					if (p->nearly == p->cap_early) {
						p->cap_early = p->cap_early ? 2 * p->cap_early : 16;
						p->early = snr_xrealloc(p->early, p->cap_early * sizeof(*p->early));
					}
					p->early[p->nearly++] = (struct early){chip, owner, open[o].lo, open[o].hi, p->step_index};
				}
				at = open[o].hi;
			}
			snr_ranges_add(&c->consumed, key, fresh[f].lo, fresh[f].hi);
		}
		free(fresh);
		free(open);
	}
	return rc;
}

/* ---- messages --------------------------------------------------------------------- */

/* "pc 0x.. <sym> file:line (func): disasm" of chip c's pc. */
static void where(struct chip *c, uint64_t pc, char *buf, size_t len)
{
	char sym[160], loc[400], dis[128] = "?";
	snr_trace_symbolize(c->t, pc, sym, sizeof(sym));
	struct snr_lines *lines = snr_lines_open_trace(c->t, NULL); /* the carried lines first */
	snr_lines_where(lines, pc, sym, loc, sizeof(loc));
	snr_lines_free(lines);
	unsigned n;
	const uint8_t *code = snr_window_code(&c->win, pc, &n);
	struct ta1_insn in;
	uint32_t w;
	if (code && n >= 4) {
		memcpy(&w, code, 4);
		if (ta1_decode(w, &in))
			ta1_disasm(&in, pc, dis, sizeof(dis));
	}
	if (strcmp(loc, sym))
		snprintf(buf, len, "pc 0x%llx <%s> %s: %s", (unsigned long long)pc, sym, loc, dis);
	else
		snprintf(buf, len, "pc 0x%llx <%s>: %s", (unsigned long long)pc, sym, dis);
}

static void report(struct pod *p, const char *fmt, ...) SNR_PRINTF(2, 3);
static void report(struct pod *p, const char *fmt, ...)
{
	char *r = p->out->report;
	size_t used = strlen(r);
	if (used + 1 >= sizeof(p->out->report))
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(r + used, sizeof(p->out->report) - used, fmt, ap);
	va_end(ap);
}

/* ---- the scheduler's callbacks ------------------------------------------------------- */

static bool sched_running(void *user, unsigned i) { return !((struct pod *)user)->c[i].ended; }

static uint64_t sched_now(void *user, unsigned i)
{
	return ta1_timing_now(ta1_grm_timing(((struct pod *)user)->c[i].s));
}

/* Recorded pcs read ahead per chip, CHIP_PCS at a time: a window's pcs past
 * its memory budget are in a file (snr_spill), and one read of many blocks
 * costs far less than a read per block as the scheduler's steps go by. */
#define CHIP_PCS 4096

/* The recorded pc of the chip's instruction q (asked for in the window's
 * order; a what-if's reorder asks snr_window_pc). */
static uint64_t chip_pc(struct chip *c, uint64_t q)
{
	if (q >= c->win.pcs->tail_first) /* in memory: no copy */
		return snr_window_pc(&c->win, q);
	if (__builtin_expect(q - c->pcs_first >= c->npcs, 0)) {
		if (!c->pcs)
			c->pcs = snr_xmalloc(CHIP_PCS * sizeof(*c->pcs));
		uint64_t left = c->win.n - q;
		c->pcs_first = q;
		c->npcs = left < CHIP_PCS ? (size_t)left : CHIP_PCS;
		snr_spill_get_n(c->win.pcs, q, c->npcs, c->pcs);
	}
	return c->pcs[q - c->pcs_first];
}

static enum ta1_sched_step sched_step(void *user, unsigned i, uint64_t horizon, uint64_t *resume)
{
	struct pod *p = user;
	struct chip *c = &p->c[i];
	struct snr_window *w = &c->win;
	const struct snr_trace_reg *regs = snr_trace_regs(c->t);
	struct snr_window_post *post = c->next_post < w->npost ? &w->post[c->next_post] : NULL;
	if (post && post->index == c->at && post->call) {
		if (snr_window_apply_post(&snr_sim_ta1, c->s, regs, post)) {
			snr_fmt(p->err, sizeof(p->err), "chip %u: simulator ta1: %s", i, snr_sim_ta1.error(c->s));
			p->failed = true;
			return TA1_SCHED_STOP;
		}
		c->next_post++;
		c->r->instructions++;
		c->ended = ++c->at >= w->n;
		return TA1_SCHED_RAN;
	}
	struct ta1_chip *chip = ta1_grm_chip(c->s);
	uint64_t q = c->ro ? c->ro->order[c->at] : c->at; /* the instruction's index in the recorded window */
	bool moved = c->ro && c->ro->moved[c->at];
	uint64_t went_on;
	if (c->ro && pod_reorder_before(c->ro, chip, &c->win, c->at, &went_on)) {
		char a[600], b[600];
		where(c, went_on, a, sizeof(a));
		where(c, ta1_chip_get_reg(chip, TA1_REG_PC), b, sizeof(b));
		c->r->ok = false;
		report(p, "chip %u diverged in the what-if's order after instruction %llu: its trace went on at %s; the "
			  "pod replay is at %s\n",
		       i, (unsigned long long)c->ro->order[c->at - 1], a, b);
		return TA1_SCHED_STOP;
	}
	uint64_t pc = ta1_chip_get_reg(chip, TA1_REG_PC), want = c->ro ? snr_window_pc(w, q) : chip_pc(c, q);
	if (snr_window_error(w)) {
		snr_fmt(p->err, sizeof(p->err), "chip %u: %s", i, snr_window_error(w));
		p->failed = true;
		return TA1_SCHED_STOP;
	}
	if (pc != want) {
		char a[600], b[600];
		where(c, want, a, sizeof(a));
		where(c, pc, b, sizeof(b));
		c->r->ok = false;
		report(p, "chip %u diverged at instruction %llu: its trace executed %s; the pod replay is at %s\n", i,
		       (unsigned long long)q, a, b);
		return TA1_SCHED_STOP;
	}
	/* the decode cache's entry once the chip has run the word: no read or decode per step */
	struct ta1_insn buf;
	const struct ta1_insn *at = ta1_grm_pod_insn(c->s, pc, &buf);
	unsigned op = at ? at->op : TA1_OP_ILLEGAL;
	if (op == TA1_OP_TA_WAIT) {
		uint64_t flag = ta1_chip_get_reg(chip, at->rs1), count = ta1_chip_get_reg(chip, at->rs2);
		if (!ta1_timing_wait_ready(ta1_grm_timing(c->s), at->rs1, at->rs2,
					   flag < TA1_NUM_FLAGS ? (unsigned)flag : TA1_NUM_FLAGS, count, horizon, resume))
			return TA1_SCHED_PARK;
	}
	struct snr_sim_step st;
	bool blocked = false;
	p->step_chip = i;
	p->step_index = q;
	p->step_moved = moved;
	uint64_t save[32];
	if (moved)
		pod_reorder_enter(c->ro, chip, c->at, save);
	int failed = ta1_grm_pod_step(c->s, q, &st, &blocked);
	if (moved)
		pod_reorder_leave(c->ro, chip, q, save);
	if (failed) {
		char a[600];
		where(c, pc, a, sizeof(a));
		c->r->ok = false;
		report(p, "chip %u: instruction %llu (%s) failed in the pod replay: %s\n", i, (unsigned long long)q, a,
		       snr_sim_ta1.error(c->s));
		return TA1_SCHED_STOP;
	}
	if (blocked)
		return TA1_SCHED_BLOCKED;
	c->r->instructions++;
	c->at++;
	if (post && post->index == c->at - 1) {
		if (post->unread) {
			snr_fmt(p->err, sizeof(p->err),
				"chip %u: instruction %llu read memory the recorder could not read; a pod replay does not "
				"take such steps",
				i, (unsigned long long)post->index);
			p->failed = true;
			return TA1_SCHED_STOP;
		}
		if (snr_window_apply_post(&snr_sim_ta1, c->s, regs, post)) {
			snr_fmt(p->err, sizeof(p->err), "chip %u: simulator ta1: %s", i, snr_sim_ta1.error(c->s));
			p->failed = true;
			return TA1_SCHED_STOP;
		}
		c->next_post++;
	}
	if (st.exited)
		c->r->exited = true;
	c->ended = st.exited || c->at >= w->n;
	return op == TA1_OP_TA_DMA_NOTIFY ? TA1_SCHED_NOTIFIED : TA1_SCHED_RAN;
}

/* ---- private stretches ------------------------------------------------------------- */

/* Chip c's next instruction may run in a private stretch: the window goes
 * on, its pc is the recorded one, the trace holds no post at it, and it is
 * neither a DMA nor a WAIT (an instruction of any other class reaches only
 * its own chip's registers, core memory, VMEM and MXU, and its timing only
 * the chip's own model). Anything else, a divergence included, is left to
 * sched_step, in the scheduler's order. */
static bool chip_next_private(struct chip *c)
{
	struct snr_window *w = &c->win;
	if (c->ended || c->ro || (c->next_post < w->npost && w->post[c->next_post].index == c->at))
		return false;
	struct ta1_chip *chip = ta1_grm_chip(c->s);
	uint64_t pc = ta1_chip_get_reg(chip, TA1_REG_PC);
	if (pc != chip_pc(c, c->at) || snr_window_error(w))
		return false;
	struct ta1_insn buf;
	const struct ta1_insn *in = ta1_grm_pod_insn(c->s, pc, &buf);
	if (!in || in->op >= TA1_OP_COUNT)
		return false;
	enum ta1_class cls = ta1_insn_table[in->op].cls;
	return cls != TA1_CLASS_DMA_ISSUE && cls != TA1_CLASS_DMA_WAIT;
}

/* Chip k's private stretch, on any thread of the crew: it writes chip k's
 * state only (its simulator, its timing model, its tracker, its trace's
 * reads). A failed instruction stops it; sched_run_private reports it. */
static void task_private(void *user, unsigned k)
{
	struct pod *p = user;
	struct chip *c = &p->c[k];
	if (!chip_next_private(c))
		return;
	struct ta1_timing_model *tm = ta1_grm_timing(c->s);
	ta1_timing_set_private(tm, true);
	do {
		struct snr_sim_step st;
		bool blocked = false;
		uint64_t pc = ta1_chip_get_reg(ta1_grm_chip(c->s), TA1_REG_PC);
		if (ta1_grm_pod_step(c->s, c->at, &st, &blocked) || blocked) {
			c->private_failed = true;
			c->fail_pc = pc;
			c->fail_index = c->at;
			break;
		}
		c->r->instructions++;
		c->at++;
		if (st.exited)
			c->r->exited = true;
		c->ended = st.exited || c->at >= c->win.n;
	} while (chip_next_private(c));
	ta1_timing_set_private(tm, false);
}

static bool sched_private_next(void *user, unsigned i)
{
	return chip_next_private(&((struct pod *)user)->c[i]);
}

/* Every chip's private stretch, on the crew; a failure stops the pod, each
 * failed chip reported in chip order. */
static enum ta1_sched_step sched_run_private(void *user, unsigned *which)
{
	struct pod *p = user;
	snr_pod_crew_run(p->crew, p->n, task_private, p);
	bool failed = false;
	for (unsigned k = 0; k < p->n; k++) {
		struct chip *c = &p->c[k];
		if (!c->private_failed)
			continue;
		char a[600];
		where(c, c->fail_pc, a, sizeof(a));
		c->r->ok = false;
		report(p, "chip %u: instruction %llu (%s) failed in the pod replay: %s\n", k,
		       (unsigned long long)c->fail_index, a, snr_sim_ta1.error(c->s));
		if (!failed)
			*which = k;
		failed = true;
	}
	return failed ? TA1_SCHED_STOP : TA1_SCHED_RAN;
}

/* ---- end state -------------------------------------------------------------------- */

static void note(struct chip *c, const char *fmt, ...) SNR_PRINTF(2, 3);
static void note(struct chip *c, const char *fmt, ...)
{
	size_t size = sizeof(((struct snr_pod_replay *)0)->report), used = strlen(c->notes);
	if (used + 1 >= size)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(c->notes + used, size - used, fmt, ap);
	va_end(ap);
}

/* Chip c's registers and the memory its window wrote against its trace's
 * digest; the differences go to c->notes. Reads only chip c's state (the
 * machine settled, ta1_machine_settle): chips are checked on threads. */
static void end_state(struct chip *c)
{
	struct snr_replay_result *r = c->r;
	const uint8_t *const *dregs;
	size_t nblocks;
	const struct snr_trace_mem *blocks;
	const uint64_t *hashes;
	if (!r->ok || r->exited || r->truncated || !snr_trace_digest(c->t, &dregs, &nblocks, &blocks, &hashes))
		return;
	r->end_state_checked = true;
	const struct snr_trace_reg *regs = snr_trace_regs(c->t);
	size_t nregs = snr_trace_nregs(c->t);
	unsigned bad = 0;
	for (size_t i = 0; i < nregs; i++) {
		uint8_t v[8];
		if (!dregs[i] || (int)i == c->win.pc_reg || regs[i].size != sizeof(v))
			continue;
		if (snr_sim_ta1.get_reg(c->s, (unsigned)i, v, sizeof(v)))
			continue;
		if (memcmp(v, dregs[i], sizeof(v))) {
			uint64_t got, want;
			memcpy(&got, v, 8);
			memcpy(&want, dregs[i], 8);
			if (bad++ < 16)
				note(c, "chip %u: end state: register %s is 0x%llx, the device had 0x%llx\n", c->id,
				       regs[i].name, (unsigned long long)got, (unsigned long long)want);
		}
	}
	uint8_t *buf = snr_xmalloc(SNR_TRACE_DIGEST_BLOCK);
	for (size_t i = 0; i < nblocks; i++) {
		if (snr_sim_ta1.read_mem(c->s, (uint8_t)blocks[i].space, blocks[i].chip, blocks[i].addr, buf,
					 blocks[i].len) ||
		    snr_trace_hash(buf, blocks[i].len) != hashes[i]) {
			if (bad++ < 32)
				note(c, "chip %u: end state: memory [0x%llx, 0x%llx) differs from the device's\n", c->id,
				       (unsigned long long)blocks[i].addr,
				       (unsigned long long)(blocks[i].addr + blocks[i].len));
		}
	}
	free(buf);
	if (bad)
		r->ok = false;
}

/* ---- each chip's own work, on threads (pod_threads.h) ------------------------------- */

static void task_open(void *user, unsigned k)
{
	struct task *t = user;
	struct chip *c = &t->p->c[k];
	c->t = snr_trace_open(t->pod->chip[k].path, c->err, sizeof(c->err));
	c->bad = !c->t;
}

/* Loads chip k's window into its simulator: its code, registers and memory
 * are chip k's own, and its captured HBM bytes are kept aside (hook_defer)
 * for the run, so no chip's load touches another's state. */
static void task_load(void *user, unsigned k)
{
	struct task *t = user;
	struct chip *c = &t->p->c[k];
	const char *path = t->pod->chip[k].path;
	char lerr[800];
	c->bad = true;
	if (snr_window_load(c->t, &snr_sim_ta1, c->s, &c->win, lerr, sizeof(lerr))) {
		snr_fmt(c->err, sizeof(c->err), "chip %u (%s): %s", k, path, lerr);
		return;
	}
	if (c->win.n == 0) {
		snr_fmt(c->err, sizeof(c->err), "chip %u (%s) holds no instructions", k, path);
		return;
	}
	c->r->recorded = c->win.n;
	c->r->truncated = snr_trace_truncated(c->t);
	c->r->interrupted = snr_trace_interrupted(c->t);
	c->r->ok = true;
	snr_qsort(c->cap, c->ncap, sizeof(*c->cap), by_place);
	for (size_t i = 1; i < c->ncap; i++)
		if (c->cap[i].owner == c->cap[i - 1].owner && c->cap[i].lo < c->cap[i - 1].hi) {
			snr_fmt(c->err, sizeof(c->err), "chip %u (%s): two captures of chip %u's HBM overlap at 0x%llx",
				k, path, c->cap[i].owner, (unsigned long long)c->cap[i].lo);
			return;
		}
	/* the flags as the windows started, not as each trace first read them */
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		ta1_chip_set_reg(ta1_grm_chip(c->s), TA1_REG_FLAG0 + f, t->pod->chip[k].flags_at_start[f]);
	c->bad = false;
}

static void task_end_state(void *user, unsigned k)
{
	end_state(&((struct task *)user)->p->c[k]);
}

/* Closes chip k's metrics file (its last events compressed, its SUMMARY
 * written): each file is its chip's alone. */
static void task_metrics(void *user, unsigned k)
{
	struct chip *c = &((struct task *)user)->p->c[k];
	c->bad = snr_metrics_finish(c->mw, c->summary, c->err, sizeof(c->err)) != 0;
	c->mw = NULL;
}

/* The first chip, in chip order, whose task failed, its message in err. */
static bool first_failure(const struct pod *p, char *err, size_t errlen)
{
	for (unsigned k = 0; k < p->n; k++)
		if (p->c[k].bad) {
			snr_fmt(err, errlen, "%s", p->c[k].err);
			return true;
		}
	return false;
}

/* ---- the replay ------------------------------------------------------------------- */

static int pod_replay(const char *dir, const struct snr_replay_opts *o, const struct snr_pod_reorder *ro,
		      struct snr_pod_replay *out, char *err, size_t errlen);

int snr_pod_replay(const char *dir, const struct snr_replay_opts *o, struct snr_pod_replay *out, char *err,
		   size_t errlen)
{
	return pod_replay(dir, o, NULL, out, err, errlen);
}

int snr_pod_replay_reordered(const char *dir, const struct snr_replay_opts *o, const struct snr_pod_reorder *ro,
			     struct snr_pod_replay *out, char *err, size_t errlen)
{
	return pod_replay(dir, o, ro, out, err, errlen);
}

static int pod_replay(const char *dir, const struct snr_replay_opts *o, const struct snr_pod_reorder *ro,
		      struct snr_pod_replay *out, char *err, size_t errlen)
{
	struct snr_pod pod;
	memset(out, 0, sizeof(*out));
	if (o->sim && strcmp(o->sim, "ta1")) {
		snr_fmt(err, errlen, "%s: a pod replays in the TA1 GRM only (--sim ta1), not %s", dir, o->sim);
		return -1;
	}
	if (snr_pod_open(dir, &pod, err, errlen))
		return -1;
	struct pod p = {.n = pod.chips, .out = out};
	p.c = snr_xcalloc(p.n, sizeof(*p.c));
	unsigned threads = o->threads ? o->threads : snr_pod_threads_default(p.n);
	struct task task = {&p, &pod};
	out->chips = p.n;
	out->chip = snr_xcalloc(p.n, sizeof(*out->chip));
	struct ta1_fabric *fabric = NULL;
	struct snr_set_writer *set = NULL;
	json_t *meta = NULL;
	int null_fd = -1, rc = -1;
	const struct ta1_grm_pod_hooks hooks = {&p, hook_defer, hook_read, hook_wrote};
	for (unsigned k = 0; k < pod.chips; k++)
		if (!pod.chip[k].has_flags) {
			snr_fmt(err, errlen,
				"%s/set.json: chip %u's entry has no \"flags_at_start\": the pod replay starts every chip's "
				"sync flags from them (record the pod again with this snr)",
				dir, k);
			goto out;
		}
	for (unsigned k = 0; k < p.n; k++) {
		p.c[k].id = k;
		p.c[k].r = &out->chip[k].r;
		p.c[k].notes = snr_xcalloc(1, sizeof(out->report));
		out->chip[k].chip = k;
		out->chip[k].trace = snr_xstrdup(pod.chip[k].path);
		p.c[k].path = out->chip[k].trace;
	}
	out->threads = snr_pod_each_chip(threads, p.n, task_open, &task);
	if (first_failure(&p, err, errlen))
		goto out;
	/* the machine: chip 0's recorded config (snr_pod_open checked every chip's is the same), or the user's */
	struct snr_config cfg;
	{
		struct snr_config_text ct = {0};
		char *text = NULL, src[600];
		meta = json_loads(snr_trace_meta_json(p.c[0].t), 0, NULL);
		const char *isa = json_string_value(json_object_get(meta, "isa"));
		if (!isa || strcmp(isa, "ta1")) {
			snr_fmt(err, errlen, "%s: a pod of %s traces; a pod replays TA1 only", dir, isa ? isa : "unknown");
			goto out;
		}
		if (o->config_path) {
			if (snr_config_read(&ct, o->config_path, err, errlen))
				goto out;
			int bad = snr_config_check(&cfg, &ct, err, errlen);
			snr_config_text_free(&ct);
			if (bad)
				goto out;
		} else {
			snr_config_default(&cfg);
			text = json_dumps(json_object_get(meta, "config"), JSON_COMPACT);
			snr_fmt(src, sizeof(src), "%s (its recorded machine config)", pod.chip[0].path);
			ct.text = text;
			ct.len = text ? strlen(text) : 0;
			ct.source = src;
			int bad = text && snr_config_check(&cfg, &ct, err, errlen);
			free(text);
			if (bad)
				goto out;
		}
		if (cfg.chips != p.n) {
			/* the recording's pod size is the chips the traces say */
			cfg.chips = p.n;
		}
	}
	char *cfg_json = snr_config_to_json(&cfg);
	if (o->metrics_path) {
		set = mset_new(o->metrics_path, dir, p.c, p.n, cfg_json, err, errlen);
		if (!set || !p.c[p.n - 1].mw) {
			free(cfg_json);
			goto out;
		}
	}
	free(cfg_json);
	p.m = ta1_machine_new(&cfg, err, errlen);
	if (!p.m)
		goto out;
	null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ta1_machine_set_output(p.m, null_fd, null_fd);
	fabric = ta1_fabric_new(ta1_machine_config(p.m), err, errlen);
	if (!fabric)
		goto out;
	for (unsigned k = 0; k < p.n; k++) {
		struct chip *c = &p.c[k];
		c->s = ta1_grm_new_pod(p.m, fabric, k, &hooks, err, errlen);
		if (!c->s)
			goto out;
		chip_tracker(c);
		snr_sim_ta1.attach_tracker(c->s, &c->tracker);
	}
	{
		unsigned used = snr_pod_each_chip(threads, p.n, task_load, &task);
		if (used > out->threads)
			out->threads = used;
		if (first_failure(&p, err, errlen))
			goto out;
	}
	if (ro) { /* a what-if: chip ro->chip's window in ro's order */
		char rerr[600];
		struct chip *c = ro->chip < p.n ? &p.c[ro->chip] : NULL;
		if (!c) {
			snr_fmt(err, errlen, "%s: the what-if names chip %u of a pod of %u", dir, ro->chip, p.n);
			goto out;
		}
		c->ro = snr_xcalloc(1, sizeof(*c->ro));
		if (pod_reorder_init(c->ro, ro->order, ro->moved, ro->n, &c->win, rerr, sizeof(rerr))) {
			snr_fmt(err, errlen, "chip %u (%s): %s", ro->chip, pod.chip[ro->chip].path, rerr);
			goto out;
		}
	}
	for (unsigned k = 0; k < p.n; k++)
		ta1_grm_pod_seed_flags(p.c[k].s);
	out->ok = true;
	struct ta1_sched_ops ops = {&p, p.n, sched_running, sched_now, sched_step, NULL, sched_private_next,
				    sched_run_private};
	unsigned which = 0;
	p.crew = snr_pod_crew_new(threads, p.n);
	enum ta1_sched_end e = ta1_sched_run(&ops, ta1_machine_config(p.m)->dma_base_latency_cycles, &which);
	{
		unsigned used = snr_pod_crew_free(p.crew);
		p.crew = NULL;
		out->sim_threads = used > 1 ? used : 1;
	}
	if (p.failed) {
		snr_fmt(err, errlen, "%s", p.err);
		goto out;
	}
	if (e == TA1_SCHED_DEADLOCK) {
		report(&p, "the pod replay deadlocked: every chip still running waits for a signal no chip sends:");
		for (unsigned k = 0; k < p.n; k++) {
			char a[600];
			if (p.c[k].ended) {
				report(&p, " chip %u: its window ended;", k);
				continue;
			}
			where(&p.c[k], ta1_chip_get_reg(ta1_grm_chip(p.c[k].s), TA1_REG_PC), a, sizeof(a));
			report(&p, " chip %u: blocked at instruction %llu, %s;", k, (unsigned long long)p.c[k].at, a);
			p.c[k].r->ok = false;
		}
		report(&p, "\n");
	}
	/* the timing models drained, in chip order as the run left them (the fabric is the pod's) */
	for (unsigned k = 0; k < p.n; k++) {
		struct chip *c = &p.c[k];
		if (!c->ended && c->r->ok) { /* the pod stopped before this chip's window ended */
			c->r->ok = false;
			snr_fmt(c->r->report, sizeof(c->r->report), "not finished: stopped at instruction %llu of %llu",
				(unsigned long long)c->at, (unsigned long long)c->win.n);
		} else if (e != TA1_SCHED_DONE && c->r->ok) {
			snr_fmt(c->r->report, sizeof(c->r->report),
				"its pcs matched; its end state was not compared (the pod diverged)");
		}
		c->r->cycles = snr_sim_ta1.finish(c->s);
		if (c->r->cycles > out->cycles)
			out->cycles = c->r->cycles;
	}
	/* the fabric's sampling period in progress when the last transfer ended, as the device reports it
	 * (cli/cmd_device.c): every chip drained, its samples go to the chips' trackers before they close */
	ta1_fabric_flush_samples(fabric);
	/* each chip's end state on the threads (reads of the settled machine), the differences reported in
	 * chip order */
	if (e == TA1_SCHED_DONE) {
		ta1_machine_settle(p.m);
		unsigned used = snr_pod_each_chip(threads, p.n, task_end_state, &task);
		if (used > out->threads)
			out->threads = used;
	}
	for (unsigned k = 0; k < p.n; k++) {
		struct chip *c = &p.c[k];
		if (c->notes[0])
			report(&p, "%s", c->notes);
		if (!c->r->ok || e != TA1_SCHED_DONE)
			out->ok = false;
	}
	if (set && out->ok) {
		rc = mset_finish(set, &p, threads, err, errlen);
		set = NULL;
		if (rc)
			goto out;
	} else if (set) { /* a diverged replay's metrics would mislead: nothing is written */
		mset_abandon(set, p.c, p.n);
		set = NULL;
		report(&p, "%s was not written\n", o->metrics_path);
	}
	rc = 0;
out:
	snr_pod_crew_free(p.crew);
	if (set)
		mset_abandon(set, p.c, p.n);
	for (unsigned k = 0; k < p.n; k++) {
		struct chip *c = &p.c[k];
		if (c->s)
			snr_sim_ta1.destroy(c->s);
		snr_window_free(&c->win);
		free(c->pcs);
		snr_trace_close(c->t);
		for (size_t i = 0; i < c->ncap; i++)
			free(c->cap[i].bytes);
		free(c->cap);
		free(c->notes);
		snr_ranges_free(&c->consumed);
		if (c->ro)
			pod_reorder_free(c->ro);
		free(c->ro);
	}
	free(p.c);
	free(p.w);
	free(p.early);
	snr_ranges_free(&p.held);
	ta1_fabric_free(fabric);
	ta1_machine_free(p.m);
	if (null_fd >= 0)
		close(null_fd);
	json_decref(meta);
	snr_pod_free(&pod);
	return rc;
}

void snr_pod_replay_free(struct snr_pod_replay *r)
{
	for (unsigned k = 0; r->chip && k < r->chips; k++)
		free(r->chip[k].trace);
	free(r->chip);
	memset(r, 0, sizeof(*r));
}

json_t *snr_pod_replay_json(const char *dir, const struct snr_pod_replay *r)
{
	json_t *j = json_object(), *chips = json_array();
	json_object_set_new(j, "pod", json_string(dir));
	for (unsigned k = 0; k < r->chips; k++) {
		json_t *c = json_object();
		json_object_set_new(c, "chip", json_integer(k));
		json_t *s = snr_replay_summary(&r->chip[k].r);
		json_object_update(c, s);
		json_decref(s);
		json_object_set_new(c, "trace", json_string(r->chip[k].trace));
		if (r->chip[k].r.report[0])
			json_object_set_new(c, "note", json_string(r->chip[k].r.report));
		json_array_append_new(chips, c);
	}
	json_object_set_new(j, "chips", chips);
	json_object_set_new(j, "cycles", json_integer((json_int_t)r->cycles));
	json_object_set_new(j, "verified", json_boolean(r->ok));
	if (!r->ok)
		json_object_set_new(j, "report", json_string(r->report));
	return j;
}
