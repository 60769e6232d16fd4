/*
 * suggest_alg2.c: see suggest_alg2.h. For each DMA whose WAIT stalled on it
 * (DMA_BASE + DMA_TRANSFER stall cycles S attributed to it): if its backtail
 * B (cycles between the farthest point it could move to and its issue)
 * exceeds S, it moves to the latest point that hides S; if VMEM holds a
 * contiguous region at least as large as its destination that holds no
 * other value from that point until the last read of what it wrote, the
 * move is suggested, predicting S cycles saved.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/suggest_alg2.h"
#include "analyzer/suggest_words.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_util.h"

/* Page p holds no value over [c0, c1) but those `own` wrote (the DMA's own,
 * which the move only brings in earlier). A page's values are in cycle
 * order (by lo) with the running maximum of their ends, so a search finds
 * the first value that may still be held at c0 and the scan stops at the
 * first written at or after c1: the cost is the values live in [c0, c1),
 * not the window's. */
static bool page_free(const struct snr_deps *d, uint64_t p, uint64_t c0, uint64_t c1, uint64_t own)
{
	size_t end = d->pages->start[p + 1];
	for (size_t k = snr_deps_pages_first_live(d->pages, p, c0); k < end; k++) {
		const struct snr_deps_occ *v = snr_deps_pages_at(d->pages, k);
		if (v->lo >= c1)
			break;
		if (v->writer != own && v->hi > c0)
			return false;
	}
	return true;
}

/* A contiguous VMEM region of `bytes` free over [c0, c1): the DMA's own
 * destination if it is, else the first fit. */
static bool free_region(const struct snr_deps *d, const struct snr_deps_dma *m, uint64_t c0,
			uint64_t c1, uint64_t *lo, uint64_t *hi, bool *own)
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

/* The end of the moved data's lifetime: the last read (+ 1) of any value
 * DMA m wrote in VMEM, or its completion when nothing reads it. A region it
 * is given must hold nothing else until then, not only until the transfer
 * completes. Each page's values are in cycle order: a binary search finds
 * the first written at or after its issue, and the scan stops past its
 * completion (it writes nothing later). */
static uint64_t data_last_read(const struct snr_deps *d, const struct snr_deps_dma *m)
{
	uint64_t end = m->complete_cycle, pb = d->page_bytes, me = (uint64_t)m->issue_index;
	if (m->dst_space != TA1_SPACE_VMEM || m->dst_addr < TA1_VMEM_BASE || !d->pages)
		return end;
	uint64_t p0 = (m->dst_addr - TA1_VMEM_BASE) / pb;
	uint64_t p1 = (m->dst_addr - TA1_VMEM_BASE + (m->bytes ? m->bytes : 1) - 1) / pb;
	for (uint64_t p = p0; p <= p1 && p < d->npages; p++) {
		size_t stop = d->pages->start[p + 1];
		for (size_t k = snr_deps_pages_first_from(d->pages, p, m->issue_cycle); k < stop; k++) {
			const struct snr_deps_occ *v = snr_deps_pages_at(d->pages, k);
			if (v->lo > m->complete_cycle)
				break;
			if (v->writer == me && v->hi > end)
				end = v->hi;
		}
	}
	return end;
}

/* The cycle the core reaches instruction p: issued just before p, a DMA
 * issues then (before any stall of p itself). */
static uint64_t reach_cycle(const struct snr_deps *d, uint64_t p)
{
	return p && p <= d->ninsn ? snr_deps_insn_get(d, p - 1).issue + 1 : 0;
}

/* TA1 instructions are 4 bytes: a call returns to the one after it. */
#define INSN_BYTES 4

/* Lifts the point s->at to one a programmer can edit: an instruction of the
 * DMA's own function, in the same activation. Walking back from the DMA,
 * a stretch of other functions' code that ends by returning just after the
 * instruction before it is a call: a point inside the callee becomes the
 * call itself (the DMA issues before the call), or, when the call is above
 * the position (the callee produces something the DMA needs), the
 * instruction the call returns to. A stretch that does not end that way is
 * the caller's code: the activation began after it, and a point there
 * becomes the first instruction the function ran. The walk goes no further
 * back than s->at (and the scan of a stretch no further than the position).
 * Returns false when no point in the function lies before the DMA. */
static bool editable_point(const struct snr_deps *d, const struct snr_deps_dma *m, struct suggestion *s)
{
	uint64_t i = (uint64_t)m->issue_index, j = i;
	char fn[256], other[256];
	an_sg_function_of(&d->an.src, snr_deps_insn_get(d, i).pc, fn, sizeof(fn));
	if (!strncmp(fn, "0x", 2))
		return s->at < i; /* no symbols: nothing to tell functions apart by */
	while (j > s->at) {
		if (!strcmp(an_sg_function_of(&d->an.src, snr_deps_insn_get(d, j - 1).pc, other, sizeof(other)), fn)) {
			j--;
			continue;
		}
		/* [e, j) is outside fn; e - 1, if found, is the instruction before it */
		uint64_t e = j - 1;
		while (e > m->position && strcmp(an_sg_function_of(&d->an.src, snr_deps_insn_get(d, e - 1).pc, other, sizeof(other)), fn))
			e--;
		bool found = e > m->position || (e > 0 && !strcmp(an_sg_function_of(&d->an.src, snr_deps_insn_get(d, e - 1).pc, other, sizeof(other)), fn));
		if (!found || snr_deps_insn_get(d, e - 1).pc + INSN_BYTES != snr_deps_insn_get(d, j).pc) {
			/* the caller's code, or a call above the position: no
			 * earlier point of this activation can hold the DMA */
			s->at = j;
			s->lifted = true;
			break;
		}
		uint64_t call = e - 1;
		if (s->at > call) { /* the point lies inside the callee */
			s->at = call >= m->position ? call : j;
			s->lifted = true;
			break;
		}
		j = call;
	}
	return s->at < i;
}

void an_sg_evaluate(const struct snr_deps *d, const struct snr_deps_dma *m, struct suggestion *s)
{
	memset(s, 0, sizeof(*s));
	s->m = m;
	uint64_t position = m->position;
	if (m->backtail_cycles <= m->stall_cycles && m->anchor_kind == SNR_ANCHOR_FLAG &&
	    m->backtail_other_flag_cycles > m->stall_cycles && m->wait_index >= 0) {
		/* held back only by a WAIT on its own flag: with a flag of its
		 * own it can move above that WAIT */
		position = m->position_other_flag;
		s->other_flag = true;
	} else if (m->backtail_cycles <= m->stall_cycles) {
		s->reason = m->anchor_kind == SNR_ANCHOR_DMA || m->anchor_kind == SNR_ANCHOR_NO_WAIT
				    ? "its inputs come from a DMA just before: backtail does not exceed the stall"
				    : "backtail does not exceed the stall";
		return;
	}
	/* The move: the latest point at or after the position where the DMA
	 * would issue at least its stall earlier; no further than needed, so it
	 * holds its buffer, and hoists instructions, no longer than needed. */
	uint64_t i = (uint64_t)m->issue_index, issue = snr_deps_insn_get(d, i).issue;
	s->at = i;
	while (s->at > position && issue - reach_cycle(d, s->at) < m->stall_cycles)
		s->at--;
	if (s->at == i) {
		s->reason = "its own issue waits at least its stall: no earlier point hides more";
		return;
	}
	if (!editable_point(d, m, s)) {
		s->reason = "no point of its own function lies before it (the earlier points are in its caller)";
		return;
	}
	while (s->slice0 < m->nslice && m->slice[s->slice0] < s->at)
		s->slice0++;
	if (m->dst_space == TA1_SPACE_VMEM) {
		s->vmem_checked = true;
		uint64_t c0 = reach_cycle(d, s->at);
		s->free_until = data_last_read(d, m);
		if (!free_region(d, m, c0, s->free_until, &s->free_lo, &s->free_hi, &s->own_region)) {
			s->reason = "no contiguous VMEM region of its size is free from the earlier point to the moved "
				    "data's last read";
			return;
		}
	}
	s->suggested = true;
	s->predicted = m->stall_cycles;
}
