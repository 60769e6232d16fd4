/*
 * timed_run.c: see timed_run.h. Slower than the functional run (the operand
 * access is computed for every instruction): about 8 M instructions/s.
 */
#include "timed_run.h"

#include <stdlib.h>
#include <string.h>

#include "device/pod_sched.h"
#include "lib/snr_util.h"


struct ta1_timing_model **ta1_timed_models_new(const struct snr_config *cfg, const struct snr_tracker *trackers,
					       struct ta1_fabric **fabric, char *err, size_t errlen)
{
	*fabric = ta1_fabric_new(cfg, err, errlen);
	if (!*fabric)
		return NULL;
	struct ta1_timing_model **models = snr_xcalloc(cfg->chips, sizeof(*models));
	for (unsigned i = 0; i < cfg->chips; i++)
		models[i] = ta1_timing_new_pod(*fabric, trackers ? &trackers[i] : NULL, i);
	return models;
}

void ta1_timed_models_free(struct ta1_timing_model **models, unsigned n, struct ta1_fabric *fabric)
{
	for (unsigned i = 0; models && i < n; i++)
		ta1_timing_free(models[i]);
	free(models);
	ta1_fabric_free(fabric);
}

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

/* The pod's chips in time order: the pod scheduler (device/pod_sched.h),
 * which the pod replay (replayer/pod.c) shares, so that both put the chips'
 * instructions into the fabric in one order. */
struct timed {
	struct ta1_machine *m;
	struct ta1_timing_model **models;
	uint64_t limit;
	ta1_step_hook hook;
	void *user;
	enum ta1_stop ret;
};

static bool timed_running(void *u, unsigned i)
{
	return ta1_chip_state(ta1_machine_chip(((struct timed *)u)->m, i)) == TA1_CHIP_RUNNING;
}

static uint64_t timed_now(void *u, unsigned i) { return ta1_timing_now(((struct timed *)u)->models[i]); }

static bool timed_deadlock(void *u, unsigned *which) { return ta1_machine_deadlock(((struct timed *)u)->m, which); }

static enum ta1_sched_step timed_sched_step(void *u, unsigned i, uint64_t horizon, uint64_t *resume)
{
	struct timed *T = u;
	struct ta1_chip *c = ta1_machine_chip(T->m, i);
	struct ta1_timing_model *t = T->models[i];
	if (T->limit && ta1_chip_get_reg(c, TA1_REG_INSTRET) >= T->limit) {
		T->ret = TA1_STOP_BUDGET;
		return TA1_SCHED_STOP;
	}
	uint64_t pc = ta1_chip_get_reg(c, TA1_REG_PC);
	uint32_t w = 0;
	struct ta1_insn in = {0};
	if (ta1_chip_read_mem(c, pc, &w, 4) == 4)
		ta1_decode(w, &in);
	if (in.op == TA1_OP_TA_WAIT) {
		uint64_t flag = ta1_chip_get_reg(c, in.rs1), count = ta1_chip_get_reg(c, in.rs2);
		if (!ta1_timing_wait_ready(t, in.rs1, in.rs2, flag < TA1_NUM_FLAGS ? (unsigned)flag : TA1_NUM_FLAGS, count,
					   horizon, resume))
			return TA1_SCHED_PARK;
	}
	enum ta1_stop s = ta1_timed_step(c, t, T->hook, T->user);
	if (s == TA1_STOP_FAULT || s == TA1_STOP_EBREAK) {
		T->ret = s;
		return TA1_SCHED_STOP;
	}
	if (s == TA1_STOP_BLOCKED)
		return TA1_SCHED_BLOCKED;
	return in.op == TA1_OP_TA_DMA_NOTIFY ? TA1_SCHED_NOTIFIED : TA1_SCHED_RAN;
}

enum ta1_stop ta1_timed_run(struct ta1_machine *m, struct ta1_timing_model **models, uint64_t limit,
			    unsigned *which, ta1_step_hook hook, void *user)
{
	struct timed T = {m, models, limit, hook, user, TA1_STOP_EXIT};
	/* every instruction in the scheduler's order: the reference the pod replay's private stretches
	 * are checked against */
	struct ta1_sched_ops ops = {&T, ta1_machine_nchips(m), timed_running, timed_now, timed_sched_step,
				    timed_deadlock, NULL, NULL};
	switch (ta1_sched_run(&ops, ta1_machine_config(m)->dma_base_latency_cycles, which)) {
	case TA1_SCHED_DONE:
		return TA1_STOP_EXIT;
	case TA1_SCHED_DEADLOCK:
		return TA1_STOP_FAULT;
	case TA1_SCHED_STOPPED:
	default:
		return T.ret;
	}
}
