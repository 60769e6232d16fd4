/*
 * host_device_lanes.h: the device's work as lanes of the host page's
 * timeline (analyzer/report_host.c): one lane per CUPTI (device, stream) and
 * one per device thread of the TA1 runtime (one per ta1rt_open, its chips
 * together), each piece of work an interval on the host threads' time axis
 * (CLOCK_MONOTONIC; CUPTI's records are already mapped onto it when its file
 * is read), named, with the host thread that launched it; and each host wait
 * (H:WAIT_DEV) on its thread's lane, linked to the work whose completion
 * ended it (analyzer/host_device.c).
 */
#ifndef SNR_HOST_DEVICE_LANES_H
#define SNR_HOST_DEVICE_LANES_H

#include <jansson.h>
#include <stdint.h>

#include "analyzer/host_device.h"
#include "lib/snr_host_trace.h"

/* {lanes: [name], lane_source: ["CUPTI" | "libta1rt" | "probes"],
 *  work: [[lane, start_ms, end_ms, xfer, name, bytes, launched_by, seq, submit_ms, direction]],
 *  work_total, waits: [[thread_lane, start_ms, end_ms, call, work]], waits_total}
 * Times are ms from t0; thread_lane indexes t->threads; work indexes the
 * drawn work (-1: nothing completed in the wait, or that work is not drawn);
 * launched_by is "comm tid", "" unknown; direction a copy's, "" for compute. Past max pieces of work (or of
 * waits) the longest are kept. */
json_t *snrh_device_lanes_json(const struct snrh_trace *t, const struct snrh_ondev *o, uint64_t t0,
			       size_t max);

/* A copy's direction in words ("host to device", ...), from its CUPTI copy
 * kind or libta1rt's upload; NULL for compute and unknown kinds. */
const char *snrh_work_direction(const struct snrh_dev_work *w);

#endif
