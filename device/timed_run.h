/*
 * timed_run.h: running a whole program on the device under the TA1 timing
 * model, instruction by instruction (what `snr device --timing` and
 * `snr profile` do). Each chip has its own model, on one fabric of ports and
 * links for the pod; the cycle CSR reads the chip's model.
 */
#ifndef SNR_TIMED_RUN_H
#define SNR_TIMED_RUN_H

#include <stdint.h>

#include "device/ta1_machine.h"
#include "sim/ta1_fabric.h"
#include "sim/ta1_timing.h"

/* Called after each instruction the model accounted for: its pc, decoded
 * form and operand access (registers before it ran), the model's clock
 * before and after, and the pc it went to. */
struct ta1_step_info {
	unsigned chip;
	uint64_t pc, next_pc;
	const struct ta1_insn *insn;
	const struct ta1_access *access;
	const uint64_t *x; /* x0..x31 before the instruction ran */
	uint64_t cycle_before, cycle_after;
};
typedef void (*ta1_step_hook)(void *user, const struct ta1_step_info *s);

/* The models of a pod of cfg->chips chips on one fabric (*fabric, freed by
 * ta1_timed_models_free after them); trackers: one per chip, or NULL. NULL
 * with err filled if the topology does not fit the chips. */
struct ta1_timing_model **ta1_timed_models_new(const struct snr_config *cfg, const struct snr_tracker *trackers,
					       struct ta1_fabric **fabric, char *err, size_t errlen);
void ta1_timed_models_free(struct ta1_timing_model **models, unsigned n, struct ta1_fabric *fabric);

/* One instruction of chip c under model t. A faulting instruction is not
 * fed to the model (nor to the hook). */
enum ta1_stop ta1_timed_step(struct ta1_chip *c, struct ta1_timing_model *t, ta1_step_hook hook, void *user);

/* All chips until every chip exited, one faulted or hit an ebreak, or one
 * reached `limit` instructions (0: none). The chips' models share one fabric
 * (ta1_timing_new_pod); the chips run in time order, the lowest clock first,
 * so that their DMAs contend as they overlap. A ta.wait another chip must
 * signal blocks its chip until one does; a pod-wide deadlock faults. */
enum ta1_stop ta1_timed_run(struct ta1_machine *m, struct ta1_timing_model **models, uint64_t limit,
			    unsigned *which, ta1_step_hook hook, void *user);

#endif
