/*
 * cmd_replay.c: `snr replay`, the "Replay": run a trace in a simulator,
 * check it against the recording, print the performance summary and write
 * the metrics file.
 */
#include <errno.h>
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/windows.h"
#include "lib/snr_output.h"
#include "lib/snr_pod.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"
#include "replayer/pod.h"
#include "replayer/replay.h"
#include "snr_cli.h"

static const char replay_usage[] =
	"usage: snr replay T.snrt [--sim ta1|unicorn|PATH.so] [--config M.json] [-o M.snrm [--force]] [--json]\n"
	"                  [--cache-report[=N]]\n"
	"       snr replay SET|T.snrt... [-o MSET] [--json] [...]\n"
	"       snr replay POD [--config M.json] [-o MSET] [--json] [--threads N]\n"
	"\n"
	"Loads the trace's snapshot into a simulator, runs the recorded instructions\n"
	"with every performance event reported to the tracker, and checks the replay:\n"
	"every executed pc against the recorded sequence, then the registers and the\n"
	"memory the window wrote against the trace's end-state digest.\n"
	"\n"
	"options:\n"
	"  --sim NAME|PATH.so  the simulator (default: the one for the trace's ISA:\n"
	"                      ta1 for TA1, unicorn for x86-64 and aarch64; a plugin\n"
	"                      exports snr_sim_plugin, docs/simulator-plugin.md)\n"
	"  --config M.json     machine config (default: the one stored in the trace)\n"
	"  -o, --output FILE   write the metrics file (.snrm, docs/metrics-format.md)\n"
	"  --force             replace FILE if it exists (never an input: the trace, its\n"
	"                      ELF, the config)\n"
	"  --json              print the summary as JSON\n"
	"  --cache-report[=N]  run the cache model (the config's \"cache\" object,\n"
	"                      docs/unicorn-sim.md) on the memory events and list the\n"
	"                      N instructions (default 20) with the most misses\n"
	"  --threads N         a pod: run each chip's own parts (loading its trace,\n"
	"                      its instructions between DMAs and waits, checking its\n"
	"                      end state, writing its metrics file) on N threads\n"
	"                      (default: the online CPUs, at most the chips); the DMAs\n"
	"                      and waits run in the device's order on one; the output\n"
	"                      is the same for every N\n"
	"  --elf PROG          the program whose line tables place the pcs of divergence\n"
	"                      messages in the source (default: the ELF the trace recorded)\n"
	"  -h, --help          this text\n"
	"\n"
	"Several windows (a trace set from `snr record --windows`, or several traces):\n"
	"each is replayed and verified, then a table gives the figures per window, per\n"
	"group (a set is a group: e.g. prefill and decode) and together; --json has them\n"
	"with each window's index; -o MSET writes a metrics set (a folder of .snrm and\n"
	"set.json) that analyze, annotate and report read as the set.\n"
	"\n"
	"A pod recording (`snr record --pod`): every chip's window in one timing\n"
	"simulation on one machine and one fabric, the chips in the device's time\n"
	"order (the device's --timing scheduler), a peer's replayed writes and signals\n"
	"reaching the chips that read them; every chip's pcs and end state verified\n"
	"against its trace; the figures per chip and the pod's cycles (the last chip's\n"
	"end); -o MSET writes the pod's metrics set (one .snrm per chip, the layout of\n"
	"`snr device --timing -o MSET`, which `snr analyze pod MSET` reads). Not yet\n"
	"taken with a pod: --sim other than ta1, --cache-report.\n"
	"\n"
	"Exit status: 0 replayed and verified, 3 diverged (the report names the\n"
	"instruction), 1 could not replay, 2 bad usage.\n";

/* Several windows: each replayed (and written into the metrics set), then
 * the figures per window, per group and together. */
/* A pod recording: its chips replayed together (replayer/pod.c). */
static int replay_pod(const char *dir, struct snr_replay_opts *o, int as_json, bool threads_given)
{
	if (o->cache_report) {
		snr_err("replay: %s is a pod recording: --cache-report is not built for a pod replay yet (the pod "
			"replays without it)", dir);
		return 2;
	}
	struct snr_pod_replay r;
	char err[1024];
	if (snr_pod_replay(dir, o, &r, err, sizeof(err))) {
		snr_err("replay: %s", err);
		snr_pod_replay_free(&r);
		return 1;
	}
	if (as_json) {
		json_t *j = snr_pod_replay_json(dir, &r);
		if (r.ok && o->metrics_path)
			json_object_set_new(j, "metrics", json_string(o->metrics_path));
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(j);
	} else {
		printf("%-5s %12s %12s %7s %14s %6s %12s  %s\n", "chip", "instructions", "cycles", "IPC", "stall cycles",
		       "DMAs", "DMA bytes", "verified");
		for (unsigned k = 0; k < r.chips; k++) {
			const struct snr_replay_result *c = &r.chip[k].r;
			uint64_t stall = 0;
			for (int s = 0; s < SNR_STALL_COUNT; s++)
				stall += c->stall_cycles[s];
			printf("%-5u %12llu %12llu %7.3f %14llu %6llu %12llu  %s\n", k, (unsigned long long)c->instructions,
			       (unsigned long long)c->cycles, c->cycles ? (double)c->instructions / (double)c->cycles : 0.0,
			       (unsigned long long)stall, (unsigned long long)c->dma_count, (unsigned long long)c->dma_bytes,
			       c->report[0] ? c->report : !c->ok ? "NO" : c->end_state_checked ? "pcs, end state"
				       : c->exited ? "pcs (the program ended)" : "pcs (no end-state digest)");
		}
		printf("pod cycles    %llu (the last chip's end; every chip's window starts at cycle 0)\n",
		       (unsigned long long)r.cycles);
		if (r.ok && o->metrics_path)
			printf("metrics set   %s: %u chips (snr analyze pod %s)\n", o->metrics_path, r.chips, o->metrics_path);
		if (r.ok)
			printf("verified      every chip's pcs matched; end state matches the recording on %u of %u chips\n",
			       (unsigned)({
				       unsigned n = 0;
				       for (unsigned k = 0; k < r.chips; k++)
					       n += r.chip[k].r.end_state_checked;
				       n;
			       }),
			       r.chips);
	}
	int rc = r.ok ? 0 : 3;
	if (threads_given) /* stderr only: stdout, --json and -o are the same for every N */
		fprintf(stderr,
			"snr: replay: %u thread%s ran the chips' own parts (loading, end-state checks, metrics files); "
			"%u the chips' private stretches of the timing simulation (its DMAs and waits in order on one)\n",
			r.threads, r.threads == 1 ? "" : "s", r.sim_threads);
	if (!r.ok)
		fprintf(stderr, "snr: replay: pod %s DIVERGED\n%s", dir, r.report);
	snr_pod_replay_free(&r);
	return rc;
}

static int replay_windows(struct snr_replay_opts *o, int as_json, int nargs, char **args)
{
	struct snr_inputs in;
	char err[1024];
	if (snr_inputs_expand(args, nargs, &in, err, sizeof(err))) {
		snr_err("replay: %s", err);
		return 1;
	}
	struct snr_set_writer *set = NULL;
	const char *mset = o->metrics_path;
	if (mset) {
		json_t *info = json_object();
		json_object_set_new(info, "windows_requested", json_integer((json_int_t)in.n));
		set = snr_set_create(mset, "metrics", info, err, sizeof(err));
		if (!set) {
			snr_err("replay: -o: %s", err);
			snr_inputs_free(&in);
			return 1;
		}
	}
	struct an_windows w;
	an_windows_init(&w, &in);
	int rc = 0;
	size_t nend = 0; /* windows whose end state was compared */
	struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
	for (size_t i = 0; i < in.n; i++) {
		o->trace_path = in.v[i].path;
		o->metrics_path = set ? snr_set_window_path(set, i) : NULL;
		memset(r, 0, sizeof(*r));
		if (snr_replay(o, r, err, sizeof(err))) {
			snr_err("replay: window %zu (%s): %s", i, in.v[i].path, err);
			rc = 1;
			break;
		}
		if (!r->ok) {
			fprintf(stderr, "snr: replay: window %zu (%s) DIVERGED\n%s", i, in.v[i].path, r->report);
			rc = 3;
			break;
		}
		nend += r->end_state_checked;
		json_t *sj = snr_replay_summary(r);
		an_windows_set(&w, i, sj);
		if (set) {
			json_t *e = json_object();
			json_object_set_new(e, "group", json_string(in.v[i].group));
			json_object_set_new(e, "set_window", json_integer((json_int_t)in.v[i].set_window));
			json_object_set_new(e, "trace", json_string(in.v[i].path));
			if (in.v[i].hit >= 0)
				json_object_set_new(e, "hit", json_integer(in.v[i].hit));
			json_object_set_new(e, "instructions", json_integer((json_int_t)r->instructions));
			if (snr_set_add(set, i, e, err, sizeof(err))) {
				snr_err("replay: -o: %s", err);
				rc = 1;
				json_decref(sj);
				break;
			}
		}
		json_decref(sj);
	}
	free(r);
	if (set) {
		if (rc) {
			snr_err("replay: the metrics set stays %s, incomplete", snr_set_writer_dir(set));
			snr_set_abandon(set, "a window failed");
		} else if (snr_set_finish(set, "complete", err, sizeof(err))) {
			snr_err("replay: -o: %s", err);
			rc = 1;
		}
	}
	if (!rc) {
		if (as_json) {
			json_t *j = an_windows_json(&w);
			json_object_set_new(j, "schema", json_string("snr.replay.windows/1"));
			if (mset)
				json_object_set_new(j, "metrics", json_string(mset));
			char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
			puts(t);
			free(t);
			json_decref(j);
		} else {
			an_windows_print(&w, stdout);
			printf("verified: every pc matched in all %zu windows; the end state matched the recording in %zu\n",
			       in.n, nend);
			if (mset)
				printf("metrics set %s: %zu windows\n", mset, in.n);
		}
	}
	an_windows_free(&w);
	snr_inputs_free(&in);
	return rc;
}

int snr_cmd_replay(int argc, char **argv)
{
	static const struct option opts[] = {
		{"sim", required_argument, NULL, 's'},   {"config", required_argument, NULL, 'c'},
		{"output", required_argument, NULL, 'o'}, {"json", no_argument, NULL, 'j'},
		{"cache-report", optional_argument, NULL, 'C'}, {"threads", required_argument, NULL, 'T'},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	struct snr_replay_opts o = {0};
	int as_json = 0, opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 's': o.sim = optarg; break;
		case 'c': o.config_path = optarg; break;
		case 'o': o.metrics_path = optarg; break;
		case 'j': as_json = 1; break;
		case 'C':
			o.cache_report = stdout;
			o.cache_report_rows = optarg ? (unsigned)strtoul(optarg, NULL, 10) : 0;
			break;
		case 'T': {
			char *end = NULL;
			errno = 0;
			unsigned long t = strtoul(optarg, &end, 10);
			if (!*optarg || *end || errno || optarg[0] == '-' || t < 1 || t > SNR_REPLAY_MAX_THREADS) {
				snr_err("replay: --threads %s: give a whole number of threads from 1 to %u", optarg,
					SNR_REPLAY_MAX_THREADS);
				return 2;
			}
			o.threads = (unsigned)t;
			break;
		}
		case 'h': fputs(replay_usage, stdout); return 0;
		default: fputs(replay_usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		snr_err("replay: give a trace (or a trace set, or several traces)");
		fputs(replay_usage, stderr);
		return 2;
	}
	/* every input named, so that -o is checked against them before any work (a
	 * set's metrics set is a folder, checked as it is made) */
	bool one = optind == argc - 1 && !snr_is_set(argv[optind]);
	if (snr_output_preflight("replay", one ? o.metrics_path : NULL, argv + optind, argc - optind,
				 (const char *const[]){o.config_path}, 1))
		return 1;
	if (optind == argc - 1 && snr_pod_is(argv[optind]))
		return replay_pod(argv[optind], &o, as_json, o.threads != 0);
	if (o.threads) {
		snr_err("replay: --threads is taken with a pod recording (`snr record --pod`) only: a trace or a set "
			"replays on one thread");
		return 2;
	}
	if (!one)
		return replay_windows(&o, as_json, argc - optind, argv + optind);
	char err[1024];
	o.trace_path = argv[optind];
	o.progress = isatty(2);
	if (o.cache_report && as_json)
		o.cache_report = stderr; /* stdout holds the JSON summary */
	struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
	if (snr_replay(&o, r, err, sizeof(err))) {
		snr_err("replay: %s", err);
		free(r);
		return 1;
	}
	uint64_t stall_total = 0;
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		stall_total += r->stall_cycles[k];
	if (as_json) {
		json_t *j = snr_replay_json(o.trace_path, r);
		char *s = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(j);
	} else {
		printf("instructions  %llu%s\n", (unsigned long long)r->instructions,
		       r->truncated ? " (the trace is truncated: replayed what it holds)" : "");
		printf("cycles        %llu\n", (unsigned long long)r->cycles);
		printf("IPC           %.3f\n", r->cycles ? (double)r->instructions / (double)r->cycles : 0.0);
		printf("stall cycles  %llu", (unsigned long long)stall_total);
		for (int k = 0; k < SNR_STALL_COUNT; k++)
			if (r->stall_cycles[k])
				printf("  %s %llu", snr_stall_cause_name((enum snr_stall_cause)k),
				       (unsigned long long)r->stall_cycles[k]);
		printf("\nDMAs          %llu (%llu bytes)\n", (unsigned long long)r->dma_count,
		       (unsigned long long)r->dma_bytes);
		if (r->ok)
			printf("verified      every pc matched%s\n",
			       r->end_state_checked ? "; end state matches the recording"
			       : r->exited ? "; the program ended inside the window"
					   : "; no end-state digest to compare");
		if (o.metrics_path)
			printf("metrics       %s\n", o.metrics_path);
	}
	if (!r->ok)
		fprintf(stderr, "snr: replay: DIVERGED\n%s", r->report);
	int rc = r->ok ? 0 : 3;
	free(r);
	return rc;
}
