/*
 * uc_kernel.c: the host program the unicorn tests record: a blocked matmul
 * and a byte-copy loop, compiled -O1 -no-pie so the window stays in plain
 * SSE2 code (unicorn 2's TCG has no AVX: libc's ifunc'd routines stay out).
 */
#include <stdint.h>
#include <stdio.h>

#define N 24
#define B 8

static double a[N][N], b[N][N], c[N][N];
static unsigned char src[4096], dst[4096];

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
	long r;
	__asm__ volatile("syscall" : "=a"(r) : "a"(39L) : "rcx", "r11", "memory");
	return r;
}

__attribute__((noinline)) void kernels(void)
{
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
	for (int i = 0; i < 4096; i++)
		src[i] = (unsigned char)(i * 13 + 1);
	kernels();
	double s = 0;
	for (int i = 0; i < N; i++)
		s += c[i][i];
	printf("%f %u %d\n", s, dst[100], pid_seen > 0);
	return 0;
}
