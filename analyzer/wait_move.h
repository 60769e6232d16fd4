/*
 * wait_move.h: WAIT moves and merges for `snr analyze suggest --rounds`
 * (wait_move.c). A `ta.wait` is deferred to just before the first
 * instruction that needs what it waits for; WAITs on one flag whose DMAs are
 * not used in between end up together, after the DMAs they wait for are
 * all issued (several DMAs, each followed by its WAIT, become the DMAs back
 * to back, then the WAITs). Each static move is verified by a what-if.
 */
#ifndef SNR_ANALYZER_WAIT_MOVE_H
#define SNR_ANALYZER_WAIT_MOVE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/source.h"
#include "analyzer/whatif.h"

/* One static WAIT move: every execution of the WAIT at wait_pc deferred to
 * just before the next execution of before_pc (in the same call of its
 * function, or the call that leads there when lifted). */
struct an_wm_group {
	uint64_t wait_pc, before_pc;
	unsigned flag;
	size_t instances;
	size_t passes_dmas;  /* DMA issues the moved WAITs let go ahead (merges) */
	bool lifted;         /* the first use is inside a function it calls: it stops at the call */
	bool verified, applied, refused;
	int64_t realized;    /* what-if, this move alone: the window's cycles before - after */
	uint64_t cycles_after;
	char why_here[96];   /* why it stops at before_pc */
	char reason[1024];   /* refused or not taken: why */
};

struct an_wm_round {
	uint64_t cycles_before, cycles_after; /* the window before and after the applied moves (what-if) */
	struct an_wm_group *g;
	size_t ng, napplied;
};

/* Plans the WAIT moves of the stream c, verifies each (what-if: cycles, and
 * that every read of a DMA's data still follows a WAIT that consumed its
 * completion, as in c) and applies those that keep the result and save
 * cycles, or cost none and let DMAs issue earlier: the moved stream in out
 * and *applied set when any is. 0, or -1 with err filled. */
int an_wm_round(struct capture *c, const struct snr_source *src, struct an_wm_round *r, struct capture *out,
		bool *applied, char *err, size_t errlen);
void an_wm_round_free(struct an_wm_round *r);
/* A static WAIT move in words ("defer `ta_wait(...)` at f.c:12 (fn) (pc
 * 0x...) to just before `...` at ... (N instances)"). */
const char *an_wm_label(const struct snr_source *src, const struct an_wm_group *g, char *buf, size_t len);

#endif
