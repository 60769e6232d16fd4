/*
 * allreduce.c: a ring all-reduce across the chips of a pod (reduce-scatter,
 * then all-gather), the collective whose time is spent between chips.
 *
 * Every chip holds N f32 (a pattern scaled by chip id + 1) split into
 * one chunk per chip. In each of the n - 1 reduce-scatter steps a chip
 * pushes one chunk into its successor's HBM with ta_dma_notify, waits for
 * its predecessor's chunk to land in its own HBM (ta_wait on the peer flag,
 * which blocks until that chip's DMA completes), brings it into VMEM and adds
 * it to its own; after them each chip owns one fully reduced chunk. The n - 1
 * all-gather steps pass the reduced chunks round the ring the same way.
 *
 *   -DLATE=K   chip 1 first spins K iterations: every other chip waits for
 *              it, one hop of the ring after another
 *   -DELEMS=N  elements per chip (default 16384: 64 KiB)
 *
 * Each chip prints its cycles for the collective (ta_cycles(), modelled
 * under `snr device --timing`) and whether its result is the sum of every
 * chip's data, element for element.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef ELEMS
#define ELEMS 16384
#endif
#define MAX_CHIPS 16
#define V_ACC TA_VMEM_BASE                        /* this chip's vector */
#define V_TMP (TA_VMEM_BASE + ELEMS * 4)          /* a received chunk */
#define V_BASE (TA_VMEM_BASE + 2 * ELEMS * 4)     /* the shared pattern */

enum { F_LOCAL = 1, F_SENT = 2, F_ARRIVED = 3 };

/* Where the predecessor's chunk of each step lands, in this chip's HBM. */
TA_HBM_DATA static float inbox[2 * (MAX_CHIPS - 1)][ELEMS / 2];
static float check[ELEMS];
static float pattern[13], expect[13];

static uint64_t off(const void *p) { return ta_addr(p) - TA_HBM_BASE; }

/* One ring step: push chunk `send` to the successor's inbox `slot`, wait for
 * the predecessor's chunk in this chip's inbox `slot` and bring it into
 * V_TMP (reduce: then add it to chunk `recv`) or straight into chunk `recv`. */
static void ring_step(uint64_t me, uint64_t n, uint64_t slot, uint64_t send, uint64_t recv, int reduce)
{
	uint64_t chunk = ELEMS / n, bytes = chunk * 4, next = (me + 1) % n;
	ta_dma_notify(ta_hbm_of(next, off(inbox[slot])), V_ACC + send * bytes, bytes, F_SENT, F_ARRIVED);
	ta_wait(F_ARRIVED, 1);
	ta_dma(reduce ? V_TMP : V_ACC + recv * bytes, ta_addr(inbox[slot]), bytes, F_LOCAL);
	ta_wait(F_LOCAL, 1);
	if (reduce)
		ta_vadd(V_ACC + recv * bytes, V_ACC + recv * bytes, V_TMP, chunk);
}

__attribute__((noinline)) void allreduce(uint64_t me, uint64_t n)
{
	for (uint64_t s = 0; s + 1 < n; s++)
		ring_step(me, n, s, (me + n - s) % n, (me + n - s - 1) % n, 1);
	ta_wait(F_SENT, n - 1); /* the chunks sent are overwritten next */
	for (uint64_t s = 0; s + 1 < n; s++)
		ring_step(me, n, n - 1 + s, (me + 1 + n - s) % n, (me + n - s) % n, 0);
	ta_wait(F_SENT, n - 1);
}

int main(void)
{
	uint64_t me = ta_chip_id(), n = ta_num_chips();
	if (n > MAX_CHIPS || ELEMS % n) {
		if (me == 0)
			printf("allreduce: %llu chips do not fit\n", (unsigned long long)n);
		return 1;
	}
	float sum = (float)(n * (n + 1) / 2);
	for (unsigned j = 0; j < 13; j++) { /* the same on every chip: small whole numbers */
		pattern[j] = (float)j;
		expect[j] = pattern[j] * sum; /* every element is pattern * (1 + 2 + ... + n) */
	}
	for (uint64_t k = 0, j = 0; k < ELEMS; k++, j = j == 12 ? 0 : j + 1)
		check[k] = pattern[j];
	ta_dma(V_BASE, ta_addr(check), sizeof(check), F_LOCAL);
	ta_wait(F_LOCAL, 1);
	ta_vscale(V_ACC, V_BASE, (float)(me + 1), ELEMS);
#ifdef LATE
	if (me == 1)
		for (volatile uint64_t i = 0; i < LATE; i++)
			;
#endif
	uint64_t t0 = ta_cycles();
	allreduce(me, n);
	uint64_t t1 = ta_cycles();
	ta_dma(ta_addr(check), V_ACC, sizeof(check), F_LOCAL);
	ta_wait(F_LOCAL, 1);
	uint64_t wrong = 0;
	const uint32_t *got = (const uint32_t *)check, *want = (const uint32_t *)expect;
	for (uint64_t k = 0, j = 0; k < ELEMS; k++, j = j == 12 ? 0 : j + 1)
		wrong += got[k] != want[j];
	printf("allreduce: chip %llu of %llu, %u floats, %llu cycles, %llu wrong\n", (unsigned long long)me,
	       (unsigned long long)n, (unsigned)ELEMS, (unsigned long long)(t1 - t0), (unsigned long long)wrong);
	return wrong != 0;
}
