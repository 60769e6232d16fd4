/*
 * timed_run.c: see timed_run.h. Slower than the functional run (the operand
 * access is computed for every instruction): about 8 M instructions/s.
 */
#include "timed_run.h"

#include <stdlib.h>
#include <string.h>

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

/* The pod's chips in time order. The chip whose clock (ta1_timing_now, or
 * the cycle its WAIT cannot finish before) is lowest runs until it passes
 * the next lowest by the DMA base latency (the lookahead: another chip's DMA
 * issued from then on reaches the fabric after it); so no chip ever issues a
 * DMA into the shared fabric's past, and every transfer meets each one it
 * overlaps. A chip blocked at a
 * ta.wait that another chip must signal sits out until some chip issues a
 * ta.dma.notify; when every running chip is blocked, the pod deadlocked. */
enum ta1_stop ta1_timed_run(struct ta1_machine *m, struct ta1_timing_model **models, uint64_t limit,
			    unsigned *which, ta1_step_hook hook, void *user)
{
	unsigned n = ta1_machine_nchips(m);
	uint64_t *parked = snr_xcalloc(n, sizeof(*parked));
	bool *blocked = snr_xcalloc(n, sizeof(*blocked));
	enum ta1_stop ret;
	for (;;) {
		int best = -1;
		uint64_t best_key = UINT64_MAX, second = UINT64_MAX;
		bool running = false;
		for (unsigned i = 0; i < n; i++) {
			struct ta1_chip *c = ta1_machine_chip(m, i);
			if (ta1_chip_state(c) != TA1_CHIP_RUNNING)
				continue;
			running = true;
			if (blocked[i])
				continue;
			uint64_t now = ta1_timing_now(models[i]), key = parked[i] > now ? parked[i] : now;
			if (key < best_key) {
				second = best_key;
				best_key = key;
				best = (int)i;
			} else if (key < second) {
				second = key;
			}
		}
		if (!running) {
			ret = TA1_STOP_EXIT;
			break;
		}
		/* A blocked chip runs again once some chip issues its ta.dma.notify:
		 * not before the best's clock + 1, and its DMA completes a base
		 * latency later at the soonest; from then on it may issue DMAs of its
		 * own, which the fabric must not have passed. */
		uint64_t lookahead = ta1_machine_config(m)->dma_base_latency_cycles;
		for (unsigned i = 0; best >= 0 && i < n; i++) {
			if (!blocked[i] || ta1_chip_state(ta1_machine_chip(m, i)) != TA1_CHIP_RUNNING)
				continue;
			uint64_t now = ta1_timing_now(models[i]), key = parked[i] > now ? parked[i] : now;
			uint64_t soonest = best_key > UINT64_MAX - 1 - lookahead ? UINT64_MAX : best_key + 1 + lookahead;
			if (key < soonest)
				key = soonest;
			if (key < second)
				second = key;
		}
		if (best < 0) {
			if (ta1_machine_deadlock(m, which)) {
				ret = TA1_STOP_FAULT;
				break;
			}
			memset(blocked, 0, n * sizeof(*blocked)); /* cannot happen: some chip was not blocked */
			continue;
		}
		/* No other chip's DMA can reach the fabric before `second` + 1 + Tb:
		 * the chip may run, and the fabric be advanced, to `second` + Tb. */
		uint64_t horizon = second > UINT64_MAX - lookahead ? UINT64_MAX : second + lookahead;
		struct ta1_chip *c = ta1_machine_chip(m, (unsigned)best);
		struct ta1_timing_model *t = models[best];
		*which = (unsigned)best;
		for (;;) {
			if (limit && ta1_chip_get_reg(c, TA1_REG_INSTRET) >= limit) {
				ret = TA1_STOP_BUDGET;
				goto out;
			}
			uint64_t pc = ta1_chip_get_reg(c, TA1_REG_PC);
			uint32_t w = 0;
			struct ta1_insn in = {0};
			if (ta1_chip_read_mem(c, pc, &w, 4) == 4)
				ta1_decode(w, &in);
			if (in.op == TA1_OP_TA_WAIT) {
				uint64_t flag = ta1_chip_get_reg(c, in.rs1), count = ta1_chip_get_reg(c, in.rs2), resume;
				if (!ta1_timing_wait_ready(t, in.rs1, in.rs2, flag < TA1_NUM_FLAGS ? (unsigned)flag : TA1_NUM_FLAGS,
							   count, horizon, &resume)) {
					parked[best] = resume;
					break;
				}
			}
			parked[best] = 0;
			enum ta1_stop s = ta1_timed_step(c, t, hook, user);
			if (s == TA1_STOP_FAULT || s == TA1_STOP_EBREAK) {
				ret = s;
				goto out;
			}
			if (s == TA1_STOP_BLOCKED) {
				blocked[best] = true;
				break;
			}
			if (in.op == TA1_OP_TA_DMA_NOTIFY) /* a waiting chip may pass now */
				memset(blocked, 0, n * sizeof(*blocked));
			if (s != TA1_STOP_BUDGET || ta1_timing_now(t) > horizon)
				break;
		}
	}
out:
	free(parked);
	free(blocked);
	return ret;
}
