/*
 * reg_known.h: Algorithm 1's R, the registers the window already knows
 * (captured at their first read, or written), as a bit set, and the
 * per-step work on it: capturing a step's inputs not in R, adding its
 * outputs.
 *
 * Per step this is a few word operations: a step whose inputs are all
 * known (nearly every one, once a loop has run) walks no register. Walking
 * the step's read and written sets register by register, with a test of a
 * bool per register, was about 97 of the 1,310 million instructions of the
 * 1M serving window's recording (callgrind).
 *
 * The set is the recorder's (recorder/record.c, one per window, emptied at
 * its start); --method sim's checkpoints keep a copy and a fallback puts it
 * back (recorder/verify.c, stride_commit and stride_restore).
 */
#ifndef SNR_REG_KNOWN_H
#define SNR_REG_KNOWN_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "isa/snr_isa.h"
#include "lib/snr_trace.h"
#include "recorder/record_int.h"

#define REG_WORDS (SNR_ISA_MAX_REGS / 64)

/* Empties R for a window, and sets r's masks of its registers. */
static inline void reg_known_reset(struct rec *r, uint64_t *known)
{
	memset(known, 0, REG_WORDS * sizeof(*known));
	memset(r->reg_mask, 0, sizeof(r->reg_mask));
	for (size_t k = 0; k < r->niregs && k < SNR_ISA_MAX_REGS; k++)
		r->reg_mask[k / 64] |= 1ull << (k % 64);
	r->reg_words = (unsigned)((r->niregs < SNR_ISA_MAX_REGS ? r->niregs : SNR_ISA_MAX_REGS) + 63) / 64;
	memcpy(r->capture_mask, r->reg_mask, sizeof(r->capture_mask));
	r->capture_mask[r->pc_reg / 64] &= ~(1ull << (r->pc_reg % 64));
}

/* Adds the registers `bits` (word w of a set) to R, capturing those the
 * debugger has. */
static inline unsigned reg_known_capture_word(struct rec *r, uint64_t *known, unsigned w, uint64_t bits,
					      uint8_t *capbuf, struct snr_trace_regval *rv, unsigned n)
{
	known[w] |= bits;
	for (; bits; bits &= bits - 1) {
		size_t k = w * 64 + (unsigned)__builtin_ctzll(bits);
		if (!r->regval[k])
			continue; /* optional register the debugger lacks: nothing to save */
		memcpy(capbuf + k * 256, r->regval[k], r->iregs[k].size);
		rv[n].reg = (uint16_t)k;
		rv[n].val = capbuf + k * 256;
		n++;
	}
	return n;
}

/* The registers of `read` not in R but the pc (which the step's own pc
 * holds), in order: added to R, and those the debugger has copied into
 * capbuf (256 bytes per register) and listed in rv. Returns how many. An
 * ISA of at most 64 registers (TA1's 53) takes one word's test. */
static inline unsigned reg_known_capture(struct rec *r, uint64_t *known, const uint64_t *read,
					 uint8_t *capbuf, struct snr_trace_regval *rv)
{
	if (__builtin_expect(r->reg_words == 1, 1)) {
		uint64_t bits = read[0] & ~known[0] & r->capture_mask[0];
		if (__builtin_expect(!bits, 1))
			return 0;
		return reg_known_capture_word(r, known, 0, bits, capbuf, rv, 0);
	}
	unsigned n = 0;
	for (unsigned w = 0; w < r->reg_words; w++) {
		uint64_t bits = read[w] & ~known[w] & r->capture_mask[w];
		if (bits)
			n = reg_known_capture_word(r, known, w, bits, capbuf, rv, n);
	}
	return n;
}

/* The step's outputs: in R, and stale in regbuf until read again. */
static inline void reg_known_wrote(struct rec *r, uint64_t *known, const uint64_t *written)
{
	bool *stale = r->stale;
	for (unsigned w = 0; w < r->reg_words; w++) {
		uint64_t bits = written[w] & r->reg_mask[w];
		known[w] |= bits;
		for (bool *at = stale + w * 64; bits; bits &= bits - 1)
			at[__builtin_ctzll(bits)] = true;
	}
}

#endif
