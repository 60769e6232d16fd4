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
#include <wmmintrin.h>
#include <tmmintrin.h>
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

/* Eight bytes a round (slicing by 8, most significant bit first): short
 * ranges, the tails, and CPUs without a carry-less multiply. */
uint32_t snr_crc32_gdb_sw(uint32_t crc, const void *data, size_t len)
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

#if SNR_CRC_X86
/*
 * GDB's CRC by folding with the carry-less multiply (PCLMULQDQ), the
 * recorder's CRC over every range a stride wrote (about 2.4% of its
 * instructions on the serving window by the table). The CRC of a message
 * M (first byte the highest coefficient) from the value c is
 * (c * x^(8n) + M) * x^32 mod P, P = x^32 + 0x04c11db7: c goes into the
 * first four bytes, and the bytes are taken as a polynomial 128 bits at a
 * time, byte-reversed into a big-endian 128-bit word. Four such words
 * A = A1 x^64 + A0 are carried and each folded over the 512 bits that
 * follow it: A x^512 = A1 (x^576 mod P) + A0 (x^512 mod P) (mod P), two
 * 64 x 32-bit products of under 96 bits, xored with the next word; then
 * the four into one by the same fold over 128 bits, and the words left one
 * at a time. The last word W (congruent to the message so far) gives the
 * CRC so far as the table's CRC of W's 16 bytes from 0, and the table
 * continues over the tail. Congruence mod P is all that is kept, so the
 * value is the table's, bit for bit (tests/test_crc.c compares them).
 */
static uint64_t k512[2], k128[2]; /* {x^(F+64) mod P, x^F mod P} for folds of F bits */

static uint64_t xpow_mod(unsigned n)
{
	uint64_t r = 1; /* x^0 */
	for (unsigned i = 0; i < n; i++) {
		r <<= 1;
		if (r & 0x100000000ull)
			r ^= 0x104c11db7ull;
	}
	return r;
}

static void fold_consts_init(void)
{
	k512[0] = xpow_mod(576);
	k512[1] = xpow_mod(512);
	k128[0] = xpow_mod(192);
	k128[1] = xpow_mod(128);
}

#define CLMUL_TARGET __attribute__((target("pclmul,ssse3,sse4.1")))

CLMUL_TARGET static inline __m128i load_be(const uint8_t *p, __m128i rev)
{
	return _mm_shuffle_epi8(_mm_loadu_si128((const __m128i *)(const void *)p), rev);
}

/* A * x^F + B mod P (congruent), K = {x^(F+64) mod P, x^F mod P} */
CLMUL_TARGET static inline __m128i fold(__m128i a, __m128i k, __m128i b)
{
	__m128i hi = _mm_clmulepi64_si128(a, k, 0x11); /* A1 * (x^(F+64) mod P), k's high qword */
	__m128i lo = _mm_clmulepi64_si128(a, k, 0x00); /* A0 * (x^F mod P), k's low qword */
	return _mm_xor_si128(_mm_xor_si128(hi, lo), b);
}

CLMUL_TARGET static uint32_t crc32_gdb_clmul(uint32_t crc, const void *data, size_t len)
{
	if (len < 128)
		return snr_crc32_gdb_sw(crc, data, len);
	const uint8_t *p = data;
	const __m128i rev = _mm_setr_epi8(15, 14, 13, 12, 11, 10, 9, 8, 7, 6, 5, 4, 3, 2, 1, 0);
	/* the high qword of each constant pairs with A1, the low with A0 */
	const __m128i k4 = _mm_set_epi64x((long long)k512[0], (long long)k512[1]);
	const __m128i k1 = _mm_set_epi64x((long long)k128[0], (long long)k128[1]);
	__m128i a0 = _mm_xor_si128(load_be(p, rev), _mm_set_epi64x((long long)((uint64_t)crc << 32), 0));
	__m128i a1 = load_be(p + 16, rev), a2 = load_be(p + 32, rev), a3 = load_be(p + 48, rev);
	p += 64;
	len -= 64;
	while (len >= 64) {
		a0 = fold(a0, k4, load_be(p, rev));
		a1 = fold(a1, k4, load_be(p + 16, rev));
		a2 = fold(a2, k4, load_be(p + 32, rev));
		a3 = fold(a3, k4, load_be(p + 48, rev));
		p += 64;
		len -= 64;
	}
	__m128i a = fold(fold(fold(a0, k1, a1), k1, a2), k1, a3);
	while (len >= 16) {
		a = fold(a, k1, load_be(p, rev));
		p += 16;
		len -= 16;
	}
	uint8_t w[16];
	_mm_storeu_si128((__m128i *)(void *)w, _mm_shuffle_epi8(a, rev));
	return snr_crc32_gdb_sw(snr_crc32_gdb_sw(0, w, 16), p, len);
}
#endif

static uint32_t (*crc32_gdb_fn)(uint32_t, const void *, size_t);
static const char *crc32_gdb_name;

static void choose_gdb(void)
{
	uint32_t (*fn)(uint32_t, const void *, size_t) = snr_crc32_gdb_sw;
	const char *name = "table";
#if SNR_CRC_X86
	__builtin_cpu_init();
	if (__builtin_cpu_supports("pclmul") && __builtin_cpu_supports("ssse3") &&
	    __builtin_cpu_supports("sse4.1")) {
		if (!tables_ready)
			tables_init();
		fold_consts_init();
		fn = crc32_gdb_clmul;
		name = "pclmul";
	}
#endif
	__atomic_store_n(&crc32_gdb_name, name, __ATOMIC_RELAXED);
	__atomic_store_n(&crc32_gdb_fn, fn, __ATOMIC_RELEASE);
}

uint32_t snr_crc32_gdb(uint32_t crc, const void *data, size_t len)
{
	uint32_t (*fn)(uint32_t, const void *, size_t) = __atomic_load_n(&crc32_gdb_fn, __ATOMIC_ACQUIRE);
	if (!fn) {
		choose_gdb();
		fn = crc32_gdb_fn;
	}
	return fn(crc, data, len);
}

const char *snr_crc32_gdb_impl(void)
{
	if (!__atomic_load_n(&crc32_gdb_fn, __ATOMIC_ACQUIRE))
		choose_gdb();
	return __atomic_load_n(&crc32_gdb_name, __ATOMIC_RELAXED);
}
