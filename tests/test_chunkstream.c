/*
 * test_chunkstream.c: lib/snr_chunkstream.c against lib/snr_chunkfile.c.
 * A file of 200,000 chunks (tiny raw ones as a recording's journal has,
 * compressed ones, and some larger than the stream's 1 MiB buffer) read
 * front to back gives every chunk's type and payload as snr_chunkf_open
 * and snr_chunkf_payload do; a flipped payload byte and a flipped header
 * byte are errors naming the chunk and its offset, a cut file ends
 * "truncated" after the last whole chunk, and a wrong magic or version is
 * refused at open.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "lib/snr_chunkfile.h"
#include "lib/snr_chunkstream.h"
#include "lib/snr_util.h"

static const char MAGIC[8] = "SNRTEST\0";

static size_t payload_for(uint64_t *st, size_t i, uint8_t *buf, bool *compress)
{
	size_t n = i % 5000 == 17 ? (1u << 20) + 3000 + i % 7 : (size_t)(check_rand(st) % 40);
	for (size_t k = 0; k < n; k++)
		buf[k] = (uint8_t)(i % 3 ? check_rand(st) : k / 64);
	*compress = i % 3 == 0;
	return n;
}

static size_t file_size(const char *path)
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	size_t n = (size_t)ftell(f);
	fclose(f);
	return n;
}

static void flip(const char *path, size_t at)
{
	FILE *f = fopen(path, "r+b");
	fseek(f, (long)at, SEEK_SET);
	int c = fgetc(f);
	fseek(f, (long)at, SEEK_SET);
	fputc(c ^ 0x10, f);
	fclose(f);
}

/* every chunk read by both readers: how many, -1 on an error of the stream */
static long read_both(const char *path, char *err, size_t errlen, bool *truncated)
{
	struct snr_chunk_file f;
	struct snr_chunk_stream s;
	char e[600];
	if (snr_chunks_open(&s, path, MAGIC, "test file", 1, 1, err, errlen))
		return -1;
	bool whole = snr_chunkf_open(&f, path, MAGIC, "test file", 1, 1, 9, e, sizeof(e)) == 0;
	long n = 0;
	for (;;) {
		uint16_t type;
		const uint8_t *p;
		size_t len;
		int got = snr_chunks_next(&s, 9, &type, &p, &len);
		if (got < 0) {
			snr_fmt(err, errlen, "%s", s.err);
			n = -1;
			break;
		}
		if (got == 0)
			break;
		if (whole) {
			CHECK((size_t)n < f.nchunks, "chunk %ld: the mapped reader has %zu", n, f.nchunks);
			if ((size_t)n < f.nchunks) {
				long m = snr_chunkf_payload(&f, &f.chunks[n]);
				CHECK(m == (long)len && f.chunks[n].type == type && !memcmp(f.raw, p, len),
				      "chunk %ld: type %u length %zu, mapped: type %u length %ld", n, type, len,
				      f.chunks[n].type, m);
			}
		}
		n++;
	}
	if (whole && n >= 0)
		CHECK((size_t)n == f.nchunks, "stream read %ld chunks, mapped %zu", n, f.nchunks);
	*truncated = s.truncated;
	if (whole)
		snr_chunkf_close(&f);
	snr_chunks_close(&s);
	return n;
}

int main(void)
{
	char dir[] = "/tmp/test_chunkstream.XXXXXX", path[64], err[600];
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/f", dir);
	struct snr_chunk_writer w;
	CHECK(snr_chunkw_open(&w, path, SNR_CHUNKW_NEW, MAGIC, 1, err, sizeof(err)) == 0, "create: %s", err);
	uint8_t *buf = snr_xmalloc((1u << 20) + 4000);
	uint64_t st = 12345;
	size_t nchunks = 200000;
	for (size_t i = 0; i < nchunks; i++) {
		bool z;
		size_t n = payload_for(&st, i, buf, &z);
		CHECK(snr_chunkw_put(&w, 1 + (unsigned)(i % 9), buf, n, z) == 0, "put %zu", i);
	}
	CHECK(snr_chunkw_close(&w) == 0, "close");
	bool trunc;
	long n = read_both(path, err, sizeof(err), &trunc);
	CHECK(n == (long)nchunks && !trunc, "read %ld of %zu chunks (truncated %d): %s", n, nchunks, trunc, n < 0 ? err : "");

	/* cut in the middle of the last chunk: the ones before it, truncated */
	size_t size = file_size(path);
	CHECK(truncate(path, (off_t)(size - 5)) == 0, "truncate");
	n = read_both(path, err, sizeof(err), &trunc);
	CHECK(n == (long)nchunks - 1 && trunc, "cut: %ld chunks, truncated %d", n, trunc);

	/* a flipped byte in chunk 1's payload, then in chunk 0's header */
	CHECK(snr_chunkw_open(&w, path, SNR_CHUNKW_DIRECT, MAGIC, 1, err, sizeof(err)) == 0, "rewrite: %s", err);
	memset(buf, 7, 30);
	snr_chunkw_put(&w, 1, buf, 30, false);
	snr_chunkw_put(&w, 2, buf, 30, false);
	snr_chunkw_close(&w);
	flip(path, 16 + 28 + 30 + 28 + 5);
	n = read_both(path, err, sizeof(err), &trunc);
	CHECK(n < 0 && strstr(err, "chunk 1 (offset 74): payload is corrupt"), "payload flip: %ld, %s", n, err);
	flip(path, 16 + 8);
	n = read_both(path, err, sizeof(err), &trunc);
	CHECK(n < 0 && strstr(err, "chunk 0 (offset 16): chunk header is corrupt"), "header flip: %ld, %s", n, err);

	/* another kind of file, another version */
	struct snr_chunk_stream s;
	CHECK(snr_chunks_open(&s, path, "OTHER\0\0\0", "test file", 1, 1, err, sizeof(err)) < 0 &&
		      strstr(err, "not an test file"),
	      "magic: %s", err);
	CHECK(snr_chunks_open(&s, path, MAGIC, "test file", 2, 3, err, sizeof(err)) < 0 &&
		      strstr(err, "format version 1; this snr reads versions 2 to 3"),
	      "version: %s", err);
	unlink(path);
	rmdir(dir);
	free(buf);
	return check_report("test_chunkstream");
}
