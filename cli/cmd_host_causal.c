/*
 * cmd_host_causal.c: `snr host causal H.snrh [--speedup PCT[,PCT...]] [--json]
 * [--html OUT]`: what speeding up each function or bucket would do to each
 * progress point (analyzer/causal.h), as a ranked table, JSON, or a page
 * of COZ-style plots (effect against speedup per candidate).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/causal.h"
#include "analyzer/causal_page.h"
#include "lib/snr_output.h"
#include "lib/snr_partial.h"
#include "lib/snr_util.h"
#include "snr_cli.h"

static const char causal_usage[] =
	"usage: snr host causal H.snrh [--speedup PCT[,PCT...]] [--json] [--html OUT.html] [--allow-truncated]\n"
	"                       [--force]\n"
	"\n"
	"A causal profile of a host trace recorded with progress points (snr host\n"
	"record --progress SYM / --latency BEGIN:END): for each candidate, the\n"
	"functions by on-CPU self time (at least 1% of the samples, the top 20) and\n"
	"each bucket (H:APP, H:CTRL, H:IO, H:WAIT_DEV), how much each progress point's\n"
	"throughput and latency p50/p99 would change if it were PCT% faster (default\n"
	"5,10,...,50). Predicted by replaying the recorded dependency graph (each\n"
	"thread's runs and waits, which thread ended each wait) with the candidate's\n"
	"on-CPU time shrunk; the text view ranks the candidates by the first point's\n"
	"throughput at the largest speedup and names the hot functions that gain\n"
	"nothing because they are off the critical path. docs/host.md, \"Causal\n"
	"profile\", says how it works and what it leaves out.\n"
	"\n"
	"options:\n"
	"  --speedup PCT[,PCT]  the speedups to predict, percent (0 < PCT < 100)\n"
	"  --json               {\"progress\": [...], \"candidates\": [...]} on stdout\n"
	"  --html OUT           a page with one plot per candidate (ECharts, self-contained)\n"
	"  --allow-truncated    a trace cut short: predict from what it holds, exit 0 not 3\n"
	"  --force              replace OUT if it exists (never the input trace)\n"
	"\n"
	"example:\n"
	"  sudo snr host record -F 997 --progress emit_token -o t.snrh -- ./tokens\n"
	"  snr host causal t.snrh --speedup 20\n";

static int parse_speedups(const char *arg, double **out, unsigned *n)
{
	char *copy = snr_xstrdup(arg), *save = NULL;
	*n = 0;
	for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		char *end;
		double v = strtod(tok, &end);
		if (end == tok || *end || !(v > 0 && v < 100)) {
			free(copy);
			return -1;
		}
		*out = snr_xrealloc(*out, (*n + 1) * sizeof(**out));
		(*out)[(*n)++] = v;
	}
	free(copy);
	if (!*n)
		return -1;
	/* ascending: the last is the one the ranking uses */
	for (unsigned a = 1; a < *n; a++)
		for (unsigned b = a; b > 0 && (*out)[b] < (*out)[b - 1]; b--) {
			double x = (*out)[b];
			(*out)[b] = (*out)[b - 1];
			(*out)[b - 1] = x;
		}
	return 0;
}

int snr_cmd_host_causal(int argc, char **argv)
{
	static const struct option opts[] = {{"speedup", required_argument, NULL, 's'},
					     {"json", no_argument, NULL, 'j'},
					     {"html", required_argument, NULL, 'H'},
					     {"allow-truncated", no_argument, NULL, 'a'},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	double *speedups = NULL;
	unsigned nspeedups = 0;
	bool json = false, allow_truncated = false;
	const char *html = NULL;
	int c, rc = 2;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 's':
			if (parse_speedups(optarg, &speedups, &nspeedups)) {
				snr_err("host causal: --speedup wants percentages between 0 and 100 (20, or 10,20,30), not '%s'",
					optarg);
				goto out;
			}
			break;
		case 'j': json = true; break;
		case 'H': html = optarg; break;
		case 'a': allow_truncated = true; break;
		case 'h': fputs(causal_usage, stdout); rc = 0; goto out;
		default: fputs(causal_usage, stderr); goto out;
		}
	}
	if (optind + 1 != argc) {
		snr_err("host causal: give one host trace (snr host causal H.snrh)");
		fputs(causal_usage, stderr);
		goto out;
	}
	const char *path = argv[optind];
	if (snr_output_preflight("host causal", html, argv + optind, 1, NULL, 0)) {
		rc = 1;
		goto out;
	}
	if (!nspeedups)
		for (int s = 5; s <= 50; s += 5) {
			speedups = snr_xrealloc(speedups, (nspeedups + 1) * sizeof(*speedups));
			speedups[nspeedups++] = s;
		}
	struct snrh_trace t;
	snrh_trace_init(&t);
	json_object_clear(t.meta);
	char err[700];
	bool truncated = false;
	rc = 1;
	if (snrh_trace_read_partial(&t, path, &truncated, err, sizeof(err))) {
		snr_err("%s", err);
		snrh_trace_free(&t);
		goto out;
	}
	char why[700] = "";
	if (truncated) {
		snprintf(why, sizeof(why), "%s", err);
		snrh_trace_rebuild_threads(&t);
	}
	struct snrh_causal cz;
	if (snrh_causal_run(&t, speedups, nspeedups, &cz, err, sizeof(err))) {
		snr_err("host causal: %s: %s", path, err);
		snrh_causal_free(&cz);
		snrh_trace_free(&t);
		goto out;
	}
	rc = 0;
	if (json) {
		json_t *j = snrh_causal_json(&cz);
		json_object_set_new(j, "truncated", json_boolean(truncated));
		json_dumpf(j, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		fputc('\n', stdout);
		json_decref(j);
	} else {
		if (truncated)
			printf("TRUNCATED: %s; predicted from what was written before\n", why);
		snrh_causal_text(&cz, stdout);
	}
	if (html && snrh_causal_page(&cz, path, html, err, sizeof(err))) {
		snr_err("host causal: --html: %s", err);
		rc = 1;
	}
	snrh_causal_free(&cz);
	snrh_trace_free(&t);
	if (!rc && truncated && !allow_truncated) {
		snr_err("host causal: %s; the prediction above covers what was written before (--allow-truncated: exit 0)",
			why);
		rc = SNR_EXIT_PARTIAL;
	}
out:
	free(speedups);
	return rc;
}
