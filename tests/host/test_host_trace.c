/*
 * test_host_trace.c: the host trace (.snrh) round-trips; buckets follow the
 * rules in host_report.c (probed call, then I/O system call, then H:APP);
 * a CUPTI file merges into an eBPF one with strings renumbered; the report
 * and trace-event JSON say what the synthetic trace holds.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "recorder/host/host_report.h"
#include "recorder/host/host_trace.h"

static void build(struct snrh_trace *t)
{
	snrh_trace_init(t);
	json_object_set_new(t->meta, "pid", json_integer(42));
	json_object_set_new(t->meta, "hz", json_integer(100));
	json_object_set_new(t->meta, "t_start_ns", json_integer(1000000000));
	json_object_set_new(t->meta, "t_end_ns", json_integer(2000000000));
	struct snrh_probe p = {0, strdup("/lib/libta1rt.so"), strdup("ta1rt_wait"), strdup("H:WAIT_DEV")};
	SNRH_PUSH(t->probes, p);
	struct snrh_stack us = {0, 2, calloc(2, sizeof(struct snrh_frame))};
	us.frames[0] = (struct snrh_frame){0x1000, snrh_intern(t, "ta1rt_wait"), snrh_intern(t, "/lib/libta1rt.so"), 4};
	us.frames[1] = (struct snrh_frame){0x2000, snrh_intern(t, "main"), snrh_intern(t, "/bin/serve"), 8};
	SNRH_PUSH(t->stacks, us);
	struct snrh_stack ks = {1, 1, calloc(1, sizeof(struct snrh_frame))};
	ks.frames[0] = (struct snrh_frame){0xffff0000, snrh_intern(t, "futex_wait"), snrh_intern(t, "[kernel]"), 0};
	SNRH_PUSH(t->stacks, ks);
	struct snrh_thread th = {7, snrh_intern(t, "serve"), 300000000, {1000, 600000000, 5000, 0}, 12};
	SNRH_PUSH(t->threads, th);
	/* ta1rt_wait 1.1..1.7 s; read() 1.8..1.9 s */
	SNRH_PUSH(t->intervals, ((struct snrh_interval){7, 0, 1100000000, 1700000000}));
	SNRH_PUSH(t->intervals, ((struct snrh_interval){7, 0x80000000u | 0, 1800000000, 1900000000}));
	SNRH_PUSH(t->offcpu, ((struct snrh_offcpu){7, 8, 1, 1150000000, 1650000000, 0, 1}));
	SNRH_PUSH(t->offcpu, ((struct snrh_offcpu){7, 0, 2, 1810000000, 1850000000, -1, -1}));
	SNRH_PUSH(t->samples, ((struct snrh_sample){7, 0, 1050000000, 1, -1}));
	SNRH_PUSH(t->samples, ((struct snrh_sample){7, 1, 1120000000, 0, 1}));
	struct snrh_device_rec d = {SNRH_DEV_KERNEL, 0, 7, 99, 0, 1200000000, 1300000000, 0, snrh_intern(t, "gemm")};
	SNRH_PUSH(t->device, d);
}

int main(void)
{
	char path[] = "/tmp/test_host_traceXXXXXX", err[700];
	int fd = mkstemp(path);
	CHECK(fd >= 0, "%s", "fd >= 0");
	close(fd);
	struct snrh_trace w, r;
	build(&w);
	CHECK(snrh_trace_write(&w, path, err, sizeof(err)) == 0, "%s", "snrh_trace_write(&w, path, err, sizeof(err)) == 0");

	snrh_trace_init(&r);
	json_object_clear(r.meta);
	CHECK(snrh_trace_read(&r, path, err, sizeof(err)) == 0, "%s", "snrh_trace_read(&r, path, err, sizeof(err)) == 0");
	CHECK(r.threads.n == 1 && r.offcpu.n == 2 && r.samples.n == 2 && r.intervals.n == 2 && r.device.n == 1, "%s", "r.threads.n == 1 && r.offcpu.n == 2 && r.samples.n == 2 && r.intervals.n == 2 && r.device.n == 1");
	CHECK(r.stacks.n == 2 && r.stacks.v[0].nframes == 2 && !strcmp(snrh_str(&r, r.stacks.v[0].frames[1].sym), "main"), "%s", "r.stacks.n == 2 && r.stacks.v[0].nframes == 2 && !strcmp(snrh_str(&r, r.stacks.v[0].frames[1].sym), \"main\")");
	CHECK(r.offcpu.v[0].ustack == 0 && r.offcpu.v[0].kstack == 1 && r.offcpu.v[1].ustack == -1, "%s", "r.offcpu.v[0].ustack == 0 && r.offcpu.v[0].kstack == 1 && r.offcpu.v[1].ustack == -1");
	CHECK(r.offcpu.v[0].end - r.offcpu.v[0].start == 500000000, "%s", "r.offcpu.v[0].end - r.offcpu.v[0].start == 500000000");
	CHECK(r.threads.v[0].offcpu_ns[1] == 600000000 && !strcmp(snrh_str(&r, r.threads.v[0].comm), "serve"), "%s", "r.threads.v[0].offcpu_ns[1] == 600000000 && !strcmp(snrh_str(&r, r.threads.v[0].comm), \"serve\")");
	CHECK(!strcmp(snrh_str(&r, r.device.v[0].name), "gemm") && r.device.v[0].corr == 99, "%s", "!strcmp(snrh_str(&r, r.device.v[0].name), \"gemm\") && r.device.v[0].corr == 99");
	CHECK(json_integer_value(json_object_get(r.meta, "pid")) == 42, "%s", "json_integer_value(json_object_get(r.meta, \"pid\")) == 42");

	/* Buckets. */
	struct snrh_bucketer *b = snrh_bucketer_new(&r);
	CHECK(!strcmp(snrh_bucket_at(b, 7, 1200000000), "H:WAIT_DEV"), "%s", "!strcmp(snrh_bucket_at(b, 7, 1200000000), \"H:WAIT_DEV\")");
	CHECK(!strcmp(snrh_bucket_at(b, 7, 1850000000), "H:IO"), "%s", "!strcmp(snrh_bucket_at(b, 7, 1850000000), \"H:IO\")");
	CHECK(snrh_bucket_at(b, 7, 1050000000) == NULL, "%s", "snrh_bucket_at(b, 7, 1050000000) == NULL");
	CHECK(snrh_bucket_at(b, 8, 1200000000) == NULL, "%s", "snrh_bucket_at(b, 8, 1200000000) == NULL");
	snrh_bucketer_free(b);

	/* A second file (CUPTI-like) merges: strings renumbered, meta kept. */
	struct snrh_trace c;
	snrh_trace_init(&c);
	json_object_set_new(c.meta, "source", json_string("cupti"));
	snrh_intern(&c, "pad");
	struct snrh_device_rec d2 = {SNRH_DEV_MEMCPY, 0, 7, 100, 0, 1300000000, 1310000000, 4096, snrh_intern(&c, "HtoD")};
	SNRH_PUSH(c.device, d2);
	char path2[] = "/tmp/test_host_trace2XXXXXX";
	fd = mkstemp(path2);
	close(fd);
	CHECK(snrh_trace_write(&c, path2, err, sizeof(err)) == 0, "%s", "snrh_trace_write(&c, path2, err, sizeof(err)) == 0");
	CHECK(snrh_trace_read(&r, path2, err, sizeof(err)) == 0, "%s", "snrh_trace_read(&r, path2, err, sizeof(err)) == 0");
	CHECK(r.device.n == 2 && !strcmp(snrh_str(&r, r.device.v[1].name), "HtoD"), "%s", "r.device.n == 2 && !strcmp(snrh_str(&r, r.device.v[1].name), \"HtoD\")");
	CHECK(json_integer_value(json_object_get(r.meta, "pid")) == 42 && json_object_get(r.meta, "merged"), "%s", "json_integer_value(json_object_get(r.meta, \"pid\")) == 42 && json_object_get(r.meta, \"merged\")");

	/* Report. */
	char *text = NULL;
	size_t len = 0;
	FILE *mem = open_memstream(&text, &len);
	struct snrh_report_opts o = {.top = 5};
	CHECK(snrh_report(&r, &o, mem) == 0, "%s", "snrh_report(&r, &o, mem) == 0");
	fclose(mem);
	CHECK(strstr(text, "H:WAIT_DEV") && strstr(text, "futex_wait") && strstr(text, "ta1rt_wait"), "%s", "strstr(text, \"H:WAIT_DEV\") && strstr(text, \"futex_wait\") && strstr(text, \"ta1rt_wait\")");
	CHECK(strstr(text, "sys:read"), "%s", "strstr(text, \"sys:read\")");
	CHECK(strstr(text, "memcpy"), "%s", "strstr(text, \"memcpy\")");
	free(text);

	/* Trace events: 1 thread name + 2 off-CPU + 2 intervals + 2 samples + 2 device. */
	json_t *ev = json_array();
	snrh_trace_events(&r, ev);
	CHECK(json_array_size(ev) == 9, "%s", "json_array_size(ev) == 9");
	json_decref(ev);

	/* A truncated file names itself. */
	CHECK(truncate(path, 40) == 0, "%s", "truncate(path, 40) == 0");
	struct snrh_trace bad;
	snrh_trace_init(&bad);
	CHECK(snrh_trace_read(&bad, path, err, sizeof(err)) != 0 && strstr(err, path), "%s", "snrh_trace_read(&bad, path, err, sizeof(err)) != 0 && strstr(err, path)");
	snrh_trace_free(&bad);

	snrh_trace_free(&w);
	snrh_trace_free(&r);
	snrh_trace_free(&c);
	unlink(path);
	unlink(path2);
	return check_report("host_trace");
}
