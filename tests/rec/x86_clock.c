/*
 * x86_clock.c: a host program that reads the time the way users do, for
 * tests/rec/record_vdso.sh (built -O2 with libc, as users build).
 *
 * timed() reads CLOCK_MONOTONIC with clock_gettime(), runs a small
 * computation, and reads time(): both through the vDSO, whose code loads the
 * clock from the kernel's [vvar] pages (which no debugger can read) and
 * (clock_gettime) runs rdtscp in a seqlock loop. The results feed the
 * returned value: whether the monotonic clock is past its start and the
 * wall clock past 2001, so the value printed does not depend on when it
 * ran, while the registers and the stack do.
 *
 * `x86_clock K` calls clocks(K) instead: K clock_gettime(CLOCK_MONOTONIC)
 * calls in a loop (for measuring what each [vvar] load costs a recording).
 *
 * `x86_clock push` calls pushed() instead: `push qword ptr [vvar]` and a
 * pop, an instruction that reads the [vvar] page (found in /proc/self/maps)
 * and writes the stack, which snr record refuses by name.
 *
 * `x86_clock null` calls nulled(), which reads through a null pointer:
 * memory neither the debugger nor the program can read, which snr record
 * reports as an error naming the instruction and the address.
 *
 * Before timed() it prints the vDSO's address range ("vdso LO HI", hex),
 * read from /proc/self/maps, so that a test can tell the vDSO's
 * instructions from the program's.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

volatile uint64_t sink;

__attribute__((noinline)) uint64_t timed(int n)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	uint64_t h = 7;
	for (int i = 0; i < n; i++)
		h = h * 31 + (uint64_t)i;
	time_t now = time(NULL);
	h = h * 31 + (ts.tv_sec > 0 || ts.tv_nsec > 0);
	return h * 31 + (now > 1000000000);
}

__attribute__((noinline)) uint64_t clocks(int k)
{
	uint64_t h = 0;
	for (int i = 0; i < k; i++) {
		struct timespec ts;
		clock_gettime(CLOCK_MONOTONIC, &ts);
		h += ts.tv_sec > 0;
	}
	return h;
}

__attribute__((noinline)) uint64_t pushed(const void *vvar)
{
	uint64_t v;
	__asm__ volatile("pushq (%1)\n\tpopq %0" : "=r"(v) : "r"(vvar) : "memory");
	return v;
}

volatile uint64_t *volatile nowhere;

__attribute__((noinline)) uint64_t nulled(void) { return *nowhere + 1; }

int main(int argc, char **argv)
{
	void *vvar = NULL;
	FILE *f = fopen("/proc/self/maps", "r");
	char line[512];
	while (f && fgets(line, sizeof(line), f))
		if (strstr(line, "[vdso]")) {
			unsigned long long lo, hi;
			if (sscanf(line, "%llx-%llx", &lo, &hi) == 2)
				printf("vdso %llx %llx\n", lo, hi);
		} else if (strstr(line, "[vvar]")) {
			unsigned long long lo;
			if (sscanf(line, "%llx-", &lo) == 1)
				vvar = (void *)(uintptr_t)lo;
		}
	if (f)
		fclose(f);
	fflush(stdout);
	if (argc > 1 && !strcmp(argv[1], "null"))
		sink = nulled();
	else if (argc > 1 && !strcmp(argv[1], "push"))
		sink = vvar ? pushed(vvar) : 0;
	else
		sink = argc > 1 ? clocks(atoi(argv[1])) : timed(100);
	printf("clock %llu\n", (unsigned long long)sink);
	return 0;
}
