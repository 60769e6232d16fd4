/* sieve.c: the sieve of Eratosthenes (byte and bit arrays), prime counts,
 * twin primes, Goldbach partitions and trial division cross-checks. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define LIMIT 60000

static uint8_t composite[LIMIT + 1];
static uint64_t bits[LIMIT / 64 + 1];

static int is_prime_trial(uint32_t n)
{
	if (n < 2)
		return 0;
	for (uint32_t d = 2; d * d <= n; d++)
		if (n % d == 0)
			return 0;
	return 1;
}

int main(void)
{
	composite[0] = composite[1] = 1;
	for (uint32_t i = 2; (uint64_t)i * i <= LIMIT; i++)
		if (!composite[i])
			for (uint32_t j = i * i; j <= LIMIT; j += i)
				composite[j] = 1;
	memset(bits, 0xff, sizeof(bits));
	bits[0] &= ~3ull;
	for (uint32_t i = 2; (uint64_t)i * i <= LIMIT; i++)
		if (bits[i / 64] >> (i % 64) & 1)
			for (uint32_t j = i * i; j <= LIMIT; j += i)
				bits[j / 64] &= ~(1ull << (j % 64));
	unsigned count = 0, twins = 0, bad = 0;
	uint64_t sum = 0;
	for (uint32_t i = 0; i <= LIMIT; i++) {
		int p = !composite[i];
		if (p != (int)(bits[i / 64] >> (i % 64) & 1))
			bad++;
		if (p) {
			count++;
			sum += i;
			if (i >= 3 && !composite[i - 2])
				twins++;
		}
		if (count && (i == 10 || i == 100 || i == 1000 || i == 10000 || i == 100000))
			printf("pi(%u) = %u\n", i, count);
	}
	for (uint32_t i = 0; i < 3000; i += 7)
		bad += is_prime_trial(i) != !composite[i];
	printf("primes <= %u: %u, sum %llu, twin pairs %u\n", LIMIT, count, (unsigned long long)sum, twins);
	for (uint32_t n = 4; n <= 64; n += 6) {
		unsigned ways = 0;
		for (uint32_t p = 2; p <= n / 2; p++)
			ways += !composite[p] && !composite[n - p];
		printf("goldbach(%u) = %u\n", n, ways);
	}
	printf("last primes:");
	for (uint32_t i = LIMIT, k = 0; k < 5; i--)
		if (!composite[i]) {
			printf(" %u", i);
			k++;
		}
	printf("\ndisagreements: %u\n", bad);
	return (int)(count % 128);
}
