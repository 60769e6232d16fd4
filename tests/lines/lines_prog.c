/*
 * lines_prog.c: a host program built -O2 -g (tests/lines/meson.build) whose
 * user_fn inlines glibc's __bswap_32 (a static inline function of
 * <bits/byteswap.h>, a system header): test_lines checks that every pc of
 * user_fn is placed in this file, the bswap's at the KNOWN-BSWAP line with
 * the header's frame kept in the inline chain.
 */
#include <byteswap.h>
#include <stdint.h>

__attribute__((noinline)) uint32_t user_fn(const uint32_t *p, int n)
{
	uint32_t h = 0;
	for (int i = 0; i < n; i++)
		h = h * 31 + bswap_32(p[i]); /* KNOWN-BSWAP */
	return h;
}

int main(int argc, char **argv)
{
	(void)argv;
	uint32_t a[4] = {1, 2, 3, (uint32_t)argc};
	return (int)(user_fn(a, 4) & 0x7f);
}
