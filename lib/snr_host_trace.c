/*
 * host_trace.c: writing and reading the host trace (.snrh); the layout is
 * tabulated in host_trace.h. Also the probe naming shared by the report and
 * the trace-event export.
 */
#include "lib/snr_host_trace.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_output.h"
#include "lib/snr_util.h"

void snrh_trace_init(struct snrh_trace *t)
{
	memset(t, 0, sizeof(*t));
	t->meta = json_object();
	t->maps = json_array();
	snrh_intern(t, "[unknown]"); /* string 0 */
}

void snrh_trace_free(struct snrh_trace *t)
{
	json_decref(t->meta);
	json_decref(t->maps);
	for (size_t i = 0; i < t->strings.n; i++)
		free(t->strings.v[i]);
	for (size_t i = 0; i < t->stacks.n; i++)
		free(t->stacks.v[i].frames);
	for (size_t i = 0; i < t->probes.n; i++) {
		free(t->probes.v[i].lib);
		free(t->probes.v[i].symbol);
		free(t->probes.v[i].bucket);
	}
	free(t->strings.v);
	free(t->stacks.v);
	free(t->threads.v);
	free(t->offcpu.v);
	free(t->samples.v);
	free(t->intervals.v);
	free(t->marks.v);
	free(t->probes.v);
	free(t->device.v);
	free(t->hash);
	memset(t, 0, sizeof(*t));
}

static uint64_t fnv1a(const char *s)
{
	uint64_t h = 1469598103934665603ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 1099511628211ull;
	return h;
}

/* Open addressing over string indices + 1 (0 = empty). */
uint32_t snrh_intern(struct snrh_trace *t, const char *s)
{
	if (t->strings.n * 2 >= t->hash_cap) {
		size_t cap = t->hash_cap ? t->hash_cap * 2 : 1024;
		uint32_t *h = snr_xcalloc(cap, sizeof(*h));
		for (size_t i = 0; i < t->strings.n; i++) {
			size_t j = fnv1a(t->strings.v[i]) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = (uint32_t)i + 1;
		}
		free(t->hash);
		t->hash = h;
		t->hash_cap = cap;
	}
	size_t j = fnv1a(s) & (t->hash_cap - 1);
	while (t->hash[j]) {
		if (!strcmp(t->strings.v[t->hash[j] - 1], s))
			return t->hash[j] - 1;
		j = (j + 1) & (t->hash_cap - 1);
	}
	SNRH_PUSH(t->strings, snr_xstrdup(s));
	t->hash[j] = (uint32_t)t->strings.n;
	return (uint32_t)t->strings.n - 1;
}

static const struct {
	uint32_t nr;
	const char *name;
} io_syscalls[] = {
	{0, "read"},       {1, "write"},   {17, "pread64"},  {18, "pwrite64"},  {19, "readv"},
	{20, "writev"},    {40, "sendfile"}, {44, "sendto"}, {45, "recvfrom"},  {46, "sendmsg"},
	{47, "recvmsg"},   {74, "fsync"},  {75, "fdatasync"}, {257, "openat"},  {295, "preadv"},
	{296, "pwritev"},  {426, "io_uring_enter"},
};

const char *snrh_syscall_name(uint32_t nr)
{
	for (size_t i = 0; i < sizeof(io_syscalls) / sizeof(io_syscalls[0]); i++)
		if (io_syscalls[i].nr == nr)
			return io_syscalls[i].name;
	return NULL;
}

const char *snrh_stack_io_syscall(const struct snrh_trace *t, int32_t kstack)
{
	if (kstack < 0 || (size_t)kstack >= t->stacks.n || !t->stacks.v[kstack].kernel)
		return NULL;
	const struct snrh_stack *s = &t->stacks.v[kstack];
	/* Leaf first: the innermost syscall entry function is the call. */
	for (uint32_t f = 0; f < s->nframes; f++) {
		const char *n = snrh_str(t, s->frames[f].sym);
		if (strncmp(n, "__x64_sys_", 10))
			continue;
		for (size_t i = 0; i < sizeof(io_syscalls) / sizeof(io_syscalls[0]); i++)
			if (!strcmp(n + 10, io_syscalls[i].name))
				return io_syscalls[i].name;
		return NULL;
	}
	return NULL;
}

const char *snrh_stack_sleep_syscall(const struct snrh_trace *t, int32_t kstack)
{
	static const char *const prefixes[] = {"__x64_sys_", "__arm64_sys_", "__ia32_sys_"};
	static const char *const sleeps[] = {"nanosleep", "clock_nanosleep", "clock_nanosleep_time32",
					     "nanosleep_time32"};
	if (kstack < 0 || (size_t)kstack >= t->stacks.n || !t->stacks.v[kstack].kernel)
		return NULL;
	const struct snrh_stack *s = &t->stacks.v[kstack];
	for (uint32_t f = 0; f < s->nframes; f++) {
		const char *n = snrh_str(t, s->frames[f].sym);
		for (size_t p = 0; p < sizeof(prefixes) / sizeof(prefixes[0]); p++) {
			size_t l = strlen(prefixes[p]);
			if (strncmp(n, prefixes[p], l))
				continue;
			for (size_t i = 0; i < sizeof(sleeps) / sizeof(sleeps[0]); i++)
				if (!strcmp(n + l, sleeps[i]))
					return sleeps[i];
			return NULL; /* the innermost system call is another one */
		}
	}
	return NULL;
}

const char *snrh_probe_name(const struct snrh_trace *t, uint32_t probe, char *buf, size_t len)
{
	if (probe & 0x80000000u) {
		const char *n = snrh_syscall_name(probe & 0x7fffffffu);
		if (n)
			snprintf(buf, len, "sys:%s", n);
		else
			snprintf(buf, len, "sys:%u", probe & 0x7fffffffu);
		return buf;
	}
	for (size_t i = 0; i < t->probes.n; i++)
		if (t->probes.v[i].id == probe)
			return t->probes.v[i].symbol;
	snprintf(buf, len, "probe%u", probe);
	return buf;
}

const char *snrh_probe_bucket(const struct snrh_trace *t, uint32_t probe)
{
	if (probe & 0x80000000u)
		return "H:IO";
	for (size_t i = 0; i < t->probes.n; i++)
		if (t->probes.v[i].id == probe)
			return t->probes.v[i].bucket;
	return "H:CTRL";
}

/* ---- writing ---- */

static void put_str(struct snr_buf *b, const char *s)
{
	size_t n = strlen(s);
	snr_buf_varint(b, n);
	snr_buf_put(b, s, n);
}

static int put_json(struct snr_chunk_writer *w, unsigned type, json_t *j)
{
	char *s = json_dumps(j, JSON_COMPACT);
	int rc = snr_chunkw_put(w, type, s, strlen(s), true);
	free(s);
	return rc;
}

/* Events per chunk: a long recording's flush stays far below the
 * container's chunk limit. */
#define EVENTS_PER_CHUNK 65536

static void put_stack(struct snr_buf *b, const struct snrh_stack *s)
{
	snr_buf_varint(b, s->kernel ? 1 : 0);
	snr_buf_varint(b, s->nframes);
	for (uint32_t f = 0; f < s->nframes; f++) {
		snr_buf_varint(b, s->frames[f].addr);
		snr_buf_varint(b, s->frames[f].sym);
		snr_buf_varint(b, s->frames[f].module);
		snr_buf_varint(b, s->frames[f].offset);
	}
}

static void put_offcpu(struct snr_buf *b, const struct snrh_offcpu *o)
{
	snr_buf_varint(b, o->tid);
	snr_buf_varint(b, o->waker);
	snr_buf_varint(b, o->state);
	snr_buf_varint(b, o->start);
	snr_buf_varint(b, o->end - o->start);
	snr_buf_varint(b, (uint64_t)(o->ustack + 1));
	snr_buf_varint(b, (uint64_t)(o->kstack + 1));
}

static void put_sample(struct snr_buf *b, const struct snrh_sample *s)
{
	snr_buf_varint(b, s->tid);
	snr_buf_varint(b, s->cpu);
	snr_buf_varint(b, s->ts);
	snr_buf_varint(b, (uint64_t)(s->ustack + 1));
	snr_buf_varint(b, (uint64_t)(s->kstack + 1));
}

static void put_interval(struct snr_buf *b, const struct snrh_interval *iv)
{
	snr_buf_varint(b, iv->tid);
	snr_buf_varint(b, iv->probe);
	snr_buf_varint(b, iv->start);
	snr_buf_varint(b, iv->end - iv->start);
}

static void put_mark(struct snr_buf *b, const struct snrh_mark *m)
{
	snr_buf_varint(b, m->tid);
	snr_buf_varint(b, m->mark);
	snr_buf_varint(b, m->ts);
	snr_buf_varint(b, m->arg);
}

static void put_device(struct snr_buf *b, const struct snrh_device_rec *d)
{
	snr_buf_varint(b, d->kind);
	snr_buf_varint(b, d->device);
	snr_buf_varint(b, d->stream);
	snr_buf_varint(b, d->corr);
	snr_buf_varint(b, d->tid);
	snr_buf_varint(b, d->start);
	snr_buf_varint(b, d->end >= d->start ? d->end - d->start : 0);
	snr_buf_varint(b, d->bytes);
	snr_buf_varint(b, d->name);
}

static void put_thread(struct snr_buf *b, const struct snrh_thread *th)
{
	snr_buf_varint(b, th->tid);
	snr_buf_varint(b, th->comm);
	snr_buf_varint(b, th->oncpu_ns);
	for (int s = 0; s < 4; s++)
		snr_buf_varint(b, th->offcpu_ns[s]);
	snr_buf_varint(b, th->switches);
}

/* Items [*done, n) of a vector as chunks of `type` (count, then items),
 * at most EVENTS_PER_CHUNK each; *done = n after. */
#define PUT_NEW(w, b, type, vec, done, put)                                                                \
	do {                                                                                               \
		while (*(done) < (vec).n) {                                                                \
			size_t k_ = (vec).n - *(done) < EVENTS_PER_CHUNK ? (vec).n - *(done) : EVENTS_PER_CHUNK; \
			(b)->len = 0;                                                                      \
			snr_buf_varint((b), k_);                                                           \
			for (size_t i_ = 0; i_ < k_; i_++)                                                 \
				put((b), &(vec).v[*(done) + i_]);                                          \
			snr_chunkw_put((w), (type), (b)->p, (b)->len, true);                               \
			*(done) += k_;                                                                     \
		}                                                                                          \
	} while (0)

static void put_string(struct snr_buf *b, char *const *s) { put_str(b, *s); }

static int writer_status(struct snrh_writer *w, char *err, size_t errlen)
{
	if (!w->cw.failed)
		return 0;
	snprintf(err, errlen, "%s", w->cw.err);
	return -1;
}

int snrh_writer_open(struct snrh_writer *w, const struct snrh_trace *t, const char *path, char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	char magic[8] = SNRH_MAGIC;
	/* written in place (a killed recording leaves a readable prefix): never over an input, nor over an
	 * existing file without --force */
	if (snr_output_check(path, false, err, errlen))
		return -1;
	if (snr_chunkw_create(&w->cw, path, magic, SNRH_VERSION, err, errlen))
		return -1;
	put_json(&w->cw, SNRH_CHUNK_META, t->meta);
	json_t *probes = json_array();
	for (size_t i = 0; i < t->probes.n; i++)
		json_array_append_new(probes, json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)t->probes.v[i].id,
							"lib", t->probes.v[i].lib, "symbol", t->probes.v[i].symbol,
							"bucket", t->probes.v[i].bucket));
	put_json(&w->cw, SNRH_CHUNK_PROBES, probes);
	json_decref(probes);
	return writer_status(w, err, errlen);
}

int snrh_writer_flush(struct snrh_writer *w, const struct snrh_trace *t, char *err, size_t errlen)
{
	/* Strings before the stacks that name them, stacks before the events. */
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_STRINGS, t->strings, &w->strings, put_string);
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_STACKS, t->stacks, &w->stacks, put_stack);
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_OFFCPU, t->offcpu, &w->offcpu, put_offcpu);
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_SAMPLES, t->samples, &w->samples, put_sample);
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_INTERVALS, t->intervals, &w->intervals, put_interval);
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_MARKS, t->marks, &w->marks, put_mark);
	return writer_status(w, err, errlen);
}

int snrh_writer_close(struct snrh_writer *w, const struct snrh_trace *t, char *err, size_t errlen)
{
	snrh_writer_flush(w, t, err, errlen);
	size_t zero = 0;
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_DEVICE, t->device, &w->device, put_device);
	PUT_NEW(&w->cw, &w->buf, SNRH_CHUNK_THREADS, t->threads, &zero, put_thread);
	put_json(&w->cw, SNRH_CHUNK_MAPS, t->maps);
	put_json(&w->cw, SNRH_CHUNK_META, t->meta); /* the final one: end time, counts */
	snr_chunkw_put(&w->cw, SNRH_CHUNK_END, "", 0, false);
	free(w->buf.p);
	w->buf = (struct snr_buf){0};
	int failed = w->cw.failed;
	if (snr_chunkw_close(&w->cw) || failed) {
		snprintf(err, errlen, "%s", w->cw.err);
		return -1;
	}
	return 0;
}

void snrh_writer_abandon(struct snrh_writer *w)
{
	free(w->buf.p);
	w->buf = (struct snr_buf){0};
	snr_chunkw_close(&w->cw);
}

int snrh_trace_write(const struct snrh_trace *t, const char *path, char *err, size_t errlen)
{
	struct snrh_writer w;
	if (snrh_writer_open(&w, t, path, err, errlen))
		return -1;
	return snrh_writer_close(&w, t, err, errlen);
}

/* ---- reading ---- */

struct reader {
	struct snr_chunk_file f;
	const struct snr_chunk *c;
	struct snr_cursor cur;
	uint32_t *strmap; /* file string index -> t string index */
	size_t nstr;
	size_t stack_base; /* t's stack count when the file began */
	size_t nstacks;    /* the file's stacks so far */
	bool ended;        /* its END chunk was read */
	json_t *merged_meta; /* a merged file's META, under t->meta["merged"] */
};

static int str_ok(struct reader *r, uint64_t i, uint32_t *out)
{
	if (i >= r->nstr)
		return snr_chunkf_fail(&r->f, r->c, "string index %llu out of range (%zu strings)",
				       (unsigned long long)i, r->nstr);
	*out = r->strmap[i];
	return 0;
}

static int stack_ok(struct reader *r, uint64_t v, int32_t *out)
{
	if (v > r->nstacks)
		return snr_chunkf_fail(&r->f, r->c, "stack index %llu out of range (%zu stacks)",
				       (unsigned long long)v, r->nstacks);
	*out = v ? (int32_t)(r->stack_base + v - 1) : -1;
	return 0;
}

static json_t *chunk_json(struct reader *r, long len)
{
	json_error_t je;
	json_t *j = json_loadb((const char *)r->f.raw, (size_t)len, 0, &je);
	if (!j)
		snr_chunkf_fail(&r->f, r->c, "bad JSON: %s", je.text);
	return j;
}

static int read_chunk(struct snrh_trace *t, struct reader *r, int first_file)
{
	long len = snr_chunkf_payload(&r->f, r->c);
	if (len < 0)
		return -1;
	r->cur = (struct snr_cursor){r->f.raw, r->f.raw + len, 0};
	struct snr_cursor *c = &r->cur;
	uint64_t n;
	switch (r->c->type) {
	case SNRH_CHUNK_META: {
		json_t *j = chunk_json(r, len);
		if (!j)
			return -1;
		if (first_file) {
			json_decref(t->meta);
			t->meta = j;
		} else if (r->merged_meta) { /* this file's final META replaces its first */
			json_object_clear(r->merged_meta);
			json_object_update(r->merged_meta, j);
			json_decref(j);
		} else {
			json_t *m = json_object_get(t->meta, "merged");
			if (!m) {
				m = json_array();
				json_object_set_new(t->meta, "merged", m);
			}
			json_array_append_new(m, j);
			r->merged_meta = j;
		}
		return 0;
	}
	case SNRH_CHUNK_MAPS: {
		json_t *j = chunk_json(r, len);
		if (!j)
			return -1;
		json_array_extend(t->maps, j);
		json_decref(j);
		return 0;
	}
	case SNRH_CHUNK_PROBES: {
		json_t *j = chunk_json(r, len);
		if (!j)
			return -1;
		size_t i;
		json_t *p;
		json_array_foreach(j, i, p)
		{
			struct snrh_probe pr = {
				(uint32_t)json_integer_value(json_object_get(p, "id")),
				snr_xstrdup(json_string_value(json_object_get(p, "lib")) ?: ""),
				snr_xstrdup(json_string_value(json_object_get(p, "symbol")) ?: ""),
				snr_xstrdup(json_string_value(json_object_get(p, "bucket")) ?: "H:CTRL"),
			};
			SNRH_PUSH(t->probes, pr);
		}
		json_decref(j);
		return 0;
	}
	case SNRH_CHUNK_STRINGS:
		n = snr_cur_varint(c);
		if (n > (uint64_t)len)
			return snr_chunkf_fail(&r->f, r->c, "%llu strings in %ld bytes", (unsigned long long)n, len);
		/* Each STRINGS chunk adds to the file's table (one per flush). */
		r->strmap = snr_xrealloc(r->strmap, (r->nstr + n + 1) * sizeof(*r->strmap));
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			uint64_t sl = snr_cur_varint(c);
			const uint8_t *p = snr_cur_bytes(c, sl);
			if (!p)
				break;
			char *s = snr_xmalloc(sl + 1);
			memcpy(s, p, sl);
			s[sl] = 0;
			r->strmap[r->nstr++] = snrh_intern(t, s);
			free(s);
		}
		break;
	case SNRH_CHUNK_STACKS:
		n = snr_cur_varint(c);
		if (n > (uint64_t)len)
			return snr_chunkf_fail(&r->f, r->c, "%llu stacks in %ld bytes", (unsigned long long)n, len);
		/* Stack indices are the file's: each STACKS chunk adds to them. */
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_stack s = {0};
			s.kernel = snr_cur_varint(c) != 0;
			uint64_t nf = snr_cur_varint(c);
			if (nf > 4096 || c->bad)
				return snr_chunkf_fail(&r->f, r->c, "stack %llu: bad frame count", (unsigned long long)i);
			s.nframes = (uint32_t)nf;
			s.frames = snr_xcalloc(nf ? nf : 1, sizeof(*s.frames));
			SNRH_PUSH(t->stacks, s);
			r->nstacks++;
			for (uint64_t f = 0; f < nf; f++) {
				struct snrh_frame *fr = &t->stacks.v[t->stacks.n - 1].frames[f];
				fr->addr = snr_cur_varint(c);
				if (str_ok(r, snr_cur_varint(c), &fr->sym) || str_ok(r, snr_cur_varint(c), &fr->module))
					return -1;
				fr->offset = snr_cur_varint(c);
			}
		}
		break;
	case SNRH_CHUNK_THREADS:
		n = snr_cur_varint(c);
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_thread th = {0};
			th.tid = (uint32_t)snr_cur_varint(c);
			if (str_ok(r, snr_cur_varint(c), &th.comm))
				return -1;
			th.oncpu_ns = snr_cur_varint(c);
			for (int s = 0; s < 4; s++)
				th.offcpu_ns[s] = snr_cur_varint(c);
			th.switches = snr_cur_varint(c);
			SNRH_PUSH(t->threads, th);
		}
		break;
	case SNRH_CHUNK_OFFCPU:
		n = snr_cur_varint(c);
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_offcpu o = {0};
			o.tid = (uint32_t)snr_cur_varint(c);
			o.waker = (uint32_t)snr_cur_varint(c);
			o.state = (uint32_t)snr_cur_varint(c) & 3;
			o.start = snr_cur_varint(c);
			o.end = o.start + snr_cur_varint(c);
			if (stack_ok(r, snr_cur_varint(c), &o.ustack) || stack_ok(r, snr_cur_varint(c), &o.kstack))
				return -1;
			SNRH_PUSH(t->offcpu, o);
		}
		break;
	case SNRH_CHUNK_SAMPLES:
		n = snr_cur_varint(c);
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_sample s = {0};
			s.tid = (uint32_t)snr_cur_varint(c);
			s.cpu = (uint32_t)snr_cur_varint(c);
			s.ts = snr_cur_varint(c);
			if (stack_ok(r, snr_cur_varint(c), &s.ustack) || stack_ok(r, snr_cur_varint(c), &s.kstack))
				return -1;
			SNRH_PUSH(t->samples, s);
		}
		break;
	case SNRH_CHUNK_INTERVALS:
		n = snr_cur_varint(c);
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_interval iv = {0};
			iv.tid = (uint32_t)snr_cur_varint(c);
			iv.probe = (uint32_t)snr_cur_varint(c);
			iv.start = snr_cur_varint(c);
			iv.end = iv.start + snr_cur_varint(c);
			SNRH_PUSH(t->intervals, iv);
		}
		break;
	case SNRH_CHUNK_MARKS:
		n = snr_cur_varint(c);
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_mark m = {0};
			m.tid = (uint32_t)snr_cur_varint(c);
			m.mark = (uint32_t)snr_cur_varint(c);
			m.ts = snr_cur_varint(c);
			m.arg = snr_cur_varint(c);
			SNRH_PUSH(t->marks, m);
		}
		break;
	case SNRH_CHUNK_END:
		r->ended = true;
		return 0;
	case SNRH_CHUNK_DEVICE:
		n = snr_cur_varint(c);
		for (uint64_t i = 0; i < n && !c->bad; i++) {
			struct snrh_device_rec d = {0};
			d.kind = (uint32_t)snr_cur_varint(c);
			d.device = (uint32_t)snr_cur_varint(c);
			d.stream = (uint32_t)snr_cur_varint(c);
			d.corr = (uint32_t)snr_cur_varint(c);
			d.tid = (uint32_t)snr_cur_varint(c);
			d.start = snr_cur_varint(c);
			d.end = d.start + snr_cur_varint(c);
			d.bytes = snr_cur_varint(c);
			if (str_ok(r, snr_cur_varint(c), &d.name))
				return -1;
			SNRH_PUSH(t->device, d);
		}
		break;
	default:
		return 0;
	}
	if (c->bad)
		return snr_chunkf_fail(&r->f, r->c, "payload ends early");
	return 0;
}

int snrh_trace_read_partial(struct snrh_trace *t, const char *path, bool *truncated, char *err, size_t errlen)
{
	struct reader r;
	memset(&r, 0, sizeof(r));
	*truncated = false;
	char magic[8] = SNRH_MAGIC;
	if (snr_chunkf_open(&r.f, path, magic, "snr host trace", 1, SNRH_VERSION, SNRH_CHUNK_MAX, err, errlen))
		return -1;
	int first_file = t->threads.n == 0 && t->device.n == 0 && json_object_size(t->meta) == 0;
	r.stack_base = t->stacks.n;
	int rc = 0;
	for (size_t i = 0; i < r.f.nchunks && !rc && !r.ended; i++) {
		r.c = &r.f.chunks[i];
		rc = read_chunk(t, &r, first_file);
	}
	if (rc) {
		snprintf(err, errlen, "%s", r.f.err);
	} else if (r.f.truncated || (r.f.version >= 2 && !r.ended)) {
		/* Version 1 files were written whole; version 2 ones end in END. */
		*truncated = true;
		snprintf(err, errlen, "%s: truncated after %zu chunks (%s): the recording did not finish", path,
			 r.f.nchunks, r.f.truncated ? "the last one is cut short" : "no end record");
	}
	free(r.strmap);
	snr_chunkf_close(&r.f);
	return rc;
}

int snrh_trace_read(struct snrh_trace *t, const char *path, char *err, size_t errlen)
{
	bool truncated;
	if (snrh_trace_read_partial(t, path, &truncated, err, errlen))
		return -1;
	return truncated ? -1 : 0;
}

int snrh_trace_rebuild_threads(struct snrh_trace *t)
{
	if (t->threads.n)
		return 0;
	json_t *m = t->meta;
	uint64_t hz = (uint64_t)json_integer_value(json_object_get(m, "hz"));
	uint64_t pid = (uint64_t)json_integer_value(json_object_get(m, "pid")), last = 0;
	const char *cmd = json_string_value(json_array_get(json_object_get(m, "command"), 0));
	if (!cmd)
		cmd = json_string_value(json_object_get(m, "exe"));
	const char *base = cmd ? strrchr(cmd, '/') : NULL;
	char comm[16];
	snprintf(comm, sizeof(comm), "%s", base ? base + 1 : cmd ? cmd : "?");
	/* Every tid any event names, in first-seen order. */
	struct snrh_thread *th;
#define THREAD_OF(id)                                                                                              \
	do {                                                                                                       \
		th = NULL;                                                                                         \
		for (size_t k_ = 0; k_ < t->threads.n && !th; k_++)                                                \
			if (t->threads.v[k_].tid == (id))                                                          \
				th = &t->threads.v[k_];                                                            \
		if (!th) {                                                                                         \
			struct snrh_thread n_ = {(id), snrh_intern(t, (id) == pid ? comm : "?"), 0, {0}, 0};      \
			SNRH_PUSH(t->threads, n_);                                                                 \
			th = &t->threads.v[t->threads.n - 1];                                                      \
		}                                                                                                  \
	} while (0)
	for (size_t i = 0; i < t->offcpu.n; i++) {
		const struct snrh_offcpu *o = &t->offcpu.v[i];
		THREAD_OF(o->tid);
		th->offcpu_ns[o->state & 3] += o->end - o->start;
		th->switches++;
		if (o->end > last)
			last = o->end;
	}
	for (size_t i = 0; i < t->samples.n; i++) {
		THREAD_OF(t->samples.v[i].tid);
		th->oncpu_ns += hz ? 1000000000ull / hz : 0;
		if (t->samples.v[i].ts > last)
			last = t->samples.v[i].ts;
	}
	for (size_t i = 0; i < t->intervals.n; i++) {
		THREAD_OF(t->intervals.v[i].tid);
		if (t->intervals.v[i].end > last)
			last = t->intervals.v[i].end;
	}
#undef THREAD_OF
	if (!json_object_get(m, "t_end_ns") && last)
		json_object_set_new(m, "t_end_ns", json_integer((json_int_t)last));
	json_object_set_new(m, "threads_rebuilt", json_true());
	return (int)t->threads.n;
}
