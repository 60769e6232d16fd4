/*
 * window.h: a recorded window loaded into a simulator (the paper's
 * trace-load command), and run through it against the recorded pcs. Shared by
 * the replayer, bench/bench_replay and the trace checkers, so that each loads
 * and runs a window the same way.
 */
#ifndef SNR_WINDOW_H
#define SNR_WINDOW_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/snr_isa.h"
#include "lib/snr_spill.h"
#include "lib/snr_trace.h"
#include "sim/snr_sim.h"

/* A step's effects that a simulator cannot compute (a host system call's
 * results), copied out of the trace's buffers. */
struct snr_window_post {
	uint64_t index;
	struct snr_trace_regval *regs;
	unsigned nregs;
	struct snr_trace_mem *mem;
	unsigned nmem;
	bool unread; /* the step read memory the debugger could not read (lib/snr_trace.h) */
	bool call;   /* a call the target ran as a unit: applied instead of run (lib/snr_trace.h) */
};

struct snr_window {
	/* the pcs by instruction index (snr_window_pc): 8 bytes an instruction,
	 * in an unlinked temporary file past 4 MiB (lib/snr_spill.h), so that a
	 * replay's memory does not grow with the window */
	struct snr_spill *pcs;
	uint64_t *run_pcs; /* a run's pcs, handed to the simulator (SNR_WINDOW_RUN_PCS at a time) */
	uint64_t n;
	int pc_reg;    /* the trace's pc register */
	struct snr_window_post *post; /* in index order */
	size_t npost;
	/* each distinct pc's code bytes, for disassembly in messages */
	uint64_t *code_pc;
	uint8_t (*code)[16];
	uint8_t *code_len;
	size_t ncode;
	size_t cap, cap_post, cap_code;
};

/* Reads the trace from its start, loads every step's code, captured
 * registers and captured memory into s (the captures are first uses, so
 * these are the values at the window's start), keeps the pcs, the code and
 * the post values, and sets the pc to the first instruction's. Returns 0, or
 * -1 with err naming the trace's problem or the simulator's ("simulator
 * NAME: ..."). A trace with no step loads as n = 0. */
int snr_window_load(struct snr_trace *t, const struct snr_sim_ops *sim, struct snr_sim *s, struct snr_window *w,
		    char *err, size_t errlen);

#define SNR_WINDOW_RUN_PCS 65536

/* Instruction i's recorded pc (i < n). */
uint64_t snr_window_pc(const struct snr_window *w, uint64_t i);

/* Runs n instructions from index first (their recorded pcs) through the
 * simulator's run() when it has one (ABI 2; SNR_WINDOW_RUN_PCS at a time),
 * else step by step, reading the pc before each. As snr_sim_ops.run. A
 * temporary file that cannot be read back fails it (-1, with the spill's
 * error in snr_window_error). */
int snr_window_run(const struct snr_sim_ops *sim, struct snr_sim *s, const struct snr_window *w,
		   const struct snr_trace_reg *regs, uint64_t first, uint64_t n, struct snr_sim_run *out);

/* Applies a step's post values. -1 with the simulator's error() set. */
int snr_window_apply_post(const struct snr_sim_ops *sim, struct snr_sim *s, const struct snr_trace_reg *regs,
			  const struct snr_window_post *p);

/* Before an unread step p (its index is the next to run): the memory it
 * reads, found by the ISA plugin from the simulator's registers, is loaded
 * into s as zeros, so that it runs without reading memory the trace does not
 * hold; snr_window_apply_post then sets its outputs to the target's. The
 * zeros stay: every read of that memory in the window is an unread step.
 * -1 with err naming the step and what failed. */
int snr_window_unread_zeros(const struct snr_sim_ops *sim, struct snr_sim *s, const struct snr_trace_reg *regs,
			    size_t nregs, const struct snr_isa_ops *isa, void *isa_self, const struct snr_window *w,
			    const struct snr_window_post *p, char *err, size_t errlen);

/* The pcs' temporary file's first error, or NULL. */
const char *snr_window_error(const struct snr_window *w);

/* The code bytes recorded for pc, or NULL. */
const uint8_t *snr_window_code(const struct snr_window *w, uint64_t pc, unsigned *len);

void snr_window_free(struct snr_window *w);

#endif
