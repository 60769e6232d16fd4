/*
 * host_events.h: a host trace's libta1rt launches and its Chrome/Perfetto
 * trace events (analyzer/host_events.c), for `snr host report
 * --trace-events` and `snr export perfetto`.
 */
#ifndef SNR_HOST_EVENTS_H
#define SNR_HOST_EVENTS_H

#include <jansson.h>

#include "lib/snr_host_trace.h"

/* A libta1rt launch as the host saw it: the ta1rt_launch call
 * [start, call_end) on thread tid, and end, the return of the ta1rt_wait
 * that followed it on that thread (call_end if none did). */
struct snrh_launch {
	uint32_t tid;
	uint64_t start, end, call_end;
};
/* The trace's libta1rt launches sorted by start (*out malloc'd); count. */
size_t snrh_ta1_launches(const struct snrh_trace *t, struct snrh_launch **out);

/* Trace-event JSON (the Chrome/Perfetto "traceEvents" format), tracks as
 * tabulated in host_events.c: appends the events to `events`, timestamps in
 * microseconds on the trace's clock (CLOCK_MONOTONIC). Used by `snr host
 * report --trace-events` and `snr export perfetto`, which puts replayed
 * device metrics on the same clock. */
#define SNRH_EV_PID_TA1 900000      /* libta1rt device process */
#define SNRH_EV_PID_GPU 1000000     /* + CUPTI device id */
#define SNRH_EV_TID_CALLS 0x40000000 /* + tid: a thread's probed calls */
#define SNRH_EV_TID_CUDA 0x50000000  /* + tid: its CUPTI API records */
#define SNRH_EV_TID_SYNC 0x60000000  /* a GPU's synchronization track */
#define SNRH_EV_TID_ONDEV 0x70000000 /* + stride x device: on/off-device tracks (analyzer/host_device.c) */
#define SNRH_EV_ONDEV_STRIDE 1024
void snrh_trace_events(const struct snrh_trace *t, json_t *events);
/* How to dump those events: timestamps are ns / 1e3 as doubles, and 15
 * significant digits print them as the exact decimal of whole nanoseconds
 * (for clocks under 10^12 us, 11 days of uptime) instead of the double's
 * 17 digits, so a slice's ts + dur equals the ts of the slice that starts
 * where it ends, in decimal. */
#define SNRH_EV_JSON_FLAGS (JSON_COMPACT | JSON_REAL_PRECISION(15))

#endif
