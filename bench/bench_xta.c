/*
 * bench_xta.c: GFLOP/s of the TA1 MXU matmul (isa/ta1/ta1_xta.c) in each
 * build the host's CPU runs (AVX-512F, AVX2, baseline), against the host's
 * peak for the same instruction mix: separate f32 multiplies and adds (the
 * matmul may not fuse them), measured by a kernel of independent vector
 * multiplies and adds on registers only, in the widest vectors the matmul
 * uses. One matmul of R rows is R * 128 * 128 multiply-adds: 2 * R * 16384
 * flops. The weights are 64-byte aligned, as a tile is in the simulated
 * memory (64 KiB aligned in the serving loop); the same with the weights at
 * 16 bytes past a 64-byte boundary (where malloc tends to put them: every
 * other 32-byte load then spans two cache lines), and the time of a call
 * with one row of data and 7 all-zero rows (the serving loop's other shape:
 * a request and a batch's padding), follow on the next line. CPU time, best
 * of REPEAT: the figures hold on a loaded machine as far as a shared core
 * allows.
 * usage: bench_xta [REPEAT]
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "isa/ta1/ta1_xta.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

typedef float v16 __attribute__((vector_size(64)));
typedef float v8 __attribute__((vector_size(32)));
typedef float v4 __attribute__((vector_size(16)));

/* NCHAIN independent chains of x = x * m + a over vectors of W lanes, kept
 * apart (no fusion: the project builds with -ffp-contract=off): W lanes * 2
 * flops * NCHAIN chains per step. A step of one chain waits for its multiply
 * and then its add (3 + 3 cycles on Zen 3 and Zen 4), so 8 chains issue at
 * most 8 multiplies and 8 adds per 6 cycles: two thirds of a core with 2
 * multiply and 2 add pipes of the vector's width (Zen 3's AVX2 and SSE2;
 * on a Zen 3, 63-65 GFLOP/s in AVX2 where 12 chains give up to 98). 12
 * chains and the 2 constants fit in the 16 registers of SSE2 and AVX2. */
enum { NCHAIN = 12 };
#define PEAK_KERNEL(ATTR, NAME, VT, W)                                                                       \
	ATTR static double NAME(long steps)                                                                  \
	{                                                                                                    \
		VT x0 = {1}, x1 = {2}, x2 = {3}, x3 = {4}, x4 = {5}, x5 = {6}, x6 = {7}, x7 = {8};           \
		VT x8 = {9}, x9 = {10}, x10 = {11}, x11 = {12};                                              \
		VT m = (VT){0} + 0.999999f, a = (VT){0} + 1e-7f;                                             \
		for (long i = 0; i < steps; i++) {                                                           \
			x0 = x0 * m, x1 = x1 * m, x2 = x2 * m, x3 = x3 * m, x4 = x4 * m, x5 = x5 * m;        \
			x6 = x6 * m, x7 = x7 * m, x8 = x8 * m, x9 = x9 * m, x10 = x10 * m, x11 = x11 * m;    \
			x0 = x0 + a, x1 = x1 + a, x2 = x2 + a, x3 = x3 + a, x4 = x4 + a, x5 = x5 + a;        \
			x6 = x6 + a, x7 = x7 + a, x8 = x8 + a, x9 = x9 + a, x10 = x10 + a, x11 = x11 + a;    \
		}                                                                                            \
		VT s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7 + x8 + x9 + x10 + x11;                          \
		return s[0] * W;                                                                             \
	}
#if defined(__x86_64__)
PEAK_KERNEL(__attribute__((target("avx512f"))), peak_avx512, v16, 16)
PEAK_KERNEL(__attribute__((target("avx2"))), peak_avx2, v8, 8)
#endif
PEAK_KERNEL(, peak_base, v4, 4)

int main(int argc, char **argv)
{
	int repeat = argc > 1 ? atoi(argv[1]) : 5;
	if (repeat < 1)
		repeat = 1;
	enum { D = 128, ROWS = 8, CALLS = 20000 };
	float *wbuf = aligned_alloc(64, D * D * 4 + 64), *lhs = malloc(ROWS * D * 4), *lone = calloc(ROWS * D, 4),
	      *dst = malloc(ROWS * D * 4);
	if (!wbuf || !lhs || !lone || !dst)
		return 1;
	float *w = wbuf, *w16 = wbuf + 4; /* 64-byte aligned; 16 bytes past */
	for (int i = 0; i < ROWS * D; i++)
		lhs[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
	memcpy(lone, lhs, D * 4);
	const char *chosen = ta1_xta_impl();
	double sink = 0;
	printf("TA1 MXU matmul, %d rows x 128 x 128 (the serving loop's shape), best of %d, CPU time\n", ROWS,
	       repeat);
	for (int i = 0; ta1_xta_impl_name(i); i++) {
		const char *name = ta1_xta_impl_name(i);
		if (ta1_xta_use(name) != 0) {
			printf("%-9s not run by this CPU\n", name);
			continue;
		}
		int lanes = !strcmp(name, "baseline") ? 4 : !strcmp(name, "avx2") ? 8 : 16;
		double best = 1e30, best16 = 1e30, best1 = 1e30, pbest = 1e30;
		long steps = 20000000;
		for (int r = 0; r < repeat; r++) {
			/* each case writes its weights first: the same values at either place */
			for (int j = 0; j < D * D; j++)
				w[j] = (float)((j * 7919) % 1000) / 1000.0f - 0.5f;
			double t0 = now_s();
			for (int c = 0; c < CALLS; c++)
				ta1_mxu_matmul(dst, lhs, w, ROWS, c & 1);
			double t1 = now_s();
			for (int c = 0; c < CALLS; c++)
				ta1_mxu_matmul(dst, lone, w, ROWS, c & 1);
			double t2 = now_s();
			sink += dst[0];
			memmove(w16, w, D * D * 4);
			double t3 = now_s();
			for (int c = 0; c < CALLS; c++)
				ta1_mxu_matmul(dst, lhs, w16, ROWS, c & 1);
			double t4 = now_s();
			sink += dst[0];
			double (*peak)(long) = !strcmp(name, "baseline") ? peak_base :
#if defined(__x86_64__)
					       !strcmp(name, "avx2") ? peak_avx2
								     : peak_avx512;
#else
									 peak_base;
#endif
			sink += peak(steps);
			double t5 = now_s();
			if (t1 - t0 < best)
				best = t1 - t0;
			if (t2 - t1 < best1)
				best1 = t2 - t1;
			if (t4 - t3 < best16)
				best16 = t4 - t3;
			if (t5 - t4 < pbest)
				pbest = t5 - t4;
		}
		double flop = 2.0 * ROWS * D * D * CALLS;
		double gflops = flop / best / 1e9;
		double peak = lanes * 2.0 * NCHAIN * steps / pbest / 1e9;
		printf("%-9s matmul %6.1f GFLOP/s, peak of separate mul+add on this core %6.1f GFLOP/s: "
		       "%3.0f%%%s\n",
		       name, gflops, peak, 100 * gflops / peak, strcmp(name, chosen) ? "" : "   (chosen)");
		printf("%-9s        %6.1f GFLOP/s with the weights 16 bytes past a 64-byte boundary; one data row and "
		       "7 zero rows %.2f us per call\n",
		       "", flop / best16 / 1e9, best1 / CALLS * 1e6);
	}
	ta1_xta_use(chosen);
	fprintf(stderr, "%s", sink == 12345.678 ? " " : "");
	free(wbuf), free(lhs), free(lone), free(dst);
	return 0;
}
