/*
 * sim_regs.c: --method sim reads back, after each simulated instruction,
 * the registers it wrote and the pc, so that the next access query and the
 * capture see the simulation's values (recorder/sim_regs.h).
 *
 * This runs for every instruction of a window: an 8-byte register (every
 * register of TA1, the general ones of x86-64 and AArch64) goes through one
 * 8-byte copy, not a copy of its size through a 256-byte buffer (a
 * variable-length memcpy, and `rep movsb` for the pc's value where it was
 * read back, were about 3% of a 10M TA1 recording's CPU).
 */
#include "recorder/sim_regs.h"

#include <string.h>

#include "lib/snr_util.h"
#include "recorder/pod_sim.h"
#include "sim/grm_ta1.h"
#include "sim/snr_sim.h"

static __attribute__((noinline)) void read_one(struct rec *r, size_t k, bool all)
{
	unsigned size = r->iregs[k].size;
	if (r->regval[k] && (all || size <= 8) && !(r->sim_none[k] && !all)) {
		uint8_t *dst = r->regbuf + (r->regval[k] - r->regbuf);
		int rc;
		if (size == 8) {
			uint64_t v;
			if ((rc = r->sim->get_reg(r->simst, (unsigned)k, (uint8_t *)&v, 8)) == 0)
				memcpy(dst, &v, 8);
		} else {
			uint8_t v[256];
			if ((rc = r->sim->get_reg(r->simst, (unsigned)k, v, size)) == 0)
				memcpy(dst, v, size);
		}
		if (rc)
			r->sim_none[k] = true; /* not asked again per step (an error message each time) */
		r->stale[k] = false;
	} else if (r->regval[k] && size <= 8) { /* sim_none, per step */
		r->stale[k] = false; /* as when asked: the value stays the target's */
	}
	r->qval[k] = r->stale[k] ? NULL : r->regval[k];
}

/* read_one(r, k, false) for the per-step read of an 8-byte register the
 * simulator answers (every one a TA1 instruction writes): one get_reg into
 * a word, inline; read_one, out of line, for the rest. Without the call of
 * read_one per register the step wrote (its 256-byte buffer, the size and
 * `all` tests) the 1M serving window's recording runs 15.6 million fewer of
 * its 1,443 million instructions (callgrind). */
static inline void read_step_one(struct rec *r, size_t k)
{
	if (__builtin_expect(r->iregs[k].size != 8 || !r->regval[k] || r->sim_none[k], 0)) {
		read_one(r, k, false);
		return;
	}
	uint64_t v;
	if (r->sim->get_reg(r->simst, (unsigned)k, (uint8_t *)&v, 8) == 0)
		memcpy(r->regbuf + (r->regval[k] - r->regbuf), &v, 8);
	else
		r->sim_none[k] = true; /* not asked again per step (an error message each time) */
	r->stale[k] = false;
	r->qval[k] = r->regval[k];
}

void sim_read_one(struct rec *r, size_t k) { read_step_one(r, k); }

void sim_read_plan(struct rec *r)
{
	if (!r->sim_none)
		r->sim_none = snr_xcalloc(r->niregs, sizeof(*r->sim_none));
	r->step_for = r->simst;
	r->step_chip = r->sim == &snr_sim_ta1 ? ta1_grm_chip(r->simst) : NULL;
	r->step_direct = r->step_other = 0;
	for (size_t k = 0; k < r->niregs && k < 64; k++) {
		if ((int)k == r->pc_reg)
			continue;
		bool counter = k == TA1_REG_CYCLE || k == TA1_REG_INSTRET; /* get_reg refuses them */
		if (r->step_chip && r->regval[k] && r->iregs[k].size == 8 && !counter)
			r->step_direct |= 1ull << k;
		else
			r->step_other |= 1ull << k;
	}
	size_t pc = (size_t)r->pc_reg;
	r->step_pc_fast = r->regval[pc] && r->iregs[pc].size == 8;
}

void sim_read_registers(struct rec *r, bool all, const uint64_t *only)
{
	if (!r->sim_none)
		r->sim_none = snr_xcalloc(r->niregs, sizeof(*r->sim_none));
	bool pc_known = r->sim_pc_known; /* for this read only: a target step or a load may follow */
	r->sim_pc_known = false;
	if (!only) {
		for (size_t k = 0; k < r->niregs; k++)
			read_one(r, k, all);
		return;
	}
	/* per step, the registers the last instruction wrote and the pc: the
	 * simulator changed no other, and what the query sees of the others
	 * (qval) has not changed since they were last read */
	struct snr_regset_it it = snr_regset_iter(only, r->niregs);
	for (int k = snr_regset_it_next(&it); k >= 0; k = snr_regset_it_next(&it))
		if (k != r->pc_reg)
			read_step_one(r, (size_t)k);
	size_t pc = (size_t)r->pc_reg;
	if (pc_known && r->regval[pc] && r->iregs[pc].size == 8 && !r->sim_none[pc]) {
		/* the step's next_pc is the simulator's pc (sim/snr_sim.h): no
		 * get_reg, an indirect call per instruction (about 5% of the
		 * recorder's instructions on the serving window) */
		memcpy(r->regbuf + (r->regval[pc] - r->regbuf), &r->sim_next_pc, 8);
		r->stale[pc] = false;
		r->qval[pc] = r->regval[pc];
	} else {
		read_one(r, pc, false);
	}
}
