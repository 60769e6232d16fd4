/*
 * ta1_timing.c: TA1's timing model (the rules, with formulas and worked
 * examples, are in docs/ta1-timing.md; this file follows them in order).
 *
 * The scalar core issues in order, at most one instruction per cycle, behind
 * a register scoreboard; taken branches cost scalar.branch_taken_cycles. The
 * vector unit, the MXU and the DMA engine run asynchronously: an instruction
 * hands its work over at the end of its issue cycle, so the work starts the
 * cycle after. A VMEM scoreboard makes an instruction whose VMEM (or MXU
 * weight buffer) operand overlaps a region an op in flight still writes wait
 * until that op ends.
 *
 * The DMA engine is an event-driven fluid model. Each DMA spends the constant
 * base latency Tb (overlapping freely with other DMAs), then joins the FIFO of
 * its link (source memory, destination memory); a link moves one transfer at
 * a time; a transfer's rate is min over the memories it touches of
 * bandwidth / transfers active on that memory, recomputed whenever a transfer
 * starts or ends. Internal times are real numbers; every reported cycle is
 * the ceiling. Completions count on the DMA's sync flag; a WAIT consumes them
 * in completion order and its stall is split per DMA into base latency and
 * transfer (the paper's Figure 4), or the DMA's slack is reported.
 *
 * The engine is advanced lazily: only when the core reaches a cycle at or
 * after its next event, or a WAIT needs a completion, so a program without
 * DMAs in flight pays one comparison per instruction for it. Tracker
 * callbacks are tested through a mask computed once in ta1_timing_new.
 */
#include "sim/ta1_timing.h"

#include "sim/ta1_fabric.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

#define NIL UINT32_MAX

/* A completion on a flag: the fabric's record of a DMA (this chip's, or
 * another chip's that signals this one by ta.dma.notify). */
struct completion {
	uint32_t dma;
	uint32_t next;
};

/* A VMEM or MXU-weight region written by a vector or MXU op until `end`. */
struct vmem_write {
	uint8_t space;
	uint16_t chip;
	uint64_t lo, hi;
	uint64_t end;
	uint64_t index;
};

struct ta1_timing_model {
	struct snr_config cfg;
	struct snr_tracker tr;
	unsigned mask;
	unsigned chip;

	/* scalar core */
	uint64_t next_issue; /* last issue + 1 */
	uint64_t redirect;   /* earliest issue after a taken branch */
	uint64_t redirect_index;
	/* per register; then TA1_TIMING_NO_REG, never written (a missing source
	 * of ta1_timing_pre: ready at 0), and TA1_TIMING_NO_DST, never read (a
	 * missing destination) */
	uint64_t reg_ready[TA1_REG_COUNT + 2];
	uint64_t reg_producer[TA1_REG_COUNT + 2];
	uint64_t horizon; /* the last cycle anything seen so far ends */
	bool scalar_run;  /* a busy run of issue cycles is open */
	uint64_t scalar_run_start, scalar_run_end, scalar_run_index;

	/* vector unit and MXU: the cycle each is free again and its last op */
	uint64_t unit_free[SNR_UNIT_COUNT];
	uint64_t unit_last[SNR_UNIT_COUNT];
	struct vmem_write *writes;
	size_t nwrites, cap_writes;

	/* DMA: the fabric (shared by a pod's chips, else this model's own) and
	 * the completions each flag holds, in completion order */
	struct ta1_fabric *fabric;
	bool own_fabric;
	bool private_run; /* ta1_timing_set_private: the fabric is not advanced here */
	unsigned dma_nactive; /* this chip's transfers moving */
	uint64_t dma_busy_start, dma_busy_index;
	struct completion *compl;
	uint32_t ncompl, cap_compl, compl_free;
	uint32_t flag_head[TA1_NUM_FLAGS], flag_tail[TA1_NUM_FLAGS];
	uint64_t flag_done[TA1_NUM_FLAGS], flag_inflight[TA1_NUM_FLAGS];

	struct ta1_timing_totals tot;

	/* per op, from the ISA table and the config: class, unit, scalar latency,
	 * and whether it is scalar work (no DMA, WAIT, vector or matrix unit) */
	uint8_t op_cls[TA1_OP_COUNT], op_unit[TA1_OP_COUNT], op_scalar[TA1_OP_COUNT];
	uint64_t op_latency[TA1_OP_COUNT];
};

/* ---- helpers ------------------------------------------------------------- */

static uint64_t max_u64(uint64_t a, uint64_t b)
{
	return a > b ? a : b;
}

static uint64_t div_ceil(uint64_t a, uint64_t b)
{
	return a / b + (a % b != 0);
}

static inline void note_end(struct ta1_timing_model *t, uint64_t c)
{
	if (c > t->horizon)
		t->horizon = c;
}

static void emit_stall(struct ta1_timing_model *t, uint64_t index, enum snr_stall_cause cause, uint64_t start,
		       uint64_t cycles, int64_t responsible, uint64_t dma_id)
{
	if (!cycles)
		return;
	t->tot.stall_cycles[cause] += cycles;
	if (t->mask & SNR_TRACK_STALL) {
		struct snr_ev_stall e = {.index = index,
					 .cycles = cycles,
					 .start = start,
					 .cause = (uint8_t)cause,
					 .responsible = responsible,
					 .dma_id = dma_id};
		t->tr.on_stall(t->tr.user, &e);
	}
}

static void emit_busy(struct ta1_timing_model *t, enum snr_unit u, uint64_t start, uint64_t end,
		      uint64_t index)
{
	if (end <= start)
		return;
	t->tot.busy_cycles[u] += end - start;
	if (t->mask & SNR_TRACK_BUSY) {
		struct snr_ev_busy e = {.unit = (uint8_t)u, .start = start, .end = end, .index = index};
		t->tr.on_busy(t->tr.user, &e);
	}
}

/* One memory event per region; a strided region gives one per row unless
 * its rows are contiguous. */
static void emit_region(struct ta1_timing_model *t, uint64_t index, uint64_t cycle,
			const struct ta1_region *r)
{
	if (!(t->mask & SNR_TRACK_MEM) || !r->rows || r->space == TA1_SPACE_NONE)
		return;
	struct snr_ev_mem e = {.index = index,
			       .cycle = cycle,
			       .write = r->write,
			       .space = r->space,
			       .chip = r->chip,
			       .addr = r->addr,
			       .bytes = r->row_bytes * r->rows};
	if (r->rows == 1 || r->stride == (int64_t)r->row_bytes) {
		t->tr.on_mem(t->tr.user, &e);
		return;
	}
	e.bytes = r->row_bytes;
	for (uint64_t i = 0; i < r->rows; i++) {
		e.addr = r->addr + (uint64_t)((int64_t)i * r->stride);
		t->tr.on_mem(t->tr.user, &e);
	}
}

/* A DMA's event on this chip's tracker. Another chip's DMA (a peer signal
 * this chip waited for) has no ISSUE in this chip's window: issue_index -1. */
static void emit_dma(struct ta1_timing_model *t, const struct ta1_dma *d, enum snr_dma_phase phase,
		     uint64_t cycle, int64_t wait_index, uint64_t stall_base, uint64_t stall_transfer,
		     uint64_t slack)
{
	if (!(t->mask & SNR_TRACK_DMA))
		return;
	struct snr_ev_dma e = {
	    .id = d->id,
	    .phase = (uint8_t)phase,
	    .issue_index = d->owner == t->chip ? d->issue_index : -1,
	    .wait_index = wait_index,
	    .cycle = cycle,
	    .bytes = d->bytes,
	    .src_space = d->src_space,
	    .dst_space = d->dst_space,
	    .src_chip = d->src_chip,
	    .dst_chip = d->dst_chip,
	    .src_addr = d->has_regions ? d->src.addr : 0,
	    .dst_addr = d->has_regions ? d->dst.addr : 0,
	    .flag = d->owner == t->chip ? d->flag : d->peer_flag,
	    .base_cycles = t->cfg.dma_base_latency_cycles,
	    .transfer_cycles = phase >= SNR_DMA_COMPLETED ? d->done_cycle - d->base_end : 0,
	    .stall_base_cycles = stall_base,
	    .stall_transfer_cycles = stall_transfer,
	    .slack_cycles = slack,
	};
	t->tr.on_dma(t->tr.user, &e);
}

/* ---- life cycle ---------------------------------------------------------- */

static uint64_t scalar_latency(const struct ta1_timing_model *t, enum ta1_timing tc);
static enum snr_unit unit_of(enum ta1_class c);

static struct ta1_timing_model *model_new(const struct snr_config *cfg, const struct snr_tracker *tracker,
					   unsigned chip, struct ta1_fabric *fabric)
{
	struct ta1_timing_model *t = snr_xcalloc(1, sizeof(*t));
	t->cfg = *cfg;
	if (tracker && tracker->abi_version >= 1 && tracker->abi_version <= SNR_TRACKER_ABI_VERSION) {
		memcpy(&t->tr, tracker, snr_tracker_size(tracker)); /* a version 1 or 2 tracker ends sooner */
		t->mask = snr_tracker_mask(tracker);
	}
	t->chip = chip;
	t->fabric = fabric;
	ta1_fabric_attach(fabric, chip, t);
	t->compl_free = NIL;
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		t->flag_head[f] = t->flag_tail[f] = NIL;
	for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
		t->op_cls[op] = (uint8_t)ta1_insn_table[op].cls;
		t->op_unit[op] = (uint8_t)unit_of(ta1_insn_table[op].cls);
		t->op_latency[op] = scalar_latency(t, ta1_insn_table[op].timing);
		t->op_scalar[op] = !ta1_class_is_xta(ta1_insn_table[op].cls);
	}
	return t;
}

struct ta1_timing_model *ta1_timing_new(const struct snr_config *cfg, const struct snr_tracker *tracker,
					unsigned chip)
{
	struct snr_config one = *cfg;
	if (one.chips <= chip)
		one.chips = chip + 1;
	if (one.ici_topology == SNR_TOPOLOGY_TORUS && one.ici_torus_x && one.chips % one.ici_torus_x)
		one.ici_torus_x = 0; /* the config was checked against its own chips */
	char err[160];
	struct ta1_fabric *f = ta1_fabric_new(&one, err, sizeof(err));
	if (!f) { /* cannot happen: torus_x 0 always fits */
		snr_err("timing model: %s", err);
		abort();
	}
	ta1_fabric_single(f);
	struct ta1_timing_model *t = model_new(cfg, tracker, chip, f);
	t->own_fabric = true;
	return t;
}

struct ta1_timing_model *ta1_timing_new_pod(struct ta1_fabric *fabric, const struct snr_tracker *tracker,
					    unsigned chip)
{
	return model_new(ta1_fabric_config(fabric), tracker, chip, fabric);
}

void ta1_timing_free(struct ta1_timing_model *t)
{
	if (!t)
		return;
	if (t->own_fabric)
		ta1_fabric_free(t->fabric);
	else
		ta1_fabric_attach(t->fabric, t->chip, NULL);
	free(t->writes);
	free(t->compl);
	free(t);
}

/* ---- DMA: this chip's side of the fabric --------------------------------- */

static void flag_push(struct ta1_timing_model *t, unsigned flag, uint32_t dma, uint64_t done_cycle)
{
	uint32_t c = t->compl_free;
	if (c != NIL) {
		t->compl_free = t->compl[c].next;
	} else {
		if (t->ncompl == t->cap_compl) {
			t->cap_compl = t->cap_compl ? 2 * t->cap_compl : 16;
			t->compl = snr_xrealloc(t->compl, t->cap_compl * sizeof(*t->compl));
		}
		c = t->ncompl++;
	}
	t->compl[c] = (struct completion){.dma = dma, .next = NIL};
	if (t->flag_tail[flag] == NIL)
		t->flag_head[flag] = c;
	else
		t->compl[t->flag_tail[flag]].next = c;
	t->flag_tail[flag] = c;
	t->flag_done[flag]++;
	if (t->flag_inflight[flag])
		t->flag_inflight[flag]--;
	note_end(t, done_cycle);
}

void ta1_timing_dma_started(struct ta1_timing_model *t, const struct ta1_dma *d)
{
	emit_dma(t, d, SNR_DMA_STARTED, d->base_end, -1, 0, 0, 0);
}

void ta1_timing_dma_active(struct ta1_timing_model *t, const struct ta1_dma *d, uint64_t cycle)
{
	if (t->dma_nactive++ == 0) {
		t->dma_busy_start = cycle;
		t->dma_busy_index = (uint64_t)d->issue_index;
	}
	if (d->has_regions)
		emit_region(t, (uint64_t)d->issue_index, cycle, &d->src);
}

void ta1_timing_dma_completed(struct ta1_timing_model *t, uint32_t i, const struct ta1_dma *d)
{
	if (d->queue != NIL && --t->dma_nactive == 0)
		emit_busy(t, SNR_UNIT_DMA, t->dma_busy_start, d->done_cycle, t->dma_busy_index);
	emit_dma(t, d, SNR_DMA_COMPLETED, d->done_cycle, -1, 0, 0, 0);
	if (d->has_regions && d->queue != NIL)
		emit_region(t, (uint64_t)d->issue_index, d->done_cycle, &d->dst);
	flag_push(t, d->flag, i, d->done_cycle);
}

void ta1_timing_fabric_sample(struct ta1_timing_model *t, const struct snr_ev_fabric *e)
{
	if (t->mask & SNR_TRACK_FABRIC)
		t->tr.on_fabric(t->tr.user, e);
}

void ta1_timing_dma_signalled(struct ta1_timing_model *t, uint32_t i, const struct ta1_dma *d)
{
	flag_push(t, d->peer_flag, i, d->done_cycle);
}

static void dma_submit(struct ta1_timing_model *t, uint32_t i)
{
	struct ta1_dma *d = ta1_fabric_dma(t->fabric, i);
	t->flag_inflight[d->flag]++;
	if (d->peer != TA1_FABRIC_NO_PEER && d->peer < ta1_fabric_nchips(t->fabric)) {
		struct ta1_timing_model *p = ta1_fabric_model(t->fabric, d->peer);
		if (p)
			p->flag_inflight[d->peer_flag]++;
	}
	t->tot.dma_count++;
	t->tot.dma_bytes += d->bytes;
	ta1_fabric_submit(t->fabric, i);
	emit_dma(t, ta1_fabric_dma(t->fabric, i), SNR_DMA_ISSUED, d->issue_cycle, -1, 0, 0, 0);
}

void ta1_timing_pre_window_dma(struct ta1_timing_model *t, unsigned flag, uint64_t bytes, uint8_t src_space,
			       uint8_t dst_space)
{
	if (flag >= TA1_NUM_FLAGS)
		return;
	uint32_t i = ta1_fabric_dma_alloc(t->fabric);
	struct ta1_dma *d = ta1_fabric_dma(t->fabric, i);
	d->owner = (uint16_t)t->chip;
	d->issue_index = -1;
	d->issue_cycle = 0;
	d->bytes = bytes;
	d->flag = (uint16_t)flag;
	ta1_fabric_route(t->fabric, d, src_space, (uint16_t)t->chip, dst_space, (uint16_t)t->chip, 0);
	dma_submit(t, i);
}

/* ---- the core ------------------------------------------------------------ */

static uint64_t scalar_latency(const struct ta1_timing_model *t, enum ta1_timing tc)
{
	switch (tc) {
	case TA1_TIME_MUL:
		return t->cfg.scalar_mul_cycles;
	case TA1_TIME_DIV:
		return t->cfg.scalar_div_cycles;
	case TA1_TIME_LOAD:
		return t->cfg.scalar_load_cycles;
	case TA1_TIME_STORE:
		return t->cfg.scalar_store_cycles;
	case TA1_TIME_ALU:
	case TA1_TIME_BRANCH:
	case TA1_TIME_SYSTEM:
		return t->cfg.scalar_alu_cycles;
	default:
		return 1;
	}
}

static enum snr_unit unit_of(enum ta1_class c)
{
	switch (c) {
	case TA1_CLASS_DMA_ISSUE:
	case TA1_CLASS_DMA_WAIT:
		return SNR_UNIT_DMA;
	case TA1_CLASS_VECTOR:
		return SNR_UNIT_VECTOR;
	case TA1_CLASS_MATRIX:
		return SNR_UNIT_MXU;
	default:
		return SNR_UNIT_SCALAR;
	}
}

/* Cycles the op occupies its unit. */
static uint64_t unit_cycles(const struct ta1_timing_model *t, const struct ta1_insn *in, const uint64_t *x)
{
	const struct snr_config *c = &t->cfg;
	switch ((enum ta1_op)in->op) {
	case TA1_OP_TA_VADD:
	case TA1_OP_TA_VMUL:
	case TA1_OP_TA_VMAX:
	case TA1_OP_TA_VSCALE:
	case TA1_OP_TA_VEXP:
		return c->vector_latency_cycles + div_ceil(x[in->rd], c->vector_f32_per_cycle);
	case TA1_OP_TA_VSUMROWS: {
		uint64_t rows = x[in->rs3], cols = x[in->rd];
		uint64_t n = cols && rows > UINT64_MAX / cols ? UINT64_MAX : rows * cols;
		return c->vector_latency_cycles + div_ceil(n, c->vector_f32_per_cycle);
	}
	case TA1_OP_TA_MXU_LOAD:
		return c->mxu_weight_load_cycles;
	case TA1_OP_TA_MXU_MM:
	case TA1_OP_TA_MXU_MMA:
		return c->mxu_fill_cycles + div_ceil(x[in->rd], c->mxu_rows_per_cycle);
	default:
		return 0;
	}
}

static bool is_vmem_space(uint8_t s)
{
	return s == TA1_SPACE_VMEM || s == TA1_SPACE_MXUW;
}

static void region_extent(const struct ta1_region *r, uint64_t *lo, uint64_t *hi)
{
	int64_t span = (int64_t)(r->rows - 1) * r->stride;
	*lo = span < 0 ? r->addr + (uint64_t)span : r->addr;
	*hi = (span < 0 ? r->addr : r->addr + (uint64_t)span) + r->row_bytes;
}

/* The latest end among in-flight writes overlapping a's VMEM regions (0 if
 * none), and the op responsible. Extents of strided regions are compared as a
 * whole (conservative). */
static uint64_t vmem_hazard(struct ta1_timing_model *t, const struct ta1_access *a, uint64_t *who)
{
	uint64_t end = 0;
	for (unsigned k = 0; k < a->nregions; k++) {
		const struct ta1_region *r = &a->region[k];
		if (!r->rows || !is_vmem_space(r->space))
			continue;
		uint64_t lo, hi;
		region_extent(r, &lo, &hi);
		for (size_t w = 0; w < t->nwrites; w++) {
			const struct vmem_write *v = &t->writes[w];
			if (v->space == r->space && v->chip == r->chip && lo < v->hi && v->lo < hi &&
			    v->end > end) {
				end = v->end;
				*who = v->index;
			}
		}
	}
	return end;
}

static void add_vmem_writes(struct ta1_timing_model *t, const struct ta1_access *a, uint64_t end,
			    uint64_t index)
{
	for (unsigned k = 0; k < a->nregions; k++) {
		const struct ta1_region *r = &a->region[k];
		if (!r->write || !r->rows || !is_vmem_space(r->space))
			continue;
		if (t->nwrites == t->cap_writes) {
			t->cap_writes = t->cap_writes ? 2 * t->cap_writes : 8;
			t->writes = snr_xrealloc(t->writes, t->cap_writes * sizeof(*t->writes));
		}
		struct vmem_write *v = &t->writes[t->nwrites++];
		v->space = r->space;
		v->chip = r->chip;
		region_extent(r, &v->lo, &v->hi);
		v->end = end;
		v->index = index;
	}
}

static inline __attribute__((always_inline)) void scalar_busy(struct ta1_timing_model *t, uint64_t issue, uint64_t index)
{
	if (t->scalar_run && issue == t->scalar_run_end) {
		t->scalar_run_end++;
		return;
	}
	if (t->scalar_run)
		emit_busy(t, SNR_UNIT_SCALAR, t->scalar_run_start, t->scalar_run_end, t->scalar_run_index);
	t->scalar_run = true;
	t->scalar_run_start = issue;
	t->scalar_run_end = issue + 1;
	t->scalar_run_index = index;
}

/* WAIT(flag, count) ready to issue at `at`: consumes `count` completions of
 * the flag in completion order, splits the stall per DMA (Figure 4) and
 * returns the WAIT's issue cycle. */
static uint64_t do_wait(struct ta1_timing_model *t, uint64_t index, uint64_t pc, uint64_t at, unsigned flag,
			uint64_t count)
{
	struct ta1_fabric *fab = t->fabric;
	ta1_fabric_run_until(fab, (double)at);
	while (t->flag_done[flag] < count && t->flag_inflight[flag] > 0 && isfinite(ta1_fabric_next_event(fab)))
		ta1_fabric_run_until(fab, ta1_fabric_next_event(fab));
	/* Completions the model never saw (a DMA before the window that was not
	 * declared) are taken as complete: they add no stall. */
	uint64_t take = count < t->flag_done[flag] ? count : t->flag_done[flag];
	uint64_t issue = at;
	uint32_t c = t->flag_head[flag];
	for (uint64_t n = 0; n < take; n++, c = t->compl[c].next)
		issue = max_u64(issue, ta1_fabric_dma(fab, t->compl[c].dma)->done_cycle);
	uint64_t seg_start = at; /* the stall so far is accounted up to here */
	c = t->flag_head[flag];
	for (uint64_t n = 0; n < take; n++) {
		uint32_t i = t->compl[c].dma, next = t->compl[c].next;
		const struct ta1_dma *d = ta1_fabric_dma(fab, i);
		/* another chip's DMA has no ISSUE in this chip's window */
		int64_t responsible = d->owner == t->chip ? d->issue_index : -1;
		uint64_t stall_base = 0, stall_xfer = 0, slack = 0, wait_from = seg_start;
		if (d->done_cycle <= at) {
			slack = at - d->done_cycle;
		} else if (seg_start < d->done_cycle) {
			/* Waiting for this DMA: [seg_start, done); for another chip's
			 * signal, first until that chip issued it (PEER), then the base
			 * latency, then the transfer. */
			uint64_t a = seg_start, b = d->done_cycle;
			if (d->owner != t->chip) {
				uint64_t issued = d->issue_cycle + 1 < a ? a : d->issue_cycle + 1 > b ? b : d->issue_cycle + 1;
				emit_stall(t, index, SNR_STALL_PEER, a, issued - a, responsible, d->id);
				a = issued;
			}
			uint64_t mid = d->base_end < a ? a : d->base_end > b ? b : d->base_end;
			stall_base = mid - a;
			stall_xfer = b - mid;
			emit_stall(t, index, SNR_STALL_DMA_BASE, a, stall_base, responsible, d->id);
			emit_stall(t, index, SNR_STALL_DMA_TRANSFER, mid, stall_xfer, responsible, d->id);
			seg_start = b;
		}
		emit_dma(t, d, SNR_DMA_WAITED, issue, (int64_t)index, stall_base, stall_xfer, slack);
		if (d->owner != t->chip && (t->mask & SNR_TRACK_PEER)) {
			/* which chip's DMA this wait took its signal from (the pod's critical path) */
			const struct snr_ev_peer e = {
			    .wait_index = index,
			    .wait_pc = pc,
			    .wait_start = wait_from,
			    .stall_cycles = d->done_cycle > wait_from ? d->done_cycle - wait_from : 0,
			    .dma_id = d->id,
			    .chip = d->owner,
			    .flag = d->peer_flag,
			    .issue_index = d->issue_index,
			    .issue_pc = d->issue_pc,
			    .issue_cycle = d->issue_cycle,
			    .done_cycle = d->done_cycle,
			    .bytes = d->bytes,
			};
			t->tr.on_peer(t->tr.user, &e);
		}
		ta1_fabric_release(fab, i);
		t->compl[c].next = t->compl_free;
		t->compl_free = c;
		t->flag_head[flag] = next;
		if (next == NIL)
			t->flag_tail[flag] = NIL;
		t->flag_done[flag]--;
		c = next;
	}
	return issue;
}

/* Instruction and register events of an instruction issued at `issue` and
 * retired at `retire` (the tracker's share of ta1_timing_insn); r: its
 * registers as lists (ta1_timing_pre_of), or NULL: from the access. */
static inline __attribute__((always_inline)) void emit_insn(struct ta1_timing_model *t, uint64_t index,
							     uint64_t pc, const struct ta1_access *a,
							     const struct ta1_timing_pre *r, uint64_t issue,
							     uint64_t retire, enum snr_unit unit, enum ta1_class cls)
{
	if (t->mask & SNR_TRACK_INSN) { /* the same events in one call */
		struct snr_ev_insn e = {.index = index,
					.pc = pc,
					.issue = issue,
					.retire = retire,
					.unit = (uint8_t)unit,
					.cls = (uint8_t)cls};
		uint16_t regs[128];
		unsigned nread = 0, nwrite = 0;
		if (r) {
			for (int k = 0; k < 2 && r->src[k] != TA1_TIMING_NO_REG; k++)
				regs[nread++] = r->src[k];
			if (r->dst != TA1_TIMING_NO_DST)
				regs[nread + nwrite++] = r->dst;
		} else {
			for (uint64_t m = a->regs_read & ~(1ull << TA1_REG_PC); m; m &= m - 1)
				regs[nread++] = (uint16_t)__builtin_ctzll(m);
			for (uint64_t m = a->regs_written & ~(1ull << TA1_REG_PC); m; m &= m - 1)
				regs[nread + nwrite++] = (uint16_t)__builtin_ctzll(m);
		}
		t->tr.on_insn(t->tr.user, &e, regs, nread, nwrite);
		return;
	}
	if (t->mask & (SNR_TRACK_ISSUE | SNR_TRACK_RETIRE)) {
		struct snr_ev_insn e = {.index = index,
					.pc = pc,
					.issue = issue,
					.retire = retire,
					.unit = (uint8_t)unit,
					.cls = (uint8_t)cls};
		if (t->mask & SNR_TRACK_ISSUE)
			t->tr.on_issue(t->tr.user, &e);
		if (t->mask & SNR_TRACK_RETIRE)
			t->tr.on_retire(t->tr.user, &e);
	}
	if (t->mask & SNR_TRACK_REG) {
		/* the callback and its user in locals: the calls could change *t */
		void (*on_reg)(void *, const struct snr_ev_reg *) = t->tr.on_reg;
		void *user = t->tr.user;
		struct snr_ev_reg e = {.index = index};
		if (r) { /* the same events: reads in ascending order, then the write */
			for (int k = 0; k < 2 && r->src[k] != TA1_TIMING_NO_REG; k++) {
				e.reg = r->src[k];
				on_reg(user, &e);
			}
			if (r->dst != TA1_TIMING_NO_DST) {
				e.write = 1;
				e.reg = r->dst;
				on_reg(user, &e);
			}
			return;
		}
		for (int w = 0; w < 2; w++) {
			uint64_t regs = (w ? a->regs_written : a->regs_read) & ~(1ull << TA1_REG_PC);
			e.write = (uint8_t)w;
			while (regs) {
				e.reg = (uint16_t)__builtin_ctzll(regs);
				regs &= regs - 1;
				on_reg(user, &e);
			}
		}
	}
}

/* The register scoreboard: when the latest of the x registers in regs_read
 * is ready (0: none), and in *producer the instruction that writes it (the
 * lowest-numbered register of equals). x0 is always ready. */
static inline uint64_t latest_source(const struct ta1_timing_model *t, uint64_t regs_read, uint64_t *producer)
{
	uint64_t srcs = regs_read & 0xfffffffeull, ready = 0;
	while (srcs) {
		unsigned r = (unsigned)__builtin_ctzll(srcs);
		srcs &= srcs - 1;
		if (t->reg_ready[r] > ready) {
			ready = t->reg_ready[r];
			*producer = t->reg_producer[r];
		}
	}
	return ready;
}

/* ta1_timing_insn of a scalar instruction (op_scalar) that does not fault:
 * the same steps without those of asynchronous work and WAITs, which most
 * instructions of a window skip. */
static inline __attribute__((always_inline)) void scalar_insn(struct ta1_timing_model *t, uint64_t index,
							       uint64_t pc, unsigned op, const struct ta1_timing_pre *rl,
							       const struct ta1_access *a, uint64_t next_pc)
{
	uint64_t at = t->next_issue;
	if (!t->private_run && at >= ta1_fabric_next_event_cycle(t->fabric)) /* next_event <= at, in integers */
		ta1_fabric_run_until(t->fabric, (double)at);
	/* 1. Fetch: a taken branch's refill. */
	if (t->redirect > at) {
		emit_stall(t, index, SNR_STALL_BRANCH, at, t->redirect - at, (int64_t)t->redirect_index, 0);
		at = t->redirect;
	}
	/* 2. Register scoreboard: the latest source, the lowest-numbered of
	 * equals (a missing source of the lists is ready at 0). */
	uint64_t ready = 0, producer = 0;
	if (rl) {
		ready = t->reg_ready[rl->src[0]];
		producer = t->reg_producer[rl->src[0]];
		if (t->reg_ready[rl->src[1]] > ready) {
			ready = t->reg_ready[rl->src[1]];
			producer = t->reg_producer[rl->src[1]];
		}
	} else {
		ready = latest_source(t, a->regs_read, &producer);
	}
	if (ready > at) {
		emit_stall(t, index, SNR_STALL_REGISTER, at, ready - at, (int64_t)producer, 0);
		at = ready;
	}
	const uint64_t issue = at, retire = issue + t->op_latency[op];
	if (a->nregions && (t->mask & SNR_TRACK_MEM))
		for (unsigned k = 0; k < a->nregions; k++) {
			const struct ta1_region *g = &a->region[k];
			if (g->rows != 1 || g->space == TA1_SPACE_NONE) {
				emit_region(t, index, issue, g);
				continue;
			}
			/* a scalar load's or store's one row: emit_region's event here */
			struct snr_ev_mem e = {.index = index,
					       .cycle = issue,
					       .write = g->write,
					       .space = g->space,
					       .chip = g->chip,
					       .addr = g->addr,
					       .bytes = g->row_bytes};
			t->tr.on_mem(t->tr.user, &e);
		}
	if (rl) {
		t->reg_ready[rl->dst] = retire;
		t->reg_producer[rl->dst] = index;
	} else {
		uint64_t dsts = a->regs_written & 0xfffffffeull;
		while (dsts) {
			unsigned r = (unsigned)__builtin_ctzll(dsts);
			dsts &= dsts - 1;
			t->reg_ready[r] = retire;
			t->reg_producer[r] = index;
		}
	}
	const enum ta1_class cls = (enum ta1_class)t->op_cls[op];
	if ((cls == TA1_CLASS_BRANCH || cls == TA1_CLASS_JUMP) && next_pc != pc + 4) {
		t->redirect = issue + t->cfg.scalar_branch_taken_cycles;
		t->redirect_index = index;
	}
	t->next_issue = issue + 1;
	t->tot.instructions++;
	note_end(t, retire);
	scalar_busy(t, issue, index);
	emit_insn(t, index, pc, a, rl, issue, retire, SNR_UNIT_SCALAR, cls);
}

_Static_assert(TA1_OP_COUNT <= 256 && TA1_REG_COUNT + 2 <= 256, "ta1_timing_pre keeps ops and registers in bytes");

bool ta1_timing_pre_of(const struct ta1_insn *in, const struct ta1_access *a, struct ta1_timing_pre *p)
{
	const uint64_t pc = 1ull << TA1_REG_PC;
	uint64_t srcs = a->regs_read & ~pc, dsts = a->regs_written & ~pc;
	if (in->op >= TA1_OP_COUNT || (srcs | dsts) & ~0xfffffffeull || __builtin_popcountll(srcs) > 2 ||
	    __builtin_popcountll(dsts) > 1)
		return false;
	if (ta1_class_is_xta(ta1_insn_table[in->op].cls))
		return false;
	p->op = (uint8_t)in->op;
	p->src[0] = srcs ? (uint8_t)__builtin_ctzll(srcs) : TA1_TIMING_NO_REG;
	srcs &= srcs - 1;
	p->src[1] = srcs ? (uint8_t)__builtin_ctzll(srcs) : TA1_TIMING_NO_REG;
	p->dst = dsts ? (uint8_t)__builtin_ctzll(dsts) : TA1_TIMING_NO_DST;
	return true;
}

void ta1_timing_scalar_insn(struct ta1_timing_model *t, uint64_t index, uint64_t pc,
			    const struct ta1_timing_pre *p, const struct ta1_access *a, uint64_t next_pc)
{
	scalar_insn(t, index, pc, p->op, p, a, next_pc);
}

void ta1_timing_insn(struct ta1_timing_model *t, uint64_t index, uint64_t pc, const struct ta1_insn *in,
		     const struct ta1_access *a, const uint64_t *x, uint64_t next_pc)
{
	if (__builtin_expect(in->op < TA1_OP_COUNT && !a->fault && t->op_scalar[in->op], 1)) {
		scalar_insn(t, index, pc, in->op, NULL, a, next_pc);
		return;
	}
	const bool legal = in->op < TA1_OP_COUNT && !a->fault;
	const enum ta1_class cls = legal ? (enum ta1_class)t->op_cls[in->op] : TA1_CLASS_ALU;
	const enum snr_unit unit = legal ? (enum snr_unit)t->op_unit[in->op] : SNR_UNIT_SCALAR;
	const bool async = cls == TA1_CLASS_VECTOR || cls == TA1_CLASS_MATRIX || cls == TA1_CLASS_DMA_ISSUE;
	uint64_t at = t->next_issue;

	if (!t->private_run && at >= ta1_fabric_next_event_cycle(t->fabric)) /* next_event <= at, in integers */
		ta1_fabric_run_until(t->fabric, (double)at);

	/* 1. Fetch: a taken branch's refill. */
	if (t->redirect > at) {
		emit_stall(t, index, SNR_STALL_BRANCH, at, t->redirect - at, (int64_t)t->redirect_index, 0);
		at = t->redirect;
	}
	/* 2. Register scoreboard (x registers; flags, counters and ids are always ready). */
	uint64_t producer = 0, ready = latest_source(t, a->regs_read, &producer);
	if (ready > at) {
		emit_stall(t, index, SNR_STALL_REGISTER, at, ready - at, (int64_t)producer, 0);
		at = ready;
	}
	/* 3. VMEM scoreboard, 4. unit busy: asynchronous work starts at issue + 1,
	 * so it may issue in the last cycle of what it waits for. */
	if (async) {
		size_t keep = 0;
		for (size_t w = 0; w < t->nwrites; w++)
			if (t->writes[w].end > at + 1)
				t->writes[keep++] = t->writes[w];
		t->nwrites = keep;
		uint64_t who = 0, end = keep ? vmem_hazard(t, a, &who) : 0;
		if (end > at + 1) {
			emit_stall(t, index, SNR_STALL_VMEM_HAZARD, at, end - 1 - at, (int64_t)who, 0);
			at = end - 1;
		}
		if (unit != SNR_UNIT_DMA && t->unit_free[unit] > at + 1) {
			emit_stall(t, index, SNR_STALL_UNIT_BUSY, at, t->unit_free[unit] - 1 - at,
				   (int64_t)t->unit_last[unit], 0);
			at = t->unit_free[unit] - 1;
		}
	}
	/* 5. DMA WAIT. */
	if (cls == TA1_CLASS_DMA_WAIT && x[in->rs1] < TA1_NUM_FLAGS)
		at = do_wait(t, index, pc, at, (unsigned)x[in->rs1], x[in->rs2]);

	const uint64_t issue = at;
	const uint64_t latency = legal ? t->op_latency[in->op] : t->cfg.scalar_alu_cycles;
	uint64_t retire = issue + latency;

	/* Asynchronous work. */
	if (legal && (cls == TA1_CLASS_VECTOR || cls == TA1_CLASS_MATRIX)) {
		uint64_t start = issue + 1, end = start + unit_cycles(t, in, x);
		t->unit_free[unit] = end;
		t->unit_last[unit] = index;
		add_vmem_writes(t, a, end, index);
		emit_busy(t, unit, start, end, index);
		for (unsigned k = 0; k < a->nregions; k++)
			emit_region(t, index, a->region[k].write ? end : start, &a->region[k]);
		retire = end;
	} else if (legal && cls == TA1_CLASS_DMA_ISSUE) {
		uint32_t i = ta1_fabric_dma_alloc(t->fabric);
		struct ta1_dma *d = ta1_fabric_dma(t->fabric, i);
		d->owner = (uint16_t)t->chip;
		d->issue_index = (int64_t)index;
		d->issue_pc = pc;
		d->issue_cycle = issue;
		d->flag = (uint16_t)(in->op == TA1_OP_TA_DMA ? x[in->rd]
				     : in->op == TA1_OP_TA_DMA2D ? x[in->rs3] >> 48
								 : x[in->rd] & 0xffffffffu);
		if (a->nregions == 2) {
			d->has_regions = 1;
			d->src = a->region[0];
			d->dst = a->region[1];
			d->bytes = d->src.row_bytes * d->src.rows;
			if (in->op == TA1_OP_TA_DMA_NOTIFY) {
				d->peer = d->dst.chip;
				d->peer_flag = (uint16_t)(x[in->rd] >> 32);
			}
			ta1_fabric_route(t->fabric, d, d->src.space, d->src.chip, d->dst.space, d->dst.chip, issue + 1);
		} else {
			if (in->op == TA1_OP_TA_DMA_NOTIFY) { /* no bytes: the destination is this chip */
				d->peer = (uint16_t)t->chip;
				d->peer_flag = (uint16_t)(x[in->rd] >> 32);
			}
			ta1_fabric_route(t->fabric, d, TA1_SPACE_NONE, 0, TA1_SPACE_NONE, 0, issue + 1);
		}
		dma_submit(t, i);
	} else if (legal && a->nregions) {
		for (unsigned k = 0; k < a->nregions; k++)
			emit_region(t, index, issue, &a->region[k]);
	}

	/* Results, control flow, accounting. */
	uint64_t dsts = a->regs_written & 0xfffffffeull;
	while (dsts) {
		unsigned r = (unsigned)__builtin_ctzll(dsts);
		dsts &= dsts - 1;
		t->reg_ready[r] = issue + latency;
		t->reg_producer[r] = index;
	}
	if ((cls == TA1_CLASS_BRANCH || cls == TA1_CLASS_JUMP) && next_pc != pc + 4) {
		t->redirect = issue + t->cfg.scalar_branch_taken_cycles;
		t->redirect_index = index;
	}
	t->next_issue = issue + 1;
	t->tot.instructions++;
	note_end(t, retire);
	scalar_busy(t, issue, index);
	emit_insn(t, index, pc, a, NULL, issue, retire, unit, cls);
}

bool ta1_timing_wait_ready(struct ta1_timing_model *t, unsigned rs1, unsigned rs2, unsigned flag, uint64_t count,
			   uint64_t horizon, uint64_t *resume)
{
	uint64_t at = max_u64(ta1_timing_now(t), max_u64(t->reg_ready[rs1 & 31], t->reg_ready[rs2 & 31]));
	if (at > horizon) {
		*resume = at;
		return false;
	}
	if (flag >= TA1_NUM_FLAGS)
		return true; /* it faults */
	struct ta1_fabric *f = t->fabric;
	ta1_fabric_run_until(f, (double)at);
	while (t->flag_done[flag] < count && t->flag_inflight[flag] > 0) {
		double e = ta1_fabric_next_event(f);
		if (!isfinite(e))
			break;
		if (e > (double)horizon) {
			*resume = ta1_fabric_next_event_cycle(f);
			return false;
		}
		ta1_fabric_run_until(f, e);
	}
	return true;
}

void ta1_timing_set_private(struct ta1_timing_model *t, bool on)
{
	t->private_run = on;
}

uint64_t ta1_timing_now(const struct ta1_timing_model *t)
{
	return max_u64(t->next_issue, t->redirect);
}

uint64_t ta1_timing_drain(struct ta1_timing_model *t)
{
	ta1_fabric_run_until(t->fabric, INFINITY);
	if (t->own_fabric)
		ta1_fabric_flush_samples(t->fabric);
	if (t->scalar_run) {
		emit_busy(t, SNR_UNIT_SCALAR, t->scalar_run_start, t->scalar_run_end, t->scalar_run_index);
		t->scalar_run = false;
	}
	note_end(t, ta1_timing_now(t));
	for (unsigned u = 0; u < SNR_UNIT_COUNT; u++)
		note_end(t, t->unit_free[u]);
	return t->horizon;
}

void ta1_timing_totals(const struct ta1_timing_model *t, struct ta1_timing_totals *out)
{
	*out = t->tot;
	out->cycles = max_u64(t->horizon, ta1_timing_now(t));
	for (unsigned u = 0; u < SNR_UNIT_COUNT; u++)
		out->cycles = max_u64(out->cycles, t->unit_free[u]);
	/* Busy time not yet reported as an interval still counts. */
	if (t->scalar_run)
		out->busy_cycles[SNR_UNIT_SCALAR] += t->scalar_run_end - t->scalar_run_start;
}
