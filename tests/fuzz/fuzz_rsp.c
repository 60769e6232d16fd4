/*
 * fuzz_rsp.c: libFuzzer target for snr's GDB remote protocol server. Each
 * input is the byte stream a debugger sends, fed in pieces to a session on a
 * buffer (device/rsp_session.h) over the fixture machine of
 * tests/rsp/rsp_fixture.h, a fresh one per input. An input whose first byte
 * is '2' gets a pod of two chips (the byte is junk to the framer anyway).
 *
 * Besides crashes and sanitizer reports, the output must be well formed:
 * nothing but '+', '-' and frames "$payload#cs" with a right checksum and
 * no '$' or '#' inside; anything else aborts.
 *
 * Built by the meson option 'fuzz' with clang (tests/rsp/meson.build); the
 * same file with RSP_FUZZ_STANDALONE is a main() that replays files, so the
 * kept corpus (tests/fuzz/corpus/rsp/) runs in every build as a unit test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/rsp_packet.h"
#include "device/rsp_session.h"
#include "tests/rsp/rsp_fixture.h"

/* Every resume runs at most this many instructions per chip. */
#define FUZZ_BUDGET 20000
#define FUZZ_QUANTUM 500

static void check_output(const char *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		if (p[i] == '+' || p[i] == '-') {
			i++;
			continue;
		}
		if (p[i] != '$')
			abort();
		size_t j = i + 1;
		while (j < n && p[j] != '#') {
			if (p[j] == '$')
				abort();
			j++;
		}
		if (j + 3 > n)
			abort();
		int hi = rsp_hex_digit((unsigned char)p[j + 1]), lo = rsp_hex_digit((unsigned char)p[j + 2]);
		if (hi < 0 || lo < 0 || rsp_checksum(p + i + 1, j - i - 1) != (uint8_t)(hi << 4 | lo))
			abort();
		i = j + 3;
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rsp_fixture fx;
	char err[256];
	unsigned chips = size && data[0] == '2' ? 2 : 1;
	if (rsp_fixture_open(&fx, chips, err, sizeof(err))) {
		fprintf(stderr, "fuzz_rsp: %s\n", err);
		abort();
	}
	struct rsp_session *s = rsp_session_new(fx.m, FUZZ_BUDGET);
	rsp_session_set_quantum(s, FUZZ_QUANTUM);
	/* Pieces of varying length, so frames split across feeds. */
	size_t pos = 0, piece = 1;
	while (pos < size) {
		size_t n = size - pos < piece ? size - pos : piece;
		rsp_session_feed(s, data + pos, n);
		pos += n;
		piece = piece * 3 % 97 + 1;
		size_t olen;
		const char *out = rsp_session_output(s, &olen);
		check_output(out, olen);
		rsp_session_consume(s, olen);
	}
	rsp_session_free(s);
	rsp_fixture_close(&fx);
	return 0;
}

#ifdef RSP_FUZZ_STANDALONE
#include <dirent.h>

static int replay(const char *path)
{
	static uint8_t buf[1 << 20];
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "fuzz_rsp: cannot open %s\n", path);
		return -1;
	}
	size_t n = fread(buf, 1, sizeof(buf), f);
	fclose(f);
	LLVMFuzzerTestOneInput(buf, n);
	return 0;
}

/* Replays each file named, and each file in each directory named. */
int main(int argc, char **argv)
{
	int count = 0;
	for (int i = 1; i < argc; i++) {
		DIR *d = opendir(argv[i]);
		if (!d) {
			if (replay(argv[i]))
				return 1;
			count++;
			continue;
		}
		struct dirent *e;
		while ((e = readdir(d))) {
			char path[4096];
			if (e->d_name[0] == '.')
				continue;
			snprintf(path, sizeof(path), "%s/%s", argv[i], e->d_name);
			if (replay(path)) {
				closedir(d);
				return 1;
			}
			count++;
		}
		closedir(d);
	}
	fprintf(stderr, "fuzz_rsp: replayed %d inputs\n", count);
	return count ? 0 : 1;
}
#endif
