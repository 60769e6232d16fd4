/*
 * test_xta.c: every Xta instruction, executed on a real ta1_machine, against
 * a plain C reference on random data.
 *
 *  - ta.vadd, ta.vmul, ta.vscale: bitwise equal to host IEEE f32 arithmetic
 *    (the project builds with -ffp-contract=off, so no FMA), NaN/inf/-0 included;
 *  - ta.vmax: bitwise equal to the documented rule (a NaN operand gives that
 *    NaN, a first; +0 beats -0);
 *  - ta.vsumrows: bitwise equal to f32 summation in ascending column order;
 *  - ta.vexp: within TA1_EXP_ULP_BOUND of exp computed in double, over a large
 *    random set and the edges (denormal results, overflow, underflow, NaN, inf,
 *    zeros); the maximum seen is printed;
 *  - ta.mxu.load + ta.mxu.mm / ta.mxu.mma: bitwise equal to the fixed-order f32
 *    reference, and within the documented error bound of a double reference
 *    (the largest ratio seen is printed);
 *  - the MXU with zeros in lhs (elements, rows), non-finite weights and NaN
 *    lhs elements: bitwise equal to the reference (the kernels skip zero
 *    steps only where that cannot change a bit); the same for the kernels'
 *    grouping of rows (1..140 rows, zero rows after data rows, groups zero
 *    at some steps in some rows, sums that overflow);
 *  - the vector and MXU checks above once per build of the kernels
 *    (AVX-512F, AVX2, baseline) the host's CPU can run;
 *  - deferred copies: random DMAs, debugger reads and writes, vector and MXU
 *    operations on two chips read and leave exactly what copying at once
 *    would (a shadow of every memory);
 *  - ta.mxu.load's weights stay as loaded whatever then writes the VMEM tile
 *    they came from (DMA, vector, row sum, MXU result, debugger), and a
 *    debugger's write to the weight buffer changes them;
 *  - ta.dma, ta.dma2d: 1-D and 2-D, positive and negative strides, between
 *    core memory, VMEM and HBM, and into another chip's HBM; guard bytes
 *    around every destination stay untouched;
 *  - ta.wait: flag counts and consumption; ta.chipid, ta.nchips;
 *  - faults, whose messages must say what and where.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/ta1/ta1_xta.h"
#include "tests/check.h"
#include "tests/ta1_harness.h"

/* The bounds docs/ta1-isa.md promises. */
#define TA1_EXP_ULP_BOUND 1.0
#define TA1_MXU_ERR_BOUND 129.0 /* |err| <= 129 * 2^-24 * (sum_k |l_k w_kj| (+ |d_j| for mma)) */

#define VM TA1_VMEM_BASE

static struct ta1_machine *m1;
static struct ta1_chip *c0;

/* An f32 drawn to hit the interesting cases often. */
static float rand_f32(void)
{
	static const uint32_t special[] = {
	    0x00000000, 0x80000000, 0x7f800000, 0xff800000, 0x7fc00000, 0xffc00000, 0x7fa00001, 0x7f800001,
	    0x00000001, 0x80000001, 0x007fffff, 0x00800000, 0x7f7fffff, 0xff7fffff, 0x3f800000, 0xbf800000,
	};
	switch (h_below(8)) {
	case 0:
		return h_f32(special[h_below(sizeof(special) / sizeof(special[0]))]);
	case 1:
		return h_f32((uint32_t)h_rand()); /* any bit pattern */
	default:
		return (float)((double)(int64_t)(h_rand() >> 11) / (double)(1ull << 52) * 8.0 - 4.0) *
		       (h_below(4) ? 1.0f : 1e-30f);
	}
}

static void put_f32(uint64_t addr, const float *v, uint64_t n)
{
	CHECK(ta1_chip_write_mem(c0, addr, v, n * 4) == n * 4, "cannot write 0x%llx",
	      (unsigned long long)addr);
}

static void get_f32(uint64_t addr, float *v, uint64_t n)
{
	CHECK(ta1_chip_read_mem(c0, addr, v, n * 4) == n * 4, "cannot read 0x%llx", (unsigned long long)addr);
}

static float ref_max(float a, float b)
{
	if (isnan(a))
		return a;
	if (isnan(b))
		return b;
	if (a == 0.0f && b == 0.0f)
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

static void test_elementwise(void)
{
	enum { NMAX = 4096 };
	static float a[NMAX], b[NMAX], got[NMAX], want[NMAX];
	const enum ta1_op ops[] = {TA1_OP_TA_VADD, TA1_OP_TA_VMUL, TA1_OP_TA_VMAX, TA1_OP_TA_VSCALE};
	unsigned bad = 0;
	for (unsigned k = 0; k < 200; k++) {
		enum ta1_op op = ops[k % 4];
		uint64_t n = 1 + h_below(NMAX);
		for (uint64_t i = 0; i < n; i++) {
			a[i] = rand_f32();
			b[i] = rand_f32();
		}
		float s = rand_f32();
		int alias = h_below(4) == 0; /* dst == a */
		uint64_t pa = VM + 4 * h_below(1024), pb = VM + 0x10000 + 4 * h_below(1024);
		uint64_t pd = alias ? pa : VM + 0x20000 + 4 * h_below(1024);
		put_f32(pa, a, n);
		put_f32(pb, b, n);
		for (uint64_t i = 0; i < n; i++) {
			switch (op) {
			case TA1_OP_TA_VADD:
				want[i] = a[i] + b[i];
				break;
			case TA1_OP_TA_VMUL:
				want[i] = a[i] * b[i];
				break;
			case TA1_OP_TA_VMAX:
				want[i] = ref_max(a[i], b[i]);
				break;
			default:
				want[i] = a[i] * s;
				break;
			}
		}
		uint64_t third = op == TA1_OP_TA_VSCALE ? h_bits(s) : pb;
		enum ta1_stop st = h_xta(c0, op, pd, pa, third, n);
		CHECK(st == TA1_STOP_BUDGET, "%s n=%llu stopped: %s", ta1_insn_table[op].mnemonic,
		      (unsigned long long)n, ta1_chip_fault(c0));
		get_f32(pd, got, n);
		for (uint64_t i = 0; i < n && bad < 10; i++)
			if (h_bits(got[i]) != h_bits(want[i])) {
				bad++;
				CHECK(0, "%s[%llu]: a=%08x b=%08x s=%08x: got %08x, want %08x",
				      ta1_insn_table[op].mnemonic, (unsigned long long)i, h_bits(a[i]),
				      h_bits(b[i]), h_bits(s), h_bits(got[i]), h_bits(want[i]));
			}
	}
	/* ta.vscale with dst overlapping a by a few elements either way: the
	 * elements in order, each reading a as the ones before it left it. */
	for (int off = -5; off <= 5; off++) {
		enum { N = 37, BASE = 8 };
		static float mem[N + 2 * BASE], ref[N + 2 * BASE];
		for (int i = 0; i < N + 2 * BASE; i++)
			mem[i] = ref[i] = rand_f32();
		float s = rand_f32();
		for (int i = 0; i < N; i++)
			ref[BASE + off + i] = ref[BASE + i] * s;
		put_f32(VM, mem, N + 2 * BASE);
		enum ta1_stop st = h_xta(c0, TA1_OP_TA_VSCALE, VM + 4 * (BASE + off), VM + 4 * BASE, h_bits(s), N);
		CHECK(st == TA1_STOP_BUDGET, "vscale overlapping by %d stopped: %s", off, ta1_chip_fault(c0));
		get_f32(VM, mem, N + 2 * BASE);
		for (int i = 0; i < N + 2 * BASE; i++)
			CHECK(h_bits(mem[i]) == h_bits(ref[i]), "vscale, dst = a %+d: element %d is %08x, want %08x",
			      off, i, h_bits(mem[i]), h_bits(ref[i]));
	}
	/* The max rule, case by case. */
	static const struct {
		uint32_t a, b, want;
	} mx[] = {
	    {0x80000000, 0x00000000, 0x00000000}, /* max(-0, +0) = +0 */
	    {0x00000000, 0x80000000, 0x00000000}, {0x80000000, 0x80000000, 0x80000000},
	    {0x7fc00001, 0x3f800000, 0x7fc00001}, /* NaN in a propagates */
	    {0x3f800000, 0xffc00002, 0xffc00002}, /* NaN in b propagates */
	    {0x7fc00003, 0x7fc00004, 0x7fc00003}, /* two NaNs: a's */
	    {0xff800000, 0x7f800000, 0x7f800000}, /* -inf, +inf */
	    {0xff800000, 0xbf800000, 0xbf800000}, {0x00000001, 0x80000001, 0x00000001}, /* denormals */
	};
	for (size_t i = 0; i < sizeof(mx) / sizeof(mx[0]); i++) {
		float fa = h_f32(mx[i].a), fb = h_f32(mx[i].b), r;
		put_f32(VM, &fa, 1);
		put_f32(VM + 4, &fb, 1);
		h_xta(c0, TA1_OP_TA_VMAX, VM + 8, VM, VM + 4, 1);
		get_f32(VM + 8, &r, 1);
		CHECK(h_bits(r) == mx[i].want, "vmax(%08x, %08x) = %08x, want %08x", mx[i].a, mx[i].b,
		      h_bits(r), mx[i].want);
	}
	/* n = 0 touches nothing, even with operands in no memory. */
	CHECK(h_xta(c0, TA1_OP_TA_VADD, 1, 2, 3, 0) == TA1_STOP_BUDGET, "vadd n=0 faulted: %s",
	      ta1_chip_fault(c0));
}

static void test_vsumrows(void)
{
	enum { MAXE = 1 << 16 };
	static float a[MAXE], got[4096];
	for (unsigned k = 0; k < 100; k++) {
		uint64_t rows = 1 + h_below(256), cols = h_below(MAXE / rows + 1);
		if (k % 10 == 0)
			cols = 0;
		for (uint64_t i = 0; i < rows * cols; i++)
			a[i] =
			    h_below(16) ? (float)((double)(int64_t)h_rand() / 9.2e18) * 1000.0f : rand_f32();
		uint64_t pa = VM + 0x100000, pd = VM + 0x10 * h_below(64);
		if (cols)
			put_f32(pa, a, rows * cols);
		memset(got, 0xa5, sizeof(got));
		put_f32(pd, got, rows + 1);
		CHECK(h_xta(c0, TA1_OP_TA_VSUMROWS, pd, pa, rows, cols) == TA1_STOP_BUDGET,
		      "vsumrows faulted: %s", ta1_chip_fault(c0));
		get_f32(pd, got, rows + 1);
		for (uint64_t r = 0; r < rows; r++) {
			float acc = 0.0f;
			for (uint64_t cix = 0; cix < cols; cix++)
				acc += a[r * cols + cix];
			if (h_bits(got[r]) != h_bits(acc)) {
				CHECK(0, "vsumrows %llux%llu row %llu: got %08x, want %08x",
				      (unsigned long long)rows, (unsigned long long)cols,
				      (unsigned long long)r, h_bits(got[r]), h_bits(acc));
				break;
			}
		}
		CHECK(h_bits(got[rows]) == 0xa5a5a5a5u, "vsumrows wrote past its %llu rows",
		      (unsigned long long)rows);
	}
}

/* exp error in float ULPs of the double reference. */
static double exp_ulps(float x, float got)
{
	double ref = exp((double)x);
	if (isnan(x))
		return isnan(got) ? 0.0 : INFINITY;
	float rounded = (float)ref; /* the correctly rounded result, but for ties */
	if (isinf(rounded) || isinf(got))
		return h_bits(got) == h_bits(rounded) ? 0.0 : INFINITY;
	if (ref == 0.0)
		return got == 0.0f ? 0.0 : INFINITY;
	int e;
	frexp(ref, &e); /* ref = f * 2^e, 0.5 <= f < 1 */
	int ulp_exp = (e - 1 < -126 ? -126 : e - 1) - 23;
	return fabs((double)got - ref) / ldexp(1.0, ulp_exp);
}

static void test_vexp(void)
{
	enum { N = 1 << 18 };
	static float in[N], out[N];
	double worst = 0.0;
	float worst_x = 0.0f;
	uint64_t total = 0;
	for (unsigned batch = 0; batch < 24; batch++) {
		for (uint64_t i = 0; i < N; i++) {
			double u = (double)(h_rand() >> 11) / (double)(1ull << 53);
			switch (batch % 4) {
			case 0:
				in[i] = (float)(u * 210.0 - 110.0);
				break; /* the whole range */
			case 1:
				in[i] = (float)(-87.4 - u * 17.0);
				break; /* denormal results, underflow */
			case 2:
				in[i] = (float)(u * 2.0 - 1.0) * ldexpf(1.0f, -(int)h_below(40));
				break; /* near 0 */
			default:
				in[i] = h_f32((uint32_t)h_rand());
				break; /* any bit pattern */
			}
		}
		static const float edge[] = {
		    0.0f, -0.0f, INFINITY, -INFINITY, NAN, -NAN, 88.72283f, 88.72284f, 88.7228394f, 88.73f,
		    89.0f, -87.33654f, -87.336548f, -103.2789f, -103.972f, -103.9721f, -104.0f, -104.1f,
		    -150.0f, 1e-45f, -1e-45f, 1.0f, -1.0f, 0.5f,
		    /* the only two of all 2^32 inputs whose result is not (float)exp((double)x):
		     * results within 1e-16 relative of a rounding tie */
		    0x1.060e1ep+6f, -0x1.03d5bep+0f};
		memcpy(in, edge, sizeof(edge));
		put_f32(VM, in, N);
		CHECK(h_xta(c0, TA1_OP_TA_VEXP, VM + N * 4, VM, 0, N) == TA1_STOP_BUDGET, "vexp faulted: %s",
		      ta1_chip_fault(c0));
		get_f32(VM + N * 4, out, N);
		for (uint64_t i = 0; i < N; i++) {
			double u = exp_ulps(in[i], out[i]);
			if (!(u <= worst)) {
				worst = u;
				worst_x = in[i];
			}
			CHECK(h_bits(out[i]) == h_bits(ta1_expf(in[i])), "vexp differs from ta1_expf at %08x",
			      h_bits(in[i]));
		}
		total += N;
	}
	/* the specials exactly */
	CHECK(ta1_expf(0.0f) == 1.0f && ta1_expf(-0.0f) == 1.0f, "exp(+-0) != 1");
	CHECK(isinf(ta1_expf(INFINITY)) && ta1_expf(INFINITY) > 0, "exp(inf) != inf");
	CHECK(h_bits(ta1_expf(-INFINITY)) == 0, "exp(-inf) != +0");
	CHECK(isnan(ta1_expf(NAN)), "exp(NaN) is not NaN");
	CHECK(isinf(ta1_expf(89.0f)), "exp(89) does not overflow");
	CHECK(ta1_expf(-90.0f) > 0.0f && ta1_expf(-90.0f) < 1.2e-38f, "exp(-90) is not a denormal");
	printf("vexp: max error %.9f ULP (at x = %a) over %llu inputs; bound %.1f\n", worst, (double)worst_x,
	       (unsigned long long)total, TA1_EXP_ULP_BOUND);
	CHECK(worst <= TA1_EXP_ULP_BOUND, "vexp error %.4f ULP at x = %a exceeds %.1f", worst,
	      (double)worst_x, TA1_EXP_ULP_BOUND);
}

static void test_mxu(void)
{
	enum { D = TA1_MXU_DIM, RMAX = 64 };
	static float w[D * D], lhs[RMAX * D], dst[RMAX * D], got[RMAX * D], ref32[RMAX * D];
	double worst = 0.0;
	for (unsigned k = 0; k < 24; k++) {
		int acc = k & 1, overlap = k % 6 == 5;
		uint64_t rows = 1 + h_below(RMAX);
		double wscale = ldexp(1.0, (int)h_below(20) - 10);
		for (unsigned i = 0; i < D * D; i++)
			w[i] =
			    (float)(((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0) * wscale);
		for (uint64_t i = 0; i < rows * D; i++) {
			lhs[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
			dst[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
		}
		uint64_t pw = VM + 0x200000, pl = VM + 0x300000,
			 pd = overlap ? pl : VM + 0x400000 + 4 * h_below(256);
		put_f32(pw, w, D * D);
		CHECK(h_xta(c0, TA1_OP_TA_MXU_LOAD, pw, 0, 0, 0) == TA1_STOP_BUDGET, "mxu.load faulted: %s",
		      ta1_chip_fault(c0));
		/* the weights land in the MXU weight buffer, visible to debuggers */
		static float wb[D * D];
		get_f32(TA1_MXUW_BASE, wb, D * D);
		CHECK(!memcmp(wb, w, sizeof(w)), "MXU weight buffer differs from the loaded weights");
		if (overlap)
			memcpy(dst, lhs, rows * D * 4);
		put_f32(pl, lhs, rows * D);
		if (!overlap)
			put_f32(pd, dst, rows * D);
		enum ta1_op op = acc ? TA1_OP_TA_MXU_MMA : TA1_OP_TA_MXU_MM;
		CHECK(h_xta(c0, op, pd, pl, 0, rows) == TA1_STOP_BUDGET, "%s faulted: %s",
		      ta1_insn_table[op].mnemonic, ta1_chip_fault(c0));
		get_f32(pd, got, rows * D);
		for (uint64_t r = 0; r < rows; r++)
			for (unsigned j = 0; j < D; j++) {
				float s32 = 0.0f;
				double s64 = 0.0, mag = 0.0;
				for (unsigned kk = 0; kk < D; kk++) {
					float p = lhs[r * D + kk] * w[kk * D + j];
					s32 += p;
					s64 += (double)lhs[r * D + kk] * (double)w[kk * D + j];
					mag += fabs((double)lhs[r * D + kk] * (double)w[kk * D + j]);
				}
				if (acc) {
					s32 = dst[r * D + j] + s32;
					s64 += dst[r * D + j];
					mag += fabs(dst[r * D + j]);
				}
				ref32[r * D + j] = s32;
				double err = fabs((double)got[r * D + j] - s64);
				double ratio =
				    mag > 0 ? err / (ldexp(1.0, -24) * mag) : (err > 0 ? INFINITY : 0);
				if (ratio > worst)
					worst = ratio;
			}
		for (uint64_t i = 0; i < rows * D; i++)
			if (h_bits(got[i]) != h_bits(ref32[i])) {
				CHECK(0, "%s rows=%llu: element %llu = %08x, fixed-order f32 reference %08x",
				      ta1_insn_table[op].mnemonic, (unsigned long long)rows,
				      (unsigned long long)i, h_bits(got[i]), h_bits(ref32[i]));
				break;
			}
	}
	printf("mxu: max |err| = %.2f * 2^-24 * sum|l*w| (bound %.0f)\n", worst, TA1_MXU_ERR_BOUND);
	CHECK(worst <= TA1_MXU_ERR_BOUND, "MXU error %.2f exceeds the bound %.0f", worst, TA1_MXU_ERR_BOUND);
}

/* The matmul with zeros in lhs (single elements, -0, whole rows: a batch's
 * padding), rows of w holding an infinity or a NaN, NaN and infinite lhs
 * elements and mma onto -0: every element bitwise equal to the fixed-order
 * f32 reference (the kernels skip a step whose lhs element is zero only when
 * that cannot change the sum; a wrong skip shows here as a number where the
 * reference has a NaN, or -0 kept where it has +0). */
/* The MXU's scalar definition of one output element: 0 + l0*w0 + l1*w1 + ...
 * in ascending k, each product rounded, then added; mma adds it to dst's. */
static float ref_mm(const float *lhs, const float *w, const float *dst, int acc, uint64_t r, unsigned j)
{
	float s32 = 0.0f;
	for (unsigned kk = 0; kk < TA1_MXU_DIM; kk++) {
		float p = lhs[r * TA1_MXU_DIM + kk] * w[kk * TA1_MXU_DIM + j];
		s32 += p;
	}
	return acc ? dst[r * TA1_MXU_DIM + j] + s32 : s32;
}

static void test_mxu_zeros(void)
{
	enum { D = TA1_MXU_DIM, RMAX = 17 };
	static float w[D * D], lhs[RMAX * D], dst[RMAX * D], got[RMAX * D];
	static const uint32_t odd[] = {0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001, 0xffc00005};
	for (unsigned k = 0; k < 80; k++) {
		int acc = k & 1;
		uint64_t rows = 1 + h_below(RMAX);
		for (unsigned i = 0; i < D * D; i++)
			w[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
		for (unsigned n = h_below(4); n > 0; n--) /* a few non-finite weights in random rows */
			w[h_below(D * D)] = h_f32(odd[h_below(sizeof(odd) / sizeof(odd[0]))]);
		unsigned density = h_below(6); /* 0: zero rows only; 5: no zeros but whole zero rows */
		for (uint64_t r = 0; r < rows; r++) {
			int zero_row = h_below(3) == 0;
			for (unsigned j = 0; j < D; j++) {
				float v = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
				if (zero_row || h_below(5) >= density)
					v = h_below(2) ? 0.0f : -0.0f;
				else if (h_below(200) == 0)
					v = h_f32(odd[h_below(sizeof(odd) / sizeof(odd[0]))]);
				lhs[r * D + j] = v;
				dst[r * D + j] = h_below(4) == 0 ? -0.0f : rand_f32();
			}
		}
		uint64_t pw = VM + 0x200000, pl = VM + 0x300000, pd = VM + 0x400000;
		put_f32(pw, w, D * D);
		CHECK(h_xta(c0, TA1_OP_TA_MXU_LOAD, pw, 0, 0, 0) == TA1_STOP_BUDGET, "mxu.load faulted: %s",
		      ta1_chip_fault(c0));
		put_f32(pl, lhs, rows * D);
		put_f32(pd, dst, rows * D);
		enum ta1_op op = acc ? TA1_OP_TA_MXU_MMA : TA1_OP_TA_MXU_MM;
		CHECK(h_xta(c0, op, pd, pl, 0, rows) == TA1_STOP_BUDGET, "%s faulted: %s",
		      ta1_insn_table[op].mnemonic, ta1_chip_fault(c0));
		get_f32(pd, got, rows * D);
		int bad = 0;
		for (uint64_t r = 0; r < rows && !bad; r++)
			for (unsigned j = 0; j < D && !bad; j++) {
				float s32 = ref_mm(lhs, w, dst, acc, r, j);
				float g = got[r * D + j];
				/* a NaN's payload is the host's (docs/ta1-isa.md): NaN matches NaN */
				if (h_bits(g) != h_bits(s32) && !(g != g && s32 != s32)) {
					CHECK(0, "%s with zeros, rows=%llu: element [%llu][%u] = %08x, reference %08x",
					      ta1_insn_table[op].mnemonic, (unsigned long long)rows, (unsigned long long)r,
					      j, h_bits(g), h_bits(s32));
					bad = 1;
				}
			}
	}
}

/* The grouping of the kernels (isa/ta1/ta1_xta.c: rows not all zero 4 at a
 * time, then the all-zero rows, 64 rows at a time, and whether every row of
 * w is finite taken from a pass whose sums all end finite), called directly
 * with 1..140 rows against the fixed-order reference (NaN matches NaN):
 *  - the serving loop's shape and others: one data row then zero rows, data
 *    rows in every count modulo 4, zero rows between them, past 64 rows;
 *  - groups where only some rows are zero at a step k, and steps where all
 *    of a group's rows are zero;
 *  - a non-finite weight in a row whose step the data rows do (their sums
 *    become NaN or inf: the zero rows after them must still get NaN in that
 *    column) and in a row whose step they skip;
 *  - sums that overflow with finite weights, and inf or NaN lhs elements:
 *    not proof that w is finite, so the zero rows find out themselves
 *    (+0, or the old dst with -0 made +0 for mma). */
static void test_mxu_groups(void)
{
	enum { D = TA1_MXU_DIM, RMAX = 140 };
	static float w[D * D], lhs[RMAX * D], dst[RMAX * D], got[RMAX * D];
	static const uint32_t odd[] = {0x7f800000, 0xff800000, 0x7fc00000, 0x7fa00001};
	for (unsigned t = 0; t < 160; t++) {
		unsigned shape = t % 8, acc = t / 8 & 1;
		uint64_t rows = t < 16 ? 8 : 1 + h_below(h_below(3) ? 20 : RMAX);
		int big = shape == 5; /* products overflow: |l*w| up to 1e40 */
		for (unsigned i = 0; i < D * D; i++)
			w[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0) * (big ? 1e20f : 1.0f);
		unsigned kbad = h_below(D); /* the row of w with a non-finite weight, if any */
		if (shape == 2 || shape == 3 || h_below(8) == 0)
			w[kbad * D + h_below(D)] = h_f32(odd[h_below(4)]);
		for (uint64_t r = 0; r < rows; r++) {
			/* shapes 0-3, 5, 6: row 0 (and, for 6, a few more) holds data, the rest are zero */
			int data = shape == 4 || shape == 7 ? h_below(4) != 0 : r == 0 || (shape == 6 && h_below(5) == 0);
			for (unsigned k = 0; k < D; k++) {
				float v = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
				if (big)
					v *= 1e20f;
				if (!data)
					v = h_below(2) ? 0.0f : -0.0f;
				else if (shape == 3 && k == kbad)
					v = 0.0f; /* the data row skips the non-finite row of w, unless its group needs it */
				else if (shape == 4 && (k + r) % 3 == 0)
					v = -0.0f; /* some rows of a group zero at k, others not */
				else if (shape == 7 && k % 5 == 0)
					v = 0.0f; /* every row zero at these k */
				else if (shape == 1 && h_below(8) == 0)
					v = 0.0f;
				if (data && shape == 6 && h_below(40) == 0)
					v = h_f32(odd[h_below(4)]); /* inf or NaN lhs */
				lhs[r * D + k] = v;
				dst[r * D + k] = h_below(4) == 0 ? -0.0f : rand_f32();
			}
		}
		memcpy(got, dst, rows * D * 4);
		ta1_mxu_matmul(got, lhs, w, rows, (int)acc);
		int bad = 0;
		for (uint64_t r = 0; r < rows && !bad; r++)
			for (unsigned j = 0; j < D && !bad; j++) {
				float s32 = ref_mm(lhs, w, dst, acc, r, j);
				float g = got[r * D + j];
				if (h_bits(g) != h_bits(s32) && !(g != g && s32 != s32)) {
					CHECK(0, "matmul (%s) shape %u, rows=%llu: element [%llu][%u] = %08x, reference %08x",
					      acc ? "mma" : "mm", shape, (unsigned long long)rows, (unsigned long long)r, j,
					      h_bits(g), h_bits(s32));
					bad = 1;
				}
			}
	}
}

/* ta.mxu.load refers to the VMEM bytes it names rather than copying them
 * (device/ta1_machine.c): whatever writes those bytes afterwards (a DMA, a
 * vector result, a row sum, an MXU result, a debugger) must leave the loaded
 * weights as they were, while a debugger's write to the weight buffer
 * itself changes them, and a later load from elsewhere makes the first
 * tile's bytes free to change. Each case then multiplies one row and reads
 * the weight buffer back: both must match the weights expected. */
static void test_mxu_weights_kept(void)
{
	enum { D = TA1_MXU_DIM };
	static float w1[D * D], w2[D * D], want[D * D], wb[D * D];
	float lhs[D], got[D], junk[256];
	const uint64_t pw = VM + 0x200000, pw2 = VM + 0x240000, pl = VM + 0x300000, pj = VM + 0x310000,
		       pd = VM + 0x320000, off = 4 * (64 * D + 5); /* inside the tile, row 64 */
	for (int k = 0; k < 7; k++) {
		for (unsigned i = 0; i < D * D; i++) {
			w1[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
			w2[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
		}
		for (unsigned i = 0; i < D; i++)
			lhs[i] = (float)((double)(h_rand() >> 11) / (double)(1ull << 53) * 2.0 - 1.0);
		for (unsigned i = 0; i < 256; i++)
			junk[i] = 1000.0f + (float)i;
		put_f32(pw, w1, D * D);
		put_f32(pw2, w2, D * D);
		put_f32(pl, lhs, D);
		put_f32(pj, junk, 256);
		CHECK(h_xta(c0, TA1_OP_TA_MXU_LOAD, pw, 0, 0, 0) == TA1_STOP_BUDGET, "mxu.load: %s", ta1_chip_fault(c0));
		memcpy(want, w1, sizeof(want));
		const char *what = "";
		enum ta1_stop st = TA1_STOP_BUDGET;
		switch (k) {
		case 0:
			what = "a DMA into the loaded tile";
			st = h_xta(c0, TA1_OP_TA_DMA, pw + off, pj, 1024, 0);
			break;
		case 1:
			what = "ta.vadd into the loaded tile";
			st = h_xta(c0, TA1_OP_TA_VADD, pw + off, pj, pj, 200);
			break;
		case 2:
			what = "a debugger's write into the loaded tile";
			put_f32(pw + off, junk, 256);
			break;
		case 3:
			what = "ta.mxu.mm into the loaded tile";
			st = h_xta(c0, TA1_OP_TA_MXU_MM, pw + off, pl, 0, 1);
			break;
		case 4:
			what = "ta.vsumrows into the loaded tile";
			st = h_xta(c0, TA1_OP_TA_VSUMROWS, pw + off, pj, 64, 2);
			break;
		case 5:
			what = "a debugger's write into the weight buffer";
			put_f32(TA1_MXUW_BASE + off, junk, 256);
			memcpy((uint8_t *)want + off, junk, 256 * 4);
			break;
		case 6:
			what = "a second load, then a write into the first tile";
			st = h_xta(c0, TA1_OP_TA_MXU_LOAD, pw2, 0, 0, 0);
			put_f32(pw + off, junk, 256);
			memcpy(want, w2, sizeof(want));
			break;
		}
		CHECK(st == TA1_STOP_BUDGET, "%s faulted: %s", what, ta1_chip_fault(c0));
		CHECK(h_xta(c0, TA1_OP_TA_MXU_MM, pd, pl, 0, 1) == TA1_STOP_BUDGET, "mxu.mm: %s", ta1_chip_fault(c0));
		get_f32(pd, got, D);
		for (unsigned j = 0; j < D; j++) {
			float s32 = 0.0f;
			for (unsigned kk = 0; kk < D; kk++) {
				float p = lhs[kk] * want[kk * D + j];
				s32 += p;
			}
			if (h_bits(got[j]) != h_bits(s32)) {
				CHECK(0, "after %s: mxu.mm element %u = %08x, with the weights expected %08x", what, j,
				      h_bits(got[j]), h_bits(s32));
				break;
			}
		}
		get_f32(TA1_MXUW_BASE, wb, D * D);
		CHECK(!memcmp(wb, want, sizeof(wb)), "after %s: the weight buffer differs from the weights expected",
		      what);
	}
}

/* Deferred copies (device/ta1_machine.c): a large DMA from HBM to VMEM and
 * ta.mxu.load move no bytes until something would see the difference. Two
 * chips run random DMAs (between core memory, VMEM, their own and the other
 * chip's HBM, small and large, overlapping or not), debugger writes and
 * reads, ta.vadd, ta.mxu.load (often of a tile a DMA just filled) and
 * ta.mxu.mm, and every read and, at the end, every byte of every memory must
 * equal a shadow where each operation copies at once. */
enum { LZ_CORE_OFF = 0x20000, LZ_CORE = 0x40000, LZ_MEM = 1 << 20, LZ_TILE = TA1_MXUW_SIZE };
struct lz_shadow {
	uint8_t core[LZ_CORE], vmem[LZ_MEM], hbm[LZ_MEM];
	float w[TA1_MXU_DIM * TA1_MXU_DIM];
	int loaded;
};

/* A place chip e can name: its core memory (part), its VMEM, its own HBM,
 * or chip `peer`'s HBM by global address; the address and the shadow bytes. */
static uint8_t *lz_place(struct lz_shadow *sh, unsigned e, unsigned kind, uint64_t off, uint64_t *addr)
{
	switch (kind) {
	case 0:
		*addr = TA1_CORE_BASE + LZ_CORE_OFF + off;
		return sh[e].core + off;
	case 1:
		*addr = TA1_VMEM_BASE + off;
		return sh[e].vmem + off;
	case 2:
		*addr = TA1_HBM_BASE + off;
		return sh[e].hbm + off;
	default:
		*addr = TA1_HBM_GLOBAL_BASE + ((uint64_t)(1 - e) << TA1_HBM_GLOBAL_SHIFT) + off;
		return sh[1 - e].hbm + off;
	}
}

static uint64_t lz_size(unsigned kind) { return kind == 0 ? LZ_CORE : LZ_MEM; }

static void test_lazy_copies(void)
{
	struct ta1_machine *m = h_machine(2, 1 << 20, LZ_MEM, LZ_MEM);
	struct lz_shadow *sh = calloc(2, sizeof(*sh));
	static uint8_t buf[LZ_MEM];
	static const uint64_t lens[] = {256, 4096, 8192, LZ_TILE, LZ_TILE + 1024, 3 * LZ_TILE};
	int bad = 0;
	for (unsigned step = 0; step < 3000 && !bad; step++) {
		unsigned e = (unsigned)h_below(2), op = (unsigned)h_below(12);
		struct ta1_chip *c = ta1_machine_chip(m, e);
		uint64_t len = lens[h_below(sizeof(lens) / sizeof(lens[0]))], a1, a2;
		unsigned k1 = (unsigned)h_below(4), k2 = (unsigned)h_below(4);
		if (op >= 9) /* a tile pipeline: HBM to VMEM, then often ta.mxu.load from it */
			k1 = 2 + (unsigned)h_below(2), k2 = 1, len = lens[3 + h_below(3)];
		if (op <= 3 || op >= 9) { /* DMA */
			if (len > lz_size(k1) || len > lz_size(k2))
				len = 4096;
			uint64_t o1 = 4 * h_below((lz_size(k1) - len) / 4 + 1), o2 = 4 * h_below((lz_size(k2) - len) / 4 + 1);
			uint8_t *s1 = lz_place(sh, e, k1, o1, &a1), *s2 = lz_place(sh, e, k2, o2, &a2);
			if (h_xta(c, TA1_OP_TA_DMA, a2, a1, len, 0) != TA1_STOP_BUDGET) {
				CHECK(0, "lazy step %u: DMA faulted: %s", step, ta1_chip_fault(c));
				bad = 1;
			}
			memmove(s2, s1, len);
			if (op >= 10) {
				uint64_t wo = o2 + 4 * h_below((len - LZ_TILE) / 4 + 1);
				CHECK(h_xta(c, TA1_OP_TA_MXU_LOAD, TA1_VMEM_BASE + wo, 0, 0, 0) == TA1_STOP_BUDGET,
				      "lazy step %u: mxu.load faulted", step);
				memcpy(sh[e].w, sh[e].vmem + wo, LZ_TILE);
				sh[e].loaded = 1;
			}
		} else if (op == 4 || op == 5) { /* debugger write or read */
			len = 1 + h_below(70000);
			if (len > lz_size(k1))
				len = lz_size(k1);
			uint8_t *s1 = lz_place(sh, e, k1, h_below(lz_size(k1) - len + 1), &a1);
			if (op == 4) {
				h_fill(buf, len);
				CHECK(ta1_chip_write_mem(c, a1, buf, len) == len, "lazy step %u: write", step);
				memcpy(s1, buf, len);
			} else {
				CHECK(ta1_chip_read_mem(c, a1, buf, len) == len, "lazy step %u: read", step);
				if (memcmp(buf, s1, len)) {
					CHECK(0, "lazy step %u: chip %u reads %llu bytes at 0x%llx unlike the shadow", step, e,
					      (unsigned long long)len, (unsigned long long)a1);
					bad = 1;
				}
			}
		} else if (op == 6) { /* ta.vadd in VMEM, the result apart from the operands */
			uint64_t n = 1 + h_below(20000), o[3];
			for (int i = 0; i < 3; i++)
				o[i] = (i ? 0 : LZ_MEM / 2) + 4 * h_below((LZ_MEM / 2 - n * 4) / 4 + 1);
			CHECK(h_xta(c, TA1_OP_TA_VADD, TA1_VMEM_BASE + o[0], TA1_VMEM_BASE + o[1], TA1_VMEM_BASE + o[2], n) ==
				  TA1_STOP_BUDGET,
			      "lazy step %u: vadd faulted", step);
			static float fa[20000], fb[20000], fd[20000];
			memcpy(fa, sh[e].vmem + o[1], n * 4);
			memcpy(fb, sh[e].vmem + o[2], n * 4);
			ta1_vector_op(TA1_VOP_ADD, fd, fa, fb, 0.0f, n);
			memcpy(sh[e].vmem + o[0], fd, n * 4);
		} else if (op == 7) { /* ta.mxu.load */
			uint64_t wo = 4 * h_below((LZ_MEM - LZ_TILE) / 4 + 1);
			CHECK(h_xta(c, TA1_OP_TA_MXU_LOAD, TA1_VMEM_BASE + wo, 0, 0, 0) == TA1_STOP_BUDGET,
			      "lazy step %u: mxu.load faulted", step);
			memcpy(sh[e].w, sh[e].vmem + wo, LZ_TILE);
			sh[e].loaded = 1;
		} else if (sh[e].loaded) { /* ta.mxu.mm, lhs and dst apart */
			uint64_t rows = 1 + h_below(3), bytes = rows * TA1_MXU_DIM * 4;
			uint64_t ol = 4 * h_below((LZ_MEM / 2 - bytes) / 4 + 1),
				 od = LZ_MEM / 2 + 4 * h_below((LZ_MEM / 2 - bytes) / 4 + 1);
			CHECK(h_xta(c, TA1_OP_TA_MXU_MM, TA1_VMEM_BASE + od, TA1_VMEM_BASE + ol, 0, rows) ==
				  TA1_STOP_BUDGET,
			      "lazy step %u: mxu.mm faulted", step);
			static float fl[3 * TA1_MXU_DIM], fd[3 * TA1_MXU_DIM];
			memcpy(fl, sh[e].vmem + ol, bytes);
			ta1_mxu_matmul(fd, fl, sh[e].w, rows, 0);
			memcpy(sh[e].vmem + od, fd, bytes);
			if (h_below(4) == 0) { /* the weight buffer as a debugger sees it */
				CHECK(ta1_chip_read_mem(c, TA1_MXUW_BASE, buf, LZ_TILE) == LZ_TILE, "read weights");
				if (memcmp(buf, sh[e].w, LZ_TILE)) {
					CHECK(0, "lazy step %u: chip %u's weight buffer differs from the weights loaded", step, e);
					bad = 1;
				}
			}
		}
	}
	for (unsigned e = 0; e < 2 && !bad; e++)
		for (unsigned kind = 0; kind < 3; kind++) {
			uint64_t a;
			uint8_t *s1 = lz_place(sh, e, kind, 0, &a);
			CHECK(ta1_chip_read_mem(ta1_machine_chip(m, e), a, buf, lz_size(kind)) == lz_size(kind), "read");
			if (memcmp(buf, s1, lz_size(kind))) {
				CHECK(0, "lazy copies: chip %u's %s differs from the shadow at the end", e,
				      kind == 0 ? "core memory" : kind == 1 ? "VMEM" : "HBM");
				break;
			}
		}
	free(sh);
	ta1_machine_free(m);
}

/* ---- DMA ----------------------------------------------------------------- */

#define GUARD 64

struct window {
	struct ta1_chip *chip; /* the chip whose view `addr` is in */
	uint64_t addr;
};

/* Reference: copies rows as the semantics say, into a shadow of dst. */
static void check_dma(struct ta1_machine *m, unsigned exec_chip, uint64_t dst, uint64_t src,
		      uint64_t row_bytes, uint64_t rows, int64_t dst_stride, int64_t src_stride, int two_d,
		      const char *what)
{
	struct ta1_chip *c = ta1_machine_chip(m, exec_chip);
	/* extents */
	int64_t dspan = (int64_t)(rows - 1) * dst_stride, sspan = (int64_t)(rows - 1) * src_stride;
	uint64_t dlo = dst + (uint64_t)(dspan < 0 ? dspan : 0),
		 dhi = dst + (uint64_t)(dspan > 0 ? dspan : 0) + row_bytes;
	uint64_t slo = src + (uint64_t)(sspan < 0 ? sspan : 0),
		 shi = src + (uint64_t)(sspan > 0 ? sspan : 0) + row_bytes;
	uint64_t dlen = dhi - dlo + 2 * GUARD, slen = shi - slo;
	uint8_t *sbuf = malloc(slen), *dbuf = malloc(dlen), *want = malloc(dlen);
	h_fill(sbuf, slen);
	h_fill(dbuf, dlen);
	CHECK(ta1_chip_write_mem(c, dlo - GUARD, dbuf, dlen) == dlen, "%s: cannot fill dst", what);
	CHECK(ta1_chip_write_mem(c, slo, sbuf, slen) == slen, "%s: cannot fill src", what);
	memcpy(want, dbuf, dlen);
	for (uint64_t r = 0; r < rows; r++)
		memcpy(want + GUARD + (dst - dlo) + (uint64_t)((int64_t)r * dst_stride),
		       sbuf + (src - slo) + (uint64_t)((int64_t)r * src_stride), row_bytes);
	uint64_t flag = h_below(TA1_NUM_FLAGS);
	uint64_t before = ta1_chip_get_reg(c, TA1_REG_FLAG0 + (unsigned)flag);
	enum ta1_stop st;
	if (two_d)
		st = h_xta(c, TA1_OP_TA_DMA2D, dst, src, ta1_dma2d_shape(row_bytes, rows, flag),
			   ta1_dma2d_strides(dst_stride, src_stride));
	else
		st = h_xta(c, TA1_OP_TA_DMA, dst, src, row_bytes, flag);
	CHECK(st == TA1_STOP_BUDGET, "%s: stopped: %s", what, ta1_chip_fault(c));
	CHECK(ta1_chip_get_reg(c, TA1_REG_FLAG0 + (unsigned)flag) == before + 1, "%s: flag %llu not counted",
	      what, (unsigned long long)flag);
	CHECK(ta1_chip_read_mem(c, dlo - GUARD, dbuf, dlen) == dlen, "%s: cannot read dst", what);
	for (uint64_t i = 0; i < dlen; i++)
		if (dbuf[i] != want[i]) {
			CHECK(0, "%s: byte at 0x%llx is %02x, want %02x (%s)", what,
			      (unsigned long long)(dlo - GUARD + i), dbuf[i], want[i],
			      i < GUARD || i >= dlen - GUARD ? "guard" : "copied");
			break;
		}
	free(sbuf);
	free(dbuf);
	free(want);
}

static void test_dma(void)
{
	struct ta1_machine *m = h_machine(2, 1 << 20, 4 << 20, 16 << 20);
	const uint64_t bases[] = {TA1_CORE_BASE + 0x10000, TA1_VMEM_BASE + 0x1000, TA1_HBM_BASE + 0x1000,
				  TA1_HBM_GLOBAL_BASE + 0x2000, TA1_HBM_GLOBAL_BASE + (1ull << 40) + 0x1000};
	const char *names[] = {"core", "VMEM", "HBM", "HBM(chip 0, global)", "HBM(chip 1)"};
	char what[160];
	for (unsigned k = 0; k < 300; k++) {
		unsigned si = (unsigned)h_below(5), di = (unsigned)h_below(5);
		int two_d = k & 1;
		uint64_t rows = two_d ? 1 + h_below(40) : 1, row_bytes = 1 + h_below(two_d ? 600 : 20000);
		int64_t ss = 0, ds = 0;
		if (two_d) {
			ss = (int64_t)row_bytes + (int64_t)h_below(300);
			ds = (int64_t)row_bytes + (int64_t)h_below(300);
			if (h_below(2))
				ss = -ss;
			if (h_below(2))
				ds = -ds;
		}
		/* place src and dst far apart in their memories: offset 0x40000 for dst */
		uint64_t src = bases[si] + 0x20000 + h_below(64), dst = bases[di] + 0x60000 + h_below(64);
		snprintf(what, sizeof(what), "%s %s -> %s, %llu x %llu bytes, strides dst %lld src %lld",
			 two_d ? "ta.dma2d" : "ta.dma", names[si], names[di], (unsigned long long)rows,
			 (unsigned long long)row_bytes, (long long)ds, (long long)ss);
		check_dma(m, 0, dst, src, row_bytes, rows, ds, ss, two_d, what);
	}
	/* chip 1 writes chip 0's HBM; chip 0 reads it back locally */
	{
		struct ta1_chip *c1 = ta1_machine_chip(m, 1), *c = ta1_machine_chip(m, 0);
		uint8_t buf[256], back[256];
		uint64_t f0 = ta1_chip_get_reg(c, TA1_REG_FLAG0 + 2),
			 f1 = ta1_chip_get_reg(c1, TA1_REG_FLAG0 + 2);
		h_fill(buf, sizeof(buf));
		ta1_chip_write_mem(c1, TA1_VMEM_BASE + 0x100, buf, sizeof(buf));
		CHECK(h_xta(c1, TA1_OP_TA_DMA, TA1_HBM_GLOBAL_BASE + 0x5000, TA1_VMEM_BASE + 0x100, 256, 2) ==
			  TA1_STOP_BUDGET,
		      "chip 1 -> chip 0 HBM: %s", ta1_chip_fault(c1));
		ta1_chip_read_mem(c, TA1_HBM_BASE + 0x5000, back, sizeof(back));
		CHECK(!memcmp(buf, back, sizeof(buf)),
		      "chip 1's DMA into chip 0's HBM is not visible to chip 0");
		CHECK(ta1_chip_get_reg(c1, TA1_REG_FLAG0 + 2) == f1 + 1 &&
			  ta1_chip_get_reg(c, TA1_REG_FLAG0 + 2) == f0,
		      "the issuing chip's flag counts the completion");
	}
	/* overlapping 2-D rows (stride < row bytes): rows are copied in order */
	check_dma(m, 0, TA1_VMEM_BASE + 0x8000, TA1_HBM_BASE + 0x8000, 100, 10, 60, -30, 1,
		  "ta.dma2d overlapping dst rows");
	/* a DMA into core memory over code is seen by the next fetch */
	{
		struct ta1_chip *c = ta1_machine_chip(m, 0);
		struct ta1_insn add = h_insn(TA1_OP_ADDI, 5, 0, 0, 0, 42);
		uint32_t w = ta1_encode(&add);
		ta1_chip_write_mem(c, TA1_VMEM_BASE + 0x40, &w, 4);
		struct ta1_insn nop = h_insn(TA1_OP_ADDI, 0, 0, 0, 0, 0);
		h_exec_at(c, H_PC + 0x100, &nop); /* decode (and cache) the slot */
		CHECK(h_xta(c, TA1_OP_TA_DMA, H_PC + 0x100, TA1_VMEM_BASE + 0x40, 4, 0) == TA1_STOP_BUDGET,
		      "%s", ta1_chip_fault(c));
		ta1_chip_set_reg(c, TA1_REG_PC, H_PC + 0x100);
		ta1_chip_step(c);
		CHECK(ta1_chip_get_reg(c, 5) == 42, "code written by DMA was not re-decoded");
	}
	/* zero bytes / zero rows: no copy, the flag still counts */
	{
		struct ta1_chip *c = ta1_machine_chip(m, 0);
		uint64_t f = ta1_chip_get_reg(c, TA1_REG_FLAG0 + 7);
		CHECK(h_xta(c, TA1_OP_TA_DMA, 0, 0, 0, 7) == TA1_STOP_BUDGET, "empty DMA faulted: %s",
		      ta1_chip_fault(c));
		CHECK(h_xta(c, TA1_OP_TA_DMA2D, 0, 0, ta1_dma2d_shape(16, 0, 7), 0) == TA1_STOP_BUDGET,
		      "empty 2-D DMA faulted: %s", ta1_chip_fault(c));
		CHECK(ta1_chip_get_reg(c, TA1_REG_FLAG0 + 7) == f + 2,
		      "empty DMAs must still signal their flag");
	}
	ta1_machine_free(m);
}

static void test_wait_and_ids(void)
{
	struct ta1_machine *m = h_machine(3, 1 << 20, 1 << 20, 1 << 20);
	struct ta1_chip *c = ta1_machine_chip(m, 0);
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++) {
		unsigned k = 1 + (unsigned)h_below(5);
		for (unsigned i = 0; i < k; i++)
			h_xta(c, TA1_OP_TA_DMA, TA1_VMEM_BASE + 64, TA1_HBM_BASE, 64, f);
		CHECK(ta1_chip_get_reg(c, TA1_REG_FLAG0 + f) == k, "flag %u = %llu after %u DMAs", f,
		      (unsigned long long)ta1_chip_get_reg(c, TA1_REG_FLAG0 + f), k);
		unsigned j = (unsigned)h_below(k + 1);
		CHECK(h_xta(c, TA1_OP_TA_WAIT, f, j, 0, 0) == TA1_STOP_BUDGET, "wait %u of %u faulted: %s", j,
		      k, ta1_chip_fault(c));
		CHECK(ta1_chip_get_reg(c, TA1_REG_FLAG0 + f) == k - j, "wait did not consume %u of flag %u",
		      j, f);
		CHECK(h_xta(c, TA1_OP_TA_WAIT, f, k - j, 0, 0) == TA1_STOP_BUDGET,
		      "wait for the rest faulted: %s", ta1_chip_fault(c));
		CHECK(ta1_chip_get_reg(c, TA1_REG_FLAG0 + f) == 0, "flag %u not drained", f);
		CHECK(ta1_chip_get_reg(c, TA1_REG_PC) == H_PC + 4, "wait did not advance the pc");
	}
	CHECK(h_xta(c, TA1_OP_TA_WAIT, 4, 0, 0, 0) == TA1_STOP_BUDGET, "wait for 0 on an empty flag faulted");
	for (unsigned i = 0; i < 3; i++) {
		struct ta1_chip *ci = ta1_machine_chip(m, i);
		struct ta1_insn id = h_insn(TA1_OP_TA_CHIPID, 7, 0, 0, 0, 0),
				nc = h_insn(TA1_OP_TA_NCHIPS, 8, 0, 0, 0, 0);
		ta1_chip_set_reg(ci, 7, 999);
		ta1_chip_set_reg(ci, 8, 999);
		h_exec(ci, &id);
		h_exec(ci, &nc);
		CHECK(ta1_chip_get_reg(ci, 7) == i, "ta.chipid on chip %u gave %llu", i,
		      (unsigned long long)ta1_chip_get_reg(ci, 7));
		CHECK(ta1_chip_get_reg(ci, 8) == 3, "ta.nchips gave %llu",
		      (unsigned long long)ta1_chip_get_reg(ci, 8));
		struct ta1_insn z = h_insn(TA1_OP_TA_CHIPID, 0, 0, 0, 0, 0);
		CHECK(h_exec(ci, &z) == TA1_STOP_BUDGET && ta1_chip_get_reg(ci, 0) == 0, "ta.chipid x0");
	}
	ta1_machine_free(m);
}

/* ---- faults ---------------------------------------------------------------- */

/* Runs one instruction on a fresh 1-chip machine and checks it faults with a
 * message containing every string in `want` (NULL-terminated). */
static void expect_fault(const struct ta1_insn *in, const uint64_t *regs, const uint64_t *flags,
			 const char *const *want, const char *what)
{
	struct ta1_machine *m = h_machine(1, 1 << 20, 1 << 20, 1 << 20);
	struct ta1_chip *c = ta1_machine_chip(m, 0);
	for (unsigned r = 1; r < 32; r++)
		ta1_chip_set_reg(c, r, regs[r]);
	if (flags)
		for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
			ta1_chip_set_reg(c, TA1_REG_FLAG0 + f, flags[f]);
	enum ta1_stop st = h_exec(c, in);
	const char *msg = ta1_chip_fault(c);
	CHECK(st == TA1_STOP_FAULT && ta1_chip_state(c) == TA1_CHIP_FAULTED, "%s: did not fault", what);
	CHECK(ta1_chip_get_reg(c, TA1_REG_PC) == H_PC, "%s: pc moved on a fault", what);
	for (const char *const *w = want; *w; w++)
		CHECK(strstr(msg, *w) != NULL, "%s: fault message \"%s\" lacks \"%s\"", what, msg, *w);
	ta1_machine_free(m);
}

static void test_faults(void)
{
	uint64_t r[32] = {0};
	char pcs[32];
	snprintf(pcs, sizeof(pcs), "pc 0x%llx", (unsigned long long)H_PC);
	/* scalar loads and stores outside core memory */
	{
		r[10] = TA1_VMEM_BASE + 0x40;
		struct ta1_insn in = h_insn(TA1_OP_LW, 5, 10, 0, 0, 8);
		const char *w[] = {"scalar load", "4 bytes", "0x20000048", "VMEM", pcs, "lw t0, 8(a0)", NULL};
		expect_fault(&in, r, NULL, w, "lw from VMEM");
	}
	{
		r[10] = TA1_HBM_BASE;
		struct ta1_insn in = h_insn(TA1_OP_SD, 0, 10, 11, 0, 0);
		const char *w[] = {"scalar store", "8 bytes", "0x40000000", "HBM", pcs, NULL};
		expect_fault(&in, r, NULL, w, "sd to HBM");
	}
	{
		r[10] = TA1_HBM_GLOBAL_BASE + 16;
		struct ta1_insn in = h_insn(TA1_OP_LBU, 5, 10, 0, 0, 0);
		const char *w[] = {"scalar load", "0x1000000000010", "HBM", NULL};
		expect_fault(&in, r, NULL, w, "lbu from global HBM");
	}
	{
		r[10] = TA1_MXUW_BASE;
		struct ta1_insn in = h_insn(TA1_OP_SB, 0, 10, 11, 0, 0);
		const char *w[] = {"scalar store", "0x30000000", "MXU weight buffer", NULL};
		expect_fault(&in, r, NULL, w, "sb to MXU weights");
	}
	{
		r[10] = 0x8;
		struct ta1_insn in = h_insn(TA1_OP_LD, 5, 10, 0, 0, 0);
		const char *w[] = {"scalar load", "0x8", "outside every memory", NULL};
		expect_fault(&in, r, NULL, w, "ld from nowhere");
	}
	struct ta1_insn x4 = h_insn(TA1_OP_TA_VADD, 13, 10, 11, 12, 0);
	/* vector operands outside VMEM */
	{
		r[10] = TA1_VMEM_BASE;
		r[11] = TA1_CORE_BASE + 0x100;
		r[12] = TA1_VMEM_BASE + 0x1000;
		r[13] = 16;
		const char *w[] = {"source", "0x10100", "core memory", "ta.vadd", pcs, NULL};
		expect_fault(&x4, r, NULL, w, "vadd source in core memory");
	}
	{
		r[10] = TA1_HBM_BASE + 0x40;
		r[11] = TA1_VMEM_BASE;
		r[12] = TA1_VMEM_BASE;
		r[13] = 16;
		const char *w[] = {"destination", "0x40000040", "HBM", NULL};
		expect_fault(&x4, r, NULL, w, "vadd destination in HBM");
	}
	{
		r[10] = TA1_VMEM_BASE;
		r[11] = TA1_VMEM_BASE;
		r[12] = TA1_VMEM_BASE + (1 << 20) - 32;
		r[13] = 16;
		const char *w[] = {"outside every memory", "source", "0x200fffe0", "64 bytes", NULL};
		expect_fault(&x4, r, NULL, w, "vadd source running off the end of VMEM");
	}
	{
		struct ta1_insn in = h_insn(TA1_OP_TA_MXU_MM, 13, 10, 11, 0, 0);
		r[10] = TA1_VMEM_BASE;
		r[11] = TA1_MXUW_BASE;
		r[13] = 1;
		const char *w[] = {"source", "0x30000000", "MXU weight buffer", "ta.mxu.mm", NULL};
		expect_fault(&in, r, NULL, w, "mxu.mm lhs in the weight buffer");
	}
	{
		struct ta1_insn in = h_insn(TA1_OP_TA_MXU_LOAD, 0, 10, 0, 0, 0);
		r[10] = TA1_VMEM_BASE + (1 << 20) - 0x8000;
		const char *w[] = {"outside every memory", "0x200f8000", "65536 bytes", NULL};
		expect_fault(&in, r, NULL, w, "mxu.load past VMEM");
	}
	/* misaligned vector operands */
	{
		r[10] = TA1_VMEM_BASE;
		r[11] = TA1_VMEM_BASE + 2;
		r[12] = TA1_VMEM_BASE + 0x100;
		r[13] = 4;
		const char *w[] = {"not 4-byte aligned", "0x20000002", "source", NULL};
		expect_fault(&x4, r, NULL, w, "vadd misaligned source");
	}
	{
		struct ta1_insn in = h_insn(TA1_OP_TA_VSUMROWS, 13, 10, 11, 12, 0);
		r[10] = TA1_VMEM_BASE + 1;
		r[11] = TA1_VMEM_BASE;
		r[12] = 2;
		r[13] = 2;
		const char *w[] = {"not 4-byte aligned", "0x20000001", "destination", NULL};
		expect_fault(&in, r, NULL, w, "vsumrows misaligned destination");
	}
	/* DMA into the MXU weight buffer, or out of every memory */
	{
		struct ta1_insn in = h_insn(TA1_OP_TA_DMA, 13, 10, 11, 12, 0);
		r[10] = TA1_MXUW_BASE;
		r[11] = TA1_VMEM_BASE;
		r[12] = 64;
		r[13] = 0;
		const char *w[] = {"destination", "0x30000000", "MXU weight buffer", NULL};
		expect_fault(&in, r, NULL, w, "DMA into the MXU weight buffer");
		r[10] = TA1_VMEM_BASE;
		r[11] = TA1_HBM_GLOBAL_BASE + (5ull << 40);
		r[12] = 64;
		const char *w2[] = {"outside every memory", "source", "0x1050000000000", NULL};
		expect_fault(&in, r, NULL, w2, "DMA from a chip that does not exist");
	}
	{
		struct ta1_insn in = h_insn(TA1_OP_TA_DMA2D, 13, 10, 11, 12, 0);
		r[10] = TA1_VMEM_BASE + 0x100;
		r[11] = TA1_HBM_BASE + 0x100;
		r[12] = ta1_dma2d_shape(64, 4, 1);
		r[13] = ta1_dma2d_strides(-128, 64); /* rows at dst 0x100, 0x80, 0, -0x80: below VMEM */
		const char *w[] = {"outside every memory", "destination", "0x20000100", "per row", NULL};
		expect_fault(&in, r, NULL, w, "2-D DMA with a negative stride leaving VMEM");
	}
	/* sync flags out of range */
	{
		struct ta1_insn in = h_insn(TA1_OP_TA_DMA, 13, 10, 11, 12, 0);
		r[10] = TA1_VMEM_BASE;
		r[11] = TA1_HBM_BASE;
		r[12] = 64;
		r[13] = 16;
		const char *w[] = {"flag 16", "out of range", "ta.dma", NULL};
		expect_fault(&in, r, NULL, w, "DMA flag 16");
		struct ta1_insn in2 = h_insn(TA1_OP_TA_DMA2D, 13, 10, 11, 12, 0);
		r[12] = ta1_dma2d_shape(8, 2, 300);
		r[13] = 0;
		const char *w2[] = {"flag 300", "out of range", NULL};
		expect_fault(&in2, r, NULL, w2, "2-D DMA flag 300");
		struct ta1_insn in3 = h_insn(TA1_OP_TA_WAIT, 0, 10, 11, 0, 0);
		r[10] = 99;
		r[11] = 0;
		const char *w3[] = {"flag 99", "out of range", "ta.wait", NULL};
		expect_fault(&in3, r, NULL, w3, "wait flag 99");
	}
	/* waiting for completions that never come */
	{
		uint64_t flags[TA1_NUM_FLAGS] = {0};
		flags[3] = 1;
		struct ta1_insn in = h_insn(TA1_OP_TA_WAIT, 0, 10, 11, 0, 0);
		r[10] = 3;
		r[11] = 2;
		const char *w[] = {"ta.wait", "2 completions", "flag 3", "only 1", NULL};
		expect_fault(&in, r, flags, w, "wait for 2 with 1 signalled");
	}
}

int main(void)
{
	m1 = h_machine(1, 1 << 20, 0, 16 << 20);
	c0 = ta1_machine_chip(m1, 0);
	/* every build of the vector and MXU kernels (isa/ta1/ta1_xta.c) that
	 * this host can run gives the reference's bits */
	const char *chosen = ta1_xta_impl();
	for (int i = 0; ta1_xta_impl_name(i); i++) {
		const char *name = ta1_xta_impl_name(i);
		if (ta1_xta_use(name) != 0) {
			printf("xta build %s: not supported by this host's CPU, not tested\n", name);
			continue;
		}
		printf("xta build %s%s:\n", name, strcmp(name, chosen) ? "" : " (chosen for this host)");
		test_elementwise();
		test_vsumrows();
		test_vexp();
		test_mxu();
		test_mxu_zeros();
		test_mxu_groups();
	}
	CHECK(ta1_xta_use(chosen) == 0, "cannot return to the build %s", chosen);
	CHECK(ta1_xta_use("no-such-build") == -1, "an unknown build was accepted");
	test_mxu_weights_kept();
	ta1_machine_free(m1);
	test_lazy_copies();
	test_dma();
	test_wait_and_ids();
	test_faults();
	return check_report("test_xta");
}
