/*
 * snr_crc.c: see snr_crc.h.
 *
 * The hardware CRC-32C folds 8 bytes per instruction (SSE4.2's crc32q,
 * ARMv8's crc32cx) after the bytes up to an 8-byte boundary, and the tail
 * byte by byte: the same polynomial and bit order as the table, so the same
 * value. The implementation is chosen once, at the first call.
 */
#include "snr_crc.h"

#include <string.h>

#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#include <nmmintrin.h>
#define SNR_CRC_X86 1
#elif defined(__aarch64__) && defined(__linux__)
#include <sys/auxv.h>
#ifndef HWCAP_CRC32
#define HWCAP_CRC32 (1 << 7)
#endif
#define SNR_CRC_ARM 1
#endif

static uint32_t crc_table[8][256];
static uint32_t gdb_table[8][256];
static int tables_ready;

static void tables_init(void)
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
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i << 24;
		for (int k = 0; k < 8; k++)
			c = (c << 1) ^ (0x04c11db7u & (0u - (c >> 31)));
		gdb_table[0][i] = c;
	}
	for (uint32_t i = 0; i < 256; i++)
		for (int t = 1; t < 8; t++)
			gdb_table[t][i] = (gdb_table[t - 1][i] << 8) ^ gdb_table[0][gdb_table[t - 1][i] >> 24];
	tables_ready = 1;
}

uint32_t snr_crc32c_sw(uint32_t crc, const void *data, size_t len)
{
	if (!tables_ready)
		tables_init();
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

#if SNR_CRC_X86
__attribute__((target("sse4.2"))) static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t c = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		c = _mm_crc32_u8((uint32_t)c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = _mm_crc32_u64(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = _mm_crc32_u8((uint32_t)c, *p++);
	return ~(uint32_t)c;
}
#elif SNR_CRC_ARM
__attribute__((target("+crc"))) static uint32_t crc32c_hw(uint32_t crc, const void *data, size_t len)
{
	const uint8_t *p = data;
	uint32_t c = ~crc;
	while (len && ((uintptr_t)p & 7)) {
		c = __builtin_aarch64_crc32cb(c, *p++);
		len--;
	}
	while (len >= 8) {
		uint64_t v;
		memcpy(&v, p, 8);
		c = __builtin_aarch64_crc32cx(c, v);
		p += 8;
		len -= 8;
	}
	while (len--)
		c = __builtin_aarch64_crc32cb(c, *p++);
	return ~c;
}
#endif

static uint32_t (*crc32c_fn)(uint32_t, const void *, size_t);
static const char *crc32c_name;

/* Every thread that calls first chooses the same. */
static void choose(void)
{
	uint32_t (*fn)(uint32_t, const void *, size_t) = snr_crc32c_sw;
	const char *name = "table";
#if SNR_CRC_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("sse4.2")) {
		fn = crc32c_hw;
		name = "sse4.2";
	}
#elif SNR_CRC_ARM
	if (getauxval(AT_HWCAP) & HWCAP_CRC32) {
		fn = crc32c_hw;
		name = "armv8-crc";
	}
#endif
	__atomic_store_n(&crc32c_name, name, __ATOMIC_RELAXED);
	__atomic_store_n(&crc32c_fn, fn, __ATOMIC_RELAXED);
}

uint32_t snr_crc32c(uint32_t crc, const void *data, size_t len)
{
	uint32_t (*fn)(uint32_t, const void *, size_t) = __atomic_load_n(&crc32c_fn, __ATOMIC_RELAXED);
	if (!fn) {
		choose();
		fn = crc32c_fn;
	}
	return fn(crc, data, len);
}

const char *snr_crc32c_impl(void)
{
	if (!__atomic_load_n(&crc32c_fn, __ATOMIC_RELAXED))
		choose();
	return __atomic_load_n(&crc32c_name, __ATOMIC_RELAXED);
}

/* Eight bytes a round (slicing by 8, most significant bit first): the
 * recorder computes it over every range a stride wrote. */
uint32_t snr_crc32_gdb(uint32_t crc, const void *data, size_t len)
{
	if (!tables_ready)
		tables_init();
	const uint8_t *p = data;
	while (len >= 8) {
		crc ^= (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
		crc = gdb_table[7][crc >> 24] ^ gdb_table[6][(crc >> 16) & 0xff] ^ gdb_table[5][(crc >> 8) & 0xff] ^
		      gdb_table[4][crc & 0xff] ^ gdb_table[3][p[4]] ^ gdb_table[2][p[5]] ^ gdb_table[1][p[6]] ^
		      gdb_table[0][p[7]];
		p += 8;
		len -= 8;
	}
	while (len--)
		crc = (crc << 8) ^ gdb_table[0][((crc >> 24) ^ *p++) & 0xff];
	return crc;
}
