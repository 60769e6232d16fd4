/*
 * an_prog.c: a TA1 program whose analyses are known before running it
 * (tests/an/analyses.sh). window() issues five DMAs, each waited with an
 * exact number of nops between ISSUE and WAIT (one asm block each, so the
 * compiler adds nothing in between), under the default config (Tb = 500,
 * HBM 1200 B/cycle, VMEM 2048 B/cycle):
 *
 *   #1 HBM->VMEM 12000 B at page 0,     WAIT right after     Figure 4 case 1: base 500 + transfer 10
 *   #2 HBM->VMEM 120000 B at page 64,   550 nops, then WAIT  case 2: transfer [501, 601), stall 50
 *   #3 HBM->VMEM 12000 B at page 256,   600 nops, then WAIT  case 3: complete 511, WAIT 601, slack 90
 *   #4 HBM->VMEM 2048 B at page 20000,  WAIT right after     base 500 + transfer 2
 *   #5 VMEM->HBM 2048 B from page 20000, WAIT right after    base 500 + transfer 2
 *
 * VMEM (1 KiB pages): pages 0-11, 64-181 and 256-267 are written by #1-#3
 * and never read (142 unused); pages 20000-20001 are written by #4 and
 * read by #5 (2 used). While they are held the largest free region is
 * pages 268-19999 (19732 pages); at the end it is pages 268-32767 (32500).
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define PAGE 1024ull
#define DMA_WAIT(dst, src, bytes, flag, nops)                                                     \
	__asm__ volatile(".insn r4 CUSTOM_0, 0, 0, %3, %0, %1, %2\n"                              \
			 ".rept " #nops "\nnop\n.endr\n"                                          \
			 ".insn r CUSTOM_0, 2, 0, x0, %3, %4"                                     \
			 :                                                                        \
			 : "r"(dst), "r"(src), "r"(bytes), "r"(flag), "r"(1ull)                   \
			 : "memory")

__attribute__((noinline)) void window(void)
{
	DMA_WAIT(TA_VMEM_BASE, TA_HBM_BASE, 12000ull, 1ull, 0);
	DMA_WAIT(TA_VMEM_BASE + 64 * PAGE, TA_HBM_BASE + 0x10000, 120000ull, 2ull, 550);
	DMA_WAIT(TA_VMEM_BASE + 256 * PAGE, TA_HBM_BASE + 0x40000, 12000ull, 3ull, 600);
	DMA_WAIT(TA_VMEM_BASE + 20000 * PAGE, TA_HBM_BASE + 0x50000, 2048ull, 4ull, 0);
	DMA_WAIT(TA_HBM_BASE + 0x60000, TA_VMEM_BASE + 20000 * PAGE, 2048ull, 5ull, 0);
}

__attribute__((noinline)) void after(void) { __asm__ volatile("nop"); }

int main(void)
{
	window();
	after();
	printf("an_prog done\n");
	return 0;
}
