/*
 * check_golden.h: a replay's summary against its golden, with or without a
 * tolerance (cli/check_golden.c; `snr check`, docs/check.md).
 */
#ifndef SNR_CHECK_GOLDEN_H
#define SNR_CHECK_GOLDEN_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>

/* "2%", "0.5%" or "2" (percent): 0 and the fraction (0.02), or -1. */
int snr_tolerance_parse(const char *text, double *fraction);

struct snr_golden_cmp {
	bool tolerant;    /* a tolerance applied (the golden's, else the command's) */
	double tolerance; /* its fraction */
	char failed[2048];   /* what fails: exact fields that differ, regressions beyond the tolerance;
				"" when nothing fails */
	char improved[1024]; /* timing better beyond the tolerance ("" none) */
	char within[1024];   /* timing that moved within the tolerance ("" none) */
};

/* Compares got (snr_replay_summary) with want (the golden). Timing fields
 * (cycles, ipc, stall_cycles.*) take a tolerance: the golden's "tolerance"
 * field, else cli_tolerance when cli_tolerant; every other field, and every
 * field without a tolerance, must be equal. -1 with err when the golden's
 * tolerance cannot be read. */
int snr_golden_compare(json_t *want, json_t *got, bool cli_tolerant, double cli_tolerance,
		       struct snr_golden_cmp *c, char *err, size_t errlen);

#endif
