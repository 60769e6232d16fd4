/*
 * host_report.h: `snr host report`: per-thread on/off-CPU time by state and
 * by gPerf bucket, the top off-CPU stacks, folded stacks for flame graphs,
 * and trace-event JSON.
 */
#ifndef SNR_HOST_REPORT_H
#define SNR_HOST_REPORT_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "lib/snr_host_trace.h"

struct snrh_report_opts {
	unsigned top;              /* off-CPU stacks to print */
	const char *folded_prefix; /* writes PREFIX.oncpu.folded and PREFIX.offcpu.folded */
	const char *trace_events;  /* writes trace-event JSON */
	const char *truncated;     /* why the trace is incomplete, or NULL */
	int json;                  /* print JSON (threads, on/off-device) instead of text */
};

/* The bucket a thread's instant falls in: the probed API call around it,
 * else the I/O system call, else NULL (H:APP on CPU, unattributed off CPU). */
struct snrh_bucketer;
struct snrh_bucketer *snrh_bucketer_new(const struct snrh_trace *t);
void snrh_bucketer_free(struct snrh_bucketer *b);
const char *snrh_bucket_at(const struct snrh_bucketer *b, uint32_t tid, uint64_t ts);
/* The same, then H:IO when the kernel stack taken at that instant is inside
 * a file or network system call (the default record traces no system
 * calls, see docs/host.md). */
const char *snrh_bucket_for(const struct snrh_bucketer *b, uint32_t tid, uint64_t ts, int32_t kstack);

int snrh_report(const struct snrh_trace *t, const struct snrh_report_opts *o, FILE *out);
/* `snr host report --json`'s document: pid, t_start_ns, t_end_ns,
 * truncated, threads (the scheduler's exact totals), buckets (per thread:
 * in-call time, on-CPU samples and their estimated time, off-CPU time),
 * on_off_device and progress. NULL with err when the progress points
 * cannot be built (a malformed META). */
json_t *snrh_report_doc(const struct snrh_trace *t, bool truncated, char *err, size_t errlen);

#endif
