/*
 * rv_rec.c: a plain RV64 program (scalar only, no Xta) for recording under
 * qemu-riscv64 -g: work() loops over loads, stores and calls to two small
 * functions, so a window holds call/return, stack traffic and memory both
 * read before and after the window writes it.
 */
#include <stdint.h>
#include <stdio.h>

static uint64_t tab[256];
static uint32_t out[256];

__attribute__((noinline)) uint64_t mix(uint64_t a, uint64_t b)
{
	return (a ^ (b << 7)) * 0x9e3779b97f4a7c15ull + (b >> 3);
}

__attribute__((noinline)) void store(int i, uint64_t v)
{
	out[i & 255] = (uint32_t)v;
	tab[(i * 5) & 255] += v;
}

__attribute__((noinline)) uint64_t work(int n)
{
	uint64_t h = 7;
	for (int i = 0; i < n; i++) {
		h = mix(h, tab[i & 255] + out[(i * 3) & 255]);
		store(i, h);
	}
	return h;
}

int main(void)
{
	for (int i = 0; i < 256; i++)
		tab[i] = (uint64_t)i * (uint64_t)i + 1;
	printf("rv_rec %016llx\n", (unsigned long long)work(4000));
	return 0;
}
