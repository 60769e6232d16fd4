/*
 * bench_host_device.c: the cost of on/off-device (analyzer/host_device.c)
 * as the work grows. Synthetic traces of N and 10 N pieces of device work
 * (kernels and copies on 4 GPUs and 8 streams, overlapping, each with its
 * launch API record) and N / 4 host waits; prints the CPU time of
 * snrh_ondev_build per piece at each size and the ratio of the two (1.0 is
 * linear; the sorts make it n log n, about 1.2 for a tenfold size), and the
 * peak of the process's resident memory.
 *
 * usage: bench_host_device [N]   (default 100000)
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/resource.h>
#include <time.h>

#include "analyzer/host_device.h"

static double cpu_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void build(struct snrh_trace *t, size_t n, uint64_t *seed)
{
	snrh_trace_init(t);
	json_object_set_new(t->meta, "pid", json_integer(1));
	json_object_set_new(t->meta, "t_start_ns", json_integer(1000));
	uint32_t kname = snrh_intern(t, "kernel"), cname = snrh_intern(t, "memcpy HtoD"), api = snrh_intern(t, "launch");
	uint64_t at = 1000;
	for (size_t i = 0; i < n; i++) {
		*seed ^= *seed << 13, *seed ^= *seed >> 7, *seed ^= *seed << 17;
		uint64_t r = *seed;
		at += r % 500;
		uint32_t corr = (uint32_t)i + 1, dev = (uint32_t)(r >> 20) % 4, stream = (uint32_t)(r >> 24) % 8;
		uint64_t start = at + (r >> 32) % 300, end = start + 100 + (r >> 40) % 2000;
		SNRH_PUSH(t->device, ((struct snrh_device_rec){SNRH_DEV_RUNTIME_API, 0, 0, corr, 7, at, at + 20, 0, api}));
		SNRH_PUSH(t->device, ((struct snrh_device_rec){(r & 1) ? SNRH_DEV_KERNEL : SNRH_DEV_MEMCPY, dev, stream,
							      corr, 0, start, end, 4096, (r & 1) ? kname : cname}));
		if (i % 4 == 0)
			SNRH_PUSH(t->intervals, ((struct snrh_interval){7, 0, at + 30, end + 50}));
	}
	json_object_set_new(t->meta, "t_end_ns", json_integer((json_int_t)(at + 5000)));
	struct snrh_probe p = {0, snr_xstrdup("libcudart.so"), snr_xstrdup("cudaDeviceSynchronize"),
			       snr_xstrdup("H:WAIT_DEV")};
	SNRH_PUSH(t->probes, p);
}

static double per_piece_ns(size_t n, uint64_t *seed)
{
	struct snrh_trace t;
	build(&t, n, seed);
	double best = 1e30;
	for (int rep = 0; rep < 3; rep++) {
		struct snrh_ondev o;
		double a = cpu_s();
		snrh_ondev_build(&t, &o);
		double b = cpu_s();
		if (o.nwork != n)
			fprintf(stderr, "bench_host_device: %zu pieces of work, want %zu\n", o.nwork, n);
		snrh_ondev_free(&o);
		if (b - a < best)
			best = b - a;
	}
	snrh_trace_free(&t);
	return best * 1e9 / (double)n;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoull(argv[1], NULL, 10) : 100000;
	uint64_t seed = 0x2545f4914f6cdd1dull;
	double small = per_piece_ns(n, &seed), large = per_piece_ns(10 * n, &seed);
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	printf("on/off-device: %zu pieces %.1f ns each, %zu pieces %.1f ns each (CPU time, best of 3); ratio %.2f "
	       "(1.0 linear); peak RSS %ld MiB\n",
	       n, small, 10 * n, large, large / small, ru.ru_maxrss / 1024);
	return 0;
}
