/* bits.c: bit manipulation on 32- and 64-bit words: population count,
 * leading and trailing zeros (libgcc's, since TA1 has no Zbb), rotations,
 * bit and byte reversal, Gray code, next permutation of bits, parity,
 * sign extension by shifts; each checked against a naive loop. */
#include <stdint.h>
#include <stdio.h>

static unsigned naive_popcount(uint64_t x)
{
	unsigned n = 0;
	for (int i = 0; i < 64; i++)
		n += (x >> i) & 1;
	return n;
}
static unsigned naive_clz(uint64_t x)
{
	unsigned n = 0;
	for (int i = 63; i >= 0 && !((x >> i) & 1); i--)
		n++;
	return n;
}
static uint64_t rotl(uint64_t x, unsigned r) { return (x << (r & 63)) | (x >> ((64 - r) & 63)); }
static uint32_t rotr32(uint32_t x, unsigned r) { return (x >> (r & 31)) | (x << ((32 - r) & 31)); }
static uint64_t bitrev(uint64_t x)
{
	x = ((x >> 1) & 0x5555555555555555ull) | ((x & 0x5555555555555555ull) << 1);
	x = ((x >> 2) & 0x3333333333333333ull) | ((x & 0x3333333333333333ull) << 2);
	x = ((x >> 4) & 0x0f0f0f0f0f0f0f0full) | ((x & 0x0f0f0f0f0f0f0f0full) << 4);
	return __builtin_bswap64(x);
}
static uint64_t naive_bitrev(uint64_t x)
{
	uint64_t r = 0;
	for (int i = 0; i < 64; i++)
		r |= ((x >> i) & 1) << (63 - i);
	return r;
}
static uint64_t next_perm(uint64_t v)
{
	uint64_t t = v | (v - 1);
	return (t + 1) | (((~t & -~t) - 1) >> (__builtin_ctzll(v) + 1));
}

int main(void)
{
	uint64_t x = 0x243f6a8885a308d3ull, h = 0;
	int bad = 0;
	for (int i = 0; i < 1500; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		uint64_t v = i % 5 == 0 ? x >> (i % 64) : x;
		unsigned pc = (unsigned)__builtin_popcountll(v);
		bad += pc != naive_popcount(v);
		if (v) {
			bad += (unsigned)__builtin_clzll(v) != naive_clz(v);
			bad += (unsigned)__builtin_ctzll(v) != naive_clz(naive_bitrev(v));
		}
		bad += bitrev(v) != naive_bitrev(v);
		uint32_t w = (uint32_t)v;
		uint64_t g = v ^ (v >> 1), back = g;
		for (int s = 1; s < 64; s <<= 1)
			back ^= back >> s;
		bad += back != v;
		int64_t sx = (int64_t)(v << (i % 64)) >> (i % 64);
		h = h * 0x100000001b3ull + pc + rotl(v, (unsigned)i) + rotr32(w, (unsigned)i) + g +
		    (uint64_t)sx + (uint64_t)__builtin_parityll(v) + __builtin_bswap32(w) + (uint64_t)(int32_t)w;
	}
	uint64_t p = 0x7, steps = 0;
	while (p < (1ull << 20)) {
		p = next_perm(p);
		steps++;
	}
	printf("hash %016llx next_perm steps %llu disagreements %d\n", (unsigned long long)h,
	       (unsigned long long)steps, bad);
	for (int s = 0; s < 64; s += 9)
		printf("rotl(%016llx,%2d) = %016llx clz %2d ctz %2d popcount %2d\n", (unsigned long long)x, s,
		       (unsigned long long)rotl(x, (unsigned)s), __builtin_clzll(x >> s), __builtin_ctzll(x << s),
		       __builtin_popcountll(x >> s));
	return bad;
}
