/*
 * verify.h: `snr record --method sim`'s checkpoints (recorder/verify.c):
 * the target runs the window the simulation recorded in strides, and at
 * each checkpoint its registers and the bytes the stride wrote must be the
 * simulation's; on a mismatch the target and the recorder go back to the
 * last checkpoint that matched and the rest is recorded by stepping
 * (docs/recording.md, "Recovery").
 */
#ifndef SNR_VERIFY_H
#define SNR_VERIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"
#include "recorder/record_int.h"

#define POD_SIM_FLAGS 16 /* TA1's sync flags, registers flag0..flag15 */

/*
 * The steps the simulation records go into the journal as they come; the
 * recorder marks where it ended at the last verified checkpoint. Before
 * the target runs a stride, the bytes the simulation says it writes are
 * read from the target as they are at the checkpoint. At the next
 * checkpoint the target must match (registers, and the bytes the stride
 * wrote); if it does not, those bytes and the checkpoint's registers are
 * written back (snr_dbg_ops.write_mem and write_regs), which puts the
 * target where it was, the journal is cut back to the mark, the
 * recorder's sets go back to the checkpoint, and the rest of the window is
 * recorded by stepping.
 */
struct stride {
	bool can_restore; /* the backend writes registers and memory back */
	uint64_t good;    /* the last verified window index: where the target is */
	uint8_t *good_regs; /* its registers there, read_regs()' layout */
	struct snr_trace_mark mark; /* the trace there */
	/* the recorder's sets there: known and written keep undo logs */
	uint64_t reg_known[SNR_ISA_MAX_REGS / 64];
	struct snr_record_summary sum;
	uint64_t *emitted; /* pcs whose code bytes went into a step since */
	size_t nemitted, emitted_cap;
	struct snr_ranges wrote; /* what the simulation wrote since good */
	struct snr_trace_mem *pre; /* those bytes as the target held them at good */
	size_t npre;
	/* the simulation's bytes before its first write to them since good:
	 * pieces that together are `wrote`, their bytes in undo_bytes. Where
	 * the target's CRC of a range is theirs, they are its undo log and it
	 * is not read (undo_lost: the simulator could not tell some) */
	struct stride_piece *pieces;
	size_t npieces, pieces_cap;
	uint8_t *undo_bytes;
	size_t undo_len, undo_cap;
	bool undo_lost;
	struct snr_range *miss; /* scratch */
	size_t miss_cap;
	/* a TA1 chip of a pod: the simulation's sync flags at good, against
	 * which a rollback tells the peers' signals that arrived since
	 * (recorder/pod_sim.c, pod_keep_signals) */
	uint64_t sim_flags[POD_SIM_FLAGS];
	bool have_sim_flags;
};

struct stride_piece {
	uint32_t key;
	uint64_t lo, hi;
	size_t at; /* in undo_bytes */
};

void stride_free(struct stride *sd);
/* The simulation is about to write [lo, hi) (space and chip in key) in
 * the stride: it joins `wrote`, and what the simulation holds there now
 * joins the undo pieces where it is new to the stride. */
void stride_wrote(struct rec *r, struct stride *sd, uint32_t key, uint64_t lo, uint64_t hi);
/* A step whose code bytes went into the trace at pc. */
void stride_emitted(struct stride *sd, uint64_t pc);
/* The target is verified at window index `index`, its registers in
 * regbuf: the recorder's state there becomes the one a mismatch returns to. */
int stride_commit(struct rec *r, struct stride *sd, uint64_t index, struct snr_ranges *known,
		  struct snr_ranges *written, const uint64_t *reg_known,
		  const struct snr_record_summary *sum, struct snr_trace_writer *w, char *err, size_t errlen);
/* A checkpoint at `index`, then: 0, it matched and is the last good one
 * now; 1, it did not and the target and the recorder are back at the last
 * good checkpoint, sd->good, to record on from there by stepping; -1. */
/* The target and the recorder go back to sd->good (the last checkpoint
 * that matched) and the rest of the window is recorded by stepping; err
 * holds the reason on entry. 0, or -1 with err saying why not. */
int verify_fall_back(struct rec *r, struct stride *sd, uint64_t at, struct snr_ranges *known,
		     struct snr_ranges *written, uint64_t *reg_known, struct snr_record_summary *sum,
		     struct code_cache *cc, struct snr_trace_writer *w, char *err, size_t errlen);

int verify_or_fall_back(struct rec *r, struct stride *sd, uint64_t index, struct snr_ranges *known,
			struct snr_ranges *written, uint64_t *reg_known, struct snr_record_summary *sum,
			struct code_cache *cc, struct snr_trace_writer *w, char *err, size_t errlen);
/* The len bytes at lo (space and chip in key) that the window wrote, as
 * the target holds them, checked against the simulation's: by the
 * target's CRC where it computes one (crc_mem: then the simulation's bytes
 * are the target's and nothing is read), else, or where the CRCs differ,
 * read back and compared byte by byte. out receives the target's bytes.
 * 0 the same, 1 different (err names the first byte that differs), -1
 * failure (err names `what` and where). */
int verify_written(struct rec *r, uint32_t key, uint64_t lo, uint64_t len, uint8_t *out, uint64_t index,
		   const char *what, char *err, size_t errlen);

#endif
