/*
 * ta1_xta.c: see ta1_xta.h.
 *
 * max follows IEEE maxNum except that a NaN operand gives NaN (like
 * fmaxf on TPUs' vector units: NaNs propagate), written out so the host's
 * fmaxf cannot change it.
 */
#include "ta1_xta.h"

#include <math.h>
#include <string.h>

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
	const double ln2_hi = 6.93147180369123816490e-01, ln2_lo = 1.90821492927058770002e-10;
	double kd = nearbyint(x * 1.44269504088896338700);
	double r = (x - kd * ln2_hi) - kd * ln2_lo;
	double p = 1.0 / 39916800.0;
	p = p * r + 1.0 / 3628800.0;
	p = p * r + 1.0 / 362880.0;
	p = p * r + 1.0 / 40320.0;
	p = p * r + 1.0 / 5040.0;
	p = p * r + 1.0 / 720.0;
	p = p * r + 1.0 / 120.0;
	p = p * r + 1.0 / 24.0;
	p = p * r + 1.0 / 6.0;
	p = p * r + 0.5;
	p = p * r + 1.0;
	p = p * r + 1.0;
	return (float)ldexp(p, (int)kd);
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

void ta1_vector_op(enum ta1_vop op, float *dst, const float *a, const float *b, float s, uint64_t n)
{
	switch (op) {
	case TA1_VOP_ADD:
		for (uint64_t i = 0; i < n; i++)
			dst[i] = a[i] + b[i];
		break;
	case TA1_VOP_MUL:
		for (uint64_t i = 0; i < n; i++)
			dst[i] = a[i] * b[i];
		break;
	case TA1_VOP_MAX:
		for (uint64_t i = 0; i < n; i++)
			dst[i] = vmax1(a[i], b[i]);
		break;
	case TA1_VOP_SCALE:
		for (uint64_t i = 0; i < n; i++)
			dst[i] = a[i] * s;
		break;
	case TA1_VOP_EXP:
		for (uint64_t i = 0; i < n; i++)
			dst[i] = ta1_expf(a[i]);
		break;
	}
}

void ta1_vsum_rows(float *dst, const float *a, uint64_t rows, uint64_t cols)
{
	for (uint64_t r = 0; r < rows; r++) {
		float acc = 0.0f;
		for (uint64_t c = 0; c < cols; c++)
			acc += a[r * cols + c];
		dst[r] = acc;
	}
}

void ta1_mxu_matmul(float *dst, const float *lhs, const float *w, uint64_t rows, int accumulate)
{
	enum { D = 128 };
	float acc[D];
	for (uint64_t r = 0; r < rows; r++) {
		for (int j = 0; j < D; j++)
			acc[j] = 0.0f;
		for (int k = 0; k < D; k++) {
			float l = lhs[r * D + (uint64_t)k];
			const float *wr = w + (uint64_t)k * D;
			for (int j = 0; j < D; j++)
				acc[j] += l * wr[j];
		}
		float *out = dst + r * D;
		if (accumulate)
			for (int j = 0; j < D; j++)
				out[j] += acc[j];
		else
			memcpy(out, acc, sizeof(acc));
	}
}
