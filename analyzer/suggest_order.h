/*
 * suggest_order.h: the what-if order of a set of Algorithm 2's moves
 * (suggest_order.c): the instructions they take earlier, each at its
 * earliest point, and the buffers and flags they rename; and the what-if
 * run of that order. `snr analyze suggest` verifies its groups of moves,
 * alone and together, with them (suggest.c).
 */
#ifndef SNR_ANALYZER_SUGGEST_ORDER_H
#define SNR_ANALYZER_SUGGEST_ORDER_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/suggest_alg2.h"
#include "analyzer/whatif.h"

/* The what-if order of the n moves (allocated; an_sg_order_free). */
void an_sg_order_of(const struct capture *c, const struct suggestion *const *moves, size_t n, struct an_wi_order *o);
void an_sg_order_free(struct an_wi_order *o);
/* The window's cycles with the n moves applied (totals, conflict: NULL or
 * filled). */
uint64_t an_sg_what_if_moves(struct capture *c, const struct suggestion *const *moves, size_t n,
			     const struct snr_tracker *tracker, struct ta1_timing_totals *totals,
			     struct an_conflict *conflict);

#endif
