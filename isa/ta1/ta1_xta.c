/*
 * ta1_xta.c: see ta1_xta.h.
 *
 * max follows IEEE maxNum except that a NaN operand gives NaN (like
 * fmaxf on TPUs' vector units: NaNs propagate), written out so the host's
 * fmaxf cannot change it.
 *
 * The MXU's matmul and the element-wise vector operations are written once
 * over GCC/clang vector types and built several times: for AVX-512F, for
 * AVX2 and for the baseline (SSE2 on x86-64, the target's default
 * elsewhere). The widest one the host's CPU supports is chosen once, at the
 * first call (ta1_xta_use() overrides it, for the tests). Every build
 * performs the same IEEE f32 operations in the same order per element as the
 * scalar definition (each output element of the matmul is 0 + l0*w0 + l1*w1
 * + ... in ascending k, each product rounded, then added): the vectors only
 * compute several independent elements at once, never reassociate a sum,
 * and the file is built with -ffp-contract=off (meson.build), so no fused
 * multiply-add appears. The results are therefore bit-identical on every
 * host; tests/test_xta.c checks each build against a plain scalar reference.
 */
#include "ta1_xta.h"

#include <math.h>
#include <string.h>

/* 2^k as a double, for -1100 < k < 1024: exact, so p * pow2(k) is ldexp(p, k)
 * whenever the product is a normal double (always, in ta1_expf). */
static inline double pow2(int k)
{
	uint64_t bits = (uint64_t)(k + 1023) << 52;
	double d;
	memcpy(&d, &bits, sizeof(d));
	return d;
}

/* ta1_expf's reduction constants and its polynomial, shared with the
 * vector builds (XTA_ELEMWISE): p (a double or a vector of doubles, 0 on
 * entry) becomes exp(r)'s degree-11 Taylor polynomial by Horner's rule,
 * one rounded product and one rounded sum per step. */
#define EXP_LOG2E 1.44269504088896338700
#define EXP_LN2_HI 6.93147180369123816490e-01
#define EXP_LN2_LO 1.90821492927058770002e-10
static const double exp_poly_c[12] = {1.0 / 39916800.0, 1.0 / 3628800.0, 1.0 / 362880.0, 1.0 / 40320.0,
				      1.0 / 5040.0,     1.0 / 720.0,     1.0 / 120.0,    1.0 / 24.0,
				      1.0 / 6.0,        0.5,             1.0,            1.0};
#define EXP_POLY(p, r)                                                                                       \
	do {                                                                                                 \
		p = p + exp_poly_c[0];                                                                       \
		for (int k_ = 1; k_ < 12; k_++)                                                              \
			p = p * r + exp_poly_c[k_];                                                          \
	} while (0)

/* EXP_POLY for four independent values at once, each step in the same
 * order: four dependency chains the CPU overlaps. */
#define EXP_POLY4(p0, r0, p1, r1, p2, r2, p3, r3)                                                            \
	do {                                                                                                 \
		p0 = p0 + exp_poly_c[0];                                                                     \
		p1 = p1 + exp_poly_c[0];                                                                     \
		p2 = p2 + exp_poly_c[0];                                                                     \
		p3 = p3 + exp_poly_c[0];                                                                     \
		for (int k_ = 1; k_ < 12; k_++) {                                                            \
			p0 = p0 * r0 + exp_poly_c[k_];                                                       \
			p1 = p1 * r1 + exp_poly_c[k_];                                                       \
			p2 = p2 * r2 + exp_poly_c[k_];                                                       \
			p3 = p3 * r3 + exp_poly_c[k_];                                                       \
		}                                                                                            \
	} while (0)

float ta1_expf(float xf)
{
	double x = xf;
	if (xf != xf)
		return xf;
	if (x > 88.73)
		return INFINITY;
	if (x < -104.0)
		return 0.0f;
	/* x = k*ln2 + r, |r| <= ln2/2; exp(r) by a degree-11 Taylor polynomial,
	 * whose truncation error (< 1e-14 relative: (ln2/2)^12/12!) is far below float's ULP. */
	double kd = nearbyint(x * EXP_LOG2E);
	double r = (x - kd * EXP_LN2_HI) - kd * EXP_LN2_LO;
	double p = 0.0;
	EXP_POLY(p, r);
	/* kd is within [-150, 128] here and p within [0.7, 1.5]: p * 2^kd is an
	 * exact, normal double (what ldexp(p, kd) returns), rounded once to f32 */
	return (float)(p * pow2((int)kd));
}

static inline float vmax1(float a, float b)
{
	if (a != a)
		return a;
	if (b != b)
		return b;
	if (a == 0.0f && b == 0.0f) /* +0 beats -0 */
		return signbit(a) ? b : a;
	return a > b ? a : b;
}

/* Vectors of 16, 8 and 4 floats (the register width of AVX-512, AVX2 and
 * SSE2: wider generic vectors than the target has are split badly), with
 * their masks; loaded and stored with memcpy (operands need only be 4-byte
 * aligned), in macros: a function taking or returning one would have an ABI
 * that differs between the targets below */
typedef float xta_v16 __attribute__((vector_size(64)));
typedef int32_t xta_v16i __attribute__((vector_size(64)));
typedef float xta_v8 __attribute__((vector_size(32)));
typedef int32_t xta_v8i __attribute__((vector_size(32)));
typedef float xta_v4 __attribute__((vector_size(16)));
typedef int32_t xta_v4i __attribute__((vector_size(16)));
#define V_LOAD(v, p) memcpy(&(v), (p), sizeof(v))
#define V_STORE(p, v) memcpy((p), &(v), sizeof(v))

/* a + b or a * b; of two NaNs, a's (quieted) on every host and whatever
 * operand order the compiler picks (docs/ta1-isa.md: the first NaN operand) */
static inline float vbinary1(int mul, float a, float b)
{
	if (a != a)
		return a + a;
	return mul ? a * b : a + b;
}

enum { MXU_D = 128 };

/*
 * Skipping a zero lhs element. A product l * w with l = +-0 and w finite is
 * +-0, and adding +-0 to an accumulator leaves it as it was: the
 * accumulator starts at +0 and a rounded sum is -0 only when both its
 * operands are -0, so it is never -0, and +0 + -0 = +0, x + +-0 = x for any
 * other x (a NaN stays the same NaN, an infinity the same infinity). So the
 * step k of a row whose l_k is zero changes nothing when row k of w is all
 * finite, and is skipped; a row of all-zero lhs (the padding rows of a
 * batch smaller than the MXU's) then costs its compares and its stores.
 * With l_k zero and an infinite or NaN weight in row k the product is NaN
 * and the step is done. Whether each row of w is finite is known per call
 * (fin[k]: 0 not yet known, 1 finite, 2 not; fin[MXU_D] = 1: every row
 * finite), found in one of two ways:
 *  - w_row_finite looks at row k when a zero first asks;
 *  - a group's pass whose sums all end finite (before mma adds the old dst)
 *    proves every row of w finite: a non-finite product leaves its running sum non-finite to the end
 *    (inf + finite = inf, inf + -inf = NaN, NaN + x = NaN), and a product
 *    l * w is non-finite whenever w is (+-inf * nonzero = +-inf, 0 * inf =
 *    NaN, x * NaN = NaN), so every w[k][j] of a step done is finite, and
 *    the steps left out were left out because their row of w is. An
 *    overflow, or an infinite or NaN lhs element, only leaves it unknown.
 *    This costs a few vector operations per block of columns, where looking
 *    at all of w costs a pass over it, and it is why a batch's padding rows
 *    after a row of data cost almost nothing.
 */

/*
 * XTA_KERNELS(SUFFIX, ATTR, VT, VTI, W, A, A1) defines matmul_SUFFIX and
 * vbinary_SUFFIX with the function attribute ATTR (a target), over VT, a
 * vector of W floats (VTI its mask). Only these two loops are built per
 * target (exp and max: XTA_ELEMWISE below; the row sums stay scalar, one
 * running sum per row).
 *
 * matmul: of each 64 rows of lhs, those not all zero are taken XTA_ROWS (4)
 * at a time in their order (the last group may be smaller), then the
 * all-zero ones the same way. For each block of columns (A*W of them, A1*W
 * for a group of one row), each row's acc[j] starts at +0.0f and adds
 * l_k * w[k][j] for k ascending, one rounded product and one rounded sum per
 * step. A group first finds its steps (mm_group): a step whose l_k is zero
 * in every row of the group is left out when that changes nothing (see
 * above); when none is, k runs 0..127 without a list. The rows*A vector
 * accumulators stay in registers across the steps (independent chains of
 * adds hide the add's latency), and each weight vector loaded serves every
 * row of the group: with 4 rows and A = 2 (AVX2: 8 accumulators, 2 weight
 * vectors and the broadcasts of the 4 l_k among 16 registers) a step loads
 * 2 weight vectors for 8 vector multiply-adds, half the bytes per
 * multiply-add of a pair of rows (4 vectors for 8) and a quarter of one
 * row's. The weights (64 KiB, larger than L1) come from L2: a pair of rows
 * at a Zen 3's peak of 2 vector multiplies per cycle needs its full 32 bytes
 * per cycle from L2, the groups of 4 half of it (inferred from the
 * throughputs, not measured apart: no hardware counters on the machine
 * where this was tuned). AVX-512F: 4 rows x 4 vectors (16 of 32 registers);
 * one row alone: A1 vectors, no weight vector reused. Which rows go together
 * changes no element's operations: each output element still depends on its
 * own row and w alone, and a step done for a row whose l_k is zero (another
 * row of its group needs it) adds +-0 to an accumulator that is never -0:
 * the same bits as leaving it out. mm_group is inlined with a constant N
 * (rows in the group) and mm_blocks with a constant DENSE, one copy each, so
 * every loop over rows or vectors has constant bounds.
 *
 * vbinary: dst[i] = a[i] + b[i] or a[i] * b[i] (vbinary1: of two NaNs, a's);
 * loads a block before storing it, so dst may alias a or b exactly (as
 * ta1_vector_op allows).
 */
enum { XTA_ROWS = 4 };
_Static_assert(XTA_ROWS == 4, "matmul_* calls mm_group with 1..4 rows");
#define XTA_KERNELS(SUFFIX, ATTR, VT, VTI, W, A, A1)                                                         \
	/* the bits of x - x: 0 in the lanes where x is finite, a NaN's where it is infinite or NaN */     \
	ATTR static inline __attribute__((always_inline)) VTI nonfinite_bits_##SUFFIX(VT x)                 \
	{                                                                                                    \
		VT z = x - x;                                                                                \
		VTI zi;                                                                                      \
		memcpy(&zi, &z, sizeof(zi));                                                                 \
		return zi;                                                                                   \
	}                                                                                                    \
	ATTR static inline __attribute__((always_inline)) int any_lane_##SUFFIX(VTI m)                      \
	{                                                                                                    \
		int32_t o = 0;                                                                               \
		for (int i = 0; i < W; i++)                                                                  \
			o |= m[i];                                                                           \
		return o != 0;                                                                               \
	}                                                                                                    \
	ATTR static inline __attribute__((always_inline)) int w_row_finite_##SUFFIX(const float *w, int k,  \
										     unsigned char *fin)     \
	{                                                                                                    \
		if (!fin[k]) {                                                                               \
			VTI bad = {0};                                                                       \
			for (int j = 0; j < MXU_D; j += W) {                                                 \
				VT x;                                                                        \
				V_LOAD(x, w + k * MXU_D + j);                                                \
				bad |= nonfinite_bits_##SUFFIX(x);                                           \
			}                                                                                    \
			fin[k] = any_lane_##SUFFIX(bad) ? 2 : 1;                                             \
		}                                                                                            \
		return fin[k] == 1;                                                                          \
	}                                                                                                    \
	/* the steps (ks[0..nk-1], or every k if DENSE) for the N rows at OUT and LR, blocks of columns; */ \
	/* returns whether every accumulator ended finite (so every row of w is: see above) */             \
	ATTR static inline __attribute__((always_inline)) int mm_blocks_##SUFFIX(                            \
	    float *const *out, const float *const *lr, const float *w, int accumulate, const unsigned char *ks, \
	    int nk, const int n, const int dense)                                                            \
	{                                                                                                    \
		const int nv = n == 1 ? A1 : A; /* vectors per block */                                      \
		VTI bad = {0};                                                                               \
		for (int jb = 0; jb < MXU_D; jb += nv * W) {                                                 \
			VT acc[XTA_ROWS][A1 > A ? A1 : A];                                                   \
			_Pragma("GCC unroll 16") for (int r = 0; r < n; r++)                                 \
			    _Pragma("GCC unroll 16") for (int v = 0; v < nv; v++) acc[r][v] = (VT){0};       \
			for (int i = 0; i < nk; i++) {                                                       \
				const int k = dense ? i : ks[i];                                             \
				const float *wr = w + (uint64_t)k * MXU_D + jb;                              \
				float l[XTA_ROWS];                                                           \
				_Pragma("GCC unroll 16") for (int r = 0; r < n; r++) l[r] = lr[r][k];        \
				_Pragma("GCC unroll 16") for (int v = 0; v < nv; v++)                        \
				{                                                                            \
					VT wv;                                                               \
					V_LOAD(wv, wr + W * v);                                              \
					_Pragma("GCC unroll 16") for (int r = 0; r < n; r++)                 \
					{                                                                    \
						VT p = l[r] * wv; /* scalar * vector: l times each lane */   \
						acc[r][v] = acc[r][v] + p;                                   \
					}                                                                    \
				}                                                                            \
			}                                                                                    \
			_Pragma("GCC unroll 16") for (int r = 0; r < n; r++)                                 \
			    _Pragma("GCC unroll 16") for (int v = 0; v < nv; v++)                            \
			{                                                                                    \
				bad |= nonfinite_bits_##SUFFIX(acc[r][v]);                                   \
				if (accumulate) {                                                            \
					VT prev;                                                             \
					V_LOAD(prev, out[r] + jb + W * v);                                   \
					acc[r][v] = prev + acc[r][v];                                        \
				}                                                                            \
				V_STORE(out[r] + jb + W * v, acc[r][v]);                                     \
			}                                                                                    \
		}                                                                                            \
		return !any_lane_##SUFFIX(bad);                                                              \
	}                                                                                                    \
	/* which steps of N rows have some l_k not zero (a NaN is not zero): nzk[k] (if not NULL); */      \
	/* *any: some step has, *all: every step has */                                                    \
	ATTR static inline __attribute__((always_inline)) void nonzero_steps_##SUFFIX(                      \
	    const float *const *lr, const int n, int32_t *nzk, int *any, int *all)                          \
	{                                                                                                    \
		VTI or_ = {0}, and_ = ~or_;                                                                  \
		for (int kb = 0; kb < MXU_D; kb += W) {                                                      \
			VTI m = {0};                                                                         \
			_Pragma("GCC unroll 16") for (int r = 0; r < n; r++)                                 \
			{                                                                                    \
				VT x;                                                                        \
				V_LOAD(x, lr[r] + kb);                                                       \
				m |= x != 0.0f;                                                              \
			}                                                                                    \
			if (nzk)                                                                             \
				V_STORE(nzk + kb, m);                                                        \
			or_ |= m;                                                                            \
			and_ &= m;                                                                           \
		}                                                                                            \
		*any = any_lane_##SUFFIX(or_);                                                               \
		*all = !any_lane_##SUFFIX(~and_);                                                            \
	}                                                                                                    \
	ATTR static int row_all_zero_##SUFFIX(const float *l)                                               \
	{                                                                                                    \
		int any, all;                                                                                \
		nonzero_steps_##SUFFIX(&l, 1, NULL, &any, &all);                                             \
		return !any;                                                                                 \
	}                                                                                                    \
	ATTR static inline __attribute__((always_inline)) void mm_group_##SUFFIX(                            \
	    float *const *out, const float *const *lr, const float *w, int accumulate, unsigned char *fin,  \
	    const int n)                                                                                     \
	{                                                                                                    \
		unsigned char ks[MXU_D];                                                                     \
		int32_t nzk[MXU_D];                                                                          \
		int nk = 0, any, all, finite;                                                                \
		nonzero_steps_##SUFFIX(lr, n, nzk, &any, &all);                                              \
		if (all) {                                                                                   \
			finite = mm_blocks_##SUFFIX(out, lr, w, accumulate, ks, MXU_D, n, 1);                \
		} else {                                                                                     \
			if (fin[MXU_D]) { /* every row of w finite: the steps are the nonzero ones */        \
				for (int k = 0; any && k < MXU_D; k++)                                       \
					if (nzk[k])                                                          \
						ks[nk++] = (unsigned char)k;                                 \
			} else {                                                                             \
				for (int k = 0; k < MXU_D; k++)                                              \
					if (nzk[k] || !w_row_finite_##SUFFIX(w, k, fin))                     \
						ks[nk++] = (unsigned char)k;                                 \
			}                                                                                    \
			finite = mm_blocks_##SUFFIX(out, lr, w, accumulate, ks, nk, n, 0);                   \
		}                                                                                            \
		if (finite && !fin[MXU_D])                                                                   \
			memset(fin, 1, MXU_D + 1);                                                           \
	}                                                                                                    \
	ATTR static void matmul_##SUFFIX(float *dst, const float *lhs, const float *w, uint64_t rows,        \
					 int accumulate)                                                     \
	{                                                                                                    \
		unsigned char fin[MXU_D + 1] = {0};                                                          \
		for (uint64_t r0 = 0; r0 < rows; r0 += 64) { /* 64 rows at a time: a bit each */             \
			const int nr = rows - r0 < 64 ? (int)(rows - r0) : 64;                               \
			uint64_t zmask = 0; /* bit i: row r0 + i is all zero */                              \
			int nzero = 0;                                                                       \
			for (int i = 0; i < nr; i++)                                                         \
				if (row_all_zero_##SUFFIX(lhs + (r0 + i) * MXU_D))                           \
					zmask |= 1ull << i, nzero++;                                         \
			for (int zeros = 0; zeros < 2; zeros++) { /* the rows not all zero, then the others */ \
				int left = zeros ? nzero : nr - nzero, n = 0;                                \
				float *out[XTA_ROWS];                                                        \
				const float *l[XTA_ROWS];                                                    \
				for (int i = 0; left; i++) {                                                 \
					if ((int)(zmask >> i & 1) != zeros)                                  \
						continue;                                                    \
					out[n] = dst + (r0 + i) * MXU_D, l[n] = lhs + (r0 + i) * MXU_D;      \
					n++, left--;                                                         \
					if (n < XTA_ROWS && left)                                            \
						continue;                                                    \
					if (n == 4)                                                          \
						mm_group_##SUFFIX(out, l, w, accumulate, fin, 4);            \
					else if (n == 3)                                                     \
						mm_group_##SUFFIX(out, l, w, accumulate, fin, 3);            \
					else if (n == 2)                                                     \
						mm_group_##SUFFIX(out, l, w, accumulate, fin, 2);            \
					else                                                                 \
						mm_group_##SUFFIX(out, l, w, accumulate, fin, 1);            \
					n = 0;                                                               \
				}                                                                            \
			}                                                                                    \
		}                                                                                            \
	}                                                                                                    \
	ATTR static void vbinary_##SUFFIX(int mul, float *dst, const float *a, const float *b, uint64_t n)   \
	{                                                                                                    \
		uint64_t i = 0;                                                                              \
		for (; i + W <= n; i += W) {                                                                 \
			VT x, y, r, xq;                                                                      \
			V_LOAD(x, a + i);                                                                    \
			V_LOAD(y, b + i);                                                                    \
			r = mul ? x * y : x + y;                                                             \
			xq = x + x; /* a NaN x, quieted */                                                   \
			VTI nan_x = x != x, ri, xqi;                                                         \
			memcpy(&ri, &r, sizeof(ri));                                                         \
			memcpy(&xqi, &xq, sizeof(xqi));                                                      \
			ri = (nan_x & xqi) | (~nan_x & ri);                                                  \
			V_STORE(dst + i, ri);                                                                \
		}                                                                                            \
		for (; i < n; i++)                                                                           \
			dst[i] = vbinary1(mul, a[i], b[i]);                                                  \
	}

/*
 * XTA_ELEMWISE(SUFFIX, ATTR, VT, VTI, W, VH, VHI, VD, VDI, VDU, H) defines
 * vmax_SUFFIX and vexp_SUFFIX, the same operations as vmax1 and ta1_expf
 * per element, W (vmax) or H = W/2 (exp, in doubles: VH floats widened to
 * VD; four such vectors per pass) elements at a time, the edge cases chosen
 * by masks:
 *
 * vmax: a if a is NaN, else b if b is NaN, else, both zero, a unless a is
 * -0, else the larger (a > b ? a : b), as bit patterns (a NaN is returned
 * as it is, not quieted).
 *
 * exp: the same double operations as ta1_expf in the same order (the
 * reduction, the 12 Horner steps, the product by 2^k, one rounding to f32),
 * with nearbyint as (t + 1.5*2^52) - 1.5*2^52 (round to nearest even, the
 * default mode, for |t| < 2^51; the lanes beyond it are replaced below) and
 * 2^k built from that sum's low bits; then NaN gives x itself, x > 88.73
 * (as a double) +inf and x < -104 +0: the same comparisons on the double x.
 */
#define XTA_ELEMWISE(SUFFIX, ATTR, VT, VTI, W, VH, VHI, VD, VDI, VDU, H)                                         \
	ATTR static void vmax_##SUFFIX(float *dst, const float *a, const float *b, uint64_t n)              \
	{                                                                                                    \
		uint64_t i = 0;                                                                              \
		for (; i + W <= n; i += W) {                                                                 \
			VT x, y;                                                                             \
			VTI xi, yi;                                                                          \
			V_LOAD(x, a + i);                                                                    \
			V_LOAD(y, b + i);                                                                    \
			memcpy(&xi, &x, sizeof(xi));                                                         \
			memcpy(&yi, &y, sizeof(yi));                                                         \
			VTI nan_x = x != x, nan_y = y != y;                                                  \
			VTI zeros = (x == 0.0f) & (y == 0.0f);                                               \
			VTI pick_x = nan_x | (~nan_y & ((x > y) | (zeros & (xi >= 0))));                     \
			VTI ri = (pick_x & xi) | (~pick_x & yi);                                             \
			V_STORE(dst + i, ri);                                                                \
		}                                                                                            \
		for (; i < n; i++)                                                                           \
			dst[i] = vmax1(a[i], b[i]);                                                          \
	}                                                                                                    \
	/* One vector of H floats: the reduction, 2^k and the edge cases around  \
	 * the polynomial, which vexp_ interleaves for four vectors. */        \
	ATTR static inline VD vexp_reduce_##SUFFIX(VH xf, VD *tc)                                          \
	{                                                                                                    \
		const double round_c = 6755399441055744.0; /* 1.5 * 2^52 */                                  \
		VD x = __builtin_convertvector(xf, VD);                                                      \
		*tc = x * EXP_LOG2E + round_c;                                                               \
		VD kd = *tc - round_c;                                                                       \
		return (x - kd * EXP_LN2_HI) - kd * EXP_LN2_LO;                                              \
	}                                                                                                    \
	ATTR static inline void vexp_finish_##SUFFIX(float *dst, VH xf, VD tc, VD p)                        \
	{                                                                                                    \
		VD x = __builtin_convertvector(xf, VD);                                                      \
		VDU kbits, scale_bits;                                                                       \
		memcpy(&kbits, &tc, sizeof(kbits));                                                          \
		scale_bits = (kbits + 1023) << 52; /* the low bits of tc are k (two's complement) */         \
		VD scale;                                                                                    \
		memcpy(&scale, &scale_bits, sizeof(scale));                                                  \
		VH res = __builtin_convertvector(p * scale, VH);                                             \
		VDI big = x > 88.73, small = x < -104.0;                                                     \
		VHI bigf = __builtin_convertvector(big, VHI), smallf = __builtin_convertvector(small, VHI);  \
		VHI nan = xf != xf, ri, xi;                                                                  \
		memcpy(&ri, &res, sizeof(ri));                                                               \
		memcpy(&xi, &xf, sizeof(xi));                                                                \
		ri = (bigf & 0x7f800000) | (~bigf & ri);                                                     \
		ri = ~smallf & ri;                                                                           \
		ri = (nan & xi) | (~nan & ri);                                                               \
		V_STORE(dst, ri);                                                                            \
	}                                                                                                    \
	/* Four vectors per pass: the 12 Horner steps are one dependent chain   \
	 * of products and sums per vector (latency-bound: ~6 cycles a step),   \
	 * so independent chains in the same loop fill the FP pipes one chain   \
	 * leaves idle (the same operations per element, so the same bits). */ \
	ATTR static void vexp_##SUFFIX(float *dst, const float *a, uint64_t n)                              \
	{                                                                                                    \
		uint64_t i = 0;                                                                              \
		for (; i + 4 * H <= n; i += 4 * H) {                                                         \
			VH xf0, xf1, xf2, xf3;                                                               \
			V_LOAD(xf0, a + i);                                                                  \
			V_LOAD(xf1, a + i + H);                                                              \
			V_LOAD(xf2, a + i + 2 * H);                                                          \
			V_LOAD(xf3, a + i + 3 * H);                                                          \
			VD tc0, tc1, tc2, tc3;                                                               \
			VD r0 = vexp_reduce_##SUFFIX(xf0, &tc0), r1 = vexp_reduce_##SUFFIX(xf1, &tc1);       \
			VD r2 = vexp_reduce_##SUFFIX(xf2, &tc2), r3 = vexp_reduce_##SUFFIX(xf3, &tc3);       \
			VD p0 = {0}, p1 = {0}, p2 = {0}, p3 = {0};                                           \
			EXP_POLY4(p0, r0, p1, r1, p2, r2, p3, r3);                                           \
			vexp_finish_##SUFFIX(dst + i, xf0, tc0, p0);                                         \
			vexp_finish_##SUFFIX(dst + i + H, xf1, tc1, p1);                                     \
			vexp_finish_##SUFFIX(dst + i + 2 * H, xf2, tc2, p2);                                 \
			vexp_finish_##SUFFIX(dst + i + 3 * H, xf3, tc3, p3);                                 \
		}                                                                                            \
		for (; i + H <= n; i += H) {                                                                 \
			VH xf;                                                                               \
			V_LOAD(xf, a + i);                                                                   \
			VD tc, r = vexp_reduce_##SUFFIX(xf, &tc), p = {0};                                   \
			EXP_POLY(p, r);                                                                      \
			vexp_finish_##SUFFIX(dst + i, xf, tc, p);                                            \
		}                                                                                            \
		for (; i < n; i++)                                                                           \
			dst[i] = ta1_expf(a[i]);                                                             \
	}

typedef float xta_v2 __attribute__((vector_size(8)));
typedef int32_t xta_v2i __attribute__((vector_size(8)));
typedef double xta_d8 __attribute__((vector_size(64)));
typedef int64_t xta_d8i __attribute__((vector_size(64)));
typedef uint64_t xta_d8u __attribute__((vector_size(64)));
typedef double xta_d4 __attribute__((vector_size(32)));
typedef int64_t xta_d4i __attribute__((vector_size(32)));
typedef uint64_t xta_d4u __attribute__((vector_size(32)));
typedef double xta_d2 __attribute__((vector_size(16)));
typedef int64_t xta_d2i __attribute__((vector_size(16)));
typedef uint64_t xta_d2u __attribute__((vector_size(16)));

#if defined(__x86_64__)
XTA_KERNELS(avx512, __attribute__((target("avx512f"))), xta_v16, xta_v16i, 16, 4, 8)
XTA_KERNELS(avx2, __attribute__((target("avx2"))), xta_v8, xta_v8i, 8, 2, 8)
XTA_ELEMWISE(avx512, __attribute__((target("avx512f"))), xta_v16, xta_v16i, 16, xta_v8, xta_v8i, xta_d8, xta_d8i, xta_d8u, 8)
XTA_ELEMWISE(avx2, __attribute__((target("avx2"))), xta_v8, xta_v8i, 8, xta_v4, xta_v4i, xta_d4, xta_d4i, xta_d4u, 4)
#endif
XTA_KERNELS(base, , xta_v4, xta_v4i, 4, 2, 8)
XTA_ELEMWISE(base, , xta_v4, xta_v4i, 4, xta_v2, xta_v2i, xta_d2, xta_d2i, xta_d2u, 2)

struct xta_impl {
	const char *name;
	void (*matmul)(float *, const float *, const float *, uint64_t, int);
	void (*vbinary)(int, float *, const float *, const float *, uint64_t);
	void (*vmax)(float *, const float *, const float *, uint64_t);
	void (*vexp)(float *, const float *, uint64_t);
};

static const struct xta_impl xta_impls[] = {
#if defined(__x86_64__)
    {"avx512f", matmul_avx512, vbinary_avx512, vmax_avx512, vexp_avx512},
    {"avx2", matmul_avx2, vbinary_avx2, vmax_avx2, vexp_avx2},
#endif
    {"baseline", matmul_base, vbinary_base, vmax_base, vexp_base},
};
enum { XTA_NIMPLS = sizeof(xta_impls) / sizeof(xta_impls[0]) };

static int host_supports(const char *name)
{
#if defined(__x86_64__)
	if (!strcmp(name, "avx512f"))
		return __builtin_cpu_supports("avx512f");
	if (!strcmp(name, "avx2"))
		return __builtin_cpu_supports("avx2");
#endif
	return !strcmp(name, "baseline");
}

/* the chosen build; NULL until the first call (or ta1_xta_use) */
static const struct xta_impl *xta_chosen;

static const struct xta_impl *xta(void)
{
	const struct xta_impl *impl = __atomic_load_n(&xta_chosen, __ATOMIC_ACQUIRE);
	if (impl)
		return impl;
	for (int i = 0; i < XTA_NIMPLS; i++)
		if (host_supports(xta_impls[i].name)) {
			impl = &xta_impls[i];
			break;
		}
	__atomic_store_n(&xta_chosen, impl, __ATOMIC_RELEASE);
	return impl;
}

const char *ta1_xta_impl(void)
{
	return xta()->name;
}

int ta1_xta_use(const char *name)
{
	for (int i = 0; i < XTA_NIMPLS; i++)
		if (!strcmp(xta_impls[i].name, name)) {
			if (!host_supports(name))
				return -1;
			__atomic_store_n(&xta_chosen, &xta_impls[i], __ATOMIC_RELEASE);
			return 0;
		}
	return -1;
}

const char *ta1_xta_impl_name(int i)
{
	return i >= 0 && i < XTA_NIMPLS ? xta_impls[i].name : NULL;
}

void ta1_vector_op(enum ta1_vop op, float *dst, const float *a, const float *b, float s, uint64_t n)
{
	switch (op) {
	case TA1_VOP_ADD:
	case TA1_VOP_MUL:
		xta()->vbinary(op == TA1_VOP_MUL, dst, a, b, n);
		break;
	case TA1_VOP_MAX:
		xta()->vmax(dst, a, b, n);
		break;
	case TA1_VOP_SCALE: {
		uint64_t i = 0;
		/* Four products per step (the same IEEE products) unless dst starts
		 * within the three elements after a: there an element read is one
		 * the same step writes, which the element order defines. */
		uintptr_t d = (uintptr_t)dst, x = (uintptr_t)a;
		if (d <= x || d >= x + 4 * sizeof(float))
			for (; i + 4 <= n; i += 4) {
				xta_v4 v;
				memcpy(&v, a + i, sizeof(v));
				v = v * s;
				memcpy(dst + i, &v, sizeof(v));
			}
		for (; i < n; i++)
			dst[i] = a[i] * s;
		break;
	}
	case TA1_VOP_EXP:
		xta()->vexp(dst, a, n);
		break;
	}
}

void ta1_vsum_rows(float *dst, const float *a, uint64_t rows, uint64_t cols)
{
	/* Four rows at a time: each row's sum is one chain of dependent adds
	 * (latency-bound), so four independent chains overlap; every row still
	 * adds its columns in ascending order from +0 (the same bits). Only
	 * when dst and a are disjoint: row r is written after row r is read,
	 * and a dst inside later rows must change what they read. */
	uintptr_t d0 = (uintptr_t)dst, d1 = (uintptr_t)(dst + rows), a0 = (uintptr_t)a,
		  a1 = (uintptr_t)(a + rows * cols);
	uint64_t r = 0;
	for (; (d1 <= a0 || a1 <= d0) && r + 4 <= rows; r += 4) {
		const float *p0 = a + r * cols, *p1 = p0 + cols, *p2 = p1 + cols, *p3 = p2 + cols;
		float acc0 = 0.0f, acc1 = 0.0f, acc2 = 0.0f, acc3 = 0.0f;
		for (uint64_t c = 0; c < cols; c++) {
			acc0 += p0[c];
			acc1 += p1[c];
			acc2 += p2[c];
			acc3 += p3[c];
		}
		dst[r] = acc0;
		dst[r + 1] = acc1;
		dst[r + 2] = acc2;
		dst[r + 3] = acc3;
	}
	for (; r < rows; r++) {
		float acc = 0.0f;
		for (uint64_t c = 0; c < cols; c++)
			acc += a[r * cols + c];
		dst[r] = acc;
	}
}

void ta1_mxu_matmul(float *dst, const float *lhs, const float *w, uint64_t rows, int accumulate)
{
	xta()->matmul(dst, lhs, w, rows, accumulate);
}
