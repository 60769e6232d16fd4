/*
 * timed_run.c: see timed_run.h. Slower than the functional run (the operand
 * access is computed for every instruction): about 8 M instructions/s.
 */
#include "timed_run.h"

#include <string.h>

#define TIMED_QUANTUM 65536

enum ta1_stop ta1_timed_step(struct ta1_chip *c, struct ta1_timing_model *t, ta1_step_hook hook, void *user)
{
	struct ta1_query_ctx q;
	uint64_t x[32];
	ta1_chip_query_ctx(c, &q);
	memcpy(x, q.x, sizeof(x));
	q.x = x;
	uint64_t pc = ta1_chip_get_reg(c, TA1_REG_PC), index = ta1_chip_get_reg(c, TA1_REG_INSTRET);
	uint32_t w = 0;
	struct ta1_insn in;
	struct ta1_access a;
	bool fetched = ta1_chip_read_mem(c, pc, &w, 4) == 4;
	ta1_decode(w, &in);
	ta1_access_query(&in, &q, &a);
	uint64_t before = ta1_timing_now(t);
	ta1_chip_set_cycle(c, before);
	enum ta1_stop s = ta1_chip_step(c);
	if (fetched && (s == TA1_STOP_BUDGET || s == TA1_STOP_EXIT)) {
		uint64_t next = ta1_chip_get_reg(c, TA1_REG_PC);
		ta1_timing_insn(t, index, pc, &in, &a, x, next);
		if (hook) {
			struct ta1_step_info info = {ta1_chip_id(c), pc, next, &in, &a, x, before, ta1_timing_now(t)};
			hook(user, &info);
		}
	}
	return s;
}

enum ta1_stop ta1_timed_run(struct ta1_machine *m, struct ta1_timing_model **models, uint64_t limit,
			    unsigned *which, ta1_step_hook hook, void *user)
{
	for (;;) {
		bool any = false;
		for (unsigned i = 0; i < ta1_machine_nchips(m); i++) {
			struct ta1_chip *c = ta1_machine_chip(m, i);
			for (unsigned k = 0; k < TIMED_QUANTUM && ta1_chip_state(c) == TA1_CHIP_RUNNING; k++) {
				*which = i;
				if (limit && ta1_chip_get_reg(c, TA1_REG_INSTRET) >= limit)
					return TA1_STOP_BUDGET;
				enum ta1_stop s = ta1_timed_step(c, models[i], hook, user);
				if (s == TA1_STOP_FAULT || s == TA1_STOP_EBREAK)
					return s;
				any = true;
			}
		}
		if (!any)
			return TA1_STOP_EXIT;
	}
}
