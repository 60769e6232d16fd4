/*
 * host_stacks.c: a program written the way users write them (-O2 -g, libc
 * calls, built both with and without frame pointers by tests/host/meson.build)
 * whose stacks and times are known, for tests/host/host_record.sh's DWARF
 * unwinding checks. Every mode prints what it measured of itself on one
 * line, "KEY VALUE" pairs in seconds, for the test to compare the report to.
 *
 *   host_stacks sleepspin N  N times: sleeper() sleeps 200 ms in libc's
 *                            nanosleep, spinner() spins 150 ms of its CPU
 *                            time calling clock_gettime (the vDSO)
 *   host_stacks pipe N       pipe_reader() blocks N times in read() on a pipe
 *                            another thread writes to 200 ms later
 *   host_stacks tail N       tail_caller() tail-calls tail_target(), which
 *                            sleeps 200 ms (N times): the unwound stack is
 *                            tail_target;main, tail_caller's frame is gone
 *   host_stacks deep D N     recurse() D deep, then sleeps 200 ms (N times)
 *   host_stacks short        sleeper() sleeps 20 ms once, and the process
 *                            exits: its life is shorter than a tracer poll
 *   host_stacks run S        spins S seconds of wall time in spinner() (the
 *                            tracer-killed test)
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static uint64_t now_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

volatile unsigned long sink;

__attribute__((noinline)) void sleeper(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
	sink++;
}

/* Time goes to clock_gettime in the vDSO, as in a polling loop, until ns
 * have passed on clock clk: CLOCK_MONOTONIC, or the thread's CPU time (read
 * every 1024 polls: it is a system call), so that the samples expected
 * (CPU time x HZ) do not shrink, and their relative noise grow, when other
 * jobs take the CPU. */
__attribute__((noinline)) void spinner(uint64_t ns, clockid_t clk)
{
	uint64_t end = now_ns(clk) + ns;
	for (unsigned i = 0;; i++) {
		uint64_t t = now_ns(CLOCK_MONOTONIC);
		sink++;
		if (clk != CLOCK_MONOTONIC) {
			if (i % 1024)
				continue;
			t = now_ns(clk);
		}
		if (t >= end)
			break;
	}
}

static int pipe_fds[2];

static void *pipe_writer(void *arg)
{
	int n = *(int *)arg;
	for (int i = 0; i < n; i++) {
		sleeper(200);
		if (write(pipe_fds[1], "x", 1) != 1)
			return NULL;
	}
	return NULL;
}

__attribute__((noinline)) void pipe_reader(void)
{
	char c;
	if (read(pipe_fds[0], &c, 1) != 1)
		exit(1);
	sink++;
}

__attribute__((noinline)) void tail_target(long ms)
{
	struct timespec ts = {0, ms * 1000000L};
	nanosleep(&ts, NULL);
}

/* Compiled to a jump at -O2 (sibling call): its frame is not on the stack
 * while tail_target sleeps. */
__attribute__((noinline)) void tail_caller(long ms)
{
	sink++;
	tail_target(ms);
}

__attribute__((noinline)) int recurse(int depth)
{
	volatile char pad[16];
	pad[0] = (char)depth;
	if (depth <= 1) {
		sleeper(200);
		return pad[0];
	}
	int r = recurse(depth - 1);
	__asm__ volatile("" ::: "memory");
	return r + pad[0];
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "sleepspin";
	int n = argc > 2 ? atoi(argv[2]) : 10;
	if (!strcmp(mode, "sleepspin")) {
		uint64_t sleep_wall = 0, spin_cpu = 0;
		for (int i = 0; i < n; i++) {
			uint64_t a = now_ns(CLOCK_MONOTONIC);
			sleeper(200);
			uint64_t b = now_ns(CLOCK_MONOTONIC), c0 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			spinner(150000000ull, CLOCK_THREAD_CPUTIME_ID);
			uint64_t c1 = now_ns(CLOCK_THREAD_CPUTIME_ID);
			sleep_wall += b - a;
			spin_cpu += c1 - c0;
		}
		printf("sleep_wall %.6f spin_cpu %.6f\n", (double)sleep_wall / 1e9, (double)spin_cpu / 1e9);
	} else if (!strcmp(mode, "pipe")) {
		pthread_t th;
		if (pipe(pipe_fds) || pthread_create(&th, NULL, pipe_writer, &n))
			return 1;
		uint64_t blocked = 0;
		for (int i = 0; i < n; i++) {
			uint64_t a = now_ns(CLOCK_MONOTONIC);
			pipe_reader();
			blocked += now_ns(CLOCK_MONOTONIC) - a;
		}
		pthread_join(th, NULL);
		printf("pipe_wall %.6f\n", (double)blocked / 1e9);
	} else if (!strcmp(mode, "tail")) {
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < n; i++)
			tail_caller(200);
		printf("tail_wall %.6f\n", (double)(now_ns(CLOCK_MONOTONIC) - a) / 1e9);
	} else if (!strcmp(mode, "deep")) {
		int depth = n, reps = argc > 3 ? atoi(argv[3]) : 5;
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		for (int i = 0; i < reps; i++)
			sink += (unsigned long)recurse(depth);
		printf("deep_wall %.6f\n", (double)(now_ns(CLOCK_MONOTONIC) - a) / 1e9);
	} else if (!strcmp(mode, "short")) {
		/* Exits ~20 ms after exec, before the tracer's first poll. */
		uint64_t a = now_ns(CLOCK_MONOTONIC);
		sleeper(20);
		printf("short_wall %.6f\n", (double)(now_ns(CLOCK_MONOTONIC) - a) / 1e9);
	} else if (!strcmp(mode, "run")) {
		double s = argc > 2 ? atof(argv[2]) : 5;
		printf("pid %d\n", (int)getpid());
		fflush(stdout);
		spinner((uint64_t)(s * 1e9), CLOCK_MONOTONIC);
		printf("run_done\n");
	} else {
		fprintf(stderr, "usage: host_stacks sleepspin|pipe|tail|deep|short|run ...\n");
		return 2;
	}
	return 0;
}
