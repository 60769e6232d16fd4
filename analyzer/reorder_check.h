/*
 * reorder_check.h: does a moved window compute what the original did
 * (reorder_check.c)? Checked on the captured stream, in the new order, with
 * any renamed buffers at their new place.
 */
#ifndef SNR_ANALYZER_REORDER_CHECK_H
#define SNR_ANALYZER_REORDER_CHECK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/rename.h"
#include "isa/ta1/ta1_isa.h"

struct cap_rec;
struct capture;

/* What makes a moved window compute something else: the moved execution
 * and the one it now passes (original indices), and how. */
enum an_conflict_kind {
	AN_CONFLICT_NONE,
	AN_CONFLICT_READS_WRITTEN,  /* it reads memory the passed one writes (its input would not be there yet) */
	AN_CONFLICT_WRITES_READ,    /* it writes memory the passed one still reads (a buffer still in use) */
	AN_CONFLICT_WRITES_WRITTEN, /* both write the same memory: the last write changes */
	AN_CONFLICT_REGISTER,       /* it reads a register the passed one computes */
	AN_CONFLICT_FLAG,           /* both use the same DMA sync flag: the WAIT would count the moved DMA */
	AN_CONFLICT_RENAMED,        /* the renamed buffer's new region is used before the data's last read */
	AN_CONFLICT_PARTIAL,        /* a read covers part of a renamed buffer and part of something else */
	AN_CONFLICT_IN_FLIGHT,      /* it writes the source of a DMA still in flight (other: that DMA) */
};

struct an_conflict {
	enum an_conflict_kind kind;
	uint64_t moved, other;     /* original indices (AN_CONFLICT_IN_FLIGHT: the writer, the DMA) */
	uint32_t moved_sidx, other_sidx;
	uint64_t addr;             /* the memory (VMEM, core, HBM address) or the register id */
};

/* A check in progress, fed each execution of the moved window in its new
 * order (after the renames): moved (nmoved, by index) are the executions
 * the order takes earlier. */
struct an_checker {
	const struct capture *c;
	uint64_t *moved_idx;
	size_t nmoved;
	struct an_checker_entry *act; /* the moved executions still ahead of their place */
	size_t nact, capact;
	uint64_t pos;                 /* executions fed so far (the position in the new order) */
	struct an_checker_dma *fly;   /* the DMAs issued in the new order that no WAIT consumed yet */
	size_t nfly, capfly;
	uint64_t pre[TA1_NUM_FLAGS];  /* per flag, completions of DMAs from before the window not consumed */
	struct an_conflict first;
	struct an_conflict in_flight; /* the first AN_CONFLICT_IN_FLIGHT, also when first is another */
};

void an_check_begin(struct an_checker *k, const struct capture *c, const uint64_t *moved_idx, size_t nmoved);
void an_check_exec(struct an_checker *k, const struct cap_rec *r, uint64_t index);
void an_check_end(struct an_checker *k);
/* Whether the order takes execution `index` earlier than its place. */
bool an_check_moved(const struct an_checker *k, uint64_t index);
/* The conflict in words, for a refused move ("it writes VMEM 0x... that
 * ... still reads"): places by pc (the caller adds source lines). */
const char *an_conflict_kind_words(enum an_conflict_kind k);

#endif
