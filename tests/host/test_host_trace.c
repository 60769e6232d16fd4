/*
 * test_host_trace.c: the host trace (.snrh) round-trips; buckets follow the
 * rules in host_report.c (probed call, then I/O system call, then H:APP);
 * a CUPTI file merges into an eBPF one with strings renumbered; the report
 * and trace-event JSON say what the synthetic trace holds.
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "analyzer/host_report.h"
#include "analyzer/host_events.h"
#include "lib/snr_host_trace.h"

static void build(struct snrh_trace *t)
{
	snrh_trace_init(t);
	json_object_set_new(t->meta, "pid", json_integer(42));
	json_object_set_new(t->meta, "hz", json_integer(100));
	json_object_set_new(t->meta, "t_start_ns", json_integer(1000000000));
	json_object_set_new(t->meta, "t_end_ns", json_integer(2000000000));
	struct snrh_probe p = {0, strdup("/lib/libta1rt.so"), strdup("ta1rt_wait"), strdup("H:WAIT_DEV")};
	SNRH_PUSH(t->probes, p);
	struct snrh_probe pl = {1, strdup("/lib/libta1rt.so"), strdup("ta1rt_launch"), strdup("H:CTRL")};
	SNRH_PUSH(t->probes, pl);
	struct snrh_stack us = {0, 2, calloc(2, sizeof(struct snrh_frame))};
	us.frames[0] = (struct snrh_frame){0x1000, snrh_intern(t, "ta1rt_wait"), snrh_intern(t, "/lib/libta1rt.so"), 4};
	us.frames[1] = (struct snrh_frame){0x2000, snrh_intern(t, "main"), snrh_intern(t, "/bin/serve"), 8};
	SNRH_PUSH(t->stacks, us);
	struct snrh_stack ks = {1, 1, calloc(1, sizeof(struct snrh_frame))};
	ks.frames[0] = (struct snrh_frame){0xffff0000, snrh_intern(t, "futex_wait"), snrh_intern(t, "[kernel]"), 0};
	SNRH_PUSH(t->stacks, ks);
	struct snrh_thread th = {7, snrh_intern(t, "serve"), 300000000, {1000, 600000000, 5000, 0}, 12};
	SNRH_PUSH(t->threads, th);
	/* ta1rt_launch 1.00..1.04 s, ta1rt_wait 1.1..1.7 s; read() 1.8..1.9 s */
	SNRH_PUSH(t->intervals, ((struct snrh_interval){7, 1, 1000000000, 1040000000}));
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
	CHECK(r.threads.n == 1 && r.offcpu.n == 2 && r.samples.n == 2 && r.intervals.n == 3 && r.device.n == 1, "%s", "r.threads.n == 1 && r.offcpu.n == 2 && r.samples.n == 2 && r.intervals.n == 3 && r.device.n == 1");
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
	/* Without traced system calls, a kernel stack inside one is H:IO; a
	 * probed call around the instant still wins. */
	struct snrh_stack io = {1, 3, calloc(3, sizeof(struct snrh_frame))};
	io.frames[0] = (struct snrh_frame){0xffff0100, snrh_intern(&r, "schedule"), snrh_intern(&r, "[kernel]"), 0};
	io.frames[1] = (struct snrh_frame){0xffff0200, snrh_intern(&r, "__x64_sys_fsync"), snrh_intern(&r, "[kernel]"), 0};
	io.frames[2] = (struct snrh_frame){0xffff0300, snrh_intern(&r, "do_syscall_64"), snrh_intern(&r, "[kernel]"), 0};
	SNRH_PUSH(r.stacks, io);
	int32_t io_idx = (int32_t)r.stacks.n - 1;
	CHECK(!strcmp(snrh_stack_io_syscall(&r, io_idx) ? snrh_stack_io_syscall(&r, io_idx) : "", "fsync"), "%s",
	      "fsync found in the kernel stack");
	CHECK(snrh_stack_io_syscall(&r, 1) == NULL, "%s", "futex_wait is no I/O call");
	CHECK(snrh_stack_io_syscall(&r, 0) == NULL, "%s", "a user stack is no I/O call");
	const char *sb = snrh_bucket_for(b, 7, 1950000000, io_idx);
	CHECK(sb && !strcmp(sb, "H:IO"), "bucket from the stack: %s", sb ? sb : "none");
	sb = snrh_bucket_for(b, 7, 1200000000, io_idx);
	CHECK(sb && !strcmp(sb, "H:WAIT_DEV"), "a probed call wins over the stack: %s", sb ? sb : "none");
	CHECK(snrh_bucket_for(b, 7, 1950000000, 1) == NULL, "%s", "no bucket for a futex stack outside calls");
	snrh_bucketer_free(b);
	free(r.stacks.v[--r.stacks.n].frames);

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

	/* Trace events (tracks as in host_events.c). */
	json_t *ev = json_array();
	snrh_trace_events(&r, ev);
	size_t i;
	json_t *e;
	int noff = 0, non = 0, nsamples = 0, ncalls = 0, nlaunch = 0, nflows = 0, nkernel = 0;
	json_array_foreach(ev, i, e)
	{
		const char *cat = json_string_value(json_object_get(e, "cat"));
		const char *name = json_string_value(json_object_get(e, "name"));
		const char *ph = json_string_value(json_object_get(e, "ph"));
		json_int_t pid = json_integer_value(json_object_get(e, "pid")), tid = json_integer_value(json_object_get(e, "tid"));
		double ts = json_real_value(json_object_get(e, "ts")), dur = json_real_value(json_object_get(e, "dur"));
		json_t *args = json_object_get(e, "args");
		if (!cat)
			continue;
		if (!strcmp(cat, "offcpu") && ts == 1150000.0) {
			noff++;
			CHECK(pid == 42 && tid == 7 && dur == 500000.0 && !strcmp(name, "off-CPU S"), "off-CPU slice %s", name);
			CHECK(!strcmp(json_string_value(json_object_get(args, "bucket")), "H:WAIT_DEV") &&
				      !strcmp(json_string_value(json_array_get(json_object_get(args, "user_stack"), 0)),
					      "ta1rt_wait+0x4 (libta1rt.so)") &&
				      !strcmp(json_string_value(json_array_get(json_object_get(args, "kernel_stack"), 0)),
					      "futex_wait+0x0 ([kernel])") &&
				      json_integer_value(json_object_get(args, "waker")) == 8,
			      "%s", "off-CPU args: bucket, stacks, waker");
		} else if (!strcmp(cat, "offcpu")) {
			noff++;
			const char *b = json_string_value(json_object_get(args, "bucket"));
			CHECK(ts == 1810000.0 && json_array_size(json_object_get(args, "user_stack")) == 0 && b &&
				      !strcmp(b, "H:IO"),
			      "second off-CPU slice at %f, in %s", ts, b ? b : "no bucket");
		} else if (!strcmp(cat, "oncpu")) {
			non++;
			CHECK(tid == 7 && ts == 1650000.0 && dur == 160000.0, "on-CPU gap at %f for %f", ts, dur);
		} else if (!strcmp(cat, "sample")) {
			nsamples++;
			CHECK(!strcmp(ph, "i") && tid == 7, "%s", "sample is an instant on the thread");
		} else if (!strcmp(cat, "H:WAIT_DEV") || !strcmp(cat, "H:IO") || !strcmp(cat, "H:CTRL")) {
			ncalls++;
			CHECK(tid == SNRH_EV_TID_CALLS + 7, "call %s on tid %lld", name, (long long)tid);
			CHECK(!strcmp(name, "H:WAIT_DEV: ta1rt_wait") || !strcmp(name, "H:IO: sys:read") ||
				      !strcmp(name, "H:CTRL: ta1rt_launch"),
			      "call named %s", name);
		} else if (!strcmp(cat, "ta1.launch") && !strcmp(ph, "X")) {
			nlaunch++;
			CHECK(pid == SNRH_EV_PID_TA1 && ts == 1000000.0 && dur == 700000.0 && !strcmp(name, "launch #1"),
			      "launch slice [%f, +%f) %s", ts, dur, name);
		} else if (!strcmp(cat, "ta1.launch")) {
			nflows++;
		} else if (!strcmp(cat, "kernel")) {
			nkernel++;
			CHECK(pid == SNRH_EV_PID_GPU && tid == 7 && ts == 1200000.0, "%s", "kernel on GPU 0 stream 7");
		}
	}
	CHECK(noff == 2 && non == 1 && nsamples == 2 && ncalls == 3 && nlaunch == 1 && nflows == 2 && nkernel == 1,
	      "events: %d off-CPU, %d on-CPU, %d samples, %d calls, %d launches, %d flow ends, %d kernels", noff, non,
	      nsamples, ncalls, nlaunch, nflows, nkernel);
	struct snrh_launch *ln = NULL;
	CHECK(snrh_ta1_launches(&r, &ln) == 1 && ln[0].call_end == 1040000000 && ln[0].end == 1700000000,
	      "%s", "one launch, busy until its wait returned");
	free(ln);
	json_decref(ev);

	/* A truncated file names itself. */
	CHECK(truncate(path, 40) == 0, "%s", "truncate(path, 40) == 0");
	struct snrh_trace bad;
	snrh_trace_init(&bad);
	CHECK(snrh_trace_read(&bad, path, err, sizeof(err)) != 0 && strstr(err, path), "%s", "snrh_trace_read(&bad, path, err, sizeof(err)) != 0 && strstr(err, path)");
	snrh_trace_free(&bad);

	/* Written as the recording goes: three flushes, each adding strings,
	 * stacks and events, read back whole; then every proper prefix of the
	 * file (so every chunk boundary too) reads as truncated or fails with
	 * the path named, never as complete. */
	struct snrh_trace g, back;
	snrh_trace_init(&g);
	json_object_set_new(g.meta, "pid", json_integer(9));
	struct snrh_writer wr;
	CHECK(snrh_writer_open(&wr, &g, path, err, sizeof(err)) == 0, "writer_open: %s", err);
	for (int round = 0; round < 3; round++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "f%d", round);
		struct snrh_stack st = {0, 1, calloc(1, sizeof(struct snrh_frame))};
		st.frames[0] = (struct snrh_frame){0x100u + (unsigned)round, snrh_intern(&g, nm), snrh_intern(&g, "/bin/x"), 0};
		SNRH_PUSH(g.stacks, st);
		SNRH_PUSH(g.offcpu, ((struct snrh_offcpu){9, 0, 1, 100u * (unsigned)round, 100u * (unsigned)round + 50,
							 (int32_t)g.stacks.n - 1, -1}));
		SNRH_PUSH(g.samples, ((struct snrh_sample){9, 0, 100u * (unsigned)round + 60, (int32_t)g.stacks.n - 1, -1}));
		CHECK(snrh_writer_flush(&wr, &g, err, sizeof(err)) == 0, "flush %d: %s", round, err);
	}
	struct snrh_thread gt = {9, snrh_intern(&g, "x"), 30, {0, 150, 0, 0}, 3};
	SNRH_PUSH(g.threads, gt);
	CHECK(snrh_writer_close(&wr, &g, err, sizeof(err)) == 0, "writer_close: %s", err);
	bool truncated = true;
	snrh_trace_init(&back);
	json_object_clear(back.meta);
	CHECK(snrh_trace_read_partial(&back, path, &truncated, err, sizeof(err)) == 0 && !truncated,
	      "streamed file reads whole: %s", err);
	CHECK(back.offcpu.n == 3 && back.samples.n == 3 && back.threads.n == 1 && back.stacks.n == 3, "%s",
	      "streamed file: 3 intervals, 3 samples, 1 thread, 3 stacks");
	for (size_t k = 0; k < 3 && back.offcpu.n == 3; k++) {
		char nm[32];
		snprintf(nm, sizeof(nm), "f%zu", k);
		const struct snrh_stack *st = &back.stacks.v[back.offcpu.v[k].ustack];
		CHECK(!strcmp(snrh_str(&back, st->frames[0].sym), nm) && back.samples.v[k].ustack == back.offcpu.v[k].ustack,
		      "flush %zu: its stack named %s", k, snrh_str(&back, st->frames[0].sym));
	}
	snrh_trace_free(&back);
	FILE *whole = fopen(path, "rb");
	CHECK(whole != NULL, "%s", "reopen");
	unsigned char fbuf[1 << 16];
	size_t flen = whole ? fread(fbuf, 1, sizeof(fbuf), whole) : 0;
	if (whole)
		fclose(whole);
	int nfailed = 0, ntrunc = 0, nwhole = 0;
	for (size_t cut = 0; cut < flen; cut++) {
		FILE *part = fopen(path2, "wb");
		fwrite(fbuf, 1, cut, part);
		fclose(part);
		snrh_trace_init(&back);
		json_object_clear(back.meta);
		truncated = false;
		if (snrh_trace_read_partial(&back, path2, &truncated, err, sizeof(err)))
			nfailed += strstr(err, path2) != NULL;
		else if (truncated && strstr(err, path2))
			ntrunc++;
		else
			nwhole++;
		snrh_trace_free(&back);
	}
	CHECK(nwhole == 0 && nfailed + ntrunc == (int)flen && ntrunc > 0,
	      "%zu cuts: %d read as complete, %d truncated, %d refused", flen, nwhole, ntrunc, nfailed);
	/* A rebuilt thread table for a truncated trace: S time from the intervals. */
	snrh_trace_init(&back);
	json_object_clear(back.meta);
	json_object_set_new(back.meta, "hz", json_integer(100));
	SNRH_PUSH(back.offcpu, ((struct snrh_offcpu){5, 0, 1, 1000, 3000, -1, -1}));
	SNRH_PUSH(back.samples, ((struct snrh_sample){5, 0, 3500, -1, -1}));
	CHECK(snrh_trace_rebuild_threads(&back) == 1 && back.threads.v[0].offcpu_ns[1] == 2000 &&
		      back.threads.v[0].oncpu_ns == 10000000 &&
		      json_integer_value(json_object_get(back.meta, "t_end_ns")) == 3500,
	      "%s", "rebuilt thread: 2000 ns S, one 10 ms sample, ends at the last event");
	snrh_trace_free(&back);
	snrh_trace_free(&g);

	snrh_trace_free(&w);
	snrh_trace_free(&r);
	snrh_trace_free(&c);
	unlink(path);
	unlink(path2);
	return check_report("host_trace");
}
