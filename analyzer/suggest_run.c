/*
 * suggest_run.c: `snr analyze suggest` on a trace or metrics file by path,
 * and its plain-options form (deps.h): the entry points that build the
 * graph and call snr_suggest_report (suggest.c).
 */
#include "analyzer/deps.h"

int snr_suggest_write(struct snr_deps *d, const struct snr_deps_opts *o, unsigned verify_max, bool json,
		      FILE *out, char *err, size_t errlen)
{
	struct snr_suggest_opts so = {.verify_max = verify_max, .json = json};
	return snr_suggest_report(d, o, &so, out, err, errlen);
}

int snr_suggest_run(const char *path, const struct snr_deps_opts *o, unsigned verify_max, bool json,
		    FILE *out, char *err, size_t errlen)
{
	struct snr_suggest_opts so = {.verify_max = verify_max, .json = json};
	struct snr_deps d;
	if (snr_deps_run(&d, path, o, err, errlen)) {
		snr_deps_free(&d);
		return -1;
	}
	int rc = snr_suggest_report(&d, o, &so, out, err, errlen);
	snr_deps_free(&d);
	return rc;
}
