/*
 * snr_junit.h: JUnit XML, the test-report format CI systems read (GitLab,
 * Jenkins, GitHub Actions' reporters): one <testsuite> of <testcase>s, each
 * passed, failed (<failure>: the check ran and found a difference) or in
 * error (<error>: it could not run). `snr check --junit FILE` writes it.
 */
#ifndef SNR_JUNIT_H
#define SNR_JUNIT_H

#include <stddef.h>

enum snr_junit_outcome { SNR_JUNIT_PASS, SNR_JUNIT_FAILURE, SNR_JUNIT_ERROR };

struct snr_junit_case {
	char *name;
	enum snr_junit_outcome outcome;
	char *message; /* NULL when passed */
	double seconds;
};

struct snr_junit {
	char *suite;
	struct snr_junit_case *cases;
	size_t n;
};

void snr_junit_init(struct snr_junit *j, const char *suite);
void snr_junit_add(struct snr_junit *j, const char *name, enum snr_junit_outcome outcome, const char *message,
		   double seconds);
/* Writes the file whole or not at all (lib/snr_outfile.h). 0, or -1 with err. */
int snr_junit_write(const struct snr_junit *j, const char *path, char *err, size_t errlen);
void snr_junit_free(struct snr_junit *j);

#endif
