/*
 * grm_ta1.h: what the TA1 GRM (sim/grm_ta1.c, snr_sim_ta1) offers beyond the
 * simulator ABI, for in-tree callers.
 */
#ifndef SNR_GRM_TA1_H
#define SNR_GRM_TA1_H

#include <stdbool.h>

struct snr_sim;

/* Runs the semantics and the poison checks without the timing model (no
 * cycles, no timing events): bench/bench_replay's functional-only rate. */
void ta1_grm_set_functional_only(struct snr_sim *s, bool on);

#endif
