/*
 * progress.h: progress points and request latency from a host trace's marks
 * (`snr host record --progress SYM --latency BEGIN:END`): each point's
 * units of work (one per --progress call, one per matched --latency pair),
 * their count, rate and latency or inter-arrival distribution, over the
 * whole run and over time (docs/host.md, "Progress points").
 */
#ifndef SNR_HOST_PROGRESS_H
#define SNR_HOST_PROGRESS_H

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>

#include "lib/snr_host_trace.h"

/* One unit of work: where and when it ended (and, for a request, began). */
struct snrh_unit {
	uint64_t end, begin; /* begin = end for a --progress point */
	uint32_t tid, btid;
};

struct snrh_point {
	const char *name; /* META's, owned by the trace */
	bool latency;     /* --latency (begin/end pairs), else --progress */
	SNRH_VEC(struct snrh_unit) u; /* by end time */
	size_t unmatched; /* --latency: begins or ends without their other half */
};

/* The points META.progress names, their units built from t->marks.
 * Returns the number of points (0: the trace has none), or -1 with err
 * naming what in META is malformed. */
int snrh_points_build(const struct snrh_trace *t, struct snrh_point **out, char *err, size_t errlen);
void snrh_points_free(struct snrh_point *p, int n);

/* Figures of a set of units. Rate: units per second between the first and
 * the last end, (n - 1) / (last - first). Latency: end - begin of each
 * request; for a --progress point the inter-arrival time (the time between
 * consecutive units: inter-token latency), in milliseconds. */
struct snrh_point_stats {
	size_t count;
	double per_second, span_s;
	double p50_ms, p90_ms, p99_ms, max_ms; /* latency or inter-arrival */
	bool have_latency;                      /* at least one interval */
};
/* ends[i] (sorted) and, for requests, lat_ns[i]; n units. */
void snrh_point_stats(const uint64_t *ends, const uint64_t *lat_ns, size_t n, struct snrh_point_stats *s);
/* The same for a point as recorded. */
void snrh_point_stats_of(const struct snrh_point *p, struct snrh_point_stats *s);
/* The nearest-rank q-quantile (0..1) of v[0..n) (sorted in place). */
double snrh_quantile_u64(uint64_t *v, size_t n, double q);

/* The text section of `snr host report`: each point over the whole run and
 * in up to `windows` equal slices of its span (times in seconds from t0,
 * the trace's start). Prints nothing without points. */
void snrh_progress_report(const struct snrh_point *p, int n, uint64_t t0, unsigned windows, FILE *out);
/* [{"name", "kind", "count", "per_second", "span_s", "unmatched",
 *   "latency_ms" | "interarrival_ms": {"p50","p90","p99","max"},
 *   "over_time": [{"start_s","end_s","count","per_second","p50_ms","p99_ms"}]}] */
json_t *snrh_progress_json(const struct snrh_point *p, int n, uint64_t t0, unsigned windows);

#endif
