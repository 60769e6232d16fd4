/* strings.c: picolibc's string functions and printf with many conversions,
 * flags, widths and precisions, on edge values. */
#include <ctype.h>
#include <inttypes.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char big[8192], big2[8192];

int main(void)
{
	/* printf: integers */
	long long ll[] = {0, 1, -1, 42, -42, LLONG_MAX, LLONG_MIN, INT_MAX, INT_MIN, 1234567890123LL};
	for (unsigned i = 0; i < sizeof(ll) / sizeof(ll[0]); i++) {
		long long v = ll[i];
		printf("[%d] [%i] [%u] [%x] [%X] [%o] [%lld] [%llu] [%llx] [%20lld] [%-20lld|] [%020lld]\n", (int)v,
		       (int)v, (unsigned)v, (unsigned)v, (unsigned)v, (unsigned)v, v, (unsigned long long)v,
		       (unsigned long long)v, v, v, v);
		printf("[%+d] [% d] [%#x] [%#o] [%.5d] [%8.3d] [%-8.3d|] [%hhd] [%hd] [%hhu] [%hu] [%ld] [%zu] [%jd]\n",
		       (int)v, (int)v, (unsigned)v, (unsigned)v, (int)v, (int)v, (int)v, (signed char)v, (short)v,
		       (unsigned char)v, (unsigned short)v, (long)v, (size_t)v, (intmax_t)v);
		printf("[%*d] [%-*d|] [%.*d] [%" PRId64 "] [%" PRIx32 "] [%#llX]\n", (int)(i % 12), (int)v,
		       (int)(i % 7), (int)v, (int)(i % 4), (int)v, (int64_t)v, (uint32_t)v, (unsigned long long)v);
	}
	/* printf: characters, strings, pointers, percent */
	printf("[%c%c%c] [%5c] [%-5c|] [%s] [%10s] [%-10s|] [%.3s] [%10.2s] [%%] [%p]\n", 'a', 'B', '0', 'x', 'y',
	       "hello", "right", "left", "truncate", "ab", (void *)(uintptr_t)0x10000);
	/* printf: floating point (software floating point on TA1 and under qemu) */
	double d[] = {0.0, -0.0, 1.0, -1.5, 3.14159265358979, 1e10, 1e-10, 123456.789, 2.5e300, -7.25e-300};
	for (unsigned i = 0; i < sizeof(d) / sizeof(d[0]); i++)
		printf("[%f] [%.2f] [%e] [%.3E] [%g] [%G] [%10.4f] [%-12.3e|] [%+.1f] [%a]\n", d[i], d[i], d[i], d[i],
		       d[i], d[i], d[i], d[i], d[i], d[i]);
	/* snprintf truncation and return value */
	char small[8];
	volatile size_t small_size = sizeof(small); /* hides the truncation from -Wformat-truncation */
	int n = snprintf(small, small_size, "%s-%d", "abcdef", 12345);
	printf("snprintf -> %d \"%s\"\n", n, small);

	/* string functions */
	for (size_t i = 0; i < sizeof(big) - 1; i++)
		big[i] = (char)('a' + (i * 7 + i / 13) % 26);
	big[sizeof(big) - 1] = 0;
	unsigned long h = 0;
	for (int rep = 0; rep < 40; rep++) {
		size_t off = (size_t)(rep * 37) % 64, len = 1000 + (size_t)rep * 97;
		memcpy(big2 + off, big + rep, len);
		big2[off + len] = 0;
		h = h * 131 + strlen(big2 + off);
		h = h * 131 + (unsigned long)(strcmp(big2 + off, big + rep) > 0) * 2 + (strcmp(big2 + off, big + rep) < 0);
		h = h * 131 + (unsigned long)(memcmp(big2 + off, big + rep, len) == 0);
		memmove(big2 + off + 3, big2 + off, len);
		h = h * 131 + (unsigned char)big2[off + len / 2];
		const char *f = strstr(big2 + off, "xel");
		h = h * 131 + (f ? (unsigned long)(f - (big2 + off)) : 7);
		const char *c = strchr(big2 + off, 'q'), *r = strrchr(big2 + off, 'q');
		h = h * 131 + (c ? (unsigned long)(c - big2) : 1) + (r ? (unsigned long)(r - big2) : 3);
		memset(big2 + off, 'Z', (size_t)rep);
		h = h * 131 + strspn(big2 + off, "Z") + strcspn(big2 + off, "mno");
	}
	printf("string hash %lx\n", h);
	char tok[] = "  alpha, beta,,gamma ;delta  ";
	for (char *save, *t = strtok_r(tok, " ,;", &save); t; t = strtok_r(NULL, " ,;", &save))
		printf("token <%s> upper <%c>\n", t, toupper((unsigned char)t[0]));
	/* No input overflows: picolibc's errno is thread-local and TA1's crt0
	 * does not set up tp, so an ERANGE store would fault (on qemu too). */
	const char *nums[] = {"0", "-123", "0x7fffffffffffffff", "-9223372036854775807", "077", "12abc", "  +42",
			      "ffffffffffffffff"};
	for (unsigned i = 0; i < sizeof(nums) / sizeof(nums[0]); i++) {
		char *end;
		long long v = strtoll(nums[i], &end, 0);
		unsigned long long u = strtoull(nums[i], NULL, 10);
		printf("strtoll(\"%s\") = %lld rest \"%s\"; strtoull16 = %llu; atoi = %d\n", nums[i], v, end, u,
		       atoi(nums[i]));
	}
	return (int)(h & 0x3f);
}
