/* errno lives in thread-local storage in picolibc: strtoull overflow,
 * strtol range errors and a bad base set it; crt0 must have set tp. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
	const char *inputs[] = {"99999999999999999999", "18446744073709551615", "-9223372036854775809", "42", "0x7fffffffffffffff"};
	for (unsigned i = 0; i < sizeof(inputs) / sizeof(inputs[0]); i++) {
		errno = 0;
		unsigned long long u = strtoull(inputs[i], NULL, 0);
		int e1 = errno;
		errno = 0;
		long long s = strtoll(inputs[i], NULL, 0);
		int e2 = errno;
		printf("%s: %llu (errno %d) %lld (errno %d)\n", inputs[i], u, e1, s, e2);
	}
	return errno;
}
