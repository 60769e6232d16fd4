/*
 * an_names.c: a TA1 program whose functions have names made to break a
 * page: window() calls "<!--<script>" (an HTML comment opener and a script
 * tag) and "</script><snrinjected>x", which each issue and wait one DMA
 * (tests/an/report_names.sh: snr report must render, and show the names as
 * text everywhere, tooltips included).
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define DMA_WAIT(dst, src, bytes, flag)                                                           \
	__asm__ volatile(".insn r4 CUSTOM_0, 0, 0, %3, %0, %1, %2\n"                              \
			 ".rept 40\nnop\n.endr\n"                                                 \
			 ".insn r CUSTOM_0, 2, 0, x0, %3, %4"                                     \
			 :                                                                        \
			 : "r"(dst), "r"(src), "r"(bytes), "r"(flag), "r"(1ull)                   \
			 : "memory")

__attribute__((noinline)) void comment_opener(void) __asm__("\"<!--<script>\"");
__attribute__((noinline)) void comment_opener(void) { DMA_WAIT(TA_VMEM_BASE, TA_HBM_BASE, 12000ull, 1ull); }

__attribute__((noinline)) void script_closer(void) __asm__("\"</script><snrinjected>x\"");
__attribute__((noinline)) void script_closer(void)
{
	DMA_WAIT(TA_VMEM_BASE + 0x10000, TA_HBM_BASE + 0x10000, 24000ull, 2ull);
}

__attribute__((noinline)) void window(void)
{
	comment_opener();
	script_closer();
}

int main(void)
{
	window();
	printf("an_names done\n");
	return 0;
}
