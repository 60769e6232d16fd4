/*
 * dma_prog.c: a TA1 program whose window() reads HBM that something other
 * than the chip itself may change while the window runs (another chip's
 * DMA landing in it; `snr device --test-dma` plants one). window() DMAs
 * in[0..64) from HBM and hashes it in a scalar loop, reads the cycle
 * counter (a checkpoint under `snr record --method sim`), loops again,
 * then DMAs in[64..128) and hashes that. main() prints the instruction count at which window()
 * was called ("dma_prog at N") and where `in` is ("in 0xADDR"), so that a
 * test can place the planted write inside the window.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

TA_HBM_DATA static uint8_t in[128];
static uint8_t core[128];
static volatile uint64_t sink;

__attribute__((noinline)) uint64_t window(uint64_t n)
{
	uint64_t h = 1469598103934665603ull;
	ta_dma(ta_addr(core), ta_addr(in), 64, 1);
	ta_wait(1, 1);
	for (uint64_t i = 0; i < n; i++) {
		h ^= core[i & 63] + i;
		h *= 1099511628211ull;
	}
	h ^= ta_cycles();
	for (uint64_t i = 0; i < n; i++) {
		h ^= core[i & 63] + i;
		h *= 1099511628211ull;
	}
	ta_dma(ta_addr(core) + 64, ta_addr(in) + 64, 64, 1);
	ta_wait(1, 1);
	for (uint64_t i = 64; i < 128; i++) {
		h ^= core[i];
		h *= 1099511628211ull;
	}
	return h;
}

int main(void)
{
	uint64_t at = ta_cycles(); /* the instruction count, without the timing model */
	sink = window(1500);
	printf("dma_prog at %llu in 0x%llx h %016llx\n", (unsigned long long)at, (unsigned long long)ta_addr(in),
	       (unsigned long long)sink);
	return 0;
}
