/* crc32.c: CRC-32 (IEEE) bit by bit, by table and slice-by-4, CRC-32C and
 * Adler-32 over generated buffers; the check values are the published ones. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

static uint32_t crc_table[256], crc_slice[4][256], crc32c_table[256];

static uint32_t crc32_bitwise(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n--) {
		c ^= *p++;
		for (int k = 0; k < 8; k++)
			c = (c >> 1) ^ (0xedb88320u & (0u - (c & 1)));
	}
	return ~c;
}

static void make_tables(void)
{
	for (uint32_t i = 0; i < 256; i++) {
		uint32_t c = i, d = i;
		for (int k = 0; k < 8; k++) {
			c = c & 1 ? 0xedb88320u ^ (c >> 1) : c >> 1;
			d = d & 1 ? 0x82f63b78u ^ (d >> 1) : d >> 1;
		}
		crc_table[i] = c;
		crc32c_table[i] = d;
	}
	for (int i = 0; i < 256; i++) {
		crc_slice[0][i] = crc_table[i];
		for (int t = 1; t < 4; t++)
			crc_slice[t][i] = (crc_slice[t - 1][i] >> 8) ^ crc_table[crc_slice[t - 1][i] & 255];
	}
}

static uint32_t crc32_table(const uint8_t *p, size_t n, const uint32_t *tab)
{
	uint32_t c = 0xffffffffu;
	while (n--)
		c = tab[(c ^ *p++) & 255] ^ (c >> 8);
	return ~c;
}

static uint32_t crc32_slice4(const uint8_t *p, size_t n)
{
	uint32_t c = 0xffffffffu;
	while (n >= 4) {
		uint32_t v;
		memcpy(&v, p, 4);
		c ^= v;
		c = crc_slice[3][c & 255] ^ crc_slice[2][(c >> 8) & 255] ^ crc_slice[1][(c >> 16) & 255] ^
		    crc_slice[0][c >> 24];
		p += 4;
		n -= 4;
	}
	while (n--)
		c = crc_table[(c ^ *p++) & 255] ^ (c >> 8);
	return ~c;
}

static uint32_t adler32(const uint8_t *p, size_t n)
{
	uint32_t a = 1, b = 0;
	while (n--) {
		a = (a + *p++) % 65521u;
		b = (b + a) % 65521u;
	}
	return b << 16 | a;
}

static uint8_t buf[6000];

int main(void)
{
	make_tables();
	const char *check = "123456789";
	printf("crc32(\"%s\") = %08lx (bitwise %08lx), crc32c = %08lx, adler32 = %08lx\n", check,
	       (unsigned long)crc32_table((const uint8_t *)check, 9, crc_table),
	       (unsigned long)crc32_bitwise((const uint8_t *)check, 9),
	       (unsigned long)crc32_table((const uint8_t *)check, 9, crc32c_table),
	       (unsigned long)adler32((const uint8_t *)check, 9));
	uint32_t x = 12345;
	for (size_t i = 0; i < sizeof(buf); i++) {
		x = x * 1103515245u + 12345u;
		buf[i] = (uint8_t)(x >> 16);
	}
	int bad = 0;
	for (size_t len = 0; len <= sizeof(buf); len = len * 3 + 1) {
		for (size_t off = 0; off < 4; off++) {
			if (off + len > sizeof(buf))
				break;
			uint32_t a = crc32_bitwise(buf + off, len), b = crc32_table(buf + off, len, crc_table),
				 c = crc32_slice4(buf + off, len);
			bad += a != b || a != c;
			if (off == 1)
				printf("len %5zu: crc32 %08lx crc32c %08lx adler %08lx\n", len, (unsigned long)a,
				       (unsigned long)crc32_table(buf + off, len, crc32c_table),
				       (unsigned long)adler32(buf + off, len));
		}
	}
	printf("disagreements: %d\n", bad);
	return (int)(crc32_table(buf, sizeof(buf), crc_table) & 0x7f);
}
