/*
 * test_pod_crew.c: the crew that runs a pod replay's private stretches
 * (replayer/pod_threads.h). Every k of a round runs exactly once, rounds
 * follow each other without losing or repeating work, the crew's threads
 * run at once (a round whose items each wait for the other to start ends
 * only if two threads hold them together), a crew of one thread is the
 * caller alone, and the count of threads that ran work is right.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "replayer/pod_threads.h"
#include "tests/check.h"

#define N 37

struct counts {
	atomic_uint hits[N];
	atomic_uint round_sum;
};

static void count_fn(void *user, unsigned k)
{
	struct counts *c = user;
	atomic_fetch_add(&c->hits[k], 1);
	atomic_fetch_add(&c->round_sum, k + 1);
}

/* Both items of the round wait, up to 10 s, until the other has started. */
struct meet {
	atomic_uint started;
	atomic_bool met[2];
};

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void meet_fn(void *user, unsigned k)
{
	struct meet *m = user;
	atomic_fetch_add(&m->started, 1);
	double end = now_s() + 10;
	while (atomic_load(&m->started) < 2 && now_s() < end)
		;
	atomic_store(&m->met[k], atomic_load(&m->started) >= 2);
}

int main(void)
{
	/* one thread asked for, or one chip: no crew; the caller runs every k */
	CHECK(snr_pod_crew_new(1, 8) == NULL, "a crew of one thread");
	CHECK(snr_pod_crew_new(4, 1) == NULL, "a crew for one chip");
	struct counts one;
	memset(&one, 0, sizeof(one));
	snr_pod_crew_run(NULL, N, count_fn, &one);
	for (unsigned k = 0; k < N; k++)
		CHECK(atomic_load(&one.hits[k]) == 1, "no crew: k %u ran %u times", k, atomic_load(&one.hits[k]));
	CHECK(snr_pod_crew_free(NULL) == 0, "no crew: no threads");

	for (unsigned threads = 2; threads <= 5; threads++) {
		struct snr_pod_crew *crew = snr_pod_crew_new(threads, 16);
		CHECK(crew != NULL, "a crew of %u threads", threads);
		/* the threads run at once */
		struct meet m;
		memset(&m, 0, sizeof(m));
		snr_pod_crew_run(crew, 2, meet_fn, &m);
		CHECK(atomic_load(&m.met[0]) && atomic_load(&m.met[1]),
		      "%u threads: the round's two items did not run at once", threads);
		/* many rounds, of every size from 0 to N: each k once per round */
		struct counts c;
		memset(&c, 0, sizeof(c));
		unsigned rounds = 0, want_sum = 0;
		for (unsigned r = 0; r < 400; r++) {
			unsigned n = r % (N + 1);
			snr_pod_crew_run(crew, n, count_fn, &c);
			want_sum += n * (n + 1) / 2;
			rounds++;
		}
		unsigned bad = 0;
		for (unsigned k = 0; k < N; k++) {
			/* k runs in every round of more than k items */
			unsigned want = 0;
			for (unsigned r = 0; r < rounds; r++)
				want += r % (N + 1) > k;
			bad += atomic_load(&c.hits[k]) != want;
		}
		CHECK(bad == 0, "%u threads: %u items ran a wrong number of times", threads, bad);
		CHECK(atomic_load(&c.round_sum) == want_sum, "%u threads: sum %u, want %u", threads,
		      atomic_load(&c.round_sum), want_sum);
		unsigned used = snr_pod_crew_free(crew);
		CHECK(used >= 2 && used <= threads, "%u threads: %u ran work", threads, used);
	}
	return check_report("test_pod_crew");
}
