/*
 * snr_util.c: see snr_util.h.
 */
#include "snr_util.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snr_output.h"

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

int snr_open_regular(const char *path, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	if (!S_ISREG(st.st_mode)) {
		const char *kind = S_ISFIFO(st.st_mode)	 ? "a FIFO"
				   : S_ISDIR(st.st_mode) ? "a directory"
				   : S_ISSOCK(st.st_mode) ? "a socket"
				   : S_ISCHR(st.st_mode) || S_ISBLK(st.st_mode) ? "a device"
										   : "not a file";
		snr_fmt(err, errlen, "%s: not a regular file (%s)", path, kind);
		close(fd);
		return -1;
	}
	snr_output_input(path); /* no output of this process lands on it */
	/* a regular file never blocks; drop the flag for readers that expect it off */
	int fl = fcntl(fd, F_GETFL);
	if (fl >= 0)
		fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	return fd;
}

char *snr_read_regular(const char *path, size_t max, size_t *len, char *err, size_t errlen)
{
	int fd = snr_open_regular(path, err, errlen);
	if (fd < 0)
		return NULL;
	size_t n = 0, cap = 4096;
	char *buf = snr_xmalloc(cap);
	for (;;) {
		if (n + 1 == cap) {
			if (cap > max) {
				snr_fmt(err, errlen, "%s: larger than %zu bytes", path, max);
				goto fail;
			}
			cap *= 2;
			buf = snr_xrealloc(buf, cap);
		}
		ssize_t got = read(fd, buf + n, cap - 1 - n);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
			goto fail;
		}
		if (!got)
			break;
		n += (size_t)got;
	}
	close(fd);
	if (n > max) {
		snr_fmt(err, errlen, "%s: larger than %zu bytes", path, max);
		free(buf);
		return NULL;
	}
	buf[n] = 0;
	*len = n;
	return buf;
fail:
	close(fd);
	free(buf);
	return NULL;
}

size_t snr_escape_controls(const uint8_t *in, size_t n, char *out)
{
	char *o = out;
	for (size_t k = 0; k < n; k++) {
		if (in[k] < 0x20 || in[k] == 0x7f)
			o += sprintf(o, "\\x%02x", in[k]);
		else
			*o++ = (char)in[k];
	}
	*o = 0;
	return (size_t)(o - out);
}

/* Escapes the string values under v in place; true if any changed. */
static bool escape_json_strings(json_t *v)
{
	bool changed = false;
	if (json_is_string(v)) {
		const uint8_t *s = (const uint8_t *)json_string_value(v);
		size_t n = json_string_length(v);
		for (size_t k = 0; k < n && !changed; k++)
			changed = s[k] < 0x20 || s[k] == 0x7f;
		if (changed) {
			char *out = snr_xmalloc(4 * n + 1);
			snr_escape_controls(s, n, out);
			json_string_set(v, out);
			free(out);
		}
	} else if (json_is_object(v)) {
		const char *key;
		json_t *val;
		json_object_foreach(v, key, val)
			changed |= escape_json_strings(val);
	} else if (json_is_array(v)) {
		size_t i;
		json_t *val;
		json_array_foreach(v, i, val)
			changed |= escape_json_strings(val);
	}
	return changed;
}

char *snr_json_escape_controls(const char *json_text)
{
	json_t *j = json_loads(json_text, 0, NULL);
	char *out = NULL;
	if (j && escape_json_strings(j)) {
		char *d = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
		out = d ? snr_xstrdup(d) : NULL;
		free(d);
	}
	json_decref(j);
	return out;
}

char *snr_setvbuf(FILE *f, size_t size)
{
	char *buf = snr_xmalloc(size);
	setvbuf(f, buf, _IOFBF, size);
	return buf;
}

void snr_signal_text(char *buf, size_t len, int sig, uint64_t pc, bool stopped)
{
	static const char *const names[16] = {
		[1] = "SIGHUP", [2] = "SIGINT",  [3] = "SIGQUIT", [4] = "SIGILL",   [5] = "SIGTRAP",  [6] = "SIGABRT",
		[8] = "SIGFPE", [9] = "SIGKILL", [11] = "SIGSEGV", [13] = "SIGPIPE", [14] = "SIGALRM", [15] = "SIGTERM",
	};
	const char *name = sig > 0 && sig < 16 && names[sig] ? names[sig] : "a signal";
	if (stopped)
		snr_fmt(buf, len, "stopped with %s (signal %d) at 0x%llx", name, sig, (unsigned long long)pc);
	else
		snr_fmt(buf, len, "was killed by %s (signal %d)", name, sig);
}
