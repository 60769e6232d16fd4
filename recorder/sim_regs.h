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

#endif
