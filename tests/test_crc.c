/*
 * test_crc.c: lib/snr_crc.c. CRC-32C: known values (RFC 3720's test
 * vectors, "123456789"), and the implementation snr_crc32c chose (the CPU's
 * instruction where it has one) against the table over random lengths,
 * alignments, contents and running values, in one call and split in two.
 * GDB's CRC-32: known values (what gdbserver's crc32 gives), the table's
 * eight-byte rounds against the definition bit by bit over random lengths
 * and alignments, and continuing over a split buffer.
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

int main(void)
{
	test_crc32c_known();
	test_crc32c_same();
	test_crc32_gdb();
	return check_report("test_crc");
}
