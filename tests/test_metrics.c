/*
 * test_metrics.c: the metrics file (.snrm, docs/metrics-format.md) read back
 * by snr_metrics_open/snr_metrics_replay directly, with no analyzer:
 *  - round trip: 200k events of every kind, with extreme field values
 *    (0, UINT64_MAX, negative indices), over several EVENTS chunks, come back
 *    to a tracker identical and in order; META, SUMMARY and symbols too;
 *  - callbacks left NULL are skipped, the others still get their events;
 *  - every single corrupted byte is reported with the chunk and offset (or
 *    the file header), never read as data;
 *  - a well-checksummed EVENTS chunk holding a malformed record is reported
 *    with its chunk and payload offset;
 *  - a file cut short reads as a prefix: no SUMMARY, whole chunks only;
 *  - records written by hand as docs/metrics-format.md specifies them, in
 *    version 5 (an instruction's ISSUE and RETIRE as one INSN record, with its
 *    registers), 4 (each EVENTS chunk first says how many records precede
 *    it), 3 (deltas) and 2 (absolute values), read back alike; an INSN record
 *    in a file of version 4 is malformed;
 *  - a stream shaped like a replay's (ISSUE, RETIRE and REGs of one
 *    instruction in a row) and its near misses (a RETIRE that differs in one
 *    field, an event between, another instruction's REG, more registers than
 *    one INSN record holds) read back as written, in one record per
 *    instruction where they merge;
 *  - two EVENTS chunks exchanged or one dropped, each re-encoded with valid
 *    checksums and sequence numbers: refused, naming the chunk.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_chunkfile.h"
#include "replayer/metrics.h"
#include "tests/check.h"

enum { K_ISSUE, K_RETIRE, K_STALL, K_DMA, K_MEM, K_REG, K_BUSY, K_PEER, K_FABRIC, K_COUNT };
#define ALL_KINDS ((1u << K_COUNT) - 1)
#define NEV 200000

struct ev {
	int kind;
	union {
		struct snr_ev_insn insn;
		struct snr_ev_stall stall;
		struct snr_ev_dma dma;
		struct snr_ev_mem mem;
		struct snr_ev_reg reg;
		struct snr_ev_busy busy;
		struct snr_ev_peer peer;
		struct snr_ev_fabric fabric;
	} u;
};

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t rnd(void)
{
	return check_rand(&rng);
}
/* A value of any size: small, large, or one of the extremes. */
static uint64_t val(void)
{
	switch (rnd() % 5) {
	case 0: return 0;
	case 1: return UINT64_MAX;
	case 2: return rnd() % 128;
	case 3: return rnd() >> (rnd() % 64);
	default: return rnd();
	}
}
static int64_t sval(void) { return rnd() % 3 == 0 ? -1 : (rnd() % 7 == 0 ? INT64_MIN : (int64_t)(val() >> 1)); }

static void make(struct ev *e, int kind)
{
	memset(e, 0, sizeof(*e));
	e->kind = kind;
	switch (kind) {
	case K_ISSUE:
	case K_RETIRE:
		e->u.insn = (struct snr_ev_insn){val(), val(), val(), val(), (uint8_t)(rnd() % SNR_UNIT_COUNT),
						 (uint8_t)val()};
		break;
	case K_STALL:
		e->u.stall = (struct snr_ev_stall){val(), val(), val(), (uint8_t)(rnd() % SNR_STALL_COUNT), sval(), val()};
		break;
	case K_DMA:
		e->u.dma = (struct snr_ev_dma){.id = val(), .phase = (uint8_t)(rnd() % 4), .issue_index = sval(),
					       .wait_index = sval(), .cycle = val(), .bytes = val(),
					       .src_space = (uint16_t)val(), .dst_space = (uint16_t)val(),
					       .src_chip = (uint16_t)val(), .dst_chip = (uint16_t)val(),
					       .src_addr = val(), .dst_addr = val(), .flag = (uint16_t)val(),
					       .base_cycles = val(), .transfer_cycles = val()};
		break;
	case K_MEM:
		e->u.mem = (struct snr_ev_mem){val(), val(), (uint8_t)(rnd() & 1), (uint8_t)val(), (uint16_t)val(),
					       val(), val()};
		break;
	case K_REG: e->u.reg = (struct snr_ev_reg){val(), (uint16_t)val(), (uint8_t)(rnd() & 1)}; break;
	case K_BUSY: {
		uint64_t a = val(), b = val();
		e->u.busy = (struct snr_ev_busy){(uint8_t)(rnd() % SNR_UNIT_COUNT), a < b ? a : b, a < b ? b : a, val()};
		break;
	}
	case K_PEER:
		e->u.peer = (struct snr_ev_peer){.wait_index = val(), .wait_pc = val(), .wait_start = val(),
						 .stall_cycles = val(), .dma_id = val(), .chip = (uint16_t)val(),
						 .flag = (uint16_t)val(), .issue_index = sval(), .issue_pc = val(),
						 .issue_cycle = val(), .done_cycle = val() >> 2, .bytes = val()};
		break;
	case K_FABRIC: {
		/* bytes and cycles in 1/256 units (what the file keeps), busy within
		 * the interval and contended within busy */
		uint64_t len = val() >> 12, busy = len ? rnd() % (len * 256 + 1) : 0, cont = busy ? rnd() % (busy + 1) : 0;
		uint64_t start = val() >> 2;
		e->u.fabric = (struct snr_ev_fabric){.resource = (uint32_t)val(), .kind = (uint8_t)(rnd() % SNR_FABRIC_KIND_COUNT),
						     .from = (uint16_t)val(), .to = (uint16_t)val(), .start = start,
						     .end = start + len, .bytes_per_cycle = val(),
						     .bytes = (double)(val() >> 12) / 256,
						     .busy_cycles = (double)busy / 256, .contended_cycles = (double)cont / 256};
		break;
	}
	}
	/* cycles below 2^62 (a stall's start and length each), so that a
	 * SUMMARY can count them (a JSON integer: below 2^63): the reader
	 * refuses a file whose events run past its cycles */
	switch (kind) {
	case K_ISSUE:
	case K_RETIRE: e->u.insn.issue >>= 2, e->u.insn.retire >>= 2; break;
	case K_STALL: e->u.stall.start >>= 2, e->u.stall.cycles >>= 2; break;
	case K_DMA: e->u.dma.cycle >>= 2; break;
	case K_MEM: e->u.mem.cycle >>= 2; break;
	case K_BUSY: e->u.busy.start >>= 2, e->u.busy.end >>= 2; break;
	}
}

/* ---- the reading side: compare each delivered event with the next expected */

struct cmp {
	const struct ev *want;
	size_t n, next, bad;
	unsigned kinds; /* bits of the kinds expected (NULL callbacks drop the rest) */
};

static const struct ev *expect(struct cmp *c, int kind)
{
	while (c->next < c->n && !(c->kinds >> c->want[c->next].kind & 1))
		c->next++;
	if (c->next >= c->n || c->want[c->next].kind != kind) {
		if (c->bad++ < 5)
			CHECK(0, "event %zu: got kind %d, want %d", c->next, kind,
			      c->next < c->n ? c->want[c->next].kind : -1);
		return NULL;
	}
	return &c->want[c->next++];
}
#define SAME(f)                                                                                   \
	do {                                                                                      \
		if (w->f != e->f && c->bad++ < 5)                                                 \
			CHECK(0, "event %zu: " #f " is %llu, want %llu", c->next - 1,             \
			      (unsigned long long)e->f, (unsigned long long)w->f);                 \
	} while (0)

static void insn(struct cmp *c, int kind, const struct snr_ev_insn *e)
{
	const struct ev *x = expect(c, kind);
	if (!x)
		return;
	const struct snr_ev_insn *w = &x->u.insn;
	SAME(index); SAME(pc); SAME(issue); SAME(retire); SAME(unit); SAME(cls);
}
static void r_issue(void *u, const struct snr_ev_insn *e) { insn(u, K_ISSUE, e); }
static void r_retire(void *u, const struct snr_ev_insn *e) { insn(u, K_RETIRE, e); }
static void r_stall(void *u, const struct snr_ev_stall *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_STALL);
	if (!x)
		return;
	const struct snr_ev_stall *w = &x->u.stall;
	SAME(index); SAME(cycles); SAME(start); SAME(cause); SAME(responsible); SAME(dma_id);
}
static void r_dma(void *u, const struct snr_ev_dma *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_DMA);
	if (!x)
		return;
	const struct snr_ev_dma *w = &x->u.dma;
	SAME(id); SAME(phase); SAME(issue_index); SAME(wait_index); SAME(cycle); SAME(bytes);
	SAME(src_space); SAME(dst_space); SAME(src_chip); SAME(dst_chip); SAME(src_addr); SAME(dst_addr);
	SAME(flag); SAME(base_cycles); SAME(transfer_cycles);
}
static void r_mem(void *u, const struct snr_ev_mem *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_MEM);
	if (!x)
		return;
	const struct snr_ev_mem *w = &x->u.mem;
	SAME(index); SAME(cycle); SAME(write); SAME(space); SAME(chip); SAME(addr); SAME(bytes);
}
static void r_reg(void *u, const struct snr_ev_reg *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_REG);
	if (!x)
		return;
	const struct snr_ev_reg *w = &x->u.reg;
	SAME(index); SAME(reg); SAME(write);
}
static void r_busy(void *u, const struct snr_ev_busy *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_BUSY);
	if (!x)
		return;
	const struct snr_ev_busy *w = &x->u.busy;
	SAME(unit); SAME(start); SAME(end); SAME(index);
}
static void r_peer(void *u, const struct snr_ev_peer *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_PEER);
	if (!x)
		return;
	const struct snr_ev_peer *w = &x->u.peer;
	SAME(wait_index); SAME(wait_pc); SAME(wait_start); SAME(stall_cycles); SAME(dma_id); SAME(chip); SAME(flag);
	SAME(issue_index); SAME(issue_pc); SAME(issue_cycle); SAME(done_cycle); SAME(bytes);
}
static void r_fabric(void *u, const struct snr_ev_fabric *e)
{
	struct cmp *c = u;
	const struct ev *x = expect(c, K_FABRIC);
	if (!x)
		return;
	const struct snr_ev_fabric *w = &x->u.fabric;
	SAME(resource); SAME(kind); SAME(from); SAME(to); SAME(start); SAME(end); SAME(bytes_per_cycle);
	SAME(bytes); SAME(busy_cycles); SAME(contended_cycles);
}

static void emit(const struct snr_tracker *t, const struct ev *e)
{
	switch (e->kind) {
	case K_ISSUE: t->on_issue(t->user, &e->u.insn); break;
	case K_RETIRE: t->on_retire(t->user, &e->u.insn); break;
	case K_STALL: t->on_stall(t->user, &e->u.stall); break;
	case K_DMA: t->on_dma(t->user, &e->u.dma); break;
	case K_MEM: t->on_mem(t->user, &e->u.mem); break;
	case K_REG: t->on_reg(t->user, &e->u.reg); break;
	case K_BUSY: t->on_busy(t->user, &e->u.busy); break;
	case K_PEER: t->on_peer(t->user, &e->u.peer); break;
	case K_FABRIC: t->on_fabric(t->user, &e->u.fabric); break;
	}
}

static char *tmp_path(const char *name)
{
	static char buf[4][256];
	static int i;
	char *p = buf[i++ & 3];
	snprintf(p, 256, "%s/snr-test-metrics-%d-%s", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp", (int)getpid(), name);
	return p;
}

static size_t replay_into(const char *path, const struct ev *want, size_t n, unsigned kinds, bool all_callbacks,
			  char *err, size_t errlen, int *rc)
{
	struct cmp c = {.want = want, .n = n, .kinds = kinds};
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = &c};
	if (all_callbacks || (kinds >> K_ISSUE & 1))
		t.on_issue = r_issue;
	if (all_callbacks || (kinds >> K_RETIRE & 1))
		t.on_retire = r_retire;
	if (all_callbacks || (kinds >> K_STALL & 1))
		t.on_stall = r_stall;
	if (all_callbacks || (kinds >> K_DMA & 1))
		t.on_dma = r_dma;
	if (all_callbacks || (kinds >> K_MEM & 1))
		t.on_mem = r_mem;
	if (all_callbacks || (kinds >> K_REG & 1))
		t.on_reg = r_reg;
	if (all_callbacks || (kinds >> K_BUSY & 1))
		t.on_busy = r_busy;
	if (all_callbacks || (kinds >> K_PEER & 1))
		t.on_peer = r_peer;
	if (all_callbacks || (kinds >> K_FABRIC & 1))
		t.on_fabric = r_fabric;
	struct snr_metrics *m = snr_metrics_open(path, err, errlen);
	*rc = -1;
	if (!m)
		return 0;
	*rc = snr_metrics_replay(m, &t, err, errlen);
	snr_metrics_close(m);
	while (c.next < c.n && !(kinds >> want[c.next].kind & 1))
		c.next++;
	return c.bad ? 0 : c.next;
}

static const char META[] = "{\"format\":\"snr metrics\",\"simulator\":\"test\"}";
/* The SUMMARY of the last file written: its instructions and cycles as
 * far as the events reach (the reader checks them against the events). */
static char SUMMARY[100];
static void summary_of(const struct ev *evs, size_t n)
{
	uint64_t insns = 0, cycles = 0;
#define REACH(end, v) ((end) = (v) > (end) ? (v) : (end))
	for (size_t i = 0; i < n; i++) {
		const struct ev *e = &evs[i];
		switch (e->kind) {
		case K_ISSUE:
		case K_RETIRE:
			REACH(insns, e->u.insn.index + 1);
			REACH(cycles, e->u.insn.issue);
			REACH(cycles, e->u.insn.retire);
			break;
		case K_STALL: REACH(cycles, e->u.stall.start + e->u.stall.cycles); break;
		case K_DMA: REACH(cycles, e->u.dma.cycle); break;
		case K_MEM: REACH(cycles, e->u.mem.cycle); break;
		case K_BUSY: REACH(cycles, e->u.busy.end); break;
		case K_PEER: REACH(cycles, e->u.peer.done_cycle); break;
		}
	}
#undef REACH
	snprintf(SUMMARY, sizeof(SUMMARY), "{\"instructions\":%llu,\"cycles\":%llu}", (unsigned long long)insns,
		 (unsigned long long)cycles);
}

static void write_file(const char *path, const struct ev *evs, size_t n)
{
	char err[400];
	struct snr_metrics_writer *w = snr_metrics_create(path, META, err, sizeof(err));
	CHECK(w != NULL, "create: %s", err);
	if (!w)
		return;
	const uint64_t addr[2] = {0x10000, 0x10100}, size[2] = {0x100, 0x40};
	const char *const names[2] = {"main", "window"};
	CHECK(snr_metrics_write_symbols(w, 2, addr, size, names) == 0, "symbols");
	const struct snr_tracker *t = snr_metrics_tracker(w);
	CHECK(snr_tracker_mask(t) == 0x3ff, "the writer registers every callback, on_insn, on_peer and on_fabric too");
	for (size_t i = 0; i < n; i++)
		emit(t, &evs[i]);
	summary_of(evs, n);
	CHECK(snr_metrics_finish(w, SUMMARY, err, sizeof(err)) == 0, "finish: %s", err);
}

static bool same_insn(const struct snr_ev_insn *a, const struct snr_ev_insn *b)
{
	return a->index == b->index && a->pc == b->pc && a->issue == b->issue && a->retire == b->retire &&
	       a->unit == b->unit && a->cls == b->cls;
}

/* write_file, but each ISSUE followed by its RETIRE and that instruction's
 * reads then writes goes to on_insn in one call (as the TA1 timing model
 * reports them): the number of those calls. */
static size_t write_file_insn(const char *path, const struct ev *evs, size_t n)
{
	char err[400];
	struct snr_metrics_writer *w = snr_metrics_create(path, META, err, sizeof(err));
	CHECK(w != NULL, "create: %s", err);
	if (!w)
		return 0;
	const uint64_t addr[2] = {0x10000, 0x10100}, size[2] = {0x100, 0x40};
	const char *const names[2] = {"main", "window"};
	CHECK(snr_metrics_write_symbols(w, 2, addr, size, names) == 0, "symbols");
	const struct snr_tracker *t = snr_metrics_tracker(w);
	uint16_t regs[256];
	size_t calls = 0;
	for (size_t i = 0; i < n;) {
		const struct snr_ev_insn *e = &evs[i].u.insn;
		if (evs[i].kind != K_ISSUE || i + 1 >= n || evs[i + 1].kind != K_RETIRE ||
		    !same_insn(e, &evs[i + 1].u.insn)) {
			emit(t, &evs[i++]);
			continue;
		}
		size_t j = i + 2;
		unsigned nread = 0, nwrite = 0;
		for (uint8_t wr = 0; wr <= 1; wr++)
			while (j < n && evs[j].kind == K_REG && evs[j].u.reg.index == e->index && evs[j].u.reg.write == wr &&
			       nread + nwrite < 256) {
				regs[nread + nwrite] = evs[j++].u.reg.reg;
				*(wr ? &nwrite : &nread) += 1;
			}
		t->on_insn(t->user, e, regs, nread, nwrite);
		calls++;
		i = j;
	}
	summary_of(evs, n);
	CHECK(snr_metrics_finish(w, SUMMARY, err, sizeof(err)) == 0, "finish: %s", err);
	return calls;
}

static uint8_t *slurp(const char *path, size_t *n)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	fseek(f, 0, SEEK_END);
	*n = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *p = malloc(*n);
	*n = fread(p, 1, *n, f);
	fclose(f);
	return p;
}
static void spill(const char *path, const uint8_t *p, size_t n)
{
	FILE *f = fopen(path, "wb");
	fwrite(p, 1, n, f);
	fclose(f);
}

static void test_round_trip(const char *path, struct ev *evs)
{
	for (size_t i = 0; i < NEV; i++) {
		make(&evs[i], (int)(rnd() % K_COUNT));
		/* an instruction index stays within 65,536 of the records before
		 * it (the reader refuses one further on), in any order */
		if (evs[i].kind == K_ISSUE || evs[i].kind == K_RETIRE)
			evs[i].u.insn.index = rnd() % (i + 65536);
	}
	write_file(path, evs, NEV);
	char err[600];
	struct snr_metrics *m = snr_metrics_open(path, err, sizeof(err));
	CHECK(m != NULL, "open: %s", err);
	if (!m)
		return;
	CHECK(!strcmp(snr_metrics_meta_json(m), META), "meta: %s", snr_metrics_meta_json(m));
	CHECK(snr_metrics_summary_json(m) && !strcmp(snr_metrics_summary_json(m), SUMMARY), "summary");
	char sym[128];
	snr_metrics_symbolize(m, 0x10104, sym, sizeof(sym));
	CHECK(strstr(sym, "window") != NULL, "0x10104 symbolizes as %s", sym);
	snr_metrics_close(m);
	int rc;
	size_t got = replay_into(path, evs, NEV, ALL_KINDS, true, err, sizeof(err), &rc);
	CHECK(rc == 0 && got == NEV, "round trip: %zu of %d events (%s)", got, NEV, rc ? err : "");
	/* Only DMA and stall callbacks: the others are skipped, these still come in order. */
	got = replay_into(path, evs, NEV, 1u << K_DMA | 1u << K_STALL, false, err, sizeof(err), &rc);
	CHECK(rc == 0 && got == NEV, "with NULL callbacks: %s", rc ? err : "events differ");
	/* An empty stream is a valid file too. */
	write_file(tmp_path("empty.snrm"), evs, 0);
	got = replay_into(tmp_path("empty.snrm"), evs, 0, ALL_KINDS, true, err, sizeof(err), &rc);
	CHECK(rc == 0 && got == 0, "empty: %s", err);
	unlink(tmp_path("empty.snrm"));
}

/* Fields at the edge of one byte, the way a replay emits them (an index and
 * pc a few steps from the last, an issue cycle near the last one): the writer
 * stores a record whose fields each fit one byte in one store and the others
 * field by field, so deltas of -64/63 (one byte) and -65/64 (two), units and
 * classes and registers of 127/128, on each side of the switch, read back as
 * written. */
static int64_t edge(void)
{
	static const int64_t d[] = {-65, -64, -63, -1, 0, 1, 62, 63, 64, 65, 8191, 8192, -8193};
	return d[rnd() % (sizeof(d) / sizeof(d[0]))];
}
static void test_one_byte_edges(const char *path, struct ev *evs)
{
	/* the cycle's random walk stays above 0 whatever the random stream (it
	 * moves at most 8,193 a step) and below what a SUMMARY can count */
	uint64_t index = 0, pc = 0x10000, cycle = (uint64_t)1 << 40;
	static const uint8_t small[] = {0, 1, 126, 127, 128, 129, 255};
	for (size_t i = 0; i < NEV; i++) {
		int kind = rnd() % 3 == 0 ? K_REG : rnd() % 2 ? K_ISSUE : K_RETIRE;
		struct ev *e = &evs[i];
		memset(e, 0, sizeof(*e));
		e->kind = kind;
		index += (uint64_t)edge();
		if (index > i + 1000)
			index = i;
		if (kind == K_REG) {
			e->u.reg = (struct snr_ev_reg){index, (uint16_t)(rnd() % 2 ? small[rnd() % 7] : rnd() % 300),
						       (uint8_t)(rnd() & 1)};
			continue;
		}
		pc += (uint64_t)edge();
		cycle += (uint64_t)edge();
		e->u.insn = (struct snr_ev_insn){index, pc, cycle, cycle + (uint64_t)(edge() + 65),
						 (uint8_t)(small[rnd() % 7] % SNR_UNIT_COUNT), small[rnd() % 7]};
	}
	write_file(path, evs, NEV);
	char err[600];
	int rc;
	size_t got = replay_into(path, evs, NEV, ALL_KINDS, true, err, sizeof(err), &rc);
	CHECK(rc == 0 && got == NEV, "one-byte edges: %zu of %d events (%s)", got, NEV, rc ? err : "");
}

/* The number of records the file says it holds: the count of its last
 * EVENTS chunk (the events' end). */
static uint64_t records_in(const char *path)
{
	struct snr_chunk_file cf;
	char err[600];
	uint64_t records = 0;
	if (snr_chunkf_open(&cf, path, SNR_METRICS_MAGIC, "m", 1, 99, 99, err, sizeof(err)))
		return 0;
	for (size_t i = 0; i < cf.nchunks; i++) {
		long n = cf.chunks[i].type == 3 ? snr_chunkf_payload(&cf, &cf.chunks[i]) : -1;
		if (n > 0) {
			struct snr_cursor cu = {cf.raw, cf.raw + n, 0};
			records = snr_cur_varint(&cu);
		}
	}
	snr_chunkf_close(&cf);
	return records;
}

/* A stream shaped like a replay's: per instruction, maybe a load first, then
 * its ISSUE, its RETIRE and its registers in a row (one INSN record in the
 * file), with every near miss of that merge: a RETIRE that differs from the
 * ISSUE in one field, a STALL between them, a REG of another instruction or
 * with a write flag other than 0 and 1, register numbers of one and two
 * varint bytes, more registers than one INSN record holds (127), and
 * instructions over several EVENTS chunks. Every event reads back as
 * written, and where they merged the file holds one record per instruction. */
static void test_insn_records(const char *path, struct ev *evs)
{
	size_t n = 0, insns = 0;
	uint64_t index = 0, pc = 0x10000, cycle = 0;
	while (n + 200 < NEV) {
		struct snr_ev_insn e = {index, pc, cycle, cycle + 1 + rnd() % 3, (uint8_t)(rnd() % SNR_UNIT_COUNT),
					(uint8_t)(rnd() % 40)};
		if (rnd() % 8 == 0)
			evs[n++] = (struct ev){.kind = K_MEM, .u.mem = {index, cycle, 0, 1, 0, 0x20000000 + index * 8, 8}};
		evs[n++] = (struct ev){.kind = K_ISSUE, .u.insn = e};
		unsigned miss = rnd() % 64;
		if (miss == 0)
			evs[n++] = (struct ev){.kind = K_STALL, .u.stall = {index, 2, cycle, 4, -1, 0}};
		struct snr_ev_insn r = e;
		switch (miss) {
		case 1: r.index++; break;
		case 2: r.pc += 4; break;
		case 3: r.issue++; break;
		case 4: r.retire++; break;
		case 5: r.unit = (uint8_t)((r.unit + 1) % SNR_UNIT_COUNT); break;
		case 6: r.cls++; break;
		}
		if (miss != 7) /* else an ISSUE alone: the next one's finds it pending */
			evs[n++] = (struct ev){.kind = K_RETIRE, .u.insn = r};
		unsigned nregs = rnd() % 64 == 0 ? 130 + (unsigned)(rnd() % 3) : (unsigned)(rnd() % 4);
		for (unsigned k = 0; k < nregs; k++) {
			struct snr_ev_reg g = {index, (uint16_t)(rnd() % 2 ? rnd() % 64 : rnd() % 70000), (uint8_t)(k & 1)};
			if (nregs < 100 && rnd() % 50 == 0)
				g.index += 1 + rnd() % 3; /* another instruction's */
			if (nregs < 100 && rnd() % 50 == 0)
				g.write = 2;
			evs[n++] = (struct ev){.kind = K_REG, .u.reg = g};
		}
		index++, insns++;
		pc += rnd() % 8 == 0 ? (uint64_t)(int64_t)(rnd() % 4000) - 2000 : 4;
		cycle += 1 + rnd() % 5;
	}
	write_file(path, evs, n);
	char err[600];
	int rc;
	size_t got = replay_into(path, evs, n, ALL_KINDS, true, err, sizeof(err), &rc);
	CHECK(rc == 0 && got == n, "replay-shaped stream: %zu of %zu events (%s)", got, n, rc ? err : "");
	/* Only the registers: those inside INSN records still come, in order. */
	got = replay_into(path, evs, n, 1u << K_REG, false, err, sizeof(err), &rc);
	CHECK(rc == 0 && got == n, "registers alone: %s", rc ? err : "events differ");
	/* written one record per event, or with ISSUE and RETIRE merged but no
	 * registers, the file would hold over n / 2 records */
	uint64_t records = records_in(path);
	CHECK(records > insns && records < n / 2,
	      "%zu instructions (%zu events) in %llu records: ISSUE, RETIRE and REGs not merged", insns, n,
	      (unsigned long long)records);
	/* The same events through on_insn where they can go: the same file,
	 * byte for byte (its fast INSN record and, for registers of 64 and up,
	 * more than 127 registers or a pending ISSUE, the calls one by one). */
	char path2[600];
	snprintf(path2, sizeof(path2), "%s.insn", path);
	size_t calls = write_file_insn(path2, evs, n), na = 0, nb = 0;
	uint8_t *a = slurp(path, &na), *b = slurp(path2, &nb);
	CHECK(calls > insns / 2, "on_insn took %zu of %zu instructions", calls, insns);
	CHECK(a && b && na == nb && !memcmp(a, b, na), "on_insn's file differs (%zu and %zu bytes)", na, nb);
	free(a);
	free(b);
	unlink(path2);
}

/* An INSN record by hand (version 5): instruction 7 at pc 0x400 issued at 20
 * and retired at 22, reading register 3 and writing register 300 (a
 * two-byte varint); then a REG record of instruction 8. In a file of
 * version 4 the same bytes are malformed. */
static void test_insn_by_hand(const char *path)
{
	const uint8_t ev[] = {0, 8, 14, 0x80, 0x10, 40, 4, 1, 5, 2, 3 << 1, 0xd9, 0x04, 6, 2, 9, 0};
	for (uint32_t version = 5; version >= 4; version--) {
		struct snr_chunk_writer w;
		char err[600];
		CHECK(snr_chunkw_create(&w, path, SNR_METRICS_MAGIC, version, err, sizeof(err)) == 0, "%s", err);
		snr_chunkw_put(&w, 1, META, strlen(META), false);
		snr_chunkw_put(&w, 3, ev, sizeof(ev), false);
		snr_chunkw_close(&w);
		struct snr_metrics *m = snr_metrics_open(path, err, sizeof(err));
		CHECK(m != NULL, "open: %s", err);
		if (!m)
			return;
		struct ev want[5] = {
			{.kind = K_ISSUE, .u.insn = {7, 0x400, 20, 22, 1, 5}},
			{.kind = K_RETIRE, .u.insn = {7, 0x400, 20, 22, 1, 5}},
			{.kind = K_REG, .u.reg = {7, 3, 0}},
			{.kind = K_REG, .u.reg = {7, 300, 1}},
			{.kind = K_REG, .u.reg = {8, 9, 0}},
		};
		int rc;
		size_t got = replay_into(path, want, 5, ALL_KINDS, true, err, sizeof(err), &rc);
		if (version == 5)
			CHECK(rc == 0 && got == 5, "INSN by hand: %zu of 5 events (%s)", got, rc ? err : "");
		else
			CHECK(rc != 0 && strstr(err, "payload offset 2"), "INSN in version 4: %s",
			      rc ? err : "accepted");
		snr_metrics_close(m);
	}
}

static int names_place(const char *err)
{
	return (strstr(err, "chunk ") && strstr(err, "(offset ")) || strstr(err, "file header") ||
	       strstr(err, "no SNRMETRC header");
}

static void test_corruption(const char *path, const struct ev *evs)
{
	/* A small file, so that every byte can be flipped. */
	write_file(path, evs, 300);
	size_t n;
	uint8_t *orig = slurp(path, &n);
	CHECK(orig != NULL && n > 100, "small file");
	if (!orig)
		return;
	const char *bad = tmp_path("bad.snrm");
	unsigned detected = 0;
	for (size_t off = 0; off < n; off++) {
		orig[off] ^= 0x5a;
		spill(bad, orig, n);
		orig[off] ^= 0x5a;
		char err[600] = "";
		int rc;
		replay_into(bad, evs, 300, ALL_KINDS, true, err, sizeof(err), &rc);
		CHECK(rc != 0, "byte %zu changed: the reader did not notice", off);
		if (rc != 0) {
			CHECK(names_place(err), "byte %zu changed: the error names no place: %s", off, err);
			detected++;
		}
	}
	CHECK(detected == n, "%u of %zu corruptions detected", detected, n);
	/* Cut short: whole chunks read, the summary is gone, no error. */
	spill(bad, orig, n - 3);
	char err[600];
	struct snr_metrics *m = snr_metrics_open(bad, err, sizeof(err));
	CHECK(m != NULL, "truncated file: %s", err);
	if (m) {
		CHECK(snr_metrics_summary_json(m) == NULL, "a truncated file has no summary");
		snr_metrics_close(m);
	}
	free(orig);
	unlink(bad);
}

/* A valid container whose EVENTS payload holds a bad record: the error
 * names the chunk and the offset of the record inside the payload. */
static void test_malformed_record(const char *path)
{
	struct snr_chunk_writer w;
	char err[600];
	CHECK(snr_chunkw_create(&w, path, SNR_METRICS_MAGIC, SNR_METRICS_VERSION, err, sizeof(err)) == 0, "%s", err);
	snr_chunkw_put(&w, 1, META, strlen(META), false);
	/* no records before it; a REG event (kind 6: index 5, reg 3, write 1), then kind 99 */
	const uint8_t ev[] = {0, 6, 5, 3, 1, 99, 0, 0};
	snr_chunkw_put(&w, 3, ev, sizeof(ev), false);
	CHECK(snr_chunkw_close(&w) == 0, "close");
	struct snr_metrics *m = snr_metrics_open(path, err, sizeof(err));
	CHECK(m != NULL, "open: %s", err);
	if (!m)
		return;
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION};
	int rc = snr_metrics_replay(m, &t, err, sizeof(err));
	CHECK(rc != 0 && strstr(err, "chunk 1 (offset ") && strstr(err, "payload offset 6"),
	      "malformed record: %s", err);
	snr_metrics_close(m);
	/* A stall with an unknown cause is malformed too (kind 3; cause 200). */
	CHECK(snr_chunkw_create(&w, path, SNR_METRICS_MAGIC, SNR_METRICS_VERSION, err, sizeof(err)) == 0, "%s", err);
	snr_chunkw_put(&w, 1, META, strlen(META), false);
	const uint8_t st[] = {0, 3, 1, 1, 1, 0xc8, 0x01, 0, 0};
	snr_chunkw_put(&w, 3, st, sizeof(st), false);
	snr_chunkw_close(&w);
	m = snr_metrics_open(path, err, sizeof(err));
	rc = m ? snr_metrics_replay(m, &t, err, sizeof(err)) : -1;
	CHECK(rc != 0 && strstr(err, "chunk 1 (offset "), "stall cause 200: %s", err);
	snr_metrics_close(m);
}

/* The round trip's file re-encoded chunk by chunk with valid checksums and
 * sequence numbers, its first two EVENTS chunks exchanged (swap) or the
 * first left out: the reader must refuse it, naming the chunk, before a
 * tracker sees any event. */
static unsigned long reordered_events;
static void count_issue(void *u, const struct snr_ev_insn *e)
{
	(void)u, (void)e;
	reordered_events++;
}
static void test_reordered(const char *path, bool swap)
{
	char err[600], out[4096];
	snprintf(out, sizeof(out), "%s.re", path);
	struct snr_chunk_file cf;
	CHECK(snr_chunkf_open(&cf, path, SNR_METRICS_MAGIC, "m", 1, 99, 99, err, sizeof(err)) == 0, "%s", err);
	size_t ev[2], ne = 0;
	for (size_t i = 0; i < cf.nchunks && ne < 2; i++)
		if (cf.chunks[i].type == 3)
			ev[ne++] = i;
	CHECK(ne == 2, "the round trip wrote %zu EVENTS chunks, want 2 or more", ne);
	struct snr_chunk_writer w;
	CHECK(snr_chunkw_create(&w, out, SNR_METRICS_MAGIC, cf.version, err, sizeof(err)) == 0, "%s", err);
	for (size_t i = 0; i < cf.nchunks; i++) {
		size_t from = i;
		if (ne == 2 && i == ev[0])
			from = swap ? ev[1] : SIZE_MAX;
		else if (ne == 2 && i == ev[1] && swap)
			from = ev[0];
		if (from == SIZE_MAX)
			continue;
		long n = snr_chunkf_payload(&cf, &cf.chunks[from]);
		CHECK(n >= 0, "payload");
		snr_chunkw_put(&w, cf.chunks[from].type, cf.raw, (size_t)n, false);
	}
	CHECK(snr_chunkw_close(&w) == 0, "close");
	snr_chunkf_close(&cf);
	struct snr_metrics *m = snr_metrics_open(out, err, sizeof(err));
	CHECK(m != NULL, "open: %s", err);
	if (m) {
		reordered_events = 0;
		struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION, .on_issue = count_issue};
		int rc = snr_metrics_replay(m, &t, err, sizeof(err));
		CHECK(rc != 0 && strstr(err, "EVENTS out of order") && strstr(err, "chunk "), "%s: %s",
		      swap ? "swapped" : "dropped", rc ? err : "accepted");
		/* both refused at the first EVENTS chunk, which does not start at record 0 */
		CHECK(reordered_events == 0, "%lu events delivered before the refusal", reordered_events);
		snr_metrics_close(m);
	}
	unlink(out);
}

/* What the hand-written files below must read back as. */
struct seen {
	struct snr_ev_insn issue, retire;
	struct snr_ev_stall stall;
	struct snr_ev_mem mem[2];
	struct snr_ev_reg reg;
	struct snr_ev_busy busy;
	int nmem, n;
};
static void s_issue(void *u, const struct snr_ev_insn *e) { ((struct seen *)u)->issue = *e, ((struct seen *)u)->n++; }
static void s_retire(void *u, const struct snr_ev_insn *e) { ((struct seen *)u)->retire = *e, ((struct seen *)u)->n++; }
static void s_stall(void *u, const struct snr_ev_stall *e) { ((struct seen *)u)->stall = *e, ((struct seen *)u)->n++; }
static void s_mem(void *u, const struct snr_ev_mem *e)
{
	struct seen *s = u;
	if (s->nmem < 2)
		s->mem[s->nmem++] = *e;
	s->n++;
}
static void s_reg(void *u, const struct snr_ev_reg *e) { ((struct seen *)u)->reg = *e, ((struct seen *)u)->n++; }
static void s_busy(void *u, const struct snr_ev_busy *e) { ((struct seen *)u)->busy = *e, ((struct seen *)u)->n++; }

static void put_varint(uint8_t *b, size_t *n, uint64_t v)
{
	while (v >= 0x80) {
		b[(*n)++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	b[(*n)++] = (uint8_t)v;
}

/* One instruction (index 1000 at pc 0x10040, issued at 5000, retired at
 * 5003) with a stall blamed on no instruction, two loads, a register write
 * and a busy interval, encoded in `version` by hand. */
static void test_versions(const char *path, uint32_t version)
{
	uint8_t b[256];
	size_t n = 0;
	const int d = version >= 3; /* deltas from the context (I, P, C, A), zero at the chunk's start */
	if (version >= 4)
		b[n++] = 0; /* records before this chunk */
#define VI(x) put_varint(b, &n, (uint64_t)(x))
#define ZI(x) put_varint(b, &n, snr_zigzag((int64_t)(x)))
	b[n++] = version >= 5 ? 8 : 1; /* ISSUE, or INSN: ISSUE and RETIRE in one */
	if (d) { ZI(1000); ZI(0x10040); ZI(5000); ZI(3); } else { VI(1000); VI(0x10040); VI(5000); VI(5003); }
	VI(0), VI(3);
	if (version >= 5) {
		VI(0); /* INSN: no registers */
	} else {
		b[n++] = 2; /* RETIRE: the same instruction */
		if (d) { ZI(0); ZI(0); ZI(0); ZI(3); } else { VI(1000); VI(0x10040); VI(5000); VI(5003); }
		VI(0), VI(3);
	}
	b[n++] = 3; /* STALL: 2 cycles from 4998, cause register (4), responsible -1 */
	if (d) { ZI(0); VI(2); ZI(-2); VI(4); ZI(1001); } else { VI(1000); VI(2); VI(4998); VI(4); ZI(-1); }
	VI(0);
	b[n++] = 5; /* MEM: a read of 8 bytes at 0x20001000, then one at 0x20000ff8 */
	if (d) { ZI(0); ZI(0); } else { VI(1000); VI(5000); }
	VI(0), VI(1), VI(0);
	if (d) ZI(0x20001000); else VI(0x20001000);
	VI(8);
	b[n++] = 5;
	if (d) { ZI(1); ZI(1); } else { VI(1001); VI(5001); }
	VI(0), VI(1), VI(0);
	if (d) ZI(-8); else VI(0x20000ff8);
	VI(8);
	b[n++] = 6; /* REG: instruction 1001 writes register 7 */
	if (d) ZI(0); else VI(1001);
	VI(7), VI(1);
	b[n++] = 7; /* BUSY: the scalar unit over [4990, 5010) for instruction 990 */
	VI(0);
	if (d) { ZI(-10); ZI(20); ZI(-11); } else { VI(4990); VI(5010); VI(990); }
#undef VI
#undef ZI
	struct snr_chunk_writer w;
	char err[600];
	CHECK(snr_chunkw_create(&w, path, SNR_METRICS_MAGIC, version, err, sizeof(err)) == 0, "%s", err);
	snr_chunkw_put(&w, 1, META, strlen(META), false);
	snr_chunkw_put(&w, 3, b, n, false);
	snr_chunkw_close(&w);
	struct seen s = {0};
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = &s, .on_issue = s_issue,
				.on_retire = s_retire, .on_stall = s_stall, .on_mem = s_mem, .on_reg = s_reg,
				.on_busy = s_busy};
	struct snr_metrics *m = snr_metrics_open(path, err, sizeof(err));
	CHECK(m != NULL, "version %u: %s", version, err);
	if (!m)
		return;
	CHECK(snr_metrics_replay(m, &t, err, sizeof(err)) == 0, "version %u: %s", version, err);
	snr_metrics_close(m);
	CHECK(s.n == 7, "version %u: %d events", version, s.n);
	CHECK(s.issue.index == 1000 && s.issue.pc == 0x10040 && s.issue.issue == 5000 && s.issue.retire == 5003 &&
		      s.issue.cls == 3,
	      "version %u: issue %llu 0x%llx %llu %llu", version, (unsigned long long)s.issue.index,
	      (unsigned long long)s.issue.pc, (unsigned long long)s.issue.issue, (unsigned long long)s.issue.retire);
	CHECK(!memcmp(&s.issue, &s.retire, sizeof(s.issue)), "version %u: retire as issue", version);
	CHECK(s.stall.index == 1000 && s.stall.cycles == 2 && s.stall.start == 4998 && s.stall.cause == 4 &&
		      s.stall.responsible == -1,
	      "version %u: stall %llu %llu %lld", version, (unsigned long long)s.stall.index,
	      (unsigned long long)s.stall.start, (long long)s.stall.responsible);
	CHECK(s.nmem == 2 && s.mem[0].addr == 0x20001000 && s.mem[0].cycle == 5000 && s.mem[1].index == 1001 &&
		      s.mem[1].cycle == 5001 && s.mem[1].addr == 0x20000ff8 && s.mem[1].bytes == 8 && s.mem[1].space == 1,
	      "version %u: mem 0x%llx 0x%llx", version, (unsigned long long)s.mem[0].addr,
	      (unsigned long long)s.mem[1].addr);
	CHECK(s.reg.index == 1001 && s.reg.reg == 7 && s.reg.write == 1, "version %u: reg", version);
	CHECK(s.busy.start == 4990 && s.busy.end == 5010 && s.busy.index == 990,
	      "version %u: busy [%llu, %llu) %llu", version, (unsigned long long)s.busy.start,
	      (unsigned long long)s.busy.end, (unsigned long long)s.busy.index);
}

int main(void)
{
	const char *path = tmp_path("rt.snrm");
	struct ev *evs = calloc(NEV, sizeof(*evs));
	test_round_trip(path, evs);
	test_one_byte_edges(path, evs);
	test_insn_records(path, evs);
	test_reordered(path, true);
	test_reordered(path, false);
	test_corruption(path, evs);
	test_malformed_record(path);
	test_versions(path, 5);
	test_insn_by_hand(path);
	test_versions(path, 4);
	test_versions(path, 3);
	test_versions(path, 2);
	unlink(path);
	free(evs);
	return check_report("test_metrics");
}
