/*
 * record_sim.h: what `snr record --method sim` adds to the recorder
 * (recorder/record_sim.c): reading the halted target's memory through a
 * page cache, the log of the window's pcs since the target's own position,
 * and bringing the target to a window index the simulation reached.
 */
#ifndef SNR_RECORD_SIM_H
#define SNR_RECORD_SIM_H

#include <stddef.h>
#include <stdint.h>

#include "recorder/snr_debugger.h"

struct snr_ahead;

/* The debugger calls made on the target, for the progress line, the summary and the trace's END. */
struct snr_ahead_stats {
	uint64_t requests;      /* debugger calls (each at most one round trip over RSP, more for long reads) */
	uint64_t bytes_fetched; /* memory read from the target */
	uint64_t fetches;       /* of them, memory reads */
	uint64_t target_steps;  /* single steps of the target while verifying */
	uint64_t target_conts;  /* continues to a breakpoint while verifying */
	uint64_t checkpoints;   /* window indices where the target's registers were compared */
};

struct snr_ahead *snr_ahead_new(const struct snr_dbg_ops *dbg, struct snr_dbg *d);
void snr_ahead_free(struct snr_ahead *a);
struct snr_ahead_stats *snr_ahead_stats(struct snr_ahead *a);

/* len bytes at addr as the halted target holds them, through a cache of
 * 4 KiB pages (a range larger than a page is read as it is). Bytes the
 * window wrote are never asked for, so a page read once stays valid. */
int snr_ahead_fetch(struct snr_ahead *a, uint64_t addr, void *buf, size_t len, char *err, size_t errlen);

/* The log of pcs, the first member of struct snr_ahead: public for the
 * inline fast paths below, which run for every simulated instruction (a
 * call each and the tests of the whole path were 34 of the 1,267 million
 * instructions of the 1M serving window's recording, callgrind). */
struct snr_ahead_log {
	uint64_t *pcs; /* pcs[k] is the pc of window index first + k */
	size_t npcs, pcs_cap;
	uint64_t first; /* the target's position */
	bool new_pc; /* the last pc logged was not among those logged since the target last moved */
	bool counts_hits; /* the target reaches any arrival at a breakpoint with one continue */
};

void snr_ahead_log_more(struct snr_ahead *a, uint64_t index, uint64_t pc);
bool snr_ahead_stride_past(const struct snr_ahead *a, uint64_t stride);

/* The pc of window index `index` (the simulation reached it); indices come
 * in order from the target's own position on. Always inline: left to the
 * compiler, snr_record's loop called it. */
static inline __attribute__((always_inline)) void snr_ahead_log_pc(struct snr_ahead *a, uint64_t index,
								    uint64_t pc)
{
	struct snr_ahead_log *l = (struct snr_ahead_log *)a;
	/* the next index, room for it, and no set of seen pcs to keep */
	if (__builtin_expect(l->counts_hits && index == l->first + l->npcs && l->npcs < l->pcs_cap, 1)) {
		l->pcs[l->npcs++] = pc;
		l->new_pc = false;
		return;
	}
	snr_ahead_log_more(a, index, pc);
}
/* Pcs logged and not yet passed by the target. */
uint64_t snr_ahead_pending(const struct snr_ahead *a);
/* Whether the target should catch up now, more than `stride` instructions
 * being pending: at once where it counts breakpoint hits, else at the next
 * pc the log has not seen since the target last moved (a loop's exit), or
 * at 16 strides pending. */
static inline bool snr_ahead_stride_due(const struct snr_ahead *a, uint64_t stride)
{
	return ((const struct snr_ahead_log *)a)->npcs > stride && snr_ahead_stride_past(a, stride);
}
/* The target's own position: the window index whose instruction it runs next. */
uint64_t snr_ahead_target_index(const struct snr_ahead *a);

/* Brings the target from its position to window index `index` (logged):
 * by single steps, or by continuing (the selected thread alone where the
 * backend can) to a breakpoint at a pc of the window as often as the
 * simulation reached that pc, and stepping the rest, whichever takes fewer
 * debugger calls. Every stop is checked against the logged pcs; a target
 * that goes elsewhere (a fault, an exit, another pc) is a divergence:
 * SNR_AHEAD_DIVERGED with err saying at which index and where (the
 * breakpoint is cleared; snr_ahead_diverged_stop() says how the target
 * stopped); -1 when the debugger itself failed. */
#define SNR_AHEAD_DIVERGED (-2)
int snr_ahead_advance(struct snr_ahead *a, uint64_t index, char *err, size_t errlen);
const struct snr_dbg_stop *snr_ahead_diverged_stop(const struct snr_ahead *a);
/* The target was put back at window index `index` (the recorder restored
 * a checkpoint): the log and the page cache start again from there. */
void snr_ahead_restart(struct snr_ahead *a, uint64_t index);
/* The target ran one instruction itself (a checkpoint instruction), from
 * its position to the next. */
void snr_ahead_target_stepped(struct snr_ahead *a);

#endif
