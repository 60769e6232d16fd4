/*
 * handoff.c: two chips, one hand-off, and the chip that stalls is not the
 * one to fix (docs/cases.md, "A hand-off between chips").
 *
 * Chip 1 holds a block chip 0 needs (it is in chip 1's VMEM before the
 * exchange starts). In exchange() chip 0 runs its own work, then waits for
 * the block (ta_wait on the peer flag blocks until it lands in chip 0's HBM),
 * brings it into VMEM and scales it. Chip 1 runs a longer stretch of work of
 * its own and only then sends the block with ta_dma_notify, although the
 * block was ready before the work: chip 0's wait stalls for chip 1's work.
 * `snr analyze suggest POD --verify` names chip 1's ta_dma_notify, not chip
 * 0's wait.
 *
 *   -DEARLY      chip 1 sends the block first, then works (the rewrite)
 *   -DELEMS=N    f32 elements in the block (default 16384: 64 KiB)
 *   -DWORK1=K    chip 1's vector steps (default 96), -DWORK0=K chip 0's (32)
 *
 * Each chip prints the cycles of its exchange() (ta_cycles(), modelled under
 * `snr device --timing`) and a checksum of its VMEM block after it.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef ELEMS
#define ELEMS 16384
#endif
#ifndef WORK1
#define WORK1 96
#endif
#ifndef WORK0
#define WORK0 32
#endif
#define BYTES (ELEMS * 4)
#define V_BLOCK TA_VMEM_BASE                  /* chip 1: the block to send; chip 0: where it arrives */
#define V_WORK (TA_VMEM_BASE + BYTES)         /* each chip's own work */
#define V_TMP (TA_VMEM_BASE + 2 * BYTES)

enum { F_LOCAL = 1, F_SENT = 2, F_ARRIVED = 3 };

TA_HBM_DATA static float inbox[ELEMS]; /* chip 0's: where chip 1's block lands */
static float data[ELEMS];

static uint64_t off(const void *p) { return ta_addr(p) - TA_HBM_BASE; }

static void work(uint64_t steps)
{
	for (uint64_t s = 0; s < steps; s++) {
		ta_vscale(V_TMP, V_WORK, 0.5f, ELEMS);
		ta_vadd(V_WORK, V_WORK, V_TMP, ELEMS);
	}
}

static void send_block(void)
{
	ta_dma_notify(ta_hbm_of(0, off(inbox)), V_BLOCK, BYTES, F_SENT, F_ARRIVED);
}

__attribute__((noinline)) void exchange(uint64_t me)
{
	if (me == 1) {
#ifdef EARLY
		send_block();
		work(WORK1);
#else
		work(WORK1);
		send_block();
#endif
		ta_wait(F_SENT, 1); /* the block may be overwritten after this */
	} else if (me == 0) {
		work(WORK0);
		ta_wait(F_ARRIVED, 1);
		ta_dma(V_BLOCK, ta_addr(inbox), BYTES, F_LOCAL);
		ta_wait(F_LOCAL, 1);
		ta_vscale(V_BLOCK, V_BLOCK, 2.0f, ELEMS);
	}
}

int main(void)
{
	uint64_t me = ta_chip_id();
	for (uint64_t k = 0; k < ELEMS; k++)
		data[k] = (float)(k % 251);
	/* every chip the same before the exchange: both reach it at the same cycle */
	ta_dma(V_BLOCK, ta_addr(data), BYTES, F_LOCAL);
	ta_dma(V_WORK, ta_addr(data), BYTES, F_LOCAL);
	ta_wait(F_LOCAL, 2);
	uint64_t t0 = ta_cycles();
	exchange(me);
	uint64_t t1 = ta_cycles();
	ta_dma(ta_addr(data), V_BLOCK, BYTES, F_LOCAL);
	ta_wait(F_LOCAL, 1);
	uint32_t h = 2166136261u;
	const uint32_t *w = (const uint32_t *)data;
	for (uint64_t k = 0; k < ELEMS; k++)
		h = (h ^ w[k]) * 16777619u;
	printf("handoff%s: chip %llu, exchange %llu cycles, checksum %08x\n",
#ifdef EARLY
	       " (early send)",
#else
	       "",
#endif
	       (unsigned long long)me, (unsigned long long)(t1 - t0), (unsigned)h);
	return 0;
}
