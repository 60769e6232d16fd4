/*
 * whatif.h: the what-if runs of `snr analyze suggest --verify` (whatif.c):
 * the window's instruction stream captured from a replay of its trace, and
 * that stream fed in a changed order (some instructions taken earlier) to a
 * fresh TA1 timing model.
 */
#ifndef SNR_ANALYZER_WHATIF_H
#define SNR_ANALYZER_WHATIF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/reorder_check.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "replayer/replay.h"
#include "sim/snr_tracker.h"
#include "sim/ta1_timing.h"

/* What the stream keeps of an instruction that is the same at every
 * execution of it: its pc, the pc after it, the decoded word and its
 * register sets (a window executes few static instructions). */
struct cap_static {
	uint64_t pc, next_pc;
	struct ta1_insn in;
	uint64_t regs_read, regs_written;
	uint8_t nvals; /* register fields other than x0: the values kept per execution */
	uint8_t field[4]; /* their indices in xv order (rd, rs1, rs2, rs3) */
};

/* One execution, decoded from the stream: its static instruction, the
 * values of its register fields before it ran (xv: x[rd], x[rs1], x[rs2],
 * x[rs3]; 0 for x0) and its memory regions. */
struct cap_rec {
	uint32_t sidx;
	uint8_t nregions;
	/* in a what-if only (not in the stream): the sync flag this execution
	 * uses renamed (a DMA given a flag of its own, and its WAIT) */
	bool flag_renamed;
	uint8_t flag_from, flag_to;
	uint64_t xv[4];
	struct ta1_region region[TA1_MAX_REGIONS];
};

/* The sync flag a DMA (its completion flag) or a WAIT names, as recorded
 * (xv: the register fields' values before it ran). */
static inline unsigned an_sync_flag(const struct cap_static *s, const struct cap_rec *r)
{
	uint64_t f = s->in.op < TA1_OP_COUNT && ta1_insn_table[s->in.op].cls == TA1_CLASS_DMA_WAIT ? r->xv[1]
		     : s->in.op == TA1_OP_TA_DMA2D					       ? r->xv[3] >> 48
		     : s->in.op == TA1_OP_TA_DMA_NOTIFY ? r->xv[0] & 0xffffffffu
							: r->xv[0];
	return (unsigned)(f % TA1_NUM_FLAGS);
}

/* The stream lives in an unlinked temporary file, not in memory: per
 * execution 5 bytes, 8 per register field other than x0 and 40 per memory
 * region (about 30 bytes an instruction on the serving window), read back
 * in order for every what-if. Memory holds the static table and one buffer,
 * whatever the window's length. */
#define CAP_BUF (1u << 20)
#define CAP_REC_MAX (5 + 4 * 8 + TA1_MAX_REGIONS * sizeof(struct ta1_region))

struct capture {
	FILE *f;               /* the stream */
	char *fbuf;            /* its stdio buffer, CAP_BUF bytes */
	uint64_t n;            /* executions in it */
	uint64_t bytes;        /* its size */
	bool io_failed;        /* a write or read of the stream failed (io_err says which) */
	char io_err[256];
	struct cap_static *st; /* the static table */
	size_t nst, capst;
	uint32_t *hash;        /* open addressing over st: index + 1, 0 empty */
	size_t hashcap;
	unsigned pre_window[TA1_NUM_FLAGS];
	bool seeded;
	struct snr_config cfg;
	unsigned chip, nchips;
};

/* An instruction a move takes earlier: it runs just before instruction
 * slot - 1 of the original order. */
struct slotted {
	uint64_t slot, index;
};

/* cmp_slotted order: by slot, then index; and by index, then slot. */
int an_wi_cmp_slotted(const void *a, const void *b);
int an_wi_cmp_slotted_index(const void *a, const void *b);
int an_wi_cmp_u64(const void *a, const void *b);

/* Each execution of the stream in the changed order (an_wi_walk, whatif.c). */
typedef void (*cap_emit_fn)(void *user, const struct cap_rec *r, uint64_t index, uint64_t pos);

/* The stream of one replay of the trace base names (its sim is replaced by
 * the capturing wrapper); 0, or -1 with err filled. */
int an_wi_capture_trace(struct capture *c, const struct snr_replay_opts *base, char *err, size_t errlen);
void an_wi_capture_free(struct capture *c);
/* An empty stream (its temporary file), and one execution appended to it. */
int an_wi_open(struct capture *c, char *err, size_t errlen);
void an_wi_append(struct capture *c, const struct cap_rec *r);
/* Each execution with the moved ones (nmoved, in cmp_slotted order) put
 * just before their slot, to fn. */
void an_wi_walk(struct capture *c, const struct slotted *moved, size_t nmoved, cap_emit_fn fn, void *user);
/* The window's cycles in a fresh timing model with the moved instructions
 * moved (NULL, 0: as captured), reporting to tracker (NULL: none) with each
 * instruction's original index, or its position in the new order when
 * renumber is set; totals (NULL: not wanted) the model's totals. */
uint64_t an_wi_run(struct capture *c, const struct slotted *moved, size_t nmoved,
		   const struct snr_tracker *tracker, bool renumber, struct ta1_timing_totals *totals);
/* A what-if order: the moved executions (in cmp_slotted order), the buffers
 * renamed (sorted by DMA index), and after the run the first dependence it
 * breaks (kind AN_CONFLICT_NONE: the moved window computes what the original
 * did; reorder_check.c, rename.c). */
struct an_wi_order {
	const struct slotted *moved;
	size_t nmoved;
	const struct an_rename *rn;
	size_t nrn;
	struct an_conflict conflict;
	struct an_conflict in_flight; /* the first write into an in-flight DMA's source, also when conflict is another */
};
/* an_wi_run on an order, renames applied and checked. */
uint64_t an_wi_run_order(struct capture *c, struct an_wi_order *o, const struct snr_tracker *tracker, bool renumber,
			 struct ta1_timing_totals *totals);
/* n orders in one pass over the stream (no tracker): cycles[k] order k's,
 * totals the first order's. */
void an_wi_run_many(struct capture *c, struct an_wi_order *o, size_t n, uint64_t *cycles,
		    struct ta1_timing_totals *totals);
/* The stream of order o (renames applied) appended to out (an_wi_open'ed);
 * o->conflict filled. */
void an_wi_reorder(struct capture *c, struct an_wi_order *o, struct capture *out);
/* The window with o's instructions moved, as a stream of its own (its
 * static table a copy of c's); 0, or -1 with err filled. */
int an_wi_capture_reordered(struct capture *c, struct an_wi_order *o, struct capture *out, char *err, size_t errlen);

#endif
