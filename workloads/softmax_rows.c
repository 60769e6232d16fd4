/*
 * softmax_rows.c: a row softmax as it is first written. The scores (R rows
 * of N floats) are in VMEM. Per row the vector unit takes exp of the row
 * and sums it; the sum goes to core memory by DMA (a 4-byte transfer that
 * still pays the DMA's base latency), the core WAITs for it, computes the
 * reciprocal (TA1 has no FPU: a libgcc call), the vector unit scales the
 * row and a DMA writes it out to HBM, and the core WAITs for that before
 * the next row. The vector unit is idle through both WAITs.
 * -DBATCHED: the hand-written rewrite of the scalar round trip: the next
 * row's exp, sum and sum DMA are issued right after this row's sum has
 * arrived, before the scalar work on it, into a second core-memory slot
 * (alternating by row parity), so the next row's round trip is in flight
 * while the core computes. The output WAIT stays where it is in both.
 *
 * Prints the cycles of softmax() (ta_cycles(): modelled cycles under
 * `snr device --timing`) and a checksum of the output, which both versions
 * must agree on.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define R 16
#define N 1024                 /* floats per row */
#define ROW_BYTES (N * 4)

TA_HBM_DATA static float out[R][N];
static float stage[N];
static volatile float sum[2]; /* the row sums, in core memory (two slots with -DBATCHED) */

#define V_X(r) (TA_VMEM_BASE + (uint64_t)(r) * ROW_BYTES)          /* the scores */
#define V_E(r) (V_X(R) + (uint64_t)(r) * ROW_BYTES)                /* exp of each row */
#define V_Y(r) (V_E(R) + (uint64_t)(r) * ROW_BYTES)                /* the output rows */
#define V_S(r) (V_Y(R) + (uint64_t)(r) * 64)                       /* each row's sum */

#ifdef BATCHED
/* row r's exp and sum, and its sum's DMA to core memory (flag 1) */
static inline void row_sum(int r)
{
	ta_vexp(V_E(r), V_X(r), N);
	ta_vsum_rows(V_S(r), V_E(r), 1, N);
	ta_dma(ta_addr((const void *)&sum[r & 1]), V_S(r), 4, 1);
}
#endif

__attribute__((noinline)) void softmax(void)
{
#ifdef BATCHED
	row_sum(0);
	for (int r = 0; r < R; r++) {
		ta_wait(1, 1);
		if (r + 1 < R)
			row_sum(r + 1);
		float inv = 1.0f / sum[r & 1];
		ta_vscale(V_Y(r), V_E(r), inv, N);
		ta_dma(ta_addr(out[r]), V_Y(r), ROW_BYTES, 2);
		ta_wait(2, 1);
	}
#else
	for (int r = 0; r < R; r++) {
		ta_vexp(V_E(r), V_X(r), N);
		ta_vsum_rows(V_S(r), V_E(r), 1, N);
		ta_dma(ta_addr((const void *)&sum[0]), V_S(r), 4, 1);
		ta_wait(1, 1);
		float inv = 1.0f / sum[0];
		ta_vscale(V_Y(r), V_E(r), inv, N);
		ta_dma(ta_addr(out[r]), V_Y(r), ROW_BYTES, 2);
		ta_wait(2, 1);
	}
#endif
}

int main(void)
{
	for (int r = 0; r < R; r++) {
		for (int i = 0; i < N; i++)
			stage[i] = (float)((i * 7 + r * 13) % 64) / 64.0f;
		ta_dma(V_X(r), ta_addr(stage), ROW_BYTES, 3);
		ta_wait(3, 1);
	}
	uint64_t t0 = ta_cycles();
	softmax();
	uint64_t t1 = ta_cycles();
	uint32_t h = 2166136261u;
	for (int r = 0; r < R; r++) {
		ta_dma(ta_addr(stage), ta_addr(out[r]), ROW_BYTES, 3);
		ta_wait(3, 1);
		for (int i = 0; i < N; i++) {
			union { float f; uint32_t u; } v = {stage[i]};
			h = (h ^ v.u) * 16777619u;
		}
	}
	printf("softmax%s: %d rows, checksum %08x, %llu cycles\n",
#ifdef BATCHED
	       " (round trips prefetched)",
#else
	       "",
#endif
	       R, (unsigned)h, (unsigned long long)(t1 - t0));
	return 0;
}
