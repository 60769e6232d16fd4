/*
 * timed_metrics.h: the device's timing run as a metrics set (`snr device
 * --timing -o MSET`, docs/metrics-format.md, "A pod's metrics set"): one
 * .snrm per chip, written by the metrics writer that `snr replay -o` uses,
 * from the events each chip's timing model reports, and a manifest naming
 * the chips (lib/snr_set.h).
 */
#ifndef SNR_TIMED_METRICS_H
#define SNR_TIMED_METRICS_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/snr_config.h"
#include "lib/snr_elf.h"
#include "sim/snr_tracker.h"
#include "sim/ta1_timing.h"

struct ta1_timed_metrics;

/* Creates DIR.partial and one metrics writer per chip (nothing the user has
 * is replaced: an existing DIR is refused). NULL with err filled. */
struct ta1_timed_metrics *ta1_timed_metrics_new(const char *dir, const struct snr_config *cfg,
						const struct snr_elf *elf, char *err, size_t errlen);
/* The chips' trackers, one per chip, for ta1_timed_models_new. */
const struct snr_tracker *ta1_timed_metrics_trackers(struct ta1_timed_metrics *m);
/* Every chip drained and the fabric's samples flushed: each chip's SUMMARY
 * from its model's totals, the files renamed into place, the set finished.
 * end: why the run ended ("exit"). 0, or -1 with err filled (the set then
 * stays DIR.partial). Frees m either way. */
int ta1_timed_metrics_finish(struct ta1_timed_metrics *m, struct ta1_timing_model **models, const char *end,
			     char *err, size_t errlen);
/* The run failed: nothing is written (the set's folder removed). */
void ta1_timed_metrics_abandon(struct ta1_timed_metrics *m, const char *end);

#endif
