/*
 * metrics_write.h: the metrics writer's state and its event encoders, inline
 * (docs/metrics-format.md, "EVENTS"). metrics.c's tracker callbacks are these;
 * the replayer's collector (replay.c) calls them too, from its own callbacks,
 * so that an event of `snr replay -o` costs one call, not a call into the
 * collector and another into the writer. Only the rare cases (a full chunk,
 * a buffer to grow, a field of more than one byte in the records packed in
 * one store) leave the inline code.
 */
#ifndef SNR_METRICS_WRITE_H
#define SNR_METRICS_WRITE_H

#include <stdint.h>
#include <string.h>

#include "lib/snr_chunkfile.h"
#include "replayer/metrics.h"

enum {
	SNR_MW_ISSUE = 1, SNR_MW_RETIRE, SNR_MW_STALL, SNR_MW_DMA, SNR_MW_MEM, SNR_MW_REG, SNR_MW_BUSY, SNR_MW_INSN,
	SNR_MW_PEER, SNR_MW_FABRIC, /* version 6 */
};
#define SNR_MW_INSN_REGS_MAX 127 /* register events one INSN record carries (its count stays one byte) */
#define SNR_MW_EVENTS_PER_CHUNK 65536

/* The room every record starts with, so that its fields go through a plain
 * pointer with no check each: the longest record (a DMA's kind byte and 18
 * varints of at most 10 bytes), or an INSN of at most 46 bytes with its
 * count byte and SNR_MW_INSN_REGS_MAX register varints of at most 3 bytes
 * (427), and the bytes past a record that the packed stores write (at
 * most 8: snr_mw_insn_regs's word of register bytes after an INSN with none). */
#define SNR_MW_ROOM 512

/* The running context of delta-encoded fields (version 3), zero at the
 * start of every EVENTS chunk: the last instruction index and pc seen, the
 * last issue cycle, the last memory address. */
struct snr_mw_ctx {
	uint64_t index, pc, cycle, addr;
};

struct snr_metrics_writer {
	struct snr_chunk_writer cw;
	/* The EVENTS payload being filled, from ev.p (ev.len is only kept at a
	 * flush): it starts with the number of records before it (version 4),
	 * written when the chunk is started. */
	struct snr_buf ev;
	uint8_t *wp;   /* the next byte */
	uint8_t *lim;  /* ev.p + ev.cap - SNR_MW_ROOM: a record begun at or below it fits */
	uint32_t left; /* records this chunk still takes: SNR_MW_EVENTS_PER_CHUNK - 1 in all */
	uint64_t before; /* records in the EVENTS chunks written before this one */
	struct snr_mw_ctx x;
	/* Version 5 merges an instruction's ISSUE, RETIRE and REG events into
	 * one INSN record. An ISSUE is kept here (pending) rather than written:
	 * the RETIRE of the same instruction right after it writes the INSN
	 * record, anything else writes the ISSUE record first (snr_mw_room), so
	 * the records are those of an ISSUE written at once and turned into an
	 * INSN. An INSN takes the REG events of its instruction while nothing
	 * was written after it: wp == insn_end (records only move wp forward;
	 * a flush or a grown buffer clears it); open_at is its register count. */
	uint64_t pend_index, pend_retire, pend_pc, pend_issue;
	uint8_t pend_unit, pend_cls;
	int pending;
	uint8_t *insn_end, *open_at;
	struct snr_tracker tracker;
};

/* The slow paths (metrics.c): the pending ISSUE written, a full chunk
 * flushed, or the buffer grown; a register event that is not a one-byte
 * addition to the open INSN. */
void snr_mw_room(struct snr_metrics_writer *w);
void snr_mw_reg_slow(struct snr_metrics_writer *w, const struct snr_ev_reg *e);
void snr_mw_issue_slow(struct snr_metrics_writer *w, const struct snr_ev_insn *e);
void snr_mw_retire_slow(struct snr_metrics_writer *w, const struct snr_ev_insn *e);
/* An ISSUE or RETIRE record with a field of more than one byte. */
uint8_t *snr_mw_insn_long(uint8_t *p, uint8_t kind, uint64_t di, uint64_t dp, uint64_t dc, uint64_t dr, uint8_t unit,
			  uint8_t cls);

/* An ISSUE's or RETIRE's fields are read into registers each by a load of
 * its own size: the simulator has just stored them one by one, and a load
 * that spans two stores (the 16-byte loads the compiler makes of a copy of
 * two fields) is not forwarded from them but waits for them to reach the
 * cache. The empty asm hides the values from the vectorizer. (The ISSUE's
 * copy had 7% of `snr replay -o`'s cpu-clock samples; in 30 alternating runs
 * the replay took 4% less CPU time this way, for 1.6% more instructions.) */
#define SNR_MW_SCALAR(x) __asm__("" : "+r"(x))

/* Starts a record: returns where its kind byte goes. */
static inline uint8_t *snr_mw_begin(struct snr_metrics_writer *w)
{
	if (__builtin_expect(!w->left || w->wp > w->lim || w->pending, 0))
		snr_mw_room(w);
	w->left--;
	return w->wp;
}

static inline uint8_t *snr_mw_put(uint8_t *p, uint64_t v)
{
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	return p;
}

/* The common record whose fields each fit one byte (deltas of -64..63,
 * small unit and class numbers) is stored with one 8-byte store instead of a
 * loop per field: the same bytes. SNR_MW_ROOM covers the byte the store
 * writes past the record, which the next record overwrites. */
#if defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
#define SNR_MW_PACKED 1
#else
#define SNR_MW_PACKED 0
#endif

/* An ISSUE or RETIRE record at p (its kind byte); returns its end. The
 * event's fields are read before any byte is stored (a byte store may alias
 * anything: the fields would be read again). */
static inline __attribute__((always_inline)) uint8_t *snr_mw_insn(struct snr_metrics_writer *w, uint8_t *p,
								   uint8_t kind, const struct snr_ev_insn *e)
{
	const uint64_t index = e->index, pc = e->pc, issue = e->issue, retire = e->retire;
	const uint8_t unit = e->unit, cls = e->cls;
	const uint64_t di = snr_zigzag((int64_t)(index - w->x.index)), dp = snr_zigzag((int64_t)(pc - w->x.pc)),
		       dc = snr_zigzag((int64_t)(issue - w->x.cycle)), dr = snr_zigzag((int64_t)(retire - issue));
	w->x.index = index;
	w->x.pc = pc;
	w->x.cycle = issue;
	if (SNR_MW_PACKED && (di | dp | dc | dr | unit | cls) < 0x80) {
		uint64_t v = (uint64_t)kind | di << 8 | dp << 16 | dc << 24 | dr << 32 | (uint64_t)unit << 40 |
			     (uint64_t)cls << 48;
		memcpy(p, &v, 8);
		return p + 7;
	}
	return snr_mw_insn_long(p, kind, di, dp, dc, dr, unit, cls);
}

static inline void snr_mw_issue(struct snr_metrics_writer *w, const struct snr_ev_insn *e)
{
	if (__builtin_expect(w->pending, 0)) { /* the ISSUE before it, on its own */
		snr_mw_issue_slow(w, e);
		return;
	}
	uint64_t index = e->index, pc = e->pc, issue = e->issue, retire = e->retire;
	unsigned unit = e->unit, cls = e->cls;
	SNR_MW_SCALAR(index);
	SNR_MW_SCALAR(pc);
	SNR_MW_SCALAR(issue);
	SNR_MW_SCALAR(retire);
	SNR_MW_SCALAR(unit);
	SNR_MW_SCALAR(cls);
	w->pend_index = index;
	w->pend_pc = pc;
	w->pend_issue = issue;
	w->pend_retire = retire;
	w->pend_unit = (uint8_t)unit;
	w->pend_cls = (uint8_t)cls;
	w->pending = 1;
	w->insn_end = NULL; /* the ISSUE comes after the INSN before it */
}

static inline void snr_mw_retire(struct snr_metrics_writer *w, const struct snr_ev_insn *e)
{
	/* The RETIRE right after the ISSUE of the same instruction (every one
	 * the TA1 timing model reports): one INSN record stands for both, with
	 * no registers yet. Here only its common case, with no call (the
	 * callback needs no frame): a record of one-byte fields, in room the
	 * chunk has; the rest is snr_mw_retire_slow's. */
	uint64_t index = e->index, pc = e->pc, issue = e->issue, retire = e->retire;
	SNR_MW_SCALAR(index);
	SNR_MW_SCALAR(pc);
	SNR_MW_SCALAR(issue);
	SNR_MW_SCALAR(retire);
	const uint8_t unit = e->unit, cls = e->cls;
	if (__builtin_expect(w->pending && index == w->pend_index && pc == w->pend_pc && issue == w->pend_issue &&
				     retire == w->pend_retire && unit == w->pend_unit && cls == w->pend_cls && w->left &&
				     w->wp <= w->lim,
			     1)) {
		const uint64_t di = snr_zigzag((int64_t)(index - w->x.index)), dp = snr_zigzag((int64_t)(pc - w->x.pc)),
			       dc = snr_zigzag((int64_t)(issue - w->x.cycle)), dr = snr_zigzag((int64_t)(retire - issue));
		if (SNR_MW_PACKED && (di | dp | dc | dr | unit | cls) < 0x80) {
			/* the kind byte, six fields and the register count (0): one store */
			uint64_t v = (uint64_t)SNR_MW_INSN | di << 8 | dp << 16 | dc << 24 | dr << 32 |
				     (uint64_t)unit << 40 | (uint64_t)cls << 48;
			uint8_t *p = w->wp;
			memcpy(p, &v, 8);
			w->pending = 0;
			w->left--;
			w->x.index = index;
			w->x.pc = pc;
			w->x.cycle = issue;
			w->open_at = p + 7;
			w->wp = w->insn_end = p + 8;
			return;
		}
	}
	snr_mw_retire_slow(w, e);
}

static inline void snr_mw_reg(struct snr_metrics_writer *w, const struct snr_ev_reg *e)
{
	uint8_t *p = w->wp, *count = w->open_at;
	const unsigned write = e->write, v = (unsigned)e->reg << 1 | write;
	if (__builtin_expect(p == w->insn_end && e->index == w->x.index && write <= 1 && v < 0x80 &&
				     *count < SNR_MW_INSN_REGS_MAX,
			     1)) {
		/* a register of the INSN just written: one byte (reg << 1 | write) */
		*count = (uint8_t)(*count + 1);
		*p++ = (uint8_t)v;
		w->wp = w->insn_end = p;
		return;
	}
	snr_mw_reg_slow(w, e);
}

/* on_insn: an instruction's ISSUE, RETIRE and register events in one call
 * (snr_tracker.h). Its common case (no ISSUE pending, room in the chunk,
 * one-byte fields, at most 8 registers, each below 64) is the INSN record
 * that those calls write through the fast paths above, stored at once: the
 * kind byte, six fields and the register count in one store, the registers'
 * bytes in another.
 * Anything else goes through those calls one by one: the same bytes. */
static inline void snr_mw_insn_regs(struct snr_metrics_writer *w, const struct snr_ev_insn *e, const uint16_t *regs,
				    unsigned nread, unsigned nwrite)
{
	const uint64_t index = e->index, pc = e->pc, issue = e->issue, retire = e->retire;
	const unsigned unit = e->unit, cls = e->cls, n = nread + nwrite;
	const uint64_t di = snr_zigzag((int64_t)(index - w->x.index)), dp = snr_zigzag((int64_t)(pc - w->x.pc)),
		       dc = snr_zigzag((int64_t)(issue - w->x.cycle)), dr = snr_zigzag((int64_t)(retire - issue));
	/* up to 8 registers' bytes (reg << 1 | write) in one word, stored at
	 * once: a byte store could alias anything the loop reads */
	unsigned high = 0;
	uint64_t rb = 0;
	if (n <= 8)
		for (unsigned k = 0; k < n; k++) {
			high |= regs[k];
			rb |= (uint64_t)(regs[k] << 1 | (k >= nread)) << (8 * k);
		}
	else
		high = 64; /* the calls one by one */
	if (__builtin_expect(SNR_MW_PACKED && !w->pending && w->left && w->wp <= w->lim && high < 64 &&
				     (di | dp | dc | dr | unit | cls) < 0x80,
			     1)) {
		uint64_t v = (uint64_t)SNR_MW_INSN | di << 8 | dp << 16 | dc << 24 | dr << 32 | (uint64_t)unit << 40 |
			     (uint64_t)cls << 48 | (uint64_t)n << 56;
		uint8_t *p = w->wp;
		memcpy(p, &v, 8);
		memcpy(p + 8, &rb, 8); /* SNR_MW_ROOM covers the bytes past the record */
		w->left--;
		w->x.index = index;
		w->x.pc = pc;
		w->x.cycle = issue;
		w->open_at = p + 7;
		w->wp = w->insn_end = p + 8 + n;
		return;
	}
	snr_mw_issue(w, e);
	snr_mw_retire(w, e);
	struct snr_ev_reg r = {.index = index};
	for (unsigned k = 0; k < n; k++) {
		r.reg = regs[k];
		r.write = k >= nread;
		snr_mw_reg(w, &r);
	}
}

#define V(x) (p = snr_mw_put(p, (uint64_t)(x)))
#define Z(x) (p = snr_mw_put(p, snr_zigzag((int64_t)(x))))
/* a delta from the context, modulo 2^64 */
#define D(x, base) Z((uint64_t)(x) - (uint64_t)(base))

static inline void snr_mw_stall(struct snr_metrics_writer *w, const struct snr_ev_stall *e)
{
	uint8_t *p = snr_mw_begin(w);
	*p++ = SNR_MW_STALL;
	D(e->index, w->x.index);
	V(e->cycles);
	D(e->start, w->x.cycle);
	V(e->cause);
	D(e->index, e->responsible);
	V(e->dma_id);
	w->wp = p;
	w->x.index = e->index;
}

static inline void snr_mw_dma(struct snr_metrics_writer *w, const struct snr_ev_dma *e)
{
	uint8_t *p = snr_mw_begin(w);
	*p++ = SNR_MW_DMA;
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
	w->wp = p;
}

static inline void snr_mw_mem(struct snr_metrics_writer *w, const struct snr_ev_mem *e)
{
	uint8_t *p = snr_mw_begin(w);
	*p++ = SNR_MW_MEM;
	D(e->index, w->x.index);
	D(e->cycle, w->x.cycle);
	V(e->write);
	V(e->space);
	V(e->chip);
	D(e->addr, w->x.addr);
	V(e->bytes);
	w->wp = p;
	w->x.index = e->index;
	w->x.addr = e->addr;
}

static inline void snr_mw_busy(struct snr_metrics_writer *w, const struct snr_ev_busy *e)
{
	uint8_t *p = snr_mw_begin(w);
	*p++ = SNR_MW_BUSY;
	V(e->unit);
	D(e->start, w->x.cycle);
	D(e->end, e->start);
	D(e->index, w->x.index);
	w->wp = p;
}
#undef V
#undef Z
#undef D

#endif
