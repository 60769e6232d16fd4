/*
 * rowsum_reuse.c: a planted unsafe move for `snr analyze suggest` (the
 * row-sum buffer case of docs/analyses.md, "suggest"). With VMEM at 512 KiB
 * (workloads/vmem-512k.json): tile() DMAs the next tile into V_A right
 * before its WAIT; the previous tile is still read from V_A before that
 * (the DMA cannot move onto its own buffer), and the only other region not
 * in use while the DMA would be in flight is V_F, where the row sums are
 * initialised and accumulated once the tile has arrived, before its last read.
 * V_F is free until the DMA completes, not for the tile's whole lifetime:
 * no region is, and the move must be refused.
 */
#include <stdint.h>

#include "ta1.h"

#define TILE (64 * 1024)
#define V_A TA_VMEM_BASE                 /* the tile buffer, 64 KiB */
#define V_F (V_A + TILE)                 /* the row sums once the tile is in, 64 KiB */
#define V_REST (V_F + TILE)              /* the rest of VMEM: in use throughout */
#define REST_BYTES (512 * 1024 - 2 * TILE)

TA_HBM_DATA static float tiles[2][TILE / 4];
volatile unsigned spin;

__attribute__((noinline)) void tile(void)
{
	ta_vexp(V_REST, V_REST, REST_BYTES / 4);         /* the rest of VMEM: written, held to the end */
	ta_dma(V_A, ta_addr(tiles[0]), TILE, 1);
	ta_wait(1, 1);
	for (int i = 0; i < 400; i++)                    /* scalar work the next DMA could hide behind */
		spin += (unsigned)i * 3u;
	ta_vexp(V_REST, V_A, TILE / 4);                  /* the previous tile's last read */
	ta_dma(V_A, ta_addr(tiles[1]), TILE, 2);         /* the next tile, right before its WAIT */
	ta_wait(2, 1);
	ta_vexp(V_F, V_REST, TILE / 4);                  /* the row sums initialised: V_F taken */
	ta_vsum_rows(V_F, V_A, 128, 128);                /* the tile's last read */
	ta_vadd(V_REST + 2 * TILE, V_F, V_F, 128);
}

int main(void)
{
	tile();
	return 0;
}
