/*
 * uc_kernel.c: the host program the unicorn tests record: a blocked matmul
 * and a byte-copy loop around a system call. On x86-64, compiled -O1
 * -no-pie so the window stays in plain SSE2 code (unicorn 2's TCG has no
 * AVX: libc's ifunc'd routines stay out). On aarch64 (Debian's cross
 * compiler, -static, run under qemu-aarch64 -g), smaller (-DN=16
 * -DCOPY=512) because QEMU's stub single-steps at ~1,200 instructions/s.
 */
#include <stdint.h>
#include <stdio.h>

#ifndef N
#define N 24 /* a multiple of B */
#endif
#define B 8
#ifndef COPY
#define COPY 4096
#endif

static double a[N][N], b[N][N], c[N][N];
static unsigned char src[COPY], dst[COPY];

__attribute__((noinline)) void matmul_blocked(void)
{
	for (int ii = 0; ii < N; ii += B)
		for (int kk = 0; kk < N; kk += B)
			for (int jj = 0; jj < N; jj += B)
				for (int i = ii; i < ii + B; i++)
					for (int k = kk; k < kk + B; k++) {
						double aik = a[i][k];
						for (int j = jj; j < jj + B; j++)
							c[i][j] += aik * b[k][j];
					}
}

__attribute__((noinline)) void copy_loop(unsigned char *d, const unsigned char *s, unsigned long n)
{
	for (unsigned long i = 0; i < n; i++)
		d[i] = s[i];
}

static long pid_seen;

/* A system call inside the window: the replay takes its result from the trace. */
__attribute__((noinline)) long raw_getpid(void)
{
#if defined(__aarch64__)
	register long nr __asm__("x8") = 172, r __asm__("x0");
	__asm__ volatile("svc #0" : "=r"(r) : "r"(nr) : "memory");
#else
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory");
#endif
	return r;
}

static double scaled;

/* scale arrives in a vector register (xmm0, v0) that the window reads first */
__attribute__((noinline)) void kernels(double scale)
{
	scaled = scale + scale;
	pid_seen = raw_getpid();
	copy_loop(dst, src, sizeof(src));
	matmul_blocked();
	copy_loop(dst + 1, src, sizeof(src) - 1);
}

int main(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (double)(i + 2 * j) / 7.0;
			b[i][j] = (double)(3 * i - j) / 5.0;
		}
	for (int i = 0; i < COPY; i++)
		src[i] = (unsigned char)(i * 13 + 1);
	kernels(1.5);
	double s = 0;
	for (int i = 0; i < N; i++)
		s += c[i][i];
	printf("%g %f %u %d\n", scaled, s, dst[100], pid_seen > 0);
	return 0;
}
