/*
 * host_facts.c: a process whose host profile is known in advance, for
 * tests/host/host_record.sh.
 *   host_facts            a "sleeper" thread sleeps 4 x 50 ms (200 ms off-CPU,
 *                         state S, through nanosleep) while main burns 0.5 s
 *                         of CPU in spin_loop
 *   host_facts spin S     burns S seconds of CPU in spin_loop (overhead runs)
 *   host_facts forever    sleeps in a loop until killed (detach tests)
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Burns `seconds` of this thread's CPU time (not wall time, so a loaded
 * machine does not change the number of samples it should get). */
__attribute__((noinline)) static unsigned long spin_loop(double seconds)
{
	volatile unsigned long x = 0;
	double end = cpu_seconds() + seconds;
	while (cpu_seconds() < end)
		for (int i = 0; i < 100000; i++)
			x += (unsigned long)i * 2654435761u;
	return x;
}

__attribute__((noinline)) static void sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static void *sleeper_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	for (int i = 0; i < 4; i++)
		sleep_ms(50);
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "forever")) {
		for (;;)
			sleep_ms(20);
	}
	if (argc > 2 && !strcmp(argv[1], "spin")) {
		double s = atof(argv[2]);
		struct timespec a, b;
		clock_gettime(CLOCK_MONOTONIC, &a);
		spin_loop(s);
		clock_gettime(CLOCK_MONOTONIC, &b);
		printf("spin %.3f s cpu in %.3f s wall\n", s, (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
		return 0;
	}
	pthread_t t;
	pthread_create(&t, NULL, sleeper_main, NULL);
	spin_loop(0.5);
	pthread_join(t, NULL);
	printf("facts done\n");
	return 0;
}
