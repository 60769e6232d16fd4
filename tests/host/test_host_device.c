/*
 * test_host_device.c: on/off-device known answers (analyzer/host_device.c)
 * on a libta1rt-shaped trace built by hand: two launches, each an upload
 * (G:XFER) and a run (G:COMP) on the device thread, submitted by
 * ta1rt_launch on the main thread; one ta1rt_wait held by the first run,
 * one that finds the second done. Every figure below is worked out by hand
 * from the intervals in the comments. Also: the split's parts add up to
 * the window for random work (and the union equals a per-nanosecond
 * count), and the Perfetto events carry the wait-to-work flows.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "analyzer/host_device.h"
#include "analyzer/host_events.h"
#include "lib/snr_host_trace.h"

static void probe(struct snrh_trace *t, uint32_t id, const char *sym, const char *bucket)
{
	struct snrh_probe p = {id, strdup("/build/runtime/libta1rt.so"), strdup(sym), strdup(bucket)};
	SNRH_PUSH(t->probes, p);
}

static void iv(struct snrh_trace *t, uint32_t tid, uint32_t probe, uint64_t a, uint64_t b)
{
	SNRH_PUSH(t->intervals, ((struct snrh_interval){tid, probe, a, b}));
}

static void ta1_trace(struct snrh_trace *t)
{
	snrh_trace_init(t);
	json_object_set_new(t->meta, "pid", json_integer(42));
	json_object_set_new(t->meta, "t_start_ns", json_integer(1000));
	json_object_set_new(t->meta, "t_end_ns", json_integer(2000));
	SNRH_PUSH(t->threads, ((struct snrh_thread){10, snrh_intern(t, "serve"), 0, {0}, 0}));
	SNRH_PUSH(t->threads, ((struct snrh_thread){11, snrh_intern(t, "ta1-device"), 0, {0}, 0}));
	probe(t, 0, "ta1rt_launch", "H:CTRL");
	probe(t, 1, "ta1rt_device_upload", "G:XFER");
	probe(t, 2, "ta1rt_device_run", "G:COMP");
	probe(t, 3, "ta1rt_wait", "H:WAIT_DEV");
	/* launch 1: call 1100-1110, upload 1130-1150, run 1150-1400; the wait
	 * 1120-1420 is ended by the run (wake-up 20) */
	iv(t, 10, 0, 1100, 1110);
	iv(t, 11, 1, 1130, 1150);
	iv(t, 11, 2, 1150, 1400);
	iv(t, 10, 3, 1120, 1420);
	/* launch 2: call 1500-1505, upload 1540-1560, run 1560-1600; the wait
	 * 1700-1710 comes after the run ended: held by nothing */
	iv(t, 10, 0, 1500, 1505);
	iv(t, 11, 1, 1540, 1560);
	iv(t, 11, 2, 1560, 1600);
	iv(t, 10, 3, 1700, 1710);
	/* the main thread off CPU 1125-1415 (290 inside the first wait) and
	 * 1690-1705 (5 inside the second) */
	SNRH_PUSH(t->offcpu, ((struct snrh_offcpu){10, 11, 1, 1125, 1415, -1, -1}));
	SNRH_PUSH(t->offcpu, ((struct snrh_offcpu){10, 0, 1, 1690, 1705, -1, -1}));
}

static json_int_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

static void test_ta1(void)
{
	struct snrh_trace t;
	ta1_trace(&t);
	struct snrh_ondev o;
	snrh_ondev_build(&t, &o);
	CHECK(o.ndev == 1 && !strcmp(o.dev[0].source, "libta1rt") && o.dev[0].key == 11,
	      "one TA1 device, thread 11");
	CHECK(o.nwork == 4, "4 pieces of work, not %zu", o.nwork);
	const struct snrh_dev_stats *s = &o.dev[0];
	/* idle 1000-1100, queued 1100-1130, transfer 1130-1150, compute
	 * 1150-1400, idle 1400-1500, queued 1500-1540, transfer 1540-1560,
	 * compute 1560-1600, idle 1600-2000 */
	CHECK(s->t0 == 1000 && s->t1 == 2000, "window %llu-%llu", (unsigned long long)s->t0,
	      (unsigned long long)s->t1);
	CHECK(s->compute_only == 290, "compute only %llu, want 250 + 40",
	      (unsigned long long)s->compute_only);
	CHECK(s->xfer_only == 40, "transfer only %llu, want 20 + 20", (unsigned long long)s->xfer_only);
	CHECK(s->both == 0, "both %llu, want 0 (one thread does both in turn)", (unsigned long long)s->both);
	CHECK(s->queued == 70, "queued %llu, want 30 + 40", (unsigned long long)s->queued);
	CHECK(s->idle == 600, "idle %llu, want 100 + 100 + 400", (unsigned long long)s->idle);
	/* launches in submission order */
	CHECK(o.work[0].xfer && o.work[0].seq == 1 && o.work[0].submit == 1100 && o.work[0].submit_tid == 10,
	      "upload #1 submitted by launch 1 at 1100 (seq %u submit %llu)", o.work[0].seq,
	      (unsigned long long)o.work[0].submit);
	CHECK(!o.work[1].xfer && o.work[1].seq == 1 && o.work[1].submit == o.work[1].start,
	      "run #1 follows its upload");
	CHECK(o.work[2].seq == 2 && o.work[2].submit == 1500 && o.work[3].seq == 2, "launch 2");
	/* waits */
	CHECK(o.nwaits == 2, "%zu waits", o.nwaits);
	CHECK(o.waits[0].work == 1 && o.waits[0].offcpu_ns == 290,
	      "wait 1 ended by run #1 (work %ld), 290 off-CPU (%llu)", o.waits[0].work,
	      (unsigned long long)o.waits[0].offcpu_ns);
	CHECK(o.waits[1].work == -1 && o.waits[1].offcpu_ns == 5,
	      "wait 2 held by nothing (work %ld), 5 off-CPU", o.waits[1].work);
	CHECK(o.work[1].waits == 1 && o.work[1].wait_ns == 300 && o.work[1].wake_ns == 20,
	      "run #1 caused 300 ns of wait");
	CHECK(o.work[3].waits == 0 && o.work[0].waits == 0, "nothing else caused waits");
	/* the first wait, 1120-1420: queued 1120-1130 (launch 1 submitted at
	 * 1100, its upload starts at 1130), transfer 1130-1150, compute
	 * 1150-1400, idle 1400-1420 */
	const uint64_t *du = o.waits[0].during;
	CHECK(du[SNRH_SPLIT_QUEUED] == 10 && du[SNRH_SPLIT_XFER] == 20 && du[SNRH_SPLIT_COMPUTE] == 250 &&
		  du[SNRH_SPLIT_IDLE] == 20 && du[SNRH_SPLIT_BOTH] == 0,
	      "wait 1 during: %llu %llu %llu %llu %llu", (unsigned long long)du[0], (unsigned long long)du[1],
	      (unsigned long long)du[2], (unsigned long long)du[3], (unsigned long long)du[4]);
	CHECK(o.work[0].waited_during_ns == 20 && o.work[1].waited_during_ns == 250 &&
		  o.work[2].waited_during_ns == 0 && o.work[3].waited_during_ns == 0,
	      "host wait during upload #1 20, run #1 250, launch 2 none");

	json_t *j = snrh_ondev_json(&o);
	json_t *d = json_array_get(json_object_get(j, "devices"), 0);
	CHECK(jint(d, "on_device_ns") == 330 && jint(d, "window_ns") == 1000 &&
		  json_real_value(json_object_get(d, "active_ratio")) == 0.33,
	      "JSON on-device %lld of %lld", (long long)jint(d, "on_device_ns"),
	      (long long)jint(d, "window_ns"));
	json_t *hw = json_object_get(j, "host_waits");
	CHECK(jint(hw, "count") == 2 && jint(hw, "ns") == 310 && jint(hw, "linked") == 1 &&
		  jint(hw, "linked_ns") == 300 && jint(hw, "wake_ns") == 20 && jint(hw, "offcpu_ns") == 295,
	      "JSON host waits");
	json_decref(j);

	/* the text section */
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	snrh_ondev_print(&o, 5, f);
	fclose(f);
	CHECK(strstr(buf, "TA1 device, thread ta1-device 11") && strstr(buf, "33.0%"), "text: %s", buf);
	CHECK(strstr(buf, "host waits (H:WAIT_DEV): 2, 0.000 ms"), "text waits: %s", buf);
	free(buf);

	/* Perfetto: one flow, from the first wait on the main thread's calls
	 * track to the run's compute track, at the run's last nanosecond */
	json_t *ev = json_array();
	snrh_ondev_trace_events(&o, ev, 42);
	int s_ok = 0, f_ok = 0, flows = 0, compute = 0, queued_b = 0;
	size_t i;
	json_t *e;
	json_array_foreach(ev, i, e)
	{
		const char *cat = json_string_value(json_object_get(e, "cat"));
		const char *ph = json_string_value(json_object_get(e, "ph"));
		double ts = json_real_value(json_object_get(e, "ts"));
		if (cat && !strcmp(cat, "ondev.wait")) {
			flows++;
			if (!strcmp(ph, "s"))
				s_ok = jint(e, "pid") == 42 && jint(e, "tid") == SNRH_EV_TID_CALLS + 10 &&
				       ts == 1.12;
			else
				f_ok = jint(e, "pid") == SNRH_EV_PID_TA1 &&
				       jint(e, "tid") == SNRH_EV_TID_ONDEV + 1 && ts == 1.399;
		}
		if (cat && !strcmp(cat, "ondev") &&
		    !strcmp(json_string_value(json_object_get(e, "name")), "compute"))
			compute++;
		if (cat && !strcmp(cat, "queued") && !strcmp(ph, "X") &&
		    jint(e, "tid") == SNRH_EV_TID_ONDEV + 3)
			queued_b++;
	}
	CHECK(flows == 2 && s_ok && f_ok, "wait flow: %d events, start ok %d, finish ok %d", flows, s_ok,
	      f_ok);
	CHECK(compute == 2 && queued_b == 2, "split slices: %d compute, %d queued spans", compute, queued_b);
	json_decref(ev);
	snrh_ondev_free(&o);
	snrh_trace_free(&t);
}

/* Random work on one device: the parts add up to the window, and compute,
 * transfer, both and queued match a count nanosecond by nanosecond. */
static void test_random(void)
{
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	for (int round = 0; round < 50; round++) {
		enum { N = 12, W = 400 };
		struct snrh_dev_work w[N];
		for (int i = 0; i < N; i++) {
			uint64_t a = check_rand(&seed) % W, len = check_rand(&seed) % 60,
				 q = check_rand(&seed) % 40;
			w[i] = (struct snrh_dev_work){.xfer = (int)(check_rand(&seed) & 1),
						      .start = a,
						      .end = a + len,
						      .submit = a > q ? a - q : 0,
						      .name = "x"};
		}
		struct snrh_dev_stats s = {.t0 = 0, .t1 = W + 60};
		snrh_ondev_partition(w, N, &s);
		uint64_t want[5] = {0};
		for (uint64_t ns = s.t0; ns < s.t1; ns++) {
			int c = 0, x = 0, q = 0;
			for (int i = 0; i < N; i++) {
				int run = ns >= w[i].start && ns < w[i].end;
				c |= run && !w[i].xfer;
				x |= run && w[i].xfer;
				q |= ns >= w[i].submit && ns < w[i].start;
			}
			want[c && x ? 2 : c ? 0 : x ? 1 : q ? 3 : 4]++;
		}
		CHECK(s.compute_only == want[0] && s.xfer_only == want[1] && s.both == want[2] &&
			  s.queued == want[3] && s.idle == want[4],
		      "round %d: split %llu/%llu/%llu/%llu/%llu, counted %llu/%llu/%llu/%llu/%llu", round,
		      (unsigned long long)s.compute_only, (unsigned long long)s.xfer_only,
		      (unsigned long long)s.both, (unsigned long long)s.queued, (unsigned long long)s.idle,
		      (unsigned long long)want[0], (unsigned long long)want[1], (unsigned long long)want[2],
		      (unsigned long long)want[3], (unsigned long long)want[4]);
	}
}

/* Overlapping device records (as CUPTI's are): a long kernel, a short copy
 * inside it that ends before the wait, and a kernel that ends the wait;
 * the long kernel ran through the whole wait. */
static void test_nested(void)
{
	struct snrh_trace t;
	snrh_trace_init(&t);
	json_object_set_new(t.meta, "t_start_ns", json_integer(1));
	json_object_set_new(t.meta, "t_end_ns", json_integer(1000));
	SNRH_PUSH(t.device, ((struct snrh_device_rec){SNRH_DEV_KERNEL, 5, 1, 0, 0, 10, 1000, 0,
						      snrh_intern(&t, "long")}));
	SNRH_PUSH(t.device, ((struct snrh_device_rec){SNRH_DEV_MEMCPY, 5, 2, 0, 0, 100, 200, 8,
						      snrh_intern(&t, "copy")}));
	SNRH_PUSH(t.device, ((struct snrh_device_rec){SNRH_DEV_KERNEL, 5, 3, 0, 0, 550, 560, 0,
						      snrh_intern(&t, "k3")}));
	probe(&t, 0, "cudaDeviceSynchronize", "H:WAIT_DEV");
	iv(&t, 9, 0, 500, 600);
	struct snrh_ondev o;
	snrh_ondev_build(&t, &o);
	CHECK(o.nwork == 3 && o.nwaits == 1 && o.waits[0].work == 2, "the wait is ended by k3 (work %ld)",
	      o.nwaits ? o.waits[0].work : -2);
	CHECK(o.work[0].waited_during_ns == 100 && o.work[1].waited_during_ns == 0 &&
		  o.work[2].waited_during_ns == 10,
	      "host wait during long %llu (want 100), copy %llu (0), k3 %llu (10)",
	      (unsigned long long)o.work[0].waited_during_ns, (unsigned long long)o.work[1].waited_during_ns,
	      (unsigned long long)o.work[2].waited_during_ns);
	/* 1-10 idle, 10-100 compute, 100-200 both, 200-1000 compute */
	CHECK(o.dev[0].compute_only == 890 && o.dev[0].both == 100 && o.dev[0].idle == 9, "nested split");
	snrh_ondev_free(&o);
	snrh_trace_free(&t);
}

int main(void)
{
	test_nested();
	test_ta1();
	test_random();
	/* no device work: nothing printed */
	struct snrh_trace t;
	snrh_trace_init(&t);
	struct snrh_ondev o;
	snrh_ondev_build(&t, &o);
	CHECK(o.ndev == 0 && o.nwork == 0, "an empty trace has no device");
	snrh_ondev_free(&o);
	snrh_trace_free(&t);
	return check_report("host_device");
}
