/*
 * test_crc.c: lib/snr_crc.c. CRC-32C: known values (RFC 3720's test
 * vectors, "123456789"), and the implementation snr_crc32c chose (the CPU's
 * instruction where it has one) against the table over random lengths,
 * alignments, contents and running values, in one call and split in two.
 * GDB's CRC-32: known values (what gdbserver's crc32 gives), the table's
 * eight-byte rounds against the definition bit by bit over random lengths
 * and alignments, and continuing over a split buffer; the carry-less
 * multiply's folding (x86-64 with PCLMULQDQ) against the table over random
 * lengths up to 64 KiB, alignments, running values and splits.
 */
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "lib/snr_crc.h"

static void test_crc32c_known(void)
{
	uint8_t b[32];
	CHECK(snr_crc32c(0, "123456789", 9) == 0xe3069283u, "crc32c(123456789) = %08x", snr_crc32c(0, "123456789", 9));
	CHECK(snr_crc32c_sw(0, "123456789", 9) == 0xe3069283u, "table crc32c(123456789)");
	memset(b, 0, sizeof(b));
	CHECK(snr_crc32c(0, b, 32) == 0x8a9136aau, "32 zeros: %08x", snr_crc32c(0, b, 32));
	memset(b, 0xff, sizeof(b));
	CHECK(snr_crc32c(0, b, 32) == 0x62a8ab43u, "32 0xff: %08x", snr_crc32c(0, b, 32));
	for (int i = 0; i < 32; i++)
		b[i] = (uint8_t)i;
	CHECK(snr_crc32c(0, b, 32) == 0x46dd794eu, "0..31: %08x", snr_crc32c(0, b, 32));
	CHECK(snr_crc32c(0, b, 0) == 0, "empty");
}

static void test_crc32c_same(void)
{
	static uint8_t buf[8192 + 64];
	uint64_t st = 0x9e3779b97f4a7c15ull;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)check_rand(&st);
	int bad = 0;
	for (int round = 0; round < 20000 && bad < 5; round++) {
		uint64_t r = check_rand(&st);
		size_t off = r % 64, len = (r >> 8) % (round < 10000 ? 64 : 8192);
		uint32_t seed = round % 3 ? (uint32_t)(r >> 32) : 0;
		uint32_t hw = snr_crc32c(seed, buf + off, len), sw = snr_crc32c_sw(seed, buf + off, len);
		size_t cut = len ? (size_t)(r >> 40) % len : 0;
		uint32_t split = snr_crc32c(snr_crc32c(seed, buf + off, cut), buf + off + cut, len - cut);
		if (hw != sw || split != sw)
			bad++;
		CHECK(hw == sw && split == sw, "%s: offset %zu length %zu seed %08x: %08x, split %08x, table %08x",
		      snr_crc32c_impl(), off, len, seed, hw, split, sw);
	}
	fprintf(stderr, "test_crc: CRC-32C by %s\n", snr_crc32c_impl());
}

/* GDB's CRC-32 a bit at a time, as its definition reads */
static uint32_t crc32_gdb_bitwise(uint32_t crc, const uint8_t *p, size_t len)
{
	while (len--) {
		crc ^= (uint32_t)*p++ << 24;
		for (int k = 0; k < 8; k++)
			crc = crc & 0x80000000u ? (crc << 1) ^ 0x04c11db7u : crc << 1;
	}
	return crc;
}

static void test_crc32_gdb(void)
{
	static uint8_t buf[4096 + 16];
	uint64_t st = 77;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)check_rand(&st);
	for (int round = 0; round < 3000; round++) {
		uint64_t r = check_rand(&st);
		size_t off = r % 16, len = (r >> 8) % 4096;
		uint32_t seed = round % 2 ? (uint32_t)(r >> 32) : 0xffffffffu;
		uint32_t got = snr_crc32_gdb(seed, buf + off, len), want = crc32_gdb_bitwise(seed, buf + off, len);
		CHECK(got == want, "gdb crc: offset %zu length %zu: %08x, bitwise %08x", off, len, got, want);
	}
	/* gdb's CRC-32 is the non-reflected 0x04c11db7 one without the final
	 * inversion (CRC-32/MPEG-2): "123456789" gives 0x0376e6e7 */
	CHECK(snr_crc32_gdb(0xffffffffu, "123456789", 9) == 0x0376e6e7u, "crc32 gdb(123456789) = %08x",
	      snr_crc32_gdb(0xffffffffu, "123456789", 9));
	CHECK(snr_crc32_gdb(0xffffffffu, "", 0) == 0xffffffffu, "empty");
	uint8_t z[4] = {0};
	CHECK(snr_crc32_gdb(0xffffffffu, z, 4) == 0xc704dd7bu, "4 zeros: %08x", snr_crc32_gdb(0xffffffffu, z, 4));
	const char *s = "the quick brown fox";
	CHECK(snr_crc32_gdb(snr_crc32_gdb(0xffffffffu, s, 7), s + 7, strlen(s) - 7) ==
		      snr_crc32_gdb(0xffffffffu, s, strlen(s)),
	      "split");
}

static void test_crc32_gdb_fold(void)
{
	static uint8_t buf[65536 + 64];
	uint64_t st = 0x243f6a8885a308d3ull;
	for (size_t i = 0; i < sizeof(buf); i++)
		buf[i] = (uint8_t)check_rand(&st);
	int bad = 0;
	for (int round = 0; round < 4000 && bad < 5; round++) {
		uint64_t r = check_rand(&st);
		size_t off = r % 64, len = (r >> 8) % (round < 2000 ? 600 : 65536);
		uint32_t seed = round % 2 ? (uint32_t)(r >> 32) : 0xffffffffu;
		uint32_t got = snr_crc32_gdb(seed, buf + off, len), want = snr_crc32_gdb_sw(seed, buf + off, len);
		size_t cut = len ? (size_t)(r >> 40) % len : 0;
		uint32_t split = snr_crc32_gdb(snr_crc32_gdb(seed, buf + off, cut), buf + off + cut, len - cut);
		if (got != want || split != want)
			bad++;
		CHECK(got == want && split == want, "gdb crc by %s: offset %zu length %zu seed %08x: %08x, split %08x, table %08x",
		      snr_crc32_gdb_impl(), off, len, seed, got, split, want);
	}
	/* all zeros and all ones: the folds' products at their widest */
	memset(buf, 0, sizeof(buf));
	CHECK(snr_crc32_gdb(0xffffffffu, buf, 4096) == snr_crc32_gdb_sw(0xffffffffu, buf, 4096), "4096 zeros");
	memset(buf, 0xff, sizeof(buf));
	CHECK(snr_crc32_gdb(0, buf, 4099) == snr_crc32_gdb_sw(0, buf, 4099), "4099 0xff");
#if defined(__x86_64__)
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("sse4.1"))
		CHECK(!strcmp(snr_crc32_gdb_impl(), "pclmul"), "a CPU with PCLMULQDQ folds: %s", snr_crc32_gdb_impl());
#endif
	fprintf(stderr, "test_crc: GDB's CRC-32 by %s\n", snr_crc32_gdb_impl());
}

int main(void)
{
	test_crc32c_known();
	test_crc32c_same();
	test_crc32_gdb();
	test_crc32_gdb_fold();
	return check_report("test_crc");
}
