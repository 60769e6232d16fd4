/*
 * host_work.c: a fixed amount of CPU-bound work for the host tracing
 * overhead benchmark; prints its own elapsed time, so a tracer's start-up
 * and shutdown are not counted.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* seed: each unit's differs, so the compiler cannot compute one unit for
 * all (work is pure) */
__attribute__((noinline)) static uint64_t work(uint64_t n, uint64_t seed)
{
	uint64_t h = 1469598103934665603ull ^ seed;
	for (uint64_t i = 0; i < n; i++)
		h = (h ^ i) * 1099511628211ull;
	return h;
}

__attribute__((noinline)) void unit_done(uint64_t i, uint64_t h)
{
	__asm__ volatile("" ::"r"(i), "r"(h) : "memory");
}

int main(int argc, char **argv)
{
	uint64_t n = argc > 1 ? strtoull(argv[1], NULL, 0) : 400000000ull;
	uint64_t units = argc > 2 ? strtoull(argv[2], NULL, 0) : 1;
	if (!units)
		units = 1;
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	uint64_t h = 0;
	for (uint64_t u = 0; u < units; u++) {
		h ^= work(n / units, u);
		unit_done(u, h);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("host_work: %llu iterations in %.4f s (hash %016llx); cpu %.3f s\n", (unsigned long long)n, s,
	       (unsigned long long)h, (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	return 0;
}
