/*
 * sim_regs.h: --method sim's per-step read of the simulator's registers
 * into the recorder's register buffer (recorder/sim_regs.c).
 */
#ifndef SNR_SIM_REGS_H
#define SNR_SIM_REGS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "recorder/pod_sim.h"
#include "recorder/record_int.h"
#include "sim/snr_sim.h"

/* The simulator's registers into regbuf: every one it has a value for (not
 * TA1's counters, which only counter reads use, and those run on the
 * target). Per step (all false) only the registers of at most 8 bytes, as
 * read_step_registers() reads only the cheap ones: a wider one the window
 * wrote is stale until a query needs it (x86-64's vector registers: reading
 * each from unicorn at every step would cost more than the step). With
 * `only` (per step), just the registers in that set (those the last
 * instruction wrote) and the pc. */
void sim_read_registers(struct rec *r, bool all, const uint64_t *only);

/* sim_read_registers(r, false, only) for one register or for the plan's
 * making: out of line, for sim_read_step's rare cases. */
void sim_read_one(struct rec *r, size_t k);
void sim_read_plan(struct rec *r);

/*
 * The per-step read, sim_read_registers(r, false, written), inline: it runs
 * for every simulated instruction. The plan, made again after each load of
 * the simulator's registers (a window's simulator may have the address of
 * the last one's, so the address alone cannot tell), sorts the registers
 * below 64 by how they are read; a TA1 chip's (not its counters, which the
 * GRM does not answer) come from ta1_chip_get_reg(), what
 * snr_sim_ta1.get_reg returns for them, without an indirect call and its
 * checks per register. The walk of the written set, its calls and tests
 * were about 144 of the 1,427 million instructions of the 1M serving
 * window's recording, about 70 now (callgrind).
 */
/* Register k's 8-byte value v into regbuf (regval[k] points there, read-only), known from now on. */
static inline void sim_put_reg8(struct rec *r, size_t k, uint64_t v)
{
	memcpy(r->regbuf + (r->regval[k] - r->regbuf), &v, 8);
	r->stale[k] = false;
	r->qval[k] = r->regval[k];
}

static inline __attribute__((always_inline)) void sim_read_step(struct rec *r, const uint64_t *written)
{
	if (__builtin_expect(!written || r->niregs > 64, 0)) {
		sim_read_registers(r, false, written);
		return;
	}
	if (__builtin_expect(r->step_for != r->simst, 0))
		sim_read_plan(r);
	bool pc_known = r->sim_pc_known; /* for this read only: a target step or a load may follow */
	r->sim_pc_known = false;
	for (uint64_t bits = written[0] & r->step_direct; bits; bits &= bits - 1) {
		unsigned k = (unsigned)__builtin_ctzll(bits);
		if (__builtin_expect(r->sim_none[k], 0)) {
			sim_read_one(r, k);
			continue;
		}
		sim_put_reg8(r, k, ta1_chip_get_reg(r->step_chip, k));
	}
	for (uint64_t bits = written[0] & r->step_other; bits; bits &= bits - 1)
		sim_read_one(r, (size_t)__builtin_ctzll(bits));
	size_t pc = (size_t)r->pc_reg;
	if (pc_known && r->step_pc_fast && !r->sim_none[pc]) {
		sim_put_reg8(r, pc, r->sim_next_pc); /* the step's next_pc is the simulator's pc (sim/snr_sim.h) */
	} else {
		sim_read_one(r, pc);
	}
}

/* After a simulated step that returned 0: the registers it wrote into
 * last_written (the next per-step read's `only`), and its next_pc as the
 * pc's value for that read, unless the program exited there (TA1's next_pc
 * is then the pc after the ecall, not the simulator's pc register). */
static inline void sim_stepped(struct rec *r, const struct snr_sim_step *ss, const uint64_t *regs_written,
			       uint64_t *last_written)
{
	memcpy(last_written, regs_written, SNR_ISA_MAX_REGS / 64 * sizeof(*last_written));
	if (regs_written[0] & r->flag_mask) /* a pod chip's sync flags: recorder/pod_sim.c */
		pod_flags_stepped(r, regs_written[0] & r->flag_mask);
	r->sim_next_pc = ss->next_pc;
	r->sim_pc_known = !ss->exited;
}

#endif
