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
