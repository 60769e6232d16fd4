/*
 * host_report.c: what a host trace says, per thread.
 *
 * Exact on-CPU and off-CPU totals come from the scheduler (every switch,
 * however short). Buckets follow gPerf's rules, restricted to what the host
 * sees: an instant belongs to the outermost probed runtime call around it
 * (H:CTRL, H:WAIT_DEV, ...), else to a file or network system call (H:IO:
 * a traced call with --io-calls, otherwise a kernel stack inside one), else
 * it is application time (H:APP) if on CPU and unattributed blocking if
 * off CPU. An off-CPU interval is classified by its switch-out instant (a
 * thread blocks inside one call); on-CPU time per bucket is estimated from
 * the samples (count x 1/HZ).
 */
#include "analyzer/host_report.h"
#include "analyzer/host_device.h"
#include "analyzer/host_lines.h"
#include "lib/snr_lines.h"
#include "analyzer/host_events.h"
#include "analyzer/progress.h"

#include <stdlib.h>
#include <string.h>

#include "lib/snr_outfile.h"
#include "lib/snr_chunkfile.h"
#include "lib/snr_util.h"

static const char *const state_names[4] = {"R", "S", "D", "other"};

struct snrh_bucketer {
	const struct snrh_trace *t;
	struct snrh_interval *api, *io; /* sorted by (tid, start) */
	size_t napi, nio;
};

static int iv_cmp(const void *a, const void *b)
{
	const struct snrh_interval *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->start < y->start ? -1 : x->start > y->start;
}

struct snrh_bucketer *snrh_bucketer_new(const struct snrh_trace *t)
{
	struct snrh_bucketer *b = snr_xcalloc(1, sizeof(*b));
	b->t = t;
	b->api = snr_xcalloc(t->intervals.n + 1, sizeof(*b->api));
	b->io = snr_xcalloc(t->intervals.n + 1, sizeof(*b->io));
	for (size_t i = 0; i < t->intervals.n; i++) {
		if (t->intervals.v[i].probe & 0x80000000u)
			b->io[b->nio++] = t->intervals.v[i];
		else
			b->api[b->napi++] = t->intervals.v[i];
	}
	snr_qsort(b->api, b->napi, sizeof(*b->api), iv_cmp);
	snr_qsort(b->io, b->nio, sizeof(*b->io), iv_cmp);
	return b;
}

void snrh_bucketer_free(struct snrh_bucketer *b)
{
	if (!b)
		return;
	free(b->api);
	free(b->io);
	free(b);
}

static const struct snrh_interval *find_iv(const struct snrh_interval *v, size_t n, uint32_t tid, uint64_t ts)
{
	size_t lo = 0, hi = n; /* first element > (tid, ts) */
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].tid < tid || (v[mid].tid == tid && v[mid].start <= ts))
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && v[lo - 1].tid == tid && v[lo - 1].start <= ts && ts <= v[lo - 1].end)
		return &v[lo - 1];
	return NULL;
}

const char *snrh_bucket_at(const struct snrh_bucketer *b, uint32_t tid, uint64_t ts)
{
	const struct snrh_interval *iv = find_iv(b->api, b->napi, tid, ts);
	if (!iv)
		iv = find_iv(b->io, b->nio, tid, ts);
	return iv ? snrh_probe_bucket(b->t, iv->probe) : NULL;
}

const char *snrh_bucket_for(const struct snrh_bucketer *b, uint32_t tid, uint64_t ts, int32_t kstack)
{
	const char *bucket = snrh_bucket_at(b, tid, ts);
	if (!bucket && snrh_stack_io_syscall(b->t, kstack))
		bucket = "H:IO";
	if (!bucket && snrh_stack_sleep_syscall(b->t, kstack))
		bucket = "H:SLEEP"; /* the program asked to wait: nanosleep, usleep, sleep */
	return bucket;
}

/* ---- per-thread bucket table ---- */

#define MAX_BUCKETS 16

struct bucket_row {
	const char *name;
	uint64_t in_call_ns, oncpu_samples, offcpu_ns;
};

struct thread_rows {
	uint32_t tid;
	struct bucket_row rows[MAX_BUCKETS];
	int n;
	uint64_t samples;
};

static struct bucket_row *row_for(struct thread_rows *tr, const char *name)
{
	for (int i = 0; i < tr->n; i++)
		if (!strcmp(tr->rows[i].name, name))
			return &tr->rows[i];
	if (tr->n == MAX_BUCKETS)
		return &tr->rows[MAX_BUCKETS - 1];
	tr->rows[tr->n] = (struct bucket_row){name, 0, 0, 0};
	return &tr->rows[tr->n++];
}

/* "(futex)": the innermost system call of an off-CPU kernel stack, in
 * parentheses (not a bucket), or "(no bucket)" without one. The names are
 * kept for the process's life: a handful of distinct system calls. */
static const char *blocked_in(const struct snrh_trace *t, int32_t kstack)
{
	static char **names;
	static size_t nnames;
	if (kstack < 0 || (size_t)kstack >= t->stacks.n || !t->stacks.v[kstack].kernel)
		return "(no bucket)";
	const struct snrh_stack *s = &t->stacks.v[kstack];
	for (uint32_t f = 0; f < s->nframes; f++) {
		const char *n = snrh_str(t, s->frames[f].sym), *sys = strstr(n, "_sys_");
		if (!sys || strncmp(n, "__", 2))
			continue;
		char want[80];
		snprintf(want, sizeof(want), "(%s)", sys + 5);
		for (size_t i = 0; i < nnames; i++)
			if (!strcmp(names[i], want))
				return names[i];
		names = snr_xrealloc(names, (nnames + 1) * sizeof(*names));
		return names[nnames++] = snr_xstrdup(want);
	}
	return "(no bucket)";
}

static struct thread_rows *rows_for(struct thread_rows *v, size_t n, uint32_t tid)
{
	for (size_t i = 0; i < n; i++)
		if (v[i].tid == tid)
			return &v[i];
	return NULL;
}

/* Fills rows (one per thread of t, tid and samples set) with each
 * thread's buckets: time in probed calls, on-CPU samples, off-CPU time. */
static void bucket_rows(const struct snrh_trace *t, struct thread_rows *rows)
{
	struct snrh_bucketer *bk = snrh_bucketer_new(t);
	for (size_t i = 0; i < t->intervals.n; i++) {
		struct thread_rows *tr = rows_for(rows, t->threads.n, t->intervals.v[i].tid);
		if (tr)
			row_for(tr, snrh_probe_bucket(t, t->intervals.v[i].probe))->in_call_ns +=
				t->intervals.v[i].end - t->intervals.v[i].start;
	}
	for (size_t i = 0; i < t->samples.n; i++) {
		struct thread_rows *tr = rows_for(rows, t->threads.n, t->samples.v[i].tid);
		const char *b = snrh_bucket_for(bk, t->samples.v[i].tid, t->samples.v[i].ts, t->samples.v[i].kstack);
		if (tr)
			row_for(tr, b ? b : "H:APP")->oncpu_samples++;
	}
	for (size_t i = 0; i < t->offcpu.n; i++) {
		struct thread_rows *tr = rows_for(rows, t->threads.n, t->offcpu.v[i].tid);
		const char *b = snrh_bucket_for(bk, t->offcpu.v[i].tid, t->offcpu.v[i].start, t->offcpu.v[i].kstack);
		/* no bucket: said what it is, a preemption or the system call it
		 * blocked in ("(futex)": a join, a lock, a condition variable) */
		if (!b)
			b = (t->offcpu.v[i].state & 3) == 0 ? "(preempted)" : blocked_in(t, t->offcpu.v[i].kstack);
		if (tr)
			row_for(tr, b)->offcpu_ns += t->offcpu.v[i].end - t->offcpu.v[i].start;
	}
	snrh_bucketer_free(bk);
}

/* ---- stacks ---- */

/* A user frame's name: its symbol, or, in a module with no symbol for it (a
 * vDSO's local function, as kvm-clock's vDSO has), the module in brackets
 * ("[vdso]", "[libc.so.6]"), as perf names such frames. */
static void put_user_frame(const struct snrh_trace *t, const struct snrh_frame *f, struct snr_buf *b)
{
	const char *n = snrh_str(t, f->sym);
	if (!f->sym && f->module) {
		const char *mod = snrh_str(t, f->module), *base = strrchr(mod, '/');
		base = base ? base + 1 : mod;
		if (base[0] == '[') {
			snr_buf_put(b, base, strlen(base));
		} else {
			snr_buf_u8(b, '[');
			snr_buf_put(b, base, strlen(base));
			snr_buf_u8(b, ']');
		}
		return;
	}
	snr_buf_put(b, n, strlen(n));
}

static void fold_stack(const struct snrh_trace *t, int32_t ustack, int32_t kstack, const char *comm, struct snr_buf *b)
{
	b->len = 0;
	snr_buf_put(b, comm, strlen(comm));
	if (ustack >= 0 && (size_t)ustack < t->stacks.n) {
		const struct snrh_stack *s = &t->stacks.v[ustack];
		for (uint32_t i = s->nframes; i-- > 0;) {
			snr_buf_u8(b, ';');
			put_user_frame(t, &s->frames[i], b);
		}
	}
	if (kstack >= 0 && (size_t)kstack < t->stacks.n) {
		const struct snrh_stack *s = &t->stacks.v[kstack];
		for (uint32_t i = s->nframes; i-- > 0;) {
			const char *n = snrh_str(t, s->frames[i].sym);
			snr_buf_u8(b, ';');
			snr_buf_put(b, n, strlen(n));
			snr_buf_put(b, "_[k]", 4);
		}
	}
	snr_buf_u8(b, 0);
}

struct folded {
	char *key;
	uint64_t weight, count;
	uint32_t state;
	int32_t ustack, kstack;
	uint32_t tid;
};

static int folded_cmp_key(const void *a, const void *b)
{
	return strcmp(((const struct folded *)a)->key, ((const struct folded *)b)->key);
}

static int folded_cmp_weight(const void *a, const void *b)
{
	const struct folded *x = a, *y = b;
	return x->weight < y->weight ? 1 : x->weight > y->weight ? -1 : 0;
}

/* Sorts by key and merges equal keys, summing weights. */
static size_t fold_merge(struct folded *v, size_t n)
{
	snr_qsort(v, n, sizeof(*v), folded_cmp_key);
	size_t m = 0;
	for (size_t i = 0; i < n; i++) {
		if (m && !strcmp(v[m - 1].key, v[i].key)) {
			v[m - 1].weight += v[i].weight;
			v[m - 1].count += v[i].count;
			free(v[i].key);
		} else {
			v[m++] = v[i];
		}
	}
	return m;
}

static const char *comm_of(const struct snrh_trace *t, uint32_t tid)
{
	for (size_t i = 0; i < t->threads.n; i++)
		if (t->threads.v[i].tid == tid)
			return snrh_str(t, t->threads.v[i].comm);
	return "?";
}

static int write_folded(const char *path, struct folded *v, size_t n)
{
	struct snr_outfile of;
	char err[600];
	FILE *f = snr_outfile_fopen(&of, path, err, sizeof(err));
	if (!f) {
		snr_err("%s", err);
		return -1;
	}
	for (size_t i = 0; i < n; i++)
		if (v[i].weight)
			fprintf(f, "%s %llu\n", v[i].key, (unsigned long long)v[i].weight);
	if (snr_outfile_close(&of, true, err, sizeof(err))) {
		snr_err("%s", err);
		return -1;
	}
	return 0;
}

/* One frame a line: func+0x... (module), and for a user frame with a line
 * table its file:line (lines NULL: kernel frames, or none). */
static void print_stack(const struct snrh_trace *t, int32_t idx, const char *prefix, struct snr_lines *lines,
			FILE *out)
{
	if (idx < 0 || (size_t)idx >= t->stacks.n)
		return;
	const struct snrh_stack *s = &t->stacks.v[idx];
	for (uint32_t i = 0; i < s->nframes; i++) {
		const struct snrh_frame *f = &s->frames[i];
		const char *mod = snrh_str(t, f->module);
		const char *base = strrchr(mod, '/');
		char line[300] = "";
		if (lines && !s->kernel)
			snrh_frame_line(lines, f->addr, i > 0, line, sizeof(line));
		fprintf(out, "        %s%s+0x%llx (%s)%s\n", prefix, snrh_str(t, f->sym), (unsigned long long)f->offset,
			base ? base + 1 : mod, line);
	}
}

/* --json's document: the thread table (the scheduler's exact totals), each
 * thread's buckets, on/off-device (analyzer/host_device.c) and the progress
 * points (analyzer/progress.c). */
json_t *snrh_report_doc(const struct snrh_trace *t, bool truncated, char *err, size_t errlen)
{
	json_t *m = t->meta, *threads = json_array(), *buckets = json_array();
	uint64_t hz = (uint64_t)json_integer_value(json_object_get(m, "hz"));
	struct thread_rows *rows = snr_xcalloc(t->threads.n + 1, sizeof(*rows));
	for (size_t i = 0; i < t->threads.n; i++) {
		const struct snrh_thread *th = &t->threads.v[i];
		rows[i].tid = th->tid;
		json_array_append_new(threads, json_pack("{s:I, s:s, s:I, s:[I,I,I,I]}", "tid", (json_int_t)th->tid, "comm",
							 snrh_str(t, th->comm), "oncpu_ns", (json_int_t)th->oncpu_ns,
							 "offcpu_ns_by_state", (json_int_t)th->offcpu_ns[0],
							 (json_int_t)th->offcpu_ns[1], (json_int_t)th->offcpu_ns[2],
							 (json_int_t)th->offcpu_ns[3]));
	}
	bucket_rows(t, rows);
	for (size_t i = 0; i < t->threads.n; i++)
		for (int r = 0; r < rows[i].n; r++) {
			const struct bucket_row *br = &rows[i].rows[r];
			json_array_append_new(
				buckets, json_pack("{s:I, s:s, s:s, s:I, s:I, s:f, s:I}", "tid", (json_int_t)rows[i].tid,
						   "comm", snrh_str(t, t->threads.v[i].comm), "bucket", br->name,
						   "in_call_ns", (json_int_t)br->in_call_ns, "oncpu_samples",
						   (json_int_t)br->oncpu_samples, "oncpu_ms_estimated",
						   hz ? (double)br->oncpu_samples * 1e3 / (double)hz : 0.0, "offcpu_ns",
						   (json_int_t)br->offcpu_ns));
		}
	free(rows);
	struct snrh_ondev od;
	snrh_ondev_build(t, &od);
	json_t *doc = json_pack("{s:I, s:I, s:I, s:b, s:o, s:o, s:o}", "pid", json_integer_value(json_object_get(m, "pid")),
				"t_start_ns", json_integer_value(json_object_get(m, "t_start_ns")), "t_end_ns",
				json_integer_value(json_object_get(m, "t_end_ns")), "truncated", truncated,
				"threads", threads, "buckets", buckets, "on_off_device", snrh_ondev_json(&od));
	snrh_ondev_free(&od);
	/* the progress points (analyzer/progress.h) */
	struct snrh_point *pts = NULL;
	int npts = snrh_points_build(t, &pts, err, errlen);
	if (npts < 0) {
		json_decref(doc);
		return NULL;
	}
	json_t *smap = json_object_get(m, "stack_map");
	if (smap) /* stacks taken and lost, as recorded */
		json_object_set(doc, "stack_map", smap);
	json_object_set_new(doc, "progress",
			    snrh_progress_json(pts, npts, (uint64_t)json_integer_value(json_object_get(m, "t_start_ns")), 10));
	snrh_points_free(pts, npts);
	return doc;
}

static int report_json(const struct snrh_trace *t, const struct snrh_report_opts *o, FILE *out)
{
	char perr[300];
	json_t *doc = snrh_report_doc(t, o->truncated != NULL, perr, sizeof(perr));
	if (!doc) {
		snr_err("%s", perr);
		return -1;
	}
	int rc = json_dumpf(doc, out, JSON_INDENT(1)) ? -1 : 0;
	fputc('\n', out);
	json_decref(doc);
	return rc;
}

int snrh_report(const struct snrh_trace *t, const struct snrh_report_opts *o, FILE *out)
{
	if (o->json) {
		/* --folded and --trace-events are written as without --json */
		int rc = 0;
		if (o->folded_prefix || o->trace_events) {
			struct snrh_report_opts text = *o;
			text.json = 0;
			FILE *sink = fopen("/dev/null", "w");
			rc = sink ? snrh_report(t, &text, sink) : -1;
			if (sink)
				fclose(sink);
		}
		return report_json(t, o, out) || rc ? -1 : 0;
	}
	json_t *m = t->meta;
	uint64_t hz = (uint64_t)json_integer_value(json_object_get(m, "hz"));
	uint64_t t0 = (uint64_t)json_integer_value(json_object_get(m, "t_start_ns"));
	uint64_t t1 = (uint64_t)json_integer_value(json_object_get(m, "t_end_ns"));
	uint64_t sample_ns = hz ? 1000000000ull / hz : 0;
	json_t *cmd = json_object_get(m, "command");
	const char *exe = json_string_value(json_object_get(m, "exe"));
	fprintf(out, "host trace: pid %lld (%s), %.3f s, on-CPU sampled at %llu Hz, off-CPU stacks for blocks >= %lld us\n",
		(long long)json_integer_value(json_object_get(m, "pid")),
		json_array_size(cmd) ? json_string_value(json_array_get(cmd, 0)) : exe ? exe : "?",
		t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0, (unsigned long long)hz,
		(long long)json_integer_value(json_object_get(m, "min_offcpu_us")));
	if (o->truncated)
		fprintf(out, "TRUNCATED: %s; this covers %.3f s, up to the last record written%s\n", o->truncated,
			t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0,
			json_is_true(json_object_get(m, "threads_rebuilt"))
				? " (thread totals rebuilt from the events: on-CPU from samples)"
				: "");
	/* CUPTI files merged in (libsnr_cupti.so's META.cupti). */
	json_t *merged = json_object_get(m, "merged"), *one;
	size_t mi;
	json_array_foreach(merged, mi, one)
	{
		json_t *c = json_object_get(one, "cupti");
		if (c)
			fprintf(out, "CUPTI (pid %lld): %lld records, %lld skipped, %lld dropped by CUPTI\n",
				(long long)json_integer_value(json_object_get(one, "pid")),
				(long long)json_integer_value(json_object_get(c, "records")),
				(long long)json_integer_value(json_object_get(c, "skipped")),
				(long long)json_integer_value(json_object_get(c, "dropped")));
	}
	json_int_t repaired = json_integer_value(json_object_get(m, "repaired_switch_ins"));
	if (repaired)
		fprintf(out, "note: %lld switch-ins the tracer did not see were reconstructed from the threads' run time\n",
			(long long)repaired);
	json_t *dropped = json_object_get(m, "dropped");
	const char *k;
	json_t *v;
	json_object_foreach(dropped, k, v)
	{
		if (json_integer_value(v))
			fprintf(out, "warning: %lld %s events dropped (ring buffer full)\n", (long long)json_integer_value(v), k);
	}
	/* Stacks the kernel's stack map could not keep (recorder/host/stack_map.h):
	 * their records are shown without that stack. */
	json_t *smap = json_object_get(m, "stack_map");
	json_object_foreach(smap, k, v)
	{
		json_int_t lost = json_integer_value(json_object_get(v, "lost"));
		json_int_t taken = json_integer_value(json_object_get(v, "taken"));
		if (json_is_object(v) && lost)
			fprintf(out,
				"warning: %lld of %lld %s stacks lost (the stack map's slot taken by another stack, or "
				"the map full at %lld stacks; --stack-map sizes it): those records show no %s stack\n",
				(long long)lost, (long long)(lost + taken), k,
				(long long)json_integer_value(json_object_get(smap, "entries")), k);
	}

	json_t *copies = json_object_get(m, "stack_copies");
	if (copies) {
		json_int_t n = json_integer_value(json_object_get(copies, "copies"));
		fprintf(out,
			"user stacks: DWARF-unwound (libdw) from %lld copies of the stack top, %.0f bytes each on "
			"average (at most %lld), %.1f frames each\n",
			(long long)n, n ? (double)json_integer_value(json_object_get(copies, "bytes")) / (double)n : 0.0,
			(long long)json_integer_value(json_object_get(copies, "max_bytes")),
			n ? (double)json_integer_value(json_object_get(copies, "frames")) / (double)n : 0.0);
		json_t *learned = json_object_get(copies, "reach_learned");
		if (learned)
			fprintf(out,
				"  copies stop at each thread's outermost frame once an unwind has reached it: learned "
				"for %lld threads, dropped %lld times (an unwind ran past it)\n",
				(long long)json_integer_value(learned),
				(long long)json_integer_value(json_object_get(copies, "reach_dropped")));
	} else if (json_string_value(json_object_get(m, "unwind"))) {
		fprintf(out, "user stacks: frame-pointer walk in the kernel (--unwind %s)\n",
			json_string_value(json_object_get(m, "unwind")));
	}

	/* Threads: exact scheduler totals. */
	fprintf(out, "\n%-16s %8s %11s %11s %9s %9s %9s %9s %8s\n", "thread", "tid", "on-CPU ms", "off-CPU ms", "R ms",
		"S ms", "D ms", "other ms", "samples");
	struct thread_rows *rows = snr_xcalloc(t->threads.n + 1, sizeof(*rows));
	for (size_t i = 0; i < t->threads.n; i++) {
		const struct snrh_thread *th = &t->threads.v[i];
		rows[i].tid = th->tid;
		for (size_t s = 0; s < t->samples.n; s++)
			rows[i].samples += t->samples.v[s].tid == th->tid;
		uint64_t off = th->offcpu_ns[0] + th->offcpu_ns[1] + th->offcpu_ns[2] + th->offcpu_ns[3];
		fprintf(out, "%-16s %8u %11.3f %11.3f %9.3f %9.3f %9.3f %9.3f %8llu\n", snrh_str(t, th->comm), th->tid,
			(double)th->oncpu_ns / 1e6, (double)off / 1e6, (double)th->offcpu_ns[0] / 1e6,
			(double)th->offcpu_ns[1] / 1e6, (double)th->offcpu_ns[2] / 1e6,
			(double)th->offcpu_ns[3] / 1e6, (unsigned long long)rows[i].samples);
	}

	/* Buckets. */
	bucket_rows(t, rows);
	fprintf(out, "\nbuckets (gPerf host side; on-CPU estimated from samples, off-CPU from blocks >= threshold)\n");
	fprintf(out, "%-16s %8s %-12s %12s %12s %12s\n", "thread", "tid", "bucket", "in-call ms", "on-CPU ms~",
		"off-CPU ms");
	for (size_t i = 0; i < t->threads.n; i++)
		for (int r = 0; r < rows[i].n; r++) {
			const struct bucket_row *br = &rows[i].rows[r];
			fprintf(out, "%-16s %8u %-12s %12.3f %12.3f %12.3f\n", snrh_str(t, t->threads.v[i].comm), rows[i].tid,
				br->name, (double)br->in_call_ns / 1e6, (double)(br->oncpu_samples * sample_ns) / 1e6,
				(double)br->offcpu_ns / 1e6);
		}

	/* One line that says how the tables' totals relate: the thread table
	 * is the scheduler's exact count, the bucket table and the folded files
	 * are samples (on-CPU) and the recorded intervals (off-CPU). */
	{
		uint64_t on_exact = 0, off_exact = 0, off_iv = 0;
		for (size_t i = 0; i < t->threads.n; i++) {
			on_exact += t->threads.v[i].oncpu_ns;
			for (int st = 0; st < 4; st++)
				off_exact += t->threads.v[i].offcpu_ns[st];
		}
		for (size_t i = 0; i < t->offcpu.n; i++)
			off_iv += t->offcpu.v[i].end - t->offcpu.v[i].start;
		fprintf(out,
			"totals: on-CPU %.3f ms exact (thread table: scheduler) vs %.3f ms sampled (bucket table, "
			"oncpu.folded: %zu samples x %.3f ms, a count with binomial noise); off-CPU %.3f ms exact vs "
			"%.3f ms in the recorded intervals (bucket table, offcpu.folded%s)\n",
			(double)on_exact / 1e6, (double)(t->samples.n * sample_ns) / 1e6, t->samples.n,
			(double)sample_ns / 1e6, (double)off_exact / 1e6, (double)off_iv / 1e6,
			json_integer_value(json_object_get(m, "min_offcpu_us")) ? ": only blocks >= --min-block"
										 : ": every block");
	}

	/* Per API: calls and time. */
	if (t->intervals.n) {
		fprintf(out, "\n%-28s %-10s %8s %12s %12s\n", "call", "bucket", "calls", "total ms", "max ms");
		struct {
			uint32_t probe;
			uint64_t n, total, max;
		} *apis = snr_xcalloc(t->intervals.n, sizeof(*apis));
		size_t napis = 0;
		for (size_t i = 0; i < t->intervals.n; i++) {
			const struct snrh_interval *iv = &t->intervals.v[i];
			size_t j = 0;
			while (j < napis && apis[j].probe != iv->probe)
				j++;
			if (j == napis)
				apis[napis++].probe = iv->probe;
			uint64_t d = iv->end - iv->start;
			apis[j].n++;
			apis[j].total += d;
			if (d > apis[j].max)
				apis[j].max = d;
		}
		for (size_t j = 0; j < napis; j++) {
			char buf[64];
			fprintf(out, "%-28s %-10s %8llu %12.3f %12.3f\n", snrh_probe_name(t, apis[j].probe, buf, sizeof(buf)),
				snrh_probe_bucket(t, apis[j].probe), (unsigned long long)apis[j].n,
				(double)apis[j].total / 1e6, (double)apis[j].max / 1e6);
		}
		free(apis);
	}

	/* Device activity (CUPTI). */
	if (t->device.n) {
		static const char *const kinds[] = {"?", "kernel", "memcpy", "memset", "runtime", "driver", "sync"};
		uint64_t by_kind[7] = {0}, n_kind[7] = {0};
		for (size_t i = 0; i < t->device.n; i++) {
			uint32_t kd = t->device.v[i].kind < 7 ? t->device.v[i].kind : 0;
			by_kind[kd] += t->device.v[i].end - t->device.v[i].start;
			n_kind[kd]++;
		}
		fprintf(out, "\ndevice activity (CUPTI)\n");
		for (int kd = 1; kd < 7; kd++)
			if (n_kind[kd])
				fprintf(out, "  %-8s %8llu records %12.3f ms\n", kinds[kd], (unsigned long long)n_kind[kd],
					(double)by_kind[kd] / 1e6);
	}
	{
		struct snrh_ondev od;
		snrh_ondev_build(t, &od);
		snrh_ondev_print(&od, o->top, out);
		snrh_ondev_free(&od);
	}

	/* Stacks. */
	struct snr_buf b = {0};
	struct folded *offv = snr_xcalloc(t->offcpu.n + 1, sizeof(*offv));
	for (size_t i = 0; i < t->offcpu.n; i++) {
		const struct snrh_offcpu *e = &t->offcpu.v[i];
		fold_stack(t, e->ustack, e->kstack, comm_of(t, e->tid), &b);
		offv[i] = (struct folded){snr_xstrdup((char *)b.p), (e->end - e->start) / 1000, 1, e->state, e->ustack,
					  e->kstack, e->tid};
	}
	size_t noff = fold_merge(offv, t->offcpu.n);
	struct folded *onv = snr_xcalloc(t->samples.n + 1, sizeof(*onv));
	for (size_t i = 0; i < t->samples.n; i++) {
		const struct snrh_sample *s = &t->samples.v[i];
		fold_stack(t, s->ustack, s->kstack, comm_of(t, s->tid), &b);
		onv[i] = (struct folded){snr_xstrdup((char *)b.p), sample_ns / 1000, 1, 0, s->ustack, s->kstack, s->tid};
	}
	size_t non = fold_merge(onv, t->samples.n);
	int rc = 0;
	if (o->folded_prefix) {
		char path[4096];
		snprintf(path, sizeof(path), "%s.oncpu.folded", o->folded_prefix);
		rc |= write_folded(path, onv, non);
		snprintf(path, sizeof(path), "%s.offcpu.folded", o->folded_prefix);
		rc |= write_folded(path, offv, noff);
	}
	snr_qsort(offv, noff, sizeof(*offv), folded_cmp_weight);
	struct snr_lines *lines = (noff || non) && o->top ? snrh_lines_open(t) : NULL;
	if (noff && o->top)
		fprintf(out, "\ntop off-CPU stacks (leaf first)\n");
	for (size_t i = 0; i < noff && i < o->top; i++) {
		fprintf(out, "  %10.3f ms  %-5s x%-6llu %s\n", (double)offv[i].weight / 1e3, state_names[offv[i].state & 3],
			(unsigned long long)offv[i].count, comm_of(t, offv[i].tid));
		print_stack(t, offv[i].kstack, "[k] ", NULL, out);
		print_stack(t, offv[i].ustack, "", lines, out);
	}
	snr_qsort(onv, non, sizeof(*onv), folded_cmp_weight);
	if (non && o->top)
		fprintf(out, "\ntop on-CPU stacks (leaf first)\n");
	for (size_t i = 0; i < non && i < o->top / 2 + 1; i++) {
		fprintf(out, "  %10.3f ms  %6llu samples  %s\n", (double)onv[i].weight / 1e3,
			(unsigned long long)onv[i].count, comm_of(t, onv[i].tid));
		print_stack(t, onv[i].kstack, "[k] ", NULL, out);
		print_stack(t, onv[i].ustack, "", lines, out);
	}
	for (size_t i = 0; i < noff; i++)
		free(offv[i].key);
	for (size_t i = 0; i < non; i++)
		free(onv[i].key);
	free(offv);
	free(onv);
	free(b.p);
	snr_lines_free(lines);

	struct snrh_point *pts = NULL;
	char perr[300];
	int npts = snrh_points_build(t, &pts, perr, sizeof(perr));
	if (npts < 0) {
		snr_err("%s", perr);
		rc = -1;
	}
	snrh_progress_report(pts, npts, t0, 10, out);
	snrh_points_free(pts, npts);

	if (o->trace_events) {
		json_t *events = json_array();
		snrh_trace_events(t, events);
		json_t *doc = json_pack("{s:o, s:s, s:b}", "traceEvents", events, "displayTimeUnit", "ms", "truncated",
					o->truncated != NULL);
		if (json_dump_file(doc, o->trace_events, SNRH_EV_JSON_FLAGS)) {
			snr_err("cannot write %s", o->trace_events);
			rc = -1;
		}
		json_decref(doc);
	}
	free(rows);
	return rc ? -1 : 0;
}
