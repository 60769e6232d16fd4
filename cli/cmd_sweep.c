/*
 * cmd_sweep.c: `snr sweep`, a grid of machine configs replayed over a trace
 * or a trace set, on local processes or a Slurm cluster; the pieces are in
 * sweep/ (sweep.h). This file parses the command line, makes the plan,
 * hands the tasks to an engine and prints the gather.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_config.h"
#include "lib/snr_outfile.h"
#include "lib/snr_set.h"
#include "lib/snr_trace.h"
#include "lib/snr_output.h"
#include "lib/snr_util.h"
#include "snr_cli.h"
#include "sweep/sweep.h"

static const char sweep_usage[] =
	"usage: snr sweep T.snrt|SET... --param KEY=V1,V2,...|KEY=START:END:STEP [--param ...]\n"
	"                 [--configs A.json,B.json,...] [--config BASE.json] -o DIR\n"
	"                 [-j N | --slurm [--partition P] [--array-limit K] [--time T]\n"
	"                  [--sbatch-arg ARG]... [--wait] | --plan-only] [--points-per-task P] [--json]\n"
	"       snr sweep --resume DIR [-j N | --slurm ...] [--json]\n"
	"       snr sweep --task-index I|auto DIR      (one task: what each engine runs)\n"
	"       snr sweep --gather DIR [--json]        (the results of what is finished)\n"
	"       snr sweep --count-tasks DIR\n"
	"\n"
	"Replays every window with every point of a grid of machine configs. A point\n"
	"is one value per --param (any key of docs/machine-config.md, dotted, e.g.\n"
	"dma.hbm_bytes_per_cycle) and one file of --configs; its replay is `snr replay\n"
	"--config DIR/configs/pNNNN.json` of each window. Points are numbered with\n"
	"the last --param varying fastest, the same for any -j or engine.\n"
	"\n"
	"DIR gets the plan, each point's config and results (written whole or not\n"
	"at all), and the gather: results.json, results.csv, results.txt and\n"
	"report.html: cycles and stall cycles by cause per point, utilization per\n"
	"unit, each parameter's elasticity (% cycles per % change between\n"
	"neighbouring values, the others fixed) and the best points.\n"
	"\n"
	"options:\n"
	"  --param KEY=VALUES   an axis: values separated by commas, each a number\n"
	"                       (a JSON scalar) or an integer range START:END:STEP\n"
	"  --configs FILES      an axis of whole config files (comma-separated)\n"
	"  --config BASE.json   the config the --param values change (default: the\n"
	"                       one the traces recorded)\n"
	"  -o DIR               the sweep's folder (must not exist)\n"
	"  -j N                 run N tasks at once as local processes (default 1)\n"
	"  --points-per-task P  points per task (default 1)\n"
	"  --slurm              submit the tasks as Slurm array jobs (chunked under the\n"
	"                       cluster's MaxArraySize) and a gather job (afterok)\n"
	"  --partition P, --time T, --array-limit K (at most K tasks at once),\n"
	"  --sbatch-arg ARG     passed to sbatch\n"
	"  --wait               with --slurm: wait for the jobs, then show the results\n"
	"  --plan-only          make DIR and print its number of tasks, run none (for\n"
	"                       an engine started by hand: a Kubernetes Indexed Job,\n"
	"                       GNU parallel)\n"
	"  --resume DIR         rerun only the tasks with unfinished points\n"
	"  --task-index I       run task I of DIR (auto: $SNR_TASK_INDEX,\n"
	"                       $JOB_COMPLETION_INDEX (Kubernetes Indexed Job) or\n"
	"                       $SLURM_ARRAY_TASK_ID)\n"
	"  --gather DIR         write and show the results of the finished points\n"
	"  --count-tasks DIR    print the number of tasks (for GNU parallel, a Job's\n"
	"                       completions)\n"
	"  --json               print the results as JSON (results.json)\n"
	"  -h, --help           this text\n"
	"\n"
	"A sweep with points missing says so in every output (\"complete\": false and\n"
	"\"missing\" in JSON, a comment line in CSV, the text and the page), naming\n"
	"the tasks (and their Slurm array tasks) that did not finish.\n"
	"\n"
	"Exit status: 0 every point finished, 1 points missing or a task failed,\n"
	"2 bad usage. docs/sweep.md has the index interface and a worked sweep.\n";

enum mode { MODE_NEW, MODE_RESUME, MODE_TASK, MODE_GATHER, MODE_COUNT };

/* results.json, results.csv, results.txt, report.html; then the text or
 * JSON on stdout. 0 when complete, 1 when points are missing. */
static int gather_and_show(const struct sweep_plan *p, bool as_json)
{
	json_t *res = sweep_gather(p);
	char path[4096], err[1024];
	int rc = json_is_true(json_object_get(res, "complete")) ? 0 : 1;
	char *t = json_dumps(res, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	snprintf(path, sizeof(path), "%s/results.json", p->dir);
	size_t n = strlen(t);
	t = snr_xrealloc(t, n + 2);
	memcpy(t + n, "\n", 2);
	if (snr_outfile_write_text(path, t, n + 1, err, sizeof(err))) {
		snr_err("sweep: %s", err);
		rc = 1;
	}
	snprintf(path, sizeof(path), "%s/results.csv", p->dir);
	if (sweep_write_csv(path, res, err, sizeof(err))) {
		snr_err("sweep: %s", err);
		rc = 1;
	}
	snprintf(path, sizeof(path), "%s/report.html", p->dir);
	if (sweep_write_report(path, res, err, sizeof(err))) {
		snr_err("sweep: %s", err);
		rc = 1;
	}
	char *txt = NULL;
	size_t tl = 0;
	FILE *mf = open_memstream(&txt, &tl);
	sweep_print_text(mf, res);
	fclose(mf);
	snprintf(path, sizeof(path), "%s/results.txt", p->dir);
	if (snr_outfile_write_text(path, txt, tl, err, sizeof(err))) {
		snr_err("sweep: %s", err);
		rc = 1;
	}
	if (as_json)
		fputs(t, stdout);
	else
		fputs(txt, stdout);
	if (!json_is_true(json_object_get(res, "complete")))
		fprintf(stderr, "snr: sweep: %s: %zu of %zu points missing; snr sweep --resume %s completes it\n", p->dir,
			json_array_size(json_object_get(res, "missing")), p->npoints, p->dir);
	free(txt);
	free(t);
	json_decref(res);
	return rc;
}

/* The windows' absolute paths, and the base config: --config's text, or the
 * one the traces recorded (which must then be the same in every window). */
static int new_plan_inputs(char **args, int nargs, const char *base_path, char ***windows, size_t *nwindows,
			   char **base_json)
{
	struct snr_inputs in;
	char err[2048];
	if (snr_inputs_expand(args, nargs, &in, err, sizeof(err))) {
		snr_err("sweep: %s", err);
		return 1;
	}
	int rc = 1;
	*windows = snr_xcalloc(in.n, sizeof(**windows));
	*nwindows = in.n;
	*base_json = NULL;
	char *first_cfg = NULL;
	for (size_t i = 0; i < in.n; i++) {
		(*windows)[i] = realpath(in.v[i].path, NULL);
		if (!(*windows)[i]) {
			snr_err("sweep: %s: %s", in.v[i].path, strerror(errno));
			goto out;
		}
		struct snr_trace *t = snr_trace_open(in.v[i].path, err, sizeof(err));
		if (!t) {
			snr_err("sweep: %s", err);
			goto out;
		}
		json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
		snr_trace_close(t);
		char *cfg = json_object_get(meta, "config")
				    ? json_dumps(json_object_get(meta, "config"), JSON_INDENT(2) | JSON_PRESERVE_ORDER)
				    : NULL;
		json_decref(meta);
		if (!base_path) {
			if (!cfg) {
				snr_err("sweep: %s has no recorded machine config: give the base with --config BASE.json",
					in.v[i].path);
				goto out;
			}
			if (first_cfg && strcmp(first_cfg, cfg)) {
				snr_err("sweep: %s and %s recorded different machine configs: give the base with "
					"--config BASE.json",
					in.v[0].path, in.v[i].path);
				free(cfg);
				goto out;
			}
		}
		if (!first_cfg)
			first_cfg = cfg;
		else
			free(cfg);
	}
	if (base_path) {
		struct snr_config_text ct = {0};
		struct snr_config c;
		if (snr_config_read(&ct, base_path, err, sizeof(err)) || snr_config_check(&c, &ct, err, sizeof(err))) {
			snr_err("sweep: --config: %s", err);
			if (ct.text)
				snr_config_text_free(&ct);
			goto out;
		}
		*base_json = snr_xstrdup(ct.text);
		snr_config_text_free(&ct);
	} else {
		*base_json = first_cfg;
		first_cfg = NULL;
	}
	rc = 0;
out:
	free(first_cfg);
	snr_inputs_free(&in);
	return rc;
}

static bool parse_count(const char *s, size_t *out)
{
	uint64_t v;
	if (!snr_parse_u64(s, &v, false) || v == 0 || v > SWEEP_MAX_POINTS)
		return false;
	*out = (size_t)v;
	return true;
}

static int task_index_of(const char *arg, size_t *out)
{
	const char *from = "--task-index";
	if (!strcmp(arg, "auto")) {
		static const char *const vars[] = {"SNR_TASK_INDEX", "JOB_COMPLETION_INDEX", "SLURM_ARRAY_TASK_ID"};
		arg = NULL;
		for (size_t i = 0; i < 3 && !arg; i++)
			if ((arg = getenv(vars[i])))
				from = vars[i];
		if (!arg) {
			snr_err("sweep: --task-index auto: none of SNR_TASK_INDEX, JOB_COMPLETION_INDEX, "
				"SLURM_ARRAY_TASK_ID is set");
			return 2;
		}
	}
	uint64_t v;
	if (!snr_parse_u64(arg, &v, false)) {
		snr_err("sweep: %s: '%s' is not a task number", from, arg);
		return 2;
	}
	*out = (size_t)v;
	return 0;
}

int snr_cmd_sweep(int argc, char **argv)
{
	enum { O_PARAM = 256, O_CONFIGS, O_CONFIG, O_SLURM, O_PART, O_ALIM, O_TIME, O_SARG, O_WAIT, O_RESUME, O_TASK,
	       O_GATHER, O_COUNT, O_JSON, O_PPT, O_PLAN };
	static const struct option opts[] = {
		{"param", required_argument, NULL, O_PARAM},   {"configs", required_argument, NULL, O_CONFIGS},
		{"config", required_argument, NULL, O_CONFIG}, {"output", required_argument, NULL, 'o'},
		{"jobs", required_argument, NULL, 'j'},        {"slurm", no_argument, NULL, O_SLURM},
		{"partition", required_argument, NULL, O_PART}, {"array-limit", required_argument, NULL, O_ALIM},
		{"time", required_argument, NULL, O_TIME},      {"sbatch-arg", required_argument, NULL, O_SARG},
		{"wait", no_argument, NULL, O_WAIT},            {"resume", no_argument, NULL, O_RESUME},
		{"task-index", required_argument, NULL, O_TASK}, {"gather", no_argument, NULL, O_GATHER},
		{"count-tasks", no_argument, NULL, O_COUNT},    {"json", no_argument, NULL, O_JSON},
		{"points-per-task", required_argument, NULL, O_PPT}, {"plan-only", no_argument, NULL, O_PLAN},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct sweep_axis *axes = NULL;
	size_t naxes = 0, jobs = 1, per_task = 1, task = 0;
	const char *out = NULL, *base = NULL, *task_arg = NULL;
	bool slurm = false, as_json = false, plan_only = false;
	enum mode mode = MODE_NEW;
	struct sweep_slurm_opts so = {0};
	char err[2048];
	int rc = 2, opt;
	/* The sweep's folder is its own (a new sweep refuses one that exists):
	 * its tasks, gathers and resumes rewrite the files in it; an output still
	 * never lands on an input (the trace, the configs). */
	snr_output_keep_existing(false);
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:j:h", opts, NULL)) != -1) {
		switch (opt) {
		case O_PARAM:
			if (sweep_axis_parse(optarg, &axes, &naxes, err, sizeof(err))) {
				snr_err("sweep: %s", err);
				goto out;
			}
			break;
		case O_CONFIGS:
			if (sweep_axis_configs(optarg, &axes, &naxes, err, sizeof(err))) {
				snr_err("sweep: %s", err);
				goto out;
			}
			break;
		case O_CONFIG: base = optarg; break;
		case 'o': out = optarg; break;
		case 'j':
			if (!parse_count(optarg, &jobs) || jobs > 1024) {
				snr_err("sweep: -j '%s': give a number of processes, 1 to 1024", optarg);
				goto out;
			}
			break;
		case O_PPT:
			if (!parse_count(optarg, &per_task)) {
				snr_err("sweep: --points-per-task '%s': give a number from 1", optarg);
				goto out;
			}
			break;
		case O_SLURM: slurm = true; break;
		case O_PART: so.partition = optarg; break;
		case O_ALIM: {
			size_t k;
			if (!parse_count(optarg, &k)) {
				snr_err("sweep: --array-limit '%s': give a number from 1", optarg);
				goto out;
			}
			so.array_limit = (unsigned)k;
			break;
		}
		case O_TIME: so.time_limit = optarg; break;
		case O_SARG:
			so.sbatch_args = snr_xrealloc(so.sbatch_args, (so.nsbatch_args + 1) * sizeof(char *));
			so.sbatch_args[so.nsbatch_args++] = optarg;
			break;
		case O_WAIT: so.wait = true; break;
		case O_RESUME: mode = MODE_RESUME; break;
		case O_TASK: mode = MODE_TASK; task_arg = optarg; break;
		case O_GATHER: mode = MODE_GATHER; break;
		case O_COUNT: mode = MODE_COUNT; break;
		case O_JSON: as_json = true; break;
		case O_PLAN: plan_only = true; break;
		case 'h': fputs(sweep_usage, stdout); rc = 0; goto out;
		default: fputs(sweep_usage, stderr); goto out;
		}
	}
	if (!slurm && (so.partition || so.array_limit || so.time_limit || so.nsbatch_args || so.wait)) {
		snr_err("sweep: --partition, --array-limit, --time, --sbatch-arg and --wait go with --slurm");
		goto out;
	}
	if (plan_only && (mode != MODE_NEW || slurm || jobs != 1)) {
		snr_err("sweep: --plan-only makes a new sweep and runs nothing: no -j, --slurm, --resume, --task-index");
		goto out;
	}
	if (slurm && jobs != 1) {
		snr_err("sweep: -j is for local runs; Slurm runs as many tasks as it schedules (--array-limit K caps it)");
		goto out;
	}
	struct sweep_plan plan = {0};
	if (mode != MODE_NEW) {
		const char *dir = optind < argc ? argv[optind] : out;
		if (!dir || (optind < argc && (argc - optind > 1 || out))) {
			snr_err("sweep: give the sweep's folder once");
			fputs(sweep_usage, stderr);
			goto out;
		}
		if (naxes || base) {
			snr_err("sweep: the grid is the plan's in %s: --param, --configs and --config make a new sweep", dir);
			goto out;
		}
		if (mode == MODE_TASK && (rc = task_index_of(task_arg, &task)))
			goto out;
		rc = 1;
		if (sweep_plan_open(&plan, dir, err, sizeof(err))) {
			snr_err("sweep: %s", err);
			goto out;
		}
	} else {
		if (optind >= argc || !out || !naxes) {
			snr_err("sweep: give the traces, at least one --param (or --configs), and -o DIR");
			fputs(sweep_usage, stderr);
			goto out;
		}
		char **windows = NULL, *base_json = NULL;
		size_t nwindows = 0;
		rc = new_plan_inputs(argv + optind, argc - optind, base, &windows, &nwindows, &base_json);
		if (!rc && sweep_plan_create(out, windows, nwindows, base_json, axes, naxes, per_task, err, sizeof(err))) {
			snr_err("sweep: %s", err);
			rc = 1;
		}
		for (size_t i = 0; i < nwindows; i++)
			free(windows[i]);
		free(windows);
		free(base_json);
		if (rc)
			goto out;
		rc = 1;
		if (sweep_plan_open(&plan, out, err, sizeof(err))) {
			snr_err("sweep: %s", err);
			goto out;
		}
	}

	if (plan_only) {
		printf("%zu\n", plan.ntasks);
		fprintf(stderr, "snr: sweep: %s: %zu points in %zu tasks, none run: snr sweep --task-index 0..%zu %s, then "
				"snr sweep --gather %s\n",
			plan.dir, plan.npoints, plan.ntasks, plan.ntasks - 1, plan.dir, plan.dir);
		rc = 0;
		mode = MODE_COUNT;
		sweep_plan_free(&plan);
		goto out;
	}
	switch (mode) {
	case MODE_COUNT:
		printf("%zu\n", plan.ntasks);
		rc = 0;
		break;
	case MODE_TASK:
		if (sweep_run_task(&plan, task, stdout, err, sizeof(err))) {
			snr_err("sweep: %s", err);
			rc = 1;
		} else {
			rc = 0;
		}
		break;
	case MODE_GATHER: rc = gather_and_show(&plan, as_json); break;
	case MODE_NEW:
	case MODE_RESUME: {
		size_t *todo, ntodo = sweep_unfinished_tasks(&plan, &todo);
		if (mode == MODE_RESUME) {
			fprintf(stderr, "snr: sweep: %s: %zu of %zu tasks to run", plan.dir, ntodo, plan.ntasks);
			for (size_t i = 0; i < ntodo; i++)
				fprintf(stderr, "%s%zu", i ? "," : " (", todo[i]);
			fputs(ntodo ? ")\n" : "\n", stderr);
			if (slurm)
				sweep_slurm_cancel_stale(&plan);
		}
		rc = 0;
		if (ntodo && slurm) {
			if (sweep_run_slurm(&plan, todo, ntodo, &so, err, sizeof(err))) {
				snr_err("sweep: --slurm: %s", err);
				rc = 1;
			} else if (!so.wait) {
				printf("the gather job writes %s/results.json; until then: snr sweep --gather %s\n", plan.dir,
				       plan.dir);
				free(todo);
				break;
			}
		} else if (ntodo) {
			size_t failed = sweep_run_local(&plan, todo, ntodo, (unsigned)jobs);
			if (failed)
				rc = 1;
		}
		free(todo);
		int grc = gather_and_show(&plan, as_json);
		rc = rc ? rc : grc;
		break;
	}
	}
	sweep_plan_free(&plan);
out:
	sweep_axes_free(axes, naxes);
	free(so.sbatch_args);
	return rc;
}
