/*
 * bench_replay.c: replay speed of the TA1 GRM on one trace, in instructions
 * and simulated cycles per second, in these modes:
 *   functional  semantics, pc checks and poison checks, no timing model;
 *   timing      plus the timing model, no tracker attached;
 *   all-NULL    a tracker whose callbacks are all NULL: must cost nothing
 *               measurable over "timing", since the GRM and the timing model
 *               test the callback mask once per event kind, not the pointers;
 *   counting    every callback registered, each counting its events: the
 *               cost of full tracking itself;
 *   metrics     the metrics writer (every callback, events encoded and
 *               compressed into a .snrm);
 *   replay      `snr replay -o` end to end (snr_replay: trace load, pc checks,
 *               the replayer's collector, metrics, end-state digest).
 * The first five load the trace as the replayer does (replayer/window.c) and
 * time only the run through the simulator's run() method.
 *
 * usage: bench_replay T.snrt [REPEAT [MODE]]   (best of REPEAT, default 5;
 *        MODE alone, e.g. under perf; MODE replay writes its metrics to
 *        /dev/null)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "isa/ta1/ta1_isa.h"
#include "lib/snr_trace.h"
#include "replayer/metrics.h"
#include "replayer/replay.h"
#include "replayer/window.h"
#include "sim/grm_ta1.h"
#include "sim/snr_sim.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts); /* CPU time: the figures hold on a loaded machine */
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void die(const char *what, const char *err)
{
	fprintf(stderr, "bench_replay: %s: %s\n", what, err);
	exit(1);
}

enum mode { FUNCTIONAL, TIMING, ALL_NULL, COUNTING, METRICS, NMODES };
static const char *const mode_name[NMODES] = {"functional", "timing", "all-NULL", "counting", "metrics"};

static uint64_t counted[7], counted_kept[7];
static void n_issue(void *u, const struct snr_ev_insn *e) { (void)u, (void)e, counted[0]++; }
static void n_retire(void *u, const struct snr_ev_insn *e) { (void)u, (void)e, counted[1]++; }
static void n_stall(void *u, const struct snr_ev_stall *e) { (void)u, counted[2] += e->cycles; }
static void n_dma(void *u, const struct snr_ev_dma *e) { (void)u, counted[3] += e->bytes; }
static void n_mem(void *u, const struct snr_ev_mem *e) { (void)u, counted[4] += e->bytes; }
static void n_reg(void *u, const struct snr_ev_reg *e) { (void)u, (void)e, counted[5]++; }
static void n_busy(void *u, const struct snr_ev_busy *e) { (void)u, counted[6] += e->end - e->start; }

/* The config object inside the trace's META, as the replayer passes it. */
static char *trace_config(struct snr_trace *t)
{
	const char *c = strstr(snr_trace_meta_json(t), "\"config\":");
	if (!c)
		return NULL;
	c += 9;
	int depth = 0;
	const char *e = c;
	do {
		depth += *e == '{', depth -= *e == '}';
		e++;
	} while (depth > 0 && *e);
	return strndup(c, (size_t)(e - c));
}

/* Loads the trace into a fresh GRM and times the run. */
static double run(const char *path, enum mode mode, const char *metrics_path, uint64_t *insns, uint64_t *cycles)
{
	const struct snr_sim_ops *ops = &snr_sim_ta1;
	char err[1024];
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	if (!t)
		die(path, err);
	char *cfg = trace_config(t);
	struct snr_sim *s = ops->create(cfg, 0, 1, err, sizeof(err));
	if (!s)
		die("create", err);
	struct snr_tracker null_tracker = {.abi_version = SNR_TRACKER_ABI_VERSION};
	struct snr_tracker counting = {.abi_version = SNR_TRACKER_ABI_VERSION,
				       .on_issue = n_issue,
				       .on_retire = n_retire,
				       .on_stall = n_stall,
				       .on_dma = n_dma,
				       .on_mem = n_mem,
				       .on_reg = n_reg,
				       .on_busy = n_busy};
	struct snr_metrics_writer *mw = NULL;
	memset(counted, 0, sizeof(counted));
	if (mode == FUNCTIONAL)
		ta1_grm_set_functional_only(s, true);
	if (mode == ALL_NULL)
		ops->attach_tracker(s, &null_tracker);
	if (mode == COUNTING)
		ops->attach_tracker(s, &counting);
	if (mode == METRICS) {
		mw = snr_metrics_create(metrics_path, "{\"format\":\"snr metrics\"}", err, sizeof(err));
		if (!mw)
			die("metrics", err);
		ops->attach_tracker(s, snr_metrics_tracker(mw));
	}
	struct snr_window w;
	if (snr_window_load(t, ops, s, &w, err, sizeof(err)))
		die(path, err);
	if (w.npost)
		die(path, "has steps with effects to apply (host code): not a TA1 trace");
	double t0 = now_s();
	struct snr_sim_run out;
	if (snr_window_run(ops, s, &w, snr_trace_regs(t), 0, w.n, &out))
		die("run", ops->error(s));
	if (out.diverged)
		die("run", "diverged");
	*cycles = mode == FUNCTIONAL ? 0 : ops->finish(s);
	double dt = now_s() - t0;
	if (mw && snr_metrics_finish(mw, "{}", err, sizeof(err)))
		die("metrics", err);
	*insns = out.done;
	if (mode == COUNTING)
		memcpy(counted_kept, counted, sizeof(counted));
	ops->destroy(s);
	snr_trace_close(t);
	free(cfg);
	snr_window_free(&w);
	return dt;
}

static void row(const char *name, double best, uint64_t insns, uint64_t cycles, double base)
{
	printf("%-11s %8.2f M insn/s", name, insns / best / 1e6);
	if (cycles)
		printf(" %8.2f M cycles/s", cycles / best / 1e6);
	else
		printf(" %17s", "");
	if (base > 0)
		printf("   %.2fx the functional-only time", best / base);
	printf("\n");
}

/* One whole snr_replay() -o metrics_path: its CPU time. */
static double replay_once(const char *path, const char *metrics_path, uint64_t *insns, uint64_t *cycles)
{
	struct snr_replay_opts o = {.trace_path = path, .sim = "ta1", .metrics_path = metrics_path};
	struct snr_replay_result res;
	char err[1024];
	double t0 = now_s();
	if (snr_replay(&o, &res, err, sizeof(err)) || !res.ok)
		die("snr_replay", res.ok ? err : res.report);
	double dt = now_s() - t0;
	*insns = res.instructions;
	*cycles = res.cycles;
	return dt;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_replay T.snrt [REPEAT [MODE]]\n");
		return 2;
	}
	if (argc > 3) { /* one mode, for profiling */
		for (int m = 0; m < NMODES; m++)
			if (!strcmp(argv[3], mode_name[m])) {
				uint64_t insns, cycles;
				double best = 1e9;
				for (int r = 0; r < atoi(argv[2]); r++) {
					double dt = run(argv[1], (enum mode)m, "/dev/null", &insns, &cycles);
					best = dt < best ? dt : best;
				}
				row(mode_name[m], best, insns, m == FUNCTIONAL ? 0 : cycles, 0);
				return 0;
			}
		if (!strcmp(argv[3], "replay")) {
			double best = 1e9;
			uint64_t insns = 0, cycles = 0;
			for (int r = 0; r < atoi(argv[2]); r++) {
				double dt = replay_once(argv[1], "/dev/null", &insns, &cycles);
				best = dt < best ? dt : best;
			}
			row("replay", best, insns, cycles, 0);
			return 0;
		}
		fprintf(stderr, "bench_replay: no mode %s\n", argv[3]);
		return 2;
	}
	const char *path = argv[1];
	int repeat = argc > 2 ? atoi(argv[2]) : 5;
	char mpath[256];
	snprintf(mpath, sizeof(mpath), "%s/bench-replay-%d.snrm", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	double best[NMODES], rep = 1e9;
	uint64_t insns = 0, cycles = 0, c = 0;
	for (int m = 0; m < NMODES; m++)
		best[m] = 1e9;
	/* Interleaved, so that drift in the machine's speed hits every mode alike. */
	for (int r = 0; r < repeat; r++) {
		for (int m = 0; m < NMODES; m++) {
			double dt = run(path, (enum mode)m, mpath, &insns, m == FUNCTIONAL ? &c : &cycles);
			best[m] = dt < best[m] ? dt : best[m];
		}
		uint64_t ri, rc;
		double dt = replay_once(path, mpath, &ri, &rc);
		rep = dt < rep ? dt : rep;
	}
	printf("trace %s: %llu instructions, %llu cycles (best of %d, CPU time)\n", path, (unsigned long long)insns,
	       (unsigned long long)cycles, repeat);
	for (int m = 0; m < NMODES; m++)
		row(mode_name[m], best[m], insns, m == FUNCTIONAL ? 0 : cycles, m == FUNCTIONAL ? 0 : best[FUNCTIONAL]);
	printf("%-11s %8.2f M insn/s %8.2f M cycles/s   (whole snr replay -o: load, checks, digest, metrics)\n",
	       "replay", insns / rep / 1e6, cycles / rep / 1e6);
	printf("all-NULL tracker vs timing: %+.1f%% time; counting (every callback) vs timing: %.2fx; "
	       "metrics vs timing: %.2fx\n",
	       100.0 * (best[ALL_NULL] - best[TIMING]) / best[TIMING], best[COUNTING] / best[TIMING],
	       best[METRICS] / best[TIMING]);
	printf("events counted per run: %llu issue, %llu retire, %llu reg\n", (unsigned long long)counted_kept[0],
	       (unsigned long long)counted_kept[1], (unsigned long long)counted_kept[5]);
	unlink(mpath);
	return 0;
}
