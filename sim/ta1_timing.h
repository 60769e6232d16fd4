/*
 * ta1_timing.h: TA1's timing model (docs/ta1-timing.md), shared by the GRM
 * (replay of a recorded window) and `snr device --timing` (a whole program
 * from reset), so that the two can be compared on the same window.
 *
 * The model is fed instructions in program order, each with the operand
 * access the ISA query computed from the registers before it executed, and
 * reports every event to the tracker.
 */
#ifndef SNR_TA1_TIMING_H
#define SNR_TA1_TIMING_H

#include <stdbool.h>
#include <stdint.h>

#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "sim/snr_tracker.h"

/* The model's state. (Not `struct ta1_timing`: that tag is the ISA's
 * `enum ta1_timing`, the per-instruction timing class, and C shares one tag
 * namespace between structs and enums.) */
struct ta1_timing_model;

struct ta1_fabric;

/* tracker may be NULL. chip is the executing chip. The model has a fabric
 * of its own (sim/ta1_fabric.h): its DMAs meet only each other. */
struct ta1_timing_model *ta1_timing_new(const struct snr_config *cfg, const struct snr_tracker *tracker, unsigned chip);
/* Chip `chip` of a pod whose chips' models share `fabric` (which must
 * outlive them): its DMAs contend with every other chip's for ports and
 * links. The pod's owner feeds the chips' instructions in time order
 * (ta1_timing_wait_ready; device/timed_run.c). */
struct ta1_timing_model *ta1_timing_new_pod(struct ta1_fabric *fabric, const struct snr_tracker *tracker,
					    unsigned chip);
void ta1_timing_free(struct ta1_timing_model *t);

/* A DMA issued before the window that completes `completions_pending`
 * times on flag f; modelled as having been issued at cycle 0 with `bytes`
 * on the given link (0 bytes if unknown: it completes after the base latency). */
void ta1_timing_pre_window_dma(struct ta1_timing_model *t, unsigned flag, uint64_t bytes, uint8_t src_space,
			       uint8_t dst_space);

/* Accounts for one instruction. x holds the registers before it executed;
 * next_pc the pc after it (to tell taken branches). */
void ta1_timing_insn(struct ta1_timing_model *t, uint64_t index, uint64_t pc, const struct ta1_insn *in,
		     const struct ta1_access *a, const uint64_t *x, uint64_t next_pc);

/* What ta1_timing_insn takes from a scalar instruction alone, for a caller
 * that keeps it per static instruction (sim/grm_ta1.c's decode cache: an
 * ALU, multiply, divide, branch, jump, load or store instruction names the
 * same registers whatever their values), so that the model need not walk
 * the access's masks for its scoreboard and register events: the op, the x
 * registers read in ascending order, then TA1_TIMING_NO_REG, and the x
 * register written or TA1_TIMING_NO_DST. */
#define TA1_TIMING_NO_REG TA1_REG_COUNT
#define TA1_TIMING_NO_DST (TA1_REG_COUNT + 1)
struct ta1_timing_pre {
	uint8_t op;
	uint8_t src[2], dst;
};

/* The record of an instruction that is neither DMA, WAIT, vector nor matrix
 * and whose access a names only x registers and the pc, at most two sources
 * and one destination; false for any other. */
bool ta1_timing_pre_of(const struct ta1_insn *in, const struct ta1_access *a, struct ta1_timing_pre *p);

/* ta1_timing_insn of such an instruction (p = ta1_timing_pre_of(in, a))
 * whose access has no fault. */
void ta1_timing_scalar_insn(struct ta1_timing_model *t, uint64_t index, uint64_t pc,
			    const struct ta1_timing_pre *p, const struct ta1_access *a, uint64_t next_pc);

/* While on, the chip's instructions leave the shared fabric alone: they
 * must be neither DMAs nor WAITs, and what the model computes for them does
 * not depend on the fabric's state, so the fabric can be advanced later, by
 * the next instruction that needs it. A pod replay runs such stretches of
 * several chips on threads at once (replayer/pod.c); only the moment at
 * which the fabric's events reach the trackers moves. */
void ta1_timing_set_private(struct ta1_timing_model *t, bool on);

/* The cycle at which the next instruction could issue (what the cycle CSR
 * reads under the model). */
uint64_t ta1_timing_now(const struct ta1_timing_model *t);

/* For a pod's scheduler: the next instruction is `ta.wait x[rs1], x[rs2]`
 * on flag `flag` for `count` completions, and no other chip can issue a DMA
 * before cycle `horizon` (every other chip's clock is at or past it). Runs
 * the shared fabric as far as that allows; true if the WAIT's outcome is
 * then known (ta1_timing_insn may take it), false with *resume the cycle
 * before which it cannot be (the chip waits until the others get there). */
bool ta1_timing_wait_ready(struct ta1_timing_model *t, unsigned rs1, unsigned rs2, unsigned flag, uint64_t count,
			   uint64_t horizon, uint64_t *resume);

/* Runs every operation in flight to completion; returns the last cycle. */
uint64_t ta1_timing_drain(struct ta1_timing_model *t);

struct ta1_timing_totals {
	uint64_t cycles, instructions;
	uint64_t stall_cycles[SNR_STALL_COUNT];
	uint64_t dma_count, dma_bytes;
	uint64_t busy_cycles[SNR_UNIT_COUNT];
};
void ta1_timing_totals(const struct ta1_timing_model *t, struct ta1_timing_totals *out);

#endif
