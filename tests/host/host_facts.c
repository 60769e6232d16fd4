/*
 * host_facts.c: a process whose host profile is known in advance, for
 * tests/host/host_record.sh.
 *   host_facts            a "sleeper" thread sleeps 4 x 50 ms (200 ms off-CPU,
 *                         state S, through nanosleep; it prints the wall time
 *                         it measured around them) while main burns 0.5 s
 *                         of CPU in spin_loop
 *   host_facts spin S     burns S seconds of CPU in spin_loop (overhead runs)
 *   host_facts forever    sleeps in a loop until killed (detach tests)
 *   host_facts exact [N]  one thread alternates sleep_200ms and spin_200ms
 *                         N times (default 10): 2 s off-CPU in state S in
 *                         sleep_200ms, 2 s of wall time spinning in
 *                         spin_200ms; prints the times it measured itself
 *                         (sleep wall, spin wall, spin thread-CPU)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

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

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* The nanosleep system call issued from this function itself, not from
 * libc (which has no frame pointers here): the user stack at switch-out
 * then starts in sleep_200ms, so the test can attribute the block to it. */
__attribute__((noinline)) static void sleep_200ms(void)
{
	struct timespec ts = {0, 200000000L};
#if defined(__x86_64__)
	long ret;
	__asm__ volatile("syscall" : "=a"(ret) : "a"((long)SYS_nanosleep), "D"(&ts), "S"(0L) : "rcx", "r11", "memory");
	(void)ret;
#else
	nanosleep(&ts, NULL);
#endif
}

/* Busy for 200 ms of wall time (CLOCK_MONOTONIC), checking the clock every
 * ~20k iterations so nearly every sample lands in this function. */
__attribute__((noinline)) static unsigned long spin_200ms(void)
{
	volatile unsigned long x = 0;
	uint64_t end = now_ns(CLOCK_MONOTONIC) + 200000000ull;
	while (now_ns(CLOCK_MONOTONIC) < end)
		for (int i = 0; i < 20000; i++)
			x += (unsigned long)i * 2654435761u;
	return x;
}

static int exact(int n)
{
	uint64_t sleep_wall = 0, spin_wall = 0, spin_cpu = 0;
	for (int i = 0; i < n; i++) {
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		sleep_200ms();
		uint64_t b = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
		spin_200ms();
		uint64_t c1 = now_ns(CLOCK_THREAD_CPUTIME_ID), d = now_ns(CLOCK_MONOTONIC);
		sleep_wall += b - a;
		spin_wall += d - b;
		spin_cpu += c1 - c0;
	}
	printf("exact: %d x 200 ms: sleep_wall_s %.6f spin_wall_s %.6f spin_cpu_s %.6f\n", n, (double)sleep_wall / 1e9,
	       (double)spin_wall / 1e9, (double)spin_cpu / 1e9);
	return 0;
}

static double sleeper_wall_s; /* the sleeps' wall time, as the thread saw it */

static void *sleeper_main(void *arg)
{
	(void)arg;
	pthread_setname_np(pthread_self(), "sleeper");
	struct timespec a, b;
	clock_gettime(CLOCK_MONOTONIC, &a);
	for (int i = 0; i < 4; i++)
		sleep_ms(50);
	clock_gettime(CLOCK_MONOTONIC, &b);
	sleeper_wall_s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
	return NULL;
}

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "forever")) {
		for (;;)
			sleep_ms(20);
	}
	if (argc > 1 && !strcmp(argv[1], "exact"))
		return exact(argc > 2 ? atoi(argv[2]) : 10);
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
	printf("facts done: sleeper_wall_s %.6f\n", sleeper_wall_s);
	return 0;
}
