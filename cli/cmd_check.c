/*
 * cmd_check.c: `snr check DIR [--update]`, regression replay of stored
 * traces. Every NAME.snrt in DIR is replayed in its simulator and its
 * summary (instructions, cycles, IPC, stall cycles by cause, DMA totals,
 * whether the replay reproduced the recording) is compared with the golden
 * NAME.golden.json beside it (cli/check_golden.c: exactly, or the timing
 * within --tolerance or the golden's own). One line per trace, then "N
 * passed, N failed".
 *
 * --shard K/N runs the K-th of N shares (traces in name order, trace i in
 * share i mod N + 1), so that N array tasks of a cluster's engine (a Slurm
 * array, a Kubernetes Indexed Job) cover the set once; --junit FILE writes
 * the outcome per trace as JUnit XML (lib/snr_junit.h).
 */
#include <dirent.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli/check_golden.h"
#include "lib/snr_junit.h"
#include "lib/snr_outfile.h"
#include "lib/snr_output.h"
#include "lib/snr_util.h"
#include "replayer/replay.h"
#include "snr_cli.h"

static const char check_usage[] =
	"usage: snr check DIR [--tolerance P%] [--update] [--shard K/N] [--junit FILE [--force]]\n"
	"\n"
	"Replays every DIR/NAME.snrt and compares its summary with DIR/NAME.golden.json:\n"
	"instructions, cycles, stall cycles by cause, DMA count and bytes, and the\n"
	"verification (every pc and the end state against the recording). Prints a\n"
	"line per trace naming what changed, then \"N passed, N failed\".\n"
	"Exact by default: any change fails, named with its direction (improved or\n"
	"regressed); accept an intended one with --update.\n"
	"\n"
	"  --tolerance P%   compare the timing as performance: cycles and stall cycles\n"
	"                  may grow, IPC fall, by at most P% (a stall cause relative to\n"
	"                  the cycles); beyond it a regression fails and an improvement\n"
	"                  passes, labelled IMPROVED. Instructions, DMAs and the\n"
	"                  verification stay exact. A golden's own \"tolerance\": \"P%\"\n"
	"                  wins over this\n"
	"  --update        write the goldens from this replay (on purpose: review the diff;\n"
	"                  a golden's \"tolerance\" is kept)\n"
	"  --shard K/N     only the K-th of N shares of the traces (1 <= K <= N; in name\n"
	"                  order, trace i is in share i mod N + 1): N array tasks of a\n"
	"                  cluster run the whole set once (docs/sweep.md)\n"
	"  --junit FILE    also write the outcome per trace as JUnit XML for CI systems\n"
	"  --force         replace the --junit FILE if it exists\n"
	"  -h, --help      this text\n"
	"\n"
	"Exit status: 0 all passed, 1 a trace regressed or could not be replayed,\n"
	"2 bad usage.\n";

static int cmp_names(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int snr_cmd_check(int argc, char **argv)
{
	const char *dir = NULL, *junit_path = NULL;
	int update = 0;
	bool tolerant = false;
	double tolerance = 0;
	unsigned shard_k = 1, shard_n = 1;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
			fputs(check_usage, stdout);
			return 0;
		} else if (!strcmp(argv[i], "--update")) {
			update = 1;
			snr_output_keep_existing(false); /* rewriting the goldens is what --update is for */
		} else if (!strcmp(argv[i], "--force")) {
			snr_output_keep_existing(false); /* the --junit file may be replaced */
		} else if (!strcmp(argv[i], "--tolerance")) {
			if (i + 1 >= argc || snr_tolerance_parse(argv[i + 1], &tolerance)) {
				snr_err("check: --tolerance needs a percentage below 100, such as 2%% or 0.5%%%s%s%s",
					i + 1 < argc ? ", not '" : "", i + 1 < argc ? argv[i + 1] : "", i + 1 < argc ? "'" : "");
				return 2;
			}
			tolerant = true;
			i++;
		} else if (!strcmp(argv[i], "--shard") || !strcmp(argv[i], "--junit")) {
			if (i + 1 >= argc) {
				snr_err("check: %s needs a value", argv[i]);
				return 2;
			}
			if (argv[i][2] == 'j') {
				junit_path = argv[++i];
			} else {
				char tail;
				const char *v = argv[++i];
				if (sscanf(v, "%u/%u%c", &shard_k, &shard_n, &tail) != 2 || shard_n == 0 || shard_k == 0 ||
				    shard_k > shard_n || strspn(v, "0123456789/") != strlen(v)) {
					snr_err("check: --shard '%s': give K/N with 1 <= K <= N (e.g. 2/8)", v);
					return 2;
				}
			}
		} else if (argv[i][0] == '-' || dir) {
			snr_err("check: unexpected argument '%s'", argv[i]);
			fputs(check_usage, stderr);
			return 2;
		} else {
			dir = argv[i];
		}
	}
	if (!dir) {
		snr_err("check: give the folder of traces and goldens (snr check traces/)");
		fputs(check_usage, stderr);
		return 2;
	}
	char dirbuf[4096];
	snprintf(dirbuf, sizeof(dirbuf), "%s", dir);
	for (size_t n = strlen(dirbuf); n > 1 && dirbuf[n - 1] == '/'; n--)
		dirbuf[n - 1] = '\0'; /* "traces/" names files traces/x, not traces//x */
	dir = dirbuf;
	DIR *d = opendir(dir);
	if (!d) {
		snr_err("check: %s: not a readable directory", dir);
		return 1;
	}
	char **names = NULL;
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d))) {
		size_t l = strlen(e->d_name);
		if (l > 5 && !strcmp(e->d_name + l - 5, ".snrt")) {
			names = snr_xrealloc(names, (n + 1) * sizeof(*names));
			names[n++] = snr_xstrdup(e->d_name);
		}
	}
	closedir(d);
	if (n)
		snr_qsort(names, n, sizeof(*names), cmp_names);
	unsigned passed = 0, failed = 0, ran = 0, improved = 0;
	char suite[4200];
	if (shard_n > 1)
		snprintf(suite, sizeof(suite), "snr check %s (shard %u/%u)", dir, shard_k, shard_n);
	else
		snprintf(suite, sizeof(suite), "snr check %s", dir);
	struct snr_junit junit;
	snr_junit_init(&junit, suite);
	for (size_t i = 0; i < n; i++) {
		char path[4096], golden[4096], err[1024];
		if (i % shard_n != shard_k - 1) {
			free(names[i]);
			continue;
		}
		ran++;
		unsigned failed_before = failed;
		char *case_msg = NULL;
		size_t case_len = 0;
		FILE *msg = open_memstream(&case_msg, &case_len);
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		snprintf(golden, sizeof(golden), "%s/%.*s.golden.json", dir, (int)(strlen(names[i]) - 5), names[i]);
		struct snr_replay_opts o = {.trace_path = path};
		struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
		if (snr_replay(&o, r, err, sizeof(err))) {
			printf("FAIL %s: cannot replay: %s\n", names[i], err);
			fprintf(msg, "cannot replay: %s", err);
			fclose(msg);
			snr_junit_add(&junit, names[i], SNR_JUNIT_ERROR, case_msg, 0);
			free(case_msg);
			failed++;
			free(r);
			free(names[i]);
			continue;
		}
		json_t *got = snr_replay_summary(r);
		if (!r->ok) {
			printf("FAIL %s: the replay diverged from the recording:\n%s", names[i], r->report);
			fprintf(msg, "the replay diverged from the recording:\n%s", r->report);
			failed++;
		} else if (update) {
			/* a golden's tolerance is the user's, not the replay's: kept */
			json_t *old = json_load_file(golden, 0, NULL);
			json_t *tol = old ? json_object_get(old, "tolerance") : NULL;
			if (tol)
				json_object_set(got, "tolerance", tol);
			json_decref(old);
			char *text = json_dumps(got, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			int wrc = snr_outfile_write_text(golden, text, strlen(text), err, sizeof(err));
			free(text);
			if (wrc) {
				printf("FAIL %s: cannot write %s: %s\n", names[i], golden, err);
				fprintf(msg, "cannot write %s: %s", golden, err);
				failed++;
			} else {
				printf("UPDATED %s: %llu instructions, %llu cycles\n", names[i],
				       (unsigned long long)r->instructions, (unsigned long long)r->cycles);
				passed++;
			}
		} else {
			json_error_t je;
			json_t *want = json_load_file(golden, 0, &je);
			if (!want) {
				printf("FAIL %s: no golden summary (%s: %s); run snr check --update\n", names[i], golden,
				       je.text);
				fprintf(msg, "no golden summary (%s: %s); run snr check --update", golden, je.text);
				failed++;
			} else {
				struct snr_golden_cmp c;
				if (snr_golden_compare(want, got, tolerant, tolerance, &c, err, sizeof(err))) {
					printf("FAIL %s: %s: %s\n", names[i], golden, err);
					fprintf(msg, "%s: %s", golden, err);
					failed++;
				} else if (c.failed[0]) {
					printf("FAIL %s: %s\n", names[i], c.failed);
					fprintf(msg, "%s", c.failed);
					failed++;
				} else if (c.improved[0]) {
					printf("IMPROVED %s: %s (beyond the %g%% tolerance, faster: snr check --update makes "
					       "it the golden)%s%s\n",
					       names[i], c.improved, 100 * c.tolerance, c.within[0] ? "; within it: " : "",
					       c.within);
					improved++;
					passed++;
				} else {
					printf("PASS %s: %llu instructions, %llu cycles, IPC %.3f", names[i],
					       (unsigned long long)r->instructions, (unsigned long long)r->cycles,
					       r->cycles ? (double)r->instructions / (double)r->cycles : 0.0);
					if (c.within[0])
						printf("; within the %g%% tolerance: %s", 100 * c.tolerance, c.within);
					printf("\n");
					passed++;
				}
				json_decref(want);
			}
		}
		fclose(msg);
		snr_junit_add(&junit, names[i], failed > failed_before ? SNR_JUNIT_FAILURE : SNR_JUNIT_PASS,
			      failed > failed_before ? case_msg : NULL, r->seconds);
		free(case_msg);
		json_decref(got);
		free(r);
		free(names[i]);
	}
	free(names);
	int rc = failed || n == 0 ? 1 : 0;
	if (n == 0)
		snr_err("check: no .snrt traces in %s", dir);
	else if (ran == 0)
		printf("shard %u/%u: no traces (%zu traces in %u shares)\n", shard_k, shard_n, n, shard_n);
	if (junit_path && n) {
		char err[1024];
		if (snr_junit_write(&junit, junit_path, err, sizeof(err))) {
			snr_err("check: --junit: %s", err);
			rc = 1;
		}
	}
	snr_junit_free(&junit);
	if (shard_n > 1)
		printf("shard %u/%u: ", shard_k, shard_n);
	printf("%u passed, %u failed", passed, failed);
	if (improved)
		printf(" (%u of the passed improved beyond the tolerance)", improved);
	printf("\n");
	return rc;
}
