/*
 * cmd_analyze.c: `snr analyze KIND ...`, dispatching to the analyses in
 * analyzer/. Each analysis is one row of the table below and one function
 * `int snr_analyze_KIND(int argc, char **argv)` (argv[0] = KIND).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "lib/snr_util.h"
#include "analyzer/deps.h"
#include "analyzer/pod.h"
#include "analyzer/pod_suggest.h"
#include "analyzer/windows.h"
#include "lib/snr_set.h"
#include "snr_cli.h"

struct analysis {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
	bool whole_set; /* reads a set as one input (the pod's chips together), not window by window */
};

static const struct analysis analyses[] = {
	{"dma", snr_analyze_dma, "per DMA: issue, wait, link, base-latency and transfer stall, slack", false},
	{"vmem", snr_analyze_vmem, "VMEM pages over time: used, unused, free, largest free region", false},
	{"util", snr_analyze_util, "busy fraction per window: scalar, vector, MXU, DMA links, HBM", false},
	{"deps", snr_analyze_deps, "dependency graph, conservative and relaxed; per DMA its backtail", false},
	{"suggest", snr_analyze_suggest, "Algorithm 2: DMA moves that remove stalls (--verify: what-if replay)", false},
	{"pod", snr_analyze_pod, "a pod's set: critical path across chips, ports and links, Elk's breakdown", true},
	{NULL, NULL, NULL, false},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: snr analyze KIND T.snrt|M.snrm [OPTIONS]\n"
		   "       snr analyze KIND SET|FILE... [OPTIONS]\n\nkinds:\n");
	for (size_t i = 0; analyses[i].name; i++)
		fprintf(f, "  %-8s %s\n", analyses[i].name, analyses[i].summary);
	fprintf(f, "\n`snr analyze KIND --help` describes one. A trace is replayed in its simulator first;\n"
		   "a metrics file (snr replay -o) is read back. --json output is documented in\n"
		   "docs/analyses.md. Every pc is printed with its source line when the program\n"
		   "has line tables (snr cc -g); --elf PROG names the program if the trace's is gone.\n"
		   "\n"
		   "Several windows (a trace or metrics set, or several files): the analysis runs on\n"
		   "each window alone (its own output under a `== window K` heading), then a table\n"
		   "gives each window's, each group's (a set is a group) and all windows' cycles,\n"
		   "stall cycles by cause and DMAs. --json: {\"windows\": [{\"window\": K, ...,\n"
		   "\"result\": the analysis's document}], \"groups\": [...], \"together\": {...}}.\n");
}

/* The options of the analyses that take a value (the next argument): an
 * analysis that gains one must be named here, or its value would be taken
 * for a second input. */
static bool takes_value(const char *arg)
{
	static const char *const with_value[] = {"--config", "--dot",	     "--max-chain", "--rounds", "--sim",
						 "--top",    "--verify-max", "--interval",  "--window", "--trace"};
	for (size_t i = 0; i < sizeof(with_value) / sizeof(with_value[0]); i++)
		if (!strcmp(arg, with_value[i]))
			return true;
	return false;
}

/* KIND on several windows: each in a child process (one window's memory at
 * a time), its output under a heading (or, --json, as "result"), then the
 * figures per window, per group and together. */
static int analyze_windows(const struct analysis *a, int argc, char **argv, const int *inputs, int ninputs)
{
	bool json = false, dot = false, trace = false;
	for (int i = 1; i < argc; i++) {
		json |= !strcmp(argv[i], "--json");
		dot |= !strcmp(argv[i], "--dot") || !strncmp(argv[i], "--dot=", 6);
		trace |= !strcmp(argv[i], "--trace") || !strncmp(argv[i], "--trace=", 8);
	}
	if (dot || trace) {
		snr_err("analyze %s: --%s names one window's %s: give one window", a->name, dot ? "dot" : "trace",
			dot ? "graph file" : "trace");
		return 2;
	}
	char **args = snr_xcalloc((size_t)ninputs, sizeof(*args));
	for (int k = 0; k < ninputs; k++)
		args[k] = argv[inputs[k]];
	struct snr_inputs in;
	char err[1024];
	if (snr_inputs_expand(args, ninputs, &in, err, sizeof(err))) {
		snr_err("analyze %s: %s", a->name, err);
		free(args);
		return 1;
	}
	/* the child's argv: the options as given, the first input replaced by
	 * the window, the other inputs left out */
	char **cargv = snr_xcalloc((size_t)argc + 1, sizeof(*cargv));
	int cargc = 0, slot = -1;
	for (int i = 0; i < argc; i++) {
		bool input = false;
		for (int k = 0; k < ninputs; k++)
			input |= inputs[k] == i;
		if (input && slot >= 0)
			continue;
		if (input)
			slot = cargc;
		cargv[cargc++] = argv[i];
	}
	struct an_windows w;
	an_windows_init(&w, &in);
	json_t *results = json_array();
	int rc = 0;
	for (size_t i = 0; i < in.n; i++) {
		cargv[slot] = in.v[i].path;
		FILE *out = json ? tmpfile() : NULL;
		if (json && !out) {
			snr_err("analyze %s: cannot create a temporary file", a->name);
			rc = 1;
			break;
		}
		if (!json) {
			printf("== window %zu: %s #%llu (%s)", i, in.v[i].group, (unsigned long long)in.v[i].set_window,
			       in.v[i].path);
			if (in.v[i].hit >= 0)
				printf(", breakpoint hit %lld", (long long)in.v[i].hit);
			printf(" ==\n");
		}
		json_t *sum;
		int crc = an_windows_run(a->run, cargc, cargv, out, &sum);
		an_windows_set(&w, i, sum);
		json_decref(sum);
		if (json) {
			json_t *o = snr_input_json(&in, i);
			rewind(out);
			json_error_t je;
			json_t *res = crc ? NULL : json_loadf(out, JSON_DISABLE_EOF_CHECK, &je);
			fclose(out);
			if (!crc && !res) {
				snr_err("analyze %s: window %zu: its output is not JSON: %s", a->name, i, je.text);
				crc = 1;
			}
			json_object_set_new(o, "result", res ? res : json_null());
			json_array_append_new(results, o);
		} else {
			printf("\n");
		}
		if (crc && (!rc || crc == 3))
			rc = crc;
	}
	if (json) {
		json_t *tj = an_windows_json(&w);
		json_t *root = json_object();
		json_object_set_new(root, "schema", json_string("snr.analyze.windows/1"));
		json_object_set_new(root, "kind", json_string(a->name));
		json_object_set_new(root, "windows", results);
		json_object_set(root, "groups", json_object_get(tj, "groups"));
		json_object_set(root, "together", json_object_get(tj, "total"));
		json_decref(tj);
		json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(root);
	} else {
		json_decref(results);
		printf("== together: %zu windows ==\n", in.n);
		an_windows_print(&w, stdout);
		if (rc)
			printf("(a window that failed has no figures: its error is above)\n");
	}
	an_windows_free(&w);
	snr_inputs_free(&in);
	free(cargv);
	free(args);
	return rc;
}

/* No trace or metrics file: said, with where the analysis's options are. */
static int missing_input(const char *kind)
{
	snr_err("analyze %s: give a trace or metrics file (or a set, or several files); snr analyze %s --help", kind,
		kind);
	return 2;
}

int snr_cmd_analyze(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2)
			snr_err("analyze: give an analysis: dma, vmem, util, deps, suggest or pod");
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; analyses[i].name; i++) {
		if (strcmp(argv[1], analyses[i].name))
			continue;
		/* the inputs: the arguments that are neither options nor their values */
		int *inputs = snr_xcalloc((size_t)argc, sizeof(*inputs)), ninputs = 0;
		bool help = false;
		for (int k = 2; k < argc; k++) {
			help |= !strcmp(argv[k], "-h") || !strcmp(argv[k], "--help");
			if (argv[k][0] == '-' && argv[k][1])
				k += takes_value(argv[k]);
			else
				inputs[ninputs++] = k - 1;
		}
		/* suggest on a pod: its chips together (a move on one chip for another's stall) */
		if (!strcmp(argv[1], "suggest") && ninputs == 1 && snr_pod_suggest_is_pod(argv[inputs[0] + 1])) {
			free(inputs);
			return snr_analyze_pod_suggest(argc - 1, argv + 1);
		}
		int rc = !help && !analyses[i].whole_set &&
				 (ninputs > 1 || (ninputs == 1 && snr_is_set(argv[inputs[0] + 1])))
				 ? analyze_windows(&analyses[i], argc - 1, argv + 1, inputs, ninputs)
				 : ninputs == 0 && !help ? missing_input(argv[1])
							 : analyses[i].run(argc - 1, argv + 1);
		free(inputs);
		return rc;
	}
	snr_err("analyze: unknown analysis '%s'", argv[1]);
	usage(stderr);
	return 2;
}
