/*
 * ta1_xta.h: the arithmetic of TA1's vector unit and MXU, shared by the
 * device and the simulator so that both compute bit-identical results.
 *
 * f32 arithmetic is IEEE single precision in a fixed order (this file is
 * built with -ffp-contract=off, so no fused multiply-adds appear). exp is
 * TA1's own: computed in double and rounded once, within 1 ULP of the correctly
 * rounded result (tests/test_xta.c checks it on random and edge inputs), and
 * the same on every host.
 */
#ifndef SNR_TA1_XTA_H
#define SNR_TA1_XTA_H

#include <stdint.h>

float ta1_expf(float x);

enum ta1_vop { TA1_VOP_ADD, TA1_VOP_MUL, TA1_VOP_MAX, TA1_VOP_SCALE, TA1_VOP_EXP };

/* dst[i] = a[i] op b[i] (or op(a[i], s)); dst may alias a or b exactly. */
void ta1_vector_op(enum ta1_vop op, float *dst, const float *a, const float *b, float s, uint64_t n);
/* dst[r] = sum_{c ascending} a[r*cols + c] */
void ta1_vsum_rows(float *dst, const float *a, uint64_t rows, uint64_t cols);
/* dst[r][j] (+)= sum_{k ascending} lhs[r][k] * w[k][j]; dst must not overlap lhs. */
void ta1_mxu_matmul(float *dst, const float *lhs, const float *w, uint64_t rows, int accumulate);


/* The build of the matmul and vector kernels in use: "avx512f", "avx2" or
 * "baseline" (ta1_xta.c), chosen at the first call from the host's CPU. */
const char *ta1_xta_impl(void);
/* The I-th build this binary has (0 the widest), NULL past the last. */
const char *ta1_xta_impl_name(int i);
/* Use the build NAME from now on (tests): 0, or -1 if this binary lacks it or
 * the host's CPU cannot run it. */
int ta1_xta_use(const char *name);

#endif
