/*
 * linematch.c: an_annot_pair_lines (annotate.h), two windows' lines paired
 * across an edit of the program. Within each function (by name) the lines
 * of each side in source order are compared by their statement's text,
 * whitespace-normalized: a longest common subsequence (the table of its
 * lengths, as diff does) pairs equal statements in order; the lines left
 * between two paired ones on both sides (a hunk: statements edited in
 * place) are paired by their order in the hunk, the rest are only before
 * or only after. A function whose source a side cannot read is paired by
 * file:line, as is one too long for the table (more than 4M cells); code
 * without a line table by function. Each file is read once per side.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/annotate.h"
#include "lib/snr_util.h"

#define LCS_MAX_CELLS (4u << 20)

struct srcfile {
	const char *file;
	char **lines; /* NULL: not found */
	size_t n;
};

struct srccache {
	struct srcfile *f;
	size_t n;
	const char *dir;
};

/* The whitespace-normalized text of file:line, NULL if not known (a
 * string of the cache's). */
static const char *statement(struct srccache *c, const char *file, unsigned line)
{
	size_t i = 0;
	while (i < c->n && strcmp(c->f[i].file, file))
		i++;
	if (i == c->n) {
		c->f = snr_xrealloc(c->f, (c->n + 1) * sizeof(*c->f));
		struct srcfile *f = &c->f[c->n++];
		f->file = file;
		f->lines = an_annot_read_source(file, c->dir, &f->n);
		for (size_t k = 0; k < f->n; k++) { /* collapse blanks, trim */
			char *s = f->lines[k], *d = s;
			for (const char *p = s; *p; p++) {
				if (*p == ' ' || *p == '\t' || *p == '\r') {
					if (d > s && d[-1] != ' ')
						*d++ = ' ';
				} else {
					*d++ = *p;
				}
			}
			if (d > s && d[-1] == ' ')
				d--;
			*d = 0;
		}
	}
	const struct srcfile *f = &c->f[i];
	return f->lines && line >= 1 && line <= f->n ? f->lines[line - 1] : NULL;
}

static void cache_free(struct srccache *c)
{
	for (size_t i = 0; i < c->n; i++) {
		for (size_t k = 0; k < c->f[i].n; k++)
			free(c->f[i].lines[k]);
		free(c->f[i].lines);
	}
	free(c->f);
}

/* one side's lines of a function, in source order */
struct side {
	const struct an_annot_row **r;
	const char **text;
	size_t n;
	bool texts; /* every line's text is known */
};

static int cmp_row_order(const void *pa, const void *pb)
{
	const struct an_annot_row *x = *(const struct an_annot_row *const *)pa, *y = *(const struct an_annot_row *const *)pb;
	int c = strcmp(x->file, y->file);
	return c ? c : x->line < y->line ? -1 : x->line > y->line;
}

/* the lines of `a` with a line table in function fn, sorted, with texts */
static void side_of(const struct an_annot *a, const char *fn, struct srccache *c, struct side *s)
{
	s->r = snr_xcalloc(a->nlines + 1, sizeof(*s->r));
	s->n = 0;
	for (size_t i = 0; i < a->nlines; i++)
		if (a->lines[i].file && !strcmp(a->lines[i].function, fn))
			s->r[s->n++] = &a->lines[i];
	if (s->n)
		snr_qsort(s->r, s->n, sizeof(*s->r), cmp_row_order);
	s->text = snr_xcalloc(s->n + 1, sizeof(*s->text));
	s->texts = true;
	for (size_t i = 0; i < s->n; i++)
		s->texts &= (s->text[i] = statement(c, s->r[i]->file, s->r[i]->line)) != NULL;
}

struct out {
	struct an_annot_pair *p;
	size_t n;
};

static void emit(struct out *o, const struct an_annot_row *x, const struct an_annot_row *y)
{
	o->p[o->n++] = (struct an_annot_pair){x, y, 0};
}

/* x's [i0, i1) and y's [j0, j1), no equal statements paired between them:
 * by order, the longer side's rest alone */
static void hunk(struct out *o, const struct side *x, size_t i0, size_t i1, const struct side *y, size_t j0, size_t j1)
{
	while (i0 < i1 || j0 < j1)
		emit(o, i0 < i1 ? x->r[i0++] : NULL, j0 < j1 ? y->r[j0++] : NULL);
}

static void pair_function(struct out *o, const struct side *x, const struct side *y)
{
	size_t n = x->n, m = y->n;
	if (!x->texts || !y->texts || (uint64_t)(n + 1) * (m + 1) > LCS_MAX_CELLS) { /* by file:line */
		bool *used = snr_xcalloc(m + 1, sizeof(*used));
		for (size_t i = 0; i < n; i++) {
			size_t j = 0;
			while (j < m && (used[j] || x->r[i]->line != y->r[j]->line || strcmp(x->r[i]->file, y->r[j]->file)))
				j++;
			if (j < m)
				used[j] = true;
			emit(o, x->r[i], j < m ? y->r[j] : NULL);
		}
		for (size_t j = 0; j < m; j++)
			if (!used[j])
				emit(o, NULL, y->r[j]);
		free(used);
		return;
	}
	/* L[i][j]: the LCS length of x[i..] and y[j..] */
	uint32_t *L = snr_xcalloc((n + 1) * (m + 1), sizeof(*L));
#define AT(i, j) L[(i) * (m + 1) + (j)]
	for (size_t i = n; i-- > 0;)
		for (size_t j = m; j-- > 0;)
			AT(i, j) = !strcmp(x->text[i], y->text[j]) ? AT(i + 1, j + 1) + 1
				   : AT(i + 1, j) >= AT(i, j + 1) ? AT(i + 1, j)
								  : AT(i, j + 1);
	size_t i = 0, j = 0, hi = 0, hj = 0; /* the hunk since the last pair */
	while (i < n && j < m) {
		if (!strcmp(x->text[i], y->text[j]) && AT(i, j) == AT(i + 1, j + 1) + 1) {
			hunk(o, x, hi, i, y, hj, j);
			emit(o, x->r[i++], y->r[j++]);
			hi = i, hj = j;
		} else if (AT(i + 1, j) >= AT(i, j + 1)) {
			i++;
		} else {
			j++;
		}
	}
	hunk(o, x, hi, n, y, hj, m);
#undef AT
	free(L);
}

static int cmp_pair(const void *pa, const void *pb)
{
	const struct an_annot_pair *x = pa, *y = pb;
	int64_t ax = x->delta < 0 ? -x->delta : x->delta, ay = y->delta < 0 ? -y->delta : y->delta;
	return ax > ay ? -1 : ax < ay;
}

struct an_annot_pair *an_annot_pair_lines(const struct an_annot *a, const struct an_annot *b, const char *source_dir,
					  size_t *n)
{
	struct out o = {snr_xcalloc(a->nlines + b->nlines + 1, sizeof(*o.p)), 0};
	struct srccache ca = {.dir = source_dir}, cb = {.dir = source_dir};
	bool *done_a = snr_xcalloc(a->nlines + 1, sizeof(bool)), *done_b = snr_xcalloc(b->nlines + 1, sizeof(bool));
	/* quadratic in lines: a window's distinct lines are a few hundred */
	for (size_t i = 0; i < a->nlines; i++) {
		const struct an_annot_row *r = &a->lines[i];
		if (done_a[i])
			continue;
		if (!r->file) { /* no line table: by function */
			done_a[i] = true;
			size_t j = 0;
			while (j < b->nlines && (done_b[j] || b->lines[j].file || strcmp(b->lines[j].function, r->function)))
				j++;
			if (j < b->nlines)
				done_b[j] = true;
			emit(&o, r, j < b->nlines ? &b->lines[j] : NULL);
			continue;
		}
		struct side x, y;
		side_of(a, r->function, &ca, &x);
		side_of(b, r->function, &cb, &y);
		for (size_t k = 0; k < a->nlines; k++)
			if (a->lines[k].file && !strcmp(a->lines[k].function, r->function))
				done_a[k] = true;
		for (size_t k = 0; k < b->nlines; k++)
			if (b->lines[k].file && !strcmp(b->lines[k].function, r->function))
				done_b[k] = true;
		pair_function(&o, &x, &y);
		free(x.r);
		free(x.text);
		free(y.r);
		free(y.text);
	}
	for (size_t j = 0; j < b->nlines; j++)
		if (!done_b[j])
			emit(&o, NULL, &b->lines[j]);
	for (size_t i = 0; i < o.n; i++)
		o.p[i].delta = (int64_t)(o.p[i].after ? o.p[i].after->cycles : 0) -
			       (int64_t)(o.p[i].before ? o.p[i].before->cycles : 0);
	if (o.n)
		snr_qsort(o.p, o.n, sizeof(*o.p), cmp_pair);
	free(done_a);
	free(done_b);
	cache_free(&ca);
	cache_free(&cb);
	*n = o.n;
	return o.p;
}
