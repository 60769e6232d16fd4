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

__attribute__((noinline)) void attn(int tiles)
{
	for (int t = 0; t < tiles; t++) {
		ta_dma(V_K, ta_addr(keys[t]), TILE_BYTES, 1); /* KNOWN-DMA-ISSUE */
		ta_wait(1, 1);                                 /* KNOWN-DMA-WAIT */
		ta_mxu_load(V_K);
		ta_mxu_matmul(V_S, V_Q, ROWS, 0);
		ta_vexp(V_S, V_S, ROWS * D); /* KNOWN-VMEM-HAZARD */
		ta_vadd(V_ACC, V_ACC, V_S, ROWS * D);
	}
}

int main(void)
{
	attn(TILES);
	printf("attn done\n");
	return 0;
}
