/*
 * roundtrip.h: scalar round trips and units left idle behind a WAIT, for
 * `snr analyze suggest` (roundtrip.c).
 *
 * A scalar round trip: a DMA into core memory, its WAIT, and scalar code
 * that reads the DMA's bytes, repeated once per iteration: each iteration
 * pays the DMA's latency at the WAIT. The usual rewrite issues the next
 * iteration's DMA (with what it needs) right after this iteration's WAIT,
 * before the scalar work, into a second buffer; the what-if replays exactly
 * that move.
 *
 * A unit idle behind a WAIT: the core blocks at a WAIT while the next
 * vector or MXU operation after it does not need the data the WAIT is for;
 * issuing it (with what it needs) before the WAIT keeps that unit busy
 * through the stall; the what-if replays that move.
 *
 * Cost: the stall cycles the replay measured at those WAITs; the saving:
 * the what-if (with --verify), else the stall labelled an estimate.
 */
#ifndef SNR_ANALYZER_ROUNDTRIP_H
#define SNR_ANALYZER_ROUNDTRIP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/deps.h"
#include "analyzer/whatif.h"

enum an_rt_kind { AN_RT_ROUND_TRIP, AN_RT_IDLE_UNIT };

struct an_rt_item {
	enum an_rt_kind kind;
	/* round trip: the DMA, its WAIT, the first scalar read of its bytes;
	 * idle unit: the DMA the WAIT is for, the WAIT, the operation that
	 * could run before it (op_cls: TA1_CLASS_VECTOR or _MATRIX) */
	uint64_t dma_pc, wait_pc, use_pc;
	unsigned op_cls;
	size_t instances;      /* executions of the pattern in the window */
	uint64_t stall_cycles; /* the replay's stalls at those WAITs (of every DMA each waits for) */
	size_t moved_insns;    /* what the modelled rewrite moves, all instances */
	size_t moves;	       /* instances the rewrite moves (a round trip's first one stays) */
	bool own_buffer;       /* the moved DMA needs a buffer of its own (it overwrites data still read) */
	bool modelled;	       /* the rewrite is a move the what-if replays */
	char why_not[256];     /* not modelled: why */
	bool verified;	       /* the what-if ran */
	uint64_t cycles_before, cycles_after;
	int64_t saved;	     /* the what-if: cycles_before - cycles_after */
	char conflict[1024]; /* the what-if's move would compute something else: how ("": it would not) */
	struct slotted *mv;  /* the move (an_wi_cmp_slotted order) */
	size_t nmv;
};

struct an_rt {
	struct an_rt_item *it;
	size_t n, cap;
};

/* Finds both patterns in d's window (its graph with edges). */
void an_rt_find(const struct snr_deps *d, struct an_rt *rt);
/* Replays each modelled rewrite on the window's stream c (what-if), and
 * checks that it computes what the original did. */
void an_rt_verify(struct an_rt *rt, struct capture *c, const struct snr_deps *d);
/* As text, and as the ",\"round_trips\":[...],\"idle_units\":[...]" members of suggest's JSON. */
void an_rt_print_text(FILE *f, const struct snr_deps *d, const struct an_rt *rt);
void an_rt_print_json(FILE *f, const struct snr_deps *d, const struct an_rt *rt);
void an_rt_free(struct an_rt *rt);
/* Text, or the JSON members and the closing brace of suggest's object;
 * then frees rt. */
void an_rt_report(FILE *f, const struct snr_deps *d, struct an_rt *rt, bool json);

#endif
