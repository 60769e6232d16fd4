/*
 * fuzz_common.h: what snr's libFuzzer targets over chunk files share: the
 * checksum repair that lets random payloads past the CRC-32Cs, and the
 * corpus-replaying main() of the standalone build (FUZZ_STANDALONE), which
 * runs the kept corpus as a unit test in every build.
 */
#ifndef SNR_FUZZ_COMMON_H
#define SNR_FUZZ_COMMON_H

#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_chunkfile.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static inline void fuzz_put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Recomputes the file header's and every chunk's CRC-32Cs, walking the
 * chunk chain as the reader does. */
static inline void fuzz_repair_chunks(uint8_t *b, size_t n)
{
	if (n < 16)
		return;
	fuzz_put32(b + 12, snr_crc32c(0, b, 12));
	size_t off = 16;
	while (off + 28 <= n) {
		uint8_t *h = b + off;
		uint32_t stored = (uint32_t)h[12] | (uint32_t)h[13] << 8 | (uint32_t)h[14] << 16 | (uint32_t)h[15] << 24;
		if (stored > n - off - 28)
			break;
		fuzz_put32(h + 20, snr_crc32c(0, h + 28, stored));
		fuzz_put32(h + 24, snr_crc32c(0, h, 24));
		off += 28 + stored;
	}
}

#ifndef FUZZ_STANDALONE
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max);

static inline uint32_t fuzz_get32(const uint8_t *p)
{
	return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

/* The structure-aware mutation of a chunk file (the trace's, the metrics
 * file's): valid CRCs around what the checks behind them must catch.
 * One of: a chunk dropped, duplicated, moved to the end, two exchanged
 * (sequence numbers renumbered: the order is what is wrong), or a number in
 * a raw JSON chunk (META, SUMMARY, END) set to an extreme or a non-count
 * (-1, -20, 0, 2^63-1, 2^64-1, a float, a string); else, or when the input
 * is not a chunk file, libFuzzer's own mutation. The result always carries
 * valid checksums. */
static inline size_t fuzz_chunk_mutate(uint8_t *data, size_t size, size_t max, unsigned seed)
{
	uint64_t rng = seed * 0x9e3779b97f4a7c15ull + 1;
#define FUZZ_RND() (rng ^= rng << 13, rng ^= rng >> 7, rng ^= rng << 17, rng)
	enum { MAXC = 64 };
	size_t at[MAXC], len[MAXC], n = 0, off = 16;
	while (n < MAXC && size >= 16 && off + 28 <= size && !memcmp(data + off, "CHNK", 4)) {
		uint32_t stored = fuzz_get32(data + off + 12);
		if (stored > size - off - 28)
			break;
		at[n] = off, len[n++] = 28 + (size_t)stored;
		off += 28 + stored;
	}
	if (!n || FUZZ_RND() % 4 == 0)
		return LLVMFuzzerMutate(data, size, max);
	size_t order[MAXC + 1], m = 0, k = FUZZ_RND() % n, l = FUZZ_RND() % n;
	const unsigned op = (unsigned)(FUZZ_RND() % 5);
	for (size_t i = 0; i < n; i++) {
		if (op == 0 && i == k) /* dropped */
			continue;
		if (op == 2 && i == k) /* moved to the end */
			continue;
		order[m++] = op == 3 && i == k ? l : op == 3 && i == l ? k : i;
		if (op == 1 && i == k) /* duplicated */
			order[m++] = i;
	}
	if (op == 2)
		order[m++] = k;
	/* op 4: a number in a raw JSON chunk; the first such chunk from k on */
	size_t num_chunk = n, num_at = 0, num_len = 0;
	static const char *const extremes[] = {"-1", "-20", "0", "9223372036854775807", "18446744073709551615",
					       "1.5", "\"7\"", "null"};
	const char *repl = extremes[FUZZ_RND() % (sizeof(extremes) / sizeof(extremes[0]))];
	for (size_t j = 0; op == 4 && j < n && num_chunk == n; j++) {
		size_t c = (k + j) % n;
		const uint8_t *h = data + at[c], *p = h + 28;
		const size_t pl = len[c] - 28;
		if (h[6] || h[7] || !pl || p[0] != '{') /* raw JSON only */
			continue;
		size_t nums = 0; /* the values after a ':' that are numbers */
		for (size_t i = 1; i < pl; i++)
			nums += p[i - 1] == ':' && (p[i] == '-' || (p[i] >= '0' && p[i] <= '9'));
		if (!nums)
			continue;
		size_t pick = FUZZ_RND() % nums;
		for (size_t i = 1; i < pl; i++)
			if (p[i - 1] == ':' && (p[i] == '-' || (p[i] >= '0' && p[i] <= '9')) && !pick--) {
				size_t e = i + 1;
				while (e < pl && strchr("0123456789.eE+-", p[e]))
					e++;
				num_chunk = c, num_at = i, num_len = e - i;
				break;
			}
	}
	if (op == 4 && num_chunk == n)
		return LLVMFuzzerMutate(data, size, max);
	size_t out_size = 16 + (op == 4 ? strlen(repl) - num_len : 0);
	for (size_t j = 0; j < m; j++)
		out_size += len[order[j]];
	if (out_size > max || out_size > (size_t)-1 / 2)
		return LLVMFuzzerMutate(data, size, max);
	uint8_t *out = malloc(out_size), *w = out;
	memcpy(w, data, 16);
	w += 16;
	for (size_t j = 0; j < m; j++) {
		const size_t c = order[j];
		uint8_t *h = w;
		if (op == 4 && c == num_chunk) {
			const size_t rl = strlen(repl), pl = len[c] - 28 - num_len + rl;
			memcpy(w, data + at[c], 28 + num_at);
			memcpy(w + 28 + num_at, repl, rl);
			memcpy(w + 28 + num_at + rl, data + at[c] + 28 + num_at + num_len, len[c] - 28 - num_at - num_len);
			fuzz_put32(h + 12, (uint32_t)pl);
			fuzz_put32(h + 16, (uint32_t)pl);
			w += 28 + pl;
		} else {
			memcpy(w, data + at[c], len[c]);
			w += len[c];
		}
		fuzz_put32(h + 8, (uint32_t)j); /* renumbered */
	}
	fuzz_repair_chunks(out, out_size);
	memcpy(data, out, out_size);
	free(out);
	return out_size;
#undef FUZZ_RND
}
#endif

/* Writes the input to a per-process scratch file named after `what`
 * (checksums repaired first when its last byte is odd: random bytes rarely
 * get past the CRC-32Cs, this lets the payload parsers behind them get
 * fuzzed too); its path, or NULL. */
static inline const char *fuzz_write_input(const char *what, const uint8_t *data, size_t size)
{
	static char path[96];
	snprintf(path, sizeof(path), "/tmp/snr-fuzz-%s-%d", what, (int)getpid());
	uint8_t *b = malloc(size ? size : 1);
	memcpy(b, data, size);
	if (size && (b[size - 1] & 1))
		fuzz_repair_chunks(b, size);
	FILE *f = fopen(path, "wb");
	if (f) {
		fwrite(b, 1, size, f);
		fclose(f);
	}
	free(b);
	return f ? path : NULL;
}

/* Feeds every file of the directories in argv to the target. */
static inline int fuzz_replay_corpus(const char *name, int argc, char **argv)
{
	int files = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			fprintf(stderr, "%s: %s: not a directory\n", name, argv[i]);
			return 1;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			if (e->d_name[0] == '.')
				continue;
			char p[4096];
			snprintf(p, sizeof(p), "%s/%s", argv[i], e->d_name);
			FILE *f = fopen(p, "rb");
			if (!f)
				continue;
			fseek(f, 0, SEEK_END);
			long n = ftell(f);
			fseek(f, 0, SEEK_SET);
			uint8_t *b = malloc((size_t)n + 1);
			if (fread(b, 1, (size_t)n, f) != (size_t)n)
				n = 0;
			fclose(f);
			LLVMFuzzerTestOneInput(b, (size_t)n);
			free(b);
			files++;
		}
		closedir(d);
	}
	printf("%s: %d corpus files read without a crash\n", name, files);
	return files ? 0 : 1;
}

#endif
