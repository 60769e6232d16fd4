/*
 * test_reg_known.c: recorder/reg_known.h, Algorithm 1's R as a bit set,
 * against the walk it replaced (a bool per register, the step's read set
 * visited register by register: skip the pc and the known, mark, capture
 * what the debugger has; every register of the written set marked known
 * and stale). Random windows of steps on ISAs of 53 registers (TA1), 64,
 * 69 (aarch64: two words) and 200, with the pc in either word, optional
 * registers the debugger lacks, register sizes of 1 to 64 bytes, and sets
 * with bits past the ISA's last register (which neither walk visits). Per
 * step: the captured registers (order, numbers, bytes), R and the stale
 * flags (none past the ISA's last register); and a checkpoint's copy of R put back after more steps, as
 * recorder/verify.c's stride_commit and stride_restore do.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "recorder/reg_known.h"

struct isa {
	size_t n;
	int pc;
	struct snr_isa_reg regs[SNR_ISA_MAX_REGS];
	uint8_t regbuf[SNR_ISA_MAX_REGS * 64];
	const uint8_t *regval[SNR_ISA_MAX_REGS];
	bool stale[SNR_ISA_MAX_REGS];
};

/* The walk reg_known.h replaced (recorder/record.c before it). */
static unsigned walk_capture(const struct rec *r, bool *known, const uint64_t *read, uint8_t *capbuf,
			     struct snr_trace_regval *rv)
{
	unsigned n = 0;
	for (size_t k = 0; k < r->niregs; k++) {
		if (!snr_regset_has(read, (unsigned)k) || (int)k == r->pc_reg || known[k])
			continue;
		known[k] = true;
		if (!r->regval[k])
			continue;
		memcpy(capbuf + k * 256, r->regval[k], r->iregs[k].size);
		rv[n].reg = (uint16_t)k;
		rv[n].val = capbuf + k * 256;
		n++;
	}
	return n;
}

static void walk_wrote(size_t n, bool *known, bool *stale, const uint64_t *written)
{
	for (size_t k = 0; k < n; k++)
		if (snr_regset_has(written, (unsigned)k))
			known[k] = stale[k] = true;
}

/* A random set: a few registers, now and then a whole word's worth, and
 * bits past the ISA's last register. */
static void random_set(uint64_t *set, size_t n, uint64_t *st)
{
	memset(set, 0, REG_WORDS * sizeof(*set));
	unsigned count = check_rand(st) % 8 == 0 ? 40 : (unsigned)(check_rand(st) % 4);
	for (unsigned j = 0; j < count; j++) {
		size_t k = check_rand(st) % (check_rand(st) % 16 == 0 ? SNR_ISA_MAX_REGS : n);
		set[k / 64] |= 1ull << (k % 64);
	}
}

static void test_isa(size_t n, int pc, uint64_t seed)
{
	static struct isa isa;
	memset(&isa, 0, sizeof(isa));
	uint64_t st = seed;
	isa.n = n;
	isa.pc = pc;
	size_t off = 0;
	for (size_t k = 0; k < n; k++) {
		isa.regs[k].size = (int)k == pc ? 8 : (uint16_t)(1 + check_rand(&st) % 64);
		isa.regs[k].pc = (int)k == pc;
		isa.regs[k].optional = check_rand(&st) % 10 == 0 && (int)k != pc;
		isa.regval[k] = isa.regs[k].optional ? NULL : isa.regbuf + off;
		off += isa.regs[k].size;
	}
	for (size_t b = 0; b < off; b++)
		isa.regbuf[b] = (uint8_t)check_rand(&st);
	struct rec r;
	memset(&r, 0, sizeof(r));
	r.niregs = n;
	r.pc_reg = pc;
	r.iregs = isa.regs;
	r.regval = isa.regval;
	r.stale = isa.stale;
	uint64_t known[REG_WORDS], saved[REG_WORDS];
	bool wknown[SNR_ISA_MAX_REGS] = {0}, wsaved[SNR_ISA_MAX_REGS], wstale[SNR_ISA_MAX_REGS] = {0};
	static uint8_t cap[SNR_ISA_MAX_REGS * 256], wcap[SNR_ISA_MAX_REGS * 256];
	struct snr_trace_regval rv[SNR_ISA_MAX_REGS], wrv[SNR_ISA_MAX_REGS];
	reg_known_reset(&r, known);
	memcpy(saved, known, sizeof(saved));
	memcpy(wsaved, wknown, sizeof(wsaved));
	int bad = 0;
	for (unsigned step = 0; step < 3000 && bad < 5; step++) {
		if (step % 500 == 499) { /* a fallback to the checkpoint */
			memcpy(known, saved, sizeof(saved));
			memcpy(wknown, wsaved, sizeof(wsaved));
		} else if (step % 100 == 0) { /* a checkpoint */
			memcpy(saved, known, sizeof(saved));
			memcpy(wsaved, wknown, sizeof(wsaved));
		}
		if (step % 1000 == 999) { /* a new window */
			reg_known_reset(&r, known);
			memset(wknown, 0, sizeof(wknown));
		}
		uint64_t read[REG_WORDS], written[REG_WORDS];
		random_set(read, n, &st);
		random_set(written, n, &st);
		unsigned got = reg_known_capture(&r, known, read, cap, rv);
		unsigned want = walk_capture(&r, wknown, read, wcap, wrv);
		bool same = got == want;
		for (unsigned q = 0; same && q < got; q++)
			same = rv[q].reg == wrv[q].reg && rv[q].val == cap + rv[q].reg * 256 &&
			       !memcmp(rv[q].val, wcap + wrv[q].reg * 256, isa.regs[rv[q].reg].size);
		reg_known_wrote(&r, known, written);
		walk_wrote(n, wknown, wstale, written);
		for (size_t k = 0; k < n; k++)
			same = same && snr_regset_has(known, (unsigned)k) == wknown[k] &&
			       isa.stale[k] == wstale[k];
		for (size_t k = n; k < SNR_ISA_MAX_REGS; k++) /* past the ISA's stale flags: never written */
			same = same && !isa.stale[k];
		CHECK(same, "%zu registers (pc %d), step %u: captured %u, the walk %u, or R or stale differ",
		      n, pc, step, got, want);
		bad += !same;
		if (step % 7 == 0) { /* a read of the registers: current again */
			memset(isa.stale, 0, sizeof(isa.stale));
			memset(wstale, 0, sizeof(wstale));
		}
	}
}

int main(void)
{
	test_isa(53, 32, 1); /* TA1 */
	test_isa(64, 63, 2); /* one whole word, the pc its last */
	test_isa(69, 32, 3); /* aarch64: two words */
	test_isa(69, 66, 4); /* the pc in the second word */
	test_isa(200, 130, 5);
	test_isa(1, 0, 6); /* the pc alone */
	return check_report("test_reg_known");
}
