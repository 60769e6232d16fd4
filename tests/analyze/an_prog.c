/*
 * an_prog.c: TA1 program for the deps and suggest tests. Each window starts
 * at one function's entry:
 *   tiny()     one asm block with known instruction indices (deps edges);
 *   planted()  a planted avoidable stall: the weight DMA is issued right
 *              before its WAIT although its addresses are constants and
 *              ~300 loop iterations of independent scalar work precede it;
 *   truedep()  a stall from a true dependency: the weight DMA's source
 *              address is loaded from a descriptor another DMA just brought
 *              into core memory;
 *   planted3() three planted stalls of one DMA instruction, 16, 64 and
 *              32 KiB: the 64 KiB one stalls longest (--verify-max).
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

TA_HBM_DATA static float wts[16384];           /* 64 KiB of weights */
TA_HBM_DATA static uint64_t hbm_desc[8] = {0};  /* [0] = the weights' address, set by main */
static uint64_t desc[8] __attribute__((aligned(64)));
uint64_t scratch[8] __attribute__((aligned(64)));

/*
 * The linker relaxes `la` to one gp-relative add, so the indices are:
 * #0  li t0, 5             #6  lui a2, VMEM+0x1000
 * #1  addi t1, t0, 3       #7  li a3, 64
 * #2  add a1, gp, scratch  #8  li a4, 1
 * #3  sd t1, 0(a1)         #9  ta.dma a2 <- a1, a3 bytes, flag a4
 * #4  ld t2, 0(a1)         #10 li a5, 1
 * #5  add t3, t2, t1       #11 ta.wait a4, a5
 *                          #12 li a6, 16
 *                          #13 ta.vadd a2 <- a2 + a2, a6 elements
 *                          #14 ret
 */
__attribute__((naked, noinline)) void tiny(void)
{
	__asm__ volatile("li t0, 5\n"
			 "addi t1, t0, 3\n"
			 "1: auipc a1, %pcrel_hi(scratch)\n"
			 "addi a1, a1, %pcrel_lo(1b)\n"
			 "sd t1, 0(a1)\n"
			 "ld t2, 0(a1)\n"
			 "add t3, t2, t1\n"
			 "lui a2, 0x20001\n"
			 "li a3, 64\n"
			 "li a4, 1\n"
			 ".insn r4 CUSTOM_0, 0, 0, a4, a2, a1, a3\n"
			 "li a5, 1\n"
			 ".insn r CUSTOM_0, 2, 0, x0, a4, a5\n"
			 "li a6, 16\n"
			 ".insn r4 CUSTOM_1, 0, 0, a6, a2, a2, a2\n"
			 "ret\n");
}

__attribute__((noinline)) uint64_t planted(uint64_t n)
{
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 0; i < n; i++)
		h = (h ^ i) * 1099511628211ull;
	ta_dma(TA_VMEM_BASE + 0x100000, ta_addr(wts), sizeof(wts), 2);
	ta_wait(2, 1);
	ta_vadd(TA_VMEM_BASE + 0x180000, TA_VMEM_BASE + 0x100000, TA_VMEM_BASE + 0x100000, 16384);
	return h;
}

__attribute__((noinline)) uint64_t truedep(uint64_t n)
{
	ta_dma(ta_addr(desc), ta_addr(hbm_desc), sizeof(desc), 3);
	ta_wait(3, 1);
	uint64_t src = *(volatile uint64_t *)&desc[0];
	ta_dma(TA_VMEM_BASE + 0x200000, src, sizeof(wts), 4);
	ta_wait(4, 1);
	ta_vadd(TA_VMEM_BASE + 0x280000, TA_VMEM_BASE + 0x200000, TA_VMEM_BASE + 0x200000, 16384);
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 0; i < n; i++)
		h = (h ^ i) * 1099511628211ull;
	return h;
}

__attribute__((noinline)) uint64_t planted3(uint64_t n)
{
	static const uint64_t kib[3] = {16, 64, 32};
	uint64_t h = 1469598103934665603ull;
	for (int k = 0; k < 3; k++) {
		for (uint64_t i = 0; i < n; i++)
			h = (h ^ i) * 1099511628211ull;
		ta_dma(TA_VMEM_BASE + 0x300000 + (uint64_t)k * 0x20000, ta_addr(wts), kib[k] * 1024, 5);
		ta_wait(5, 1);
	}
	return h;
}

int main(void)
{
	/* hbm_desc[0] = &wts, written through core memory and a DMA */
	desc[0] = ta_addr(wts);
	ta_dma(ta_addr(hbm_desc), ta_addr(desc), sizeof(desc), 0);
	ta_wait(0, 1);
	desc[0] = 0;
	uint64_t h = planted3(300);
	tiny();
	h ^= planted(300);
	h ^= truedep(301);
	printf("an_prog %016llx\n", (unsigned long long)h);
	return 0;
}
