/*
 * causal_kernel.c: a TA1 program for the causal profile's device check
 * (tests/host/host_causal.sh): each run is ITERS rounds of scalar work on
 * the chip, so a build with fewer rounds is a kernel faster for real (the
 * simulator's time per instruction is fixed; a run also has a fixed part,
 * loading and exit). Built with `snr cc -DITERS=N`.
 */
#include <stdint.h>
#include <stdio.h>

#ifndef ITERS
#define ITERS 4000000
#endif

int main(void)
{
	uint64_t h = 1469598103934665603ull;
	for (uint32_t i = 0; i < ITERS; i++)
		h = (h ^ i) * 1099511628211ull;
	printf("causal_kernel: %u rounds, %016llx\n", (unsigned)ITERS, (unsigned long long)h);
	return 0;
}
