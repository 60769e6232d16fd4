/*
 * pod.h: the replay of a pod recording (`snr record --pod`): every chip's
 * window in one timing simulation, on one functional machine and one fabric,
 * the chips' shared instructions put in time order by the device's scheduler
 * (device/pod_sched.h), their private stretches on threads, each chip's pcs
 * and end state verified against its own trace.
 */
#ifndef SNR_REPLAY_POD_H
#define SNR_REPLAY_POD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <jansson.h>

#include "replayer/replay.h"

struct snr_pod_replay_chip {
	unsigned chip;
	char *trace; /* its trace's path */
	struct snr_replay_result r; /* cycles: the chip's own clock, drained; ok: its pcs and end state */
};

struct snr_pod_replay {
	unsigned chips;
	struct snr_pod_replay_chip *chip;
	uint64_t cycles; /* the pod's: the last chip's end */
	bool ok;         /* every chip verified */
	unsigned threads; /* the most threads a per-chip part of the replay ran on (replayer/pod_threads.h) */
	unsigned sim_threads; /* the threads that ran chips' private stretches of the timing simulation
			       * (replayer/pod.c; 1: the caller's alone) */
	char report[4096]; /* on divergence: the chip, the instruction, what differs */
};

/* Replays the pod recording at dir (o->config_path may override the
 * recorded machine config; o->sim must be NULL or "ta1"). 0 when the replay
 * ran (r->ok says whether every chip verified), -1 when it could not, with
 * err filled. */
int snr_pod_replay(const char *dir, const struct snr_replay_opts *o, struct snr_pod_replay *r, char *err,
		   size_t errlen);
void snr_pod_replay_free(struct snr_pod_replay *r);

/* A what-if of the pod (`snr analyze suggest POD --verify`): chip `chip`'s
 * window runs its instructions in `order` (every index of the window once,
 * by its recorded index; those `moved` marks taken earlier), the other
 * chips' as recorded.
 * As snr_pod_replay otherwise: r->ok says whether every chip's pcs (chip
 * `chip`'s after each instruction as recorded) and end state matched the
 * recording, r->cycles the pod's. o->metrics_path must be NULL. */
struct snr_pod_reorder {
	unsigned chip;
	const uint64_t *order;
	const uint8_t *moved; /* by position in order: taken earlier (runs on registers of its own, its
			       * writes seen from its recorded index on, as a compiler allocates them) */
	uint64_t n;
};
int snr_pod_replay_reordered(const char *dir, const struct snr_replay_opts *o, const struct snr_pod_reorder *ro,
			     struct snr_pod_replay *r, char *err, size_t errlen);

/* `snr replay POD --json`: {"pod", "chips": [{"chip", "cycles",
 * "instructions", "verified", ...}], "cycles", "verified"}. New reference. */
json_t *snr_pod_replay_json(const char *dir, const struct snr_pod_replay *r);

#endif
