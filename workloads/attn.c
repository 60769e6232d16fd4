/*
 * attn.c: an attention-like TA1 kernel written the way a user writes one
 * (tile loop, ta1.h intrinsics, -O2), whose per-line costs are known; the
 * source-line tests (tests/an/annotate.sh) check snr annotate against them.
 * For each key tile: its 64 KiB stream in from HBM and are waited for at
 * once (the DMA stall sits at the `ta_wait` line: the WAIT issues the cycle
 * after the ISSUE, so base latency 500 cycles plus 64 KiB / 1200 B/cycle =
 * 55 cycles of transfer per tile), S = Q K on the MXU, then exp(S) on the
 * vector unit reads S while the MXU is still writing it (a VMEM hazard at
 * the `ta_vexp` line: 128 fill + 32 rows - 1 = 159 cycles per tile), and the
 * running sum adds exp(S). The figures are the default config's
 * (docs/ta1-timing.md).
 * -DDOUBLE: the hand-written rewrite: two key buffers and two sync flags,
 * alternating by iteration parity; tile t+1's DMA is issued into the other
 * buffer before tile t's WAIT and compute, and each tile's WAIT is deferred
 * to its first use (the MXU's weight load).
 * -DDOUBLE -DREFILL: the same two buffers, each refilled as soon as
 * ta_mxu_load has copied it into the MXU's weights: tiles 0 and 1 are issued
 * first, tile t+2's DMA right after tile t's ta_mxu_load, so a tile's fetch
 * overlaps two tiles' compute instead of one.
 *
 * main() fills Q and the key tiles, prints the cycles of attn() (ta_cycles():
 * modelled cycles under `snr device --timing`) and a checksum of the running
 * sum, which both versions must agree on.
 *
 * The lines the test expects carry a marker comment (KNOWN-...).
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define D TA_MXU_DIM
#ifndef ROWS
#define ROWS 32
#endif
#ifndef TILES
#define TILES 4
#endif
#define TILE_BYTES (D * D * 4)

TA_HBM_DATA static float keys[TILES][D * D];

#define V_Q (TA_VMEM_BASE)
#define V_K (TA_VMEM_BASE + 0x10000)
#define V_S (TA_VMEM_BASE + 0x20000)
#define V_ACC (TA_VMEM_BASE + 0x30000)
#define V_KB(b) ((b) ? TA_VMEM_BASE + 0x40000 : V_K) /* -DDOUBLE: key buffer 0 or 1 */

__attribute__((noinline)) void attn(int tiles)
{
#ifdef DOUBLE
	ta_dma(V_KB(0), ta_addr(keys[0]), TILE_BYTES, 1);
#ifdef REFILL
	if (tiles > 1)
		ta_dma(V_KB(1), ta_addr(keys[1]), TILE_BYTES, 2);
#endif
	for (int t = 0; t < tiles; t++) {
		int b = t & 1;
#ifndef REFILL
		if (t + 1 < tiles)
			ta_dma(V_KB(b ^ 1), ta_addr(keys[t + 1]), TILE_BYTES, 1 + (b ^ 1));
#endif
		ta_wait(1 + b, 1);
		ta_mxu_load(V_KB(b));
#ifdef REFILL
		if (t + 2 < tiles)
			ta_dma(V_KB(b), ta_addr(keys[t + 2]), TILE_BYTES, 1 + b);
#endif
		ta_mxu_matmul(V_S, V_Q, ROWS, 0);
		ta_vexp(V_S, V_S, ROWS * D);
		ta_vadd(V_ACC, V_ACC, V_S, ROWS * D);
	}
#else
	for (int t = 0; t < tiles; t++) {
		ta_dma(V_K, ta_addr(keys[t]), TILE_BYTES, 1); /* KNOWN-DMA-ISSUE */
		ta_wait(1, 1);                                 /* KNOWN-DMA-WAIT */
		ta_mxu_load(V_K);
		ta_mxu_matmul(V_S, V_Q, ROWS, 0);
		ta_vexp(V_S, V_S, ROWS * D); /* KNOWN-VMEM-HAZARD */
		ta_vadd(V_ACC, V_ACC, V_S, ROWS * D);
	}
#endif
}

static float stage[D * D]; /* staging in core memory for Q, the key tiles and the result */

int main(void)
{
	float level[64]; /* the values, computed once (TA1 has no FPU: float math is a libgcc call) */
	for (int k = 0; k < 64; k++)
		level[k] = (float)(k - 32) / 8192.0f;
	for (int t = 0; t < TILES; t++) {
		for (int i = 0; i < D * D; i++)
			stage[i] = level[(i * 5 + t * 11) % 64];
		ta_dma(ta_addr(keys[t]), ta_addr(stage), TILE_BYTES, 3);
		ta_wait(3, 1);
	}
	for (int i = 0; i < ROWS * D; i++)
		stage[i] = level[(i * 3) % 61];
	ta_dma(V_Q, ta_addr(stage), ROWS * D * 4, 3);
	ta_wait(3, 1);
	for (int i = 0; i < ROWS * D; i++)
		stage[i] = 0.0f;
	ta_dma(V_ACC, ta_addr(stage), ROWS * D * 4, 3);
	ta_wait(3, 1);
	uint64_t t0 = ta_cycles();
	attn(TILES);
	uint64_t t1 = ta_cycles();
	/* the cycles first: the windows the tests record from attn (--count 100)
	 * run on into this printf, with no DMA or WAIT of main's in them */
	printf("attn%s: %d tiles, %llu cycles\n",
#if defined(DOUBLE) && defined(REFILL)
	       " (double-buffered, refilled after mxu.load)",
#elif defined(DOUBLE)
	       " (double-buffered)",
#else
	       "",
#endif
	       TILES, (unsigned long long)(t1 - t0));
	ta_dma(ta_addr(stage), V_ACC, ROWS * D * 4, 3);
	ta_wait(3, 1);
	uint32_t h = 2166136261u;
	for (int i = 0; i < ROWS * D; i++) {
		union { float f; uint32_t u; } v = {stage[i]};
		h = (h ^ v.u) * 16777619u;
	}
	printf("attn: checksum %08x\n", (unsigned)h);
	return 0;
}
