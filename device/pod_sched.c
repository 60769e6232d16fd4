/*
 * pod_sched.c: see pod_sched.h.
 */
#include "pod_sched.h"

#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

enum ta1_sched_end ta1_sched_run(const struct ta1_sched_ops *ops, uint64_t lookahead, unsigned *which)
{
	unsigned n = ops->n;
	uint64_t *parked = snr_xcalloc(n, sizeof(*parked));
	bool *blocked = snr_xcalloc(n, sizeof(*blocked));
	enum ta1_sched_end ret;
	for (;;) {
		int best = -1;
		uint64_t best_key = UINT64_MAX, second = UINT64_MAX;
		bool running = false;
		for (unsigned i = 0; i < n; i++) {
			if (!ops->running(ops->user, i))
				continue;
			running = true;
			if (blocked[i])
				continue;
			uint64_t now = ops->now(ops->user, i), key = parked[i] > now ? parked[i] : now;
			if (key < best_key) {
				second = best_key;
				best_key = key;
				best = (int)i;
			} else if (key < second) {
				second = key;
			}
		}
		if (!running) {
			ret = TA1_SCHED_DONE;
			break;
		}
		/* A blocked chip runs again once some chip issues its ta.dma.notify:
		 * not before the best's clock + 1, and its DMA completes a base
		 * latency later at the soonest; from then on it may issue DMAs of its
		 * own, which the fabric must not have passed. */
		for (unsigned i = 0; best >= 0 && i < n; i++) {
			if (!blocked[i] || !ops->running(ops->user, i))
				continue;
			uint64_t now = ops->now(ops->user, i), key = parked[i] > now ? parked[i] : now;
			uint64_t soonest = best_key > UINT64_MAX - 1 - lookahead ? UINT64_MAX : best_key + 1 + lookahead;
			if (key < soonest)
				key = soonest;
			if (key < second)
				second = key;
		}
		if (best >= 0 && ops->private_next && ops->private_next(ops->user, (unsigned)best)) {
			if (ops->run_private(ops->user, which) == TA1_SCHED_STOP) {
				ret = TA1_SCHED_STOPPED;
				break;
			}
			continue;
		}
		if (best < 0) {
			if (!ops->deadlock || ops->deadlock(ops->user, which)) {
				ret = TA1_SCHED_DEADLOCK;
				break;
			}
			memset(blocked, 0, n * sizeof(*blocked)); /* the caller says some chip can run */
			continue;
		}
		/* No other chip's DMA can reach the fabric before `second` + 1 + Tb:
		 * the chip may run, and the fabric be advanced, to `second` + Tb. */
		uint64_t horizon = second > UINT64_MAX - lookahead ? UINT64_MAX : second + lookahead;
		unsigned b = (unsigned)best;
		*which = b;
		for (;;) {
			uint64_t resume = 0;
			enum ta1_sched_step s = ops->step(ops->user, b, horizon, &resume);
			if (s == TA1_SCHED_STOP) {
				ret = TA1_SCHED_STOPPED;
				goto out;
			}
			if (s == TA1_SCHED_PARK) {
				parked[b] = resume;
				break;
			}
			parked[b] = 0;
			if (s == TA1_SCHED_BLOCKED) {
				blocked[b] = true;
				break;
			}
			if (s == TA1_SCHED_NOTIFIED) /* a waiting chip may pass now */
				memset(blocked, 0, n * sizeof(*blocked));
			if (!ops->running(ops->user, b) || ops->now(ops->user, b) > horizon)
				break;
			if (ops->private_next && ops->private_next(ops->user, b))
				break; /* with the other chips' private stretches */
		}
	}
out:
	free(parked);
	free(blocked);
	return ret;
}
