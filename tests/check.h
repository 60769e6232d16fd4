/*
 * check.h: the assertion macros of snr's C unit tests. A failed CHECK
 * prints file:line and the message, counts, and the test goes on, so one
 * run shows every failure; check_report() turns the count into the exit code.
 */
#ifndef SNR_TESTS_CHECK_H
#define SNR_TESTS_CHECK_H

#include <stdint.h>
#include <stdio.h>

static int check_failures;
static int check_count;

#define CHECK(cond, ...)                                                          \
	do {                                                                      \
		check_count++;                                                    \
		if (!(cond)) {                                                    \
			check_failures++;                                         \
			fprintf(stderr, "%s:%d: check failed: ", __FILE__, __LINE__); \
			fprintf(stderr, __VA_ARGS__);                             \
			fputc('\n', stderr);                                      \
		}                                                                 \
	} while (0)

/* xorshift64: reproducible pseudo-random numbers from the state (nonzero)
 * each test seeds for itself */
static inline uint64_t check_rand(uint64_t *state)
{
	uint64_t x = *state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return *state = x;
}

static inline int check_report(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
