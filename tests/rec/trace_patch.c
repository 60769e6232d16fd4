/*
 * trace_patch.c: test helper that changes one captured byte of a trace the
 * way a faulty recorder would, keeping the file valid: it finds a byte
 * pattern in the decompressed STEPS payloads, XORs one byte of it, and
 * rewrites the file with fresh checksums.
 *
 * usage: trace_patch IN OUT HEXPATTERN OFFSET XOR
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_trace.h"

int main(int argc, char **argv)
{
	if (argc != 6) {
		fprintf(stderr, "usage: trace_patch IN OUT HEXPATTERN OFFSET XOR\n");
		return 2;
	}
	uint8_t pat[64];
	size_t np = strlen(argv[3]) / 2;
	if (np == 0 || np > sizeof(pat))
		return 2;
	for (size_t i = 0; i < np; i++)
		sscanf(argv[3] + 2 * i, "%2hhx", &pat[i]);
	size_t off = strtoul(argv[4], NULL, 0);
	unsigned x = (unsigned)strtoul(argv[5], NULL, 0);
	char err[600];
	struct snr_chunk_file f;
	if (snr_chunkf_open(&f, argv[1], SNR_TRACE_MAGIC, "snr trace", 1, 1, SNR_CHUNK_LINES, err, sizeof(err))) {
		fprintf(stderr, "trace_patch: %s\n", err);
		return 1;
	}
	struct snr_chunk_writer w;
	if (snr_chunkw_create(&w, argv[2], SNR_TRACE_MAGIC, SNR_TRACE_VERSION, err, sizeof(err))) {
		fprintf(stderr, "trace_patch: %s\n", err);
		return 1;
	}
	int done = 0;
	for (size_t i = 0; i < f.nchunks; i++) {
		long n = snr_chunkf_payload(&f, &f.chunks[i]);
		if (n < 0) {
			fprintf(stderr, "trace_patch: %s\n", f.err);
			return 1;
		}
		if (!done && f.chunks[i].type == 3 /* STEPS */)
			for (long k = 0; k + (long)np <= n; k++)
				if (!memcmp(f.raw + k, pat, np)) {
					f.raw[k + (long)off] ^= (uint8_t)x;
					done = 1;
					break;
				}
		snr_chunkw_put(&w, f.chunks[i].type, f.raw, (size_t)n, f.chunks[i].codec != 0);
	}
	snr_chunkf_close(&f);
	if (snr_chunkw_close(&w)) {
		fprintf(stderr, "trace_patch: %s\n", w.err);
		return 1;
	}
	if (!done) {
		fprintf(stderr, "trace_patch: pattern not found in any STEPS payload\n");
		return 1;
	}
	return 0;
}
