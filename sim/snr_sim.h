/*
 * snr_sim.h: the simulator plugin ABI (version 2; version 1 plugins, which
 * have no run(), still load).
 *
 * A simulator replays a recorded window: the replayer loads the snapshot
 * (registers and captured memory, the paper's trace-load command), then steps
 * the recorded instructions one by one, comparing every pc with the trace,
 * and finally compares the end state with the trace's digest. The simulator's
 * components report performance events to the tracker (sim/snr_tracker.h).
 *
 * Memory the trace did not capture is poisoned: an instruction that reads a
 * poisoned byte (or a register never captured nor written) makes step() fail
 * with a message naming the instruction and the address: a recorder defect,
 * never silently read as zero.
 *
 * In the tree: the TA1 GRM (sim/grm_ta1.c, "ta1"), the unicorn engine for
 * host code ("unicorn"), and a minimal example (sim/example/). A simulator
 * built as a shared object exports `const struct snr_sim_ops snr_sim_plugin`
 * and is loaded with `snr replay --sim PATH.so` (docs/simulator-plugin.md).
 *
 * Registers use the ISA plugin's numbering (isa/snr_isa.h) as the
 * trace's META register table lists them.
 */
#ifndef SNR_SIM_H
#define SNR_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sim/snr_tracker.h"

#define SNR_SIM_ABI_VERSION 2
#define SNR_SIM_ABI_MIN_VERSION 1 /* the oldest version the replayer loads */

struct snr_sim;

struct snr_sim_step {
	uint64_t pc;      /* the pc the instruction executed at */
	/* the pc after it: after a step that returned 0 and did not exit, the
	 * value get_reg() then reads from the pc register (`snr record
	 * --method sim` takes it from here instead of reading the pc back;
	 * every simulator in sim/ keeps this). At an exit it may be the pc
	 * after the exiting instruction, whatever the pc register holds. */
	uint64_t next_pc;
	bool exited;      /* the program ended (TA1: ecall exit) */
	int exit_code;
};

/* What run() did. */
struct snr_sim_run {
	uint64_t done;    /* instructions executed */
	uint64_t next_pc; /* the pc after the last one executed */
	bool diverged;    /* stopped before instruction first + done: the pc was not pcs[done] */
	uint64_t pc;      /* with diverged: the simulator's pc there */
	bool exited;      /* the last one executed ended the program */
	int exit_code;
};

struct snr_sim_ops {
	uint32_t abi_version; /* SNR_SIM_ABI_VERSION */
	const char *name;
	const char *isa; /* the ISA (snr_isa_ops.name) whose traces it replays */

	/* config_json: the machine config stored in the trace (may be NULL);
	 * chip/nchips: which thread of how many the trace recorded. */
	struct snr_sim *(*create)(const char *config_json, unsigned chip, unsigned nchips, char *err, size_t errlen);
	void (*destroy)(struct snr_sim *s);
	const char *(*error)(struct snr_sim *s);
	/* The tracker stays owned by the caller and outlives the simulator. */
	int (*attach_tracker)(struct snr_sim *s, const struct snr_tracker *t);

	/* Trace load. Loaded registers and bytes are no longer poisoned. */
	int (*set_reg)(struct snr_sim *s, unsigned reg, const uint8_t *val, unsigned size);
	int (*get_reg)(struct snr_sim *s, unsigned reg, uint8_t *val, unsigned size);
	int (*load_mem)(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, const void *data, uint64_t len);
	int (*read_mem)(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, void *data, uint64_t len);
	int (*load_code)(struct snr_sim *s, uint64_t pc, const uint8_t *code, unsigned len);

	/* Executes the instruction at the current pc as the window's index-th. */
	int (*step)(struct snr_sim *s, uint64_t index, struct snr_sim_step *out);
	/* Lets everything in flight finish; returns the window's total cycles. */
	uint64_t (*finish)(struct snr_sim *s);

	/* Version 2, optional (NULL: the replayer calls step() and get_reg()):
	 * executes up to n instructions as the window's first, first + 1, ...,
	 * each only if the current pc is pcs[i]; returns early, with out saying
	 * why, at a pc that differs or when the program exits. -1 (error() says
	 * why, out->done counts those executed) if an instruction failed as in
	 * step(). What step() would report is reported alike; run() exists so
	 * that the replayer does not pay an indirect call and a register read
	 * per instruction. */
	int (*run)(struct snr_sim *s, uint64_t first, uint64_t n, const uint64_t *pcs, struct snr_sim_run *out);
};

extern const struct snr_sim_ops snr_sim_ta1;
extern const struct snr_sim_ops snr_sim_unicorn;         /* x86-64 host code (sim/unicorn.c) */
extern const struct snr_sim_ops snr_sim_unicorn_aarch64; /* aarch64 host code, the same engine */
extern const struct snr_sim_ops snr_sim_unicorn_rv64;    /* plain RV64 Linux code (ta1 plugin's registers) */

#endif
