/*
 * pod_threads.c: see pod_threads.h.
 */
#include "pod_threads.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/snr_util.h"

unsigned snr_pod_threads_default(unsigned chips)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	unsigned t = cpus > 0 ? (unsigned)cpus : 1;
	if (t > chips)
		t = chips;
	return t ? t : 1;
}

struct worker {
	pthread_t th;
	bool started;
	unsigned first, stride, n;
	void (*fn)(void *user, unsigned k);
	void *user;
	long *tid; /* by chip: the thread that ran it */
};

static void run_share(struct worker *w)
{
	long tid = (long)syscall(SYS_gettid);
	for (unsigned k = w->first; k < w->n; k += w->stride) {
		w->fn(w->user, k);
		w->tid[k] = tid;
	}
}

static void *worker_main(void *arg)
{
	run_share(arg);
	return NULL;
}

unsigned snr_pod_each_chip(unsigned threads, unsigned n, void (*fn)(void *user, unsigned k), void *user)
{
	if (!n)
		return 0;
	unsigned t = threads ? threads : 1;
	if (t > n)
		t = n;
	long *tid = snr_xcalloc(n, sizeof(*tid));
	struct worker *w = snr_xcalloc(t, sizeof(*w));
	for (unsigned i = 0; i < t; i++)
		w[i] = (struct worker){.first = i, .stride = t, .n = n, .fn = fn, .user = user, .tid = tid};
	for (unsigned i = 1; i < t; i++)
		w[i].started = pthread_create(&w[i].th, NULL, worker_main, &w[i]) == 0;
	run_share(&w[0]);
	for (unsigned i = 1; i < t; i++) {
		if (w[i].started)
			pthread_join(w[i].th, NULL);
		else
			run_share(&w[i]); /* no thread for it: its chips run here */
	}
	unsigned distinct = 0;
	for (unsigned k = 0; k < n; k++) {
		bool seen = false;
		for (unsigned j = 0; j < k && !seen; j++)
			seen = tid[j] == tid[k];
		distinct += !seen;
	}
	free(w);
	free(tid);
	return distinct;
}
