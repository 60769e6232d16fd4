/*
 * snr_cupti.c: libsnr_cupti.so, loaded by the CUDA driver through
 * CUDA_INJECTION64_PATH. It enables CUPTI activity for kernels, memcpy,
 * memset, runtime and driver API calls and synchronization; buffers come
 * back on CUPTI's thread and are turned into host-trace device records
 * (cupti_records.c). At exit it flushes, reads the dropped-record count,
 * maps CUPTI time onto CLOCK_MONOTONIC from (cuptiGetTimestamp,
 * clock_gettime) pairs taken at start and end, and writes a .snrh
 * ($SNR_CUPTI_OUTPUT, else snr-cupti-PID.snrh) that `snr host report`
 * merges with the eBPF trace of the same run.
 *
 * Built when the CUDA toolkit is found; this machine has no GPU, so only
 * cupti_records.c is exercised (runtime/cupti/test_*.c: synthetic activity
 * buffers laid out as CUPTI lays them out, read with CUPTI's own
 * cuptiActivityGetNextRecord); bench/cupti_gpu_check.sh runs it on a GPU.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "cupti_records.h"

#define BUF_SIZE (8u << 20)

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct snrh_trace trace;
static struct snr_cupti_clock clk;
static uint64_t records, skipped;

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static const char *cbid_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
	const char *name = NULL;
	if (cuptiGetCallbackName(domain, cbid, &name) != CUPTI_SUCCESS)
		return NULL;
	return name;
}

static void CUPTIAPI buffer_requested(uint8_t **buffer, size_t *size, size_t *max_records)
{
	*buffer = aligned_alloc(8, BUF_SIZE);
	*size = *buffer ? BUF_SIZE : 0;
	*max_records = 0;
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream, uint8_t *buffer, size_t size, size_t valid)
{
	(void)ctx;
	(void)stream;
	(void)size;
	pthread_mutex_lock(&lock);
	snr_cupti_consume_buffer(&trace, buffer, valid, cbid_name, &records, &skipped);
	pthread_mutex_unlock(&lock);
	free(buffer);
}

static void take_clock_pair(uint64_t *cupti, uint64_t *mono)
{
	uint64_t a = mono_ns(), c = 0;
	cuptiGetTimestamp(&c);
	uint64_t b = mono_ns();
	*cupti = c;
	*mono = a + (b - a) / 2;
}

static void finish(void)
{
	cuptiActivityFlushAll(1);
	size_t dropped = 0;
	cuptiActivityGetNumDroppedRecords(NULL, 0, &dropped);
	pthread_mutex_lock(&lock);
	take_clock_pair(&clk.cupti1, &clk.mono1);
	clk.npairs = 2;
	snr_cupti_apply_clock(&trace, &clk);
	json_object_set_new(trace.meta, "source", json_string("cupti"));
	json_object_set_new(trace.meta, "pid", json_integer(getpid()));
	json_object_set_new(trace.meta, "clock", json_string("CLOCK_MONOTONIC"));
	json_object_set_new(trace.meta, "cupti",
			    json_pack("{s:I, s:I, s:I, s:[I,I], s:[I,I]}", "records", (json_int_t)records, "skipped",
				      (json_int_t)skipped, "dropped", (json_int_t)dropped, "pair_start",
				      (json_int_t)clk.cupti0, (json_int_t)clk.mono0, "pair_end", (json_int_t)clk.cupti1,
				      (json_int_t)clk.mono1));
	char path[4096], err[700];
	const char *out = getenv("SNR_CUPTI_OUTPUT");
	if (!out) {
		snprintf(path, sizeof(path), "snr-cupti-%d.snrh", (int)getpid());
		out = path;
	}
	if (snrh_trace_write(&trace, out, err, sizeof(err)))
		fprintf(stderr, "libsnr_cupti: %s\n", err);
	else if (dropped)
		fprintf(stderr, "libsnr_cupti: %zu activity records dropped\n", dropped);
	pthread_mutex_unlock(&lock);
}

__attribute__((visibility("default"))) int InitializeInjection(void)
{
	snrh_trace_init(&trace);
	take_clock_pair(&clk.cupti0, &clk.mono0);
	clk.npairs = 1;
	if (cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed) != CUPTI_SUCCESS) {
		fprintf(stderr, "libsnr_cupti: cuptiActivityRegisterCallbacks failed\n");
		return 0;
	}
	static const CUpti_ActivityKind kinds[] = {CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
						   CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_RUNTIME,
						   CUPTI_ACTIVITY_KIND_DRIVER, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION};
	char failed[128] = "";
	CUptiResult why = CUPTI_SUCCESS;
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++) {
		CUptiResult r = cuptiActivityEnable(kinds[i]);
		if (r != CUPTI_SUCCESS) {
			size_t n = strlen(failed);
			snprintf(failed + n, sizeof(failed) - n, " %d", (int)kinds[i]);
			why = r;
		}
	}
	if (failed[0]) {
		const char *msg = NULL;
		cuptiGetResultString(why, &msg);
		fprintf(stderr, "libsnr_cupti: cannot enable CUPTI activity kinds%s: %s\n", failed, msg ? msg : "?");
	}
	atexit(finish);
	return 1;
}
