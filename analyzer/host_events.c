/*
 * host_events.c: a host trace as Chrome/Perfetto trace events, for
 * `snr host report --trace-events` and `snr export perfetto H.snrh`.
 * Timestamps are microseconds on the trace's clock (CLOCK_MONOTONIC; CUPTI
 * records were moved onto it when they were written). Tracks:
 *
 *   pid = traced process ("host: CMD (pid N)")
 *     tid                    "COMM TID"       on-CPU slices (the gaps between
 *                                             off-CPU intervals), off-CPU
 *                                             slices (state, waker, bucket,
 *                                             user and kernel stack in args),
 *                                             on-CPU samples (instants, stacks)
 *     SNRH_EV_TID_CALLS+tid  "COMM TID calls" probed API calls and I/O system
 *                                             calls, named "BUCKET: call"
 *     SNRH_EV_TID_CUDA+tid   "COMM TID CUDA"  CUPTI runtime/driver API records
 *   pid = SNRH_EV_PID_TA1    "TA1 device (libta1rt)": one slice per
 *                            ta1rt_launch, to the end of the ta1rt_wait that
 *                            followed it on the launching thread
 *   pid = SNRH_EV_PID_GPU+n  "GPU n (CUPTI)": kernels, copies and memsets per
 *                            stream; synchronizations on a track of their own
 *   both device processes    on/off-device tracks (analyzer/host_device.c):
 *                            the split into compute, transfer, both, queued;
 *                            libta1rt's uploads and runs; queued spans
 *
 * Flows join each launch call to its device slice, each CUPTI API
 * record to the device work with its correlation id, and each host wait
 * (H:WAIT_DEV) to the device work whose completion ended it. On-CPU slices need
 * every switch: with --min-block > 0 a gap also holds the short blocks that
 * were not emitted (args.min_block_us says so).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/host_device.h"
#include "analyzer/host_events.h"
#include "analyzer/host_report.h"
#include "lib/snr_host_trace.h"
#include "lib/snr_util.h"

static const char *const state_names[4] = {"R", "S", "D", "other"};

static double us(uint64_t ns) { return (double)ns / 1e3; }

static json_t *x_event(const char *name, const char *cat, long long pid, long long tid, uint64_t start, uint64_t end)
{
	if (end < start)
		end = start;
	return json_pack("{s:s, s:s, s:s, s:f, s:f, s:I, s:I}", "name", name, "cat", cat, "ph", "X", "ts", us(start),
			 "dur", us(end - start), "pid", (json_int_t)pid, "tid", (json_int_t)tid);
}

static void name_track(json_t *events, const char *what, long long pid, long long tid, const char *name)
{
	json_array_append_new(events, json_pack("{s:s, s:s, s:I, s:I, s:f, s:{s:s}}", "name", what, "ph", "M", "pid",
						(json_int_t)pid, "tid", (json_int_t)tid, "ts", 0.0, "args", "name", name));
}

static void flow(json_t *events, const char *name, const char *cat, unsigned long long id, int finish, long long pid,
		 long long tid, uint64_t ts)
{
	json_t *e = json_pack("{s:s, s:s, s:s, s:I, s:I, s:I, s:f}", "name", name, "cat", cat, "ph", finish ? "f" : "s",
			      "id", (json_int_t)id, "pid", (json_int_t)pid, "tid", (json_int_t)tid, "ts", us(ts));
	if (finish)
		json_object_set_new(e, "bp", json_string("e"));
	json_array_append_new(events, e);
}

/* A stack as an array of "func+0xoff (module)", leaf first. */
static json_t *stack_json(const struct snrh_trace *t, int32_t idx)
{
	json_t *a = json_array();
	if (idx < 0 || (size_t)idx >= t->stacks.n)
		return a;
	const struct snrh_stack *s = &t->stacks.v[idx];
	for (uint32_t i = 0; i < s->nframes; i++) {
		const char *mod = snrh_str(t, s->frames[i].module);
		const char *base = strrchr(mod, '/');
		char buf[512];
		snprintf(buf, sizeof(buf), "%s+0x%llx (%s)", snrh_str(t, s->frames[i].sym),
			 (unsigned long long)s->frames[i].offset, base ? base + 1 : mod);
		json_array_append_new(a, json_string(buf));
	}
	return a;
}

static const char *leaf_name(const struct snrh_trace *t, int32_t idx)
{
	if (idx >= 0 && (size_t)idx < t->stacks.n && t->stacks.v[idx].nframes)
		return snrh_str(t, t->stacks.v[idx].frames[0].sym);
	return "[unknown]";
}

static const char *comm_of(const struct snrh_trace *t, uint32_t tid)
{
	for (size_t i = 0; i < t->threads.n; i++)
		if (t->threads.v[i].tid == tid)
			return snrh_str(t, t->threads.v[i].comm);
	return NULL;
}

static int probe_is(const struct snrh_trace *t, uint32_t probe, const char *symbol)
{
	if (probe & 0x80000000u)
		return 0;
	for (size_t i = 0; i < t->probes.n; i++)
		if (t->probes.v[i].id == probe)
			return !strcmp(t->probes.v[i].symbol, symbol);
	return 0;
}

static int launch_cmp(const void *a, const void *b)
{
	const struct snrh_launch *x = a, *y = b;
	return x->start < y->start ? -1 : x->start > y->start;
}

size_t snrh_ta1_launches(const struct snrh_trace *t, struct snrh_launch **out)
{
	struct snrh_launch *v = snr_xcalloc(t->intervals.n + 1, sizeof(*v));
	size_t n = 0;
	for (size_t i = 0; i < t->intervals.n; i++) {
		const struct snrh_interval *iv = &t->intervals.v[i];
		if (probe_is(t, iv->probe, "ta1rt_launch"))
			v[n++] = (struct snrh_launch){iv->tid, iv->start, iv->end, iv->end};
	}
	snr_qsort(v, n, sizeof(*v), launch_cmp);
	/* The device is busy until the first ta1rt_wait on the launching thread
	 * that returns after the launch, unless that thread launches again first. */
	for (size_t k = 0; k < n; k++) {
		uint64_t next = UINT64_MAX, best = UINT64_MAX;
		for (size_t j = k + 1; j < n; j++)
			if (v[j].tid == v[k].tid) {
				next = v[j].start;
				break;
			}
		for (size_t i = 0; i < t->intervals.n; i++) {
			const struct snrh_interval *iv = &t->intervals.v[i];
			if (iv->tid == v[k].tid && iv->start >= v[k].call_end && iv->end <= next && iv->end < best &&
			    probe_is(t, iv->probe, "ta1rt_wait"))
				best = iv->end;
		}
		if (best != UINT64_MAX)
			v[k].end = best;
	}
	*out = v;
	return n;
}

static int offcpu_cmp(const void *a, const void *b)
{
	const struct snrh_offcpu *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

void snrh_trace_events(const struct snrh_trace *t, json_t *events)
{
	long long pid = (long long)json_integer_value(json_object_get(t->meta, "pid"));
	long long min_block = (long long)json_integer_value(json_object_get(t->meta, "min_offcpu_us"));
	json_t *cmd = json_object_get(t->meta, "command");
	const char *exe = json_string_value(json_object_get(t->meta, "exe"));
	const char *what = json_array_size(cmd) ? json_string_value(json_array_get(cmd, 0)) : exe && *exe ? exe : "?";
	char name[512];
	snprintf(name, sizeof(name), "host: %s (pid %lld)", what, pid);
	name_track(events, "process_name", pid, 0, name);
	for (size_t i = 0; i < t->threads.n; i++) {
		const struct snrh_thread *th = &t->threads.v[i];
		const char *comm = snrh_str(t, th->comm);
		snprintf(name, sizeof(name), "%s %u", comm, th->tid);
		name_track(events, "thread_name", pid, th->tid, name);
		snprintf(name, sizeof(name), "%s %u calls", comm, th->tid);
		name_track(events, "thread_name", pid, SNRH_EV_TID_CALLS + (long long)th->tid, name);
	}

	struct snrh_bucketer *bk = snrh_bucketer_new(t);
	/* CPU track: off-CPU intervals, and the on-CPU gaps between them. */
	struct snrh_offcpu *off = snr_xcalloc(t->offcpu.n + 1, sizeof(*off));
	if (t->offcpu.n) /* a truncated trace may have none (and no vector) */
		memcpy(off, t->offcpu.v, t->offcpu.n * sizeof(*off));
	snr_qsort(off, t->offcpu.n, sizeof(*off), offcpu_cmp);
	for (size_t i = 0; i < t->offcpu.n; i++) {
		const struct snrh_offcpu *e = &off[i];
		snprintf(name, sizeof(name), "off-CPU %s", state_names[e->state & 3]);
		json_t *ev = x_event(name, "offcpu", pid, e->tid, e->start, e->end);
		const char *b = snrh_bucket_for(bk, e->tid, e->start, e->kstack);
		const char *wc = e->waker ? comm_of(t, e->waker) : NULL;
		json_t *args = json_pack("{s:s, s:I, s:o, s:o}", "state", state_names[e->state & 3], "waker",
					 (json_int_t)e->waker, "user_stack", stack_json(t, e->ustack), "kernel_stack",
					 stack_json(t, e->kstack));
		if (b)
			json_object_set_new(args, "bucket", json_string(b));
		if (wc)
			json_object_set_new(args, "waker_comm", json_string(wc));
		json_object_set_new(ev, "args", args);
		json_array_append_new(events, ev);
		if (i + 1 < t->offcpu.n && off[i + 1].tid == e->tid && off[i + 1].start >= e->end) {
			json_t *on = x_event("on-CPU", "oncpu", pid, e->tid, e->end, off[i + 1].start);
			if (min_block)
				json_object_set_new(on, "args", json_pack("{s:I}", "min_block_us", (json_int_t)min_block));
			json_array_append_new(events, on);
		}
	}
	free(off);
	for (size_t i = 0; i < t->samples.n; i++) {
		const struct snrh_sample *s = &t->samples.v[i];
		const char *b = snrh_bucket_for(bk, s->tid, s->ts, s->kstack);
		json_array_append_new(
			events, json_pack("{s:s, s:s, s:s, s:s, s:f, s:I, s:I, s:{s:s, s:I, s:o, s:o}}", "name",
					  leaf_name(t, s->ustack), "cat", "sample", "ph", "i", "s", "t", "ts", us(s->ts), "pid",
					  (json_int_t)pid, "tid", (json_int_t)s->tid, "args", "bucket", b ? b : "H:APP", "cpu",
					  (json_int_t)s->cpu, "user_stack", stack_json(t, s->ustack), "kernel_stack",
					  stack_json(t, s->kstack)));
	}
	snrh_bucketer_free(bk);

	/* Calls track: probed API calls and I/O system calls, in their buckets. */
	for (size_t i = 0; i < t->intervals.n; i++) {
		const struct snrh_interval *iv = &t->intervals.v[i];
		char buf[64];
		const char *call = snrh_probe_name(t, iv->probe, buf, sizeof(buf));
		const char *bucket = snrh_probe_bucket(t, iv->probe);
		snprintf(name, sizeof(name), "%s: %s", bucket, call);
		json_t *ev = x_event(name, bucket, pid, SNRH_EV_TID_CALLS + (long long)iv->tid, iv->start, iv->end);
		json_object_set_new(ev, "args", json_pack("{s:s, s:s}", "bucket", bucket, "call", call));
		json_array_append_new(events, ev);
	}

	/* libta1rt: the device busy from each launch to the wait that ended it. */
	struct snrh_launch *ln = NULL;
	size_t nln = snrh_ta1_launches(t, &ln);
	if (nln) {
		name_track(events, "process_name", SNRH_EV_PID_TA1, 0, "TA1 device (libta1rt)");
		name_track(events, "thread_name", SNRH_EV_PID_TA1, 1, "launches");
	}
	for (size_t k = 0; k < nln; k++) {
		snprintf(name, sizeof(name), "launch #%zu", k + 1);
		json_t *ev = x_event(name, "ta1.launch", SNRH_EV_PID_TA1, 1, ln[k].start, ln[k].end);
		json_object_set_new(ev, "args", json_pack("{s:I, s:I, s:f}", "launch", (json_int_t)(k + 1), "host_tid",
							  (json_int_t)ln[k].tid, "launch_call_us",
							  us(ln[k].call_end - ln[k].start)));
		json_array_append_new(events, ev);
		flow(events, name, "ta1.launch", (1ull << 40) | (k + 1), 0, pid, SNRH_EV_TID_CALLS + (long long)ln[k].tid,
		     ln[k].start);
		flow(events, name, "ta1.launch", (1ull << 40) | (k + 1), 1, SNRH_EV_PID_TA1, 1, ln[k].start);
	}
	free(ln);

	/* CUPTI: API records on the calling thread's CUDA track, device work per
	 * GPU and stream; a flow from the API record (runtime first, else
	 * driver) with a piece of device work's correlation id to that work. */
	static const char *const kinds[] = {"?", "kernel", "memcpy", "memset", "runtime", "driver", "sync"};
	uint32_t named_gpu[64] = {0}, nnamed = 0;
	for (size_t i = 0; i < t->device.n; i++) {
		const struct snrh_device_rec *d = &t->device.v[i];
		int host_side = d->kind == SNRH_DEV_RUNTIME_API || d->kind == SNRH_DEV_DRIVER_API;
		long long dpid = host_side ? pid : SNRH_EV_PID_GPU + (long long)d->device;
		long long dtid = host_side ? SNRH_EV_TID_CUDA + (long long)d->tid
			       : d->kind == SNRH_DEV_SYNC ? SNRH_EV_TID_SYNC
							  : (long long)d->stream;
		if (!host_side) {
			uint32_t j = 0;
			while (j < nnamed && named_gpu[j] != d->device + 1)
				j++;
			if (j == nnamed && nnamed < 64) {
				named_gpu[nnamed++] = d->device + 1;
				snprintf(name, sizeof(name), "GPU %u (CUPTI)", d->device);
				name_track(events, "process_name", dpid, 0, name);
				name_track(events, "thread_name", dpid, SNRH_EV_TID_SYNC, "synchronization");
			}
		}
		json_t *ev = x_event(snrh_str(t, d->name), kinds[d->kind < 7 ? d->kind : 0], dpid, dtid, d->start, d->end);
		json_object_set_new(ev, "args", json_pack("{s:I, s:I, s:I}", "correlation", (json_int_t)d->corr, "bytes",
							  (json_int_t)d->bytes, "stream", (json_int_t)d->stream));
		json_array_append_new(events, ev);
		if (host_side || d->kind == SNRH_DEV_SYNC || !d->corr)
			continue;
		const struct snrh_device_rec *api = NULL;
		for (size_t j = 0; j < t->device.n; j++) {
			const struct snrh_device_rec *a = &t->device.v[j];
			if (a->corr == d->corr && (a->kind == SNRH_DEV_RUNTIME_API ||
						   (a->kind == SNRH_DEV_DRIVER_API && (!api || api->kind != SNRH_DEV_RUNTIME_API))))
				api = a;
		}
		if (api) {
			flow(events, "launch", "cupti.flow", (2ull << 40) | i, 0, pid, SNRH_EV_TID_CUDA + (long long)api->tid,
			     api->start);
			flow(events, "launch", "cupti.flow", (2ull << 40) | i, 1, dpid, dtid, d->start);
		}
	}
	for (size_t i = 0; i < t->threads.n; i++)
		for (size_t j = 0; j < t->device.n; j++)
			if (t->device.v[j].tid == t->threads.v[i].tid &&
			    (t->device.v[j].kind == SNRH_DEV_RUNTIME_API || t->device.v[j].kind == SNRH_DEV_DRIVER_API)) {
				snprintf(name, sizeof(name), "%s %u CUDA", snrh_str(t, t->threads.v[i].comm),
					 t->threads.v[i].tid);
				name_track(events, "thread_name", pid, SNRH_EV_TID_CUDA + (long long)t->threads.v[i].tid, name);
				break;
			}

	struct snrh_ondev od;
	snrh_ondev_build(t, &od);
	snrh_ondev_trace_events(&od, events, pid);
	snrh_ondev_free(&od);
}
