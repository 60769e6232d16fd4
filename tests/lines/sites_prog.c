/*
 * sites_prog.c: a host program as users write them (-O2, no frame pointers,
 * libc) for tests/lines/line_sites_gdb.sh: scale() is inlined into two
 * functions, so its line has code in both; loops split their lines.
 */
#include <stdio.h>
#include <stdlib.h>

static inline long scale(long v, long k)
{
	return v * k + (v >> 3);
}

__attribute__((noinline)) long sum_scaled(const long *a, int n, long k)
{
	long s = 0;
	for (int i = 0; i < n; i++)
		s += scale(a[i], k);
	return s;
}

__attribute__((noinline)) long max_scaled(const long *a, int n, long k)
{
	long m = 0;
	for (int i = 0; i < n; i++) {
		long v = scale(a[i], k);

		if (v > m)
			m = v;
	}
	return m;
}

int main(int argc, char **argv)
{
	int n = argc > 1 ? atoi(argv[1]) : 64;
	long *a = malloc(sizeof(*a) * (size_t)n);
	if (!a)
		return 1;
	for (int i = 0; i < n; i++)
		a[i] = (i * 7919) % 1000;
	printf("%ld %ld\n", sum_scaled(a, n, 3), max_scaled(a, n, 5));
	free(a);
	return 0;
}
