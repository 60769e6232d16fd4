/*
 * schedule.h: the rounds of `snr analyze suggest --rounds` and their final
 * schedule as a source-level plan (schedule.c): each round's DMA moves
 * (Algorithm 2, confirmed by the what-if) and WAIT moves (wait_move.c), the
 * window's what-if cycles after each, and the ordered list of every move
 * applied, in file:line terms.
 */
#ifndef SNR_ANALYZER_SCHEDULE_H
#define SNR_ANALYZER_SCHEDULE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/source.h"
#include "analyzer/wait_move.h"

struct round_move {
	uint64_t dma_pc, before_pc, instances, estimate;
	int64_t realized;
};
struct round {
	uint64_t cycles_before, cycles; /* the window's cycles before and after its moves */
	uint64_t cycles_dma;            /* after its DMA moves, before its WAIT moves */
	struct round_move *moves;       /* the DMA moves */
	size_t nmoves;
	struct an_wm_round wm;          /* the WAIT moves (wm.g[k].applied: taken) */
	bool has_wm;
};

/* A place as JSON: {"pc":...,"symbol":...,"source":{...}}. */
void an_sched_place_json(FILE *f, const struct snr_source *src, uint64_t pc);
/* The rounds and the final schedule, as text and as the "rounds" and
 * "schedule" members of suggest's JSON (",\"rounds\":[...],\"schedule\":{...}"). */
void an_sched_print_text(FILE *f, const struct snr_source *src, const struct round *r, size_t nr);
void an_sched_print_json(FILE *f, const struct snr_source *src, const struct round *r, size_t nr);
void an_sched_free(struct round *r, size_t nr);

#endif
