/*
 * test_cupti_ondev.c: on/off-device known answers on CUPTI activity. No GPU
 * here, so no kernel runs: the records are written by hand into one
 * activity buffer as CUPTI lays them out (each record its own struct, back
 * to back, 8-byte aligned), the buffer is read by CUPTI's own
 * cuptiActivityGetNextRecord through snr_cupti_consume_buffer (what
 * libsnr_cupti.so does with every buffer CUPTI completes), and the result
 * goes through analyzer/host_device.c. The copies and kernels overlap; each
 * expected figure is worked out by hand below.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/host_device.h"
#include "cupti_records.h"
#include "tests/check.h"

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

static void api(uint32_t corr, uint64_t a, uint64_t b)
{
	CUpti_ActivityAPI *r = rec(sizeof(*r), CUPTI_ACTIVITY_KIND_RUNTIME);
	r->cbid = 211;
	r->correlationId = corr;
	r->threadId = 77;
	r->start = a;
	r->end = b;
}

static void kernel(const char *name, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t a, uint64_t b)
{
	CUpti_ActivityKernel10 *k = rec(sizeof(*k), CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL);
	k->name = name;
	k->deviceId = dev;
	k->streamId = stream;
	k->correlationId = corr;
	k->start = a;
	k->end = b;
}

static void copy(uint8_t kind, uint32_t dev, uint32_t stream, uint32_t corr, uint64_t a, uint64_t b)
{
	CUpti_ActivityMemcpy6 *m = rec(sizeof(*m), CUPTI_ACTIVITY_KIND_MEMCPY);
	m->copyKind = kind;
	m->deviceId = dev;
	m->bytes = 1 << 20;
	m->streamId = stream;
	m->correlationId = corr;
	m->start = a;
	m->end = b;
}

static json_int_t jint(json_t *o, const char *k)
{
	return json_integer_value(json_object_get(o, k));
}

int main(void)
{
	buf = aligned_alloc(8, 1 << 16);
	memset(buf, 0, 1 << 16);
	/* GPU 0, window 1000-2000 (the eBPF recording's META) */
	api(1, 1010, 1020);					    /* cudaMemcpyAsync */
	copy(CUPTI_ACTIVITY_MEMCPY_KIND_HTOD, 0, 7, 1, 1050, 1150); /* queued 1010-1050 */
	api(2, 1030, 1040);					    /* cudaLaunchKernel */
	kernel("gemm", 0, 8, 2, 1100, 1300);			    /* queued 1030-1100 */
	CUpti_ActivityMemset4 *ms = rec(sizeof(*ms), CUPTI_ACTIVITY_KIND_MEMSET);
	ms->streamId = 9;
	ms->start = 1250; /* no API record: not queued */
	ms->end = 1350;
	ms->bytes = 4096;
	api(3, 1400, 1410);
	kernel("relu", 0, 8, 3, 1500, 1600); /* queued 1400-1500 */
	api(4, 1420, 1430);
	copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 0, 7, 4, 1580, 1700); /* queued 1420-1580 */
	kernel("other", 1, 3, 0, 1200, 1250);			    /* GPU 1 */
	CUpti_ActivitySynchronization2 *sy = rec(sizeof(*sy), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	sy->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	sy->start = 1200;
	sy->end = 1360;
	/* GPU 1 at the end: a kernel on stream 3 and, overlapping it, a copy on
	 * stream 4 that ends later; the host synchronizes stream 3 only (CUPTI's
	 * synchronization record for stream 3 lies inside the wait) */
	kernel("tail", 1, 3, 0, 1890, 1900);
	copy(CUPTI_ACTIVITY_MEMCPY_KIND_DTOH, 1, 4, 0, 1890, 1950);
	sy = rec(sizeof(*sy), CUPTI_ACTIVITY_KIND_SYNCHRONIZATION);
	sy->type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE;
	sy->streamId = 3;
	sy->start = 1885;
	sy->end = 1985;

	struct snrh_trace t;
	snrh_trace_init(&t);
	uint64_t kept = 0, skipped = 0;
	snr_cupti_consume_buffer(&t, buf, used, NULL, &kept, &skipped);
	CHECK(kept == 14 && skipped == 0, "CUPTI's iterator gave %llu records (%llu skipped), want 14",
	      (unsigned long long)kept, (unsigned long long)skipped);

	/* what the eBPF side adds: the window, the waits and the thread's blocks */
	json_object_set_new(t.meta, "pid", json_integer(4242));
	json_object_set_new(t.meta, "t_start_ns", json_integer(1000));
	json_object_set_new(t.meta, "t_end_ns", json_integer(2000));
	struct snrh_probe p = {0, strdup("/usr/lib/libcudart.so.12"), strdup("cudaStreamSynchronize"),
			       strdup("H:WAIT_DEV")};
	SNRH_PUSH(t.probes, p);
	SNRH_PUSH(t.intervals, ((struct snrh_interval){77, 0, 1200, 1360})); /* ended by the memset (1350) */
	SNRH_PUSH(t.intervals, ((struct snrh_interval){77, 0, 1450, 1710})); /* by the DtoH copy (1700) */
	SNRH_PUSH(t.intervals, ((struct snrh_interval){77, 0, 1800, 1810})); /* nothing completes in it */
	SNRH_PUSH(t.intervals, ((struct snrh_interval){
				   77, 0, 1880, 1990})); /* stream 3: by "tail" (1900), not the copy (1950) */
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, 1210, 1355, -1, -1}));
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, 1460, 1705, -1, -1}));
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, 1790, 1805, -1, -1}));
	SNRH_PUSH(t.offcpu, ((struct snrh_offcpu){77, 0, 1, 1881, 1989, -1, -1}));

	struct snrh_ondev o;
	snrh_ondev_build(&t, &o);
	CHECK(o.ndev == 2, "%zu devices, want GPU 0 and GPU 1", o.ndev);
	const struct snrh_dev_stats *g0 = &o.dev[0], *g1 = &o.dev[1];
	/* GPU 0, by hand:
	 *   1000-1010 idle          1010-1050 queued (HtoD, then gemm too)
	 *   1050-1100 transfer      1100-1150 both (HtoD + gemm)
	 *   1150-1250 compute       1250-1300 both (gemm + memset)
	 *   1300-1350 transfer      1350-1400 idle
	 *   1400-1500 queued        1500-1580 compute (relu)
	 *   1580-1600 both          1600-1700 transfer (DtoH)
	 *   1700-2000 idle */
	CHECK(g0->key == 0 && !strcmp(g0->label, "GPU 0 (CUPTI)"), "device 0: %s", g0->label);
	CHECK(g0->compute_only == 180, "compute only %llu, want 100 + 80",
	      (unsigned long long)g0->compute_only);
	CHECK(g0->xfer_only == 200, "transfer only %llu, want 50 + 50 + 100",
	      (unsigned long long)g0->xfer_only);
	CHECK(g0->both == 120, "both %llu, want 50 + 50 + 20", (unsigned long long)g0->both);
	CHECK(g0->queued == 140, "queued %llu, want 40 + 100", (unsigned long long)g0->queued);
	CHECK(g0->idle == 360, "idle %llu, want 10 + 50 + 300", (unsigned long long)g0->idle);
	CHECK(g0->compute_sum == 300 && g0->xfer_sum == 320, "sums %llu %llu",
	      (unsigned long long)g0->compute_sum, (unsigned long long)g0->xfer_sum);
	/* GPU 1: "other" 1200-1250 compute; 1890-1900 both; 1900-1950 transfer */
	CHECK(g1->compute_only == 50 && g1->both == 10 && g1->xfer_only == 50 && g1->idle == 890 &&
		  g1->queued == 0,
	      "GPU 1: %llu %llu %llu %llu", (unsigned long long)g1->compute_only,
	      (unsigned long long)g1->both, (unsigned long long)g1->xfer_only, (unsigned long long)g1->idle);

	json_t *j = snrh_ondev_json(&o);
	json_t *d0 = json_array_get(json_object_get(j, "devices"), 0);
	/* union: 300 compute + 320 transfer - 120 overlap */
	CHECK(jint(d0, "on_device_ns") == 500 &&
		  json_real_value(json_object_get(d0, "active_ratio")) == 0.5 && jint(d0, "pid") == 4242,
	      "on-device %lld", (long long)jint(d0, "on_device_ns"));
	json_t *hw = json_object_get(j, "host_waits");
	/* waits 160 + 260 + 10 + 110; off-CPU 145 + 245 + 5 + 108; linked the
	 * first, second and fourth; wake-ups 10 + 10 + 90 */
	CHECK(jint(hw, "count") == 4 && jint(hw, "ns") == 540 && jint(hw, "offcpu_ns") == 503 &&
		  jint(hw, "linked") == 3 && jint(hw, "linked_ns") == 530 && jint(hw, "wake_ns") == 110,
	      "host waits: %s", json_dumps(hw, JSON_COMPACT));
	json_t *w0 = json_array_get(json_object_get(hw, "waits"), 0),
	       *w1 = json_array_get(json_object_get(hw, "waits"), 1);
	CHECK(
	    !strcmp(json_string_value(json_object_get(json_object_get(w0, "ended_by"), "name")), "memset") &&
		!strcmp(json_string_value(json_object_get(json_object_get(w1, "ended_by"), "name")),
			"memcpy DtoH") &&
		json_is_null(json_object_get(json_array_get(json_object_get(hw, "waits"), 2), "ended_by")),
	    "waits linked to the memset, the DtoH copy and nothing");
	/* the device while the linked waits ran: A 1200-1360 (compute 50, both
	 * 50, transfer 50, idle 10), B 1450-1710 (queued 50, compute 80, both
	 * 20, transfer 100, idle 10), D 1880-1990 on GPU 1 (idle 10, both 10,
	 * transfer 50, idle 40) */
	json_t *du = json_object_get(hw, "during_ns");
	CHECK(jint(du, "compute_only") == 130 && jint(du, "transfer_only") == 200 && jint(du, "both") == 80 &&
		  jint(du, "queued") == 50 && jint(du, "idle") == 70,
	      "during the waits: %s", json_dumps(du, JSON_COMPACT));
	/* the wait time each piece ran in: gemm 1200-1300, memset 1250-1350,
	 * relu 1500-1600, GPU 0's DtoH 1580-1700, tail 1890-1900, GPU 1's copy
	 * 1890-1950 */
	static const struct {
		const char *dev, *name;
		json_int_t during;
	} want[] = {{"GPU 0 (CUPTI)", "gemm", 100},	  {"GPU 0 (CUPTI)", "memset", 100},
		    {"GPU 0 (CUPTI)", "relu", 100},	  {"GPU 0 (CUPTI)", "memcpy DtoH", 120},
		    {"GPU 0 (CUPTI)", "memcpy HtoD", 0},  {"GPU 1 (CUPTI)", "tail", 10},
		    {"GPU 1 (CUPTI)", "memcpy DtoH", 60}, {"GPU 1 (CUPTI)", "other", 0}};
	for (size_t k = 0; k < sizeof(want) / sizeof(want[0]); k++) {
		json_int_t got = -1;
		size_t wi;
		json_t *row;
		json_array_foreach(json_object_get(j, "work"), wi, row)
		{
			if (!strcmp(json_string_value(json_object_get(row, "name")), want[k].name) &&
			    !strcmp(json_string_value(json_object_get(row, "device")), want[k].dev))
				got = jint(row, "waited_during_ns");
		}
		CHECK(got == want[k].during, "%s %s: host wait during it %lld, want %lld", want[k].dev,
		      want[k].name, (long long)got, (long long)want[k].during);
	}
	json_t *w3 = json_array_get(json_object_get(hw, "waits"), 3);
	CHECK(
	    jint(w3, "stream") == 3 &&
		!strcmp(json_string_value(json_object_get(json_object_get(w3, "ended_by"), "name")), "tail"),
	    "the stream 3 synchronization is ended by its kernel: %s", json_dumps(w3, JSON_COMPACT));
	/* per name: GPU 0's DtoH ran 120, queued 160 (1420-1580), held one wait of 260 */
	size_t i;
	json_t *w;
	int found = 0;
	json_array_foreach(json_object_get(j, "work"), i, w)
	{
		if (!strcmp(json_string_value(json_object_get(w, "name")), "memcpy DtoH") &&
		    !strcmp(json_string_value(json_object_get(w, "device")), "GPU 0 (CUPTI)"))
			found = jint(w, "busy_ns") == 120 && jint(w, "queued_ns") == 160 &&
				jint(w, "waits") == 1 && jint(w, "host_wait_ns") == 260;
	}
	CHECK(found, "per-name row of the DtoH copy");
	json_decref(j);
	snrh_ondev_free(&o);
	snrh_trace_free(&t);
	free(buf);
	return check_report("cupti_ondev");
}
