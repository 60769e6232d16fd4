/*
 * test_cupti_records.c: CUPTI activity records built by hand (no GPU here)
 * become the right host-trace device records: kernel, memcpy with its copy
 * kind and bytes, memset, runtime API on its thread with the correlation id
 * of its kernel, synchronization; unknown kinds are skipped; the clock map
 * puts CUPTI time on CLOCK_MONOTONIC; the result round-trips through a .snrh.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cupti_records.h"
#include "tests/check.h"

static const char *fake_name(CUpti_CallbackDomain domain, uint32_t cbid)
{
	return domain == CUPTI_CB_DOMAIN_RUNTIME_API && cbid == 211 ? "cudaLaunchKernel_v7000" : NULL;
}

int main(void)
{
	struct snrh_trace t;
	snrh_trace_init(&t);
	/* A synthetic activity buffer: records back to back, 8-byte aligned. */
	union {
		CUpti_ActivityKernel10 k;
		CUpti_ActivityMemcpy6 m;
		CUpti_ActivityMemset4 s;
		CUpti_ActivityAPI a;
		CUpti_ActivitySynchronization2 y;
		CUpti_Activity h;
	} buf[7];
	memset(buf, 0, sizeof(buf));
	buf[0].a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
	buf[0].a.cbid = 211;
	buf[0].a.start = 1000;
	buf[0].a.end = 1500;
	buf[0].a.threadId = 77;
	buf[0].a.correlationId = 5;
	buf[1].k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
	buf[1].k.name = "gemm_kernel";
	buf[1].k.start = 2000;
	buf[1].k.end = 9000;
	buf[1].k.correlationId = 5;
	buf[1].k.streamId = 3;
	buf[1].k.deviceId = 1;
	buf[2].m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
	buf[2].m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
	buf[2].m.bytes = 1 << 20;
	buf[2].m.start = 500;
	buf[2].m.end = 1800;
	buf[3].s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
	buf[3].s.bytes = 4096;
	buf[3].s.start = 100;
	buf[3].s.end = 200;
	buf[4].y.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
	buf[4].y.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	buf[4].y.start = 1600;
	buf[4].y.end = 9100;
	buf[5].a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
	buf[5].a.cbid = 9;
	buf[6].h.kind = CUPTI_ACTIVITY_KIND_MARKER;
	int kept = 0;
	for (int i = 0; i < 7; i++)
		kept += snr_cupti_consume(&t, &buf[i].h, fake_name);
	CHECK(kept == 6, "kept %d records, want 6", kept);
	CHECK(t.device.n == 6, "%zu device records", t.device.n);
	const struct snrh_device_rec *d = t.device.v;
	CHECK(d[0].kind == SNRH_DEV_RUNTIME_API && d[0].tid == 77 && d[0].corr == 5 &&
		      !strcmp(snrh_str(&t, d[0].name), "cudaLaunchKernel_v7000"),
	      "runtime API record: %s", snrh_str(&t, d[0].name));
	CHECK(d[1].kind == SNRH_DEV_KERNEL && d[1].corr == d[0].corr && d[1].stream == 3 && d[1].device == 1 &&
		      !strcmp(snrh_str(&t, d[1].name), "gemm_kernel"),
	      "kernel record");
	CHECK(d[2].kind == SNRH_DEV_MEMCPY && d[2].bytes == 1u << 20 && !strcmp(snrh_str(&t, d[2].name), "memcpy HtoD"),
	      "memcpy record: %s", snrh_str(&t, d[2].name));
	CHECK(d[3].kind == SNRH_DEV_MEMSET && d[3].bytes == 4096, "memset record");
	CHECK(d[4].kind == SNRH_DEV_SYNC && !strcmp(snrh_str(&t, d[4].name), "cudaStreamSynchronize"), "sync record: %s",
	      snrh_str(&t, d[4].name));
	CHECK(d[5].kind == SNRH_DEV_DRIVER_API && !strcmp(snrh_str(&t, d[5].name), "driver cbid 9"), "driver record: %s",
	      snrh_str(&t, d[5].name));

	/* Clock: CUPTI 1000 <-> mono 5000 and CUPTI 11000 <-> mono 25000 (slope 2). */
	struct snr_cupti_clock c = {1000, 5000, 11000, 25000, 2};
	CHECK(snr_cupti_to_mono(&c, 6000) == 15000, "affine map: %llu", (unsigned long long)snr_cupti_to_mono(&c, 6000));
	struct snr_cupti_clock c1 = {1000, 5000, 0, 0, 1};
	CHECK(snr_cupti_to_mono(&c1, 2000) == 6000, "offset map");
	snr_cupti_apply_clock(&t, &c1);
	CHECK(t.device.v[1].start == 6000 && t.device.v[1].end == 13000, "kernel moved to host clock");

	char path[] = "/tmp/test_cuptiXXXXXX", err[700];
	int fd = mkstemp(path);
	close(fd);
	CHECK(snrh_trace_write(&t, path, err, sizeof(err)) == 0, "%s", err);
	struct snrh_trace r;
	snrh_trace_init(&r);
	json_object_clear(r.meta);
	CHECK(snrh_trace_read(&r, path, err, sizeof(err)) == 0, "%s", err);
	CHECK(r.device.n == 6 && !strcmp(snrh_str(&r, r.device.v[1].name), "gemm_kernel"), "round trip");
	unlink(path);
	snrh_trace_free(&r);
	snrh_trace_free(&t);
	return check_report("cupti_records");
}
