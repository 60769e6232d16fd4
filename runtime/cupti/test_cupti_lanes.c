/*
 * test_cupti_lanes.c: the device's lanes of the host page's timeline
 * (analyzer/host_device_lanes.c) on CUPTI activity, known answers. No GPU
 * here: the records are written by hand into one activity buffer as CUPTI
 * lays them out, on a CUPTI clock 7 s ahead of the host's and running
 * 0.1% fast, read by CUPTI's own iterator through snr_cupti_consume_buffer
 * and mapped onto CLOCK_MONOTONIC by two clock pairs (what libsnr_cupti.so
 * does); then the lanes must sit on the host threads' time axis.
 *
 * usage: test_cupti_lanes [OUT.snrh]: OUT.snrh gets the trace, for the
 * page's test in a browser (tests/an/report_cupti_lanes.sh).
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/host_device.h"
#include "analyzer/host_device_lanes.h"
#include "cupti_records.h"
#include "tests/check.h"

#define U 10000ull				       /* ns per time unit below: the window is 10 ms */
#define HOST0 1000000000ull			       /* CLOCK_MONOTONIC of unit 0 */
#define CUPTI0 8000000000ull			       /* CUPTI's clock at unit 0 */
#define CU(x) (CUPTI0 + (uint64_t)(x)*U * 1001 / 1000) /* unit x on CUPTI's clock (0.1% fast) */
#define MONO(x) (HOST0 + (uint64_t)(x)*U)

static uint8_t *buf;
static size_t used;

static void *rec(size_t size, CUpti_ActivityKind kind)
{
	CHECK(size % 8 == 0, "record size %zu", size);
	void *r = buf + used;
	used += size;
	((CUpti_Activity *)r)->kind = kind;
	return r;
}

static void api(uint32_t corr, uint32_t tid, uint64_t a, uint64_t b)
{
	CUpti_ActivityAPI *r = rec(sizeof(*r), CUPTI_ACTIVITY_KIND_RUNTIME);
	r->cbid = 211;
	r->correlationId = corr;
	r->threadId = tid;
	r->start = CU(a);
	r->end = CU(b);
}

static void kernel(const char *name, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t a, uint64_t b)
{
	CUpti_ActivityKernel10 *k = rec(sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->name = name;
	k->deviceId = dev;
	k->streamId = stream;
	k->correlationId = corr;
	k->start = CU(a);
	k->end = CU(b);
}

static void copy(uint8_t kind, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t bytes, uint64_t a,
		 uint64_t b)
{
	CUpti_ActivityMemcpy6 *m = rec(sizeof(*m), CUPTI_ACTIVITY_KIND_MEMCPY);
	m->copyKind = kind;
	m->deviceId = dev;
	m->bytes = bytes;
	m->streamId = stream;
	m->correlationId = corr;
	m->start = CU(a);
	m->end = CU(b);
}

static int near(double got, double want)
{
	return got > want - 1e-6 && got < want + 1e-6;
}

/* entry k of array a, as a string / a number */
static const char *s_at(json_t *a, size_t k)
{
	const char *s = json_string_value(json_array_get(a, k));
	return s ? s : "(none)";
}

static double n_at(json_t *a, size_t k)
{
	return json_number_value(json_array_get(a, k));
}

static void thread(struct snrh_trace *t, uint32_t tid, const char *comm)
{
	struct snrh_thread th = {.tid = tid, .comm = snrh_intern(t, comm), .oncpu_ns = 2 * U};
	SNRH_PUSH(t->threads, th);
}

int main(int argc, char **argv)
{
	buf = aligned_alloc(8, 1 << 16);
	memset(buf, 0, 1 << 16);
	/* times in units (10 us) from the window's start; GPU 0 */
	api(1, 77, 10, 20);						  /* cudaMemcpyAsync */
	copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0, 7, 1, 1 << 20, 50, 150); /* 100 */
	api(2, 78, 30, 40);						  /* cudaLaunchKernel */
	kernel("gemm<float, 128>", 0, 8, 2, 100, 300);			  /* 200 */
	CUpti_ActivityMemset4 *ms = rec(sizeof(*ms), CUPTI_ACTIVITY_KIND_MEMSET);
	ms->streamId = 9;
	ms->start = CU(250); /* no API record: no launching thread */
	ms->end = CU(340);   /* 90 */
	ms->bytes = 4096;
	api(3, 77, 400, 410);
	kernel("relu", 0, 8, 3, 500, 605); /* 105 */
	api(4, 77, 420, 430);
	copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 0, 7, 4, 65536, 580, 700); /* 120 */
	/* GPU 1: a kernel on stream 3 and a copy on stream 4 ending later; the
	 * host synchronizes stream 3 only */
	kernel("tail", 1, 3, 0, 890, 900);
	copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 1, 4, 0, 512, 890, 950);
	CUpti_ActivitySynchronization2 *sy = rec(sizeof(*sy), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	sy->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	sy->streamId = 3;
	sy->start = CU(885);
	sy->end = CU(985);

	struct snrh_trace t;
	snrh_trace_init(&t);
	uint64_t kept = 0, skipped = 0;
	snr_cupti_consume_buffer(&t, buf, used, NULL, &kept, &skipped);
	CHECK(kept == 12 && skipped == 0, "CUPTI's iterator gave %llu records (%llu skipped), want 12",
	      (unsigned long long)kept, (unsigned long long)skipped);
	/* libsnr_cupti.so's two clock pairs: at unit 0 and at unit 1000 */
	struct snr_cupti_clock clk = {CU(0), MONO(0), CU(1000), MONO(1000), 2};
	snr_cupti_apply_clock(&t, &clk);

	/* what the eBPF side adds: the window, the threads, the waits */
	json_object_set_new(t.meta, "pid", json_integer(4242));
	json_object_set_new(t.meta, "t_start_ns", json_integer((json_int_t)MONO(0)));
	json_object_set_new(t.meta, "t_end_ns", json_integer((json_int_t)MONO(1000)));
	json_object_set_new(t.meta, "hz", json_integer(997));
	thread(&t, 77, "infer");
	thread(&t, 78, "loader");
	struct snrh_probe p = {0, strdup("/usr/lib/libcudart.so.12"), strdup("cudaStreamSynchronize"),
			       strdup("H:WAIT_DEV")};
	SNRH_PUSH(t.probes, p);
	SNRH_PUSH(t.intervals,
		  ((struct snrh_interval){77, 0, MONO(200), MONO(360)})); /* ended by the memset */
	SNRH_PUSH(t.intervals, ((struct snrh_interval){77, 0, MONO(450), MONO(710)})); /* by GPU 0's DtoH */
	SNRH_PUSH(t.intervals, ((struct snrh_interval){77, 0, MONO(800), MONO(810)})); /* by nothing */
	SNRH_PUSH(t.intervals,
		  ((struct snrh_interval){77, 0, MONO(880), MONO(990)})); /* stream 3: by "tail" */
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, MONO(210), MONO(355), -1, -1}));
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, MONO(460), MONO(705), -1, -1}));
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, MONO(881), MONO(989), -1, -1}));

	struct snrh_ondev o;
	snrh_ondev_build(&t, &o);
	json_t *d = snrh_device_lanes_json(&t, &o, MONO(0), 20000);
	json_t *lanes = json_object_get(d, "lanes"), *work = json_object_get(d, "work"),
	       *waits = json_object_get(d, "waits");
	static const char *const want_lanes[] = {"GPU 0 stream 7", "GPU 0 stream 8", "GPU 0 stream 9",
						 "GPU 1 stream 3", "GPU 1 stream 4"};
	CHECK(json_array_size(lanes) == 5, "%zu lanes, want one per (GPU, stream): 5",
	      json_array_size(lanes));
	for (size_t k = 0; k < 5; k++)
		CHECK(!strcmp(s_at(lanes, k), want_lanes[k]), "lane %zu: %s, want %s", k, s_at(lanes, k),
		      want_lanes[k]);
	CHECK(!strcmp(s_at(json_object_get(d, "lane_source"), 0), "CUPTI"), "lane 0 from %s",
	      s_at(json_object_get(d, "lane_source"), 0));
	/* each piece: lane, start and end in ms from the window's start (on the
	 * host's clock, CUPTI's skew and offset undone), kind, name, bytes,
	 * launching thread, correlation id, submission, direction */
	static const struct {
		int lane;
		double a, b;
		int xfer;
		const char *name;
		long long bytes;
		const char *by;
		int corr;
		double submit;
		const char *dir;
	} want[] = {
	    {0, 0.5, 1.5, 1, "memcpy HtoD", 1 << 20, "infer 77", 1, 0.1, "host to device"},
	    {1, 1.0, 3.0, 0, "gemm<float, 128>", 0, "loader 78", 2, 0.3, ""},
	    {2, 2.5, 3.4, 1, "memset", 4096, "", 0, 2.5, ""},
	    {1, 5.0, 6.05, 0, "relu", 0, "infer 77", 3, 4.0, ""},
	    {0, 5.8, 7.0, 1, "memcpy DtoH", 65536, "infer 77", 4, 4.2, "device to host"},
	    {3, 8.9, 9.0, 0, "tail", 0, "", 0, 8.9, ""},
	    {4, 8.9, 9.5, 1, "memcpy DtoH", 512, "", 0, 8.9, "device to host"},
	};
	size_t nw = sizeof(want) / sizeof(want[0]);
	CHECK(json_array_size(work) == nw &&
		  json_integer_value(json_object_get(d, "work_total")) == (json_int_t)nw,
	      "%zu pieces of work drawn, want %zu", json_array_size(work), nw);
	for (size_t k = 0; k < nw && k < json_array_size(work); k++) {
		json_t *w = json_array_get(work, k);
		char *js = json_dumps(w, JSON_COMPACT);
		/* CUPTI's clock maps to the ns, give or take the map's rounding */
		CHECK(n_at(w, 0) == want[k].lane && n_at(w, 1) > want[k].a - 1e-5 &&
			  n_at(w, 1) < want[k].a + 1e-5 && n_at(w, 2) > want[k].b - 1e-5 &&
			  n_at(w, 2) < want[k].b + 1e-5 && n_at(w, 3) == want[k].xfer &&
			  !strcmp(s_at(w, 4), want[k].name) && n_at(w, 5) == (double)want[k].bytes &&
			  !strcmp(s_at(w, 6), want[k].by) && n_at(w, 7) == want[k].corr &&
			  n_at(w, 8) > want[k].submit - 1e-5 && n_at(w, 8) < want[k].submit + 1e-5 &&
			  !strcmp(s_at(w, 9), want[k].dir),
		      "work %zu: %s, want lane %d, %g-%g ms, %s, %lld bytes, by '%s', corr %d, submitted %g, "
		      "'%s'",
		      k, js, want[k].lane, want[k].a, want[k].b, want[k].name, want[k].bytes, want[k].by,
		      want[k].corr, want[k].submit, want[k].dir);
		free(js);
	}
	/* the waits on thread 77's lane (0), each linked to the piece that ended it */
	static const struct {
		double a, b;
		long work;
	} wwant[] = {{2.0, 3.6, 2}, {4.5, 7.1, 4}, {8.0, 8.1, -1}, {8.8, 9.9, 5}};
	CHECK(json_array_size(waits) == 4, "%zu waits, want 4", json_array_size(waits));
	for (size_t k = 0; k < 4 && k < json_array_size(waits); k++) {
		json_t *w = json_array_get(waits, k);
		char *js = json_dumps(w, JSON_COMPACT);
		CHECK(n_at(w, 0) == 0 && near(n_at(w, 1), wwant[k].a) && near(n_at(w, 2), wwant[k].b) &&
			  !strcmp(s_at(w, 3), "cudaStreamSynchronize") && n_at(w, 4) == wwant[k].work,
		      "wait %zu: %s, want thread lane 0, %g-%g ms, ended by work %ld", k, js, wwant[k].a,
		      wwant[k].b, wwant[k].work);
		free(js);
	}
	json_decref(d);

	/* past the cap: the 3 longest pieces (gemm 2, DtoH 1.2, relu 1.05 ms) in
	 * lane order, the 3 longest waits; a wait whose work is not drawn links
	 * to none */
	d = snrh_device_lanes_json(&t, &o, MONO(0), 3);
	work = json_object_get(d, "work");
	waits = json_object_get(d, "waits");
	CHECK(json_array_size(work) == 3 && !strcmp(s_at(json_array_get(work, 0), 4), "gemm<float, 128>") &&
		  !strcmp(s_at(json_array_get(work, 1), 4), "relu") &&
		  !strcmp(s_at(json_array_get(work, 2), 4), "memcpy DtoH") &&
		  json_integer_value(json_object_get(d, "work_total")) == 7,
	      "capped at 3: %s", json_dumps(work, JSON_COMPACT));
	CHECK(json_array_size(waits) == 3 && n_at(json_array_get(waits, 0), 4) == -1 &&
		  n_at(json_array_get(waits, 1), 4) == 2 && n_at(json_array_get(waits, 2), 4) == -1 &&
		  json_integer_value(json_object_get(d, "waits_total")) == 4,
	      "waits capped at 3: %s", json_dumps(waits, JSON_COMPACT));
	json_decref(d);

	if (argc > 1) {
		char err[700];
		CHECK(snrh_trace_write(&t, argv[1], err, sizeof(err)) == 0, "writing %s: %s", argv[1], err);
	}
	snrh_ondev_free(&o);
	snrh_trace_free(&t);
	free(buf);
	return check_report("cupti_lanes");
}
