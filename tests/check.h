/*
 * check.h: the assertion macros of snr's C unit tests. A failed CHECK
 * prints file:line and the message, counts, and the test goes on, so one
 * run shows every failure; check_report() turns the count into the exit code.
 */
#ifndef SNR_TESTS_CHECK_H
#define SNR_TESTS_CHECK_H

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

static inline int check_report(const char *name)
{
	fprintf(stderr, "%s: %d checks, %d failed\n", name, check_count, check_failures);
	return check_failures ? 1 : 0;
}

#endif
