/*
 * trace_same.c: do two traces record the same window? The same pc, code,
 * captured registers and bytes, and post-step values at every instruction,
 * the same count and end reason, and the same end-state digest (registers
 * and the hashes of the written memory). `snr record --method sim` and
 * `--method step` must agree by this test (tests/rec/record_method.sh).
 *
 * usage: trace_same [--clock REG]... [--skip LO:HI] [--clock-calls] A.snrt B.snrt
 *        (exit 0 same, 1 different, 2 unreadable)
 *
 * --clock REG: REG counts the time of the machine that ran the program
 * (qemu-riscv64's cycle and instret read the host's clock), so two runs of
 * the same window end with different values: its end-state value must be
 * in both digests or in neither, and is not compared. A window that reads
 * it captures it, and that capture is compared as any other.
 *
 * --skip LO:HI (hex): the instructions at pcs in [LO, HI) are left out of
 * both traces before they are compared, and the digests are compared in
 * shape only (the same registers and blocks, not their values): for windows
 * that read the time through the vDSO, whose code there (a seqlock loop that
 * retries when the kernel updated the clock meanwhile) and whose results
 * differ from run to run, while everything around it must be the same.
 *
 * --clock-calls: steps marked call (a vDSO function the target ran as a
 * unit: clock_gettime, time) must be at the same instructions in both, with
 * the same post registers and the same post memory ranges, but their values
 * (the time read) are not compared, and the digests are compared in shape
 * only (the program's registers and stack hold what it did with the time).
 * Every other step, the calls' captured inputs included, is compared whole.
 */
#include <jansson.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "lib/snr_trace.h"

static int differ(uint64_t index, const char *what)
{
	fprintf(stderr, "trace_same: instruction %llu: %s differ\n", (unsigned long long)index, what);
	return 1;
}

static bool same_regs(const struct snr_trace_reg *regs, unsigned na, const struct snr_trace_regval *a, unsigned nb,
		      const struct snr_trace_regval *b)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (a[i].reg != b[i].reg || memcmp(a[i].val, b[i].val, regs[a[i].reg].size))
			return false;
	return true;
}

static bool same_mem(unsigned na, const struct snr_trace_mem *a, unsigned nb, const struct snr_trace_mem *b,
		     bool values)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (a[i].space != b[i].space || a[i].chip != b[i].chip || a[i].addr != b[i].addr || a[i].len != b[i].len ||
		    (values && memcmp(a[i].data, b[i].data, a[i].len)))
			return false;
	return true;
}

/* The same registers in the same order (values not compared). */
static bool same_reg_list(unsigned na, const struct snr_trace_regval *a, unsigned nb, const struct snr_trace_regval *b)
{
	if (na != nb)
		return false;
	for (unsigned i = 0; i < na; i++)
		if (a[i].reg != b[i].reg)
			return false;
	return true;
}

static const char *end_reason(const struct snr_trace *t)
{
	static char buf[2][64];
	static int k;
	json_t *e = snr_trace_end_json(t) ? json_loads(snr_trace_end_json(t), 0, NULL) : NULL;
	k ^= 1;
	snprintf(buf[k], sizeof(buf[k]), "%s", e ? json_string_value(json_object_get(e, "reason")) : "(none)");
	json_decref(e);
	return buf[k];
}

/* The next step outside [skip_lo, skip_hi). */
static int next_outside(struct snr_trace *t, struct snr_trace_step *s, uint64_t skip_lo, uint64_t skip_hi)
{
	int r;
	while ((r = snr_trace_next(t, s)) == 1 && s->pc >= skip_lo && s->pc < skip_hi)
		;
	return r;
}

int main(int argc, char **argv)
{
	const char *clocks[8];
	int nclocks = 0;
	uint64_t skip_lo = 0, skip_hi = 0;
	bool clock_calls = false;
	while (argc > 3 && ((!strcmp(argv[1], "--clock") && nclocks < 8) || !strcmp(argv[1], "--skip") ||
			    !strcmp(argv[1], "--clock-calls"))) {
		if (!strcmp(argv[1], "--clock-calls")) {
			clock_calls = true;
			argc--;
			argv++;
			continue;
		}
		if (!strcmp(argv[1], "--clock")) {
			clocks[nclocks++] = argv[2];
		} else if (sscanf(argv[2], "%" SCNx64 ":%" SCNx64, &skip_lo, &skip_hi) != 2 || skip_lo >= skip_hi) {
			fprintf(stderr, "trace_same: --skip wants LO:HI in hex, LO < HI: %s\n", argv[2]);
			return 2;
		}
		argc -= 2;
		argv += 2;
	}
	bool values = skip_lo == skip_hi && !clock_calls; /* compare the digests' values too */
	if (argc != 3) {
		fprintf(stderr, "usage: trace_same [--clock REG]... [--skip LO:HI] [--clock-calls] A.snrt B.snrt\n");
		return 2;
	}
	char err[512];
	struct snr_trace *a = snr_trace_open(argv[1], err, sizeof(err)), *b = NULL;
	if (!a || !(b = snr_trace_open(argv[2], err, sizeof(err)))) {
		fprintf(stderr, "trace_same: %s\n", err);
		snr_trace_close(a);
		return 2;
	}
	int rc = 0;
	size_t nregs = snr_trace_nregs(a);
	const struct snr_trace_reg *regs = snr_trace_regs(a);
	if (nregs != snr_trace_nregs(b)) {
		fprintf(stderr, "trace_same: the register tables differ\n");
		rc = 1;
		goto out;
	}
	uint64_t n = 0;
	for (;;) {
		struct snr_trace_step sa, sb;
		int ra = next_outside(a, &sa, skip_lo, skip_hi), rb = next_outside(b, &sb, skip_lo, skip_hi);
		if (ra < 0 || rb < 0) {
			fprintf(stderr, "trace_same: %s\n", snr_trace_error(ra < 0 ? a : b));
			rc = 2;
			goto out;
		}
		if (ra != rb) {
			fprintf(stderr, "trace_same: %s has %llu instructions, the other more\n", ra ? argv[2] : argv[1],
				(unsigned long long)n);
			rc = 1;
			goto out;
		}
		if (ra == 0)
			break;
		if (sa.pc != sb.pc)
			rc = differ(n, "the pcs");
		else if (sa.code_len != sb.code_len || memcmp(sa.code, sb.code, sa.code_len))
			rc = differ(n, "the code bytes");
		else if (!same_regs(regs, sa.nregs, sa.regs, sb.nregs, sb.regs))
			rc = differ(n, "the captured registers");
		else if (!same_mem(sa.nmem, sa.mem, sb.nmem, sb.mem, true))
			rc = differ(n, "the captured bytes");
		else if (sa.call != sb.call)
			rc = differ(n, "the call marks");
		else if (sa.call && clock_calls)
			rc = same_reg_list(sa.npost_regs, sa.post_regs, sb.npost_regs, sb.post_regs) &&
					     same_mem(sa.npost_mem, sa.post_mem, sb.npost_mem, sb.post_mem, false)
				     ? 0
				     : differ(n, "the call's post-step registers or memory ranges");
		else if (!same_regs(regs, sa.npost_regs, sa.post_regs, sb.npost_regs, sb.post_regs) ||
			 !same_mem(sa.npost_mem, sa.post_mem, sb.npost_mem, sb.post_mem, true))
			rc = differ(n, "the post-step values");
		else if (sa.unread != sb.unread)
			rc = differ(n, "the unread marks");
		if (rc)
			goto out;
		n++;
	}
	if (strcmp(end_reason(a), end_reason(b))) {
		fprintf(stderr, "trace_same: ended by %s and by %s\n", end_reason(a), end_reason(b));
		rc = 1;
		goto out;
	}
	const uint8_t *const *da, *const *db;
	size_t nba, nbb;
	const struct snr_trace_mem *ba, *bb;
	const uint64_t *ha, *hb;
	bool ga = snr_trace_digest(a, &da, &nba, &ba, &ha), gb = snr_trace_digest(b, &db, &nbb, &bb, &hb);
	if (ga != gb || (ga && nba != nbb)) {
		fprintf(stderr, "trace_same: the end-state digests differ in shape\n");
		rc = 1;
		goto out;
	}
	for (size_t r = 0; ga && r < nregs; r++) {
		bool clock = false;
		for (int c = 0; c < nclocks; c++)
			clock |= !strcmp(regs[r].name, clocks[c]);
		if ((da[r] == NULL) != (db[r] == NULL) || (da[r] && !clock && values && memcmp(da[r], db[r], regs[r].size))) {
			fprintf(stderr, "trace_same: the end-state digests differ at register %s\n", regs[r].name);
			rc = 1;
			goto out;
		}
	}
	for (size_t k = 0; ga && k < nba; k++)
		if (ba[k].space != bb[k].space || ba[k].chip != bb[k].chip || ba[k].addr != bb[k].addr ||
		    ba[k].len != bb[k].len || (values && ha[k] != hb[k])) {
			fprintf(stderr, "trace_same: the end-state digests differ at block %zu (0x%llx)\n", k,
				(unsigned long long)ba[k].addr);
			rc = 1;
			goto out;
		}
	printf("same: %llu instructions%s, %s, %s\n", (unsigned long long)n,
	       clock_calls ? " (the calls' time values not compared)" : values ? "" : " outside the skipped pcs",
	       end_reason(a), !ga ? "no digest in either" : values ? "same end-state digest" : "end-state digests of the same shape");
out:
	snr_trace_close(a);
	snr_trace_close(b);
	return rc;
}
