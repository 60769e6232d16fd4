/*
 * mlp.c: a two-layer perceptron on TA1, the demo's workload.
 *
 * Setup: scalar code generates inputs and weights in core memory and DMAs
 * them to HBM (as a host would load them). Compute, per layer: DMA the
 * weights HBM -> VMEM, load them into the MXU, stream the activations
 * through it, ReLU on the vector unit (vmax with zeros); then a softmax's
 * numerator and denominators (vexp, vsum_rows). The result goes back to core
 * memory by DMA and its checksum is printed, so any change in what the device
 * computes changes the output. With several chips each chip runs its own
 * batch; chip 0 prints.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define D TA_MXU_DIM
#define ROWS 64

enum { F_SETUP = 0, F_W = 1, F_X = 2, F_OUT = 3 };

static float scratch[D * D]; /* core memory staging for setup */
static float out[ROWS * D], sums[ROWS];

/* VMEM layout */
#define V_W1 (TA_VMEM_BASE)
#define V_W2 (V_W1 + D * D * 4)
#define V_X (V_W2 + D * D * 4)
#define V_H (V_X + ROWS * D * 4)
#define V_Y (V_H + ROWS * D * 4)
#define V_ZERO (V_Y + ROWS * D * 4)
#define V_SUM (V_ZERO + ROWS * D * 4)

/* HBM layout (this chip) */
#define H_W1 (TA_HBM_BASE + 0x100000)
#define H_W2 (H_W1 + D * D * 4)
#define H_X (H_W2 + D * D * 4)

static uint32_t lcg = 12345;
static float rnd(void)
{
	lcg = lcg * 1664525u + 1013904223u;
	return (float)((int32_t)(lcg >> 8) % 1000) / 8000.0f; /* [-0.125, 0.125) */
}

static void stage(uint64_t hbm, uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		scratch[i] = rnd();
	ta_dma(hbm, ta_addr(scratch), n * 4, F_SETUP);
	ta_wait(F_SETUP, 1);
}

__attribute__((noinline)) void setup(uint64_t chip)
{
	lcg = 12345 + (uint32_t)chip * 7919u;
	stage(H_W1, D * D);
	stage(H_W2, D * D);
	stage(H_X, ROWS * D);
	for (uint64_t i = 0; i < ROWS * D; i++)
		scratch[i] = 0.0f;
	ta_dma(V_ZERO, ta_addr(scratch), ROWS * D * 4, F_SETUP);
	ta_wait(F_SETUP, 1);
}

__attribute__((noinline)) void layer(uint64_t dst, uint64_t src, uint64_t v_w, uint64_t h_w)
{
	ta_dma(v_w, h_w, D * D * 4, F_W);
	ta_wait(F_W, 1);
	ta_mxu_load(v_w);
	ta_mxu_matmul(dst, src, ROWS, 0);
	ta_vmax(dst, dst, V_ZERO, ROWS * D);
}

__attribute__((noinline)) void forward(void)
{
	ta_dma(V_X, H_X, ROWS * D * 4, F_X);
	ta_wait(F_X, 1);
	layer(V_H, V_X, V_W1, H_W1);
	layer(V_Y, V_H, V_W2, H_W2);
	ta_vexp(V_Y, V_Y, ROWS * D);
	ta_vsum_rows(V_SUM, V_Y, ROWS, D);
	ta_dma(ta_addr(out), V_Y, sizeof(out), F_OUT);
	ta_dma(ta_addr(sums), V_SUM, sizeof(sums), F_OUT);
	ta_wait(F_OUT, 2);
}

int main(void)
{
	uint64_t chip = ta_chip_id();
	setup(chip);
	uint64_t t0 = ta_cycles();
	forward();
	uint64_t t1 = ta_cycles();
	uint32_t h = 2166136261u;
	for (unsigned i = 0; i < ROWS * D; i++) {
		union { float f; uint32_t u; } v = {out[i]};
		h = (h ^ v.u) * 16777619u;
	}
	float total = 0.0f;
	for (unsigned r = 0; r < ROWS; r++)
		total += sums[r];
	if (chip == 0)
		printf("mlp: %u chips, %d rows, checksum %08x, sum of softmax denominators %d.%03d, "
		       "%llu cycles\n",
		       (unsigned)ta_num_chips(), ROWS, (unsigned)h, (int)total,
		       (int)((total - (float)(int)total) * 1000.0f), (unsigned long long)(t1 - t0));
	return 0;
}
