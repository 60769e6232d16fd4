/*
 * snr_junit.c: the JUnit XML writer (snr_junit.h). Text is escaped for XML
 * (the five entities; control characters other than tab and newline, which
 * XML 1.0 cannot hold, as '?'), so a replay's divergence report goes in as
 * it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_junit.h"
#include "lib/snr_outfile.h"
#include "lib/snr_util.h"

void snr_junit_init(struct snr_junit *j, const char *suite)
{
	memset(j, 0, sizeof(*j));
	j->suite = snr_xstrdup(suite);
}

void snr_junit_add(struct snr_junit *j, const char *name, enum snr_junit_outcome outcome, const char *message,
		   double seconds)
{
	j->cases = snr_xrealloc(j->cases, (j->n + 1) * sizeof(*j->cases));
	struct snr_junit_case *c = &j->cases[j->n++];
	c->name = snr_xstrdup(name);
	c->outcome = outcome;
	c->message = message ? snr_xstrdup(message) : NULL;
	c->seconds = seconds;
}

static void xml_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '<')
			fputs("&lt;", f);
		else if (c == '>')
			fputs("&gt;", f);
		else if (c == '&')
			fputs("&amp;", f);
		else if (c == '"')
			fputs("&quot;", f);
		else if (c == '\'')
			fputs("&apos;", f);
		else if (c < 0x20 && c != '\n' && c != '\t')
			fputc('?', f);
		else
			fputc(c, f);
	}
}

int snr_junit_write(const struct snr_junit *j, const char *path, char *err, size_t errlen)
{
	struct snr_outfile of;
	FILE *f = snr_outfile_fopen(&of, path, err, errlen);
	if (!f)
		return -1;
	size_t failures = 0, errors = 0;
	double total = 0;
	for (size_t i = 0; i < j->n; i++) {
		failures += j->cases[i].outcome == SNR_JUNIT_FAILURE;
		errors += j->cases[i].outcome == SNR_JUNIT_ERROR;
		total += j->cases[i].seconds;
	}
	fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n<testsuite name=\"", f);
	xml_text(f, j->suite);
	fprintf(f, "\" tests=\"%zu\" failures=\"%zu\" errors=\"%zu\" time=\"%.3f\">\n", j->n, failures, errors, total);
	for (size_t i = 0; i < j->n; i++) {
		const struct snr_junit_case *c = &j->cases[i];
		fputs("  <testcase classname=\"", f);
		xml_text(f, j->suite);
		fputs("\" name=\"", f);
		xml_text(f, c->name);
		fprintf(f, "\" time=\"%.3f\"", c->seconds);
		if (c->outcome == SNR_JUNIT_PASS) {
			fputs("/>\n", f);
			continue;
		}
		const char *tag = c->outcome == SNR_JUNIT_FAILURE ? "failure" : "error";
		char first[200];
		snprintf(first, sizeof(first), "%.*s", (int)strcspn(c->message, "\n"), c->message);
		fprintf(f, ">\n    <%s message=\"", tag);
		xml_text(f, first);
		fputs("\">", f);
		xml_text(f, c->message);
		fprintf(f, "</%s>\n  </testcase>\n", tag);
	}
	fputs("</testsuite>\n</testsuites>\n", f);
	return snr_outfile_close(&of, true, err, errlen);
}

void snr_junit_free(struct snr_junit *j)
{
	for (size_t i = 0; i < j->n; i++) {
		free(j->cases[i].name);
		free(j->cases[i].message);
	}
	free(j->cases);
	free(j->suite);
	memset(j, 0, sizeof(*j));
}
