/*
 * rec_prog.c: a TA1 program for the recorder tests. window() is where
 * recordings start: it waits on a DMA issued before it (the "issued before
 * the window, waited inside it" case), writes 4 bytes of a buffer and then
 * DMAs the whole 64-byte buffer (the "partly written before a wider read"
 * case), runs vector and MXU work, then a long scalar loop.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

static uint8_t buf[64];
static float w[128 * 128], x[4 * 128];
static volatile uint64_t sink;

__attribute__((noinline)) uint64_t window(uint64_t n)
{
	ta_wait(5, 1); /* the DMA main() issued before calling us */
	buf[8] = 0xab;
	buf[9] = 0xcd;
	buf[10] = 0xef;
	buf[11] = 0x01;
	ta_dma(TA_VMEM_BASE + 0x100000, ta_addr(buf), sizeof(buf), 1);
	ta_wait(1, 1);
	ta_mxu_load(TA_VMEM_BASE);
	ta_mxu_matmul(TA_VMEM_BASE + 0x200000, TA_VMEM_BASE + 0x10000, 4, 0);
	ta_vadd(TA_VMEM_BASE + 0x300000, TA_VMEM_BASE + 0x200000, TA_VMEM_BASE + 0x200000, 4 * 128);
	ta_vexp(TA_VMEM_BASE + 0x300000, TA_VMEM_BASE + 0x300000, 4 * 128);
	uint64_t h = 1469598103934665603ull;
	for (uint64_t i = 0; i < n; i++) {
		h ^= buf[i & 63] + i;
		h *= 1099511628211ull;
		buf[(i * 7) & 63] = (uint8_t)h;
	}
	return h;
}

__attribute__((noinline)) void never_called(void) { sink = 1; }

int main(void)
{
	for (int i = 0; i < 128 * 128; i++)
		w[i] = (float)((i * 37) % 101) / 101.0f;
	for (int i = 0; i < 4 * 128; i++)
		x[i] = (float)((i * 11) % 17) / 17.0f;
	for (int i = 0; i < 64; i++)
		buf[i] = (uint8_t)(i * 3);
	ta_dma(TA_VMEM_BASE, ta_addr(w), sizeof(w), 0);
	ta_dma(TA_VMEM_BASE + 0x10000, ta_addr(x), sizeof(x), 0);
	ta_wait(0, 2);
	ta_dma(TA_VMEM_BASE + 0x20000, ta_addr(x), 256, 5); /* waited inside window() */
	uint64_t h = window(20000);
	printf("rec_prog %016llx\n", (unsigned long long)h);
	if (sink)
		never_called();
	return 0;
}
