/*
 * pod_sim.h: `snr record --method sim` on a chip of a pod (recorder/pod_sim.c).
 */
#ifndef SNR_POD_SIM_H
#define SNR_POD_SIM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"
#include "recorder/record_int.h"
#include "recorder/verify.h"

/* The simulator's step of `step` (its index and pc; its code, if the
 * trace gets it here) failed. Where it is a TA1 chip's ta.wait for
 * completions a peer signals (the simulation of one chip does not hold
 * them), the recorder goes back to the last good checkpoint, sd->good,
 * where the target still is, and records on from there by stepping: the
 * device's pod mode waits for the peer. 0: record on from sd->good by
 * stepping; -1 with err saying why (any other failure of the simulator,
 * named with the index and pc). */
int sim_failed(struct rec *r, struct stride *sd, const struct snr_trace_step *step, struct snr_ranges *known,
	       struct snr_ranges *written, bool *reg_known, struct snr_record_summary *sum, struct code_cache *cc,
	       struct snr_trace_writer *w, char *err, size_t errlen);

#endif
