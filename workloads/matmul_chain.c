/*
 * matmul_chain.c: a chain of matrix multiplications whose weights stream
 * from HBM (the paper's §5.3.1 case). Each layer DMAs its 128x128 f32
 * weights (64 KiB) into VMEM, loads them into the MXU and multiplies the
 * activations (ROWS x 128), ReLU on the vector unit, next layer.
 *
 * Baseline (default): each layer's weight DMA is issued right before its
 * WAIT, although nothing stops it from being issued a layer earlier: the
 * MXU idles for the DMA's base latency and transfer every layer.
 * -DPREFETCH: double-buffered: layer l+1's weights are in flight while
 * layer l computes.
 *
 * Prints the cycles of the chain (ta_cycles(): modelled cycles under
 * `snr device --timing`) and a checksum of the result, which both variants
 * must agree on.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef LAYERS
#define LAYERS 8
#endif
#define ROWS 128
#define D TA_MXU_DIM
#define WBYTES (D * D * 4)

TA_HBM_DATA static float weights[LAYERS][D * D];
static float act[ROWS * D];
static float out[ROWS * D];

#define V_W(b) (TA_VMEM_BASE + (uint64_t)(b) * WBYTES) /* two weight buffers */
#define V_A(b) (TA_VMEM_BASE + 2 * WBYTES + (uint64_t)(b) * ROWS * D * 4)
#define V_ZERO (V_A(2))

enum { F_W0 = 0, F_W1 = 1, F_IO = 2 };

static void init(void)
{
	uint32_t s = 7;
	for (int i = 0; i < ROWS * D; i++) {
		s = s * 1664525u + 1013904223u;
		act[i] = (float)((s >> 9) % 1000) / 4000.0f;
	}
	ta_dma(V_A(0), ta_addr(act), sizeof(act), F_IO);
	for (int i = 0; i < ROWS * D; i++)
		out[i] = 0.0f;
	ta_dma(V_ZERO, ta_addr(out), sizeof(out), F_IO);
	ta_wait(F_IO, 2);
}

__attribute__((noinline)) void chain(void)
{
#ifdef PREFETCH
	ta_dma(V_W(0), ta_addr(weights[0]), WBYTES, F_W0);
#endif
	for (int l = 0; l < LAYERS; l++) {
		int b = l & 1;
#ifdef PREFETCH
		if (l + 1 < LAYERS)
			ta_dma(V_W(b ^ 1), ta_addr(weights[l + 1]), WBYTES, b ^ 1 ? F_W1 : F_W0);
#else
		ta_dma(V_W(b), ta_addr(weights[l]), WBYTES, b ? F_W1 : F_W0);
#endif
		ta_wait(b ? F_W1 : F_W0, 1);
		ta_mxu_load(V_W(b));
		ta_mxu_matmul(V_A(b ^ 1), V_A(b), ROWS, 0);
		ta_vmax(V_A(b ^ 1), V_A(b ^ 1), V_ZERO, ROWS * D);
	}
}

int main(void)
{
	/* weights: a scaled identity plus a little mixing, so values stay bounded */
	float *w = (float *)out; /* staging in core memory */
	for (int l = 0; l < LAYERS; l++) {
		for (int i = 0; i < D * D; i++)
			w[i] = (i / D == i % D) ? 0.9f : ((i * 31 + l) % 97 == 0 ? 0.01f : 0.0f);
		ta_dma(ta_addr(weights[l]), ta_addr(w), WBYTES, F_IO);
		ta_wait(F_IO, 1);
	}
	init();
	uint64_t t0 = ta_cycles();
	chain();
	uint64_t t1 = ta_cycles();
	ta_dma(ta_addr(out), V_A(LAYERS & 1), sizeof(out), F_IO);
	ta_wait(F_IO, 1);
	uint32_t h = 2166136261u;
	for (int i = 0; i < ROWS * D; i++) {
		union { float f; uint32_t u; } v = {out[i]};
		h = (h ^ v.u) * 16777619u;
	}
	printf("matmul_chain%s: %d layers, checksum %08x, %llu cycles\n",
#ifdef PREFETCH
	       " (prefetch)",
#else
	       "",
#endif
	       LAYERS, (unsigned)h, (unsigned long long)(t1 - t0));
	return 0;
}
