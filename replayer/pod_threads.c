/*
 * pod_threads.c: see pod_threads.h.
 */
#include "pod_threads.h"

#include <pthread.h>
#include <stdatomic.h>
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

/* ---- the crew -------------------------------------------------------------------- */

/* How long a thread of the crew polls for the next round before it sleeps:
 * rounds follow each other within microseconds while the chips run, and a
 * wake-up from sleep costs tens of them. */
#define CREW_SPIN 4000

static inline void cpu_relax(void)
{
#if defined(__x86_64__) || defined(__i386__)
	__builtin_ia32_pause();
#elif defined(__aarch64__)
	__asm__ __volatile__("yield");
#endif
}

struct snr_pod_crew {
	unsigned t; /* threads, the caller's among them */
	pthread_t *th;
	unsigned nth; /* started */
	pthread_mutex_t mu;
	pthread_cond_t go, done;
	atomic_uint gen;  /* the round: a worker runs each new one */
	atomic_bool quit;
	/* the round's work */
	void (*fn)(void *user, unsigned k);
	void *user;
	unsigned n;
	atomic_uint next; /* the next k to take */
	atomic_uint busy; /* workers still in the round */
	atomic_bool *ran; /* by thread (0: the caller): it ran some k */
};

struct crew_arg {
	struct snr_pod_crew *c;
	unsigned slot;
};

static void crew_work(struct snr_pod_crew *c, unsigned slot)
{
	for (unsigned k; (k = atomic_fetch_add(&c->next, 1)) < c->n;) {
		c->fn(c->user, k);
		if (!atomic_load_explicit(&c->ran[slot], memory_order_relaxed))
			atomic_store_explicit(&c->ran[slot], true, memory_order_relaxed);
	}
}

static void *crew_main(void *arg)
{
	struct crew_arg a = *(struct crew_arg *)arg;
	free(arg);
	struct snr_pod_crew *c = a.c;
	unsigned seen = 0;
	for (;;) {
		for (unsigned i = 0; i < CREW_SPIN && atomic_load(&c->gen) == seen && !atomic_load(&c->quit); i++)
			cpu_relax();
		if (atomic_load(&c->gen) == seen && !atomic_load(&c->quit)) {
			pthread_mutex_lock(&c->mu);
			while (atomic_load(&c->gen) == seen && !atomic_load(&c->quit))
				pthread_cond_wait(&c->go, &c->mu);
			pthread_mutex_unlock(&c->mu);
		}
		if (atomic_load(&c->quit))
			break;
		seen = atomic_load(&c->gen);
		crew_work(c, a.slot);
		if (atomic_fetch_sub(&c->busy, 1) == 1) {
			pthread_mutex_lock(&c->mu);
			pthread_cond_signal(&c->done);
			pthread_mutex_unlock(&c->mu);
		}
	}
	return NULL;
}

struct snr_pod_crew *snr_pod_crew_new(unsigned threads, unsigned chips)
{
	unsigned t = threads < chips ? threads : chips;
	if (t < 2)
		return NULL;
	struct snr_pod_crew *c = snr_xcalloc(1, sizeof(*c));
	c->t = t;
	c->th = snr_xcalloc(t - 1, sizeof(*c->th));
	c->ran = snr_xcalloc(t, sizeof(*c->ran));
	pthread_mutex_init(&c->mu, NULL);
	pthread_cond_init(&c->go, NULL);
	pthread_cond_init(&c->done, NULL);
	for (unsigned i = 0; i + 1 < t; i++) {
		struct crew_arg *a = snr_xmalloc(sizeof(*a));
		*a = (struct crew_arg){c, c->nth + 1};
		if (pthread_create(&c->th[c->nth], NULL, crew_main, a)) {
			free(a); /* fewer threads: the work is shared among those there are */
			break;
		}
		c->nth++;
	}
	return c;
}

void snr_pod_crew_run(struct snr_pod_crew *c, unsigned n, void (*fn)(void *user, unsigned k), void *user)
{
	if (!c || !c->nth) {
		for (unsigned k = 0; k < n; k++)
			fn(user, k);
		if (c && n)
			atomic_store(&c->ran[0], true);
		return;
	}
	c->fn = fn;
	c->user = user;
	c->n = n;
	atomic_store(&c->next, 0);
	atomic_store(&c->busy, c->nth);
	pthread_mutex_lock(&c->mu);
	atomic_fetch_add(&c->gen, 1);
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	crew_work(c, 0);
	for (unsigned i = 0; i < CREW_SPIN && atomic_load(&c->busy); i++)
		cpu_relax();
	if (atomic_load(&c->busy)) {
		pthread_mutex_lock(&c->mu);
		while (atomic_load(&c->busy))
			pthread_cond_wait(&c->done, &c->mu);
		pthread_mutex_unlock(&c->mu);
	}
}

unsigned snr_pod_crew_free(struct snr_pod_crew *c)
{
	if (!c)
		return 0;
	pthread_mutex_lock(&c->mu);
	atomic_store(&c->quit, true);
	pthread_cond_broadcast(&c->go);
	pthread_mutex_unlock(&c->mu);
	for (unsigned i = 0; i < c->nth; i++)
		pthread_join(c->th[i], NULL);
	unsigned used = 0;
	for (unsigned i = 0; i < c->t; i++)
		used += atomic_load(&c->ran[i]);
	pthread_mutex_destroy(&c->mu);
	pthread_cond_destroy(&c->go);
	pthread_cond_destroy(&c->done);
	free(c->th);
	free(c->ran);
	free(c);
	return used;
}
