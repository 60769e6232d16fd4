/*
 * suggest_alg2.h: the paper's Algorithm 2 on one stalled DMA of a window's
 * dependency graph (suggest_alg2.c): where it could move and whether VMEM
 * holds its data there. `snr analyze suggest` runs it on every stalled DMA
 * of a window (suggest.c), `snr analyze suggest POD` on the DMAs a pod's
 * waits stalled on, on whichever chip issued them (pod_suggest.c).
 */
#ifndef SNR_ANALYZER_SUGGEST_ALG2_H
#define SNR_ANALYZER_SUGGEST_ALG2_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/deps.h"

struct suggestion {
	const struct snr_deps_dma *m;
	uint64_t at;        /* the move: the DMA issues just before this instruction index */
	size_t slice0;      /* m->slice[slice0..] is what moves with it (the slice at or after `at`) */
	bool suggested;
	const char *reason; /* why not */
	uint64_t free_lo, free_hi; /* VMEM [lo, hi), addresses */
	uint64_t free_until;       /* ... free until this cycle: the moved data's last read + 1 */
	bool vmem_checked, own_region;
	bool lifted;        /* the point came out of a callee (to its call) or a caller (to the entry) */
	bool rename;        /* its destination is in use: the what-if writes free_lo.. (its readers with it) */
	bool other_flag;    /* it moves above a WAIT on its own flag: it needs a flag of its own */
	bool rename_flag;   /* ... and this instance uses it (by parity; the plan's free flag) */
	uint64_t predicted;
	int flag_to;        /* with rename_flag: the flag it and its WAIT use */
	size_t group;       /* its static move: index into the plan's groups */
};

/* Algorithm 2 on DMA m (its stall: m->stall_cycles): s filled, suggested or
 * with the reason it is not. */
void an_sg_evaluate(const struct snr_deps *d, const struct snr_deps_dma *m, struct suggestion *s);

#endif
