/*
 * test_timing.c: TA1's timing model against hand-computed cycles, one case
 * per rule of docs/ta1-timing.md (the doc's worked examples are these cases).
 *
 * Instructions are built as a simulator sees them: encoded with ta1_encode,
 * decoded back, their operand access computed by ta1_access_query from the
 * register values the test sets, then fed to the model. The default machine
 * config is used throughout: Tb = 500, HBM 1200 B/cycle, VMEM 2048, core 64,
 * ICI 50, vector 1024 f32/cycle + 8, MXU fill 128 + 1 row/cycle, weight load
 * 128, div 20, mul 3, load 2, taken branch 2.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/ta1_timing.h"
#include "tests/check.h"

#define VMEM TA1_VMEM_BASE
#define HBM TA1_HBM_BASE
#define CORE TA1_CORE_BASE

/* ---- a recording tracker -------------------------------------------------- */

#define MAX_EV 4096

struct log {
	struct snr_ev_stall stall[MAX_EV];
	unsigned nstall;
	struct snr_ev_dma dma[MAX_EV];
	unsigned ndma;
	struct snr_ev_busy busy[MAX_EV];
	unsigned nbusy;
	struct snr_ev_insn insn[MAX_EV];
	unsigned ninsn;
	unsigned nretire, nmem, nreg;
	char text[MAX_EV][128]; /* every event, in order, as one line */
	unsigned ntext;
};

static void logf_(struct log *l, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void logf_(struct log *l, const char *fmt, ...)
{
	if (l->ntext == MAX_EV)
		return;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(l->text[l->ntext++], sizeof(l->text[0]), fmt, ap);
	va_end(ap);
}

static void on_issue(void *u, const struct snr_ev_insn *e)
{
	struct log *l = u;
	if (l->ninsn < MAX_EV)
		l->insn[l->ninsn++] = *e;
	logf_(l, "issue #%llu pc=%llx %llu..%llu unit=%s", (unsigned long long)e->index,
	      (unsigned long long)e->pc, (unsigned long long)e->issue, (unsigned long long)e->retire,
	      snr_unit_name((enum snr_unit)e->unit));
}
static void on_retire(void *u, const struct snr_ev_insn *e)
{
	struct log *l = u;
	l->nretire++;
	logf_(l, "retire #%llu %llu", (unsigned long long)e->index, (unsigned long long)e->retire);
}
static void on_stall(void *u, const struct snr_ev_stall *e)
{
	struct log *l = u;
	if (l->nstall < MAX_EV)
		l->stall[l->nstall++] = *e;
	logf_(l, "stall #%llu %s %llu+%llu by #%lld dma %llu", (unsigned long long)e->index,
	      snr_stall_cause_name((enum snr_stall_cause)e->cause), (unsigned long long)e->start,
	      (unsigned long long)e->cycles, (long long)e->responsible, (unsigned long long)e->dma_id);
}
static const char *phase_name(unsigned p)
{
	static const char *n[] = {"issued", "started", "completed", "waited"};
	return p < 4 ? n[p] : "?";
}
static void on_dma(void *u, const struct snr_ev_dma *e)
{
	struct log *l = u;
	if (l->ndma < MAX_EV)
		l->dma[l->ndma++] = *e;
	logf_(l,
	      "dma %llu %s @%llu issue #%lld wait #%lld %lluB %u.%u->%u.%u flag %u xfer %llu stall %llu/%llu "
	      "slack %llu",
	      (unsigned long long)e->id, phase_name(e->phase), (unsigned long long)e->cycle,
	      (long long)e->issue_index, (long long)e->wait_index, (unsigned long long)e->bytes, e->src_space,
	      e->src_chip, e->dst_space, e->dst_chip, e->flag, (unsigned long long)e->transfer_cycles,
	      (unsigned long long)e->stall_base_cycles, (unsigned long long)e->stall_transfer_cycles,
	      (unsigned long long)e->slack_cycles);
}
static void on_mem(void *u, const struct snr_ev_mem *e)
{
	struct log *l = u;
	l->nmem++;
	logf_(l, "mem #%llu @%llu %s space %u chip %u %llx+%llu", (unsigned long long)e->index,
	      (unsigned long long)e->cycle, e->write ? "write" : "read", e->space, e->chip,
	      (unsigned long long)e->addr, (unsigned long long)e->bytes);
}
static void on_reg(void *u, const struct snr_ev_reg *e)
{
	struct log *l = u;
	l->nreg++;
	logf_(l, "reg #%llu %s %u", (unsigned long long)e->index, e->write ? "write" : "read", e->reg);
}
/* on_insn (snr_tracker.h) as the calls it stands for, counted: main runs
 * every test again with it registered, and the logs the tests read must be
 * the same. */
static bool use_insn;
static size_t insn_calls;
static void on_insn(void *u, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread, unsigned nwrite)
{
	insn_calls++;
	on_issue(u, e);
	on_retire(u, e);
	for (unsigned k = 0; k < nread + nwrite; k++) {
		struct snr_ev_reg r = {.index = e->index, .reg = regs[k], .write = k >= nread};
		on_reg(u, &r);
	}
}
static void on_busy(void *u, const struct snr_ev_busy *e)
{
	struct log *l = u;
	if (l->nbusy < MAX_EV)
		l->busy[l->nbusy++] = *e;
	logf_(l, "busy %s %llu..%llu #%llu", snr_unit_name((enum snr_unit)e->unit),
	      (unsigned long long)e->start, (unsigned long long)e->end, (unsigned long long)e->index);
}

/* ---- a minimal driver, as a simulator would be --------------------------- */

struct sim {
	struct snr_config cfg;
	struct ta1_timing_model *t;
	struct snr_tracker tr;
	struct log *log;
	uint64_t x[32];
	uint64_t pc, index;
	struct ta1_query_ctx q;
};

static void sim_init(struct sim *s, unsigned nchips, bool track)
{
	memset(s, 0, sizeof(*s));
	snr_config_default(&s->cfg);
	s->cfg.chips = nchips;
	s->log = calloc(1, sizeof(*s->log));
	s->tr = (struct snr_tracker){
	    SNR_TRACKER_ABI_VERSION, s->log, on_issue, on_retire, on_stall, on_dma, on_mem, on_reg, on_busy,
	    use_insn ? on_insn : NULL, NULL, NULL};
	s->t = ta1_timing_new(&s->cfg, track ? &s->tr : NULL, 0);
	s->pc = CORE;
	s->q = (struct ta1_query_ctx){
	    s->x, 0, nchips, s->cfg.core_memory_bytes, s->cfg.vmem_bytes, s->cfg.hbm_bytes};
}

static void sim_free(struct sim *s)
{
	ta1_timing_free(s->t);
	free(s->log);
}

static struct ta1_insn mk(enum ta1_op op, unsigned rd, unsigned rs1, unsigned rs2, unsigned rs3, int64_t imm)
{
	struct ta1_insn in = {.op = (uint16_t)op,
			      .rd = (uint8_t)rd,
			      .rs1 = (uint8_t)rs1,
			      .rs2 = (uint8_t)rs2,
			      .rs3 = (uint8_t)rs3,
			      .imm = imm};
	struct ta1_insn out;
	CHECK(ta1_decode(ta1_encode(&in), &out) && out.op == op, "encode/decode of %s",
	      ta1_insn_table[op].mnemonic);
	return out;
}

/* Feeds one instruction; next_pc 0 means pc + 4. */
static void feed_to(struct sim *s, struct ta1_insn in, uint64_t next_pc)
{
	struct ta1_access a;
	ta1_access_query(&in, &s->q, &a);
	CHECK(!a.fault, "#%llu %s faults: %s", (unsigned long long)s->index, ta1_insn_table[in.op].mnemonic,
	      a.fault);
	if (!next_pc)
		next_pc = s->pc + 4;
	ta1_timing_insn(s->t, s->index++, s->pc, &in, &a, s->x, next_pc);
	s->pc = next_pc;
}
static void feed(struct sim *s, struct ta1_insn in)
{
	feed_to(s, in, 0);
}

static void nops(struct sim *s, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		feed(s, mk(TA1_OP_ADDI, 0, 0, 0, 0, 0));
}

/* ta.dma dst <- src, bytes, flag, through registers base..base+3. */
static void dma(struct sim *s, unsigned base, uint64_t dst, uint64_t src, uint64_t bytes, uint64_t flag)
{
	s->x[base] = dst;
	s->x[base + 1] = src;
	s->x[base + 2] = bytes;
	s->x[base + 3] = flag;
	feed(s, mk(TA1_OP_TA_DMA, base + 3, base, base + 1, base + 2, 0));
}

static void wait_(struct sim *s, uint64_t flag, uint64_t count)
{
	s->x[28] = flag;
	s->x[29] = count;
	feed(s, mk(TA1_OP_TA_WAIT, 0, 28, 29, 0, 0));
}

static void vadd(struct sim *s, unsigned base, uint64_t dst, uint64_t a, uint64_t b, uint64_t n)
{
	s->x[base] = dst;
	s->x[base + 1] = a;
	s->x[base + 2] = b;
	s->x[base + 3] = n;
	feed(s, mk(TA1_OP_TA_VADD, base + 3, base, base + 1, base + 2, 0));
}

static void mxu_load(struct sim *s, uint64_t w)
{
	s->x[5] = w;
	feed(s, mk(TA1_OP_TA_MXU_LOAD, 0, 5, 0, 0, 0));
}

static void mxu_mm(struct sim *s, uint64_t dst, uint64_t lhs, uint64_t rows)
{
	s->x[6] = dst;
	s->x[7] = lhs;
	s->x[8] = rows;
	feed(s, mk(TA1_OP_TA_MXU_MM, 8, 6, 7, 0, 0));
}

static const struct snr_ev_insn *insn_ev(struct sim *s, uint64_t index)
{
	for (unsigned i = 0; i < s->log->ninsn; i++)
		if (s->log->insn[i].index == index)
			return &s->log->insn[i];
	static const struct snr_ev_insn none = {.issue = ~0ull, .retire = ~0ull};
	return &none;
}

static const struct snr_ev_dma *dma_ev(struct sim *s, uint64_t id, enum snr_dma_phase p)
{
	for (unsigned i = 0; i < s->log->ndma; i++)
		if (s->log->dma[i].id == id && s->log->dma[i].phase == p)
			return &s->log->dma[i];
	static const struct snr_ev_dma none = {.cycle = ~0ull};
	return &none;
}

static void check_stall(struct sim *s, unsigned k, uint64_t index, enum snr_stall_cause cause, uint64_t start,
			uint64_t cycles, int64_t responsible, int line)
{
	if (k >= s->log->nstall) {
		CHECK(0, "line %d: stall %u missing (%u stalls)", line, k, s->log->nstall);
		return;
	}
	const struct snr_ev_stall *e = &s->log->stall[k];
	CHECK(e->index == index && e->cause == cause && e->start == start && e->cycles == cycles &&
		  e->responsible == responsible,
	      "line %d: stall %u is #%llu %s %llu+%llu by #%lld, want #%llu %s %llu+%llu by #%lld", line, k,
	      (unsigned long long)e->index, snr_stall_cause_name((enum snr_stall_cause)e->cause),
	      (unsigned long long)e->start, (unsigned long long)e->cycles, (long long)e->responsible,
	      (unsigned long long)index, snr_stall_cause_name(cause), (unsigned long long)start,
	      (unsigned long long)cycles, (long long)responsible);
}
#define STALL(s, k, idx, cause, start, cycles, resp)                                                         \
	check_stall(s, k, idx, SNR_STALL_##cause, start, cycles, resp, __LINE__)

#define EQ(a, b)                                                                                             \
	CHECK((uint64_t)(a) == (uint64_t)(b), "%s = %llu, want %llu", #a, (unsigned long long)(a),           \
	      (unsigned long long)(b))

/* ---- the rules ------------------------------------------------------------ */

/* Figure 4, case 1: ISSUE at 0, WAIT at 1. Base [1, 501), transfer
 * 12000 B / 1200 B/cycle = 10: [501, 511). Stall 500 base + 10 transfer. */
static void test_wait_immediately(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, VMEM, HBM, 12000, 0);
	wait_(&s, 0, 1);
	EQ(s.log->nstall, 2);
	STALL(&s, 0, 1, DMA_BASE, 1, 500, 0);
	STALL(&s, 1, 1, DMA_TRANSFER, 501, 10, 0);
	EQ(s.log->stall[0].dma_id, 1);
	EQ(insn_ev(&s, 1)->issue, 511);
	EQ(ta1_timing_now(s.t), 512);
	EQ(dma_ev(&s, 1, SNR_DMA_ISSUED)->cycle, 0);
	EQ(dma_ev(&s, 1, SNR_DMA_STARTED)->cycle, 501);
	EQ(dma_ev(&s, 1, SNR_DMA_COMPLETED)->cycle, 511);
	EQ(dma_ev(&s, 1, SNR_DMA_COMPLETED)->transfer_cycles, 10);
	const struct snr_ev_dma *w = dma_ev(&s, 1, SNR_DMA_WAITED);
	EQ(w->cycle, 511);
	EQ(w->wait_index, 1);
	EQ(w->stall_base_cycles, 500);
	EQ(w->stall_transfer_cycles, 10);
	EQ(w->slack_cycles, 0);
	struct ta1_timing_totals tot;
	EQ(ta1_timing_drain(s.t), 512);
	ta1_timing_totals(s.t, &tot);
	EQ(tot.cycles, 512);
	EQ(tot.instructions, 2);
	EQ(tot.stall_cycles[SNR_STALL_DMA_BASE], 500);
	EQ(tot.stall_cycles[SNR_STALL_DMA_TRANSFER], 10);
	EQ(tot.dma_count, 1);
	EQ(tot.dma_bytes, 12000);
	EQ(tot.busy_cycles[SNR_UNIT_DMA], 10);
	EQ(tot.busy_cycles[SNR_UNIT_SCALAR], 2);
	sim_free(&s);
}

/* Case 2: 120000 B is 100 transfer cycles, [501, 601); 550 nops fill cycles
 * 1..550, the WAIT arrives at 551: 50 cycles of transfer stall, no base. */
static void test_wait_during_transfer(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, VMEM, HBM, 120000, 3);
	nops(&s, 550);
	wait_(&s, 3, 1);
	EQ(s.log->nstall, 1);
	STALL(&s, 0, 551, DMA_TRANSFER, 551, 50, 0);
	EQ(insn_ev(&s, 551)->issue, 601);
	EQ(dma_ev(&s, 1, SNR_DMA_WAITED)->stall_base_cycles, 0);
	EQ(dma_ev(&s, 1, SNR_DMA_WAITED)->stall_transfer_cycles, 50);
	sim_free(&s);
}

/* Case 3: done at 511, WAIT at 601 after 600 nops: no stall, slack 90. */
static void test_wait_after_completion(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, VMEM, HBM, 12000, 0);
	nops(&s, 600);
	wait_(&s, 0, 1);
	EQ(s.log->nstall, 0);
	EQ(insn_ev(&s, 601)->issue, 601);
	const struct snr_ev_dma *w = dma_ev(&s, 1, SNR_DMA_WAITED);
	EQ(w->slack_cycles, 90);
	EQ(w->stall_base_cycles + w->stall_transfer_cycles, 0);
	EQ(w->cycle, 601);
	sim_free(&s);
}

/* Base latencies overlap: A HBM->core 6400 B at 64 B/cycle (core) = 100
 * cycles, B VMEM->VMEM 204800 B at 2048 = 100; they share no memory.
 * A: base [1,501) transfer [501,601); B: base [2,502) transfer [502,602).
 * WAIT(2) at 2 ends at 602: 600 stall cycles, not 1200. Per DMA in
 * completion order: A 499 base + 100 transfer, B 1 transfer. */
static void test_base_latency_overlaps(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, CORE + 0x100000, HBM, 6400, 0);
	dma(&s, 14, VMEM + 0x100000, VMEM, 204800, 0);
	wait_(&s, 0, 2);
	EQ(s.log->nstall, 3);
	STALL(&s, 0, 2, DMA_BASE, 2, 499, 0);
	STALL(&s, 1, 2, DMA_TRANSFER, 501, 100, 0);
	STALL(&s, 2, 2, DMA_TRANSFER, 601, 1, 1);
	EQ(insn_ev(&s, 2)->issue, 602);
	EQ(dma_ev(&s, 1, SNR_DMA_COMPLETED)->cycle, 601);
	EQ(dma_ev(&s, 2, SNR_DMA_COMPLETED)->cycle, 602);
	sim_free(&s);
}

/* One link (HBM -> VMEM) serialises: A transfers [501,511); B's base ends at
 * 502 but it queues until 511, then [511,521): its transfer time is 19. */
static void test_one_link_serialises(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, VMEM, HBM, 12000, 0);
	dma(&s, 14, VMEM + 0x10000, HBM + 0x10000, 12000, 0);
	wait_(&s, 0, 2);
	EQ(dma_ev(&s, 2, SNR_DMA_STARTED)->cycle, 502);
	EQ(dma_ev(&s, 1, SNR_DMA_COMPLETED)->cycle, 511);
	EQ(dma_ev(&s, 2, SNR_DMA_COMPLETED)->cycle, 521);
	EQ(dma_ev(&s, 2, SNR_DMA_COMPLETED)->transfer_cycles, 19);
	EQ(s.log->nstall, 3);
	STALL(&s, 0, 2, DMA_BASE, 2, 499, 0);
	STALL(&s, 1, 2, DMA_TRANSFER, 501, 10, 0);
	STALL(&s, 2, 2, DMA_TRANSFER, 511, 10, 1);
	EQ(insn_ev(&s, 2)->issue, 521);
	sim_free(&s);
}

/* Different links sharing HBM: A HBM->VMEM, B VMEM->HBM, 12000 B each.
 * A runs alone [501,502) at 1200 (1200 B moved); from 502 both touch HBM
 * (1200/2 = 600) and VMEM (2048/2 = 1024): 600 each. A's 10800 B left take
 * 18 cycles: done 520; B has moved 10800 by then, its last 1200 B run alone
 * at 1200: done 521. DMA engine busy [501, 521). */
static void test_shared_hbm_bandwidth(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, VMEM, HBM, 12000, 0);
	dma(&s, 14, HBM + 0x100000, VMEM + 0x100000, 12000, 0);
	wait_(&s, 0, 2);
	EQ(dma_ev(&s, 1, SNR_DMA_COMPLETED)->cycle, 520);
	EQ(dma_ev(&s, 1, SNR_DMA_COMPLETED)->transfer_cycles, 19);
	EQ(dma_ev(&s, 2, SNR_DMA_COMPLETED)->cycle, 521);
	EQ(dma_ev(&s, 2, SNR_DMA_COMPLETED)->transfer_cycles, 19);
	STALL(&s, 0, 2, DMA_BASE, 2, 499, 0);
	STALL(&s, 1, 2, DMA_TRANSFER, 501, 19, 0);
	STALL(&s, 2, 2, DMA_TRANSFER, 520, 1, 1);
	EQ(insn_ev(&s, 2)->issue, 521);
	unsigned dma_busy = 0;
	for (unsigned i = 0; i < s.log->nbusy; i++)
		if (s.log->busy[i].unit == SNR_UNIT_DMA) {
			dma_busy++;
			EQ(s.log->busy[i].start, 501);
			EQ(s.log->busy[i].end, 521);
		}
	EQ(dma_busy, 1);
	sim_free(&s);
}

/* Another chip's HBM is reached at ICI bandwidth: 5000 B / 50 = 100 cycles,
 * [501, 601); WAIT at 1 stalls 500 + 100. Our own HBM named globally is
 * plain HBM: 12000 B / 1200 = 10. */
static void test_cross_chip(void)
{
	struct sim s;
	sim_init(&s, 2, true);
	dma(&s, 10, TA1_HBM_GLOBAL_BASE + (1ull << TA1_HBM_GLOBAL_SHIFT), HBM, 5000, 0);
	wait_(&s, 0, 1);
	STALL(&s, 0, 1, DMA_BASE, 1, 500, 0);
	STALL(&s, 1, 1, DMA_TRANSFER, 501, 100, 0);
	const struct snr_ev_dma *c = dma_ev(&s, 1, SNR_DMA_COMPLETED);
	EQ(c->cycle, 601);
	EQ(c->src_space, TA1_SPACE_HBM);
	EQ(c->src_chip, 0);
	EQ(c->dst_space, TA1_SPACE_HBM);
	EQ(c->dst_chip, 1);
	dma(&s, 10, TA1_HBM_GLOBAL_BASE + 0x1000, HBM, 12000, 1); /* issued at 602 */
	wait_(&s, 1, 1);
	EQ(dma_ev(&s, 2, SNR_DMA_COMPLETED)->cycle, 602 + 1 + 500 + 10);
	sim_free(&s);
}

/* A DMA from before the window: issued at 0, base [0,500), transfer [500,510). */
static void test_pre_window_dma(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	ta1_timing_pre_window_dma(s.t, 2, 12000, TA1_SPACE_HBM, TA1_SPACE_VMEM);
	wait_(&s, 2, 1);
	STALL(&s, 0, 0, DMA_BASE, 0, 500, -1);
	STALL(&s, 1, 0, DMA_TRANSFER, 500, 10, -1);
	EQ(dma_ev(&s, 1, SNR_DMA_ISSUED)->issue_index, -1);
	EQ(insn_ev(&s, 0)->issue, 510);
	sim_free(&s);
}

/* Vector: 8 + ceil(4096/1024) = 12 cycles, [1, 13). A second independent
 * vadd at 1 waits for the unit (UNIT_BUSY 11) and runs [13, 25).
 * vexp costs like vadd; vsum_rows over 64x64 = 4096 elements: 12. */
static void test_vector_and_unit_busy(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	vadd(&s, 10, VMEM + 0x10000, VMEM + 0x20000, VMEM + 0x30000, 4096);
	EQ(insn_ev(&s, 0)->retire, 13);
	EQ(s.log->nbusy, 1);
	EQ(s.log->busy[0].unit, SNR_UNIT_VECTOR);
	EQ(s.log->busy[0].start, 1);
	EQ(s.log->busy[0].end, 13);
	vadd(&s, 14, VMEM + 0x40000, VMEM + 0x50000, VMEM + 0x60000, 4096);
	EQ(s.log->nstall, 1);
	STALL(&s, 0, 1, UNIT_BUSY, 1, 11, 0);
	EQ(insn_ev(&s, 1)->issue, 12);
	EQ(insn_ev(&s, 1)->retire, 25);
	/* vexp at 24 (unit free at 25): n = 1024, 9 cycles [25, 34). */
	s.x[20] = VMEM + 0x70000;
	s.x[21] = VMEM + 0x80000;
	s.x[23] = 1024;
	feed(&s, mk(TA1_OP_TA_VEXP, 23, 20, 21, 0, 0));
	EQ(insn_ev(&s, 2)->issue, 24);
	EQ(insn_ev(&s, 2)->retire, 34);
	/* vsum_rows 64x64 at 33: [34, 46). */
	s.x[20] = VMEM + 0x90000;
	s.x[21] = VMEM + 0xa0000;
	s.x[22] = 64;
	s.x[23] = 64;
	feed(&s, mk(TA1_OP_TA_VSUMROWS, 23, 20, 21, 22, 0));
	EQ(insn_ev(&s, 3)->issue, 33);
	EQ(insn_ev(&s, 3)->retire, 46);
	struct ta1_timing_totals tot;
	ta1_timing_totals(s.t, &tot);
	EQ(tot.busy_cycles[SNR_UNIT_VECTOR], 12 + 12 + 9 + 12);
	EQ(tot.stall_cycles[SNR_STALL_UNIT_BUSY], 11 + 11 + 8);
	sim_free(&s);
}

/* VMEM hazard: vadd writes X (1024 f32) over [1, 10); mxu.mm reading X as
 * its lhs (8 rows = 4 KiB) at 1 waits until it may start at 10: issue 9,
 * VMEM_HAZARD 8 by #0; MXU [10, 10 + 128 + 8 = 146). The weight buffer: a
 * load [147, 275) then a matmul waits for it (hazard 127, not unit busy). A
 * DMA ISSUE reading VMEM waits the same way. */
static void test_vmem_hazard(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	uint64_t x = VMEM + 0x10000;
	vadd(&s, 10, x, VMEM + 0x20000, VMEM + 0x30000, 1024);
	mxu_mm(&s, VMEM + 0x40000, x, 8);
	EQ(s.log->nstall, 1);
	STALL(&s, 0, 1, VMEM_HAZARD, 1, 8, 0);
	EQ(insn_ev(&s, 1)->issue, 9);
	EQ(insn_ev(&s, 1)->retire, 146);
	/* mxu.load at 145 (unit free at 146): [146, 274); mm at 146 waits on the
	 * weight buffer until 273. */
	mxu_load(&s, VMEM + 0x100000);
	STALL(&s, 1, 2, UNIT_BUSY, 10, 135, 1);
	EQ(insn_ev(&s, 2)->issue, 145);
	EQ(insn_ev(&s, 2)->retire, 274);
	mxu_mm(&s, VMEM + 0x200000, VMEM + 0x300000, 8);
	STALL(&s, 2, 3, VMEM_HAZARD, 146, 127, 2);
	EQ(s.log->nstall, 3);
	EQ(insn_ev(&s, 3)->issue, 273);
	EQ(insn_ev(&s, 3)->retire, 274 + 136);
	/* A DMA reading the matmul's result waits for it: issue 409, base ends 910. */
	dma(&s, 10, HBM, VMEM + 0x200000, 1200, 0);
	STALL(&s, 3, 4, VMEM_HAZARD, 274, 135, 3);
	EQ(insn_ev(&s, 4)->issue, 409);
	EQ(dma_ev(&s, 1, SNR_DMA_ISSUED)->cycle, 409);
	wait_(&s, 0, 1);
	EQ(insn_ev(&s, 5)->issue, 409 + 1 + 500 + 1);
	sim_free(&s);
}

/* div has latency 20: a dependent add at 1 waits until 20 (REGISTER 19).
 * mul 3: dependent at +1 waits 2. load 2: dependent waits 1. */
static void test_register_stall(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	feed(&s, mk(TA1_OP_DIV, 5, 6, 7, 0, 0));
	feed(&s, mk(TA1_OP_ADD, 8, 5, 5, 0, 0));
	STALL(&s, 0, 1, REGISTER, 1, 19, 0);
	EQ(insn_ev(&s, 1)->issue, 20);
	feed(&s, mk(TA1_OP_MUL, 9, 8, 8, 0, 0));  /* 21: add's result ready at 21 */
	feed(&s, mk(TA1_OP_ADD, 10, 9, 0, 0, 0)); /* 22 -> 24 */
	STALL(&s, 1, 3, REGISTER, 22, 2, 2);
	EQ(insn_ev(&s, 3)->issue, 24);
	s.x[2] = CORE + 0x1000;
	feed(&s, mk(TA1_OP_LD, 11, 2, 0, 0, 8));    /* 25 */
	feed(&s, mk(TA1_OP_ADDI, 12, 11, 0, 0, 1)); /* 26 -> 27 */
	STALL(&s, 2, 5, REGISTER, 26, 1, 4);
	EQ(insn_ev(&s, 5)->issue, 27);
	EQ(s.log->nstall, 3);
	EQ(insn_ev(&s, 0)->retire, 20);
	sim_free(&s);
}

/* A taken branch costs 2: the next instruction issues at 2 (BRANCH 1); a
 * branch not taken costs 1; jal is always taken. */
static void test_branch(void)
{
	struct sim s;
	sim_init(&s, 1, true);
	feed_to(&s, mk(TA1_OP_BEQ, 0, 0, 0, 0, 8), CORE + 8);
	EQ(ta1_timing_now(s.t), 2);
	nops(&s, 1);
	STALL(&s, 0, 1, BRANCH, 1, 1, 0);
	EQ(insn_ev(&s, 1)->issue, 2);
	feed(&s, mk(TA1_OP_BNE, 0, 0, 0, 0, 8)); /* not taken: 3 */
	nops(&s, 1);				 /* 4 */
	EQ(insn_ev(&s, 3)->issue, 4);
	feed_to(&s, mk(TA1_OP_JAL, 1, 0, 0, 0, -16), s.pc - 16); /* 5 */
	nops(&s, 1);						 /* 7 */
	STALL(&s, 1, 5, BRANCH, 6, 1, 4);
	EQ(insn_ev(&s, 5)->issue, 7);
	EQ(s.log->nstall, 2);
	sim_free(&s);
}

/* Every event of ISSUE(2400 B HBM->VMEM, flag 1) + WAIT(1, 1), in order. */
static void test_tracker_events(void)
{
	static const char *want[] = {
	    "dma 1 issued @0 issue #0 wait #-1 2400B 3.0->1.0 flag 1 xfer 0 stall 0/0 slack 0",
	    "issue #0 pc=10000 0..1 unit=dma",
	    "retire #0 1",
	    "reg #0 read 10",
	    "reg #0 read 11",
	    "reg #0 read 12",
	    "reg #0 read 13",
	    "reg #0 read 34",
	    "reg #0 write 34",
	    "dma 1 started @501 issue #0 wait #-1 2400B 3.0->1.0 flag 1 xfer 0 stall 0/0 slack 0",
	    "mem #0 @501 read space 3 chip 0 40000000+2400",
	    "busy dma 501..503 #0",
	    "dma 1 completed @503 issue #0 wait #-1 2400B 3.0->1.0 flag 1 xfer 2 stall 0/0 slack 0",
	    "mem #0 @503 write space 1 chip 0 20000000+2400",
	    "stall #1 dma-base 1+500 by #0 dma 1",
	    "stall #1 dma-transfer 501+2 by #0 dma 1",
	    "dma 1 waited @503 issue #0 wait #1 2400B 3.0->1.0 flag 1 xfer 2 stall 500/2 slack 0",
	    "busy scalar 0..1 #0",
	    "issue #1 pc=10004 503..504 unit=dma",
	    "retire #1 504",
	    "reg #1 read 28",
	    "reg #1 read 29",
	    "reg #1 read 34",
	    "reg #1 write 34",
	    "busy scalar 503..504 #1",
	};
	struct sim s;
	sim_init(&s, 1, true);
	dma(&s, 10, VMEM, HBM, 2400, 1);
	wait_(&s, 1, 1);
	EQ(ta1_timing_drain(s.t), 504);
	unsigned n = sizeof(want) / sizeof(want[0]);
	EQ(s.log->ntext, n);
	for (unsigned i = 0; i < n && i < s.log->ntext; i++)
		CHECK(!strcmp(s.log->text[i], want[i]), "event %u is\n  %s\nwant\n  %s", i, s.log->text[i],
		      want[i]);
	/* A 2-D DMA reports one memory event per row: 3 rows of 64 B, strides 256. */
	s.log->ntext = 0;
	s.x[10] = VMEM;
	s.x[11] = HBM;
	s.x[12] = ta1_dma2d_shape(64, 3, 2);
	s.x[13] = ta1_dma2d_strides(256, 256);
	feed(&s, mk(TA1_OP_TA_DMA2D, 13, 10, 11, 12, 0));
	ta1_timing_drain(s.t);
	unsigned reads = 0, writes = 0;
	/* Issued at 504: base ends at 1005, 192 B at 1200 B/cycle end at 1005.16,
	 * reported as cycle 1006. */
	static const char read_[] = "mem #2 @1005 read space 3 chip 0 400",
			  write_[] = "mem #2 @1006 write space 1 chip 0 200";
	for (unsigned i = 0; i < s.log->ntext; i++) {
		reads += !strncmp(s.log->text[i], read_, strlen(read_));
		writes += !strncmp(s.log->text[i], write_, strlen(write_));
	}
	EQ(reads, 3);
	EQ(writes, 3);
	sim_free(&s);
}

/* The same program with no tracker, with an empty one and with only
 * on_stall gives the same totals; callbacks left NULL are never called. */
static void run_program(struct sim *s)
{
	dma(s, 10, VMEM, HBM, 12000, 0);
	vadd(s, 14, VMEM + 0x10000, VMEM + 0x20000, VMEM + 0x30000, 4096);
	mxu_mm(s, VMEM + 0x40000, VMEM + 0x10000, 8);
	feed(s, mk(TA1_OP_DIV, 5, 6, 7, 0, 0));
	feed(s, mk(TA1_OP_ADD, 8, 5, 5, 0, 0));
	wait_(s, 0, 1);
}

static void test_null_tracker(void)
{
	struct ta1_timing_totals a, b, c;
	struct sim s;
	sim_init(&s, 1, false);
	run_program(&s);
	ta1_timing_drain(s.t);
	ta1_timing_totals(s.t, &a);
	EQ(s.log->ntext, 0);
	sim_free(&s);

	sim_init(&s, 1, false);
	ta1_timing_free(s.t);
	struct snr_tracker empty = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = s.log};
	s.t = ta1_timing_new(&s.cfg, &empty, 0);
	run_program(&s);
	ta1_timing_drain(s.t);
	ta1_timing_totals(s.t, &b);
	sim_free(&s);

	sim_init(&s, 1, false);
	ta1_timing_free(s.t);
	struct snr_tracker only_stall = {
	    .abi_version = SNR_TRACKER_ABI_VERSION, .user = s.log, .on_stall = on_stall};
	s.t = ta1_timing_new(&s.cfg, &only_stall, 0);
	run_program(&s);
	ta1_timing_drain(s.t);
	ta1_timing_totals(s.t, &c);
	EQ(s.log->ntext, s.log->nstall);
	EQ(s.log->ndma + s.log->nbusy + s.log->ninsn + s.log->nmem + s.log->nreg + s.log->nretire, 0);
	sim_free(&s);

	CHECK(!memcmp(&a, &b, sizeof(a)) && !memcmp(&a, &c, sizeof(a)), "totals differ between trackers");
	/* dma@0; vadd@1 [2,14); mm@2 hazard until 13 -> [14, 150); div@14;
	 * add@34; wait@35 -> 511. Drained at 512. */
	EQ(a.cycles, 512);
	EQ(a.stall_cycles[SNR_STALL_VMEM_HAZARD], 11);
	EQ(a.stall_cycles[SNR_STALL_REGISTER], 19);
	EQ(a.stall_cycles[SNR_STALL_DMA_BASE], 501 - 35);
	EQ(a.stall_cycles[SNR_STALL_DMA_TRANSFER], 10);
	EQ(a.busy_cycles[SNR_UNIT_MXU], 136);
	EQ(a.instructions, 6);
}

static void run_all(void)
{
	test_wait_immediately();
	test_wait_during_transfer();
	test_wait_after_completion();
	test_base_latency_overlaps();
	test_one_link_serialises();
	test_shared_hbm_bandwidth();
	test_cross_chip();
	test_pre_window_dma();
	test_vector_and_unit_busy();
	test_vmem_hazard();
	test_register_stall();
	test_branch();
	test_tracker_events();
	test_null_tracker();
}

int main(void)
{
	for (int pass = 0; pass < 2; pass++) {
		use_insn = pass == 1;
		run_all();
	}
	CHECK(insn_calls > 0, "the timing model never called on_insn");
	return check_report("test_timing");
}
