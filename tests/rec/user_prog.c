/*
 * user_prog.c: a program written the way users write them (built -O2, no
 * frame pointers, libc calls), for recording host code under QEMU's
 * user-mode stubs: aarch64 with glibc (aarch64-linux-gnu-gcc -static) and
 * plain RV64 with picolibc (snr cc). report() parses the numbers out of a
 * line of text (strtol), sorts them (qsort, which calls back through a
 * function pointer), formats them again (snprintf) and writes the result
 * (write(2): a system call inside the window, whose result is the same on
 * every run). Prints "user_prog SUM" at the end.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char text[] = "load 17, 4 -9 2048 33 x 71 5 -300 12 8 99 1 64 7 250 -2 18 3 41 600 27 11";

static int by_value(const void *a, const void *b)
{
	long x = *(const long *)a, y = *(const long *)b;
	return (x > y) - (x < y);
}

__attribute__((noinline)) long report(const char *in, char *line, size_t cap)
{
	long v[64];
	int n = 0;
	for (const char *p = in; *p && n < 64;) {
		char *end;
		long x = strtol(p, &end, 10);
		if (end == p) {
			p++;
			continue;
		}
		v[n++] = x;
		p = end;
	}
	qsort(v, (size_t)n, sizeof(v[0]), by_value);
	size_t len = 0;
	long sum = 0;
	for (int i = 0; i < n && len < cap; i++) {
		sum += v[i] * (i + 1);
		len += (size_t)snprintf(line + len, cap - len, "%s%ld", i ? " " : "", v[i]);
	}
	if (len < cap)
		line[len++] = '\n';
	if (write(1, line, len) != (ssize_t)len)
		return -1;
	return sum;
}

int main(void)
{
	static char line[512];
	long sum = report(text, line, sizeof(line));
	printf("user_prog %ld\n", sum);
	return 0;
}
