/* scalar_kernel.c: the scalar workload of bench/scalar_speed.py. A mix of
 * what TA1 programs do between Xta instructions: table-driven CRC (loads,
 * shifts, xor), sorting (compare-and-branch, stores), a sieve (byte stores,
 * strided loops) and integer hashing with multiply and divide. ROUNDS
 * scales it; the default is about 1e9 instructions. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#ifndef ROUNDS
#define ROUNDS 1100
#endif

static uint32_t crc_table[256];
static uint8_t buf[4096];
static int32_t arr[512];
static uint8_t sieve[16384];

static uint32_t crc32(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--)
		c = crc_table[(c ^ *p++) & 255] ^ (c >> 8);
	return ~c;
}

static void sort(int32_t *a, int n)
{
	for (int i = 1; i < n; i++) {
		int32_t v = a[i];
		int j = i - 1;
		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

static unsigned primes(void)
{
	memset(sieve, 0, sizeof(sieve));
	unsigned n = 0;
	for (unsigned i = 2; i < sizeof(sieve); i++) {
		if (sieve[i])
			continue;
		n++;
		for (unsigned j = i * 2; j < sizeof(sieve); j += i)
			sieve[j] = 1;
	}
	return n;
}

int main(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
		crc_table[i] = c;
	}
	uint64_t x = 88172645463325252ull, acc = 0;
	for (int r = 0; r < ROUNDS; r++) {
		for (size_t i = 0; i < sizeof(buf); i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			buf[i] = (uint8_t)x;
		}
		acc += crc32(buf, sizeof(buf));
		for (int i = 0; i < 512; i++)
			arr[i] = (int32_t)(x >> (i & 31)) ^ i * 2654435761u;
		sort(arr, 512);
		acc += (uint64_t)arr[0] + (uint64_t)arr[511];
		acc += primes();
		for (int i = 0; i < 2000; i++) {
			volatile uint64_t d = (x >> (i & 15)) | 3;
			acc += acc * 6364136223846793005ull / d + acc % (d + 1);
		}
	}
	printf("acc %016llx\n", (unsigned long long)acc);
	return 0;
}
