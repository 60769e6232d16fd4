/*
 * pod_reorder.h: a what-if's order of one chip's window in the pod replay
 * (replayer/pod.c, snr_pod_replay_reordered): which recorded instruction
 * runs at each position, the pc set where the order departs from the
 * recording, and the registers of the instructions taken earlier.
 *
 * The moved instructions run on registers of their own, as a compiler
 * allocates them for the moved source: a block of them starts from the
 * registers at its point, each one's writes go to the block's registers
 * and become the chip's at the instruction's recorded index, so the
 * instructions they pass see the registers they saw in the recording.
 */
#ifndef SNR_REPLAY_POD_REORDER_H
#define SNR_REPLAY_POD_REORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "replayer/window.h"

struct ta1_chip;

struct pod_reorder_pending {
	uint64_t index; /* due from this recorded index on */
	unsigned reg;
	uint64_t value;
};

struct pod_reorder {
	const uint64_t *order; /* by position: the recorded index */
	const uint8_t *moved;  /* by position: taken earlier */
	uint64_t n;
	uint64_t jumped;       /* position + 1 of the last departure handled */
	uint64_t shadow[32];   /* the moved block's x registers */
	struct pod_reorder_pending *pend;
	size_t npend, cap_pend;
};

/* The order checked against window w: every index once, the last one last,
 * no step the recorder applied as a unit. 0, or -1 with err filled. */
int pod_reorder_init(struct pod_reorder *r, const uint64_t *order, const uint8_t *moved, uint64_t n,
		     const struct snr_window *w, char *err, size_t errlen);
void pod_reorder_free(struct pod_reorder *r);

/* Before position at: where the order departs from the recording, the
 * instruction before must have left the pc where the recording went on
 * after it (true: the order diverged, *went_on that pc), and the pc goes to
 * the next instruction's; a moved instruction's writes due are applied
 * before an instruction that is not moved. */
bool pod_reorder_before(struct pod_reorder *r, struct ta1_chip *chip, const struct snr_window *w, uint64_t at,
			uint64_t *went_on);
/* Around a moved instruction's step (q its recorded index). */
void pod_reorder_enter(struct pod_reorder *r, struct ta1_chip *chip, uint64_t at, uint64_t save[32]);
void pod_reorder_leave(struct pod_reorder *r, struct ta1_chip *chip, uint64_t q, const uint64_t save[32]);

#endif
