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

/* The simulator's step of `step` (its index and pc, its access acc; its
 * code, if the trace gets it here) failed. Where it is a TA1 chip's
 * ta.wait for completions a peer signals (the simulation of one chip does
 * not hold them), the target is brought to the wait and checked there (a
 * checkpoint), then runs the wait (st: how it stopped), where the device's
 * pod mode runs the peers until it passes; the bytes a peer may have
 * written meanwhile (what the window knows in any chip's HBM) are the
 * target's in the simulation from there, and the page cache is dropped.
 * 0: the target ran the wait, record on as after an instruction it ran;
 * 1: the checkpoint did not match, the target and the recorder are back at
 * sd->good, record on from there by stepping; -1 with err saying why (any
 * other failure of the simulator, named with the index and pc). */
int sim_failed(struct rec *r, struct stride *sd, const struct snr_trace_step *step, const struct snr_insn_access *acc,
	       struct snr_ranges *known, struct snr_ranges *written, uint64_t *reg_known,
	       struct snr_record_summary *sum, struct code_cache *cc, struct snr_trace_writer *w,
	       struct snr_dbg_stop *st, char *err, size_t errlen);

/* Whether the instruction (its access acc) writes another chip's HBM on a
 * TA1 chip of a pod: then the target runs it, after a checkpoint, so that
 * going back never sends a peer its bytes and signal twice. */
bool pod_writes_peer_mem(const struct rec *r, const struct snr_insn_access *acc);

/* Asked for every instruction of a window: one of a lone chip, or one that
 * touches no memory, is answered here without the call (19 million of the
 * 1,447 million instructions of the 1M serving window's recording,
 * callgrind). */
static inline bool pod_writes_peer(const struct rec *r, const struct snr_insn_access *acc)
{
	return r->nchips >= 2 && acc->nmem && pod_writes_peer_mem(r, acc);
}

/* Register k at a checkpoint: a TA1 sync flag of a chip of a pod that the
 * target holds higher than the simulation (sim, target: its values) is a
 * peer's signal, not a divergence. */
bool pod_flag_signalled(const struct rec *r, size_t k, const uint8_t *sim, const uint8_t *target);

/* At a commit (the target verified at sd->good): the simulation's sync
 * flag counts there, on a TA1 chip of a pod, for pod_keep_signals. */
void pod_flags_commit(struct rec *r, struct stride *sd);

/* The simulation's step wrote the sync flags in `which` (bits of
 * rec.flag_mask): their values join the stride's log, keyed by the
 * window index after the step. */
void pod_flags_stepped(struct rec *r, uint64_t which);

/* Before a rollback writes regs (the checkpoint's registers, read_regs()'
 * layout) to a TA1 chip of a pod: each sync flag there gains the peers'
 * completions that reached the target since the checkpoint, told from its
 * flags now (read here) less the stride's own change of each up to where
 * the target stopped (the simulation's change from the commit to the
 * window index the target's instruction count says, from the log), and sum counts them.
 * 0, or -1 with err saying why. */
int pod_keep_signals(struct rec *r, const struct stride *sd, uint8_t *regs, struct snr_record_summary *sum, char *err,
		     size_t errlen);

/* Whether the TA1 instruction at pc, where the target stopped instead of
 * the simulation's pc, is a ta.wait (it blocked there: the device's pod
 * mode stops a continue whose chip blocks). */
bool pod_blocked_at_wait(struct rec *r, uint64_t pc);

#endif
