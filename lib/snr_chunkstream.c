/*
 * snr_chunkstream.c: see snr_chunkstream.h. The layout read here is the
 * one lib/snr_chunkfile.c writes (its comment draws it): a 16-byte file
 * header (magic, version, CRC-32C), then chunks of a 28-byte header (magic
 * "CHNK", type, codec, sequence, stored and raw lengths, payload CRC,
 * header CRC) and the payload, raw or zstd.
 */
#include "snr_chunkstream.h"

#include "snr_partial.h"

#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "snr_crc.h"
#include "snr_util.h"

#define CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */
#define CHUNK_HDR 28
#define FILE_HDR 16
#define CODEC_RAW 0
#define CODEC_ZSTD 1
#define MAX_RAW_CHUNK (512u << 20)
#define READ_BYTES (1u << 20)

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static int stream_fail(struct snr_chunk_stream *s, uint64_t at, const char *fmt, ...) SNR_PRINTF(3, 4);
static int stream_fail(struct snr_chunk_stream *s, uint64_t at, const char *fmt, ...)
{
	snr_partial_damaged(); /* a damaged file: snr exits 3 (snr_partial.h) */
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	snprintf(s->err, sizeof(s->err), "%s: chunk %u (offset %llu): %s", s->path, s->seq, (unsigned long long)at,
		 what);
	return -1;
}

/* At least n bytes from pos on in the buffer, unless the file ends first:
 * 0 (check len - pos), -1 on a read error. */
static int fill(struct snr_chunk_stream *s, size_t n)
{
	if (s->len - s->pos >= n || s->eof)
		return 0;
	if (s->pos) {
		memmove(s->buf, s->buf + s->pos, s->len - s->pos);
		s->off += s->pos;
		s->len -= s->pos;
		s->pos = 0;
	}
	if (n > s->cap) {
		s->cap = n > 2 * s->cap ? n : 2 * s->cap;
		s->buf = snr_xrealloc(s->buf, s->cap);
	}
	while (s->len < n) {
		size_t want = s->cap - s->len;
		ssize_t r = read(s->fd, s->buf + s->len, want);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			snprintf(s->err, sizeof(s->err), "%s: reading at offset %llu: %s", s->path,
				 (unsigned long long)(s->off + s->len), strerror(errno));
			return -1;
		}
		if (r == 0) {
			s->eof = true;
			break;
		}
		s->len += (size_t)r;
	}
	return 0;
}

int snr_chunks_open(struct snr_chunk_stream *s, const char *path, const char magic[8], const char *what,
		    uint32_t min_version, uint32_t max_version, char *err, size_t errlen)
{
	memset(s, 0, sizeof(*s));
	s->fd = -1;
	s->path = snr_xstrdup(path);
	s->fd = snr_open_regular(path, err, errlen);
	if (s->fd < 0)
		goto fail;
	s->cap = READ_BYTES;
	s->buf = snr_xmalloc(s->cap);
	if (fill(s, FILE_HDR)) {
		snr_fmt(err, errlen, "%s", s->err);
		goto fail;
	}
	if (s->len < FILE_HDR || memcmp(s->buf, magic, 8)) {
		snr_fmt(err, errlen, "%s: not an %s (no %.8s header)", path, what, magic);
		goto fail;
	}
	if (snr_crc32c(0, s->buf, 12) != get_le(s->buf + 12, 4)) {
		snr_fmt(err, errlen, "%s: file header (offset 0) is corrupt: checksum mismatch", path);
		snr_partial_damaged();
		goto fail;
	}
	s->version = (uint32_t)get_le(s->buf + 8, 4);
	if (s->version < min_version || s->version > max_version) {
		snr_fmt(err, errlen, "%s: %s format version %u; this snr reads versions %u to %u", path, what,
			s->version, min_version, max_version);
		goto fail;
	}
	s->pos = FILE_HDR;
	return 0;
fail:
	snr_chunks_close(s);
	return -1;
}

int snr_chunks_next(struct snr_chunk_stream *s, unsigned max_type, uint16_t *type, const uint8_t **payload,
		    size_t *len)
{
	if (fill(s, CHUNK_HDR))
		return -1;
	if (s->len == s->pos)
		return 0;
	uint64_t at = s->off + s->pos;
	if (s->len - s->pos < CHUNK_HDR) {
		s->truncated = true;
		return 0;
	}
	const uint8_t *h = s->buf + s->pos;
	if (get_le(h, 4) != CHUNK_MAGIC || snr_crc32c(0, h, 24) != get_le(h + 24, 4))
		return stream_fail(s, at, "chunk header is corrupt (bad magic or checksum)");
	uint16_t t = (uint16_t)get_le(h + 4, 2), codec = (uint16_t)get_le(h + 6, 2);
	if (get_le(h + 8, 4) != s->seq)
		return stream_fail(s, at, "chunk sequence number %u, expected %u", (unsigned)get_le(h + 8, 4), s->seq);
	uint32_t stored = (uint32_t)get_le(h + 12, 4), raw = (uint32_t)get_le(h + 16, 4);
	uint32_t crc = (uint32_t)get_le(h + 20, 4);
	if (raw > MAX_RAW_CHUNK || stored > MAX_RAW_CHUNK)
		return stream_fail(s, at, "payload of %u bytes is larger than any writer makes", raw > stored ? raw : stored);
	if (fill(s, CHUNK_HDR + (size_t)stored))
		return -1;
	if (s->len - s->pos < CHUNK_HDR + (size_t)stored) {
		s->truncated = true;
		return 0;
	}
	const uint8_t *p = s->buf + s->pos + CHUNK_HDR;
	if (snr_crc32c(0, p, stored) != crc)
		return stream_fail(s, at, "payload is corrupt: checksum mismatch");
	if (codec > CODEC_ZSTD || t < 1 || t > max_type)
		return stream_fail(s, at, "unknown chunk type %u or codec %u", t, codec);
	if (codec == CODEC_RAW) {
		if (stored != raw)
			return stream_fail(s, at, "raw payload sizes disagree (%u stored, %u raw)", stored, raw);
		*payload = p;
	} else {
		if (s->raw_cap < (size_t)raw + 1) {
			s->raw_cap = (size_t)raw + 1;
			free(s->raw);
			s->raw = snr_xmalloc(s->raw_cap);
		}
		size_t r = ZSTD_decompress(s->raw, raw, p, stored);
		if (ZSTD_isError(r))
			return stream_fail(s, at, "zstd: %s", ZSTD_getErrorName(r));
		if (r != raw)
			return stream_fail(s, at, "decompressed to %zu bytes, header says %u", r, raw);
		*payload = s->raw;
	}
	*type = t;
	*len = raw;
	s->pos += CHUNK_HDR + (size_t)stored;
	s->seq++;
	return 1;
}

void snr_chunks_close(struct snr_chunk_stream *s)
{
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	free(s->path);
	free(s->buf);
	free(s->raw);
	s->path = NULL;
	s->buf = s->raw = NULL;
}
