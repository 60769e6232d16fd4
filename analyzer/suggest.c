/*
 * suggest.c: `snr analyze suggest`, the paper's Algorithm 2 on the graph of
 * deps.c, and its what-if check (docs/analyses.md "suggest").
 *
 * For each DMA whose WAIT stalled on it (DMA_BASE + DMA_TRANSFER stall
 * cycles S attributed to it): if its backtail B (cycles between the farthest
 * point it could move to and its issue) exceeds S, it moves to the latest
 * point that hides S; if VMEM holds a contiguous region at least as large as
 * its destination that holds no other value from that point until it
 * completes, the move is suggested, predicting S cycles saved.
 *
 * --verify replays the trace once more through a thin wrapper around the
 * TA1 GRM that records, per instruction, the decoded instruction, the
 * operand access and the source values the timing model reads. The what-if
 * feeds that stream to a fresh timing model (sim/ta1_timing.c) in the
 * original order (which must give the replay's cycles) and with the move
 * applied, one move at a time and all together, and reports the differences.
 */
#include <getopt.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/deps.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_util.h"
#include "replayer/metrics.h"
#include "replayer/replay.h"
#include "sim/snr_sim.h"
#include "sim/ta1_timing.h"

void snr_deps_print_dma_json(FILE *f, const struct snr_deps *d, const struct snr_deps_dma *m);

/* ---- the instruction stream, captured from a replay ---------------------- */

struct cap_insn {
	uint64_t pc, next_pc;
	struct ta1_insn in;
	uint64_t xv[4]; /* x[rd], x[rs1], x[rs2], x[rs3] before it executed */
	uint64_t regs_read, regs_written;
	uint32_t region0; /* index into regions */
	uint8_t nregions;
};

struct capture {
	struct cap_insn *v;
	size_t n, cap;
	struct ta1_region *regions;
	size_t nregions, regions_cap;
	unsigned pre_window[TA1_NUM_FLAGS];
	bool seeded;
	struct snr_config cfg;
	unsigned chip, nchips;
};

static struct capture *cap_now; /* the capture in progress (one at a time) */

struct cap_sim {
	struct snr_sim *inner;
};

static const struct snr_sim_ops *inner_ops = &snr_sim_ta1;

static struct snr_sim *cap_create(const char *cfg_json, unsigned chip, unsigned nchips, char *err, size_t errlen)
{
	snr_config_default(&cap_now->cfg);
	if (cfg_json && snr_config_parse(&cap_now->cfg, cfg_json, "the trace's machine config", err, errlen))
		return NULL;
	cap_now->chip = chip;
	cap_now->nchips = nchips;
	struct cap_sim *c = snr_xcalloc(1, sizeof(*c));
	c->inner = inner_ops->create(cfg_json, chip, nchips, err, errlen);
	if (!c->inner) {
		free(c);
		return NULL;
	}
	return (struct snr_sim *)c;
}

#define INNER(s) (((struct cap_sim *)(s))->inner)
static void cap_destroy(struct snr_sim *s)
{
	if (!s)
		return;
	inner_ops->destroy(INNER(s));
	free(s);
}
static const char *cap_error(struct snr_sim *s) { return inner_ops->error(INNER(s)); }
static int cap_attach(struct snr_sim *s, const struct snr_tracker *t) { return inner_ops->attach_tracker(INNER(s), t); }
static int cap_set_reg(struct snr_sim *s, unsigned r, const uint8_t *v, unsigned n)
{
	return inner_ops->set_reg(INNER(s), r, v, n);
}
static int cap_get_reg(struct snr_sim *s, unsigned r, uint8_t *v, unsigned n)
{
	return inner_ops->get_reg(INNER(s), r, v, n);
}
static int cap_load_mem(struct snr_sim *s, uint8_t sp, uint16_t ch, uint64_t a, const void *d, uint64_t l)
{
	return inner_ops->load_mem(INNER(s), sp, ch, a, d, l);
}
static int cap_read_mem(struct snr_sim *s, uint8_t sp, uint16_t ch, uint64_t a, void *d, uint64_t l)
{
	return inner_ops->read_mem(INNER(s), sp, ch, a, d, l);
}
static int cap_load_code(struct snr_sim *s, uint64_t pc, const uint8_t *code, unsigned len)
{
	return inner_ops->load_code(INNER(s), pc, code, len);
}
static uint64_t cap_finish(struct snr_sim *s) { return inner_ops->finish(INNER(s)); }

static uint64_t reg_or_zero(struct snr_sim *in, unsigned r)
{
	uint64_t v = 0;
	if (inner_ops->get_reg(in, r, (uint8_t *)&v, 8))
		return 0; /* never captured nor written: the instruction cannot read it */
	return v;
}

static int cap_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out)
{
	struct capture *c = cap_now;
	struct snr_sim *in = INNER(s);
	if (!c->seeded) {
		for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
			c->pre_window[f] = (unsigned)reg_or_zero(in, TA1_REG_FLAG0 + f);
		c->seeded = true;
	}
	uint64_t pc = reg_or_zero(in, TA1_REG_PC);
	uint32_t w = 0;
	inner_ops->read_mem(in, TA1_SPACE_CORE, (uint16_t)c->chip, pc, &w, 4);
	struct ta1_insn dec;
	ta1_decode(w, &dec);
	/* The query and the timing model read only the instruction's own
	 * register fields: fetch those, not all 32. */
	uint64_t x[32] = {0};
	const uint8_t fields[4] = {dec.rd, dec.rs1, dec.rs2, dec.rs3};
	for (unsigned k = 0; k < 4; k++)
		if (fields[k] && fields[k] < 32)
			x[fields[k]] = reg_or_zero(in, fields[k]);
	int rc = inner_ops->step(in, index, out);
	if (rc)
		return rc;
	if (c->n == c->cap) {
		c->cap = c->cap ? 2 * c->cap : 4096;
		c->v = snr_xrealloc(c->v, c->cap * sizeof(*c->v));
	}
	struct cap_insn *ci = &c->v[c->n++];
	memset(ci, 0, sizeof(*ci));
	ci->pc = pc;
	ci->next_pc = out->next_pc;
	ci->in = dec;
	struct ta1_query_ctx q = {.x = x,
				  .chip = c->chip,
				  .nchips = c->nchips,
				  .core_size = c->cfg.core_memory_bytes,
				  .vmem_size = c->cfg.vmem_bytes,
				  .hbm_size = c->cfg.hbm_bytes};
	struct ta1_access a;
	ta1_access_query(&ci->in, &q, &a);
	ci->xv[0] = x[ci->in.rd];
	ci->xv[1] = x[ci->in.rs1];
	ci->xv[2] = x[ci->in.rs2];
	ci->xv[3] = x[ci->in.rs3];
	ci->regs_read = a.regs_read;
	ci->regs_written = a.regs_written;
	ci->nregions = (uint8_t)a.nregions;
	ci->region0 = (uint32_t)c->nregions;
	if (c->nregions + a.nregions > c->regions_cap) {
		c->regions_cap = c->regions_cap ? 2 * c->regions_cap : 4096;
		c->regions = snr_xrealloc(c->regions, c->regions_cap * sizeof(*c->regions));
	}
	memcpy(c->regions + c->nregions, a.region, a.nregions * sizeof(*a.region));
	c->nregions += a.nregions;
	return 0;
}

static const struct snr_sim_ops cap_ops = {
	.abi_version = SNR_SIM_ABI_VERSION,
	.name = "ta1",
	.isa = "ta1",
	.create = cap_create,
	.destroy = cap_destroy,
	.error = cap_error,
	.attach_tracker = cap_attach,
	.set_reg = cap_set_reg,
	.get_reg = cap_get_reg,
	.load_mem = cap_load_mem,
	.read_mem = cap_read_mem,
	.load_code = cap_load_code,
	.step = cap_step,
	.finish = cap_finish,
};

static int capture_trace(struct capture *c, const char *path, const char *config_path, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	cap_now = c;
	struct snr_replay_opts o = {.trace_path = path, .config_path = config_path, .sim_ops = &cap_ops};
	struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
	int rc = snr_replay(&o, r, err, errlen);
	if (!rc && !r->ok) {
		snr_fmt(err, errlen, "%s: the what-if capture replay diverged", path);
		rc = -1;
	}
	free(r);
	cap_now = NULL;
	return rc;
}

static void capture_free(struct capture *c)
{
	free(c->v);
	free(c->regions);
}

/* Runs the stream in `order` (n indices) through a fresh timing model. */
static uint64_t what_if(const struct capture *c, const uint64_t *order, size_t n)
{
	struct ta1_timing_model *t = ta1_timing_new(&c->cfg, NULL, c->chip);
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		for (unsigned k = 0; k < c->pre_window[f]; k++)
			ta1_timing_pre_window_dma(t, f, 0, TA1_SPACE_HBM, TA1_SPACE_VMEM);
	/* x and a are reused: only the captured registers and regions are set
	 * (and x cleared again after), which is all the model reads */
	uint64_t x[32] = {0};
	struct ta1_access a = {0};
	for (size_t k = 0; k < n; k++) {
		const struct cap_insn *ci = &c->v[order[k]];
		x[ci->in.rs3] = ci->xv[3];
		x[ci->in.rs2] = ci->xv[2];
		x[ci->in.rs1] = ci->xv[1];
		x[ci->in.rd] = ci->xv[0];
		x[0] = 0;
		a.regs_read = ci->regs_read;
		a.regs_written = ci->regs_written;
		a.nregions = ci->nregions;
		memcpy(a.region, c->regions + ci->region0, ci->nregions * sizeof(*a.region));
		ta1_timing_insn(t, order[k], ci->pc, &ci->in, &a, x, ci->next_pc);
		x[ci->in.rs3] = x[ci->in.rs2] = x[ci->in.rs1] = x[ci->in.rd] = 0;
	}
	uint64_t cycles = ta1_timing_drain(t);
	ta1_timing_free(t);
	return cycles;
}

/* ---- Algorithm 2 --------------------------------------------------------- */

struct suggestion {
	const struct snr_deps_dma *m;
	uint64_t at;        /* the move: the DMA issues just before this instruction index */
	size_t slice0;      /* m->slice[slice0..] is what moves with it (the slice at or after `at`) */
	bool suggested;
	const char *reason; /* why not */
	uint64_t free_lo, free_hi; /* VMEM [lo, hi), addresses */
	bool vmem_checked, own_region;
	uint64_t predicted;
	bool verified;
	uint64_t baseline, moved, realized;
	int64_t realized_signed;
};

/* Page p holds no value over [c0, c1) but those `own` wrote (the DMA's own,
 * which the move only brings in earlier). */
static bool page_free(const struct snr_deps *d, uint64_t p, uint64_t c0, uint64_t c1, uint64_t own)
{
	for (size_t k = d->occ_start[p]; k < d->occ_start[p + 1]; k++) {
		const struct snr_deps_occ *v = &d->occ[k];
		if (v->writer != own && v->lo < c1 && v->hi > c0)
			return false;
	}
	return true;
}

/* A contiguous VMEM region of `bytes` free over [c0, c1): the DMA's own
 * destination if it is, else the first fit. */
static bool free_region(const struct snr_deps *d, const struct snr_deps_dma *m, uint64_t c0, uint64_t c1,
			uint64_t *lo, uint64_t *hi, bool *own)
{
	uint64_t pb = d->page_bytes, need = (m->bytes + pb - 1) / pb, me = (uint64_t)m->issue_index;
	if (!need)
		need = 1;
	*own = false;
	if (m->dst_addr >= TA1_VMEM_BASE) {
		uint64_t p0 = (m->dst_addr - TA1_VMEM_BASE) / pb;
		uint64_t p1 = (m->dst_addr - TA1_VMEM_BASE + (m->bytes ? m->bytes : 1) - 1) / pb;
		bool ok = p1 < d->npages;
		for (uint64_t p = p0; ok && p <= p1; p++)
			ok = page_free(d, p, c0, c1, me);
		if (ok) {
			*lo = m->dst_addr;
			*hi = m->dst_addr + m->bytes;
			*own = true;
			return true;
		}
	}
	uint64_t run = 0;
	for (uint64_t p = 0; p < d->npages; p++) {
		run = page_free(d, p, c0, c1, me) ? run + 1 : 0;
		if (run >= need) {
			uint64_t first = p + 1 - run;
			while (first + run < d->npages && page_free(d, first + run, c0, c1, me))
				run++;
			*lo = TA1_VMEM_BASE + first * pb;
			*hi = *lo + run * pb;
			return true;
		}
	}
	return false;
}

/* The cycle the core reaches instruction p: issued just before p, a DMA
 * issues then (before any stall of p itself). */
static uint64_t reach_cycle(const struct snr_deps *d, uint64_t p)
{
	return p && p <= d->ninsn ? d->insn[p - 1].issue + 1 : 0;
}

static void evaluate(const struct snr_deps *d, const struct snr_deps_dma *m, struct suggestion *s)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	if (m->backtail_cycles <= m->stall_cycles) {
		s->reason = m->anchor_kind == SNR_ANCHOR_DMA || m->anchor_kind == SNR_ANCHOR_NO_WAIT
				    ? "its inputs come from a DMA just before: backtail does not exceed the stall"
				    : "backtail does not exceed the stall";
		return;
	}
	/* The move: the latest point at or after the position where the DMA
	 * would issue at least its stall earlier; no further than needed, so it
	 * holds its buffer, and hoists instructions, no longer than needed. */
	uint64_t i = (uint64_t)m->issue_index, issue = d->insn[i].issue;
	s->at = i;
	while (s->at > m->position && issue - reach_cycle(d, s->at) < m->stall_cycles)
		s->at--;
	while (s->slice0 < m->nslice && m->slice[s->slice0] < s->at)
		s->slice0++;
	if (m->dst_space == TA1_SPACE_VMEM) {
		s->vmem_checked = true;
		uint64_t c0 = reach_cycle(d, s->at);
		if (!free_region(d, m, c0, m->complete_cycle, &s->free_lo, &s->free_hi, &s->own_region)) {
			s->reason = "no contiguous VMEM region of its size is free from the earlier point";
			return;
		}
	}
	s->suggested = true;
	s->predicted = m->stall_cycles;
}

struct slotted {
	uint64_t slot, index;
};

static int cmp_slotted(const void *a, const void *b)
{
	const struct slotted *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* The what-if order with the moves of `moves` (n suggestions) applied: each
 * move's slice and DMA ISSUE, in their original order, just before its
 * point. An instruction in the slices of several moves goes to the earliest
 * of their points. Returns the length of the order. */
static size_t moved_order(const struct capture *c, const struct suggestion *const *moves, size_t n, uint64_t *order)
{
	size_t len = c->n;
	uint64_t *slot = snr_xcalloc(len ? len : 1, sizeof(*slot)); /* 0: stays; else point + 1 */
	for (size_t j = 0; j < n; j++) {
		const struct suggestion *s = moves[j];
		const struct snr_deps_dma *m = s->m;
		for (size_t k = s->slice0; k <= m->nslice; k++) {
			uint64_t q = k < m->nslice ? m->slice[k] : (uint64_t)m->issue_index;
			if (q < len && (!slot[q] || slot[q] > s->at + 1))
				slot[q] = s->at + 1;
		}
	}
	/* moved instructions by (point, original index), merged into the rest */
	struct slotted *byslot = snr_xcalloc(len ? len : 1, sizeof(*byslot));
	size_t nmoved = 0;
	for (uint64_t k = 0; k < len; k++)
		if (slot[k])
			byslot[nmoved++] = (struct slotted){slot[k], k};
	qsort(byslot, nmoved, sizeof(*byslot), cmp_slotted);
	size_t o = 0, mk = 0;
	for (uint64_t k = 0; k < len; k++) {
		while (mk < nmoved && byslot[mk].slot <= k + 1)
			order[o++] = byslot[mk++].index;
		if (!slot[k])
			order[o++] = k;
	}
	while (mk < nmoved)
		order[o++] = byslot[mk++].index;
	free(byslot);
	free(slot);
	return o;
}

static uint64_t what_if_moves(const struct capture *c, const struct suggestion *const *moves, size_t n)
{
	uint64_t *order = snr_xcalloc(c->n ? c->n : 1, sizeof(*order));
	size_t o = moved_order(c, moves, n, order);
	uint64_t cyc = what_if(c, order, o);
	free(order);
	return cyc;
}

static void verify(const struct capture *c, uint64_t baseline, struct suggestion *s)
{
	const struct suggestion *one = s;
	uint64_t cyc = what_if_moves(c, &one, 1);
	s->verified = true;
	s->baseline = baseline;
	s->moved = cyc;
	s->realized_signed = (int64_t)baseline - (int64_t)cyc;
}

static void print_pcs(FILE *f, const struct snr_deps *d, const struct suggestion *s)
{
	const struct snr_deps_dma *m = s->m;
	if (s->slice0 >= m->nslice) {
		fputs("none", f);
		return;
	}
	for (size_t k = s->slice0; k < m->nslice; k++)
		fprintf(f, "%s0x%" PRIx64, k > s->slice0 ? ", " : "", d->insn[m->slice[k]].pc);
}

/* All the suggested moves applied together. */
struct combined {
	bool done;
	size_t moves;
	uint64_t moved;
	int64_t realized, sum_single; /* baseline - moved; the single moves' realized, summed */
	size_t single_verified;       /* how many single moves sum_single covers */
};

static void print_text(FILE *f, const struct snr_deps *d, const struct suggestion *sg, size_t n, bool verified,
		       uint64_t baseline, const struct combined *cb, unsigned verify_max)
{
	size_t nsug = 0, nstalled = 0;
	for (size_t k = 0; k < n; k++)
		nsug += sg[k].suggested;
	nstalled = n;
	fprintf(f, "suggest: %s: %" PRIu64 " instructions, %" PRIu64 " cycles; %zu stalled DMAs, %zu suggestions\n",
		d->an.src.path, d->an.src.instructions, d->an.src.cycles, nstalled, nsug);
	if (verified)
		fprintf(f, "what-if baseline: %" PRIu64 " cycles (the replay: %" PRIu64 ")%s\n", baseline,
			d->an.src.cycles, nsug > verify_max ? "; only the largest predictions are verified (--verify-max)" : "");
	for (size_t k = 0; k < n; k++) {
		const struct suggestion *s = &sg[k];
		const struct snr_deps_dma *m = s->m;
		char sym[256], ysym[256];
		uint64_t pc = d->insn[m->issue_index].pc;
		uint64_t ypc = s->at < d->ninsn ? d->insn[s->at].pc : 0;
		snr_source_symbolize(&d->an.src, pc, sym, sizeof(sym));
		snr_source_symbolize(&d->an.src, ypc, ysym, sizeof(ysym));
		fprintf(f, "\nDMA %" PRIu64 " at pc 0x%" PRIx64 " (%s), #%" PRId64 ": stall %" PRIu64
			   " cycles, backtail %" PRIu64 " insns / %" PRIu64 " cycles\n",
			m->id, pc, sym, m->issue_index, m->stall_cycles, m->backtail_insns, m->backtail_cycles);
		if (!s->suggested) {
			fprintf(f, "  no suggestion: %s\n", s->reason);
			continue;
		}
		fprintf(f, "  issue the DMA at pc 0x%" PRIx64 ", with the instructions that compute its operands\n"
			   "  (pcs ",
			pc);
		print_pcs(f, d, s);
		fprintf(f, "), before pc 0x%" PRIx64 " (%s, #%" PRIu64 ");\n  removes ~%" PRIu64 " stall cycles", ypc,
			ysym, s->at, s->predicted);
		if (s->vmem_checked)
			fprintf(f, "; VMEM [0x%" PRIx64 ", 0x%" PRIx64 ") is free from pc 0x%" PRIx64 " on%s\n",
				s->free_lo, s->free_hi, ypc, s->own_region ? " (its own destination)" : "");
		else
			fprintf(f, " (destination not in VMEM)\n");
		if (s->verified)
			fprintf(f, "  verify: predicted %" PRIu64 ", realized %" PRId64 " cycles (%" PRIu64 " -> %" PRIu64
				   ", %.0f%%)\n",
				s->predicted, s->realized_signed, s->baseline, s->moved,
				s->predicted ? 100.0 * (double)s->realized_signed / (double)s->predicted : 0.0);
		else if (verified)
			fprintf(f, "  verify: not run (beyond the %u largest predictions)\n", verify_max);
	}
	if (cb->done)
		fprintf(f, "\nall %zu moves together: realized %" PRId64 " cycles (%" PRIu64 " -> %" PRIu64
			   "); the %s%zu single moves' realized sum to %" PRId64 "\n",
			cb->moves, cb->realized, baseline, cb->moved, cb->single_verified < cb->moves ? "verified " : "",
			cb->single_verified, cb->sum_single);
}

static void print_json(FILE *f, const struct snr_deps *d, const struct suggestion *sg, size_t n, bool verified,
		       uint64_t baseline, const struct combined *cb, unsigned verify_max)
{
	fprintf(f, "{\"analysis\":\"suggest\",\"instructions\":%" PRIu64 ",\"cycles\":%" PRIu64
		   ",\"max_chain\":%u,\"verified\":%s",
		d->an.src.instructions, d->an.src.cycles, d->max_chain, verified ? "true" : "false");
	if (verified)
		fprintf(f, ",\"what_if_baseline_cycles\":%" PRIu64 ",\"verify_max\":%u", baseline, verify_max);
	fputs(",\"stalled_dmas\":[", f);
	for (size_t k = 0; k < n; k++) {
		const struct suggestion *s = &sg[k];
		const struct snr_deps_dma *m = s->m;
		fprintf(f, "%s\n{\"dma\":", k ? "," : "");
		snr_deps_print_dma_json(f, d, m);
		fprintf(f, ",\"suggested\":%s", s->suggested ? "true" : "false");
		if (!s->suggested) {
			fprintf(f, ",\"reason\":\"%s\"}", s->reason);
			continue;
		}
		uint64_t ypc = s->at < d->ninsn ? d->insn[s->at].pc : 0;
		fprintf(f, ",\"move\":{\"dma_pc\":%" PRIu64 ",\"operand_pcs\":[", d->insn[m->issue_index].pc);
		for (size_t j = s->slice0; j < m->nslice; j++)
			fprintf(f, "%s%" PRIu64, j > s->slice0 ? "," : "", d->insn[m->slice[j]].pc);
		fprintf(f, "],\"before_pc\":%" PRIu64 ",\"before_index\":%" PRIu64 "},\"predicted_cycles\":%" PRIu64, ypc,
			s->at, s->predicted);
		if (s->vmem_checked)
			fprintf(f, ",\"vmem_free\":{\"lo\":%" PRIu64 ",\"hi\":%" PRIu64 ",\"own_destination\":%s}",
				s->free_lo, s->free_hi, s->own_region ? "true" : "false");
		else
			fputs(",\"vmem_free\":null", f);
		if (s->verified)
			fprintf(f, ",\"verify\":{\"baseline_cycles\":%" PRIu64 ",\"moved_cycles\":%" PRIu64
				   ",\"realized_cycles\":%" PRId64 "}",
				s->baseline, s->moved, s->realized_signed);
		else if (verified)
			fputs(",\"verify\":null", f);
		fputc('}', f);
	}
	fputc(']', f);
	if (cb->done)
		fprintf(f, ",\"combined\":{\"moves\":%zu,\"moved_cycles\":%" PRIu64 ",\"realized_cycles\":%" PRId64
			   ",\"sum_of_single_realized\":%" PRId64 ",\"single_verified\":%zu}",
			cb->moves, cb->moved, cb->realized, cb->sum_single, cb->single_verified);
	fputs("}\n", f);
}

static const struct suggestion *rank_sg;
static int cmp_predicted(const void *a, const void *b)
{
	const struct suggestion *x = &rank_sg[*(const size_t *)a], *y = &rank_sg[*(const size_t *)b];
	if (x->predicted != y->predicted)
		return x->predicted > y->predicted ? -1 : 1;
	return x->m->id < y->m->id ? -1 : x->m->id > y->m->id;
}

int snr_suggest_write(struct snr_deps *d, const struct snr_deps_opts *o, unsigned verify_max, bool json, FILE *out,
		      char *err, size_t errlen)
{
	struct suggestion *sg = snr_xcalloc(d->ndmas + 1, sizeof(*sg));
	size_t n = 0, nsug = 0;
	for (size_t k = 0; k < d->ndmas; k++) {
		const struct snr_deps_dma *m = &d->dmas[k];
		if (m->stall_cycles == 0 || m->issue_index < 0)
			continue; /* not stalled, or issued before the window: nothing to move */
		evaluate(d, m, &sg[n]);
		nsug += sg[n++].suggested;
	}
	int rc = 0;
	uint64_t baseline = 0;
	bool verified = false;
	struct combined cb = {0};
	if (verify_max) {
		const char *trace_path = d->an.src.is_trace ? d->an.src.path : NULL;
		char *from_meta = NULL;
		if (!trace_path && d->an.src.metrics) {
			/* a metrics file names the trace it was replayed from */
			const char *mj = snr_metrics_meta_json(d->an.src.metrics);
			const char *k = mj ? strstr(mj, "\"trace\":\"") : NULL;
			if (k) {
				k += 9;
				const char *e = strchr(k, '"');
				if (e)
					from_meta = strndup(k, (size_t)(e - k));
			}
			trace_path = from_meta;
		}
		struct capture c;
		if (!d->ta1) {
			snr_fmt(err, errlen, "--verify runs the TA1 timing model; this trace is not TA1 code");
			rc = 1;
		} else if (!trace_path) {
			snr_fmt(err, errlen, "--verify needs the trace");
			rc = 1;
		} else if (o->sim && strcmp(o->sim, "ta1")) {
			snr_fmt(err, errlen, "--verify runs the TA1 timing model; --sim %s has none", o->sim);
			rc = 1;
		} else if (capture_trace(&c, trace_path, o->config_path, err, errlen)) {
			capture_free(&c);
			rc = 1;
		} else {
			uint64_t *order = snr_xcalloc(c.n ? c.n : 1, sizeof(*order));
			for (size_t k = 0; k < c.n; k++)
				order[k] = k;
			baseline = what_if(&c, order, c.n);
			free(order);
			verified = true;
			/* Each what-if runs the whole window again: the largest
			 * predictions first, at most verify_max of them; then all
			 * the suggested moves together, once. */
			size_t *rank = snr_xcalloc(nsug + 1, sizeof(*rank)), r = 0;
			for (size_t k = 0; k < n; k++)
				if (sg[k].suggested)
					rank[r++] = k;
			rank_sg = sg;
			qsort(rank, r, sizeof(*rank), cmp_predicted);
			for (size_t k = 0; k < r && k < verify_max; k++) {
				verify(&c, baseline, &sg[rank[k]]);
				cb.sum_single += sg[rank[k]].realized_signed;
				cb.single_verified++;
			}
			const struct suggestion **moves = snr_xcalloc(r + 1, sizeof(*moves));
			for (size_t k = 0; k < r; k++)
				moves[cb.moves++] = &sg[rank[k]];
			if (cb.moves) {
				cb.moved = what_if_moves(&c, moves, cb.moves);
				cb.realized = (int64_t)baseline - (int64_t)cb.moved;
				cb.done = true;
			}
			free(moves);
			free(rank);
			capture_free(&c);
		}
		free(from_meta);
	}
	if (json)
		print_json(out, d, sg, n, verified, baseline, &cb, verify_max);
	else
		print_text(out, d, sg, n, verified, baseline, &cb, verify_max);
	free(sg);
	return rc;
}

int snr_suggest_run(const char *path, const struct snr_deps_opts *o, unsigned verify_max, bool json, FILE *out,
		    char *err, size_t errlen)
{
	struct snr_deps d;
	if (snr_deps_run(&d, path, o, err, errlen)) {
		snr_deps_free(&d);
		return -1;
	}
	int rc = snr_suggest_write(&d, o, verify_max, json, out, err, errlen);
	snr_deps_free(&d);
	return rc;
}

static const char suggest_usage[] =
	"usage: snr analyze suggest T.snrt|M.snrm [--verify] [--verify-max N] [--json] [--max-chain K]\n"
	"                           [--sim NAME] [--config M.json]\n"
	"\n"
	"Algorithm 2 of Snap & Replay: for each DMA a WAIT stalled on, if its relaxed dependency\n"
	"distance (backtail, `snr analyze deps`) exceeds the stall and VMEM has a contiguous free\n"
	"region as large as its destination from the earlier point on, suggest moving it there\n"
	"(no further than its stall needs), with the instructions that compute its operands.\n"
	"\n"
	"  --verify        apply each move, then all of them together, in what-if runs of the timing\n"
	"                  model and print predicted against realized cycles saved (needs the trace;\n"
	"                  for a metrics file, the trace it was replayed from)\n"
	"  --verify-max N  single what-if runs for at most the N largest predictions (default 16;\n"
	"                  each runs the whole window); all the moves together run once more\n"
	"  --json          machine-readable output (docs/analyses.md, \"suggest\")\n"
	"  --max-chain K   the lightweight threshold of the relaxed dependencies (default 16)\n";

int snr_analyze_suggest(int argc, char **argv)
{
	static const struct option opts[] = {{"verify", no_argument, NULL, 'v'},
					     {"verify-max", required_argument, NULL, 'n'},
					     {"json", no_argument, NULL, 'j'},
					     {"max-chain", required_argument, NULL, 'k'},
					     {"sim", required_argument, NULL, 's'},
					     {"config", required_argument, NULL, 'c'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	bool json = false, do_verify = false;
	unsigned verify_max = SNR_SUGGEST_DEFAULT_VERIFY_MAX;
	struct snr_deps_opts o = {0};
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'v': do_verify = true; break;
		case 'n':
			if (snr_deps_parse_count(optarg, "suggest", "--verify-max", &verify_max))
				return 2;
			break;
		case 'j': json = true; break;
		case 'k':
			if (snr_deps_parse_count(optarg, "suggest", "--max-chain", &o.max_chain))
				return 2;
			break;
		case 's': o.sim = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 'h': fputs(suggest_usage, stdout); return 0;
		default: fputs(suggest_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		fputs(suggest_usage, stderr);
		return 2;
	}
	char err[4096] = "";
	int rc = snr_suggest_run(argv[optind], &o, do_verify ? verify_max : 0, json, stdout, err, sizeof(err));
	if (rc)
		snr_err("analyze suggest: %s%s", rc > 0 ? "--verify: " : "", err);
	return rc < 0 ? 1 : rc;
}
