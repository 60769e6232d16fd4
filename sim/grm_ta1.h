/*
 * grm_ta1.h: what the TA1 GRM (sim/grm_ta1.c, snr_sim_ta1) offers beyond the
 * simulator ABI, for in-tree callers.
 */
#ifndef SNR_GRM_TA1_H
#define SNR_GRM_TA1_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snr_sim;
struct snr_sim_step;
struct ta1_machine;
struct ta1_fabric;
struct ta1_chip;
struct ta1_insn;
struct ta1_timing_model;

/* Runs the semantics and the poison checks without the timing model (no
 * cycles, no timing events): bench/bench_replay's functional-only rate. */
void ta1_grm_set_functional_only(struct snr_sim *s, bool on);

/* A pod's chip replayed on the pod's one machine and fabric
 * (replayer/pod.c). HBM is the pod's: the trace's HBM captures go to
 * defer() instead of memory; before an instruction of the chip reads an HBM
 * row [lo, hi) of chip `owner`, read() places or checks the chip's captured
 * bytes there (non-zero fails the instruction with err filled); every HBM row
 * a chip writes is told to wrote(). */
struct ta1_grm_pod_hooks {
	void *user;
	void (*defer)(void *user, unsigned chip, unsigned owner, uint64_t addr, const void *data, uint64_t len);
	int (*read)(void *user, unsigned chip, uint64_t index, uint64_t pc, const struct ta1_insn *in, unsigned owner,
		    uint64_t lo, uint64_t hi, char *err, size_t errlen);
	void (*wrote)(void *user, unsigned owner, uint64_t lo, uint64_t hi);
};

/* Chip `chip` of machine m, its timing model on fabric (both the caller's,
 * outliving the simulator). Freed with snr_sim_ta1.destroy; the tracker is
 * attached with snr_sim_ta1.attach_tracker. */
struct snr_sim *ta1_grm_new_pod(struct ta1_machine *m, struct ta1_fabric *fabric, unsigned chip,
				const struct ta1_grm_pod_hooks *hooks, char *err, size_t errlen);

/* The chip's sync flags as they are now are completions of DMAs issued
 * before the window: its timing model learns of them. Called for every chip
 * once its flags are set and before any chip runs (a peer's signal in the
 * windows must not be taken for one from before them). */
void ta1_grm_pod_seed_flags(struct snr_sim *s);

/* One instruction of a pod's chip, as snr_sim_ta1.step; *blocked when it is
 * a ta.wait whose completions no chip has signalled yet: nothing ran. */
int ta1_grm_pod_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out, bool *blocked);

/* The instruction at pc as the chip's next step will decode it: the decode
 * cache's entry when it still holds the word in memory (no read, no decode),
 * else read and decoded into *buf. NULL if pc holds no valid instruction or
 * lies in no memory. */
const struct ta1_insn *ta1_grm_pod_insn(struct snr_sim *s, uint64_t pc, struct ta1_insn *buf);

/* A chip simulated alone (snr_sim_ta1.create) whose step failed because a
 * ta.wait needs completions a peer signals, which the simulation of one
 * chip does not hold (recorder/pod_sim.c falls back to stepping there). */
bool ta1_grm_waits_on_peer(const struct snr_sim *s);

struct ta1_timing_model *ta1_grm_timing(struct snr_sim *s);
struct ta1_chip *ta1_grm_chip(struct snr_sim *s);

#endif
