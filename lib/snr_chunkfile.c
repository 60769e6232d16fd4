/*
 * snr_chunkfile.c: see snr_chunkfile.h.
 *
 * The reader maps the whole file and checks every chunk's header and payload
 * CRC at open, so a flipped byte anywhere is reported with the chunk number
 * and file offset before any content is handed out.
 */
#include "snr_chunkfile.h"

#include "snr_partial.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/uio.h>
#include <unistd.h>
#include <zstd.h>

#define CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */
#define CHUNK_HDR 28
#define FILE_HDR 16
#define CODEC_RAW 0
#define CODEC_ZSTD 1
#define MAX_RAW_CHUNK (512u << 20)

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

void snr_buf_need(struct snr_buf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap * 2 : 4096;
	while (cap < b->len + n)
		cap *= 2;
	b->p = snr_xrealloc(b->p, cap);
	b->cap = cap;
}

void snr_buf_put(struct snr_buf *b, const void *d, size_t n)
{
	snr_buf_need(b, n);
	if (n)
		memcpy(b->p + b->len, d, n);
	b->len += n;
}

uint64_t snr_cur_varint_slow(struct snr_cursor *c)
{
	uint64_t v = 0;
	for (int shift = 0; shift < 64; shift += 7) {
		if (c->p >= c->end) {
			c->bad = 1;
			return 0;
		}
		uint8_t b = *c->p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
	c->bad = 1;
	return 0;
}


const uint8_t *snr_cur_bytes(struct snr_cursor *c, uint64_t n)
{
	if ((uint64_t)(c->end - c->p) < n) {
		c->bad = 1;
		return NULL;
	}
	const uint8_t *r = c->p;
	c->p += n;
	return r;
}

/* ---- writer ------------------------------------------------------------------ */

static int w_write(struct snr_chunk_writer *w, const void *d, size_t n)
{
	const uint8_t *p = d;
	while (n) {
		ssize_t r = write(w->fd, p, n);
		if (r < 0 && (errno == EINTR || (errno == ENOSPC && w->on_full && w->on_full(w->on_full_ctx))))
			continue;
		if (r <= 0) {
			if (!w->failed)
				snr_fmt(w->err, sizeof(w->err), "%s: write failed: %s", w->path,
					r < 0 ? strerror(errno) : "no space");
			w->failed = 1;
			return -1;
		}
		p += r;
		n -= (size_t)r;
		w->bytes += (uint64_t)r;
	}
	return 0;
}

int snr_chunkw_open(struct snr_chunk_writer *w, const char *path, enum snr_chunkw_mode mode, const char magic[8],
		    uint32_t version, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->out.fd = -1;
	if (mode == SNR_CHUNKW_ATOMIC) {
		if (snr_outfile_open(&w->out, path, err, errlen))
			return -1;
		w->fd = w->out.fd;
	} else {
		int excl = mode == SNR_CHUNKW_NEW ? O_EXCL : O_TRUNC;
		w->fd = open(path, O_WRONLY | O_CREAT | excl | O_CLOEXEC, 0644);
		if (w->fd < 0) {
			snr_fmt(err, errlen, "%s: %s", path,
				errno == EEXIST ? "exists already (a recording that did not end? snr does not overwrite it)"
						: strerror(errno));
			return -1;
		}
	}
	w->path = snr_xstrdup(path);
	uint8_t fh[FILE_HDR];
	memcpy(fh, magic, 8);
	put_le(fh + 8, version, 4);
	put_le(fh + 12, snr_crc32c(0, fh, 12), 4);
	if (w_write(w, fh, sizeof(fh))) {
		snr_fmt(err, errlen, "%s", w->err);
		snr_chunkw_abort(w);
		return -1;
	}
	return 0;
}

int snr_chunkw_flush(struct snr_chunk_writer *w)
{
	if (w->failed)
		return -1;
	if (w->held.len == 0)
		return 0;
	int rc = w_write(w, w->held.p, w->held.len);
	w->held.len = 0;
	return rc;
}

int snr_chunkw_mark(struct snr_chunk_writer *w, struct snr_chunkw_mark *m)
{
	if (snr_chunkw_flush(w))
		return -1;
	off_t at = lseek(w->fd, 0, SEEK_CUR);
	if (at < 0) {
		snr_fmt(w->err, sizeof(w->err), "%s: lseek failed: %s", w->path, strerror(errno));
		w->failed = 1;
		return -1;
	}
	*m = (struct snr_chunkw_mark){.offset = (int64_t)at, .seq = w->seq, .bytes = w->bytes};
	return 0;
}

int snr_chunkw_rewind(struct snr_chunk_writer *w, const struct snr_chunkw_mark *m)
{
	if (w->failed)
		return -1;
	w->held.len = 0;
	if (ftruncate(w->fd, (off_t)m->offset) || lseek(w->fd, (off_t)m->offset, SEEK_SET) < 0) {
		snr_fmt(w->err, sizeof(w->err), "%s: cutting back to byte %lld failed: %s", w->path,
			(long long)m->offset, strerror(errno));
		w->failed = 1;
		return -1;
	}
	w->seq = m->seq;
	w->bytes = m->bytes;
	return 0;
}

int snr_chunkw_create(struct snr_chunk_writer *w, const char *path, const char magic[8], uint32_t version,
		      char *err, size_t errlen)
{
	return snr_chunkw_open(w, path, SNR_CHUNKW_DIRECT, magic, version, err, errlen);
}

int snr_chunkw_put(struct snr_chunk_writer *w, unsigned type, const void *payload, size_t len, bool compress)
{
	if (w->failed)
		return -1;
	const uint8_t *stored = payload;
	size_t stored_len = len;
	uint16_t codec = CODEC_RAW;
	if (len > MAX_RAW_CHUNK) {
		snr_fmt(w->err, sizeof(w->err), "%s: internal error: a %zu-byte chunk", w->path, len);
		w->failed = 1;
		return -1;
	}
	if (compress && len > 64) {
		size_t bound = ZSTD_compressBound(len);
		w->zbuf.len = 0;
		snr_buf_need(&w->zbuf, bound);
		if (!w->zctx)
			w->zctx = ZSTD_createCCtx();
		size_t z = w->zctx ? ZSTD_compressCCtx(w->zctx, w->zbuf.p, bound, payload, len, w->level ? w->level : 3)
				   : ZSTD_compress(w->zbuf.p, bound, payload, len, w->level ? w->level : 3);
		if (!ZSTD_isError(z) && z < len) {
			stored = w->zbuf.p;
			stored_len = z;
			codec = CODEC_ZSTD;
		}
	}
	return snr_chunkw_put_stored(w, type, codec, stored, stored_len, len);
}

int snr_chunkw_put_stored(struct snr_chunk_writer *w, unsigned type, unsigned codec, const void *stored_p,
			  size_t stored_len, size_t len)
{
	const uint8_t *stored = stored_p;
	if (w->failed)
		return -1;
	uint8_t h[CHUNK_HDR];
	put_le(h, CHUNK_MAGIC, 4);
	put_le(h + 4, type, 2);
	put_le(h + 6, codec, 2);
	put_le(h + 8, w->seq++, 4);
	put_le(h + 12, stored_len, 4);
	put_le(h + 16, len, 4);
	put_le(h + 20, snr_crc32c(0, stored, stored_len), 4);
	put_le(h + 24, snr_crc32c(0, h, 24), 4);
	if (w->hold) {
		snr_buf_put(&w->held, h, sizeof(h));
		snr_buf_put(&w->held, stored, stored_len);
		return 0;
	}
	/* One system call per chunk: a writer killed between two leaves a
	 * partial chunk no less, but the common small chunk costs one. */
	struct iovec iov[2] = {{h, sizeof(h)}, {(void *)stored, stored_len}};
	ssize_t r;
	do
		r = writev(w->fd, iov, stored_len ? 2 : 1);
	while (r < 0 && (errno == EINTR || (errno == ENOSPC && w->on_full && w->on_full(w->on_full_ctx))));
	if (r == (ssize_t)(sizeof(h) + stored_len)) {
		w->bytes += (uint64_t)r;
		return 0;
	}
	if (r < 0) {
		snr_fmt(w->err, sizeof(w->err), "%s: write failed: %s", w->path, strerror(errno));
		w->failed = 1;
		return -1;
	}
	/* a short write: the rest, piece by piece */
	w->bytes += (uint64_t)r;
	size_t done = (size_t)r;
	if (done < sizeof(h) && w_write(w, h + done, sizeof(h) - done))
		return -1;
	size_t pdone = done > sizeof(h) ? done - sizeof(h) : 0;
	return w_write(w, stored + pdone, stored_len - pdone);
}

static void writer_free(struct snr_chunk_writer *w)
{
	free(w->zbuf.p);
	ZSTD_freeCCtx(w->zctx);
	w->zctx = NULL;
	free(w->held.p);
	w->held = (struct snr_buf){0};
	free(w->path);
	w->zbuf.p = NULL;
	w->path = NULL;
	w->fd = -1;
}

int snr_chunkw_close(struct snr_chunk_writer *w)
{
	int rc = snr_chunkw_flush(w);
	if (w->out.path) {
		if (rc) {
			snr_outfile_discard(&w->out);
		} else if (snr_outfile_commit(&w->out, w->err, sizeof(w->err))) {
			rc = -1;
		}
	} else if (w->fd >= 0 && close(w->fd) < 0 && !rc) {
		snr_fmt(w->err, sizeof(w->err), "%s: close failed: %s", w->path, strerror(errno));
		rc = -1;
	}
	writer_free(w);
	return rc;
}

void snr_chunkw_abort(struct snr_chunk_writer *w)
{
	if (w->out.path)
		snr_outfile_discard(&w->out);
	else if (w->fd >= 0)
		close(w->fd);
	writer_free(w);
}

/* ---- reader ------------------------------------------------------------------ */

int snr_chunkf_fail(struct snr_chunk_file *f, const struct snr_chunk *c, const char *fmt, ...)
{
	snr_partial_damaged(); /* a damaged file: snr exits 3 (snr_partial.h) */
	char what[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c)
		snprintf(f->err, sizeof(f->err), "%s: chunk %u (offset %llu): %s", f->path, c->seq,
			 (unsigned long long)c->offset, what);
	else
		snprintf(f->err, sizeof(f->err), "%s: %s", f->path, what);
	return -1;
}

int snr_chunkf_open(struct snr_chunk_file *f, const char *path, const char magic[8], const char *what,
		    uint32_t min_version, uint32_t max_version, unsigned max_type, char *err, size_t errlen)
{
	memset(f, 0, sizeof(*f));
	f->path = snr_xstrdup(path);
	int fd = snr_open_regular(path, err, errlen);
	struct stat st;
	int rc = -1;
	if (fd < 0)
		goto out;
	if (fstat(fd, &st) < 0) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		close(fd);
		goto out;
	}
	f->size = (size_t)st.st_size;
	if (f->size >= FILE_HDR) {
		f->map = mmap(NULL, f->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (f->map == MAP_FAILED)
			f->map = NULL;
	}
	close(fd);
	if (!f->map || memcmp(f->map, magic, 8)) {
		snr_fmt(err, errlen, "%s: not an %s (no %.8s header)", path, what, magic);
		goto out;
	}
	if (snr_crc32c(0, f->map, 12) != get_le(f->map + 12, 4)) {
		snr_fmt(err, errlen, "%s: file header (offset 0) is corrupt: checksum mismatch", path);
		snr_partial_damaged();
		goto out;
	}
	f->version = (uint32_t)get_le(f->map + 8, 4);
	if (f->version < min_version || f->version > max_version) {
		if (min_version == max_version)
			snr_fmt(err, errlen, "%s: %s format version %u; this snr reads version %u", path, what,
				f->version, min_version);
		else
			snr_fmt(err, errlen, "%s: %s format version %u; this snr reads versions %u to %u", path,
				what, f->version, min_version, max_version);
		goto out;
	}
	size_t cap = 0;
	uint64_t off = FILE_HDR;
	while (off < f->size) {
		struct snr_chunk c = {0};
		c.offset = off;
		c.seq = (uint32_t)f->nchunks;
		if (f->size - off < CHUNK_HDR) {
			f->truncated = true;
			break;
		}
		const uint8_t *h = f->map + off;
		if (get_le(h, 4) != CHUNK_MAGIC || snr_crc32c(0, h, 24) != get_le(h + 24, 4)) {
			snr_chunkf_fail(f, &c, "chunk header is corrupt (bad magic or checksum)");
			goto fail;
		}
		c.type = (uint16_t)get_le(h + 4, 2);
		c.codec = (uint16_t)get_le(h + 6, 2);
		if (get_le(h + 8, 4) != c.seq) {
			snr_chunkf_fail(f, &c, "chunk sequence number %u, expected %u", (unsigned)get_le(h + 8, 4), c.seq);
			goto fail;
		}
		c.stored_len = (uint32_t)get_le(h + 12, 4);
		c.raw_len = (uint32_t)get_le(h + 16, 4);
		if (f->size - off - CHUNK_HDR < c.stored_len) {
			f->truncated = true;
			break;
		}
		c.stored = h + CHUNK_HDR;
		if (snr_crc32c(0, c.stored, c.stored_len) != get_le(h + 20, 4)) {
			snr_chunkf_fail(f, &c, "payload is corrupt: checksum mismatch");
			goto fail;
		}
		if (c.codec > CODEC_ZSTD || c.type < 1 || c.type > max_type) {
			snr_chunkf_fail(f, &c, "unknown chunk type %u or codec %u", c.type, c.codec);
			goto fail;
		}
		if (f->nchunks == cap) {
			cap = cap ? cap * 2 : 64;
			f->chunks = snr_xrealloc(f->chunks, cap * sizeof(*f->chunks));
		}
		f->chunks[f->nchunks++] = c;
		off += CHUNK_HDR + c.stored_len;
	}
	return 0;
fail:
	snr_fmt(err, errlen, "%s", f->err);
out:
	snr_chunkf_close(f);
	return rc;
}

void snr_chunkf_close(struct snr_chunk_file *f)
{
	if (f->map)
		munmap(f->map, f->size);
	free(f->chunks);
	free(f->raw);
	free(f->path);
	memset(f, 0, sizeof(*f));
}

long snr_chunkf_payload(struct snr_chunk_file *f, const struct snr_chunk *c)
{
	if (c->raw_len > MAX_RAW_CHUNK)
		return snr_chunkf_fail(f, c, "payload of %u bytes is larger than any writer makes", c->raw_len);
	if (f->raw_cap < (size_t)c->raw_len + 1) {
		f->raw_cap = (size_t)c->raw_len + 1;
		free(f->raw);
		f->raw = snr_xmalloc(f->raw_cap);
	}
	if (c->codec == CODEC_RAW) {
		if (c->stored_len != c->raw_len)
			return snr_chunkf_fail(f, c, "raw payload sizes disagree (%u stored, %u raw)", c->stored_len,
					       c->raw_len);
		memcpy(f->raw, c->stored, c->raw_len);
	} else {
		size_t r = ZSTD_decompress(f->raw, c->raw_len, c->stored, c->stored_len);
		if (ZSTD_isError(r))
			return snr_chunkf_fail(f, c, "zstd: %s", ZSTD_getErrorName(r));
		if (r != c->raw_len)
			return snr_chunkf_fail(f, c, "decompressed to %zu bytes, header says %u", r, c->raw_len);
	}
	f->raw[c->raw_len] = 0;
	return (long)c->raw_len;
}
