/*
 * ta1rt.c: the runtime glue between picolibc and TA1: stdout through the
 * write system call (ecall 64), exit through ecall 93, sbrk over the heap
 * section. Linux's numbers, so the same ELF runs under qemu-riscv64.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

static long ta1_syscall3(long n, long a, long b, long c)
{
	register long a0 __asm__("a0") = a;
	register long a1 __asm__("a1") = b;
	register long a2 __asm__("a2") = c;
	register long a7 __asm__("a7") = n;
	__asm__ volatile("ecall" : "+r"(a0) : "r"(a1), "r"(a2), "r"(a7) : "memory");
	return a0;
}

ssize_t write(int fd, const void *buf, size_t n)
{
	return ta1_syscall3(64, fd, (long)(uintptr_t)buf, (long)n);
}

/* stdout is line buffered into a small buffer; flushed at exit. */
static char out_buf[256];
static size_t out_len;

static int out_flush(FILE *f)
{
	(void)f;
	size_t off = 0;
	while (off < out_len) {
		ssize_t w = write(1, out_buf + off, out_len - off);
		if (w <= 0)
			break;
		off += (size_t)w;
	}
	out_len = 0;
	return 0;
}

static int out_put(char c, FILE *f)
{
	out_buf[out_len++] = c;
	if (c == '\n' || out_len == sizeof(out_buf))
		out_flush(f);
	return (unsigned char)c;
}

static FILE ta1_stdout = FDEV_SETUP_STREAM(out_put, NULL, out_flush, _FDEV_SETUP_WRITE);
FILE *const stdout = &ta1_stdout;
FILE *const stderr = &ta1_stdout;
FILE *const stdin = NULL;

void _exit(int code)
{
	out_flush(stdout);
	for (;;)
		ta1_syscall3(93, code, 0, 0);
}

extern char __heap_start[], __heap_end[];
static char *brk_cur = __heap_start;

void *sbrk(ptrdiff_t incr)
{
	if (incr < 0 || incr > __heap_end - brk_cur)
		return (void *)-1;
	char *p = brk_cur;
	brk_cur += incr;
	return p;
}
