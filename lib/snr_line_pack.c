/*
 * snr_line_pack.c: the LINES chunk (see snr_line_pack.h). The payload,
 * before zstd (docs/trace-format.md, "LINES"):
 *
 *   varint format (1)
 *   varint nstrings, then each: varint length, bytes    file and function names
 *   varint nrows, then each (pcs increasing):
 *       varint pc - previous pc (the first: pc; > 0 after it)
 *       u8 code length (0..16), code bytes
 *       varint nframes (0..32; 0: no line), then each, innermost first:
 *           varint file string + 1 (0: none), varint line, varint function string + 1 (0: none)
 *   varint nfiles, then each: varint file string, varint text length, text bytes
 */
#include "snr_line_pack.h"

#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "snr_trace.h"
#include "snr_util.h"

#define MAX_FRAMES 32
#define MAX_STRING 4096

struct row {
	uint64_t pc;
	uint8_t len;
	uint8_t code[16];
	struct snr_place *place; /* NULL: no line */
};

struct text {
	char *file;
	char *p;
	size_t n;
};

struct snr_line_pack {
	char **str;
	size_t nstr;
	struct row *rows;
	size_t nrows, cap;
	struct text *texts;
	size_t ntexts;
};

/* ---- the pcs a writer saw ---- */

static size_t pc_slot(const struct snr_pc_set *s, uint64_t pc)
{
	size_t i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (s->nslots - 1);
	while (s->slots[i].used && s->slots[i].pc != pc)
		i = (i + 1) & (s->nslots - 1);
	return i;
}

void snr_pc_set_add(struct snr_pc_set *s, uint64_t pc, const uint8_t *code, unsigned len)
{
	if (s->nslots && s->slots[pc_slot(s, pc)].used) {
		struct snr_pc_code *e = &s->slots[pc_slot(s, pc)];
		if (!e->len && len && len <= 16)
			e->len = (uint8_t)len, memcpy(e->code, code, len);
		return;
	}
	if (2 * (s->n + 1) > s->nslots) {
		struct snr_pc_code *old = s->slots;
		size_t nold = s->nslots;
		s->nslots = nold ? 2 * nold : 1024;
		s->slots = snr_xcalloc(s->nslots, sizeof(*s->slots));
		for (size_t i = 0; i < nold; i++)
			if (old[i].used)
				s->slots[pc_slot(s, old[i].pc)] = old[i];
		free(old);
	}
	struct snr_pc_code *e = &s->slots[pc_slot(s, pc)];
	*e = (struct snr_pc_code){.pc = pc, .used = 1};
	if (len && len <= 16)
		e->len = (uint8_t)len, memcpy(e->code, code, len);
	s->n++;
}

void snr_pc_set_free(struct snr_pc_set *s)
{
	free(s->slots);
	*s = (struct snr_pc_set){0};
}

/* ---- writing ---- */

struct strtab {
	const char **s;
	size_t n, cap;
	size_t *slot; /* index + 1, 0 empty */
	size_t nslots;
};

static uint64_t str_hash(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	for (; *s; s++)
		h = (h ^ (uint8_t)*s) * 0x100000001b3ull;
	return h;
}

/* The string's index + 1 (0 for NULL). */
static uint64_t str_id(struct strtab *t, const char *s)
{
	if (!s)
		return 0;
	if (2 * (t->n + 1) > t->nslots) {
		free(t->slot);
		t->nslots = t->nslots ? 2 * t->nslots : 256;
		t->slot = snr_xcalloc(t->nslots, sizeof(*t->slot));
		for (size_t i = 0; i < t->n; i++) {
			size_t k = (size_t)str_hash(t->s[i]) & (t->nslots - 1);
			while (t->slot[k])
				k = (k + 1) & (t->nslots - 1);
			t->slot[k] = i + 1;
		}
	}
	size_t k = (size_t)str_hash(s) & (t->nslots - 1);
	while (t->slot[k] && strcmp(t->s[t->slot[k] - 1], s))
		k = (k + 1) & (t->nslots - 1);
	if (!t->slot[k]) {
		if (t->n == t->cap) {
			t->cap = t->cap ? 2 * t->cap : 64;
			t->s = snr_xrealloc(t->s, t->cap * sizeof(*t->s));
		}
		t->s[t->n++] = s;
		t->slot[k] = t->n;
	}
	return t->slot[k];
}

static int cmp_pc(const void *a, const void *b)
{
	const struct snr_pc_code *x = a, *y = b;
	return x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* The file's text when it is within the bounds; NULL else. */
static char *read_text(const char *path, size_t *n, size_t room)
{
	struct stat st;
	if (stat(path, &st) || !S_ISREG(st.st_mode) || (uint64_t)st.st_size > SNR_LINE_PACK_FILE_MAX ||
	    (size_t)st.st_size > room)
		return NULL;
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	char *p = snr_xmalloc((size_t)st.st_size + 1);
	*n = fread(p, 1, (size_t)st.st_size, f);
	fclose(f);
	return p;
}

int snr_line_pack_encode(const char *meta_json, const struct snr_pc_set *s, struct snr_buf *out)
{
	struct snr_lines *l = s->n ? snr_lines_open_meta_pack(meta_json, NULL, NULL, true) : NULL;
	if (!l || !snr_lines_have_lines(l)) {
		snr_lines_free(l);
		return 0;
	}
	struct snr_pc_code *pcs = snr_xmalloc(s->n * sizeof(*pcs));
	size_t n = 0;
	for (size_t i = 0; i < s->nslots; i++)
		if (s->slots[i].used)
			pcs[n++] = s->slots[i];
	snr_qsort(pcs, n, sizeof(*pcs), cmp_pc);
	struct strtab st = {0};
	struct snr_buf rows = {0};
	bool *files = NULL; /* the attributed files, by string index */
	size_t nfcap = 0;
	size_t nlines = 0;
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		const struct snr_place *p = snr_lines_find(l, pcs[i].pc);
		if (!p) /* no line (code without -g, a library without debug info): nothing to carry */
			continue;
		if (!pcs[i].len) /* not executed (the instruction before a return address): the ELF's bytes */
			pcs[i].len = (uint8_t)snr_lines_code(l, pcs[i].pc, pcs[i].code, sizeof(pcs[i].code));
		snr_buf_varint(&rows, pcs[i].pc - prev);
		prev = pcs[i].pc;
		snr_buf_u8(&rows, pcs[i].len);
		snr_buf_put(&rows, pcs[i].code, pcs[i].len);
		unsigned nf = p->nframes;
		snr_buf_varint(&rows, nf);
		for (unsigned k = 0; k < nf; k++) {
			snr_buf_varint(&rows, str_id(&st, p->frames[k].file));
			snr_buf_varint(&rows, p->frames[k].line);
			snr_buf_varint(&rows, str_id(&st, p->frames[k].function));
		}
		nlines++;
		if (p->file && !snr_lines_is_system_file(p->file)) {
			uint64_t id = str_id(&st, p->file);
			if (st.n > nfcap) {
				size_t cap = st.cap;
				files = snr_xrealloc(files, cap * sizeof(*files));
				memset(files + nfcap, 0, (cap - nfcap) * sizeof(*files));
				nfcap = cap;
			}
			files[id - 1] = true;
		}
	}
	free(pcs);
	if (!nlines) {
		snr_lines_free(l);
		free(rows.p);
		free(files);
		free(st.s);
		free(st.slot);
		return 0;
	}
	out->len = 0;
	snr_buf_varint(out, SNR_LINE_PACK_FORMAT);
	snr_buf_varint(out, st.n);
	for (size_t i = 0; i < st.n; i++) {
		size_t len = strlen(st.s[i]);
		len = len < MAX_STRING ? len : MAX_STRING - 1;
		snr_buf_varint(out, len);
		snr_buf_put(out, st.s[i], len);
	}
	snr_buf_varint(out, nlines);
	snr_buf_put(out, rows.p, rows.len);
	/* the texts, within the bounds */
	struct snr_buf texts = {0};
	size_t nfiles = 0, room = SNR_LINE_PACK_TEXT_MAX;
	for (size_t i = 0; i < st.n; i++) {
		if (i >= nfcap || !files[i])
			continue;
		size_t tn = 0;
		char *t = read_text(st.s[i], &tn, room);
		if (!t)
			continue;
		snr_buf_varint(&texts, i);
		snr_buf_varint(&texts, tn);
		snr_buf_put(&texts, t, tn);
		room -= tn;
		nfiles++;
		free(t);
	}
	snr_buf_varint(out, nfiles);
	snr_buf_put(out, texts.p, texts.len);
	free(texts.p);
	free(rows.p);
	free(files);
	free(st.s);
	free(st.slot);
	snr_lines_free(l);
	return 1;
}

/* ---- reading ---- */

static struct snr_line_pack *bad(struct snr_line_pack *k, char *err, size_t errlen, const char *fmt, ...)
	SNR_PRINTF(4, 5);
static struct snr_line_pack *bad(struct snr_line_pack *k, char *err, size_t errlen, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(err, errlen, fmt, ap);
	va_end(ap);
	snr_line_pack_free(k);
	return NULL;
}

struct snr_line_pack *snr_line_pack_parse(const uint8_t *p, size_t n, char *err, size_t errlen)
{
	struct snr_cursor c = {p, p + n, 0};
	struct snr_line_pack *k = snr_xcalloc(1, sizeof(*k));
	uint64_t format = snr_cur_varint(&c);
	if (c.bad || format != SNR_LINE_PACK_FORMAT)
		return bad(k, err, errlen, "lines format %llu; this snr reads format %d", (unsigned long long)format,
			   SNR_LINE_PACK_FORMAT);
	uint64_t ns = snr_cur_varint(&c);
	if (c.bad || ns > (uint64_t)(c.end - c.p))
		return bad(k, err, errlen, "%llu strings claimed in %zu bytes", (unsigned long long)ns,
			   (size_t)(c.end - c.p));
	k->str = snr_xcalloc(ns ? ns : 1, sizeof(*k->str));
	for (; k->nstr < ns; k->nstr++) {
		uint64_t len = snr_cur_varint(&c);
		const uint8_t *b = len < MAX_STRING ? snr_cur_bytes(&c, len) : NULL;
		if (c.bad || !b || memchr(b, 0, len))
			return bad(k, err, errlen, "string %zu is cut short or malformed", k->nstr);
		k->str[k->nstr] = snr_xmalloc(len + 1);
		memcpy(k->str[k->nstr], b, len);
		k->str[k->nstr][len] = 0;
	}
	uint64_t nr = snr_cur_varint(&c);
	if (c.bad || nr > (uint64_t)(c.end - c.p) / 3)
		return bad(k, err, errlen, "%llu rows claimed in %zu bytes", (unsigned long long)nr,
			   (size_t)(c.end - c.p));
	k->rows = snr_xcalloc(nr ? nr : 1, sizeof(*k->rows));
	k->cap = nr;
	uint64_t pc = 0;
	for (; k->nrows < nr; k->nrows++) {
		struct row *r = &k->rows[k->nrows];
		uint64_t d = snr_cur_varint(&c);
		if (k->nrows && (d == 0 || pc + d < pc))
			return bad(k, err, errlen, "row %zu: pcs not increasing", k->nrows);
		r->pc = pc += d;
		r->len = snr_cur_u8(&c);
		const uint8_t *code = r->len <= 16 ? snr_cur_bytes(&c, r->len) : NULL;
		uint64_t nf = snr_cur_varint(&c);
		if (c.bad || (r->len && !code) || r->len > 16 || nf > MAX_FRAMES)
			return bad(k, err, errlen, "row %zu (pc 0x%llx) is cut short or malformed", k->nrows,
				   (unsigned long long)r->pc);
		memcpy(r->code, code, r->len);
		if (!nf)
			continue;
		struct snr_place *pl = snr_xcalloc(1, sizeof(*pl) + nf * sizeof(struct snr_lines_frame));
		struct snr_lines_frame *fr = (struct snr_lines_frame *)(pl + 1);
		r->place = pl;
		pl->frames = fr;
		pl->nframes = (unsigned)nf;
		for (uint64_t i = 0; i < nf; i++) {
			uint64_t f = snr_cur_varint(&c), line = snr_cur_varint(&c), fn = snr_cur_varint(&c);
			if (c.bad || f > k->nstr || fn > k->nstr || line > UINT32_MAX)
				return bad(k, err, errlen, "row %zu (pc 0x%llx): frame %llu is malformed", k->nrows,
					   (unsigned long long)r->pc, (unsigned long long)i);
			fr[i] = (struct snr_lines_frame){f ? k->str[f - 1] : NULL, (unsigned)line,
							 fn ? k->str[fn - 1] : NULL};
		}
		/* the attribution rule of lib/snr_lines.c */
		unsigned at = 0;
		while (at < pl->nframes && snr_lines_is_system_file(fr[at].file))
			at++;
		if (at == pl->nframes)
			at = 0;
		pl->file = fr[at].file;
		pl->line = fr[at].line;
		pl->function = fr[at].function;
	}
	uint64_t nt = snr_cur_varint(&c);
	if (c.bad || nt > k->nstr)
		return bad(k, err, errlen, "%llu source files claimed, %zu names", (unsigned long long)nt, k->nstr);
	k->texts = snr_xcalloc(nt ? nt : 1, sizeof(*k->texts));
	for (; k->ntexts < nt; k->ntexts++) {
		uint64_t f = snr_cur_varint(&c), len = snr_cur_varint(&c);
		const uint8_t *b = f < k->nstr && len <= SNR_LINE_PACK_FILE_MAX ? snr_cur_bytes(&c, len) : NULL;
		if (c.bad || !b)
			return bad(k, err, errlen, "source file %zu is cut short or malformed", k->ntexts);
		struct text *t = &k->texts[k->ntexts];
		t->file = k->str[f];
		t->n = (size_t)len;
		t->p = snr_xmalloc(t->n + 1);
		memcpy(t->p, b, t->n);
		t->p[t->n] = 0;
	}
	if (c.p != c.end)
		return bad(k, err, errlen, "%zu bytes after the source files", (size_t)(c.end - c.p));
	return k;
}

void snr_line_pack_free(struct snr_line_pack *k)
{
	if (!k)
		return;
	for (size_t i = 0; i < k->nrows; i++)
		free(k->rows[i].place);
	if (k->nrows < k->cap) /* the row being parsed when it failed */
		free(k->rows[k->nrows].place);
	free(k->rows);
	for (size_t i = 0; i < k->ntexts; i++)
		free(k->texts[i].p);
	free(k->texts);
	for (size_t i = 0; i < k->nstr; i++)
		free(k->str[i]);
	free(k->str);
	free(k);
}

static const struct row *row_of(const struct snr_line_pack *k, uint64_t pc)
{
	size_t lo = 0, hi = k ? k->nrows : 0;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (k->rows[mid].pc < pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < (k ? k->nrows : 0) && k->rows[lo].pc == pc ? &k->rows[lo] : NULL;
}

const struct snr_place *snr_line_pack_find(const struct snr_line_pack *k, uint64_t pc)
{
	const struct row *r = row_of(k, pc);
	return r ? r->place : NULL;
}

size_t snr_line_pack_code(const struct snr_line_pack *k, uint64_t pc, uint8_t *buf, size_t len)
{
	const struct row *r = row_of(k, pc);
	size_t n = r ? r->len : 0;
	n = n < len ? n : len;
	if (n)
		memcpy(buf, r->code, n);
	return n;
}

struct snr_lines *snr_lines_open_trace(const struct snr_trace *t, const char *near_path)
{
	size_t n;
	const uint8_t *p = snr_trace_lines(t, &n);
	char err[300];
	struct snr_line_pack *k = p ? snr_line_pack_parse(p, n, err, sizeof(err)) : NULL;
	return snr_lines_open_meta_pack(snr_trace_meta_json(t), near_path, k, false);
}

size_t snr_line_pack_rows(const struct snr_line_pack *k) { return k ? k->nrows : 0; }
size_t snr_line_pack_files(const struct snr_line_pack *k) { return k ? k->ntexts : 0; }

/* ---- the carried source texts ---- */

static struct text *published;
static size_t npublished;

void snr_line_pack_publish(const struct snr_line_pack *k)
{
	for (size_t i = 0; k && i < k->ntexts; i++) {
		const struct text *t = &k->texts[i];
		bool have = false;
		for (size_t j = 0; j < npublished && !have; j++)
			have = !strcmp(published[j].file, t->file) && published[j].n == t->n &&
			       !memcmp(published[j].p, t->p, t->n);
		if (have)
			continue;
		published = snr_xrealloc(published, (npublished + 1) * sizeof(*published));
		struct text *c = &published[npublished++];
		c->file = snr_xstrdup(t->file);
		c->n = t->n;
		c->p = snr_xmalloc(t->n + 1);
		memcpy(c->p, t->p, t->n + 1);
	}
}

static void note_once(const char *file, const char *why)
{
	static char **said;
	static size_t nsaid;
	for (size_t i = 0; i < nsaid; i++)
		if (!strcmp(said[i], file))
			return;
	said = snr_xrealloc(said, (nsaid + 1) * sizeof(*said));
	said[nsaid++] = snr_xstrdup(file);
	fprintf(stderr, "snr: note: %s %s: its text as recorded is shown (carried in the trace)\n", file, why);
}

FILE *snr_line_pack_fopen(const char *file)
{
	const struct text *first = NULL;
	for (size_t i = 0; i < npublished && !first; i++)
		if (!strcmp(published[i].file, file))
			first = &published[i];
	FILE *d = fopen(file, "r");
	if (!first)
		return d;
	if (d) {
		struct stat st;
		bool same = false;
		if (!fstat(fileno(d), &st) && S_ISREG(st.st_mode) && (uint64_t)st.st_size <= SNR_LINE_PACK_FILE_MAX) {
			char *b = snr_xmalloc((size_t)st.st_size + 1);
			size_t got = fread(b, 1, (size_t)st.st_size, d);
			for (size_t i = 0; i < npublished && !same; i++)
				same = !strcmp(published[i].file, file) && published[i].n == got &&
				       !memcmp(published[i].p, b, got);
			free(b);
		}
		if (same) {
			rewind(d);
			return d;
		}
		fclose(d);
	}
	note_once(file, d ? "changed since the recording" : "is gone");
	if (!first->n)
		return NULL;
	return fmemopen(first->p, first->n, "r");
}
