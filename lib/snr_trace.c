/*
 * snr_trace.c: writer and reader of the .snrt trace file (see snr_trace.h
 * and docs/trace-format.md).
 *
 * The reader maps the whole file and checks every chunk's header and payload
 * CRC when it opens it, so a flipped byte anywhere is reported at open with
 * the chunk number and file offset, before any step is handed out. Payload
 * parsing is bounds-checked as well (a CRC-valid payload can still be
 * malformed if a writer was buggy), and the reader is fuzzed
 * (tests/fuzz/fuzz_trace.c).
 */
#include "snr_trace.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "snr_util.h"

#define CHUNK_MAGIC 0x4b4e4843u /* "CHNK" */
#define CHUNK_HDR 28
#define FILE_HDR 16
#define CODEC_RAW 0
#define CODEC_ZSTD 1
#define STEPS_PER_CHUNK 4096
#define STEPS_BYTES_PER_CHUNK (4u << 20)
#define MAX_RAW_CHUNK (512u << 20)

/* ---- checksums and encodings -------------------------------------------- */

static uint32_t crc_table[8][256];
static int crc_ready;

static void crc_init(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0x82f63b78u & (0u - (c & 1)));
		crc_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			crc_table[t][i] = (crc_table[t - 1][i] >> 8) ^ crc_table[0][crc_table[t - 1][i] & 0xff];
	crc_ready = 1;
}

uint32_t snr_crc32c(uint32_t crc, const void *data, size_t len)
{
	if (!crc_ready)
		crc_init();
	const uint8_t *p = data;
	crc = ~crc;
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		v ^= crc;
		crc = crc_table[7][v & 0xff] ^ crc_table[6][(v >> 8) & 0xff] ^ crc_table[5][(v >> 16) & 0xff] ^
		      crc_table[4][(v >> 24) & 0xff] ^ crc_table[3][(v >> 32) & 0xff] ^
		      crc_table[2][(v >> 40) & 0xff] ^ crc_table[1][(v >> 48) & 0xff] ^ crc_table[0][v >> 56];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc >> 8) ^ crc_table[0][(crc ^ *p++) & 0xff];
	return ~crc;
}

uint64_t snr_trace_hash(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

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

struct buf {
	uint8_t *p;
	size_t len, cap;
};

static void buf_need(struct buf *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	size_t cap = b->cap ? b->cap * 2 : 4096;
	while (cap < b->len + n)
		cap *= 2;
	b->p = snr_xrealloc(b->p, cap);
	b->cap = cap;
}

static void buf_put(struct buf *b, const void *d, size_t n)
{
	buf_need(b, n);
	memcpy(b->p + b->len, d, n);
	b->len += n;
}

static void buf_u8(struct buf *b, uint8_t v) { buf_put(b, &v, 1); }

static void buf_varint(struct buf *b, uint64_t v)
{
	uint8_t tmp[10];
	int n = 0;
	do {
		tmp[n] = (uint8_t)(v & 0x7f);
		v >>= 7;
		if (v)
			tmp[n] |= 0x80;
		n++;
	} while (v);
	buf_put(b, tmp, (size_t)n);
}

static uint64_t zigzag(int64_t v) { return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63); }
static int64_t unzigzag(uint64_t v) { return (int64_t)(v >> 1) ^ -(int64_t)(v & 1); }

/* A bounds-checked cursor over a payload. */
struct cur {
	const uint8_t *p, *end;
	int bad;
};

static uint64_t cur_varint(struct cur *c)
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

static uint8_t cur_u8(struct cur *c)
{
	if (c->p >= c->end) {
		c->bad = 1;
		return 0;
	}
	return *c->p++;
}

static const uint8_t *cur_bytes(struct cur *c, uint64_t n)
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

struct snr_trace_writer {
	int fd;
	char *path;
	uint32_t seq;
	uint64_t bytes;
	int failed;
	char err[256];
	size_t nregs;
	uint16_t *reg_size;
	struct buf steps;
	uint64_t steps_first, steps_count, next_index;
	uint64_t prev_next_pc;
	struct buf zbuf;
};

static int w_write(struct snr_trace_writer *w, const void *d, size_t n)
{
	const uint8_t *p = d;
	while (n) {
		ssize_t r = write(w->fd, p, n);
		if (r < 0 && errno == EINTR)
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

static int w_chunk(struct snr_trace_writer *w, enum snr_chunk_type type, const uint8_t *payload, size_t len,
		   bool compress)
{
	if (w->failed)
		return -1;
	const uint8_t *stored = payload;
	size_t stored_len = len;
	uint16_t codec = CODEC_RAW;
	if (compress && len > 64) {
		size_t bound = ZSTD_compressBound(len);
		w->zbuf.len = 0;
		buf_need(&w->zbuf, bound);
		size_t z = ZSTD_compress(w->zbuf.p, bound, payload, len, 3);
		if (!ZSTD_isError(z) && z < len) {
			stored = w->zbuf.p;
			stored_len = z;
			codec = CODEC_ZSTD;
		}
	}
	uint8_t h[CHUNK_HDR];
	put_le(h, CHUNK_MAGIC, 4);
	put_le(h + 4, type, 2);
	put_le(h + 6, codec, 2);
	put_le(h + 8, w->seq++, 4);
	put_le(h + 12, stored_len, 4);
	put_le(h + 16, len, 4);
	put_le(h + 20, snr_crc32c(0, stored, stored_len), 4);
	put_le(h + 24, snr_crc32c(0, h, 24), 4);
	if (w_write(w, h, sizeof(h)) || w_write(w, stored, stored_len))
		return -1;
	return 0;
}

struct snr_trace_writer *snr_trace_create(const char *path, const char *meta_json, char *err, size_t errlen)
{
	json_error_t je;
	json_t *meta = json_loads(meta_json, 0, &je);
	json_t *regs = meta ? json_object_get(meta, "registers") : NULL;
	if (!json_is_array(regs) || json_array_size(regs) == 0 || json_array_size(regs) > 65535) {
		snr_fmt(err, errlen, "internal error: trace metadata lacks a register table");
		json_decref(meta);
		return NULL;
	}
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		json_decref(meta);
		return NULL;
	}
	struct snr_trace_writer *w = snr_xcalloc(1, sizeof(*w));
	w->fd = fd;
	w->path = snr_xstrdup(path);
	w->nregs = json_array_size(regs);
	w->reg_size = snr_xcalloc(w->nregs, sizeof(*w->reg_size));
	for (size_t i = 0; i < w->nregs; i++)
		w->reg_size[i] = (uint16_t)json_integer_value(json_object_get(json_array_get(regs, i), "size"));
	json_decref(meta);
	uint8_t fh[FILE_HDR];
	memcpy(fh, SNR_TRACE_MAGIC, 8);
	put_le(fh + 8, SNR_TRACE_VERSION, 4);
	put_le(fh + 12, snr_crc32c(0, fh, 12), 4);
	if (w_write(w, fh, sizeof(fh)) ||
	    w_chunk(w, SNR_CHUNK_META, (const uint8_t *)meta_json, strlen(meta_json), false)) {
		snr_fmt(err, errlen, "%s", w->err);
		snr_trace_abandon(w);
		return NULL;
	}
	return w;
}

int snr_trace_write_symbols(struct snr_trace_writer *w, size_t n, const uint64_t *addr, const uint64_t *size,
			    const char *const *name)
{
	struct buf b = {0};
	buf_varint(&b, n);
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(name[i]);
		buf_varint(&b, zigzag((int64_t)(addr[i] - prev)));
		buf_varint(&b, size[i]);
		buf_varint(&b, nl);
		buf_put(&b, name[i], nl);
		prev = addr[i];
	}
	int rc = w_chunk(w, SNR_CHUNK_SYMBOLS, b.p, b.len, true);
	free(b.p);
	return rc;
}

static int flush_steps(struct snr_trace_writer *w)
{
	if (!w->steps_count)
		return 0;
	struct buf b = {0};
	buf_varint(&b, w->steps_first);
	buf_varint(&b, w->steps_count);
	buf_put(&b, w->steps.p, w->steps.len);
	int rc = w_chunk(w, SNR_CHUNK_STEPS, b.p, b.len, true);
	free(b.p);
	w->steps.len = 0;
	w->steps_first += w->steps_count;
	w->steps_count = 0;
	return rc;
}

static int put_regs(struct snr_trace_writer *w, unsigned n, const struct snr_trace_regval *regs)
{
	buf_varint(&w->steps, n);
	for (unsigned i = 0; i < n; i++) {
		uint16_t r = regs[i].reg;
		if (r >= w->nregs) {
			snr_fmt(w->err, sizeof(w->err), "internal error: register %u out of range", r);
			w->failed = 1;
			return -1;
		}
		buf_varint(&w->steps, r);
		buf_put(&w->steps, regs[i].val, w->reg_size[r]);
	}
	return 0;
}

static void put_mems(struct buf *b, unsigned n, const struct snr_trace_mem *mem)
{
	buf_varint(b, n);
	for (unsigned i = 0; i < n; i++) {
		buf_u8(b, mem[i].space);
		buf_varint(b, mem[i].chip);
		buf_varint(b, mem[i].addr);
		buf_varint(b, mem[i].len);
		buf_put(b, mem[i].data, mem[i].len);
	}
}

int snr_trace_add_step(struct snr_trace_writer *w, const struct snr_trace_step *s)
{
	if (w->failed)
		return -1;
	if (s->index != w->next_index) {
		snr_fmt(w->err, sizeof(w->err), "internal error: step %llu added after %llu",
			(unsigned long long)s->index, (unsigned long long)w->next_index);
		w->failed = 1;
		return -1;
	}
	struct buf *b = &w->steps;
	uint8_t flags = (s->code_len ? 1 : 0) | (s->nregs ? 2 : 0) | (s->nmem ? 4 : 0) |
			(s->npost_regs ? 8 : 0) | (s->npost_mem ? 16 : 0);
	buf_u8(b, flags);
	buf_varint(b, zigzag((int64_t)(s->pc - w->prev_next_pc)));
	if (s->code_len) {
		buf_u8(b, s->code_len);
		buf_put(b, s->code, s->code_len);
	}
	if ((s->nregs && put_regs(w, s->nregs, s->regs)) || (s->npost_regs && put_regs(w, s->npost_regs, s->post_regs)))
		return -1;
	if (s->nmem)
		put_mems(b, s->nmem, s->mem);
	if (s->npost_mem)
		put_mems(b, s->npost_mem, s->post_mem);
	/* The common next pc is the fall-through one: 4 on TA1, the decoded
	 * length elsewhere; the writer only knows the code when given, so the
	 * delta base is the previous pc + 4 (small either way). */
	w->prev_next_pc = s->pc + 4;
	w->next_index++;
	w->steps_count++;
	if (w->steps_count >= STEPS_PER_CHUNK || b->len >= STEPS_BYTES_PER_CHUNK)
		return flush_steps(w);
	return 0;
}

int snr_trace_write_digest(struct snr_trace_writer *w, const uint8_t *const *regs, size_t nmem,
			   const struct snr_trace_mem *mem)
{
	if (flush_steps(w))
		return -1;
	struct buf b = {0};
	size_t known = 0;
	for (size_t i = 0; i < w->nregs; i++)
		known += regs[i] != NULL;
	buf_varint(&b, known);
	for (size_t i = 0; i < w->nregs; i++)
		if (regs[i]) {
			buf_varint(&b, i);
			buf_put(&b, regs[i], w->reg_size[i]);
		}
	/* Split every region at SNR_TRACE_DIGEST_BLOCK-aligned addresses. */
	size_t nblocks = 0;
	struct buf blocks = {0};
	for (size_t i = 0; i < nmem; i++) {
		uint64_t a = mem[i].addr, end = mem[i].addr + mem[i].len;
		while (a < end) {
			uint64_t next = (a / SNR_TRACE_DIGEST_BLOCK + 1) * SNR_TRACE_DIGEST_BLOCK;
			if (next > end || next < a)
				next = end;
			buf_u8(&blocks, mem[i].space);
			buf_varint(&blocks, mem[i].chip);
			buf_varint(&blocks, a);
			buf_varint(&blocks, next - a);
			uint64_t h = snr_trace_hash(mem[i].data + (a - mem[i].addr), next - a);
			uint8_t hb[8];
			put_le(hb, h, 8);
			buf_put(&blocks, hb, 8);
			nblocks++;
			a = next;
		}
	}
	buf_varint(&b, nblocks);
	if (blocks.len)
		buf_put(&b, blocks.p, blocks.len);
	free(blocks.p);
	int rc = w_chunk(w, SNR_CHUNK_DIGEST, b.p, b.len, true);
	free(b.p);
	return rc;
}

static void writer_free(struct snr_trace_writer *w)
{
	free(w->steps.p);
	free(w->zbuf.p);
	free(w->reg_size);
	free(w->path);
	free(w);
}

int snr_trace_finish(struct snr_trace_writer *w, const char *end_json)
{
	int rc = flush_steps(w);
	if (!rc)
		rc = w_chunk(w, SNR_CHUNK_END, (const uint8_t *)end_json, strlen(end_json), false);
	if (close(w->fd) < 0 && !rc) {
		snr_fmt(w->err, sizeof(w->err), "%s: close failed: %s", w->path, strerror(errno));
		rc = -1;
	}
	if (rc)
		snr_err("%s", w->err);
	writer_free(w);
	return rc;
}

void snr_trace_abandon(struct snr_trace_writer *w)
{
	if (!w)
		return;
	flush_steps(w);
	close(w->fd);
	writer_free(w);
}

const char *snr_trace_writer_error(struct snr_trace_writer *w) { return w->err; }
uint64_t snr_trace_bytes_written(const struct snr_trace_writer *w) { return w->bytes + w->steps.len; }

/* ---- reader ------------------------------------------------------------------ */

struct chunk {
	uint16_t type, codec;
	uint64_t offset; /* of the header */
	uint32_t seq;
	const uint8_t *stored;
	uint32_t stored_len, raw_len;
};

struct trace_symbol {
	uint64_t addr, size;
	char *name;
};

struct snr_trace {
	char *path;
	uint8_t *map;
	size_t size;
	struct chunk *chunks;
	size_t nchunks;
	char *meta;
	char *end;
	size_t nregs;
	struct snr_trace_reg *regs;
	struct trace_symbol *syms;
	size_t nsyms;
	bool truncated;
	char err[512];
	/* step iteration */
	size_t cur_chunk;
	uint8_t *raw;
	size_t raw_cap;
	struct cur c;
	uint64_t remaining, index, next_pc;
	uint64_t chunk_first;
	struct snr_trace_regval *rv;
	size_t rv_cap;
	struct snr_trace_mem *mv;
	size_t mv_cap;
	struct snr_trace_regval *prv;
	size_t prv_cap;
	struct snr_trace_mem *pmv;
	size_t pmv_cap;
	/* digest */
	bool has_digest;
	uint8_t **dregs;
	struct snr_trace_mem *dblocks;
	uint64_t *dhashes;
	size_t ndblocks;
};

static int terr(struct snr_trace *t, const struct chunk *c, const char *fmt, ...) SNR_PRINTF(3, 4);

static int terr(struct snr_trace *t, const struct chunk *c, const char *fmt, ...)
{
	char what[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	if (c)
		snprintf(t->err, sizeof(t->err), "%s: chunk %u (offset %llu): %s", t->path, c->seq,
			 (unsigned long long)c->offset, what);
	else
		snprintf(t->err, sizeof(t->err), "%s: %s", t->path, what);
	return -1;
}

/* Decompresses chunk c into t->raw; returns its length or -1. */
static long load_payload(struct snr_trace *t, const struct chunk *c)
{
	if (c->raw_len > MAX_RAW_CHUNK)
		return terr(t, c, "payload of %u bytes is larger than any writer makes", c->raw_len);
	if (t->raw_cap < (size_t)c->raw_len + 1) {
		t->raw_cap = (size_t)c->raw_len + 1;
		free(t->raw);
		t->raw = snr_xmalloc(t->raw_cap);
	}
	if (c->codec == CODEC_RAW) {
		if (c->stored_len != c->raw_len)
			return terr(t, c, "raw payload sizes disagree (%u stored, %u raw)", c->stored_len, c->raw_len);
		memcpy(t->raw, c->stored, c->raw_len);
	} else {
		size_t r = ZSTD_decompress(t->raw, c->raw_len, c->stored, c->stored_len);
		if (ZSTD_isError(r))
			return terr(t, c, "zstd: %s", ZSTD_getErrorName(r));
		if (r != c->raw_len)
			return terr(t, c, "decompressed to %zu bytes, header says %u", r, c->raw_len);
	}
	t->raw[c->raw_len] = 0;
	return (long)c->raw_len;
}

static int parse_meta(struct snr_trace *t, const struct chunk *c)
{
	if (load_payload(t, c) < 0)
		return -1;
	t->meta = snr_xstrdup((const char *)t->raw);
	json_error_t je;
	json_t *m = json_loads(t->meta, 0, &je);
	if (!m)
		return terr(t, c, "metadata is not JSON: line %d: %s", je.line, je.text);
	json_t *regs = json_object_get(m, "registers");
	if (!json_is_array(regs) || !json_array_size(regs) || json_array_size(regs) > 65535) {
		json_decref(m);
		return terr(t, c, "metadata has no register table");
	}
	t->nregs = json_array_size(regs);
	t->regs = snr_xcalloc(t->nregs, sizeof(*t->regs));
	for (size_t i = 0; i < t->nregs; i++) {
		json_t *r = json_array_get(regs, i);
		const char *name = json_string_value(json_object_get(r, "name"));
		json_int_t size = json_integer_value(json_object_get(r, "size"));
		if (!name || size < 1 || size > 256) {
			json_decref(m);
			return terr(t, c, "register %zu in the metadata has no name or a bad size", i);
		}
		snprintf(t->regs[i].name, sizeof(t->regs[i].name), "%s", name);
		t->regs[i].size = (uint16_t)size;
	}
	json_decref(m);
	return 0;
}

static int parse_symbols(struct snr_trace *t, const struct chunk *c)
{
	long n = load_payload(t, c);
	if (n < 0)
		return -1;
	struct cur cu = {t->raw, t->raw + n, 0};
	uint64_t count = cur_varint(&cu), prev = 0;
	if (count > (uint64_t)n)
		return terr(t, c, "symbol count %llu exceeds the payload", (unsigned long long)count);
	t->syms = snr_xcalloc(count ? count : 1, sizeof(*t->syms));
	for (uint64_t i = 0; i < count && !cu.bad; i++) {
		uint64_t addr = prev + (uint64_t)unzigzag(cur_varint(&cu));
		uint64_t size = cur_varint(&cu), nl = cur_varint(&cu);
		const uint8_t *name = nl < 4096 ? cur_bytes(&cu, nl) : (cu.bad = 1, NULL);
		if (cu.bad)
			break;
		struct trace_symbol *s = &t->syms[t->nsyms++];
		s->addr = addr;
		s->size = size;
		s->name = snr_xmalloc(nl + 1);
		memcpy(s->name, name, nl);
		s->name[nl] = 0;
		prev = addr;
	}
	if (cu.bad)
		return terr(t, c, "symbol table is malformed");
	return 0;
}

static int parse_digest(struct snr_trace *t, const struct chunk *c)
{
	long n = load_payload(t, c);
	if (n < 0)
		return -1;
	uint8_t *raw = snr_xmalloc((size_t)n + 1);
	memcpy(raw, t->raw, (size_t)n);
	struct cur cu = {raw, raw + n, 0};
	t->dregs = snr_xcalloc(t->nregs, sizeof(*t->dregs));
	uint64_t known = cur_varint(&cu);
	for (uint64_t i = 0; i < known && !cu.bad; i++) {
		uint64_t r = cur_varint(&cu);
		if (r >= t->nregs) {
			free(raw);
			return terr(t, c, "digest names register %llu of %zu", (unsigned long long)r, t->nregs);
		}
		const uint8_t *v = cur_bytes(&cu, t->regs[r].size);
		if (v) {
			free(t->dregs[r]);
			t->dregs[r] = snr_xmalloc(t->regs[r].size);
			memcpy(t->dregs[r], v, t->regs[r].size);
		}
	}
	uint64_t nb = cur_varint(&cu);
	if (nb > (uint64_t)n) {
		free(raw);
		return terr(t, c, "digest block count %llu exceeds the payload", (unsigned long long)nb);
	}
	t->dblocks = snr_xcalloc(nb ? nb : 1, sizeof(*t->dblocks));
	t->dhashes = snr_xcalloc(nb ? nb : 1, sizeof(*t->dhashes));
	for (uint64_t i = 0; i < nb && !cu.bad; i++) {
		struct snr_trace_mem *b = &t->dblocks[i];
		b->space = cur_u8(&cu);
		b->chip = (uint16_t)cur_varint(&cu);
		b->addr = cur_varint(&cu);
		b->len = cur_varint(&cu);
		const uint8_t *h = cur_bytes(&cu, 8);
		if (h)
			t->dhashes[i] = get_le(h, 8);
		if (b->len == 0 || b->len > SNR_TRACE_DIGEST_BLOCK)
			cu.bad = 1;
		t->ndblocks = i + 1;
	}
	free(raw);
	if (cu.bad)
		return terr(t, c, "digest is malformed");
	t->has_digest = true;
	return 0;
}

struct snr_trace *snr_trace_open(const char *path, char *err, size_t errlen)
{
	struct snr_trace *t = snr_xcalloc(1, sizeof(*t));
	t->path = snr_xstrdup(path);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct stat st;
	if (fd < 0 || fstat(fd, &st) < 0) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		if (fd >= 0)
			close(fd);
		snr_trace_close(t);
		return NULL;
	}
	t->size = (size_t)st.st_size;
	if (t->size >= FILE_HDR) {
		t->map = mmap(NULL, t->size, PROT_READ, MAP_PRIVATE, fd, 0);
		if (t->map == MAP_FAILED)
			t->map = NULL;
	}
	close(fd);
	if (!t->map || memcmp(t->map, SNR_TRACE_MAGIC, 8)) {
		snr_fmt(err, errlen, "%s: not an snr trace (no SNRTRACE header)", path);
		snr_trace_close(t);
		return NULL;
	}
	if (snr_crc32c(0, t->map, 12) != get_le(t->map + 12, 4)) {
		snr_fmt(err, errlen, "%s: file header (offset 0) is corrupt: checksum mismatch", path);
		snr_trace_close(t);
		return NULL;
	}
	uint32_t version = (uint32_t)get_le(t->map + 8, 4);
	if (version != SNR_TRACE_VERSION) {
		snr_fmt(err, errlen, "%s: trace format version %u; this snr reads version %d", path, version,
			SNR_TRACE_VERSION);
		snr_trace_close(t);
		return NULL;
	}
	size_t cap = 0;
	uint64_t off = FILE_HDR;
	int rc = 0;
	while (off < t->size) {
		struct chunk c = {0};
		c.offset = off;
		c.seq = (uint32_t)t->nchunks;
		if (t->size - off < CHUNK_HDR) {
			t->truncated = true;
			break;
		}
		const uint8_t *h = t->map + off;
		if (get_le(h, 4) != CHUNK_MAGIC || snr_crc32c(0, h, 24) != get_le(h + 24, 4)) {
			rc = terr(t, &c, "chunk header is corrupt (bad magic or checksum)");
			break;
		}
		c.type = (uint16_t)get_le(h + 4, 2);
		c.codec = (uint16_t)get_le(h + 6, 2);
		if (get_le(h + 8, 4) != c.seq) {
			rc = terr(t, &c, "chunk sequence number %u, expected %u", (unsigned)get_le(h + 8, 4), c.seq);
			break;
		}
		c.stored_len = (uint32_t)get_le(h + 12, 4);
		c.raw_len = (uint32_t)get_le(h + 16, 4);
		if (t->size - off - CHUNK_HDR < c.stored_len) {
			t->truncated = true;
			break;
		}
		c.stored = h + CHUNK_HDR;
		if (snr_crc32c(0, c.stored, c.stored_len) != get_le(h + 20, 4)) {
			rc = terr(t, &c, "payload is corrupt: checksum mismatch");
			break;
		}
		if (c.codec > CODEC_ZSTD || c.type < SNR_CHUNK_META || c.type > SNR_CHUNK_END) {
			rc = terr(t, &c, "unknown chunk type %u or codec %u", c.type, c.codec);
			break;
		}
		if ((c.seq == 0) != (c.type == SNR_CHUNK_META)) {
			rc = terr(t, &c, c.seq == 0 ? "the first chunk is not META" : "a second META chunk");
			break;
		}
		if (t->nchunks == cap) {
			cap = cap ? cap * 2 : 64;
			t->chunks = snr_xrealloc(t->chunks, cap * sizeof(*t->chunks));
		}
		t->chunks[t->nchunks++] = c;
		off += CHUNK_HDR + c.stored_len;
		if (c.type == SNR_CHUNK_END && off != t->size) {
			c.offset = off;
			c.seq++;
			rc = terr(t, &c, "data after the END chunk");
			break;
		}
	}
	if (!rc && t->nchunks == 0)
		rc = terr(t, NULL, "no META chunk: the trace is empty");
	for (size_t i = 0; !rc && i < t->nchunks; i++) {
		const struct chunk *c = &t->chunks[i];
		switch (c->type) {
		case SNR_CHUNK_META: rc = parse_meta(t, c); break;
		case SNR_CHUNK_SYMBOLS: rc = t->syms ? terr(t, c, "a second SYMBOLS chunk") : parse_symbols(t, c); break;
		case SNR_CHUNK_DIGEST: rc = t->has_digest ? terr(t, c, "a second DIGEST chunk") : parse_digest(t, c); break;
		case SNR_CHUNK_END:
			if (load_payload(t, c) < 0) {
				rc = -1;
				break;
			}
			t->end = snr_xstrdup((const char *)t->raw);
			break;
		case SNR_CHUNK_STEPS:
			if (t->has_digest)
				rc = terr(t, c, "STEPS after the DIGEST");
			break;
		}
	}
	if (!rc && !t->end)
		t->truncated = true;
	if (rc) {
		snr_fmt(err, errlen, "%s", t->err);
		snr_trace_close(t);
		return NULL;
	}
	snr_trace_rewind(t);
	return t;
}

void snr_trace_close(struct snr_trace *t)
{
	if (!t)
		return;
	if (t->map)
		munmap(t->map, t->size);
	for (size_t i = 0; i < t->nsyms; i++)
		free(t->syms[i].name);
	if (t->dregs)
		for (size_t i = 0; i < t->nregs; i++)
			free(t->dregs[i]);
	free(t->dregs);
	free(t->dblocks);
	free(t->dhashes);
	free(t->syms);
	free(t->chunks);
	free(t->meta);
	free(t->end);
	free(t->regs);
	free(t->raw);
	free(t->rv);
	free(t->mv);
	free(t->prv);
	free(t->pmv);
	free(t->path);
	free(t);
}

const char *snr_trace_meta_json(const struct snr_trace *t) { return t->meta; }
size_t snr_trace_nregs(const struct snr_trace *t) { return t->nregs; }
const struct snr_trace_reg *snr_trace_regs(const struct snr_trace *t) { return t->regs; }
size_t snr_trace_nsymbols(const struct snr_trace *t) { return t->nsyms; }
const char *snr_trace_error(const struct snr_trace *t) { return t->err; }
bool snr_trace_truncated(const struct snr_trace *t) { return t->truncated; }
const char *snr_trace_end_json(const struct snr_trace *t) { return t->end; }

void snr_trace_symbol(const struct snr_trace *t, size_t i, uint64_t *addr, uint64_t *size, const char **name)
{
	*addr = t->syms[i].addr;
	*size = t->syms[i].size;
	*name = t->syms[i].name;
}

const char *snr_trace_symbolize(const struct snr_trace *t, uint64_t addr, char *buf, size_t len)
{
	/* Symbols are written sorted by address: the last one at or below addr
	 * that covers it (or is sizeless). */
	size_t lo = 0, hi = t->nsyms;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (t->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		const struct trace_symbol *s = &t->syms[lo - 1];
		if (!s->size || addr < s->addr + s->size) {
			if (addr == s->addr)
				snprintf(buf, len, "%s", s->name);
			else
				snprintf(buf, len, "%s+0x%llx", s->name, (unsigned long long)(addr - s->addr));
			return buf;
		}
	}
	snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}

int snr_trace_rewind(struct snr_trace *t)
{
	t->cur_chunk = 0;
	t->remaining = 0;
	t->index = 0;
	t->next_pc = 0;
	t->c.p = t->c.end = NULL;
	return 0;
}

static const struct snr_trace_regval *get_regs(struct snr_trace *t, struct snr_trace_regval **arr, size_t *cap,
					       unsigned *count)
{
	struct cur *cu = &t->c;
	uint64_t n = cu->bad ? 0 : cur_varint(cu);
	if (n > t->nregs || n == 0)
		cu->bad = 1;
	if (cu->bad)
		return NULL;
	if (n > *cap) {
		*cap = n;
		*arr = snr_xrealloc(*arr, n * sizeof(**arr));
	}
	for (uint64_t i = 0; i < n && !cu->bad; i++) {
		uint64_t r = cur_varint(cu);
		if (r >= t->nregs) {
			cu->bad = 1;
			break;
		}
		(*arr)[i].reg = (uint16_t)r;
		(*arr)[i].val = cur_bytes(cu, t->regs[r].size);
	}
	*count = (unsigned)n;
	return *arr;
}

static const struct snr_trace_mem *get_mems(struct snr_trace *t, struct snr_trace_mem **arr, size_t *cap,
					    unsigned *count)
{
	struct cur *cu = &t->c;
	uint64_t n = cu->bad ? 0 : cur_varint(cu);
	if (n > (uint64_t)(cu->end - cu->p) || n == 0)
		cu->bad = 1;
	if (cu->bad)
		return NULL;
	if (n > *cap) {
		*cap = n;
		*arr = snr_xrealloc(*arr, n * sizeof(**arr));
	}
	for (uint64_t i = 0; i < n && !cu->bad; i++) {
		struct snr_trace_mem *m = &(*arr)[i];
		m->space = cur_u8(cu);
		m->chip = (uint16_t)cur_varint(cu);
		m->addr = cur_varint(cu);
		m->len = cur_varint(cu);
		m->data = cur_bytes(cu, m->len);
	}
	*count = (unsigned)n;
	return *arr;
}

int snr_trace_next(struct snr_trace *t, struct snr_trace_step *s)
{
	while (t->remaining == 0) {
		while (t->cur_chunk < t->nchunks && t->chunks[t->cur_chunk].type != SNR_CHUNK_STEPS)
			t->cur_chunk++;
		if (t->cur_chunk >= t->nchunks)
			return 0;
		const struct chunk *c = &t->chunks[t->cur_chunk++];
		long n = load_payload(t, c);
		if (n < 0)
			return -1;
		t->c = (struct cur){t->raw, t->raw + n, 0};
		uint64_t first = cur_varint(&t->c), count = cur_varint(&t->c);
		if (t->c.bad || first != t->index || count == 0 || count > (uint64_t)n)
			return terr(t, c, "STEPS chunk starts at instruction %llu with %llu steps; expected start %llu",
				    (unsigned long long)first, (unsigned long long)count,
				    (unsigned long long)t->index);
		t->remaining = count;
		t->chunk_first = first;
	}
	const struct chunk *c = &t->chunks[t->cur_chunk - 1];
	struct cur *cu = &t->c;
	memset(s, 0, sizeof(*s));
	uint8_t flags = cur_u8(cu);
	s->index = t->index;
	s->pc = t->next_pc + (uint64_t)unzigzag(cur_varint(cu));
	if (flags & ~31u)
		cu->bad = 1;
	if (flags & 1) {
		s->code_len = cur_u8(cu);
		if (s->code_len == 0 || s->code_len > sizeof(s->code))
			cu->bad = 1;
		const uint8_t *code = cu->bad ? NULL : cur_bytes(cu, s->code_len);
		if (code)
			memcpy(s->code, code, s->code_len);
	}
	if (flags & 2)
		s->regs = get_regs(t, &t->rv, &t->rv_cap, &s->nregs);
	if (flags & 8)
		s->post_regs = get_regs(t, &t->prv, &t->prv_cap, &s->npost_regs);
	if (flags & 4)
		s->mem = get_mems(t, &t->mv, &t->mv_cap, &s->nmem);
	if (flags & 16)
		s->post_mem = get_mems(t, &t->pmv, &t->pmv_cap, &s->npost_mem);
	if (cu->bad)
		return terr(t, c, "step record of instruction %llu is malformed", (unsigned long long)t->index);
	t->next_pc = s->pc + 4;
	t->index++;
	t->remaining--;
	if (t->remaining == 0 && cu->p != cu->end)
		return terr(t, c, "%zu bytes left over after the last step", (size_t)(cu->end - cu->p));
	return 1;
}

bool snr_trace_digest(const struct snr_trace *t, const uint8_t *const **regs, size_t *nblocks,
		      const struct snr_trace_mem **blocks, const uint64_t **hashes)
{
	if (!t->has_digest)
		return false;
	*regs = (const uint8_t *const *)t->dregs;
	*nblocks = t->ndblocks;
	*blocks = t->dblocks;
	*hashes = t->dhashes;
	return true;
}
