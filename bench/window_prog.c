/*
 * window_prog.c: the program of bench/window_fidelity.sh. main() leaves DMAs
 * in flight when it calls window(): a 1 MiB HBM->VMEM copy nobody waits for
 * until the end, and behind it on the same link the 256-byte copy that
 * window() waits for first. window() then runs DMA, vector and MXU work and a
 * long scalar loop (12 instructions per iteration, about 120k in all).
 *
 * The call is one asm statement, `csrr; jal window; csrr`, so the cycles the
 * program prints are exactly: the first csrr, the jal and its taken-branch
 * refill, and window() itself up to the instruction after its ret. On the
 * functional device (one cycle per instruction) that is window()'s
 * instruction count + 2.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef ITERS
#define ITERS 10000
#endif

static uint8_t buf[64];
static float w[128 * 128], x[4 * 128];

__attribute__((noinline, used)) uint64_t window(uint64_t n)
{
	ta_wait(5, 1); /* the 256-byte DMA main() issued last */
	buf[8] = 0xab;
	ta_dma(TA_VMEM_BASE + 0x100000, ta_addr(buf), sizeof(buf), 1);
	ta_wait(1, 1);
	ta_mxu_load(TA_VMEM_BASE);
	ta_mxu_matmul(TA_VMEM_BASE + 0x200000, TA_VMEM_BASE + 0x10000, 4, 0);
	ta_vadd(TA_VMEM_BASE + 0x300000, TA_VMEM_BASE + 0x200000, TA_VMEM_BASE + 0x200000, 4 * 128);
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 0; i < n; i++) {
		h ^= buf[i & 63] + i;
		h *= 1099511628211ull;
		buf[(i * 7) & 63] = (uint8_t)h;
	}
	return h;
}

int main(void)
{
	for (int i = 0; i < 128 * 128; i++)
		w[i] = (float)((i * 37) % 101) / 101.0f;
	for (int i = 0; i < 4 * 128; i++)
		x[i] = (float)((i * 11) % 17) / 17.0f;
	ta_dma(TA_VMEM_BASE, ta_addr(w), sizeof(w), 0);
	ta_dma(TA_VMEM_BASE + 0x10000, ta_addr(x), sizeof(x), 0);
	ta_wait(0, 2);
	ta_dma(TA_VMEM_BASE + 0x400000, TA_HBM_BASE, 1 << 20, 6); /* in flight across the window */
	ta_dma(TA_VMEM_BASE + 0x20000, TA_HBM_BASE + (1 << 20), 256, 5); /* queued behind it; waited in window() */
	register uint64_t a0 __asm__("a0") = ITERS;
	uint64_t c0, c1;
	__asm__ volatile("csrr %0, cycle\n\tjal ra, window\n\tcsrr %1, cycle"
			 : "=&r"(c0), "=&r"(c1), "+r"(a0)
			 :
			 : "ra", "t0", "t1", "t2", "t3", "t4", "t5", "t6", "a1", "a2", "a3", "a4", "a5", "a6", "a7",
			   "memory");
	ta_wait(6, 1);
	printf("window cycles %llu h %016llx\n", (unsigned long long)(c1 - c0), (unsigned long long)a0);
	return 0;
}
