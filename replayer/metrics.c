/*
 * metrics.c: the .snrm file (see metrics.h and docs/metrics-format.md).
 *
 * Chunks: META (JSON), SYMBOLS, EVENTS (zstd batches of event records),
 * SUMMARY (JSON, last). An event record is one kind byte followed by varint
 * fields in the order of the struct in sim/snr_tracker.h; signed fields are
 * zigzag-encoded. Since version 3, instruction indices, pcs, cycles and
 * memory addresses are stored as zigzag deltas from the chunk's running
 * context (struct ctx), which makes most fields one byte. Batches flush every
 * 64 Ki events and each starts from a zero context. The file is written to a
 * temporary name and renamed into place by snr_metrics_finish
 * (lib/snr_outfile.h): a replay that fails or is killed part-way leaves the
 * path as it was.
 */
#include "metrics.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_symtab.h"
#include "lib/snr_util.h"

enum { CH_META = 1, CH_SYMBOLS = 2, CH_EVENTS = 3, CH_SUMMARY = 4 };
enum { EV_ISSUE = 1, EV_RETIRE, EV_STALL, EV_DMA, EV_MEM, EV_REG, EV_BUSY, EV_INSN };
#define INSN_REGS_MAX 127 /* register events one INSN record carries (its count stays one byte) */
#define METRICS_INDEX_SLACK 65536 /* how far an instruction index may run past the records read */
#define EVENTS_PER_CHUNK 65536

/* The running context of delta-encoded fields (version 3), zero at the
 * start of every EVENTS chunk: the last instruction index and pc seen, the
 * last issue cycle, the last memory address. */
struct ctx {
	uint64_t index, pc, cycle, addr;
};

struct snr_metrics_writer {
	struct snr_chunk_writer cw;
	struct snr_buf ev;
	uint64_t nev;
	uint64_t before; /* records in the EVENTS chunks written before this one */
	struct ctx x;
	/* The record still open to merging (version 5): an ISSUE that a RETIRE
	 * of the same instruction turns into an INSN, or an INSN that takes the
	 * REG events of its instruction. It is open while nothing was written
	 * after it: ev.len == open_end. open_at is the ISSUE's kind byte or the
	 * INSN's register count; the ISSUE's retire, unit and class are kept
	 * (its index, pc and issue cycle are the context's). */
	uint8_t open_kind;
	size_t open_at, open_end;
	uint64_t open_retire;
	uint8_t open_unit, open_cls;
	struct snr_tracker tracker;
};

static void flush_events(struct snr_metrics_writer *w)
{
	if (!w->nev)
		return;
	snr_chunkw_put(&w->cw, CH_EVENTS, w->ev.p, w->ev.len, true);
	w->ev.len = 0;
	w->before += w->nev;
	w->nev = 0;
	memset(&w->x, 0, sizeof(w->x));
	w->open_kind = 0; /* records never straddle chunks */
}

/* The longest record: the kind byte and a DMA's 18 varints of at most 10
 * bytes each. */
enum { RECORD_MAX = 1 + 18 * 10 };

/* Starts a record of KIND: the capacity for the longest record is made once
 * here, so the fields go through a plain pointer (put) with no check each;
 * record_end stores the length. A chunk holds EVENTS_PER_CHUNK - 1 records
 * (the files are byte for byte those of the earlier writer). */
static inline uint8_t *record_begin(struct snr_metrics_writer *w, uint8_t kind)
{
	if (w->nev + 1 >= EVENTS_PER_CHUNK)
		flush_events(w);
	if (!w->ev.len) /* version 4: a chunk starts with the number of records before it */
		snr_buf_varint(&w->ev, w->before);
	w->nev++;
	if (w->ev.cap - w->ev.len < RECORD_MAX)
		snr_buf_need(&w->ev, RECORD_MAX);
	uint8_t *p = w->ev.p + w->ev.len;
	*p++ = kind;
	return p;
}

static inline void record_end(struct snr_metrics_writer *w, const uint8_t *p) { w->ev.len = (size_t)(p - w->ev.p); }

static inline uint8_t *put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

#define V(x) (p = put(p, (uint64_t)(x)))
#define Z(x) (p = put(p, snr_zigzag((int64_t)(x))))
/* a delta from the context, modulo 2^64 */
#define D(x, base) Z((uint64_t)(x) - (uint64_t)(base))

/* The common record whose fields each fit one byte (deltas of -64..63,
 * small unit and class numbers) is stored with one 8-byte store instead of a
 * loop per field: the same bytes. The record's capacity (RECORD_MAX) covers
 * the extra byte the store writes past it, which the next record overwrites. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SNR_METRICS_PACKED 1
#else
#define SNR_METRICS_PACKED 0
#endif

/* Returns the offset of the record's kind byte. */
static inline __attribute__((always_inline)) size_t w_insn(struct snr_metrics_writer *w, uint8_t kind,
							 const struct snr_ev_insn *e)
{
	uint8_t *p = record_begin(w, kind);
	const size_t at = (size_t)(p - 1 - w->ev.p);
	const uint64_t di = snr_zigzag((int64_t)(e->index - w->x.index)), dp = snr_zigzag((int64_t)(e->pc - w->x.pc)),
		       dc = snr_zigzag((int64_t)(e->issue - w->x.cycle)), dr = snr_zigzag((int64_t)(e->retire - e->issue));
	if (SNR_METRICS_PACKED && (di | dp | dc | dr | e->unit | e->cls) < 0x80) {
		/* p[-1] is the kind byte: the record's seven bytes are stored from there */
		uint64_t v = (uint64_t)kind | di << 8 | dp << 16 | dc << 24 | dr << 32 | (uint64_t)e->unit << 40 |
			     (uint64_t)e->cls << 48;
		memcpy(p - 1, &v, 8);
		p += 6;
	} else {
		p = put(p, di);
		p = put(p, dp);
		p = put(p, dc);
		p = put(p, dr);
		V(e->unit);
		V(e->cls);
	}
	record_end(w, p);
	w->x.index = e->index;
	w->x.pc = e->pc;
	w->x.cycle = e->issue;
	return at;
}
void snr_metrics_on_issue(void *u, const struct snr_ev_insn *e)
{
	struct snr_metrics_writer *w = u;
	w->open_at = w_insn(w, EV_ISSUE, e);
	w->open_kind = EV_ISSUE;
	w->open_end = w->ev.len;
	w->open_retire = e->retire;
	w->open_unit = e->unit;
	w->open_cls = e->cls;
}
void snr_metrics_on_retire(void *u, const struct snr_ev_insn *e)
{
	struct snr_metrics_writer *w = u;
	/* The RETIRE right after the ISSUE of the same instruction (every one
	 * the TA1 timing model reports): the ISSUE becomes an INSN record, which
	 * stands for both, with no registers yet. */
	if (w->open_kind == EV_ISSUE && w->ev.len == w->open_end && e->index == w->x.index && e->pc == w->x.pc &&
	    e->issue == w->x.cycle && e->retire == w->open_retire && e->unit == w->open_unit &&
	    e->cls == w->open_cls) {
		w->ev.p[w->open_at] = EV_INSN;
		w->open_at = w->ev.len; /* record_begin left room for this byte */
		w->ev.p[w->ev.len++] = 0;
		w->open_end = w->ev.len;
		w->open_kind = EV_INSN;
		return;
	}
	w_insn(w, EV_RETIRE, e);
	w->open_kind = 0;
}
void snr_metrics_on_stall(void *u, const struct snr_ev_stall *e)
{
	struct snr_metrics_writer *w = u;
	uint8_t *p = record_begin(w, EV_STALL);
	D(e->index, w->x.index);
	V(e->cycles);
	D(e->start, w->x.cycle);
	V(e->cause);
	D(e->index, e->responsible);
	V(e->dma_id);
	record_end(w, p);
	w->x.index = e->index;
}
void snr_metrics_on_dma(void *u, const struct snr_ev_dma *e)
{
	struct snr_metrics_writer *w = u;
	uint8_t *p = record_begin(w, EV_DMA);
	V(e->id);
	V(e->phase);
	Z(e->issue_index);
	Z(e->wait_index);
	V(e->cycle);
	V(e->bytes);
	V(e->src_space);
	V(e->dst_space);
	V(e->src_chip);
	V(e->dst_chip);
	V(e->src_addr);
	V(e->dst_addr);
	V(e->flag);
	V(e->base_cycles);
	V(e->transfer_cycles);
	/* version 2: the WAITED split (Figure 4) */
	V(e->stall_base_cycles);
	V(e->stall_transfer_cycles);
	V(e->slack_cycles);
	record_end(w, p);
}
void snr_metrics_on_mem(void *u, const struct snr_ev_mem *e)
{
	struct snr_metrics_writer *w = u;
	uint8_t *p = record_begin(w, EV_MEM);
	D(e->index, w->x.index);
	D(e->cycle, w->x.cycle);
	V(e->write);
	V(e->space);
	V(e->chip);
	D(e->addr, w->x.addr);
	V(e->bytes);
	record_end(w, p);
	w->x.index = e->index;
	w->x.addr = e->addr;
}
void snr_metrics_on_reg(void *u, const struct snr_ev_reg *e)
{
	struct snr_metrics_writer *w = u;
	if (w->open_kind == EV_INSN && w->ev.len == w->open_end && e->index == w->x.index && e->write <= 1 &&
	    w->ev.p[w->open_at] < INSN_REGS_MAX) {
		/* a register of the INSN just written: one varint (reg << 1 | write) */
		if (w->ev.cap - w->ev.len < 4)
			snr_buf_need(&w->ev, 4);
		w->ev.p[w->open_at]++;
		const uint32_t v = (uint32_t)e->reg << 1 | e->write;
		if (v < 0x80)
			w->ev.p[w->ev.len++] = (uint8_t)v;
		else {
			uint8_t *p = put(w->ev.p + w->ev.len, v);
			w->ev.len = (size_t)(p - w->ev.p);
		}
		w->open_end = w->ev.len;
		return;
	}
	uint8_t *p = record_begin(w, EV_REG);
	const uint64_t di = snr_zigzag((int64_t)(e->index - w->x.index));
	if (SNR_METRICS_PACKED && (di | e->reg | e->write) < 0x80) {
		uint32_t v = (uint32_t)EV_REG | (uint32_t)di << 8 | (uint32_t)e->reg << 16 | (uint32_t)e->write << 24;
		memcpy(p - 1, &v, 4);
		p += 3;
	} else {
		p = put(p, di);
		V(e->reg);
		V(e->write);
	}
	record_end(w, p);
	w->x.index = e->index;
}
void snr_metrics_on_busy(void *u, const struct snr_ev_busy *e)
{
	struct snr_metrics_writer *w = u;
	uint8_t *p = record_begin(w, EV_BUSY);
	V(e->unit);
	D(e->start, w->x.cycle);
	D(e->end, e->start);
	D(e->index, w->x.index);
	record_end(w, p);
}
#undef V
#undef Z
#undef D

struct snr_metrics_writer *snr_metrics_create(const char *path, const char *meta_json, char *err, size_t errlen)
{
	struct snr_metrics_writer *w = snr_xcalloc(1, sizeof(*w));
	if (snr_chunkw_open(&w->cw, path, SNR_CHUNKW_ATOMIC, SNR_METRICS_MAGIC, SNR_METRICS_VERSION, err, errlen)) {
		free(w);
		return NULL;
	}
	w->cw.level = 1;
	if (snr_chunkw_put(&w->cw, CH_META, meta_json, strlen(meta_json), false)) {
		snr_fmt(err, errlen, "%s", w->cw.err);
		snr_metrics_abandon(w);
		return NULL;
	}
	w->tracker = (struct snr_tracker){
		.abi_version = SNR_TRACKER_ABI_VERSION,
		.user = w,
		.on_issue = snr_metrics_on_issue,
		.on_retire = snr_metrics_on_retire,
		.on_stall = snr_metrics_on_stall,
		.on_dma = snr_metrics_on_dma,
		.on_mem = snr_metrics_on_mem,
		.on_reg = snr_metrics_on_reg,
		.on_busy = snr_metrics_on_busy,
	};
	return w;
}

int snr_metrics_write_symbols(struct snr_metrics_writer *w, size_t n, const uint64_t *addr, const uint64_t *size,
			      const char *const *name)
{
	struct snr_buf b = {0};
	snr_symtab_encode(&b, n, addr, size, name);
	int rc = snr_chunkw_put(&w->cw, CH_SYMBOLS, b.p, b.len, true);
	free(b.p);
	return rc;
}

const struct snr_tracker *snr_metrics_tracker(struct snr_metrics_writer *w) { return &w->tracker; }

int snr_metrics_finish(struct snr_metrics_writer *w, const char *summary_json, char *err, size_t errlen)
{
	flush_events(w);
	/* the end of the events: an EVENTS chunk of no records, only the count
	 * of all of them, so that a reader misses no chunk dropped at the end */
	snr_buf_varint(&w->ev, w->before);
	snr_chunkw_put(&w->cw, CH_EVENTS, w->ev.p, w->ev.len, false);
	snr_chunkw_put(&w->cw, CH_SUMMARY, summary_json, strlen(summary_json), false);
	int rc = snr_chunkw_close(&w->cw);
	if (rc)
		snr_fmt(err, errlen, "%s", w->cw.err);
	free(w->ev.p);
	free(w);
	return rc;
}

void snr_metrics_abandon(struct snr_metrics_writer *w)
{
	if (!w)
		return;
	snr_chunkw_abort(&w->cw); /* the file at the path, if any, stays as it was */
	free(w->ev.p);
	free(w);
}

/* ---- reading ----------------------------------------------------------------- */

struct snr_metrics {
	struct snr_chunk_file f;
	char *meta, *summary;
	struct snr_symtab syms;
};

struct snr_metrics *snr_metrics_open(const char *path, char *err, size_t errlen)
{
	struct snr_metrics *m = snr_xcalloc(1, sizeof(*m));
	if (snr_chunkf_open(&m->f, path, SNR_METRICS_MAGIC, "snr metrics file", 1, SNR_METRICS_VERSION, CH_SUMMARY, err, errlen)) {
		free(m);
		return NULL;
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < m->f.nchunks; i++) {
		const struct snr_chunk *c = &m->f.chunks[i];
		if ((i == 0) != (c->type == CH_META)) {
			rc = snr_chunkf_fail(&m->f, c, i == 0 ? "the first chunk is not META" : "a second META chunk");
			break;
		}
		if (c->type == CH_EVENTS)
			continue;
		long n = snr_chunkf_payload(&m->f, c);
		if (n < 0) {
			rc = -1;
			break;
		}
		if (c->type == CH_META) {
			m->meta = snr_json_escape_controls((const char *)m->f.raw); /* no raw control bytes out */
			if (!m->meta)
				m->meta = snr_xstrdup((const char *)m->f.raw);
		} else if (c->type == CH_SUMMARY) {
			if (i + 1 != m->f.nchunks)
				rc = snr_chunkf_fail(&m->f, &m->f.chunks[i + 1], "data after the SUMMARY chunk");
			m->summary = snr_json_escape_controls((const char *)m->f.raw);
			if (!m->summary)
				m->summary = snr_xstrdup((const char *)m->f.raw);
		} else if (c->type == CH_SYMBOLS) {
			if (m->syms.n || snr_symtab_decode(&m->syms, m->f.raw, (size_t)n))
				rc = snr_chunkf_fail(&m->f, c, "symbol table is malformed or repeated");
		}
	}
	if (!rc && !m->meta)
		rc = snr_chunkf_fail(&m->f, NULL, "no META chunk: the metrics file is empty");
	if (!rc) {
		json_error_t je;
		json_t *j = json_loads(m->meta, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			rc = snr_chunkf_fail(&m->f, &m->f.chunks[0], "metadata is not JSON: line %d column %d: %s",
					     je.line, je.column, je.text);
		else if (!json_is_object(j))
			rc = snr_chunkf_fail(&m->f, &m->f.chunks[0], "metadata is not a JSON object");
		json_decref(j);
	}
	if (rc) {
		snr_fmt(err, errlen, "%s", m->f.err);
		snr_metrics_close(m);
		return NULL;
	}
	return m;
}

void snr_metrics_close(struct snr_metrics *m)
{
	if (!m)
		return;
	snr_chunkf_close(&m->f);
	snr_symtab_free(&m->syms);
	free(m->meta);
	free(m->summary);
	free(m);
}

const char *snr_metrics_meta_json(const struct snr_metrics *m) { return m->meta; }
const char *snr_metrics_summary_json(const struct snr_metrics *m) { return m->summary; }

const char *snr_metrics_symbolize(const struct snr_metrics *m, uint64_t addr, char *buf, size_t len)
{
	return snr_symtab_symbolize(&m->syms, addr, buf, len);
}

/* The register events an INSN record carries (version 5): a count, then
 * for each a varint reg << 1 | write, all of instruction INDEX. */
static void insn_regs(struct snr_cursor *cu, uint64_t index, const struct snr_tracker *t)
{
	uint64_t n = snr_cur_varint(cu);
	struct snr_ev_reg e = {.index = index};
	for (uint64_t k = 0; k < n && !cu->bad; k++) {
		uint64_t v = snr_cur_varint(cu);
		e.reg = (uint16_t)(v >> 1);
		e.write = (uint8_t)(v & 1);
		if (!cu->bad && t->on_reg)
			t->on_reg(t->user, &e);
	}
}

int snr_metrics_replay(struct snr_metrics *m, const struct snr_tracker *t, char *err, size_t errlen)
{
	uint64_t records = 0; /* read so far, from every EVENTS chunk */
	const struct snr_chunk *last = NULL; /* the last EVENTS chunk */
	bool last_empty = false;
	for (size_t i = 0; i < m->f.nchunks; i++) {
		const struct snr_chunk *c = &m->f.chunks[i];
		if (c->type != CH_EVENTS)
			continue;
		last = c;
		const uint64_t records_before = records;
		long n = snr_chunkf_payload(&m->f, c);
		if (n < 0) {
			snr_fmt(err, errlen, "%s", m->f.err);
			return -1;
		}
		struct snr_cursor cu = {m->f.raw, m->f.raw + n, 0};
		const bool delta = m->f.version >= 3, insn = m->f.version >= 5;
		struct ctx x = {0};
		if (m->f.version >= 4) {
			/* Each chunk says how many records came before it: chunks
			 * exchanged, dropped or repeated (each with valid checksums
			 * and renumbered) are caught here, not analyzed out of order. */
			uint64_t first = snr_cur_varint(&cu);
			if (!cu.bad && first != records) {
				snr_chunkf_fail(&m->f, c,
						"EVENTS out of order: this chunk follows %llu records, the chunks before it "
						"hold %llu (chunks exchanged, missing or repeated)",
						(unsigned long long)first, (unsigned long long)records);
				snr_fmt(err, errlen, "%s", m->f.err);
				return -1;
			}
		}
#define V() snr_cur_varint(&cu)
#define Z() snr_unzigzag(snr_cur_varint(&cu))
/* a field stored as a delta from base since version 3, as itself before */
#define D(base) (delta ? (uint64_t)(base) + (uint64_t)Z() : V())
		while (cu.p < cu.end && !cu.bad) {
			uint8_t kind = snr_cur_u8(&cu);
			records++;
			switch (kind) {
			case EV_ISSUE:
			case EV_RETIRE:
			case EV_INSN: {
				if (kind == EV_INSN && !insn) {
					cu.bad = 1; /* version 5's record */
					break;
				}
				struct snr_ev_insn e;
				e.index = D(x.index);
				e.pc = D(x.pc);
				e.issue = D(x.cycle);
				e.retire = D(e.issue);
				e.unit = (uint8_t)V();
				e.cls = (uint8_t)V();
				x.index = e.index;
				x.pc = e.pc;
				x.cycle = e.issue;
				/* Every instruction before this one issued in a record of its own,
				 * so its index cannot run far past the records read: a forged
				 * index would have readers that file by index fill the gap
				 * (2^40 entries). The slack allows an engine that skips some. */
				if (e.index >= records + METRICS_INDEX_SLACK)
					cu.bad = 1;
				if (cu.bad)
					break;
				if (kind != EV_RETIRE && t->on_issue)
					t->on_issue(t->user, &e);
				if (kind != EV_ISSUE && t->on_retire)
					t->on_retire(t->user, &e);
				if (kind == EV_INSN) /* version 5: the instruction's register events */
					insn_regs(&cu, e.index, t);
				break;
			}
			case EV_STALL: {
				struct snr_ev_stall e;
				e.index = D(x.index);
				e.cycles = V();
				e.start = D(x.cycle);
				e.cause = (uint8_t)V();
				e.responsible = delta ? (int64_t)(e.index - (uint64_t)Z()) : Z();
				e.dma_id = V();
				x.index = e.index;
				if (e.cause >= SNR_STALL_COUNT)
					cu.bad = 1;
				if (!cu.bad && t->on_stall)
					t->on_stall(t->user, &e);
				break;
			}
			case EV_DMA: {
				struct snr_ev_dma e = {0}; /* the Figure-4 fields are not stored (docs/metrics-format.md) */
				e.id = V();
				e.phase = (uint8_t)V();
				e.issue_index = Z();
				e.wait_index = Z();
				e.cycle = V();
				e.bytes = V();
				e.src_space = (uint16_t)V();
				e.dst_space = (uint16_t)V();
				e.src_chip = (uint16_t)V();
				e.dst_chip = (uint16_t)V();
				e.src_addr = V();
				e.dst_addr = V();
				e.flag = (uint16_t)V();
				e.base_cycles = V();
				e.transfer_cycles = V();
				e.stall_base_cycles = e.stall_transfer_cycles = e.slack_cycles = 0;
				if (m->f.version >= 2) {
					e.stall_base_cycles = V();
					e.stall_transfer_cycles = V();
					e.slack_cycles = V();
				}
				if (e.phase > SNR_DMA_WAITED)
					cu.bad = 1;
				if (!cu.bad && t->on_dma)
					t->on_dma(t->user, &e);
				break;
			}
			case EV_MEM: {
				struct snr_ev_mem e;
				e.index = D(x.index);
				e.cycle = D(x.cycle);
				e.write = (uint8_t)V();
				e.space = (uint8_t)V();
				e.chip = (uint16_t)V();
				e.addr = D(x.addr);
				e.bytes = V();
				x.index = e.index;
				x.addr = e.addr;
				if (!cu.bad && t->on_mem)
					t->on_mem(t->user, &e);
				break;
			}
			case EV_REG: {
				struct snr_ev_reg e;
				e.index = D(x.index);
				e.reg = (uint16_t)V();
				e.write = (uint8_t)V();
				x.index = e.index;
				if (!cu.bad && t->on_reg)
					t->on_reg(t->user, &e);
				break;
			}
			case EV_BUSY: {
				struct snr_ev_busy e;
				e.unit = (uint8_t)V();
				e.start = D(x.cycle);
				e.end = D(e.start);
				e.index = D(x.index);
				if (e.unit >= SNR_UNIT_COUNT || e.end < e.start)
					cu.bad = 1;
				if (!cu.bad && t->on_busy)
					t->on_busy(t->user, &e);
				break;
			}
			default:
				cu.bad = 1;
			}
		}
#undef V
#undef Z
#undef D
		if (cu.bad) {
			snr_chunkf_fail(&m->f, c, "event record at payload offset %td is malformed", cu.p - m->f.raw);
			snr_fmt(err, errlen, "%s", m->f.err);
			return -1;
		}
		last_empty = records == records_before;
	}
	if (m->f.version >= 4 && m->summary && !last_empty) {
		/* a finished file's events end with the count alone (EVENTS of no records) */
		snr_chunkf_fail(&m->f, last ? last : &m->f.chunks[m->f.nchunks - 1],
				"the events' end (an EVENTS chunk of no records, counting all %s) is missing: "
				"EVENTS chunks were left out",
				last ? "of them" : "records");
		snr_fmt(err, errlen, "%s", m->f.err);
		return -1;
	}
	return 0;
}
