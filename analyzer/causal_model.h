/*
 * causal_model.h: the causal profile's dependency graph, shared by
 * causal.c (threads, function and bucket candidates, the replay) and
 * causal_device.c (device kernels and transfers). Internal to the
 * analyzer.
 */
#ifndef SNR_HOST_CAUSAL_MODEL_H
#define SNR_HOST_CAUSAL_MODEL_H

#include <stdint.h>

#include "lib/snr_host_trace.h"

struct item {
	uint64_t a, b;
	uint32_t waker_th; /* a wait ended by a thread of the process: its index + 1, else 0 */
	uint8_t off, state;
	uint16_t bucket;     /* a wait's bucket id + 1 (0: none) */
	uint32_t s0, s1;     /* a run's samples: [s0, s1) of its thread's */
	/* a dependent wait: the waker's time at the wake-up, 0 when the
	 * wait's own end stands for it (the scheduler's edges) */
	uint64_t wake_at;
};

struct thread_tl {
	uint32_t tid;
	SNRH_VEC(struct item) it;
	uint32_t *sfunc, *sbucket; /* per sample of the thread (by time): function id + 1, bucket id */
	size_t nsamples;
	double *share; /* [candidate]: the thread's samples in it / its samples */
	/* replay state */
	double *nend;
	size_t done;
};

struct order {
	uint64_t b;
	uint32_t th, i;
	uint32_t off; /* a wait (1) or a run (0) */
};

struct causal_model {
	struct thread_tl *th;
	size_t nth;
	struct order *ord;
	size_t nord;
	size_t nfuncs;       /* function ids: 0..nfuncs-1 */
	uint32_t *func_sym;  /* id -> string */
	size_t nbuckets;
	const char **bucket_names;
	/* candidate -> (kind, id): function id, or bucket id */
	uint32_t *cand_id;
};

/* A device candidate's time in each run of its device's thread: the
 * replay shrinks run i of thread tid by ns[i] x the speedup. */
struct causal_dev_cover {
	uint32_t tid;
	double *ns; /* [item of the thread]; 0 for waits */
};

#endif
