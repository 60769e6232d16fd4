/*
 * test_host_perfetto.c: the replayed window placed at a host launch keeps
 * its nesting exactly. `snr export perfetto H.snrh T.snrt --launch 1` shifts
 * the window by the launch's start (about 3e9 us here, a host's uptime);
 * for 40 launch starts with different sub-microsecond fractions, every X
 * slice of the window, read as exact decimals (integer picoseconds, not
 * doubles), must end at or before its parent's end and a slice that
 * follows another must not start before it ends where the two met in
 * cycles. Rounding ts and dur each on their own made these fail for some
 * fractions (the host + device export failed its nesting check in about
 * one run in four, with the launch time varying from run to run).
 * usage: test_host_perfetto TRACE.snrt
 */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "analyzer/analyses.h"
#include "analyzer/host_events.h"
#include "lib/snr_host_trace.h"

#define HOST_PID 7

struct slice {
	long long pid, tid;
	long long ts, end; /* picoseconds */
};

/* "123.456789" -> picoseconds, exactly. */
static bool parse_ps(const char *p, long long *out)
{
	char *e;
	long long whole = strtoll(p, &e, 10), frac = 0;
	int digits = 0;
	if (*e == '.')
		for (e++; *e >= '0' && *e <= '9'; e++)
			if (digits < 6) {
				frac = frac * 10 + (*e - '0');
				digits++;
			}
	for (; digits < 6; digits++)
		frac *= 10;
	*out = whole * 1000000 + frac;
	return e != p;
}

static bool field(const char *line, const char *key, long long *ps, bool decimal)
{
	const char *p = strstr(line, key);
	if (!p)
		return false;
	p += strlen(key);
	if (decimal)
		return parse_ps(p, ps);
	*ps = strtoll(p, NULL, 10);
	return true;
}

static int cmp_slice(const void *a, const void *b)
{
	const struct slice *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->end > y->end ? -1 : x->end < y->end; /* parents first */
}

/* Nesting violations among the X slices of the device processes. */
static int violations(const char *json_path, int *nslices)
{
	FILE *f = fopen(json_path, "r");
	if (!f)
		return -1;
	struct slice *v = NULL;
	size_t n = 0, cap = 0;
	char line[4096];
	while (fgets(line, sizeof(line), f)) {
		struct slice s;
		long long dur;
		if (!strstr(line, "\"ph\":\"X\"") || !field(line, "\"pid\":", &s.pid, false) ||
		    !field(line, "\"tid\":", &s.tid, false) || !field(line, "\"ts\":", &s.ts, true) ||
		    !field(line, "\"dur\":", &dur, true))
			continue;
		if (s.pid == HOST_PID || s.pid >= SNRH_EV_PID_TA1) /* the host's own tracks: not the window */
			continue;
		s.end = s.ts + dur;
		if (n == cap) {
			cap = cap ? cap * 2 : 1024;
			v = realloc(v, cap * sizeof(*v));
		}
		v[n++] = s;
	}
	fclose(f);
	qsort(v, n, sizeof(*v), cmp_slice);
	int bad = 0;
	long long stack[64];
	int depth = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && (v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid))
			depth = 0;
		while (depth && stack[depth - 1] <= v[i].ts)
			depth--;
		if (depth && v[i].end > stack[depth - 1])
			bad++;
		else if (depth < 64)
			stack[depth++] = v[i].end;
	}
	free(v);
	*nslices = (int)n;
	return bad;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_host_perfetto TRACE.snrt\n");
		return 2;
	}
	char dir[] = "/tmp/test_host_perfettoXXXXXX";
	CHECK(mkdtemp(dir) != NULL, "%s", "mkdtemp");
	char host[256], out[256], cfg[256], err[700];
	snprintf(host, sizeof(host), "%s/h.snrh", dir);
	snprintf(out, sizeof(out), "%s/o.json", dir);
	snprintf(cfg, sizeof(cfg), "%s/clk.json", dir);
	FILE *cf = fopen(cfg, "w");
	CHECK(cf != NULL, "%s", "config file");
	if (cf) {
		fputs("{\"clock_hz\": 1400000000}\n", cf);
		fclose(cf);
	}
	int total_bad = 0, runs = 0, nslices = 0;
	for (int k = 0; k < 40; k++) {
		/* ~50 min or ~2 days of uptime, a different fraction of a microsecond each time */
		uint64_t start = (k % 2 ? 172800000000000ull : 3000000000000ull) + (uint64_t)k * 7919 + (uint64_t)k * k * 131;
		struct snrh_trace t;
		snrh_trace_init(&t);
		json_object_set_new(t.meta, "pid", json_integer(HOST_PID));
		json_object_set_new(t.meta, "t_start_ns", json_integer((json_int_t)start - 1000000));
		json_object_set_new(t.meta, "t_end_ns", json_integer((json_int_t)start + 1000000000));
		struct snrh_probe p = {0, strdup("/lib/libta1rt.so"), strdup("ta1rt_launch"), strdup("H:CTRL")};
		SNRH_PUSH(t.probes, p);
		struct snrh_thread th = {HOST_PID, snrh_intern(&t, "serve"), 1000, {0}, 1};
		SNRH_PUSH(t.threads, th);
		SNRH_PUSH(t.intervals, ((struct snrh_interval){HOST_PID, 0, start, start + 5000}));
		CHECK(snrh_trace_write(&t, host, err, sizeof(err)) == 0, "write: %s", err);
		snrh_trace_free(&t);
		char *args[] = {"export", "perfetto", host, argv[1], "--launch", "1", "-o", out, "--config", cfg, NULL};
		CHECK(snr_cmd_export(k < 20 ? 8 : 10, args) == 0, "export at launch start %llu", (unsigned long long)start);
		/* The host side's own events (jansson doubles) print as exact ns too:
		 * the launch starts at the call's start to the nanosecond. */
		FILE *jf = fopen(out, "r");
		char line[4096];
		long long launch_ps = -1;
		while (jf && fgets(line, sizeof(line), jf))
			if (strstr(line, "\"launch #1\"") && strstr(line, "\"ph\":\"X\""))
				field(line, "\"ts\":", &launch_ps, true);
		if (jf)
			fclose(jf);
		CHECK(launch_ps == (long long)start * 1000, "launch #1 at %lld ps, want %llu ns exactly", launch_ps,
		      (unsigned long long)start);
		int bad = violations(out, &nslices);
		CHECK(bad == 0 && nslices > 0, "launch at %llu ns: %d of %d window slices overlap their parent",
		      (unsigned long long)start, bad, nslices);
		total_bad += bad > 0;
		runs++;
	}
	printf("%d launch starts, %d window slices each, %d with a nesting violation\n", runs, nslices, total_bad);
	unlink(host);
	unlink(out);
	unlink(cfg);
	rmdir(dir);
	return check_report("host_perfetto");
}
