/*
 * progress.c: see progress.h. Marks are put in time order first (the
 * recorder drains one ring per program, so they arrive in order per CPU
 * only). A --latency BEGIN:END point pairs an END with the latest open
 * BEGIN of the same thread (calls nest), or with the open BEGIN whose
 * first argument is the END's (BEGIN:END:arg); what stays unpaired is
 * counted, never guessed.
 */
#include "progress.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static int mark_cmp(const void *a, const void *b)
{
	const struct snrh_mark *x = a, *y = b;
	return x->ts < y->ts ? -1 : x->ts > y->ts;
}

static int unit_cmp(const void *a, const void *b)
{
	const struct snrh_unit *x = a, *y = b;
	return x->end < y->end ? -1 : x->end > y->end;
}

double snrh_quantile_u64(uint64_t *v, size_t n, double q)
{
	if (!n)
		return 0;
	snr_qsort(v, n, sizeof(*v), u64_cmp);
	size_t k = (size_t)ceil(q * (double)n);
	if (k < 1)
		k = 1;
	if (k > n)
		k = n;
	return (double)v[k - 1];
}

/* An open BEGIN of a --latency point. */
/* Requests open at once per point: each END searches them, so the cost is
 * at most MAX_OPEN per mark (linear in the marks); more are counted as
 * unmatched, oldest first. */
#define MAX_OPEN 4096

struct open_begin {
	uint32_t tid;
	uint64_t ts, arg;
};

int snrh_points_build(const struct snrh_trace *t, struct snrh_point **out, char *err, size_t errlen)
{
	*out = NULL;
	json_t *pts = json_object_get(t->meta, "progress");
	size_t np = json_array_size(pts);
	if (!np)
		return 0;
	struct snrh_point *p = snr_xcalloc(np, sizeof(*p));
	struct snrh_mark *m = snr_xcalloc(t->marks.n + 1, sizeof(*m));
	if (t->marks.n)
		memcpy(m, t->marks.v, t->marks.n * sizeof(*m));
	snr_qsort(m, t->marks.n, sizeof(*m), mark_cmp);
	for (size_t i = 0; i < np; i++) {
		json_t *j = json_array_get(pts, i);
		const char *name = json_string_value(json_object_get(j, "name"));
		const char *kind = json_string_value(json_object_get(j, "kind"));
		json_t *jm = json_object_get(j, "mark"), *jb = json_object_get(j, "begin"), *je = json_object_get(j, "end");
		bool lat = kind && !strcmp(kind, "latency");
		if (!name || !kind || (lat ? !json_is_integer(jb) || !json_is_integer(je) : !json_is_integer(jm)) ||
		    (!lat && strcmp(kind, "progress"))) {
			snprintf(err, errlen, "META.progress[%zu] is malformed (want name, kind progress with mark, or kind "
					      "latency with begin and end)", i);
			free(m);
			snrh_points_free(p, (int)np);
			return -1;
		}
		p[i].name = name;
		p[i].latency = lat;
		if (!lat) {
			uint32_t mk = (uint32_t)json_integer_value(jm);
			for (size_t k = 0; k < t->marks.n; k++)
				if (m[k].mark == mk) {
					struct snrh_unit u = {m[k].ts, m[k].ts, m[k].tid, m[k].tid};
					SNRH_PUSH(p[i].u, u);
				}
			continue;
		}
		uint32_t mb = (uint32_t)json_integer_value(jb), me = (uint32_t)json_integer_value(je);
		const char *match = json_string_value(json_object_get(j, "match"));
		bool by_arg = match && !strcmp(match, "arg");
		SNRH_VEC(struct open_begin) open = {0};
		for (size_t k = 0; k < t->marks.n; k++) {
			if (m[k].mark == me) { /* an END first: BEGIN:BEGIN is not a point */
				size_t found = open.n;
				for (size_t o = open.n; o-- > 0;)
					if (by_arg ? open.v[o].arg == m[k].arg : open.v[o].tid == m[k].tid) {
						found = o;
						break;
					}
				if (found == open.n) {
					p[i].unmatched++;
				} else {
					struct snrh_unit u = {m[k].ts, open.v[found].ts, m[k].tid, open.v[found].tid};
					SNRH_PUSH(p[i].u, u);
					memmove(&open.v[found], &open.v[found + 1], (open.n - found - 1) * sizeof(*open.v));
					open.n--;
				}
			}
			if (m[k].mark == mb && mb != me) {
				struct open_begin ob = {m[k].tid, m[k].ts, m[k].arg};
				if (open.n >= MAX_OPEN) { /* bounded: the oldest is dropped as unmatched */
					memmove(&open.v[0], &open.v[1], (open.n - 1) * sizeof(*open.v));
					open.n--;
					p[i].unmatched++;
				}
				SNRH_PUSH(open, ob);
			}
		}
		p[i].unmatched += open.n;
		free(open.v);
		snr_qsort(p[i].u.v, p[i].u.n, sizeof(*p[i].u.v), unit_cmp);
	}
	free(m);
	*out = p;
	return (int)np;
}

void snrh_points_free(struct snrh_point *p, int n)
{
	for (int i = 0; p && i < n; i++)
		free(p[i].u.v);
	free(p);
}

void snrh_point_stats(const uint64_t *ends, const uint64_t *lat_ns, size_t n, struct snrh_point_stats *s)
{
	memset(s, 0, sizeof(*s));
	s->count = n;
	if (n >= 2 && ends[n - 1] > ends[0]) {
		s->span_s = (double)(ends[n - 1] - ends[0]) / 1e9;
		s->per_second = (double)(n - 1) / s->span_s;
	}
	size_t k = lat_ns ? n : (n ? n - 1 : 0);
	if (!k)
		return;
	uint64_t *v = snr_xcalloc(k, sizeof(*v));
	for (size_t i = 0; i < k; i++)
		v[i] = lat_ns ? lat_ns[i] : ends[i + 1] - ends[i];
	s->have_latency = true;
	s->p50_ms = snrh_quantile_u64(v, k, 0.50) / 1e6;
	s->p90_ms = snrh_quantile_u64(v, k, 0.90) / 1e6;
	s->p99_ms = snrh_quantile_u64(v, k, 0.99) / 1e6;
	s->max_ms = (double)v[k - 1] / 1e6;
	free(v);
}

/* Units [lo, hi) of p. */
static void stats_range(const struct snrh_point *p, size_t lo, size_t hi, struct snrh_point_stats *s)
{
	size_t n = hi - lo;
	uint64_t *ends = snr_xcalloc(n + 1, sizeof(*ends)), *lat = p->latency ? snr_xcalloc(n + 1, sizeof(*lat)) : NULL;
	for (size_t i = 0; i < n; i++) {
		ends[i] = p->u.v[lo + i].end;
		if (lat)
			lat[i] = p->u.v[lo + i].end - p->u.v[lo + i].begin;
	}
	snrh_point_stats(ends, lat, n, s);
	free(ends);
	free(lat);
}

void snrh_point_stats_of(const struct snrh_point *p, struct snrh_point_stats *s)
{
	stats_range(p, 0, p->u.n, s);
}

/* The units of slice w of `windows` over [first end, last end]: [*lo, *hi). */
static void slice(const struct snrh_point *p, unsigned w, unsigned windows, size_t *lo, size_t *hi, uint64_t *a,
		  uint64_t *b)
{
	uint64_t first = p->u.v[0].end, last = p->u.v[p->u.n - 1].end, span = last - first;
	*a = first + span * w / windows;
	*b = first + span * (w + 1) / windows;
	size_t i = 0;
	while (i < p->u.n && p->u.v[i].end < *a)
		i++;
	*lo = i;
	while (i < p->u.n && (p->u.v[i].end < *b || (w + 1 == windows && p->u.v[i].end <= *b)))
		i++;
	*hi = i;
}

void snrh_progress_report(const struct snrh_point *p, int n, uint64_t t0, unsigned windows, FILE *out)
{
	if (n <= 0)
		return;
	fprintf(out, "\nprogress points (rate between the first and the last unit; latency: end - begin of each request, "
		     "inter-arrival: time between consecutive units)\n");
	fprintf(out, "%-32s %8s %10s %-14s %9s %9s %9s %9s\n", "point", "count", "per second", "distribution",
		"p50 ms", "p90 ms", "p99 ms", "max ms");
	for (int i = 0; i < n; i++) {
		struct snrh_point_stats s;
		snrh_point_stats_of(&p[i], &s);
		fprintf(out, "%-32s %8zu %10.2f %-14s ", p[i].name, s.count, s.per_second,
			p[i].latency ? "latency" : "inter-arrival");
		if (s.have_latency)
			fprintf(out, "%9.3f %9.3f %9.3f %9.3f\n", s.p50_ms, s.p90_ms, s.p99_ms, s.max_ms);
		else
			fprintf(out, "%9s %9s %9s %9s\n", "-", "-", "-", "-");
		if (p[i].unmatched)
			fprintf(out, "  %zu begins or ends of %s had no other half (not counted)\n", p[i].unmatched,
				p[i].name);
	}
	for (int i = 0; i < n; i++) {
		if (p[i].u.n < 2 * (size_t)windows)
			continue;
		fprintf(out, "\n%s over time (%u equal slices of its span):\n", p[i].name, windows);
		fprintf(out, "  %9s %9s %8s %10s %9s %9s\n", "from s", "to s", "count", "per second", "p50 ms", "p99 ms");
		for (unsigned w = 0; w < windows; w++) {
			size_t lo, hi;
			uint64_t a, b;
			slice(&p[i], w, windows, &lo, &hi, &a, &b);
			struct snrh_point_stats s;
			stats_range(&p[i], lo, hi, &s);
			double rate = b > a ? (double)(hi - lo) / ((double)(b - a) / 1e9) : 0;
			fprintf(out, "  %9.3f %9.3f %8zu %10.2f ", (double)(a - t0) / 1e9, (double)(b - t0) / 1e9, hi - lo,
				rate);
			if (s.have_latency)
				fprintf(out, "%9.3f %9.3f\n", s.p50_ms, s.p99_ms);
			else
				fprintf(out, "%9s %9s\n", "-", "-");
		}
	}
}

static json_t *dist_json(const struct snrh_point_stats *s)
{
	if (!s->have_latency)
		return json_null();
	return json_pack("{s:f, s:f, s:f, s:f}", "p50", s->p50_ms, "p90", s->p90_ms, "p99", s->p99_ms, "max", s->max_ms);
}

json_t *snrh_progress_json(const struct snrh_point *p, int n, uint64_t t0, unsigned windows)
{
	json_t *a = json_array();
	for (int i = 0; i < n; i++) {
		struct snrh_point_stats s;
		snrh_point_stats_of(&p[i], &s);
		json_t *o = json_pack("{s:s, s:s, s:I, s:f, s:f, s:I}", "name", p[i].name, "kind",
				      p[i].latency ? "latency" : "progress", "count", (json_int_t)s.count, "per_second",
				      s.per_second, "span_s", s.span_s, "unmatched", (json_int_t)p[i].unmatched);
		json_object_set_new(o, p[i].latency ? "latency_ms" : "interarrival_ms", dist_json(&s));
		json_t *ot = json_array();
		for (unsigned w = 0; p[i].u.n >= 2 * (size_t)windows && w < windows; w++) {
			size_t lo, hi;
			uint64_t a0, b0;
			slice(&p[i], w, windows, &lo, &hi, &a0, &b0);
			struct snrh_point_stats ws;
			stats_range(&p[i], lo, hi, &ws);
			json_array_append_new(
				ot, json_pack("{s:f, s:f, s:I, s:f, s:o, s:o}", "start_s", (double)(a0 - t0) / 1e9, "end_s",
					      (double)(b0 - t0) / 1e9, "count", (json_int_t)(hi - lo), "per_second",
					      b0 > a0 ? (double)(hi - lo) / ((double)(b0 - a0) / 1e9) : 0.0, "p50_ms",
					      ws.have_latency ? json_real(ws.p50_ms) : json_null(), "p99_ms",
					      ws.have_latency ? json_real(ws.p99_ms) : json_null()));
		}
		json_object_set_new(o, "over_time", ot);
		json_array_append_new(a, o);
	}
	return a;
}
