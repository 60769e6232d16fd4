/*
 * causal.h: `snr host causal`: what speeding up each function or bucket
 * would do to each progress point, predicted by replaying the recorded
 * dependency graph (docs/host.md, "Causal profile").
 *
 * The graph: every thread of the process is a sequence of on-CPU runs and
 * off-CPU waits (the scheduler's switches). A wait that another thread of
 * the process ended (sched_waking's waker) depends on that thread reaching
 * the point where it woke it; any other wait (a timer, I/O, preemption, a
 * process outside) keeps its length. A candidate C made S% faster shrinks
 * every run by S% of the time C spent in it (the run's on-CPU samples in C
 * over its samples; a run without samples takes its thread's share of C);
 * a bucket candidate also shrinks the waits in that bucket that no thread
 * of the process ended. The replay walks the runs and waits in the order
 * they ended, moving each one's end to its new time, and reads the
 * progress marks off the new timeline. With no speedup it gives back the
 * recorded times exactly. Device kernels and transfers are candidates
 * too (causal_device.h).
 */
#ifndef SNR_HOST_CAUSAL_H
#define SNR_HOST_CAUSAL_H

#include <jansson.h>
#include <stdio.h>

#include "analyzer/progress.h"
#include "lib/snr_host_trace.h"

struct snrh_causal_effect {
	double throughput_pct;   /* predicted rate / recorded rate - 1, in % */
	double latency_p50_pct;  /* of the latency (or inter-arrival) p50 */
	double latency_p99_pct;
};

enum { SNRH_CAUSAL_KERNEL = 1, SNRH_CAUSAL_TRANSFER = 2 };

struct snrh_causal_cand {
	char *name;     /* function, bucket ("H:APP"), kernel name or transfer kind */
	bool bucket;
	int device_kind; /* 0, or SNRH_CAUSAL_KERNEL / SNRH_CAUSAL_TRANSFER: a device candidate */
	char *device;    /* a device candidate's device ("GPU 0 (CUPTI)") */
	size_t pieces;   /* its pieces of work ... */
	double device_ms; /* ... and their time on the device */
	double device_pct; /* that time, of the device's window */
	struct causal_dev_cover *cover; /* what the replay shrinks (causal_device.c) */
	char *module;   /* a function's module */
	char *file;     /* DWARF place of its most-sampled pc, or NULL */
	unsigned line;
	uint64_t pc;    /* that pc (module-relative for a shared object) */
	size_t samples; /* on-CPU samples with it as the leaf (self) or in the bucket */
	double self_ms;  /* samples x 1/HZ */
	double self_pct; /* of all the process's samples */
	double off_ms;   /* a bucket's waits that the replay shrinks */
	struct snrh_causal_effect *effect; /* [speedup][point] */
};

struct snrh_causal {
	int npoints;
	struct snrh_point *points;
	struct snrh_point_stats *base; /* per point, as recorded */
	unsigned nspeedups;
	double *speedups; /* percent */
	size_t ncands;
	struct snrh_causal_cand *cands; /* ranked by effect at the largest speedup */
	size_t threads, runs, waits, dependent_waits, samples;
	size_t device_timelines; /* of the threads: CUPTI devices' timelines (causal_device.h) */
	double hz;
	struct causal_model *model; /* the graph (causal.c) */
};

/* Builds the model of t and predicts every candidate at every speedup
 * (percent, 0 < s < 100). Returns 0, or -1 with err (no progress point,
 * no samples, malformed META). */
int snrh_causal_run(const struct snrh_trace *t, const double *speedups, unsigned nspeedups, struct snrh_causal *out,
		    char *err, size_t errlen);
void snrh_causal_free(struct snrh_causal *c);

/* The prediction for one candidate with the runs it names shrunk by
 * speedup_pct: exposed for tests (a speedup of 0 must give the recorded
 * figures back). cand indexes c->cands. */
void snrh_causal_predict(const struct snrh_causal *c, size_t cand, double speedup_pct,
			 struct snrh_causal_effect *per_point);

void snrh_causal_text(const struct snrh_causal *c, FILE *out);
/* Where a candidate is, as the text view names it: "file.c:LINE 0xPC", a
 * function's module+0xPC without lines, "(bucket)", or a device's name. */
const char *snrh_causal_where(const struct snrh_causal_cand *cd, char *buf, size_t len);
/* A hot function (of the on-CPU samples) or device candidate (of its
 * device's window) that moves no point at the largest speedup. */
bool snrh_causal_off_path(const struct snrh_causal *c, const struct snrh_causal_cand *cd);
/* {"progress": [...], "candidates": [{"function"|"bucket"|"kernel"|"transfer", "file", "line",
 * "speedup_pct", "effect": {"POINT": {...}}}, ...], "model": {...}} */
json_t *snrh_causal_json(const struct snrh_causal *c);

#endif
