/*
 * snr_util.h: small helpers every subcommand shares: error reporting with
 * the program's name, checked allocation, number parsing that rejects junk.
 */
#ifndef SNR_UTIL_H
#define SNR_UTIL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#if defined(__GNUC__)
#define SNR_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define SNR_PRINTF(a, b)
#endif

/* qsort for a list that may be empty: qsort's pointer must be valid even for
 * no elements (C11 7.1.4; glibc declares it nonnull), and a list never grown
 * is NULL. */
static inline void snr_qsort(void *base, size_t n, size_t size, int (*cmp)(const void *, const void *))
{
	if (n > 1)
		qsort(base, n, size, cmp);
}

/* Gives the stdio stream f a buffer of size bytes, returned for the caller
 * to free after fclose(f). glibc takes a size only with a buffer: with NULL
 * it keeps its own 4 KiB one, a write() every 4 KiB. */
char *snr_setvbuf(FILE *f, size_t size);

/* "snr: " + message + newline on stderr. */
void snr_err(const char *fmt, ...) SNR_PRINTF(1, 2);
void snr_warn(const char *fmt, ...) SNR_PRINTF(1, 2);

/* Aborts with a message on allocation failure: the only thing an out-of-memory
 * process can do that tells the user why. */
void *snr_xmalloc(size_t n);
void *snr_xcalloc(size_t n, size_t size);
void *snr_xrealloc(void *p, size_t n);
char *snr_xstrdup(const char *s);
void *snr_xmemdup(const void *p, size_t n);

/* Parses an unsigned integer (decimal, 0x hex, optional K/M/G binary suffix
 * when allow_suffix). Returns false on any junk, sign, or overflow. */
bool snr_parse_u64(const char *s, uint64_t *out, bool allow_suffix);

/* Fills a message buffer; used by functions that return an error to the
 * caller instead of printing it. */
void snr_fmt(char *buf, size_t len, const char *fmt, ...) SNR_PRINTF(3, 4);

/* Opens path for reading only if it is a regular file (never blocking on a
 * FIFO or a device: the open is non-blocking, then fstat decides). The fd,
 * or -1 with err "PATH: No such file or directory" / "PATH: not a regular
 * file (a FIFO)". */
int snr_open_regular(const char *path, char *err, size_t errlen);

/* Reads a whole regular file (snr_open_regular) of at most max bytes into a
 * NUL-terminated buffer; NULL with err filled. */
char *snr_read_regular(const char *path, size_t max, size_t *len, char *err, size_t errlen);

/* Strings a recorded file carries (symbol names, a trace's or metrics
 * file's META) are the recorded program's or a stranger's to choose: their
 * control bytes (below 0x20, and 0x7f) are read as the four characters
 * \xHH, so that no output hands a terminal an escape sequence. */
/* n bytes of in into out (room for 4n+1), NUL-terminated; the length. */
size_t snr_escape_controls(const uint8_t *in, size_t n, char *out);
/* The JSON text with every string value so escaped (allocated), or NULL if
 * no string holds a control byte (or the text is not JSON). */
char *snr_json_escape_controls(const char *json_text);

/* A program's stop on signal sig, for a message: "stopped with SIGSEGV
 * (signal 11) at 0x103f8" (stopped), or "was killed by SIGKILL (signal 9)".
 * Signals are named where GDB's remote protocol and Linux number them
 * alike (1-6, 8, 9, 11, 13-15), "a signal" otherwise. */
void snr_signal_text(char *buf, size_t len, int sig, uint64_t pc, bool stopped);

#endif
