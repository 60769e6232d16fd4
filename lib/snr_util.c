/*
 * snr_util.c: see snr_util.h.
 */
#include "snr_util.h"

#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void snr_err(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("snr: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

void snr_warn(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fputs("snr: warning: ", stderr);
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void oom(size_t n)
{
	fprintf(stderr, "snr: out of memory allocating %zu bytes\n", n);
	abort();
}

void *snr_xmalloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		oom(n);
	return p;
}

void *snr_xmemdup(const void *p, size_t n)
{
	void *q = snr_xmalloc(n);
	memcpy(q, p, n);
	return q;
}

void *snr_xcalloc(size_t n, size_t size)
{
	void *p = calloc(n ? n : 1, size ? size : 1);
	if (!p)
		oom(n * size);
	return p;
}

void *snr_xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		oom(n);
	return q;
}

char *snr_xstrdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = snr_xmalloc(n);
	memcpy(p, s, n);
	return p;
}

bool snr_parse_u64(const char *s, uint64_t *out, bool allow_suffix)
{
	if (!s || !*s || isspace((unsigned char)*s) || *s == '-' || *s == '+')
		return false;
	errno = 0;
	char *end;
	unsigned long long v = strtoull(s, &end, 0);
	if (errno || end == s)
		return false;
	if (allow_suffix && *end) {
		unsigned shift = 0;
		switch (*end) {
		case 'K': case 'k': shift = 10; break;
		case 'M': case 'm': shift = 20; break;
		case 'G': case 'g': shift = 30; break;
		default: return false;
		}
		end++;
		if (v > (~0ull >> shift))
			return false;
		v <<= shift;
	}
	if (*end)
		return false;
	*out = v;
	return true;
}

void snr_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf, len, fmt, ap);
	va_end(ap);
}
