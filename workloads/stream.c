/*
 * stream.c: a stream kernel as it is first written: NT input tiles of
 * 256 KiB stream from HBM through one VMEM input buffer. Each tile's DMA is
 * issued right before its WAIT; the vector unit then takes exp of the tile
 * and accumulates it, and idles while the next tile arrives.
 * -DDOUBLE: the hand-written rewrite: two input buffers and two sync flags;
 * tile t+1's DMA is issued before waiting for tile t, into the other buffer,
 * alternating by iteration parity.
 *
 * Prints the cycles of stream() (ta_cycles(): modelled cycles under
 * `snr device --timing`) and a checksum of the accumulator, which both
 * versions must agree on.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define NT 8
#define N (64 * 1024)          /* floats per tile */
#define TILE_BYTES (N * 4)     /* 256 KiB */

TA_HBM_DATA static float in[NT][N];
static float acc[N];

#define V_ACC TA_VMEM_BASE                                   /* the accumulator */
#define V_TMP (V_ACC + TILE_BYTES)                           /* exp of one tile */
#define V_IN(b) (V_TMP + TILE_BYTES + (uint64_t)(b) * TILE_BYTES) /* the input buffer (two with -DDOUBLE) */

__attribute__((noinline)) void stream(void)
{
#ifdef DOUBLE
	ta_dma(V_IN(0), ta_addr(in[0]), TILE_BYTES, 2);
	for (int t = 0; t < NT; t++) {
		int b = t & 1;
		if (t + 1 < NT)
			ta_dma(V_IN(b ^ 1), ta_addr(in[t + 1]), TILE_BYTES, 2 + (b ^ 1));
		ta_wait(2 + b, 1);
		ta_vexp(V_TMP, V_IN(b), N);
		ta_vadd(V_ACC, V_ACC, V_TMP, N);
	}
#else
	for (int t = 0; t < NT; t++) {
		ta_dma(V_IN(0), ta_addr(in[t]), TILE_BYTES, 0);
		ta_wait(0, 1);
		ta_vexp(V_TMP, V_IN(0), N);
		ta_vadd(V_ACC, V_ACC, V_TMP, N);
	}
#endif
}

int main(void)
{
	float level[64]; /* the values, computed once (TA1 has no FPU: float math is a libgcc call) */
	for (int k = 0; k < 64; k++)
		level[k] = (float)k / 4096.0f;
	float *stage = acc; /* staging in core memory for the tiles */
	for (int t = 0; t < NT; t++) {
		for (int i = 0; i < N; i++)
			stage[i] = level[(i * 7 + t * 13) % 64];
		ta_dma(ta_addr(in[t]), ta_addr(stage), TILE_BYTES, 1);
		ta_wait(1, 1);
	}
	for (int i = 0; i < N; i++)
		acc[i] = 0.0f;
	ta_dma(V_ACC, ta_addr(acc), TILE_BYTES, 1);
	ta_wait(1, 1);
	uint64_t t0 = ta_cycles();
	stream();
	uint64_t t1 = ta_cycles();
	ta_dma(ta_addr(acc), V_ACC, TILE_BYTES, 1);
	ta_wait(1, 1);
	uint32_t h = 2166136261u;
	for (int i = 0; i < N; i++) {
		union { float f; uint32_t u; } v = {acc[i]};
		h = (h ^ v.u) * 16777619u;
	}
	printf("stream%s: %d tiles, checksum %08x, %llu cycles\n",
#ifdef DOUBLE
	       " (double-buffered)",
#else
	       "",
#endif
	       NT, (unsigned)h, (unsigned long long)(t1 - t0));
	return 0;
}
