/*
 * bench_replay.c: replay speed of the TA1 GRM on one trace, in instructions
 * and simulated cycles per second, with the tracker
 *   none      no tracker attached (functional + timing only);
 *   all-NULL  a tracker whose callbacks are all NULL: must cost nothing
 *             measurable over "none", since the GRM and the timing model test
 *             the callback mask once per event kind, not the pointers;
 *   metrics   the metrics writer (every callback, events encoded and
 *             compressed into a .snrm);
 *   replay    `snr replay -o` end to end (snr_replay: trace load, pc checks,
 *             the replayer's collector, metrics, end-state digest).
 * The first three drive the simulator through its ABI and time only the
 * stepping pass; the time to decode the trace's steps alone is measured
 * separately and printed, so the simulator's own rate can be read off.
 *
 * usage: bench_replay T.snrt [REPEAT]   (best of REPEAT, default 5)
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

enum mode { NONE, ALL_NULL, METRICS };

/* Loads the trace into a fresh GRM and times the stepping pass. */
static double run(const char *path, enum mode mode, const char *metrics_path, uint64_t *insns, uint64_t *cycles)
{
	const struct snr_sim_ops *ops = &snr_sim_ta1;
	char err[1024];
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	if (!t)
		die(path, err);
	const char *meta = snr_trace_meta_json(t);
	/* the config object inside META, as the replayer passes it */
	char *cfg = NULL;
	const char *c = strstr(meta, "\"config\":");
	if (c) {
		c += 9;
		int depth = 0;
		const char *e = c;
		do {
			depth += *e == '{', depth -= *e == '}';
			e++;
		} while (depth > 0 && *e);
		cfg = strndup(c, (size_t)(e - c));
	}
	struct snr_sim *s = ops->create(cfg, 0, 1, err, sizeof(err));
	if (!s)
		die("create", err);
	struct snr_tracker null_tracker = {.abi_version = SNR_TRACKER_ABI_VERSION};
	struct snr_metrics_writer *mw = NULL;
	if (mode == ALL_NULL)
		ops->attach_tracker(s, &null_tracker);
	if (mode == METRICS) {
		mw = snr_metrics_create(metrics_path, "{\"format\":\"snr metrics\"}", err, sizeof(err));
		if (!mw)
			die("metrics", err);
		ops->attach_tracker(s, snr_metrics_tracker(mw));
	}
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	struct snr_trace_step st;
	uint64_t first_pc = 0;
	bool first = true;
	while (snr_trace_next(t, &st) == 1) {
		if (first)
			first_pc = st.pc, first = false;
		if (st.code_len && ops->load_code(s, st.pc, st.code, st.code_len))
			die("load_code", ops->error(s));
		for (unsigned i = 0; i < st.nregs; i++)
			if (ops->set_reg(s, st.regs[i].reg, st.regs[i].val, regs[st.regs[i].reg].size))
				die("set_reg", ops->error(s));
		for (unsigned i = 0; i < st.nmem; i++)
			if (ops->load_mem(s, st.mem[i].space, st.mem[i].chip, st.mem[i].addr, st.mem[i].data, st.mem[i].len))
				die("load_mem", ops->error(s));
	}
	uint8_t pcb[8];
	memcpy(pcb, &first_pc, 8);
	ops->set_reg(s, TA1_REG_PC, pcb, 8);
	snr_trace_rewind(t);
	double t0 = now_s();
	uint64_t n = 0;
	while (snr_trace_next(t, &st) == 1) {
		struct snr_sim_step out;
		if (ops->step(s, st.index, &out))
			die("step", ops->error(s));
		for (unsigned i = 0; i < st.npost_regs; i++)
			ops->set_reg(s, st.post_regs[i].reg, st.post_regs[i].val, regs[st.post_regs[i].reg].size);
		for (unsigned i = 0; i < st.npost_mem; i++)
			ops->load_mem(s, st.post_mem[i].space, st.post_mem[i].chip, st.post_mem[i].addr, st.post_mem[i].data,
				      st.post_mem[i].len);
		n++;
		if (out.exited)
			break;
	}
	*cycles = ops->finish(s);
	double dt = now_s() - t0;
	if (mw && snr_metrics_finish(mw, "{}", err, sizeof(err)))
		die("metrics", err);
	*insns = n;
	ops->destroy(s);
	snr_trace_close(t);
	free(cfg);
	return dt;
}

static double decode_only(const char *path)
{
	char err[1024];
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	if (!t)
		die(path, err);
	struct snr_trace_step st;
	while (snr_trace_next(t, &st) == 1)
		;
	snr_trace_rewind(t);
	double t0 = now_s();
	while (snr_trace_next(t, &st) == 1)
		;
	double dt = now_s() - t0;
	snr_trace_close(t);
	return dt;
}

static void row(const char *name, double best, double decode, uint64_t insns, uint64_t cycles)
{
	double sim = best - decode > 0 ? best - decode : best;
	printf("%-10s %9.2f M insn/s %9.2f M cycles/s   (simulator alone %7.2f M insn/s)\n", name, insns / best / 1e6,
	       cycles / best / 1e6, insns / sim / 1e6);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_replay T.snrt [REPEAT]\n");
		return 2;
	}
	const char *path = argv[1];
	int repeat = argc > 2 ? atoi(argv[2]) : 5;
	char mpath[256];
	snprintf(mpath, sizeof(mpath), "%s/bench-replay-%d.snrm", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp",
		 (int)getpid());
	double best[3] = {1e9, 1e9, 1e9}, dec = 1e9, rep = 1e9;
	uint64_t insns = 0, cycles = 0;
	/* Interleaved, so that drift in the machine's speed hits every mode alike. */
	for (int r = 0; r < repeat; r++) {
		double d = decode_only(path);
		dec = d < dec ? d : dec;
		for (int m = 0; m < 3; m++) {
			double dt = run(path, (enum mode)m, mpath, &insns, &cycles);
			best[m] = dt < best[m] ? dt : best[m];
		}
		struct snr_replay_opts o = {.trace_path = path, .sim = "ta1", .metrics_path = mpath};
		struct snr_replay_result res;
		char err[1024];
		double t0 = now_s();
		if (snr_replay(&o, &res, err, sizeof(err)) || !res.ok)
			die("snr_replay", res.ok ? err : res.report);
		double dt = now_s() - t0;
		rep = dt < rep ? dt : rep;
	}
	printf("trace %s: %llu instructions, %llu cycles (best of %d)\n", path, (unsigned long long)insns,
	       (unsigned long long)cycles, repeat);
	printf("decoding the trace's steps alone: %.2f M steps/s\n", insns / dec / 1e6);
	row("none", best[NONE], dec, insns, cycles);
	row("all-NULL", best[ALL_NULL], dec, insns, cycles);
	row("metrics", best[METRICS], dec, insns, cycles);
	printf("%-10s %9.2f M insn/s %9.2f M cycles/s   (whole snr replay -o: load, checks, digest, metrics)\n",
	       "replay", insns / rep / 1e6, cycles / rep / 1e6);
	printf("all-NULL tracker vs none: %+.1f%% time; metrics vs none: %.2fx\n",
	       100.0 * (best[ALL_NULL] - best[NONE]) / best[NONE], best[METRICS] / best[NONE]);
	unlink(mpath);
	return 0;
}
