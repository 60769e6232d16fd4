/*
 * snr_chunkfile.h: the container shared by snr's binary files (traces
 * .snrt, metrics .snrm): a 16-byte file header (8-byte magic, u32 version,
 * CRC-32C) and a sequence of chunks, each a 28-byte header
 *
 *   u32 "CHNK" | u16 type | u16 codec (0 raw, 1 zstd) | u32 seq |
 *   u32 stored length | u32 raw length | u32 CRC-32C of the stored payload |
 *   u32 CRC-32C of the 24 header bytes before it
 *
 * followed by the payload. All little-endian. Written as a stream; a file
 * cut short ends in at most one partial chunk, which the reader reports as
 * truncation, not corruption. docs/trace-format.md has the details.
 */
#ifndef SNR_CHUNKFILE_H
#define SNR_CHUNKFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "snr_crc.h"
#include "snr_outfile.h"
#include "snr_util.h"

struct snr_buf {
	uint8_t *p;
	size_t len, cap;
};

void snr_buf_need(struct snr_buf *b, size_t n);
void snr_buf_put(struct snr_buf *b, const void *d, size_t n);
/* Inline: the metrics writer puts every event field through these. */
static inline void snr_buf_u8(struct snr_buf *b, uint8_t v)
{
	if (b->len == b->cap)
		snr_buf_need(b, 1);
	b->p[b->len++] = v;
}
static inline void snr_buf_varint(struct snr_buf *b, uint64_t v)
{
	if (b->cap - b->len < 10)
		snr_buf_need(b, 10);
	uint8_t *p = b->p + b->len;
	while (v >= 0x80) {
		*p++ = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	*p++ = (uint8_t)v;
	b->len = (size_t)(p - b->p);
}
static inline uint64_t snr_zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static inline int64_t snr_unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* A bounds-checked reading cursor: after any overrun `bad` is set and reads
 * return zeros / NULL. */
struct snr_cursor {
	const uint8_t *p, *end;
	int bad;
};
uint64_t snr_cur_varint_slow(struct snr_cursor *c);
/* A varint; most fields are one byte (the metrics file's deltas), read here
 * without a call. */
static inline uint64_t snr_cur_varint(struct snr_cursor *c)
{
	if (c->p < c->end && *c->p < 0x80)
		return *c->p++;
	return snr_cur_varint_slow(c);
}
static inline uint8_t snr_cur_u8(struct snr_cursor *c)
{
	if (c->p < c->end)
		return *c->p++;
	c->bad = 1;
	return 0;
}
const uint8_t *snr_cur_bytes(struct snr_cursor *c, uint64_t n);

/* How a chunk writer treats its path: DIRECT truncates and writes in place
 * (a stream a reader may follow, or find cut short), ATOMIC writes a
 * temporary file renamed into place by a successful close
 * (lib/snr_outfile.h), NEW refuses a path that exists. */
enum snr_chunkw_mode { SNR_CHUNKW_DIRECT, SNR_CHUNKW_ATOMIC, SNR_CHUNKW_NEW };

struct snr_chunk_writer {
	int fd;
	char *path;
	struct snr_outfile out; /* ATOMIC */
	uint32_t seq;
	uint64_t bytes;
	int failed;
	char err[300];
	struct snr_buf zbuf;
	void *zctx; /* a ZSTD_CCtx made by the first compressed chunk and kept: one per chunk cost an
		     * allocation, its tables' first-touch page faults and their reset (same bytes out) */
	int level; /* zstd level; 0 means 3. Metrics use 1: written at replay speed. */
	bool hold; /* chunks gather in held until snr_chunkw_flush (or mark, close) */
	struct snr_buf held;
	/* Called when a write finds the disk full (ENOSPC): nonzero if it freed
	 * space, and the write is tried again (the recorder's journal drops the
	 * trace written alongside it). Set after opening; NULL: none. */
	int (*on_full)(void *ctx);
	void *on_full_ctx;
};

int snr_chunkw_create(struct snr_chunk_writer *w, const char *path, const char magic[8], uint32_t version,
		      char *err, size_t errlen);
int snr_chunkw_open(struct snr_chunk_writer *w, const char *path, enum snr_chunkw_mode mode, const char magic[8],
		    uint32_t version, char *err, size_t errlen);
int snr_chunkw_put(struct snr_chunk_writer *w, unsigned type, const void *payload, size_t len, bool compress);
/* A payload already stored (codec applied), with the raw length it claims:
 * for tools that copy or forge chunks. */
int snr_chunkw_put_stored(struct snr_chunk_writer *w, unsigned type, unsigned codec, const void *stored,
			  size_t stored_len, size_t raw_len);
/* Where the file ends now, and cutting it back there (a DIRECT or NEW
 * file): the chunks written since are gone, the next one is numbered as
 * it would have been. */
struct snr_chunkw_mark {
	int64_t offset;
	uint32_t seq;
	uint64_t bytes;
};
int snr_chunkw_mark(struct snr_chunk_writer *w, struct snr_chunkw_mark *m);
/* Writes the chunks held (w->hold) in one go. */
int snr_chunkw_flush(struct snr_chunk_writer *w);
int snr_chunkw_rewind(struct snr_chunk_writer *w, const struct snr_chunkw_mark *m);
/* Closes the file (an ATOMIC one renamed into place); returns -1 if any
 * write failed (w->err says which; an ATOMIC destination is then untouched). */
int snr_chunkw_close(struct snr_chunk_writer *w);
/* Closes without committing: an ATOMIC file's destination stays as it was. */
void snr_chunkw_abort(struct snr_chunk_writer *w);

struct snr_chunk {
	uint16_t type, codec;
	uint32_t seq;
	uint64_t offset; /* of the chunk header in the file */
	const uint8_t *stored;
	uint32_t stored_len, raw_len;
};

struct snr_chunk_file {
	char *path;
	uint8_t *map;
	size_t size;
	uint32_t version;
	struct snr_chunk *chunks;
	size_t nchunks;
	bool truncated; /* ended in a partial chunk (or right after the header) */
	uint8_t *raw;   /* the last payload loaded */
	size_t raw_cap;
	char err[600];
};

/* Maps path, checks the magic, the version (min..max) and every chunk's
 * CRCs and sequence numbers, accepting types 1..max_type. `what` names the
 * kind of file in messages ("snr trace"). */
int snr_chunkf_open(struct snr_chunk_file *f, const char *path, const char magic[8], const char *what,
		    uint32_t min_version, uint32_t max_version, unsigned max_type, char *err, size_t errlen);
void snr_chunkf_close(struct snr_chunk_file *f);
/* Decompresses a chunk into f->raw (NUL-terminated); its length, or -1. */
long snr_chunkf_payload(struct snr_chunk_file *f, const struct snr_chunk *c);
/* Sets f->err to "PATH: chunk N (offset X): message"; returns -1. */
int snr_chunkf_fail(struct snr_chunk_file *f, const struct snr_chunk *c, const char *fmt, ...) SNR_PRINTF(3, 4);

#endif
