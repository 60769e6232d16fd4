/*
 * rename.h: buffer renaming in a what-if (rename.c). A DMA that cannot move
 * because its destination is still being read moves with a buffer of its
 * own: in the moved window it writes the new region instead, and the
 * instructions that read what it wrote (after it in the original order,
 * and before the first one after it there that writes that buffer again)
 * read the new region.
 */
#ifndef SNR_ANALYZER_RENAME_H
#define SNR_ANALYZER_RENAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct cap_rec;

/* The DMA issued at original index `dma` writes new_lo.. instead of VMEM
 * [old_lo, old_hi). */
struct an_rename {
	uint64_t dma, old_lo, old_hi, new_lo; /* old_lo == old_hi: the buffer is not renamed */
	int flag_from, flag_to;               /* flag_to < 0: the flag is not renamed */
	int64_t wait;                         /* the WAIT that consumes the DMA (its flag renamed with it), -1 none */
};

/* Applies a set of renames (sorted by dma) to the executions of a moved
 * window in their new order. clash: the first execution that touched a
 * renamed buffer's new region (or read part of its old one) while the moved
 * data still had a read to come, and that read: the renamed window would
 * not compute what the original did. */
struct an_renamer {
	const struct capture *c;
	const struct an_rename *rn;
	size_t n;
	uint8_t *state;    /* per rename: 0 before its DMA, 1 live, 2 its old buffer written again */
	uint64_t *foreign; /* per rename: 1 + the first other execution that touched its new region while live */
	uint64_t *kill;    /* per rename: the first execution after the DMA (original order) that writes its old
			      buffer again: the readers of the moved data come before it */
	size_t *live, nlive;
	bool clash;
	uint64_t clash_index, clash_reader; /* original indices */
	uint64_t clash_dma;                 /* the renamed DMA's */
	bool clash_partial;                 /* the reader read part of the old buffer, part elsewhere */
	uint64_t (*waits)[2];               /* (WAIT index, rename) of the renamed flags, by index */
	size_t nwaits;
};

void an_rename_begin(struct an_renamer *r, const struct capture *c, const struct an_rename *rn, size_t n);
/* rec (execution `index` of the original order) with its regions renamed;
 * moved: the order takes it earlier than its place. */
void an_rename_apply(struct an_renamer *r, struct cap_rec *rec, uint64_t index, bool moved);
void an_rename_end(struct an_renamer *r);

#endif
