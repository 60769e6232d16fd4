/*
 * x86_rec.c: the host program for recording through gdbserver and ptrace
 * (built -O1 both -no-pie and as a PIE by the tests).
 *   x86_rec          work(3000): loads (one of `seed`, rip-relative in a
 *                    PIE), stores, calls; prints "x86_rec N"
 *   x86_rec loop     calls work() forever (for attaching with --pid)
 *   x86_rec io       io(): writes iobuf[0], write(1, "io\n", 3), read(0,
 *                    iobuf, 8), then hashes iobuf[0..8); prints "io ADDR H"
 *                    with ADDR = &iobuf
 *   x86_rec rep      reps(): rep movsb of 8 KiB, rep stosq of 4 KiB, then
 *                    a hash of the copy; prints "rep H"
 *   x86_rec tsc      stamp(): rdtsc twice around work(200); prints "tsc H"
 *   x86_rec alias    aliased(): one page of a memfd mapped twice, at A and
 *                    at B; work(300), reads B[0], getuid() (a system call:
 *                    a checkpoint under --method sim), writes A[1..64],
 *                    then hashes B[1..64], which the writes through A
 *                    changed: memory changed under the window by something
 *                    other than its own stores to it, as a DMA does, which
 *                    a simulator that read B's page before cannot know;
 *                    prints "alias H"
 *   x86_rec aliasmany aliased_many(): the same page mapped twice; reads
 *                    B[0], then 100 getuid() calls (checkpoints under
 *                    --method sim), each followed by 16 reads and writes
 *                    of scattered bytes (thousands of separate ranges in
 *                    the recorder's sets before the mismatch), then 400
 *                    more after the last call, then aliased()'s writes
 *                    through A and hash of B; prints "aliasmany H"
 */
#define _GNU_SOURCE
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <x86intrin.h>

uint64_t table[128];
uint64_t seed = 7;
static char iobuf[64];
volatile uint64_t sink;

__attribute__((noinline)) uint64_t mix(uint64_t a, uint64_t b)
{
	return (a ^ (b << 7)) * 0x9e3779b97f4a7c15ull + (b >> 3);
}

__attribute__((noinline)) uint64_t work(int n)
{
	uint64_t h = seed;
	for (int i = 0; i < n; i++) {
		h = mix(h, table[i & 127]);
		table[(i * 5) & 127] += h;
	}
	return h;
}

__attribute__((noinline)) uint64_t io(void)
{
	iobuf[0] = 'w';
	if (write(1, "io\n", 3) != 3)
		return 0;
	ssize_t n = read(0, iobuf, 8);
	uint64_t h = (uint64_t)n;
	for (int i = 0; i < 8; i++)
		h = h * 31 + (uint8_t)iobuf[i];
	return h;
}

static uint8_t repsrc[8192], repdst[8192];

__attribute__((noinline)) uint64_t reps(void)
{
	void *d = repdst, *s = repsrc;
	uint64_t n = sizeof(repsrc);
	__asm__ volatile("cld; rep movsb" : "+D"(d), "+S"(s), "+c"(n) : : "memory");
	d = repdst + 4096;
	n = 512;
	__asm__ volatile("rep stosq" : "+D"(d), "+c"(n) : "a"(0x0101010101010101ull) : "memory");
	uint64_t h = 0;
	for (int i = 0; i < (int)sizeof(repdst); i += 64)
		h = h * 31 + repdst[i] + repdst[i + 63];
	return h;
}

__attribute__((noinline)) uint64_t stamp(void)
{
	uint64_t t0 = __rdtsc();
	uint64_t h = work(200);
	return h ^ (__rdtsc() - t0);
}

__attribute__((noinline)) uint64_t aliased(volatile uint64_t *a, volatile uint64_t *b)
{
	uint64_t h = work(300) + b[0];
	h ^= (uint64_t)getuid();
	for (int i = 1; i <= 64; i++)
		a[i] = h + (uint64_t)i;
	for (int i = 1; i <= 64; i++)
		h = h * 31 + b[i];
	return h;
}

uint8_t spread[1 << 20];

static uint64_t scatter(uint64_t h, int from, int n)
{
	for (int q = from; q < from + n; q++) {
		size_t at = ((size_t)q * 2654435761u) & ((sizeof(spread) - 1) & ~(size_t)15);
		h = mix(h, spread[at]);
		spread[at + 8] = (uint8_t)h;
	}
	return h;
}

__attribute__((noinline)) uint64_t aliased_many(volatile uint64_t *a, volatile uint64_t *b)
{
	uint64_t h = b[0];
	for (int k = 0; k < 100; k++) {
		h = h * 31 + (uint64_t)getuid();
		h = scatter(h, k * 16, 16);
	}
	h = scatter(h, 1600, 400);
	for (int i = 1; i <= 64; i++)
		a[i] = h + (uint64_t)i;
	for (int i = 1; i <= 64; i++)
		h = h * 31 + b[i];
	return h;
}

int main(int argc, char **argv)
{
	for (int i = 0; i < 128; i++)
		table[i] = (uint64_t)i * (uint64_t)i + 1;
	if (argc > 1 && !strcmp(argv[1], "io")) {
		sink = io();
		printf("io %p %llu\n", (void *)iobuf, (unsigned long long)sink);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "rep")) {
		for (int i = 0; i < (int)sizeof(repsrc); i++)
			repsrc[i] = (uint8_t)(i * 7 + 3);
		sink = reps();
		printf("rep %llu\n", (unsigned long long)sink);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "tsc")) {
		sink = stamp();
		printf("tsc %llu\n", (unsigned long long)sink);
		return 0;
	}
	if (argc > 1 && (!strcmp(argv[1], "alias") || !strcmp(argv[1], "aliasmany"))) {
		int fd = memfd_create("x86_rec", 0);
		if (fd < 0 || ftruncate(fd, 4096))
			return 1;
		uint64_t *a = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		uint64_t *b = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (a == MAP_FAILED || b == MAP_FAILED)
			return 1;
		sink = argv[1][5] ? aliased_many(a, b) : aliased(a, b);
		printf("%s %llu\n", argv[1], (unsigned long long)sink);
		return 0;
	}
	if (argc > 1 && !strcmp(argv[1], "loop"))
		for (;;)
			sink += work(1000);
	sink = work(3000);
	printf("x86_rec %llu\n", (unsigned long long)sink);
	return 0;
}
