/*
 * decode.c: one decode step of a small transformer layer on TA1, with a
 * first-fit VMEM allocator whose frees leave holes (the paper's VMEM
 * fragmentation study, Figure 8).
 *
 * Per step: the new token's hidden state (1 x 128, padded to 8 rows for the
 * MXU) is projected to q, k, v (three 128x128 weight DMAs from HBM, MXU);
 * attention runs over a KV cache of CTX positions in HBM, streamed into VMEM
 * in blocks of 128 positions (scores by the MXU against K^T blocks, softmax
 * with vexp, vsum_rows and vscale, weighted sum of V by the MXU); then the
 * MLP (128 -> 512 -> 128, four 128x128 weight tiles each way). Buffers are
 * allocated as they are needed and freed when dead, in program order, by a
 * first-fit allocator over VMEM: big short-lived blocks (KV blocks, MLP
 * weights) interleave with small long-lived ones (activations), so free
 * space splits into holes.
 *
 * Prints a checksum of the layer's output and the allocator's high-water
 * mark; `snr analyze vmem` on a recorded window shows used, unused and the
 * largest contiguous free region over time.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define D TA_MXU_DIM
#define ROWS 8 /* the token, padded for the MXU */
#ifndef CTX
#define CTX 1024
#endif
#define BLK 128
#define HID 512
#define TILE (D * D * 4)

TA_HBM_DATA static float w_qkv[3][D * D];
TA_HBM_DATA static float w_up[HID / D][D * D];
TA_HBM_DATA static float w_down[HID / D][D * D];
TA_HBM_DATA static float k_cache[CTX / BLK][D * BLK]; /* per block: K^T, 128 x 128 */
TA_HBM_DATA static float v_cache[CTX / BLK][BLK * D]; /* per block: V, 128 x 128 */

/* ---- a first-fit allocator over VMEM, 1 KiB granules ---- */
#define GRAN 1024
#define NGRAN (TA_VMEM_SIZE / GRAN)
static uint8_t used[NGRAN];
static uint64_t high_water;

static uint64_t vmalloc(uint64_t bytes)
{
	uint64_t n = (bytes + GRAN - 1) / GRAN, run = 0;
	for (uint64_t i = 0; i < NGRAN; i++) {
		run = used[i] ? 0 : run + 1;
		if (run == n) {
			uint64_t first = i + 1 - n;
			for (uint64_t k = first; k <= i; k++)
				used[k] = 1;
			if ((i + 1) * GRAN > high_water)
				high_water = (i + 1) * GRAN;
			return TA_VMEM_BASE + first * GRAN;
		}
	}
	printf("decode: VMEM exhausted allocating %llu bytes\n", (unsigned long long)bytes);
	ta_wait(15, 1); /* stops the program with a clear fault */
	return 0;
}

static void vfree(uint64_t addr, uint64_t bytes)
{
	uint64_t first = (addr - TA_VMEM_BASE) / GRAN, n = (bytes + GRAN - 1) / GRAN;
	for (uint64_t k = first; k < first + n; k++)
		used[k] = 0;
}

enum { F_W = 0, F_KV = 1, F_IO = 2 };

static float staging[D * D];
static float result[ROWS * D];

static void fill(void *hbm, uint64_t n, uint32_t seed, float scale)
{
	uint32_t s = seed;
	for (uint64_t i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		staging[i] = ((float)((s >> 9) % 2001) - 1000.0f) * scale;
	}
	ta_dma(ta_addr(hbm), ta_addr(staging), n * 4, F_IO);
	ta_wait(F_IO, 1);
}

static void init(void)
{
	for (int i = 0; i < 3; i++)
		fill(w_qkv[i], D * D, 11u + (uint32_t)i, 1e-4f);
	for (int i = 0; i < HID / D; i++) {
		fill(w_up[i], D * D, 101u + (uint32_t)i, 1e-4f);
		fill(w_down[i], D * D, 201u + (uint32_t)i, 1e-4f);
	}
	for (int b = 0; b < CTX / BLK; b++) {
		fill(k_cache[b], D * BLK, 301u + (uint32_t)b, 1e-3f);
		fill(v_cache[b], BLK * D, 401u + (uint32_t)b, 1e-3f);
	}
}

/* out (ROWS x 128) = in (ROWS x 128) x W, W DMAed from HBM into a fresh buffer */
static void project(uint64_t out, uint64_t in, const float *w_hbm, int accumulate)
{
	uint64_t w = vmalloc(TILE);
	ta_dma(w, ta_addr(w_hbm), TILE, F_W);
	ta_wait(F_W, 1);
	ta_mxu_load(w);
	ta_mxu_matmul(out, in, ROWS, accumulate);
	vfree(w, TILE);
}

__attribute__((noinline)) void decode_step(uint64_t x)
{
	uint64_t act = ROWS * D * 4;
	uint64_t q = vmalloc(act), k = vmalloc(act), v = vmalloc(act);
	project(q, x, w_qkv[0], 0);
	project(k, x, w_qkv[1], 0);
	project(v, x, w_qkv[2], 0);
	vfree(k, act); /* this step's k and v would be appended to the cache */
	uint64_t ctxv = vmalloc(act), scores = vmalloc(ROWS * BLK * 4), sums = vmalloc(ROWS * 4);
	for (int b = 0; b < CTX / BLK; b++) {
		uint64_t kb = vmalloc(TILE);
		ta_dma(kb, ta_addr(k_cache[b]), TILE, F_KV);
		uint64_t vb = vmalloc(TILE);
		ta_dma(vb, ta_addr(v_cache[b]), TILE, F_KV);
		ta_wait(F_KV, 1);
		ta_mxu_load(kb);
		ta_mxu_matmul(scores, q, ROWS, 0);
		vfree(kb, TILE);
		ta_vscale(scores, scores, 0.088f, ROWS * BLK); /* 1/sqrt(128) */
		ta_vexp(scores, scores, ROWS * BLK);
		ta_vsum_rows(sums, scores, ROWS, BLK);
		ta_wait(F_KV, 1);
		ta_mxu_load(vb);
		ta_mxu_matmul(ctxv, scores, ROWS, b > 0);
		vfree(vb, TILE);
	}
	vfree(scores, ROWS * BLK * 4);
	vfree(sums, ROWS * 4);
	vfree(v, act);
	/* MLP: 128 -> 512 (four tiles) -> 128 */
	uint64_t hidden[HID / D];
	for (int t = 0; t < HID / D; t++) {
		hidden[t] = vmalloc(act);
		project(hidden[t], ctxv, w_up[t], 0);
	}
	vfree(ctxv, act);
	uint64_t y = vmalloc(act);
	for (int t = 0; t < HID / D; t++) {
		project(y, hidden[t], w_down[t], t > 0);
		vfree(hidden[t], act);
	}
	ta_dma(ta_addr(result), y, sizeof(result), F_IO);
	ta_wait(F_IO, 1);
	vfree(y, act);
	vfree(q, act);
}

int main(void)
{
	init();
	for (int i = 0; i < ROWS * D; i++)
		staging[i] = i < D ? (float)(i % 7) * 0.1f : 0.0f;
	uint64_t x = vmalloc(ROWS * D * 4);
	ta_dma(x, ta_addr(staging), ROWS * D * 4, F_IO);
	ta_wait(F_IO, 1);
	uint64_t t0 = ta_cycles();
	decode_step(x);
	uint64_t t1 = ta_cycles();
	uint32_t h = 2166136261u;
	for (int i = 0; i < ROWS * D; i++) {
		union { float f; uint32_t u; } u = {result[i]};
		h = (h ^ u.u) * 16777619u;
	}
	printf("decode: context %d, checksum %08x, VMEM high water %llu KiB, %llu cycles\n", CTX, (unsigned)h,
	       (unsigned long long)(high_water / 1024), (unsigned long long)(t1 - t0));
	return 0;
}
