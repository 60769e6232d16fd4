/*
 * syscall_loop.c: a window with N system calls, for bench/record_syscalls.py.
 *
 *   syscall_loop N   calls(N): N calls of getppid() through libc, each
 *                    followed by a one-byte store 16 bytes past the last,
 *                    so that the recorder's written and known sets grow by
 *                    one range per call; prints "calls H"
 *
 * Under `snr record --method sim` every system call runs on the target and
 * is a checkpoint the recorder commits to, so the window has N commits
 * while its sets hold up to N ranges.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define MAX_CALLS 1000000
uint8_t slots[MAX_CALLS * 16]; /* global: the stores stay */

__attribute__((noinline)) uint64_t calls(long n)
{
	uint64_t h = 0;
	for (long i = 0; i < n; i++) {
		h = h * 31 + (uint64_t)getppid();
		slots[i * 16] = (uint8_t)h;
	}
	return h;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? strtol(argv[1], NULL, 10) : 1000;
	if (n < 0 || n > MAX_CALLS) {
		fprintf(stderr, "syscall_loop: N must be 0..%d\n", MAX_CALLS);
		return 2;
	}
	printf("calls %llu\n", (unsigned long long)calls(n));
	return 0;
}
