/*
 * pod.h: `snr record --pod`, every chip of a TA1 pod recorded in one run
 * (docs/recording.md, "A pod").
 */
#ifndef SNR_POD_H
#define SNR_POD_H

#include "recorder/record.h"

#define SNR_POD_MAX_CHIPS 256

struct snr_pod_summary {
	unsigned chips;
	const char *set_path; /* the trace set written (o->out_path), or its .partial folder */
	char partial[4096];
	struct snr_record_summary chip[SNR_POD_MAX_CHIPS];
	uint64_t at_pc[SNR_POD_MAX_CHIPS]; /* where each chip's window ended */
};

/*
 * Records every chip of the pod behind o->target (snr device, through the
 * rsp backend in its pod mode) into the trace set o->out_path: one trace per
 * chip (window-K.snrt is chip K's) and a manifest saying it is a pod. Each
 * chip's window starts at its own (skip+1)-th hit of the breakpoint; no
 * window starts before every chip has hit (chips at their hit stay stopped
 * meanwhile), and a chip that cannot reach it (it exits, faults, or waits
 * for a chip already stopped) fails the recording, named. Then the chips
 * are stepped in turns, one chip at a time and nothing else running, each
 * window ending by --count or --until-return; a step of a chip blocked at a
 * ta.wait passes the turn. A pod-wide deadlock (every chip still in its
 * window blocked) fails the recording naming each chip's wait. o->chip,
 * o->windows and o->method "sim" are not taken. 0, or -1 with err filled.
 */
int snr_record_pod(const struct snr_record_opts *o, struct snr_pod_summary *sum, char *err, size_t errlen);

#endif
