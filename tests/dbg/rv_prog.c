/*
 * rv_prog.c: the RISC-V program the RSP tests run under qemu-riscv64 -g
 * (built with `snr cc`, so it exits and writes through ecall). The same
 * computation as x86_prog.c: data[i] = i*i + 7, checksum() (FNV-1a over 64
 * rounds, no calls inside), "result N" on stdout, exit code 42.
 */
#include <stdint.h>
#include <stdio.h>

uint64_t data[64];
volatile uint64_t result;

__attribute__((noinline)) uint64_t checksum(const uint64_t *v, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int r = 0; r < 64; r++)
		for (int i = 0; i < n; i++) {
			h ^= v[i] + (uint64_t)r;
			h *= 1099511628211ull;
		}
	return h;
}

int main(void)
{
	for (int i = 0; i < 64; i++)
		data[i] = (uint64_t)i * (uint64_t)i + 7;
	result = checksum(data, 64);
	printf("result %llu\n", (unsigned long long)result);
	return 42;
}
