/*
 * ta1_serve.c: a host program shaped like an inference server, over
 * libta1rt: per request it tokenizes on the CPU (H:APP), stages the request
 * to a file and fsyncs it (H:IO), launches the TA1 program (H:CTRL) and
 * waits for the device (H:WAIT_DEV), then reads the response back (H:IO).
 * `snr host record -- ta1_serve PROG.elf N DIR` shows each part. It times
 * its own calls to ta1rt_wait (CLOCK_MONOTONIC around each call) and prints
 * the sum, the reference for the tracer's H:WAIT_DEV time.
 *
 * With `overlap` as the fourth argument it tokenizes the next request's
 * prompt (150 times the work) while the device runs, between ta1rt_launch
 * and ta1rt_wait, so the device is often done before the wait begins.
 *
 * usage: ta1_serve PROG.elf [REQUESTS [DIR [overlap]]]
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ta1rt.h"

/* The tokenizer's work per request; tests build variants with more or
 * fewer rounds (tests/host/host_causal.sh: a faster control step). */
#ifndef TOKENIZE_ROUNDS
#define TOKENIZE_ROUNDS 20000
#endif

/* CPU-bound stand-in for a tokenizer: hash a prompt many times. */
__attribute__((noinline)) static uint64_t tokenize(const char *prompt, int rounds)
{
	uint64_t h = 1469598103934665603ull;
	for (int r = 0; r < rounds; r++)
		for (const char *p = prompt; *p; p++)
			h = (h ^ (uint8_t)*p) * 1099511628211ull + (uint64_t)r;
	return h;
}

__attribute__((noinline)) static int stage_request(const char *dir, int i, uint64_t tokens)
{
	char path[4096], buf[4096];
	snprintf(path, sizeof(path), "%s/req-%d.bin", dir, i);
	int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return -1;
	memset(buf, (int)(tokens & 0xff), sizeof(buf));
	int rc = 0;
	for (int k = 0; k < 64 && rc == 0; k++)
		rc = write(fd, buf, sizeof(buf)) == (ssize_t)sizeof(buf) ? 0 : -1;
	fsync(fd);
	close(fd);
	return rc;
}

__attribute__((noinline)) static int read_response(const char *dir, int i)
{
	char path[4096], buf[65536];
	snprintf(path, sizeof(path), "%s/req-%d.bin", dir, i);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	while (read(fd, buf, sizeof(buf)) > 0)
		;
	close(fd);
	unlink(path);
	return 0;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: ta1_serve PROG.elf [REQUESTS [DIR [overlap]]]\n");
		return 2;
	}
	int requests = argc > 2 ? atoi(argv[2]) : 10;
	const char *dir = argc > 3 ? argv[3] : "/tmp";
	int overlap = argc > 4 && !strcmp(argv[4], "overlap");
	char err[600];
	struct ta1rt_device *dev = ta1rt_open(1, err, sizeof(err));
	if (!dev || ta1rt_load(dev, argv[1], err, sizeof(err))) {
		fprintf(stderr, "ta1_serve: %s\n", err);
		return 1;
	}
	const char *prompt = "the quick brown fox jumps over the lazy dog; a serving loop tokenizes this";
	uint64_t total = 0, wait_ns = 0;
	struct timespec t0, t1, w0, w1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (int i = 0; i < requests; i++) {
		uint64_t tokens = tokenize(prompt, TOKENIZE_ROUNDS);
		if (stage_request(dir, i, tokens)) {
			fprintf(stderr, "ta1_serve: cannot write to %s\n", dir);
			return 1;
		}
		if (ta1rt_launch(dev)) {
			fprintf(stderr, "ta1_serve: launch failed\n");
			return 1;
		}
		if (overlap)
			total += tokenize(prompt, 3000000) & 1;
		clock_gettime(CLOCK_MONOTONIC, &w0);
		int code = ta1rt_wait(dev, err, sizeof(err));
		clock_gettime(CLOCK_MONOTONIC, &w1);
		wait_ns += (uint64_t)((w1.tv_sec - w0.tv_sec) * 1000000000LL + (w1.tv_nsec - w0.tv_nsec));
		if (code < 0) {
			fprintf(stderr, "ta1_serve: device: %s\n", err);
			return 1;
		}
		total += ta1rt_last_instret(dev);
		read_response(dir, i);
	}
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	struct timespec cpu;
	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu);
	printf("served %d requests, %llu device instructions, in %.3f s (%.2f requests/s); %.6f s in ta1rt_wait; "
	       "cpu %.3f s\n",
	       requests, (unsigned long long)total, secs, secs > 0 ? requests / secs : 0.0, (double)wait_ns / 1e9,
	       (double)cpu.tv_sec + (double)cpu.tv_nsec / 1e9);
	ta1rt_close(dev);
	return 0;
}
