/*
 * tiles.c: a tile loop as it is first written: an attention-like kernel
 * that streams key tiles from HBM. For each of NT tiles it DMAs the tile
 * (128x128 f32, 64 KiB) into VMEM, waits for it, and scores it against the
 * queries resident in VMEM (score_tile(): MXU matmul, exp on the vector unit
 * in column blocks, row sums accumulated). Each DMA is issued right before
 * its WAIT, so the MXU idles for the DMA's base latency and transfer every
 * tile.
 * -DDOUBLE_BUFFER: the rewrite a user makes after `snr analyze suggest` on
 * the naive loop: two key buffers and two sync flags; tile t+1's DMA is
 * issued before waiting for tile t, so it is in flight while tile t is
 * scored.
 *
 * Prints the cycles of attend() (ta_cycles(): modelled cycles under
 * `snr device --timing`) and a checksum of the row sums, which both versions
 * must agree on.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define NT 12
#define ROWS 256
#define D TA_MXU_DIM
#define TILE_BYTES (D * D * 4)

TA_HBM_DATA static float keys[NT][D * D];
static float queries[ROWS * D];
static float row_sums[ROWS];

#define V_Q TA_VMEM_BASE                       /* queries, ROWS x D */
#define V_S (V_Q + ROWS * D * 4)                /* scores of one tile, ROWS x D */
#define V_L (V_S + ROWS * D * 4)                /* running row sums */
#define V_T (V_L + ROWS * 4)                    /* one tile's row sums */
#define V_K(b) (V_T + ROWS * 4 + (uint64_t)(b) * TILE_BYTES) /* the key tile (double-buffered: two) */

__attribute__((noinline)) static void score_tile(uint64_t k)
{
	ta_mxu_load(k);
	ta_mxu_matmul(V_S, V_Q, ROWS, 0);
	for (int c = 0; c < 4; c++) /* exp in four row blocks, as the vector registers would */
		ta_vexp(V_S + (uint64_t)c * ROWS / 4 * D * 4, V_S + (uint64_t)c * ROWS / 4 * D * 4, ROWS / 4 * D);
	ta_vsum_rows(V_T, V_S, ROWS, D);
	ta_vadd(V_L, V_L, V_T, ROWS);
}

__attribute__((noinline)) void attend(void)
{
#ifdef DOUBLE_BUFFER
	ta_dma(V_K(0), ta_addr(keys[0]), TILE_BYTES, 2);
	for (int t = 0; t < NT; t++) {
		int b = t & 1;
		if (t + 1 < NT)
			ta_dma(V_K(b ^ 1), ta_addr(keys[t + 1]), TILE_BYTES, 2 + (b ^ 1));
		ta_wait(2 + b, 1);
		score_tile(V_K(b));
	}
#else
	for (int t = 0; t < NT; t++) {
		ta_dma(V_K(0), ta_addr(keys[t]), TILE_BYTES, 0);
		ta_wait(0, 1);
		score_tile(V_K(0));
	}
#endif
}

int main(void)
{
	float level[64]; /* the values, computed once (TA1 has no FPU: float math is a libgcc call) */
	for (int k = 0; k < 64; k++)
		level[k] = (float)k / 4096.0f;
	float *stage = queries; /* staging in core memory for the keys */
	for (int t = 0; t < NT; t++) {
		for (int i = 0; i < D * D; i++)
			stage[i] = level[(i * 7 + t * 13) % 64];
		ta_dma(ta_addr(keys[t]), ta_addr(stage), TILE_BYTES, 1);
		ta_wait(1, 1);
	}
	for (int i = 0; i < ROWS * D; i++)
		queries[i] = level[(i * 5) % 32 * 4];
	for (int i = 0; i < ROWS; i++)
		row_sums[i] = 0.0f;
	ta_dma(V_Q, ta_addr(queries), sizeof(queries), 1);
	ta_dma(V_L, ta_addr(row_sums), sizeof(row_sums), 1);
	ta_wait(1, 2);
	uint64_t t0 = ta_cycles();
	attend();
	uint64_t t1 = ta_cycles();
	ta_dma(ta_addr(row_sums), V_L, sizeof(row_sums), 1);
	ta_wait(1, 1);
	uint32_t h = 2166136261u;
	for (int i = 0; i < ROWS; i++) {
		union { float f; uint32_t u; } v = {row_sums[i]};
		h = (h ^ v.u) * 16777619u;
	}
	printf("tiles%s: %d tiles, checksum %08x, %llu cycles\n",
#ifdef DOUBLE_BUFFER
	       " (double-buffered)",
#else
	       "",
#endif
	       NT, (unsigned)h, (unsigned long long)(t1 - t0));
	return 0;
}
