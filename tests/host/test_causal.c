/*
 * test_causal.c: progress points and the causal replay on a synthetic host
 * trace whose answers are known by hand (analyzer/progress.c, causal.c).
 *
 * Three threads, a token every 10 ms: the main thread M wakes A and B; A
 * runs work_a for 8 ms, B runs work_b for 5 ms; B's finish wakes M (which
 * finds A still busy and waits again), A's finish wakes M, M runs
 * serial_step for 2 ms and emits the token. So work_a and serial_step gate
 * the tokens and work_b has 3 ms of slack: at 20% work_a gives a period of
 * 6.4 + 2 ms, serial_step 8 + 1.6 ms, work_b nothing; at 50% work_a (4 ms)
 * falls below work_b (5 ms), which then gates: 5 + 2 ms.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "analyzer/causal.h"
#include "analyzer/progress.h"
#include "lib/snr_host_trace.h"

#define MS 1000000ull
#define T0 (1000000000ull + MS)
#define TOKENS 20
enum { M = 100, A = 101, B = 102 };

static int32_t stack_of(struct snrh_trace *t, const char *fn)
{
	struct snrh_stack s = {0, 1, calloc(1, sizeof(struct snrh_frame))};
	s.frames[0] = (struct snrh_frame){0x1000 + t->stacks.n * 0x100, snrh_intern(t, fn), snrh_intern(t, "/bin/tokens"), 4};
	SNRH_PUSH(t->stacks, s);
	return (int32_t)t->stacks.n - 1;
}

static void off(struct snrh_trace *t, uint32_t tid, uint32_t waker, uint64_t a, uint64_t b)
{
	SNRH_PUSH(t->offcpu, ((struct snrh_offcpu){tid, waker, 1, a, b, -1, -1}));
}

static void samples(struct snrh_trace *t, uint32_t tid, int32_t stack, uint64_t a, uint64_t b)
{
	for (uint64_t ts = a + MS / 8; ts < b; ts += MS / 4)
		SNRH_PUSH(t->samples, ((struct snrh_sample){tid, 0, ts, stack, -1}));
}

static void mark(struct snrh_trace *t, uint32_t tid, uint32_t m, uint64_t ts, uint64_t arg)
{
	SNRH_PUSH(t->marks, ((struct snrh_mark){tid, m, ts, arg}));
}

static void build(struct snrh_trace *t, const char *latency_match)
{
	snrh_trace_init(t);
	json_object_set_new(t->meta, "pid", json_integer(M));
	json_object_set_new(t->meta, "hz", json_integer(4000));
	json_object_set_new(t->meta, "t_start_ns", json_integer((json_int_t)T0));
	json_object_set_new(t->meta, "t_end_ns", json_integer((json_int_t)(T0 + TOKENS * 10 * MS)));
	json_object_set_new(t->meta, "progress",
			    json_pack("[{s:s, s:s, s:i}, {s:s, s:s, s:i, s:i, s:s}]", "name", "emit_token", "kind",
				      "progress", "mark", 0, "name", "req_begin:a_done", "kind", "latency", "begin", 1,
				      "end", 2, "match", latency_match));
	int32_t sa = stack_of(t, "work_a"), sb = stack_of(t, "work_b"), ss = stack_of(t, "serial_step");
	for (uint64_t k = 0; k < TOKENS; k++) {
		uint64_t s = T0 + k * 10 * MS;
		/* M: waits for B (5 ms), runs 10 us, waits for A (to 8 ms), serial 2 ms */
		mark(t, M, 1, s, k);
		off(t, M, B, s, s + 5 * MS);
		off(t, M, A, s + 5 * MS + 10000, s + 8 * MS);
		samples(t, M, ss, s + 8 * MS, s + 10 * MS);
		mark(t, M, 0, s + 10 * MS - 1000, k);
		/* A and B: run, then wait for M's next go */
		samples(t, A, sa, s, s + 8 * MS);
		mark(t, A, 2, s + 8 * MS - 1000, k);
		off(t, A, M, s + 8 * MS, s + 10 * MS);
		samples(t, B, sb, s, s + 5 * MS);
		off(t, B, M, s + 5 * MS, s + 10 * MS);
	}
}

static const struct snrh_causal_cand *cand(const struct snrh_causal *c, const char *name, size_t *idx)
{
	for (size_t i = 0; i < c->ncands; i++)
		if (!strcmp(c->cands[i].name, name)) {
			*idx = i;
			return &c->cands[i];
		}
	CHECK(0, "no candidate %s", name);
	return NULL;
}

static double rate_pct(double period_ms) { return (10.0 / period_ms - 1.0) * 100.0; }

/* A CUDA-style serving loop from CUPTI records, one host thread H, a
 * period of 10 ms: H runs host_work for 3 ms, launching K2 at its start
 * (on the GPU 0.2-2.2 ms: overlapped with host_work) and K1 at 2.9 ms (on
 * the GPU 3.0-9.9 ms), then waits in cudaStreamSynchronize until 10 ms
 * (0.1 ms after K1 completed); a token at the end of host_work. By hand:
 * K1 20% faster (6.9 -> 5.52 ms) ends the wait 1.38 ms sooner: a period of
 * 8.62 ms; K2 gates nothing: 0; host_work 20% faster (2.4 ms) launches K1
 * at 2.32 ms, on the GPU at 2.42: a period of 9.42 ms; host_work 95%
 * faster would launch K1 at 0.145 ms, but the GPU is busy with K2 until
 * 2.2 ms: K1 runs 2.2-9.1, a period of 9.2 ms (7.245 were the device not
 * a resource that runs one piece after another). */
enum { H = 200 };
#define US 1000ull

static void api(struct snrh_trace *t, uint32_t corr, uint64_t at)
{
	SNRH_PUSH(t->device, ((struct snrh_device_rec){SNRH_DEV_RUNTIME_API, 0, 0, corr, H, at, at + 20 * US, 0,
						       snrh_intern(t, "cudaLaunchKernel")}));
}

static void kernel(struct snrh_trace *t, uint32_t corr, const char *name, uint64_t a, uint64_t b)
{
	SNRH_PUSH(t->device, ((struct snrh_device_rec){SNRH_DEV_KERNEL, 0, 7, corr, 0, a, b, 0, snrh_intern(t, name)}));
}

static void test_cupti(void)
{
	struct snrh_trace t;
	snrh_trace_init(&t);
	json_object_set_new(t.meta, "pid", json_integer(H));
	json_object_set_new(t.meta, "hz", json_integer(4000));
	json_object_set_new(t.meta, "t_start_ns", json_integer((json_int_t)T0));
	json_object_set_new(t.meta, "t_end_ns", json_integer((json_int_t)(T0 + TOKENS * 10 * MS)));
	json_object_set_new(t.meta, "progress",
			    json_pack("[{s:s, s:s, s:i}]", "name", "token", "kind", "progress", "mark", 0));
	struct snrh_probe pr = {0, strdup("/usr/lib/libcudart.so.12"), strdup("cudaStreamSynchronize"),
				strdup("H:WAIT_DEV")};
	SNRH_PUSH(t.probes, pr);
	int32_t sw = stack_of(&t, "host_work");
	for (uint64_t k = 0; k < TOKENS; k++) {
		uint64_t s = T0 + k * 10 * MS;
		uint32_t c2 = (uint32_t)(2 * k + 1), c1 = c2 + 1;
		samples(&t, H, sw, s, s + 3 * MS);
		api(&t, c2, s);
		kernel(&t, c2, "K2", s + 200 * US, s + 2200 * US);
		api(&t, c1, s + 2900 * US);
		kernel(&t, c1, "K1", s + 3 * MS, s + 9900 * US);
		mark(&t, H, 0, s + 3 * MS - 1000, k);
		SNRH_PUSH(t.intervals, ((struct snrh_interval){H, 0, s + 3 * MS, s + 10 * MS}));
		off(&t, H, 0, s + 3 * MS + 50 * US, s + 10 * MS); /* blocked in the synchronization, woken by no thread */
	}
	double sp[] = {20, 50};
	char err[300];
	struct snrh_causal c;
	int rc = snrh_causal_run(&t, sp, 2, &c, err, sizeof(err));
	CHECK(rc == 0, "cupti causal: %s", err);
	if (rc == 0) {
		size_t i1 = 0, i2 = 0, iw = 0;
		const struct snrh_causal_cand *k1 = cand(&c, "K1", &i1), *k2 = cand(&c, "K2", &i2),
					      *hw = cand(&c, "host_work", &iw);
		if (k1 && k2 && hw) {
			CHECK(k1->device_kind == SNRH_CAUSAL_KERNEL && k2->device_kind == SNRH_CAUSAL_KERNEL &&
				  !strcmp(k1->device, "GPU 0 (CUPTI)") && k1->pieces == TOKENS &&
				  fabs(k1->device_ms - 6.9 * TOKENS) < 1e-6,
			      "K1 a kernel of GPU 0: %d %s %zu %.3f ms", k1->device_kind, k1->device, k1->pieces,
			      k1->device_ms);
			double k120 = k1->effect[0].throughput_pct, k150 = k1->effect[1].throughput_pct;
			CHECK(fabs(k120 - rate_pct(8.62)) < 0.05, "K1 20%%: %+.3f%%, want %+.3f%%", k120, rate_pct(8.62));
			CHECK(fabs(k150 - rate_pct(6.55)) < 0.05, "K1 50%%: %+.3f%%, want %+.3f%%", k150, rate_pct(6.55));
			CHECK(fabs(k2->effect[0].throughput_pct) < 1e-6 && fabs(k2->effect[1].throughput_pct) < 1e-6,
			      "K2 (overlapped with host_work): %+.6f%% %+.6f%%, want 0", k2->effect[0].throughput_pct,
			      k2->effect[1].throughput_pct);
			CHECK(fabs(hw->effect[0].throughput_pct - rate_pct(9.42)) < 0.05, "host_work 20%%: %+.3f%%, want %+.3f%%",
			      hw->effect[0].throughput_pct, rate_pct(9.42));
			struct snrh_causal_effect e;
			snrh_causal_predict(&c, iw, 95.0, &e);
			CHECK(fabs(e.throughput_pct - rate_pct(9.2)) < 0.05,
			      "host_work 95%% (K1 queued behind K2): %+.3f%%, want %+.3f%%", e.throughput_pct, rate_pct(9.2));
			CHECK(i1 == 0, "K1 ranked first: %s", c.cands[0].name);
			for (size_t ci = 0; ci < c.ncands; ci++) {
				snrh_causal_predict(&c, ci, 0.0, &e);
				CHECK(e.throughput_pct == 0 && e.latency_p50_pct == 0 && e.latency_p99_pct == 0, "%s at 0%%: %g",
				      c.cands[ci].name, e.throughput_pct);
			}
		}
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		snrh_causal_text(&c, f);
		fclose(f);
		CHECK(strstr(text, "  kernel K2 (GPU 0 (CUPTI), 20.0% of the device's window): 50% faster changes no") &&
			  !strstr(text, "  kernel K1 (GPU"),
		      "text names K2 (2 ms of every 10 on the GPU) off the critical path, K1 not:\n%s", text);
		free(text);
		CHECK(c.threads == 2 && c.device_timelines == 1, "threads %zu, device timelines %zu: want H and GPU 0",
		      c.threads, c.device_timelines);
		json_t *j = snrh_causal_json(&c);
		json_t *first = json_array_get(json_object_get(j, "candidates"), 0);
		CHECK(json_is_string(json_object_get(first, "kernel")) &&
			  !strcmp(json_string_value(json_object_get(first, "kernel")), "K1") &&
			  !strcmp(json_string_value(json_object_get(first, "device")), "GPU 0 (CUPTI)"),
		      "JSON: the first candidate is kernel K1 on GPU 0");
		json_decref(j);
	}
	snrh_causal_free(&c);
	snrh_trace_free(&t);
}

int main(void)
{
	struct snrh_trace t;
	build(&t, "arg");
	char err[300];

	/* progress points: counts, rates, latency by argument */
	struct snrh_point *p;
	int n = snrh_points_build(&t, &p, err, sizeof(err));
	CHECK(n == 2, "points: %d (%s)", n, err);
	if (n == 2) {
		struct snrh_point_stats s;
		snrh_point_stats_of(&p[0], &s);
		CHECK(s.count == TOKENS && fabs(s.per_second - 100.0) < 1e-6, "emit_token: %zu at %f/s", s.count, s.per_second);
		CHECK(fabs(s.p50_ms - 10.0) < 1e-6 && fabs(s.p99_ms - 10.0) < 1e-6, "inter-arrival p50 %f p99 %f", s.p50_ms,
		      s.p99_ms);
		snrh_point_stats_of(&p[1], &s);
		CHECK(s.count == TOKENS && p[1].unmatched == 0, "by argument: %zu units, %zu unmatched", s.count, p[1].unmatched);
		CHECK(fabs(s.p50_ms - 7.999) < 1e-6, "request latency p50 %f, want 7.999 ms", s.p50_ms);
		json_t *j = snrh_progress_json(p, n, T0, 10);
		json_t *ot = json_object_get(json_array_get(j, 0), "over_time");
		size_t sum = 0, i;
		json_t *w;
		json_array_foreach(ot, i, w) sum += (size_t)json_integer_value(json_object_get(w, "count"));
		CHECK(json_array_size(ot) == 10 && sum == TOKENS, "over time: %zu slices, %zu units", json_array_size(ot), sum);
		json_decref(j);
	}
	snrh_points_free(p, n);
	/* per thread, a begin on M never pairs with an end on A */
	struct snrh_trace t2;
	build(&t2, "thread");
	n = snrh_points_build(&t2, &p, err, sizeof(err));
	CHECK(n == 2 && p[1].u.n == 0 && p[1].unmatched == 2 * TOKENS, "per thread: %zu units, %zu unmatched",
	      n == 2 ? p[1].u.n : 0, n == 2 ? p[1].unmatched : 0);
	snrh_points_free(p, n);
	snrh_trace_free(&t2);

	/* the causal replay */
	double sp[] = {20, 50};
	struct snrh_causal c;
	int rc = snrh_causal_run(&t, sp, 2, &c, err, sizeof(err));
	CHECK(rc == 0, "causal: %s", err);
	if (rc == 0) {
		size_t ia = 0, ib = 0, is = 0;
		const struct snrh_causal_cand *a = cand(&c, "work_a", &ia), *b = cand(&c, "work_b", &ib),
						 *s = cand(&c, "serial_step", &is);
		CHECK(c.dependent_waits == 4 * TOKENS, "dependent waits %zu", c.dependent_waits);
		if (a && b && s) {
			/* [speedup][point]: 0 = 20%, 1 = 50%; point 0 = emit_token */
			double a20 = a->effect[0].throughput_pct, a50 = a->effect[2].throughput_pct;
			double s20 = s->effect[0].throughput_pct, b20 = b->effect[0].throughput_pct;
			double b50 = b->effect[2].throughput_pct;
			CHECK(fabs(a20 - rate_pct(8.4)) < 0.05, "work_a 20%%: %+.3f%%, want %+.3f%%", a20, rate_pct(8.4));
			CHECK(fabs(a50 - rate_pct(7.01)) < 0.05, "work_a 50%% (work_b gates then): %+.3f%%, want %+.3f%%", a50,
			      rate_pct(7.01));
			CHECK(fabs(s20 - rate_pct(9.6)) < 0.05, "serial_step 20%%: %+.3f%%, want %+.3f%%", s20, rate_pct(9.6));
			CHECK(fabs(b20) < 1e-6 && fabs(b50) < 1e-6, "work_b (3 ms of slack): %+.6f%% %+.6f%%, want 0", b20, b50);
			/* latency of the request (begin on M, end on A) shrinks with work_a only */
			CHECK(fabs(a->effect[1].latency_p50_pct + 20.0) < 0.05, "request p50 with work_a 20%%: %+.3f%%",
			      a->effect[1].latency_p50_pct);
			CHECK(c.cands[0].bucket || !strcmp(c.cands[0].name, "work_a"), "ranked first: %s", c.cands[0].name);
			CHECK(ia < is && is < ib, "ranks: work_a %zu, serial_step %zu, work_b %zu", ia, is, ib);
			/* no speedup gives the recorded figures back, exactly */
			for (size_t ci = 0; ci < c.ncands; ci++) {
				struct snrh_causal_effect e[2];
				snrh_causal_predict(&c, ci, 0.0, e);
				for (int k = 0; k < 2; k++)
					CHECK(e[k].throughput_pct == 0 && e[k].latency_p50_pct == 0 && e[k].latency_p99_pct == 0,
					      "%s at 0%%: %g %g %g", c.cands[ci].name, e[k].throughput_pct, e[k].latency_p50_pct,
					      e[k].latency_p99_pct);
			}
		}
		json_t *j = snrh_causal_json(&c);
		CHECK(json_array_size(json_object_get(j, "candidates")) == 2 * c.ncands, "one JSON entry per candidate and speedup");
		json_decref(j);
		char *text = NULL;
		size_t len = 0;
		FILE *f = open_memstream(&text, &len);
		snrh_causal_text(&c, f);
		fclose(f);
		CHECK(strstr(text, "off the critical path") && strstr(text, "  work_b ("), "text names work_b off the path:\n%s",
		      text);
		free(text);
	}
	snrh_causal_free(&c);
	/* a trace without points is refused, saying why */
	json_object_del(t.meta, "progress");
	rc = snrh_causal_run(&t, sp, 2, &c, err, sizeof(err));
	CHECK(rc == -1 && strstr(err, "no progress point"), "no points: %d %s", rc, err);
	snrh_causal_free(&c);
	snrh_trace_free(&t);
	test_cupti();
	return check_report("test_causal");
}
