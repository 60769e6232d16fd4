/*
 * causal_device.h: device kernels and transfers as causal-profile
 * candidates (docs/host.md, "Causal profile", "Device candidates").
 *
 * The device work comes from the on/off-device model (host_device.h).
 * libta1rt's device is a thread of the process ("ta1-device"): its runs
 * already are in the graph, woken by the ta1rt_launch that submitted the
 * work, and the host's ta1rt_wait is woken by it. A CUPTI device is not a
 * thread of the process, so it gets a timeline of its own: its busy
 * stretches (the union of its kernels and copies) are runs, the idle gaps
 * between them waits, each gap ended by the host thread that submitted
 * the work after it (at the submission's time; work queued behind a busy
 * device follows at once, so it cannot start earlier than the work before
 * it ends); each host wait (H:WAIT_DEV) that CUPTI work ended becomes one
 * wait ended by that device when that work completed. A device candidate
 * S% faster shrinks the runs of its device's timeline by S% of the time
 * its pieces (by kernel name, or transfer kind) covered in them.
 */
#ifndef SNR_HOST_CAUSAL_DEVICE_H
#define SNR_HOST_CAUSAL_DEVICE_H

#include "analyzer/causal.h"
#include "analyzer/causal_model.h"
#include "analyzer/host_device.h"

/* The first thread id the CUPTI devices' timelines take (device d:
 * CAUSAL_DEV_TID + d), above any Linux thread id. */
#define CAUSAL_DEV_TID 0xFFFF0000u

/* A wait whose waker's time at the wake-up is not its end. */
struct causal_wake {
	uint32_t tid;
	uint64_t start, wake_at;
};

/* The scheduler's off-CPU intervals of t with the CUPTI devices' idle gaps
 * added and each host wait CUPTI work ended made one wait ended by its
 * device (the off-CPU intervals inside it dropped); *wakes lists the waits
 * whose wake-up time is not their end. Returns the count in *out (owned). */
size_t causal_device_offcpu(const struct snrh_trace *t, const struct snrh_ondev *o, struct snrh_offcpu **out,
			    struct causal_wake **wakes, size_t *nwakes);

/* Sets each listed wait's wake_at in the built model. */
void causal_device_wakes(struct causal_model *m, const struct causal_wake *w, size_t n);

/* Appends one candidate per (device, kernel name or transfer kind) to
 * c->cands (room for it reserved by the caller: causal_device_count). */
void causal_device_cands(struct snrh_causal *c, const struct snrh_ondev *o);
size_t causal_device_count(const struct snrh_ondev *o);

void causal_dev_cover_free(struct causal_dev_cover *cv);

#endif
