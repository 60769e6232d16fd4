/*
 * replay.h: the replayer, the "Replay" of Snap & Replay: load a trace into a
 * simulator, run the recorded instructions, prove it ran what was recorded
 * (every pc, then the end state against the trace's digest), and collect the
 * tracker's events.
 */
#ifndef SNR_REPLAY_H
#define SNR_REPLAY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/snr_trace.h"
#include "sim/snr_sim.h"
#include "sim/snr_tracker.h"

struct snr_replay_opts {
	const char *trace_path;
	const char *sim;          /* "ta1", "unicorn", a PATH.so, or NULL: by the trace's ISA */
	const char *config_path;  /* overrides the trace's machine config */
	const char *config_json;  /* or this config text (a metrics file's), if no config_path */
	const char *config_source;/* names config_json in messages */
	/* Refuse a trace whose identity is not this (a metrics file's record
	 * of the trace it came from, named by expect_from), or NULL. */
	const struct snr_trace_id *expect_id;
	const char *expect_from;
	const struct snr_sim_ops *sim_ops; /* a simulator given directly (overrides sim), or NULL */
	const char *metrics_path; /* write a .snrm, or NULL */
	const struct snr_tracker *tracker; /* the caller's own tracker too, or NULL */
	bool progress;
	/* A pod's replay: the threads its per-chip parts run on (replayer/
	 * pod_threads.h); 0: the online CPUs, at most the chips. */
	unsigned threads;
#define SNR_REPLAY_MAX_THREADS 1024
	/* Run the cache model (sim/snr_cache.h, the config's "cache" object) on
	 * the simulator's memory events and print the instructions with the
	 * most misses here, or NULL. */
	FILE *cache_report;
	unsigned cache_report_rows; /* 0: 20 */
};

struct snr_replay_result {
	uint64_t instructions; /* replayed */
	uint64_t recorded;     /* in the trace */
	uint64_t cycles;
	uint64_t stall_cycles[SNR_STALL_COUNT];
	uint64_t dma_count, dma_bytes;
	bool truncated;        /* the trace was cut short; replayed what it has */
	bool interrupted;      /* its recording was ended by SIGINT or SIGTERM */
	bool exited;           /* the program ended inside the window */
	bool end_state_checked;/* the trace had a digest and it was compared */
	bool ok;               /* every pc matched and the end state matched */
	char report[4096];     /* on divergence: where and what differs */
	double seconds;
};

/* Returns 0 when the replay ran (check result->ok for divergence), -1 when
 * it could not (bad trace, simulator error), with err filled. */
int snr_replay(const struct snr_replay_opts *o, struct snr_replay_result *r, char *err, size_t errlen);

/* The replay's summary as JSON (new reference): instructions, cycles, ipc,
 * stall_cycles by cause, dma_count, dma_bytes, verified, end_state_checked,
 * truncated_trace, program_exited. The metrics file's SUMMARY, `snr replay
 * --json` and the goldens of `snr check` are this object. */
json_t *snr_replay_summary(const struct snr_replay_result *r);

/* What `snr replay T --json` prints of one window: the summary, "trace"
 * (the path as given) and, on divergence, "report". `snr sweep` stores each
 * point's windows as this object, so that a point is byte for byte the
 * replay of its config. A new reference. */
json_t *snr_replay_json(const char *trace_path, const struct snr_replay_result *r);

/* The simulator for a name or path (dlopen), or NULL with err filled. */
const struct snr_sim_ops *snr_sim_find(const char *name, const char *isa, char *err, size_t errlen);

#endif
