/*
 * bench_xta.c: GFLOP/s of the TA1 MXU matmul (isa/ta1/ta1_xta.c) in each
 * build the host's CPU runs (AVX-512F, AVX2, baseline), against the host's
 * peak for the same instruction mix: separate f32 multiplies and adds (the
 * matmul may not fuse them), measured by a kernel of independent vector
 * multiplies and adds on registers only, in the widest vectors the matmul
 * uses. One matmul of R rows is R * 128 * 128 multiply-adds: 2 * R * 16384
 * flops. CPU time, best of REPEAT: the figures hold on a loaded machine as
 * far as a shared core allows.
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

/* 8 independent chains of x = x * m + a over vectors of W lanes, kept apart
 * (no fusion: the project builds with -ffp-contract=off): W lanes * 2 flops
 * * 8 chains per step */
#define PEAK_KERNEL(ATTR, NAME, VT, W)                                                                       \
	ATTR static double NAME(long steps)                                                                  \
	{                                                                                                    \
		VT x0 = {1}, x1 = {2}, x2 = {3}, x3 = {4}, x4 = {5}, x5 = {6}, x6 = {7}, x7 = {8};           \
		VT m = (VT){0} + 0.999999f, a = (VT){0} + 1e-7f;                                             \
		for (long i = 0; i < steps; i++) {                                                           \
			x0 = x0 * m, x1 = x1 * m, x2 = x2 * m, x3 = x3 * m;                                  \
			x4 = x4 * m, x5 = x5 * m, x6 = x6 * m, x7 = x7 * m;                                  \
			x0 = x0 + a, x1 = x1 + a, x2 = x2 + a, x3 = x3 + a;                                  \
			x4 = x4 + a, x5 = x5 + a, x6 = x6 + a, x7 = x7 + a;                                  \
		}                                                                                            \
		VT s = x0 + x1 + x2 + x3 + x4 + x5 + x6 + x7;                                                \
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
	float *w = malloc(D * D * 4), *lhs = malloc(ROWS * D * 4), *dst = malloc(ROWS * D * 4);
	if (!w || !lhs || !dst)
		return 1;
	for (int i = 0; i < D * D; i++)
		w[i] = (float)((i * 7919) % 1000) / 1000.0f - 0.5f;
	for (int i = 0; i < ROWS * D; i++)
		lhs[i] = (float)((i * 104729) % 1000) / 1000.0f - 0.5f;
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
		double best = 1e30, pbest = 1e30;
		long steps = 20000000;
		for (int r = 0; r < repeat; r++) {
			double t0 = now_s();
			for (int c = 0; c < CALLS; c++)
				ta1_mxu_matmul(dst, lhs, w, ROWS, c & 1);
			double t1 = now_s();
			sink += dst[0];
				double (*peak)(long) = !strcmp(name, "baseline") ? peak_base :
#if defined(__x86_64__)
					       !strcmp(name, "avx2") ? peak_avx2
								     : peak_avx512;
#else
									 peak_base;
#endif
			sink += peak(steps);
			double t2 = now_s();
			if (t1 - t0 < best)
				best = t1 - t0;
			if (t2 - t1 < pbest)
				pbest = t2 - t1;
		}
		double gflops = 2.0 * ROWS * D * D * CALLS / best / 1e9;
		double peak = lanes * 2.0 * 8 * steps / pbest / 1e9;
		printf("%-9s matmul %6.1f GFLOP/s, peak of separate mul+add on this core %6.1f GFLOP/s: "
		       "%3.0f%%%s\n",
		       name, gflops, peak, 100 * gflops / peak, strcmp(name, chosen) ? "" : "   (chosen)");
	}
	ta1_xta_use(chosen);
	fprintf(stderr, "%s", sink == 12345.678 ? " " : "");
	free(w), free(lhs), free(dst);
	return 0;
}
