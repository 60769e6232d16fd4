/*
 * causal_tokens.c: a token loop whose work is split across threads, the
 * known answer for `snr host causal` (tests/host/host_causal.sh).
 *
 * Each token: the main thread starts two workers, which run work_a and
 * work_b in parallel; when both are done the main thread runs serial_step
 * and emits the token (emit_token, the progress point), bracketed by
 * request_begin(i) / request_end(i) (a latency point matched by argument).
 * work_a is the longer branch, so it and serial_step gate the tokens;
 * work_b finishes first and waits: off the critical path.
 *
 * The work is a fixed number of iterations of a dependent multiply-add
 * chain (CPU work, not wall time: a preempted thread still owes all of it).
 * -DFAST_A, -DFAST_B, -DFAST_S make work_a, work_b or serial_step do 20%
 * fewer iterations: 20% faster for real. Built at -O2 without frame
 * pointers, as users build.
 *
 * usage: causal_tokens [TOKENS [fifo]] ; prints "tokens_per_s R" measured
 * between the 5th and the last token (CLOCK_MONOTONIC), and "token_ms_median
 * M", the median time from one token to the next over the same tokens: a
 * virtual CPU that the host lends elsewhere now and then (a token or a
 * stretch of tokens taking up to twice as long, no steal reported in the
 * guest) moves the mean rate of a run by several percent, the median token
 * hardly at all. With `fifo` (root)
 * the process runs under SCHED_FIFO priority 10, it and its threads, so the
 * other jobs of a loaded shared machine do not preempt it: a 7% effect is
 * then measurable in a few runs (at load 16 on 2 CPUs the spread between
 * runs was about 1%, against 20% without).
 */
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifndef A_ITERS
#define A_ITERS 5000000ull /* the long branch */
#endif
#ifndef B_ITERS
#define B_ITERS 3000000ull /* the short branch */
#endif
#ifndef S_ITERS
#define S_ITERS 2500000ull /* the serial step */
#endif
#define FASTER(n) ((n) * 4 / 5)

#ifdef FAST_A
static const uint64_t a_iters = FASTER(A_ITERS);
#else
static const uint64_t a_iters = A_ITERS;
#endif
#ifdef FAST_B
static const uint64_t b_iters = FASTER(B_ITERS);
#else
static const uint64_t b_iters = B_ITERS;
#endif
#ifdef FAST_S
static const uint64_t s_iters = FASTER(S_ITERS);
#else
static const uint64_t s_iters = S_ITERS;
#endif

static volatile uint64_t sink;
static pthread_mutex_t mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t go_cv = PTHREAD_COND_INITIALIZER, done_cv = PTHREAD_COND_INITIALIZER;
static unsigned generation, done, stop;

/* The chain's body, in each function itself (its self time is its own). */
#define CHAIN(n, seed)                                                                                     \
	do {                                                                                               \
		uint64_t x_ = (seed);                                                                      \
		for (uint64_t i_ = 0; i_ < (n); i_++)                                                      \
			x_ = x_ * 6364136223846793005ull + 1442695040888963407ull;                         \
		sink = x_;                                                                                 \
	} while (0)

__attribute__((noinline)) void work_a(uint64_t seed) { CHAIN(a_iters, seed); }
__attribute__((noinline)) void work_b(uint64_t seed) { CHAIN(b_iters, seed); }
__attribute__((noinline)) void serial_step(uint64_t seed) { CHAIN(s_iters, seed); }
__attribute__((noinline)) void emit_token(uint64_t i) { sink = i; __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void request_begin(uint64_t id) { sink = id; __asm__ volatile("" ::: "memory"); }
__attribute__((noinline)) void request_end(uint64_t id) { sink = id; __asm__ volatile("" ::: "memory"); }

static void *worker(void *arg)
{
	int which = (int)(intptr_t)arg;
	unsigned seen = 0;
	for (;;) {
		pthread_mutex_lock(&mu);
		while (generation == seen && !stop)
			pthread_cond_wait(&go_cv, &mu);
		if (stop) {
			pthread_mutex_unlock(&mu);
			return NULL;
		}
		seen = generation;
		pthread_mutex_unlock(&mu);
		if (which == 0)
			work_a(seen);
		else
			work_b(seen);
		pthread_mutex_lock(&mu);
		done++;
		/* every finish wakes the main thread: it waits for both */
		pthread_cond_signal(&done_cv);
		pthread_mutex_unlock(&mu);
	}
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	unsigned tokens = argc > 1 ? (unsigned)atoi(argv[1]) : 100;
	if (tokens < 10) {
		fprintf(stderr, "causal_tokens: want at least 10 tokens\n");
		return 2;
	}
	if (argc > 2 && !strcmp(argv[2], "fifo")) {
		struct sched_param sp = {.sched_priority = 10};
		if (sched_setscheduler(0, SCHED_FIFO, &sp)) {
			perror("causal_tokens: sched_setscheduler(SCHED_FIFO)");
			return 1;
		}
	}
	pthread_t th[2];
	for (int i = 0; i < 2; i++)
		if (pthread_create(&th[i], NULL, worker, (void *)(intptr_t)i)) {
			fprintf(stderr, "causal_tokens: pthread_create failed\n");
			return 1;
		}
	double t5 = 0, *at = calloc(tokens, sizeof(*at));
	if (!at) {
		fprintf(stderr, "causal_tokens: out of memory\n");
		return 1;
	}
	for (unsigned k = 0; k < tokens; k++) {
		request_begin(k);
		pthread_mutex_lock(&mu);
		done = 0;
		generation++;
		pthread_cond_broadcast(&go_cv);
		while (done < 2)
			pthread_cond_wait(&done_cv, &mu);
		pthread_mutex_unlock(&mu);
		serial_step(k);
		request_end(k);
		emit_token(k);
		at[k] = now_s();
		if (k == 4)
			t5 = at[k];
	}
	double t_end = now_s();
	pthread_mutex_lock(&mu);
	stop = 1;
	pthread_cond_broadcast(&go_cv);
	pthread_mutex_unlock(&mu);
	for (int i = 0; i < 2; i++)
		pthread_join(th[i], NULL);
	printf("tokens_per_s %.4f\n", (double)(tokens - 5) / (t_end - t5));
	/* the intervals after the 5th token, sorted */
	unsigned n = tokens - 5;
	double *iv = calloc(n, sizeof(*iv));
	if (!iv) {
		fprintf(stderr, "causal_tokens: out of memory\n");
		return 1;
	}
	for (unsigned i = 0; i < n; i++)
		iv[i] = at[i + 5] - at[i + 4];
	qsort(iv, n, sizeof(*iv), cmp_double);
	double med = n % 2 ? iv[n / 2] : (iv[n / 2 - 1] + iv[n / 2]) / 2;
	printf("token_ms_median %.4f\n", med * 1e3);
	free(iv);
	free(at);
	return 0;
}
