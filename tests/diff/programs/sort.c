/* sort.c: four integer sorts over the same pseudo-random arrays (signed and
 * unsigned 64-bit, 32-bit), checked against each other; prints checksums. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 800

static uint64_t rng_state = 0x9e3779b97f4a7c15ull;
static uint64_t next_rand(void)
{
	rng_state ^= rng_state << 13;
	rng_state ^= rng_state >> 7;
	rng_state ^= rng_state << 17;
	return rng_state;
}

static void insertion_sort(int64_t *a, int n)
{
	for (int i = 1; i < n; i++) {
		int64_t v = a[i];
		int j = i - 1;
		while (j >= 0 && a[j] > v) {
			a[j + 1] = a[j];
			j--;
		}
		a[j + 1] = v;
	}
}

static void quick_sort(int64_t *a, int lo, int hi)
{
	while (lo < hi) {
		int64_t p = a[lo + (hi - lo) / 2];
		int i = lo, j = hi;
		while (i <= j) {
			while (a[i] < p)
				i++;
			while (a[j] > p)
				j--;
			if (i <= j) {
				int64_t t = a[i];
				a[i++] = a[j];
				a[j--] = t;
			}
		}
		if (j - lo < hi - i) {
			quick_sort(a, lo, j);
			lo = i;
		} else {
			quick_sort(a, i, hi);
			hi = j;
		}
	}
}

static void merge_sort(int64_t *a, int64_t *tmp, int n)
{
	if (n < 2)
		return;
	int h = n / 2;
	merge_sort(a, tmp, h);
	merge_sort(a + h, tmp, n - h);
	int i = 0, j = h, k = 0;
	while (i < h && j < n)
		tmp[k++] = a[i] <= a[j] ? a[i++] : a[j++];
	while (i < h)
		tmp[k++] = a[i++];
	while (j < n)
		tmp[k++] = a[j++];
	memcpy(a, tmp, (size_t)n * sizeof(*a));
}

static void radix_sort_u32(uint32_t *a, uint32_t *tmp, int n)
{
	for (int shift = 0; shift < 32; shift += 8) {
		unsigned count[257] = {0};
		for (int i = 0; i < n; i++)
			count[((a[i] >> shift) & 255) + 1]++;
		for (int b = 0; b < 256; b++)
			count[b + 1] += count[b];
		for (int i = 0; i < n; i++)
			tmp[count[(a[i] >> shift) & 255]++] = a[i];
		memcpy(a, tmp, (size_t)n * sizeof(*a));
	}
}

static int cmp_u64(const void *x, const void *y)
{
	uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
	return a < b ? -1 : a > b;
}

static uint64_t checksum(const void *p, size_t n)
{
	const unsigned char *b = p;
	uint64_t h = 1469598103934665603ull;
	for (size_t i = 0; i < n; i++)
		h = (h ^ b[i]) * 1099511628211ull;
	return h;
}

static int64_t a1[N], a2[N], a3[N], tmp[N];
static uint64_t u[N];
static uint32_t w[N], wt[N];

int main(void)
{
	int bad = 0;
	for (int round = 0; round < 3; round++) {
		for (int i = 0; i < N; i++) {
			uint64_t r = next_rand();
			a1[i] = a2[i] = a3[i] = round == 2 ? (int64_t)(r % 17) - 8 : (int64_t)r;
			u[i] = r;
			w[i] = (uint32_t)(r >> 17);
		}
		insertion_sort(a1, N);
		quick_sort(a2, 0, N - 1);
		merge_sort(a3, tmp, N);
		qsort(u, N, sizeof(u[0]), cmp_u64);
		radix_sort_u32(w, wt, N);
		for (int i = 0; i < N; i++) {
			if (a1[i] != a2[i] || a1[i] != a3[i])
				bad++;
			if (i && (u[i - 1] > u[i] || w[i - 1] > w[i]))
				bad++;
		}
		printf("round %d: min %lld max %lld median %lld\n", round, (long long)a1[0], (long long)a1[N - 1],
		       (long long)a1[N / 2]);
		long long s = 0;
		for (int i = 0; i < N; i++)
			s += (long long)i * (a1[i] >> 20);
		printf("  weighted %lld hash64 %016llx hashu %016llx hash32 %016llx\n", s,
		       (unsigned long long)checksum(a1, sizeof(a1)), (unsigned long long)checksum(u, sizeof(u)),
		       (unsigned long long)checksum(w, sizeof(w)));
	}
	printf("disagreements: %d\n", bad);
	return bad ? 1 : 0;
}
