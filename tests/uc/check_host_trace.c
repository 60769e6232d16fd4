/*
 * check_host_trace.c: proves a host trace (x86-64 or aarch64) complete and
 * its memory captures minimal from the trace itself, with unicorn as the
 * judge of what each instruction reads: the trace is replayed (snr_replay
 * picks the unicorn engine by the trace's ISA) with a tracker that keeps
 * every memory event (from unicorn's own read and write hooks) and register
 * event (from the ISA plugin's access query) by instruction, then:
 *
 *   complete: the replay ran every recorded pc with no read of an uncaptured
 *             byte or register (the engine fails such a step) and the end
 *             state matched the recording's digest;
 *   minimal:  every captured byte is read by the instruction it is attached
 *             to, per unicorn's hooks, and was neither captured before nor
 *             written earlier in the window; every captured register is read
 *             by its instruction, per the access query, and was neither
 *             captured nor written before.
 *
 * check_trace.c (tests/rec) does the same for TA1 traces on the device's
 * semantics. usage: check_host_trace T.snrt (exit 0 and a summary line, or 1
 * and the first violations)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "replayer/replay.h"

static int violations;

#define VIOLATION(...)                                        \
	do {                                                  \
		if (violations++ < 20) {                      \
			fprintf(stderr, "check_host_trace: "); \
			fprintf(stderr, __VA_ARGS__);         \
			fputc('\n', stderr);                  \
		}                                             \
	} while (0)

struct events {
	struct snr_ev_mem *mem;
	size_t nmem, mem_cap;
	struct snr_ev_reg *reg;
	size_t nreg, reg_cap;
};

static void on_mem(void *user, const struct snr_ev_mem *e)
{
	struct events *ev = user;
	if (ev->nmem == ev->mem_cap) {
		ev->mem_cap = ev->mem_cap ? 2 * ev->mem_cap : 4096;
		ev->mem = snr_xrealloc(ev->mem, ev->mem_cap * sizeof(*ev->mem));
	}
	ev->mem[ev->nmem++] = *e;
}

static void on_reg(void *user, const struct snr_ev_reg *e)
{
	struct events *ev = user;
	if (ev->nreg == ev->reg_cap) {
		ev->reg_cap = ev->reg_cap ? 2 * ev->reg_cap : 4096;
		ev->reg = snr_xrealloc(ev->reg, ev->reg_cap * sizeof(*ev->reg));
	}
	ev->reg[ev->nreg++] = *e;
}

/* Bytes of [lo, hi) that s holds. */
static uint64_t held(const struct snr_ranges *s, uint64_t lo, uint64_t hi, struct snr_range **miss, size_t *cap)
{
	size_t n = 0;
	snr_ranges_missing(s, snr_ranges_key(0, 0), lo, hi, miss, &n, cap);
	uint64_t missing = 0;
	for (size_t i = 0; i < n; i++)
		missing += (*miss)[i].hi - (*miss)[i].lo;
	return hi - lo - missing;
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: check_host_trace T.snrt\n");
		return 2;
	}
	struct events ev = {0};
	struct snr_tracker tr = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = &ev, .on_mem = on_mem, .on_reg = on_reg};
	struct snr_replay_opts o = {.trace_path = argv[1], .tracker = &tr};
	struct snr_replay_result r;
	char err[600];
	const char *why = NULL;
	if (snr_replay(&o, &r, err, sizeof(err)))
		fprintf(stderr, "check_host_trace: replay: %s\n", why = err);
	else if (!r.ok)
		fprintf(stderr, "check_host_trace: incomplete: the replay failed:\n%s", why = r.report);
	else if (!r.exited && !r.end_state_checked)
		fprintf(stderr, "check_host_trace: %s has no end-state digest to check the replay against\n",
			why = argv[1]);
	if (why) {
		free(ev.mem);
		free(ev.reg);
		return 1;
	}

	struct snr_trace *t = snr_trace_open(argv[1], err, sizeof(err));
	if (!t) {
		fprintf(stderr, "check_host_trace: %s\n", err);
		return 1;
	}
	size_t nregs = snr_trace_nregs(t);
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	bool *reg_known = snr_xcalloc(nregs ? nregs : 1, sizeof(*reg_known));
	bool *reg_read = snr_xcalloc(nregs ? nregs : 1, sizeof(*reg_read));
	struct snr_ranges known = {0}; /* captured so far or written by earlier instructions */
	struct snr_range *miss = NULL;
	size_t miss_cap = 0, mi = 0, ri = 0;
	uint64_t bytes = 0, nreg_captured = 0, steps = 0;
	struct snr_trace_step st;
	int n;
	while ((n = snr_trace_next(t, &st)) == 1 && st.index < r.instructions) {
		steps++;
		struct snr_ranges rd = {0}; /* what this instruction read */
		size_t m0 = mi;
		for (; mi < ev.nmem && ev.mem[mi].index == st.index; mi++)
			if (!ev.mem[mi].write)
				snr_ranges_add(&rd, snr_ranges_key(0, 0), ev.mem[mi].addr, ev.mem[mi].addr + ev.mem[mi].bytes);
		memset(reg_read, 0, nregs * sizeof(*reg_read));
		size_t r0 = ri;
		for (; ri < ev.nreg && ev.reg[ri].index == st.index; ri++)
			if (!ev.reg[ri].write && ev.reg[ri].reg < nregs)
				reg_read[ev.reg[ri].reg] = true;
		for (unsigned k = 0; k < st.nmem; k++) {
			const struct snr_trace_mem *c = &st.mem[k];
			uint64_t lo = c->addr, hi = c->addr + c->len;
			bytes += c->len;
			if (held(&rd, lo, hi, &miss, &miss_cap) != c->len)
				VIOLATION("instruction %llu (pc 0x%llx): captured [0x%llx, 0x%llx), which it does not read",
					  (unsigned long long)st.index, (unsigned long long)st.pc, (unsigned long long)lo,
					  (unsigned long long)hi);
			if (held(&known, lo, hi, &miss, &miss_cap))
				VIOLATION("instruction %llu (pc 0x%llx): captured [0x%llx, 0x%llx) again, or after the "
					  "window wrote it", (unsigned long long)st.index, (unsigned long long)st.pc,
					  (unsigned long long)lo, (unsigned long long)hi);
			snr_ranges_add(&known, snr_ranges_key(0, 0), lo, hi);
		}
		for (unsigned k = 0; k < st.nregs; k++) {
			unsigned reg = st.regs[k].reg;
			if (reg >= nregs)
				continue;
			nreg_captured++;
			if (!reg_read[reg])
				VIOLATION("instruction %llu (pc 0x%llx): captured register %s, which it does not read",
					  (unsigned long long)st.index, (unsigned long long)st.pc, regs[reg].name);
			if (reg_known[reg])
				VIOLATION("instruction %llu (pc 0x%llx): captured register %s again, or after the window "
					  "wrote it", (unsigned long long)st.index, (unsigned long long)st.pc, regs[reg].name);
			reg_known[reg] = true;
		}
		for (size_t q = m0; q < mi; q++)
			if (ev.mem[q].write)
				snr_ranges_add(&known, snr_ranges_key(0, 0), ev.mem[q].addr, ev.mem[q].addr + ev.mem[q].bytes);
		for (size_t q = r0; q < ri; q++)
			if (ev.reg[q].write && ev.reg[q].reg < nregs)
				reg_known[ev.reg[q].reg] = true;
		snr_ranges_free(&rd);
	}
	int rc = 1;
	if (n < 0)
		fprintf(stderr, "check_host_trace: %s\n", snr_trace_error(t));
	else if (violations)
		fprintf(stderr, "check_host_trace: %d violations\n", violations);
	else
		rc = 0;
	if (rc == 0)
		printf("check_host_trace: %llu instructions replayed in unicorn with no uncaptured read%s; %llu bytes "
		       "and %llu registers captured, each read by its instruction, none twice, none after a write\n",
		       (unsigned long long)steps, r.end_state_checked ? " and the end state matching" : "",
		       (unsigned long long)bytes, (unsigned long long)nreg_captured);
	snr_trace_close(t);
	snr_ranges_free(&known);
	free(miss);
	free(reg_known);
	free(reg_read);
	free(ev.mem);
	free(ev.reg);
	return rc;
}
