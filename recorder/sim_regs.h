/*
 * sim_regs.h: --method sim's per-step read of the simulator's registers
 * into the recorder's register buffer (recorder/sim_regs.c).
 */
#ifndef SNR_SIM_REGS_H
#define SNR_SIM_REGS_H

#include <stdbool.h>
#include <stdint.h>

#include "recorder/record_int.h"

/* The simulator's registers into regbuf: every one it has a value for (not
 * TA1's counters, which only counter reads use, and those run on the
 * target). Per step (all false) only the registers of at most 8 bytes, as
 * read_step_registers() reads only the cheap ones: a wider one the window
 * wrote is stale until a query needs it (x86-64's vector registers: reading
 * each from unicorn at every step would cost more than the step). With
 * `only` (per step), just the registers in that set (those the last
 * instruction wrote) and the pc. */
void sim_read_registers(struct rec *r, bool all, const uint64_t *only);

/* After a simulated step that returned 0: the registers it wrote into
 * last_written (the next per-step read's `only`), and its next_pc as the
 * pc's value for that read, unless the program exited there (TA1's next_pc
 * is then the pc after the ecall, not the simulator's pc register). */
struct snr_sim_step;
void sim_stepped(struct rec *r, const struct snr_sim_step *ss, const uint64_t *regs_written, uint64_t *last_written);

#endif
