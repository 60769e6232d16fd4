/*
 * host_device.h: on/off-device time (gPerf, paper 004) from a host trace:
 * per device, the recorded window split into compute only, transfer only,
 * both at once, queued (work submitted, none started, nothing running) and
 * idle; on-device time is the union of compute and transfer intervals,
 * each instant counted once. Each host wait (H:WAIT_DEV) is linked to the
 * piece of device work whose completion ended it. Definitions in
 * docs/host.md, "On/off-device".
 *
 * Sources: CUPTI activity (kernels are compute; memcpy and memset are
 * transfers; submitted at the earliest runtime/driver API record with the
 * same correlation id), and device work that runs in a host thread, marked
 * by uprobe pairs in bucket G:COMP or G:XFER (libta1rt's presets:
 * ta1rt_device_run and ta1rt_device_upload on the "ta1-device" thread,
 * submitted by ta1rt_launch calls in order).
 */
#ifndef SNR_HOST_DEVICE_H
#define SNR_HOST_DEVICE_H

#include <jansson.h>
#include <stdio.h>

#include "lib/snr_host_trace.h"

enum { SNRH_ONDEV_TA1, SNRH_ONDEV_PROBES, SNRH_ONDEV_CUPTI };

/* One piece of device work. */
struct snrh_dev_work {
	uint32_t device;	     /* index into snrh_ondev.dev */
	int src;		     /* SNRH_ONDEV_TA1, _PROBES or _CUPTI */
	uint32_t key;		     /* the device thread's tid, or the CUPTI device id */
	int xfer;		     /* 1: transfer (copy, memset, upload); 0: compute */
	uint64_t submit, start, end; /* submit == start where no submission was seen */
	const char *name;	     /* kernel name, copy kind, probed function */
	uint32_t seq;		     /* libta1rt: launch number (1-based, 0 none); CUPTI: correlation id */
	uint32_t stream;	     /* CUPTI stream; the device thread's tid for probed work */
	uint32_t submit_tid;	     /* the host thread that submitted it, 0 unknown */
	uint64_t bytes;		     /* CUPTI copies and memsets: bytes moved; 0 unknown */
	uint32_t waits;		     /* host waits it ended ... */
	uint64_t wait_ns, wake_ns;   /* ... their time, and the part after it completed */
	uint64_t waited_during_ns;   /* time of linked host waits (on its device) while it ran */
};

/* The parts of a device's split, in this order. */
enum {
	SNRH_SPLIT_COMPUTE,
	SNRH_SPLIT_XFER,
	SNRH_SPLIT_BOTH,
	SNRH_SPLIT_QUEUED,
	SNRH_SPLIT_IDLE,
	SNRH_SPLIT_N
};

/* The window [t0, t1] of one device, split; the five parts add up to it. */
struct snrh_dev_stats {
	char label[128];
	const char *source; /* "libta1rt", "probes" or "CUPTI" */
	uint32_t key;	    /* device thread's tid, or CUPTI device id */
	long long pid;
	uint64_t t0, t1;
	uint64_t compute_only, xfer_only, both, queued, idle;
	uint64_t items, compute_sum, xfer_sum; /* sums of durations, overlaps counted twice */
};

/* A host wait: a probed call in bucket H:WAIT_DEV. */
struct snrh_host_wait {
	uint32_t tid;
	uint64_t start, end, offcpu_ns;
	const char *call;
	long work; /* index into snrh_ondev.work of the work that ended it, -1 none */
	/* the CUPTI stream it synchronized (a stream synchronization record
	 * inside it), 0 any */
	uint32_t stream;
	/* a linked wait's time by the split of its ending work's device */
	uint64_t during[SNRH_SPLIT_N];
};

struct snrh_ondev {
	struct snrh_dev_stats *dev;
	size_t ndev;
	struct snrh_dev_work *work; /* sorted by (device, start) */
	size_t nwork;
	struct snrh_host_wait *waits; /* sorted by (tid, start) */
	size_t nwaits;
};

/* Builds everything from t; o is empty (ndev 0) when t has no device work. */
void snrh_ondev_build(const struct snrh_trace *t, struct snrh_ondev *o);
void snrh_ondev_free(struct snrh_ondev *o);

/* Splits [s->t0, s->t1] by the n pieces of work w (all of one device):
 * compute only, transfer only, both, queued, idle. Work outside the window
 * is clipped to it. Exposed for the known-answer tests. */
void snrh_ondev_partition(const struct snrh_dev_work *w, size_t n, struct snrh_dev_stats *s);

/* The text section of `snr host report` (nothing when there is no device
 * work), its --json object, and its Perfetto tracks and flows. */
void snrh_ondev_print(const struct snrh_ondev *o, unsigned top, FILE *out);
json_t *snrh_ondev_json(const struct snrh_ondev *o);
void snrh_ondev_trace_events(const struct snrh_ondev *o, json_t *events, long long host_pid);

#endif
