/*
 * pod_sim.c: `snr record --method sim` where a chip waits on a peer.
 *
 * The recorder simulates one chip (snr_sim_ta1 of chip C of N). A ta.wait
 * whose completions another chip signals inside the window cannot run in
 * that simulation: the completions are the peer's, and so are the bytes its
 * DMA writes into this chip's memory with them. Where the simulation stops
 * at such a wait, the recorder brings the target to the wait (verifying it
 * there, as at any checkpoint) and runs the wait on the target, where the
 * device's pod mode runs the peers until it passes (recorder/pod.c's
 * turns). The simulation then goes on from the target's state after the
 * wait:
 * - its registers (the sync flags with the peers' completions) are the
 *   target's, as after any instruction the target runs;
 * - the bytes the window knows (read or written before the wait) in any
 *   chip's HBM, which a peer's DMA may have written while this chip
 *   waited, are checked against the target (its CRC of each range where it
 *   computes one, else read) and the simulation's copy of those that
 *   changed is replaced by the target's. The trace does not capture them
 *   again: stepping does not either (a chip's trace captures a byte at its
 *   first use; the pod replay takes what a peer wrote from the peer);
 * - the page cache of bytes read from the target is dropped, so a byte
 *   first read after the wait is the target's after the peer's write.
 * A checkpoint that does not match still goes back to the last good one
 * and steps the rest (verify.c). A flag register the target holds higher
 * than the simulation is not a mismatch: a peer signalled it meanwhile;
 * the simulation keeps its count, so it stops at the wait that needs the
 * peer's completions and runs that wait on the target as above.
 *
 * A rollback to a checkpoint (verify.c) writes back every register the
 * target had there, its sync flags included; a peer's completion that
 * reached the target after the checkpoint (a peer ran while this chip's
 * stride was not yet verified: the turns pass at the device's requests)
 * would go with it, and the wait that needs it would never pass. So the
 * flags written back keep what arrived since (pod_keep_signals): the
 * target's count now, less what the stride did on the chip itself up to
 * where the target stopped (the simulation's change of that flag from the
 * checkpoint to the target's instruction count, logged as the simulation
 * steps: pod_flags_stepped, by window index), is the checkpoint's count plus the peers'
 * signals.
 *
 * An instruction that writes another chip's HBM (ta.dma.notify: the bytes,
 * and the completion it signals there) runs on the target too, after a
 * checkpoint: going back to a checkpoint cannot take back what a peer has
 * received, so no stride the simulation ran ahead holds such a write (it
 * would be sent twice: once as the target ran the stride to the
 * checkpoint that did not match, once as it is stepped again).
 */
#include "recorder/pod_sim.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/ta1/ta1_isa.h"
#include "lib/snr_util.h"
#include "recorder/record_sim.h"
#include "sim/grm_ta1.h"
#include "sim/snr_sim.h"

/* The simulation's copy of every byte the window knows in some chip's HBM
 * becomes the target's: -1 on failure, err saying why. */
static int refresh_hbm(struct rec *r, const struct snr_ranges *known, uint64_t index, struct snr_record_summary *sum,
		       char *err, size_t errlen)
{
	for (size_t l = 0; l < known->n; l++) {
		const struct snr_range_list *rl = &known->lists[l];
		if ((rl->key >> 16) != TA1_SPACE_HBM)
			continue;
		for (size_t q = 0; q < rl->n; q++) {
			uint64_t lo = rl->r[q].lo, len = rl->r[q].hi - lo;
			uint8_t *b = snr_xmalloc(len ? len : 1);
			char why[400];
			int c = verify_written(r, rl->key, lo, len, b, index, "the bytes a peer may have written", why,
					       sizeof(why));
			if (c > 0) {
				sum->peer_bytes_changed += len;
				c = r->sim->load_mem(r->simst, (uint8_t)(rl->key >> 16), (uint16_t)(rl->key & 0xffff), lo,
						     b, len) ? -1 : 0;
				if (c)
					snprintf(why, sizeof(why), "loading them into the simulator: %s",
						 r->sim->error(r->simst));
			}
			free(b);
			if (c < 0) {
				snr_fmt(err, errlen, "instruction %llu: after its wait on a peer, at 0x%llx (%llu bytes): %s",
					(unsigned long long)index, (unsigned long long)lo, (unsigned long long)len, why);
				return -1;
			}
		}
	}
	return 0;
}

bool pod_flag_signalled(const struct rec *r, size_t k, const uint8_t *sim, const uint8_t *target)
{
	unsigned f;
	char tail;
	uint64_t sv = 0, tv = 0;
	if (r->sim != &snr_sim_ta1 || r->nchips < 2 || r->iregs[k].size != 8 ||
	    sscanf(r->iregs[k].name, "flag%u%c", &f, &tail) != 1)
		return false;
	memcpy(&sv, sim, 8);
	memcpy(&tv, target, 8);
	return tv > sv;
}

/* Register k's sync flag number, -1 if it is not one. */
static int flag_of(const struct rec *r, size_t k)
{
	unsigned f;
	char tail;
	if (r->iregs[k].size != 8 || sscanf(r->iregs[k].name, "flag%u%c", &f, &tail) != 1 || f >= POD_SIM_FLAGS)
		return -1;
	return (int)f;
}

static bool pod_chip(const struct rec *r) { return r->sim == &snr_sim_ta1 && r->nchips >= 2; }

void pod_flags_commit(struct rec *r, struct stride *sd)
{
	sd->have_sim_flags = false;
	r->nflag_log = 0;
	r->flag_log_lost = false;
	if (!pod_chip(r)) {
		r->flag_mask = 0;
		return;
	}
	if (!r->flag_mask_known) {
		r->flag_mask_known = true;
		r->instret_reg = reg_named(r, "instret");
		for (size_t k = 0; k < r->niregs && k < 64 && r->instret_reg >= 0; k++)
			if (flag_of(r, k) >= 0)
				r->flag_mask |= 1ull << k;
	}
	memset(sd->sim_flags, 0, sizeof(sd->sim_flags));
	for (size_t k = 0; k < r->niregs; k++) {
		int f = flag_of(r, k);
		uint64_t v = 0;
		if (f < 0)
			continue;
		if (r->sim->get_reg(r->simst, (unsigned)k, (uint8_t *)&v, 8))
			return; /* no count to compare with: written back as they were */
		sd->sim_flags[f] = v;
	}
	sd->have_sim_flags = true;
}

void pod_flags_stepped(struct rec *r, uint64_t which)
{
	/* the window index after this step: the pcs logged run to its own */
	uint64_t after = snr_ahead_target_index(r->ahead) + snr_ahead_pending(r->ahead);
	if (r->flag_log_lost)
		return;
	for (; which; which &= which - 1) {
		unsigned k = (unsigned)__builtin_ctzll(which);
		uint64_t v = 0;
		if (r->sim->get_reg(r->simst, k, (uint8_t *)&v, 8)) {
			r->flag_log_lost = true;
			return;
		}
		if (r->nflag_log == POD_FLAG_LOG) {
			r->flag_log_lost = true;
			return;
		}
		r->flag_log[r->nflag_log++] = (struct pod_flag_event){after, v, (unsigned)flag_of(r, k)};
	}
}

int pod_keep_signals(struct rec *r, const struct stride *sd, uint8_t *regs, struct snr_record_summary *sum, char *err,
		     size_t errlen)
{
	if (!pod_chip(r) || !sd->have_sim_flags || r->flag_log_lost || r->instret_reg < 0)
		return 0;
	char why[600];
	if (read_registers(r, why, sizeof(why))) {
		snr_fmt(err, errlen, "reading the target's sync flags before putting it back: %s", why);
		return -1;
	}
	if (!r->regval[r->instret_reg])
		return 0;
	/* the window index where the target stopped, by its instruction count */
	uint64_t now_instret = reg_u64(r, (size_t)r->instret_reg), good_instret;
	memcpy(&good_instret, regs + (r->regval[r->instret_reg] - r->regbuf), 8);
	uint64_t at = sd->good + (now_instret - good_instret);
	for (size_t k = 0; k < r->niregs; k++) {
		int f = flag_of(r, k);
		uint64_t now, good;
		if (f < 0 || !r->regval[k])
			continue;
		/* the simulation's count of it where the target is */
		uint64_t sim = sd->sim_flags[f];
		for (size_t e = 0; e < r->nflag_log && r->flag_log[e].index <= at; e++)
			if (r->flag_log[e].flag == (unsigned)f)
				sim = r->flag_log[e].value;
		size_t off = (size_t)(r->regval[k] - r->regbuf);
		memcpy(&now, r->regval[k], 8);
		memcpy(&good, regs + off, 8);
		/* the target's change since the checkpoint less the chip's own
		 * (the simulation's to there): the peers' completions */
		int64_t signals = (int64_t)(now - good) - (int64_t)(sim - sd->sim_flags[f]);
		if (signals <= 0)
			continue;
		good += (uint64_t)signals;
		memcpy(regs + off, &good, 8);
		sum->peer_signals_kept += (uint64_t)signals;
	}
	return 0;
}

bool pod_blocked_at_wait(struct rec *r, uint64_t pc)
{
	uint32_t word = 0;
	struct ta1_insn in;
	if (r->sim != &snr_sim_ta1 || r->dbg->read_mem(r->d, pc, &word, 4) || !ta1_decode(word, &in))
		return false;
	return ta1_insn_table[in.op].cls == TA1_CLASS_DMA_WAIT;
}

bool pod_writes_peer_mem(const struct rec *r, const struct snr_insn_access *acc)
{
	if (r->sim != &snr_sim_ta1 || r->nchips < 2)
		return false;
	for (unsigned m = 0; m < acc->nmem; m++)
		if (acc->mem[m].write && acc->mem[m].space == TA1_SPACE_HBM && acc->mem[m].chip != (unsigned)r->o->chip)
			return true;
	return false;
}

int sim_failed(struct rec *r, struct stride *sd, const struct snr_trace_step *step, const struct snr_insn_access *acc,
	       struct snr_ranges *known, struct snr_ranges *written, uint64_t *reg_known,
	       struct snr_record_summary *sum, struct code_cache *cc, struct snr_trace_writer *w,
	       struct snr_dbg_stop *st, char *err, size_t errlen)
{
	uint64_t i = step->index, pc = step->pc;
	if (r->sim != &snr_sim_ta1 || !ta1_grm_waits_on_peer(r->simst)) {
		snr_fmt(err, errlen, "instruction %llu at 0x%llx: the simulator failed: %s", (unsigned long long)i,
			(unsigned long long)pc, r->sim->error(r->simst));
		return -1;
	}
	/* the target has not run past sd->good (it moves at checkpoints and
	 * for what runs on it, each committed): going back drops what the
	 * simulation recorded since, the code this step emitted with it */
	if (step->code_len)
		stride_emitted(sd, pc);
	/* the target to the wait, checked there as at any checkpoint */
	int c = verify_or_fall_back(r, sd, i, known, written, reg_known, sum, cc, w, err, errlen);
	if (c)
		return c;
	if (step_insn(r, acc, i, pc, 0, st, err, errlen))
		return -1;
	/* what the peers did while it waited: the target's bytes from here */
	snr_ahead_restart(r->ahead, i);
	if (st->kind == SNR_DBG_STOP_TRAP && refresh_hbm(r, known, i, sum, err, errlen))
		return -1;
	sum->peer_waits++;
	return 0;
}
