/*
 * report.c: `snr report T.snrt|M.snrm -o report.html`, one self-contained
 * HTML file: a summary (every stall cause as the replay summed it), the DMA
 * timeline colored as the paper's Figure 4 (base-latency stall, transfer
 * stall, slack) with each DMA's dependency backtail (`snr analyze deps`),
 * every unit's and DMA link's busy intervals as a lane timeline, VMEM
 * occupancy against the largest contiguous free region and the
 * fragmentation heatmap (Figure 8) over the pages the window touched, and
 * the suggestions of Algorithm 2 with their what-if results, and a source
 * page from annotate.h (hottest lines; each function's source with cycles
 * and stall causes per line beside its instructions), with --compare the
 * same per line for a second window. One replay feeds the dependency
 * graph, the analyses' collection (deps.c runs collect.c's callbacks) and
 * annotate's accumulator.
 *
 * Memory: the graph's (deps.c: the instructions, edges, pcs and memory
 * events in temporary files, fixed budgets in memory) until the suggestions'
 * text is written, then freed; annotate's accumulator (annotate.c: its
 * instructions and stalls in temporary files); suggest's document goes to
 * an unlinked temporary file and is read back through a window of it; the
 * tables' rows (every DMA, every stalled DMA no move covers) go a column
 * at a time to temporary files as they are made (struct coltab) and the
 * packed elements are compressed as they are written (struct zsink: only
 * the compressed bytes are held); what stays is a 16-byte scratch per busy
 * interval of one lane for the lanes and the VMEM and util samples (fixed
 * counts). 462 MiB peak on the 10M-instruction serving window before
 * annotate's accumulator, the document and the tables left memory
 * (bench/analyses_scale.sh; docs/analyses.md has the figures), 976 before
 * the graph and collection spilled.
 *
 * The charts are Apache ECharts (third_party/echarts, Apache-2.0, the
 * project's own license), vendored minified and compiled into the binary
 * with the report's script (analyzer/report.js) by analyzer/embed.py: the
 * file loads nothing from the network and the build fetches nothing.
 * ECharts was chosen over smaller libraries (uPlot) because one library
 * gives every chart here: lines with marks, heatmap, and custom series for
 * the Gantt-like DMA timeline, without hand-drawing on a canvas.
 */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "analyzer/analyses.h"
#include "analyzer/annotate.h"
#include "analyzer/suggest_words.h"
#include "analyzer/deps.h"
#include "analyzer/report_host.h"
#include "analyzer/report_side.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_outfile.h"
#include "lib/snr_output.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"

extern const char snr_echarts_js[], snr_report_js[];
extern const unsigned long snr_echarts_js_len, snr_report_js_len;

void html_text(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else
			fputc(*s, f);
	}
}

/* JSON inside <script>: "</script" would end the element and "<!--" change
 * how it is parsed, so every '<' (only ever inside a JSON string) is
 * written as its escape; the page's text (source lines among it) is set
 * with textContent, never as markup */
void script_json(FILE *f, const char *s)
{
	for (; *s; s++) {
		if (*s == '<')
			fputs("\\u003c", f);
		else
			fputc(*s, f);
	}
}

/* ---- the compact form -------------------------------------------------
 * What a window of millions of instructions has too much of to draw at load
 * (every DMA, every stalled DMA's reason, every busy interval) is embedded
 * gzip-compressed (zlib: the format the browser's DecompressionStream
 * reads) and base64-encoded as the body of
 * <script type="application/x-snr-packed" id="z-NAME">, which the browser
 * does not run; report.js decodes one when a page or a zoom first needs it.
 * The page at load draws from small uncompressed views (the first rows of
 * each table, the busy intervals merged to the chart's pixels). */

static void base64_write(FILE *f, const unsigned char *p, size_t n)
{
	static const char A[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	for (size_t i = 0; i < n; i += 3) {
		uint32_t v = (uint32_t)p[i] << 16 | (i + 1 < n ? (uint32_t)p[i + 1] << 8 : 0) | (i + 2 < n ? p[i + 2] : 0);
		char q[4] = {A[v >> 18 & 63], A[v >> 12 & 63], i + 1 < n ? A[v >> 6 & 63] : '=', i + 2 < n ? A[v & 63] : '='};
		fwrite(q, 1, 4, f);
	}
}

/* Where packed data goes: into the page while inline_left (bytes of
 * base64) lasts, then each packed element to its own file beside the page,
 * PAGE.d/ID.js (a script setting window.SNR_PACKED[ID], which a page opened
 * from file:// may load; fetch may not), so that the page stays under
 * 10 MB however long the window. */
struct packer {
	const char *page_path;
	size_t inline_left;
	int side_files;
	struct an_side_files written; /* kept when the page is committed; the rest of PAGE.d pruned */
};

/* the packed bytes out[0, n) of id into PAGE.d/ID.js; the page's element
 * names the file relative to the page. 0, or 1 with err filled. */
static int side_write(FILE *f, struct packer *pk, const char *id, const unsigned char *out, size_t n, char *err,
		      size_t errlen)
{
	char dir[4200], path[4400];
	snprintf(dir, sizeof(dir), "%s.d", pk->page_path);
	if (mkdir(dir, 0777) && errno != EEXIST) {
		snr_fmt(err, errlen, "cannot create %s for the window's full data: %s", dir, strerror(errno));
		return 1;
	}
	snprintf(path, sizeof(path), "%s/%s.js", dir, id);
	struct snr_outfile of;
	char oerr[600];
	FILE *s = snr_outfile_fopen_part(&of, path, oerr, sizeof(oerr)); /* the page's own: --force was for it */
	if (!s) {
		snprintf(err, errlen, "%s", oerr);
		return 1;
	}
	fprintf(s, "window.SNR_PACKED = window.SNR_PACKED || {};\nwindow.SNR_PACKED[\"%s\"] = \"", id);
	base64_write(s, out, n);
	fputs("\";\n", s);
	if (snr_outfile_close(&of, true, oerr, sizeof(oerr))) {
		snprintf(err, errlen, "%s", oerr);
		return 1;
	}
	const char *base = strrchr(pk->page_path, '/');
	fprintf(f, "<script type=\"application/x-snr-packed\" id=\"z-%s\" data-src=\"", id);
	html_text(f, base ? base + 1 : pk->page_path);
	fprintf(f, ".d/%s.js\"></script>\n", id);
	pk->side_files++;
	an_side_files_add(&pk->written, id);
	return 0;
}

/* A packed element as it is produced: a FILE (fopencookie) whose writes
 * go through deflate (gzip wrapper, level 6) into a buffer of the
 * compressed bytes, so that the element's text is never held whole, only
 * its compressed form (about a tenth). zsink_emit then writes it into the
 * page or beside it. */
struct zsink {
	z_stream z;
	bool started, failed;
	unsigned char *out;
	size_t n, cap;
};

static bool zsink_step(struct zsink *zs, int flush)
{
	int zrc;
	do {
		if (zs->cap - zs->n < 65536) {
			zs->cap = zs->cap ? 2 * zs->cap : 262144;
			zs->out = snr_xrealloc(zs->out, zs->cap);
		}
		zs->z.next_out = zs->out + zs->n;
		zs->z.avail_out = (uInt)(zs->cap - zs->n);
		zrc = deflate(&zs->z, flush);
		zs->n = zs->cap - zs->z.avail_out;
		if (zrc != Z_OK && zrc != Z_STREAM_END && zrc != Z_BUF_ERROR)
			return false;
	} while (flush == Z_FINISH ? zrc != Z_STREAM_END : zs->z.avail_in > 0);
	return true;
}

static ssize_t zsink_cookie_write(void *u, const char *buf, size_t len)
{
	struct zsink *zs = u;
	if (zs->failed)
		return -1;
	zs->z.next_in = (unsigned char *)buf;
	zs->z.avail_in = (uInt)len;
	if (!zsink_step(zs, Z_NO_FLUSH)) {
		zs->failed = true;
		return -1;
	}
	return (ssize_t)len;
}

/* A FILE writing into zs; NULL with err filled. */
static FILE *zsink_open(struct zsink *zs, const char *id, char *err, size_t errlen)
{
	memset(zs, 0, sizeof(*zs));
	/* windowBits 15 + 16: a gzip wrapper */
	if (deflateInit2(&zs->z, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
		snprintf(err, errlen, "zlib: cannot start compressing %s", id);
		return NULL;
	}
	zs->started = true;
	FILE *f = fopencookie(zs, "w", (cookie_io_functions_t){.write = zsink_cookie_write});
	if (!f) {
		deflateEnd(&zs->z);
		zs->started = false;
		snprintf(err, errlen, "no memory to compress %s", id);
	}
	return f;
}

static void zsink_free(struct zsink *zs)
{
	if (zs->started)
		deflateEnd(&zs->z);
	free(zs->out);
	memset(zs, 0, sizeof(*zs));
}

/* Closes zf (zsink_open's on zs) and writes the compressed bytes as the
 * packed element id, into the page while pk->inline_left lasts, else beside
 * it; the compressed size in *packed. 0, or 1 with err filled. */
static int zsink_emit(FILE *f, struct packer *pk, const char *id, struct zsink *zs, FILE *zf, size_t *packed,
		      char *err, size_t errlen)
{
	bool ok = fclose(zf) == 0 && !zs->failed;
	zs->z.next_in = NULL;
	zs->z.avail_in = 0;
	if (!ok || !zsink_step(zs, Z_FINISH)) {
		snprintf(err, errlen, "zlib: compressing %s (%lu bytes) failed", id, (unsigned long)zs->z.total_in);
		zsink_free(zs);
		return 1;
	}
	size_t n = zs->n;
	*packed = n;
	size_t b64 = (n + 2) / 3 * 4;
	int rc = 0;
	if (b64 > pk->inline_left) {
		rc = side_write(f, pk, id, zs->out, n, err, errlen);
	} else {
		pk->inline_left -= b64;
		fprintf(f, "<script type=\"application/x-snr-packed\" id=\"z-%s\">", id);
		base64_write(f, zs->out, n);
		fputs("</script>\n", f);
	}
	zsink_free(zs);
	return rc;
}

/* A member of o by a dotted path ("issue.cycle"); NULL when absent */
static json_t *json_path(json_t *o, const char *path)
{
	char key[64];
	while (o && *path) {
		size_t k = strcspn(path, ".");
		if (k >= sizeof(key))
			return NULL;
		memcpy(key, path, k);
		key[k] = 0;
		o = json_is_object(o) ? json_object_get(o, key) : NULL;
		path += k + (path[k] == '.');
	}
	return o;
}

/* A column of a table: the member at path of each row; a text column is
 * written as indices into its dictionary of distinct strings. */
struct col {
	const char *name, *path;
	bool text;
};

/* A row with only the members the columns read (at their paths) */
static json_t *columns_only(json_t *o, const struct col *cols, size_t ncols)
{
	json_t *row = json_object();
	for (size_t c = 0; c < ncols; c++) {
		json_t *v = json_path(o, cols[c].path);
		if (!v)
			continue;
		json_t *at = row;
		char key[64];
		for (const char *p = cols[c].path;;) {
			size_t k = strcspn(p, ".");
			snprintf(key, sizeof(key), "%.*s", (int)k, p);
			if (!p[k]) {
				json_object_set(at, key, v);
				break;
			}
			json_t *next = json_object_get(at, key);
			if (!next) {
				next = json_object();
				json_object_set_new(at, key, next);
			}
			at = next;
			p += k + 1;
		}
	}
	return row;
}

/* One value of a column: a text column's string as its index in dict
 * (distinct strings in order of first use), null where absent, booleans as
 * 1 and 0. */
static void col_value_write(FILE *f, json_t *v, json_t *dict, json_t *order)
{
	if (dict && json_is_string(v)) {
		json_t *k = json_object_get(dict, json_string_value(v));
		if (!k) {
			k = json_integer((json_int_t)json_array_size(order));
			json_object_set_new(dict, json_string_value(v), k);
			json_array_append(order, v);
		}
		fprintf(f, "%lld", (long long)json_integer_value(k));
	} else if (json_is_integer(v))
		fprintf(f, "%lld", (long long)json_integer_value(v));
	else if (json_is_boolean(v))
		fputc(json_is_true(v) ? '1' : '0', f);
	else if (json_is_real(v))
		fprintf(f, "%.17g", json_real_value(v));
	else if (json_is_string(v)) {
		char *t = json_dumps(v, JSON_ENCODE_ANY);
		fputs(t, f);
		free(t);
	} else
		fputs("null", f);
}

/* rows[from, to) of an array of objects as columns:
 * {"n":N,"cols":{NAME:[value...]...},"dicts":{NAME:[string...]...}}
 * (col_value_write's values) */
static void columns_write(FILE *f, json_t *rows, size_t from, size_t to, const struct col *cols, size_t ncols)
{
	fprintf(f, "{\"n\":%zu,\"cols\":{", to - from);
	json_t *dicts = json_object();
	for (size_t c = 0; c < ncols; c++) {
		json_t *dict = cols[c].text ? json_object() : NULL, *order = cols[c].text ? json_array() : NULL;
		fprintf(f, "%s\"%s\":[", c ? "," : "", cols[c].name);
		for (size_t i = from; i < to; i++) {
			if (i > from)
				fputc(',', f);
			col_value_write(f, json_path(json_array_get(rows, i), cols[c].path), dict, order);
		}
		fputc(']', f);
		if (order)
			json_object_set_new(dicts, cols[c].name, order);
		json_decref(dict);
	}
	fputs("},\"dicts\":", f);
	char *t = json_dumps(dicts, JSON_COMPACT);
	script_json(f, t);
	free(t);
	fputc('}', f);
	json_decref(dicts);
}

/* A table built a row at a time without holding its rows: the first `page`
 * rows (the view at load) as objects, and every row's value of each column
 * appended to that column's unlinked temporary file (the text
 * col_value_write gives; the page cache's, not the process's memory), with
 * the text columns' dictionaries (distinct strings only) in memory.
 * coltab_write writes the same as columns_write over all the rows. */
struct coltab {
	const struct col *cols;
	size_t ncols, page, n;
	json_t *page_rows;
	FILE **colf;
	json_t **dict, **order;
	char err[600];
};

/* 0, or 1 with t->err filled (no temporary file) */
static int coltab_init(struct coltab *t, const struct col *cols, size_t ncols, size_t page, const char *what)
{
	memset(t, 0, sizeof(*t));
	t->cols = cols;
	t->ncols = ncols;
	t->page = page;
	t->page_rows = json_array();
	t->colf = snr_xcalloc(ncols, sizeof(*t->colf));
	t->dict = snr_xcalloc(ncols, sizeof(*t->dict));
	t->order = snr_xcalloc(ncols, sizeof(*t->order));
	for (size_t c = 0; c < ncols; c++) {
		int fd = snr_tmpfile_fd(what, t->err, sizeof(t->err));
		if (fd < 0)
			return 1;
		t->colf[c] = fdopen(fd, "w+");
		if (!t->colf[c]) {
			close(fd);
			snr_fmt(t->err, sizeof(t->err), "cannot open the %s's temporary file: %s", what, strerror(errno));
			return 1;
		}
		if (cols[c].text) {
			t->dict[c] = json_object();
			t->order[c] = json_array();
		}
	}
	return 0;
}

/* Adds row (a reference taken: kept while within the page) */
static void coltab_add(struct coltab *t, json_t *row)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (t->n)
			fputc(',', t->colf[c]);
		col_value_write(t->colf[c], json_path(row, t->cols[c].path), t->dict[c], t->order[c]);
	}
	t->n++;
	if (json_array_size(t->page_rows) < t->page)
		json_array_append_new(t->page_rows, row);
	else
		json_decref(row);
}

static void coltab_free(struct coltab *t)
{
	for (size_t c = 0; c < t->ncols; c++) {
		if (t->colf && t->colf[c])
			fclose(t->colf[c]);
		if (t->dict)
			json_decref(t->dict[c]);
		if (t->order)
			json_decref(t->order[c]);
	}
	free(t->colf);
	free(t->dict);
	free(t->order);
	json_decref(t->page_rows);
	memset(t, 0, sizeof(*t));
}

/* Every row of t as columns_write writes them, into out. 0, or 1 with
 * t->err filled (the temporary files could not be read back). */
static int coltab_copy(struct coltab *t, FILE *out)
{
	fprintf(out, "{\"n\":%zu,\"cols\":{", t->n);
	json_t *dicts = json_object();
	char buf[65536];
	for (size_t c = 0; c < t->ncols; c++) {
		fprintf(out, "%s\"%s\":[", c ? "," : "", t->cols[c].name);
		FILE *cf = t->colf[c];
		if (fflush(cf) || fseek(cf, 0, SEEK_SET)) {
			snr_fmt(t->err, sizeof(t->err), "cannot read back a table's temporary file: %s", strerror(errno));
			json_decref(dicts);
			return 1;
		}
		for (size_t k; (k = fread(buf, 1, sizeof(buf), cf));)
			fwrite(buf, 1, k, out);
		if (ferror(cf)) {
			snr_fmt(t->err, sizeof(t->err), "cannot read back a table's temporary file");
			json_decref(dicts);
			return 1;
		}
		fputc(']', out);
		if (t->order[c])
			json_object_set(dicts, t->cols[c].name, t->order[c]);
	}
	fputs("},\"dicts\":", out);
	char *s = json_dumps(dicts, JSON_COMPACT);
	script_json(out, s);
	free(s);
	fputc('}', out);
	json_decref(dicts);
	return 0;
}

/* A table for the page: the first `page` rows uncompressed
 * (window.SNR_TABLES[id] = {"n": all rows, "page": columns}) and every row
 * packed as z-ID. 0, or 1 with err filled. */
static int table_write(FILE *f, struct packer *pk, const char *id, struct coltab *t, char *err, size_t errlen)
{
	size_t np = json_array_size(t->page_rows), packed = 0;
	fprintf(f, "<script>window.SNR_TABLES = window.SNR_TABLES || {}; window.SNR_TABLES[\"%s\"] = {\"n\":%zu,\"page\":",
		id, t->n);
	columns_write(f, t->page_rows, 0, np, t->cols, t->ncols);
	fputs("};</script>\n", f);
	struct zsink zs;
	FILE *zf = zsink_open(&zs, id, err, errlen);
	if (!zf)
		return 1;
	if (coltab_copy(t, zf)) {
		fclose(zf);
		zsink_free(&zs);
		snprintf(err, errlen, "%s", t->err);
		return 1;
	}
	return zsink_emit(f, pk, id, &zs, zf, &packed, err, errlen);
}

/* A row's place for the page: "file:line" of the pc's source, else its
 * symbol, else the pc in hex; o is {"pc", "symbol", "source"} */
static json_t *place_json(json_t *o)
{
	json_t *src = json_object_get(o, "source");
	const char *file = json_string_value(json_object_get(src, "file"));
	if (file) {
		const char *b = strrchr(file, '/');
		return json_sprintf("%s:%lld", b ? b + 1 : file, (long long)json_integer_value(json_object_get(src, "line")));
	}
	const char *sym = json_string_value(json_object_get(o, "symbol"));
	if (sym)
		return json_string(sym);
	return json_sprintf("0x%llx", (unsigned long long)json_integer_value(json_object_get(o, "pc")));
}

static int cmp_interval(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	return x[0] != y[0] ? (x[0] < y[0] ? -1 : 1) : (x[1] < y[1] ? -1 : x[1] > y[1]);
}

/* The lane chart's width in pixels (report.js LANE_W) */
#define LANE_PIXELS 1000

/* One lane's busy intervals, given in order of their starts, clamped to the
 * window and merged where they touch or overlap, each merged one written as
 * it closes: to the packed lanes (the gap from the previous one's end and
 * its length) and to the chart at load, whose spans are what report.js's
 * view() draws at that zoom (an interval joins the span before it when the
 * gap and the span stay within one and two pixels' worth of cycles), each
 * [lane, start, end, busy cycles, intervals]. Holds one interval and one
 * span: a lane costs no memory per interval. */
struct lane {
	FILE *f, *p;
	int l;
	uint64_t cycles;
	double q;          /* cycles per pixel, at least 1 */
	bool *first;       /* no span written yet (of any lane) */
	bool have;         /* [a, b): the merged interval still open */
	uint64_t a, b;
	size_t n;          /* merged intervals written */
	uint64_t prev_end, busy;
	bool span;         /* the span still open */
	uint64_t s, e, sbusy, count;
};

static void lane_open(struct lane *ln, FILE *f, FILE *p, int l, uint64_t cycles, bool *first)
{
	double q = (double)cycles / LANE_PIXELS;
	*ln = (struct lane){.f = f, .p = p, .l = l, .cycles = cycles, .q = q < 1 ? 1 : q, .first = first};
	fputs(l ? ",[" : "[", p);
}

static void lane_span_close(struct lane *ln)
{
	fprintf(ln->f, "%s%d,%llu,%llu,%llu,%llu", *ln->first ? "" : ",", ln->l, (unsigned long long)ln->s,
		(unsigned long long)ln->e, (unsigned long long)ln->sbusy, (unsigned long long)ln->count);
	*ln->first = false;
}

static void lane_emit(struct lane *ln, uint64_t a, uint64_t b)
{
	fprintf(ln->p, "%s%llu,%llu", ln->n++ ? "," : "", (unsigned long long)(a - ln->prev_end),
		(unsigned long long)(b - a));
	ln->busy += b - a;
	ln->prev_end = b;
	if (ln->span && (double)(a - ln->e) < ln->q && (double)(b - ln->s) < 2 * ln->q) {
		ln->sbusy += b - a;
		ln->e = b;
		ln->count++;
		return;
	}
	if (ln->span)
		lane_span_close(ln);
	ln->span = true;
	ln->s = a;
	ln->e = b;
	ln->sbusy = b - a;
	ln->count = 1;
}

/* The next interval; its start at or after the previous one's. */
static void lane_add(struct lane *ln, uint64_t a, uint64_t b)
{
	b = b < ln->cycles ? b : ln->cycles;
	if (b <= a)
		return;
	if (ln->have && a <= ln->b) {
		ln->b = b > ln->b ? b : ln->b;
		return;
	}
	if (ln->have)
		lane_emit(ln, ln->a, ln->b);
	ln->have = true;
	ln->a = a;
	ln->b = b;
}

/* Closes the lane; returns its merged intervals. */
static size_t lane_close(struct lane *ln)
{
	if (ln->have)
		lane_emit(ln, ln->a, ln->b);
	if (ln->span)
		lane_span_close(ln);
	fputc(']', ln->p);
	return ln->n;
}

/* The lane of busy interval b (the units' lanes come first) */
static int busy_lane(bool ta1, const struct an_busy *b)
{
	return !ta1 ? (b->unit == AN_UNIT_MEMORY ? AN_UTIL_HOST_MEMORY : AN_UTIL_HOST_SCALAR)
	       : b->unit < SNR_UNIT_COUNT ? b->unit
					  : SNR_UNIT_DMA;
}

/* DMA m's interval on the link lanes: active to complete */
static bool dma_on_link(const struct an_dma *m, int link)
{
	return m->id && m->link == link && m->active != AN_NONE && m->complete != AN_NONE;
}

/* window.SNR_LANES: {"units": [name...], "cycles": N, "intervals": I,
 * "busy_cycles": [N...], "first": [lane, start, end, busy, count, ...]}:
 * every unit's busy intervals as the tracker reported them (for host code,
 * the ones collect.c derived), and every DMA link's (a transfer active to
 * its completion), the same intervals `snr analyze util` averages per
 * window. "first" is the chart at load (struct lane); the intervals
 * themselves, per lane the gap from the previous interval's end (0 first)
 * and the length of each, are packed as z-lanes (a 10M-instruction window
 * has about a million). A lane whose intervals come in order of their starts
 * (the timing model's units are in order, a link's transfers one after
 * another) is merged as it is read; only a lane that does not is held and
 * sorted first. 0, or 1 with err filled. */
static int lanes_write(FILE *f, struct packer *pk, const struct an_data *d, const struct an_util *u, char *err,
		       size_t errlen)
{
	bool ta1 = d->ta1 > 0;
	int nunits = ta1 ? SNR_UNIT_COUNT : AN_UTIL_HOST_COLS, nlanes = nunits + (ta1 ? d->nlinks : 0);
	uint64_t cycles = d->cycles;
	uint64_t nbusy = d->busy->n;
	uint64_t *busy = snr_xcalloc((size_t)nlanes, sizeof(*busy));
	/* per lane: how many intervals, and whether their starts never go back */
	size_t *count = snr_xcalloc((size_t)nlanes, sizeof(*count));
	bool *unsorted = snr_xcalloc((size_t)nlanes, sizeof(*unsorted));
	uint64_t *last = snr_xcalloc((size_t)nlanes, sizeof(*last));
	for (uint64_t i = 0; i < nbusy; i++) {
		const struct an_busy *b = snr_spill_at(d->busy, i);
		int l = busy_lane(ta1, b);
		if (l < 0 || l >= nunits)
			continue;
		unsorted[l] |= b->start < last[l];
		last[l] = b->start;
		count[l]++;
	}
	for (size_t i = 0; i < d->ndmas && nlanes > nunits; i++) {
		const struct an_dma *m = &d->dmas[i];
		int l = nunits + m->link;
		if (m->link < 0 || l >= nlanes || !dma_on_link(m, m->link))
			continue;
		unsorted[l] |= m->active < last[l];
		last[l] = m->active;
		count[l]++;
	}
	size_t total = 0, packed = 0;
	struct zsink zs;
	FILE *p = zsink_open(&zs, "lanes", err, errlen);
	if (!p) {
		free(busy);
		free(count);
		free(unsorted);
		free(last);
		return 1;
	}
	bool first = true;
	fputs("<script>window.SNR_LANES = {\"units\":[", f);
	for (int l = 0; l < nlanes; l++) {
		/* util's column names: the fixed units, then (after hbm_bw, which is
		 * a bandwidth, not intervals) the links */
		const char *name = l < nunits ? u->names[l] : u->names[AN_UTIL_FIXED + l - nunits];
		fprintf(f, "%s\"%s\"", l ? "," : "", name);
	}
	fprintf(f, "],\"cycles\":%llu,\"first\":[", (unsigned long long)cycles);
	fputc('[', p);
	for (int l = 0; l < nlanes; l++) {
		struct lane ln;
		lane_open(&ln, f, p, l, cycles, &first);
		uint64_t(*iv)[2] = unsorted[l] ? snr_xmalloc(count[l] * sizeof(*iv) + sizeof(*iv)) : NULL;
		size_t n = 0;
		if (l < nunits) {
			for (uint64_t i = 0; i < nbusy && count[l]; i++) {
				const struct an_busy *b = snr_spill_at(d->busy, i);
				if (busy_lane(ta1, b) != l)
					continue;
				if (iv) {
					iv[n][0] = b->start;
					iv[n++][1] = b->end;
				} else {
					lane_add(&ln, b->start, b->end);
				}
			}
		} else {
			for (size_t i = 0; i < d->ndmas && count[l]; i++) {
				const struct an_dma *m = &d->dmas[i];
				if (!dma_on_link(m, l - nunits))
					continue;
				if (iv) {
					iv[n][0] = m->active;
					iv[n++][1] = m->complete;
				} else {
					lane_add(&ln, m->active, m->complete);
				}
			}
		}
		if (iv) {
			snr_qsort(iv, n, sizeof(*iv), cmp_interval);
			for (size_t i = 0; i < n; i++)
				lane_add(&ln, iv[i][0], iv[i][1]);
			free(iv);
		}
		total += lane_close(&ln);
		busy[l] = ln.busy;
	}
	fputc(']', p);
	fprintf(f, "],\"intervals\":%zu,\"busy_cycles\":[", total);
	for (int l = 0; l < nlanes; l++)
		fprintf(f, "%s%llu", l ? "," : "", (unsigned long long)busy[l]);
	fputs("]};</script>\n", f);
	int rc = zsink_emit(f, pk, "lanes", &zs, p, &packed, err, errlen);
	free(busy);
	free(count);
	free(unsorted);
	free(last);
	return rc;
}

/* Every stall cause the timing model knows, as the replay summed them
 * (`snr replay` prints the same). */
static void stalls_write(FILE *f, const struct an_data *d)
{
	uint64_t total = 0;
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		total += d->src.stall_cycles[k];
	double cyc = d->cycles ? (double)d->cycles : 1.0;
	fprintf(f, "<tr><th>stall cycles</th><td>%llu (%.1f%% of the window's cycles)<table id=\"stalls\">\n",
		(unsigned long long)total, 100.0 * (double)total / cyc);
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		fprintf(f, "<tr data-cause=\"%s\"><td>%s</td><td>%llu</td><td>%.1f%%</td></tr>\n",
			snr_stall_cause_name((enum snr_stall_cause)k), snr_stall_cause_name((enum snr_stall_cause)k),
			(unsigned long long)d->src.stall_cycles[k], 100.0 * (double)d->src.stall_cycles[k] / cyc);
	fputs("</table></td></tr>\n", f);
}

/* A source line as a JSON string: bytes that are not UTF-8 become '?' */
static json_t *text_json(const char *t)
{
	json_t *j = json_string(t);
	if (j)
		return j;
	char *c = snr_xstrdup(t);
	for (char *p = c; *p; p++)
		if ((unsigned char)*p >= 0x80)
			*p = '?';
	j = json_string(c);
	free(c);
	return j;
}

/* The text of the functions that ran, for the source page: per file named
 * by a line row, {"first": N, "lines": [text | null, ...]}, the lines from
 * two before each function's first line that ran to one after its last
 * (null: a line outside them). A file that cannot be found (here or under
 * source_dir) is left out; the page says "(source not found)". */
static json_t *sources_json(const struct an_annot *a, const char *source_dir)
{
	json_t *out = json_object();
	for (size_t i = 0; i < a->nlines; i++) {
		const char *file = a->lines[i].file;
		if (!file || json_object_get(out, file))
			continue;
		/* the ranges of this file's functions */
		size_t nf = 0;
		struct {
			const char *fn;
			unsigned lo, hi;
		} *fr = snr_xcalloc(a->nlines, sizeof(*fr));
		unsigned lo = UINT32_MAX, hi = 0;
		for (size_t j = i; j < a->nlines; j++) {
			const struct an_annot_row *r = &a->lines[j];
			if (!r->file || strcmp(r->file, file))
				continue;
			size_t k = 0;
			while (k < nf && !(fr[k].fn == r->function ||
					   (fr[k].fn && r->function && !strcmp(fr[k].fn, r->function))))
				k++;
			if (k == nf) {
				fr[nf].fn = r->function;
				fr[nf].lo = r->line;
				fr[nf++].hi = r->line;
			}
			fr[k].lo = r->line < fr[k].lo ? r->line : fr[k].lo;
			fr[k].hi = r->line > fr[k].hi ? r->line : fr[k].hi;
		}
		for (size_t k = 0; k < nf; k++) {
			fr[k].lo = fr[k].lo > 3 ? fr[k].lo - 2 : 1;
			fr[k].hi++;
			lo = fr[k].lo < lo ? fr[k].lo : lo;
			hi = fr[k].hi > hi ? fr[k].hi : hi;
		}
		size_t n = 0;
		char **text = an_annot_read_source(file, source_dir, &n);
		if (text && lo <= n) {
			json_t *lines = json_array();
			for (unsigned ln = lo; ln <= hi && ln <= n; ln++) {
				bool in = false;
				for (size_t k = 0; k < nf && !in; k++)
					in = ln >= fr[k].lo && ln <= fr[k].hi;
				json_array_append_new(lines, in ? text_json(text[ln - 1]) : json_null());
			}
			json_object_set_new(out, file, json_pack("{s:i,s:o}", "first", (json_int_t)lo, "lines", lines));
		}
		for (size_t k = 0; k < n; k++)
			free(text[k]);
		free(text);
		free(fr);
	}
	return out;
}

/* annotate's data of path (trace or metrics) for --compare */
static json_t *compare_json_of(const struct an_annot *a, const char *a_path, const char *b_path,
			       const char *config, const char *source_dir, char *err, size_t errlen)
{
	struct an_annot b;
	struct snr_source sb;
	if (an_annotate_load(&b, &sb, b_path, config, err, errlen)) {
		snr_source_close(&sb);
		return NULL;
	}
	size_t n = 0;
	struct an_annot_pair *p = an_annot_pair_lines(a, &b, source_dir, &n);
	json_t *j = an_annot_compare_json(a, &b, p, n, a_path, b_path);
	free(p);
	an_annot_free(&b);
	snr_source_close(&sb);
	return j;
}

/* How much packed data goes into the page (base64 bytes), beside about
 * 2 MB of charts, script and views at load */
#define REPORT_INLINE_MAX 6000000

/* The DMA timeline's rows (the worst stalls: about 3 pixels a row in its 330-pixel plot;
 * every DMA is in the table) and a table page's rows */
#define DMA_ROWS 100
#define TABLE_PAGE 50

/* The DMA table: every DMA of an_dma_json (worst stall first) */
static const struct col DMA_COLS[] = {
	{"id", "id", false},
	{"place", "place", true},
	{"link", "link", true},
	{"bytes", "bytes", false},
	{"issue", "issue.cycle", false},
	{"start", "start_cycle", false},
	{"complete", "complete_cycle", false},
	{"wait", "wait.cycle", false},
	{"stall", "stall_cycles", false},
	{"stall_base", "stall_base_cycles", false},
	{"stall_transfer", "stall_transfer_cycles", false},
	{"slack", "slack_cycles", false},
	{"backtail_cycles", "backtail_cycles", false},
	{"backtail_insns", "backtail_insns", false},
	{"relaxed_anchor", "relaxed_anchor", true},
	{"case", "case", true},
};

/* The stalled DMAs no move covers, grouped as `snr analyze suggest` groups
 * them (suggest_words.h): where they issue, how many, their stall, why */
static const struct col NO_MOVE_COLS[] = {
	{"place", "place", true},
	{"instances", "instances", false},
	{"stall", "stall_cycles", false},
	{"reason", "reason", true},
};

/* One entry of suggest's stalled_dmas: counted (suggested), or, when no
 * move covers it, added to its group of nm. */
static void stalled_compact(json_t *o, struct an_sg_nomoves *nm, size_t *suggested)
{
	json_t *dma = json_object_get(o, "dma");
	if (json_is_true(json_object_get(o, "suggested"))) {
		(*suggested)++;
		return;
	}
	an_sg_nomove_add(nm, (uint64_t)json_integer_value(json_object_get(dma, "pc")),
			 json_string_value(json_object_get(o, "reason")),
			 (uint64_t)json_integer_value(json_object_get(dma, "stall_cycles")));
}

/* A file read through a window of it: buf[pos, len) are the bytes not yet
 * taken; more() moves them to the front and reads on (the window doubles
 * when it is full), false at the file's end. */
struct readwin {
	FILE *f;
	char *buf;
	size_t pos, len, cap;
	bool eof;
};

static bool readwin_more(struct readwin *w)
{
	if (w->eof)
		return false;
	if (w->pos) {
		memmove(w->buf, w->buf + w->pos, w->len - w->pos);
		w->len -= w->pos;
		w->pos = 0;
	} else if (w->len == w->cap) {
		w->cap = w->cap ? 2 * w->cap : (1u << 20);
		w->buf = snr_xrealloc(w->buf, w->cap + 1);
	}
	size_t k = fread(w->buf + w->len, 1, w->cap - w->len, w->f);
	w->len += k;
	if (!k)
		w->eof = true;
	return k > 0;
}

/* suggest's document (its JSON text in the file f, len bytes, written with
 * snr_suggest_opts.brief: a stalled DMA without its producers and its move)
 * made light for the page: stalled_dmas (a megabyte at a million
 * instructions even so) is replaced by its counts ("stalled_count",
 * "suggested_count"), and the stalled DMAs no move covers go to rows as
 * rows {id, place, stall_cycles, reason} for the table; each move keeps its
 * instance count, not the list of its DMA ids (`snr analyze suggest --json`
 * has both in full). stalled_dmas is suggest's last member: the text before
 * it is parsed as the document and its entries one at a time through a
 * window of the file, each compacted before the next is read, so neither
 * the text nor a tree of the whole list is ever held (tens of MB of text
 * and hundreds of MB as a tree at ten million instructions). NULL when the
 * text is not suggest's document. */
static json_t *suggest_compact(FILE *f, size_t len, const struct snr_source *src, struct coltab *rows)
{
	struct an_sg_nomoves nm = {0};
	static const char key[] = ",\"stalled_dmas\":[";
	const size_t klen = sizeof(key) - 1;
	struct readwin w = {.f = f};
	json_t *sj = NULL;
	/* the last occurrence: a '"' inside a string is escaped, so the key
	 * appears nowhere else */
	size_t at = SIZE_MAX, base = 0; /* base: the file offset of buf[0] */
	if (fseek(f, 0, SEEK_SET))
		goto out;
	while (readwin_more(&w)) {
		for (const char *p = w.buf; (p = memmem(p, w.len - (size_t)(p - w.buf), key, klen)); p++)
			at = base + (size_t)(p - w.buf);
		size_t keep = w.len < klen - 1 ? w.len : klen - 1; /* a key across the boundary */
		w.pos = w.len - keep;
		base += w.pos;
	}
	size_t head_len = at == SIZE_MAX ? len : at;
	char *head = snr_xmalloc(head_len + 2);
	bool head_ok = !fseek(f, 0, SEEK_SET) && fread(head, 1, head_len, f) == head_len;
	if (at == SIZE_MAX) {
		sj = head_ok ? json_loadb(head, head_len, 0, NULL) : NULL;
		free(head);
		goto out;
	}
	head[head_len] = '}';
	head[head_len + 1] = 0;
	sj = head_ok ? json_loads(head, 0, NULL) : NULL;
	free(head);
	if (!sj || fseek(f, (long)(at + klen), SEEK_SET)) {
		json_decref(sj);
		sj = NULL;
		goto out;
	}
	w.pos = w.len = 0;
	w.eof = false;
	size_t stalled = 0, suggested = 0;
	for (;;) {
		while ((w.pos < w.len || readwin_more(&w)) &&
		       (w.buf[w.pos] == ',' || w.buf[w.pos] == '\n' || w.buf[w.pos] == ' '))
			w.pos++;
		if (w.pos >= w.len || w.buf[w.pos] == ']')
			break;
		json_error_t e;
		json_t *o;
		while (!(o = json_loadb(w.buf + w.pos, w.len - w.pos, JSON_DISABLE_EOF_CHECK, &e)))
			if (!readwin_more(&w)) /* an entry cut by the window: read on */
				break;
		if (!o) {
			json_decref(sj);
			sj = NULL;
			goto out;
		}
		stalled_compact(o, &nm, &suggested);
		stalled++;
		json_decref(o);
		w.pos += e.position;
	}
	json_object_set_new(sj, "stalled_count", json_integer((json_int_t)stalled));
	json_object_set_new(sj, "suggested_count", json_integer((json_int_t)suggested));
	size_t i;
	json_t *o;
	json_array_foreach(json_object_get(sj, "moves"), i, o) {
		json_object_del(o, "dma_ids");
		char label[1200]; /* the move in the CLI's words: statements, not pcs */
		an_sg_move_label(src, (uint64_t)json_integer_value(json_object_get(json_object_get(o, "dma"), "pc")),
				 (uint64_t)json_integer_value(json_object_get(json_object_get(o, "before"), "pc")),
				 (uint64_t)json_integer_value(json_object_get(o, "instances")), label, sizeof(label));
		json_object_set_new(o, "label", json_string(label));
	}
	for (size_t k = 0; k < nm.n; k++) {
		char where[400];
		coltab_add(rows, json_pack("{s:s,s:I,s:I,s:s}", "place",
					   an_sg_place(src, nm.g[k].pc, "the DMA ", where, sizeof(where)), "instances",
					   (json_int_t)nm.g[k].instances, "stall_cycles", (json_int_t)nm.g[k].stall_cycles,
					   "reason", nm.g[k].reason));
	}
	json_object_set_new(sj, "no_move_groups", json_integer((json_int_t)nm.n));
out:
	an_sg_nomoves_free(&nm);
	free(w.buf);
	return sj;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snr report T.snrt|M.snrm -o report.html [--compare B.snrt|B.snrm] [--source-dir DIR]\n"
		   "                  [--config M.json] [--trace T.snrt] [--interval CYCLES] [--elf PROG]\n"
		   "                  [--allow-truncated] [--inline-max BYTES]\n"
		   "       snr report SET|FILE... -o report.html [OPTIONS]\n"
		   "       snr report H.snrh [CUPTI.snrh...] -o report.html [--allow-truncated] [--force]\n"
		   "\n"
		   "One self-contained HTML file (no network needed to open it; for a window whose full\n"
		   "data exceeds --inline-max, the page and the folder FILE.d beside it): summary (cycles, every\n"
		   "stall cause as the replay sums it, utilization); the hottest source lines (snr annotate's\n"
		   "figures); DMA timeline (base-latency stall, transfer stall, slack, each DMA's dependency\n"
		   "backtail; rows named by the issuing line); every unit's and DMA link's busy intervals as\n"
		   "a zoomable lane timeline; VMEM occupancy against the largest contiguous free region and\n"
		   "the fragmentation heatmap over the pages the window touched; suggestions with what-if\n"
		   "results; a source page: each function's lines (cycles as a heat column, stall causes as\n"
		   "stacked bars) beside its instructions, a clicked line's instructions listed.\n"
		   "\n"
		   "options:\n"
		   "  -o, --output FILE   the HTML file to write (required)\n"
		   "  --force             replace FILE (and its FILE.d/, FILE-wK.html) if it exists; never\n"
		   "                      an input (the trace, metrics file, ELF, config, --compare B)\n"
		   "  --compare B         also per line (paired by function and statement text) and per\n"
		   "                      stall cause: this window (before) and B (after), as `snr annotate\n"
		   "                      T --compare B`; shown first, after the summary\n"
		   "  --source-dir DIR    find source files that are not where the line table names them\n"
		   "                      (by the path, then by the base name under DIR)\n"
		   "  --config M.json     machine config for a trace's replay and its what-ifs (default: the\n"
		   "                      recorded one); refused for a metrics file (it carries its own)\n"
		   "  --trace T.snrt      for a metrics file: the trace its suggestions' what-ifs run on,\n"
		   "                      instead of the path it records (checked against its digest)\n"
		   "  --interval CYCLES   VMEM sample interval, as for `snr analyze vmem`\n"
		   "  --elf PROG          the program's ELF, when the trace's recorded path is gone or stale\n"
		   "  --allow-truncated   report on a partial trace or metrics file (marked so) instead of\n"
		   "                      refusing it (exit 3)\n"
		   "  --inline-max BYTES  the window's full data (every DMA, every busy interval), packed,\n"
		   "                      goes into the page up to BYTES (default 6000000, which keeps the page\n"
		   "                      under 10 MB); what is over goes to FILE.d/ beside the page, which\n"
		   "                      the page then needs and says so\n"
		   "  -h, --help          this text\n"
		   "\n"
		   "Several windows (a trace or metrics set from `snr record --windows` or `snr replay\n"
		   "SET -o MSET`, or several files): each window's report is written beside FILE as\n"
		   "FILE-wK.html, and FILE is the page of them all: per window, per group (a set is\n"
		   "a group, e.g. prefill and decode) and together: cycles, IPC, stall cycles by\n"
		   "cause, DMAs, charts of both, the hottest lines added up over the windows, a\n"
		   "section per window linking its page.\n"
		   "\n"
		   "A host trace (`snr host record`, H.snrh): the host page: each thread's on- and off-CPU\n"
		   "time and buckets, the progress points, on/off-device, and the causal profile (as `snr\n"
		   "host causal`: the ranking, the hot names off the critical path, a plot of effect\n"
		   "against speedup per candidate). CUPTI's files given after it merge into it.\n"
		   "\n"
		   "The source page needs the program's line tables (snr cc -g; the ELF the trace names, or\n"
		   "--elf PROG); without them lines are functions.\n");
}

int snr_cmd_report(int argc, char **argv)
{
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"config", required_argument, NULL, 'c'},
					     {"interval", required_argument, NULL, 'i'},
					     {"source-dir", required_argument, NULL, 's'},
					     {"compare", required_argument, NULL, 'C'},
					     {"inline-max", required_argument, NULL, 'I'},
					     {"trace", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *out_path = NULL, *config = NULL, *source_dir = NULL, *compare = NULL, *trace = NULL;
	uint64_t interval = 0, inline_max = REPORT_INLINE_MAX;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 's':
			source_dir = optarg;
			break;
		case 't':
			trace = optarg;
			break;
		case 'C':
			compare = optarg;
			break;
		case 'i':
			if (!snr_parse_u64(optarg, &interval, true) || !interval) {
				snr_err("report: --interval needs a positive number of cycles, not '%s'", optarg);
				return 2;
			}
			break;
		case 'I':
			if (!snr_parse_u64(optarg, &inline_max, true)) {
				snr_err("report: --inline-max needs a number of bytes, not '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!out_path) {
		snr_err("report: -o OUT.html is required");
		usage(stderr);
		return 2;
	}
	if (optind >= argc) {
		snr_err("report: give a trace or metrics file (or a set, or several files)");
		usage(stderr);
		return 2;
	}
	/* every input named, so that the output is checked against them before any work */
	const char *const named[] = {compare, config, trace};
	if (snr_output_preflight("report", out_path, argv + optind, argc - optind, named, 3))
		return 1;
	if (an_is_host_trace(argv[optind])) { /* the host page: report_host.c */
		const char *dev_only = compare ? "compare" : trace ? "trace" : config ? "config" : source_dir ? "source-dir"
				       : interval ? "interval" : NULL;
		if (dev_only) {
			snr_err("report: --%s is for a device trace or metrics file; %s is a host trace", dev_only,
				argv[optind]);
			return 2;
		}
		return an_report_host(argc - optind, argv + optind, out_path);
	}
	if (optind + 1 != argc || snr_is_set(argv[optind])) { /* several windows: report_windows.c */
		if (compare || trace) {
			snr_err("report: --%s takes one window; several windows are reported per window and together",
				compare ? "compare" : "trace");
			return 2;
		}
		return an_report_windows(argc - optind, argv + optind, out_path, config, interval, source_dir,
					 inline_max);
	}
	/* One pass feeds the dependency graph (backtails, suggestions) and the
	 * analyses' collection. */
	char err[1024];
	struct snr_deps g;
	struct an_annot_acc *acc = an_annot_acc_new();
	struct snr_deps_opts so = {.config_path = config, .trace_path = trace, .an_want = AN_WANT_ALL, .annot = acc};
	struct an_annot annot;
	int drc = snr_deps_run(&g, argv[optind], &so, err, sizeof(err));
	char aerr[600];
	if (an_annot_finish(acc, &g.an.src, &annot, aerr, sizeof(aerr)) && !drc) {
		snprintf(err, sizeof(err), "%s", aerr);
		drc = 1;
	}
	if (!drc && trace && g.an.src.is_trace) {
		snr_fmt(err, sizeof(err), "--trace names the trace of a metrics file; %s is a trace itself", argv[optind]);
		drc = 2;
	}
	if (drc) {
		snr_err("report: %s", err);
		an_annot_free(&annot);
		snr_deps_free(&g);
		return drc == 2 ? 2 : 1;
	}
	/* Algorithm 2's suggestions, each checked by a what-if run when the trace
	 * is at hand (for a metrics file: the trace it names), first: the
	 * graph's per-instruction arrays are freed as soon as their text is
	 * written, before it is parsed and the page's data is built (the DMA
	 * table and the collection stay). */
	json_t *sj;
	struct coltab no_move, dma_tab;
	memset(&dma_tab, 0, sizeof(dma_tab));
	if (coltab_init(&no_move, NO_MOVE_COLS, sizeof(NO_MOVE_COLS) / sizeof(NO_MOVE_COLS[0]), TABLE_PAGE,
			"report table") ||
	    coltab_init(&dma_tab, DMA_COLS, sizeof(DMA_COLS) / sizeof(DMA_COLS[0]), TABLE_PAGE, "report table")) {
		snr_err("report: %s", no_move.err[0] ? no_move.err : dma_tab.err);
		coltab_free(&no_move);
		coltab_free(&dma_tab);
		an_annot_free(&annot);
		snr_deps_free(&g);
		return 1;
	}
	{
		/* the document goes to an unlinked temporary file, read back
		 * through a window (suggest_compact) */
		char serr[1024] = "";
		int fd = snr_tmpfile_fd("suggestions", serr, sizeof(serr));
		FILE *mf = fd >= 0 ? fdopen(fd, "w+") : NULL;
		if (fd >= 0 && !mf)
			close(fd);
		char *mbuf = mf ? snr_setvbuf(mf, 1u << 16) : NULL;
		struct snr_suggest_opts sgo = {.verify_max = SNR_SUGGEST_DEFAULT_VERIFY_MAX, .json = true, .brief = true};
		int src = mf ? snr_suggest_report(&g, &so, &sgo, mf, serr, sizeof(serr)) : -1;
		long blen = mf && !fflush(mf) ? ftell(mf) : -1;
		snr_deps_drop_graph(&g);
		sj = src >= 0 && blen > 0 ? suggest_compact(mf, (size_t)blen, &g.an.src, &no_move) : NULL;
		if (mf)
			fclose(mf);
		free(mbuf);
		if (sj && src > 0)
			json_object_set_new(sj, "verify_error", json_string(serr));
		if (!sj) {
			sj = json_object();
			json_object_set_new(sj, "error", json_string(serr[0] ? serr : "suggestions unavailable"));
		}
	}
	struct an_data *d = &g.an;
	struct an_vmem v;
	struct an_util u;
	uint64_t heat_rows;
	uint32_t *row_of_page = an_vmem_touched_rows(d, 128, &heat_rows);
	int vrc = an_vmem_compute_rows(d, interval, row_of_page, heat_rows, &v);
	free(row_of_page);
	if (vrc) {
		snr_err("report: %s", v.err);
		an_vmem_free(&v);
		json_decref(sj);
		coltab_free(&no_move);
		coltab_free(&dma_tab);
		an_annot_free(&annot);
		snr_deps_free(&g);
		return 1;
	}
	an_util_compute(d, 0, &u);
	json_t *all = json_object();
	/* each DMA's backtail (deps): how much earlier it could issue. Every DMA
	 * goes to the DMA table (packed) as a row of DMA_COLS' members only (the
	 * whole object takes about 6 KB, 400 MB at ten million instructions);
	 * the timeline draws the worst DMA_ROWS as whole objects. */
	size_t *order = an_dma_sorted(d), i;
	json_t *top = json_array();
	for (i = 0; order[i] != SIZE_MAX; i++) {
		json_t *o = an_dma_obj_json(d, &d->dmas[order[i]]);
		uint64_t id = (uint64_t)json_integer_value(json_object_get(o, "id"));
		const struct snr_deps_dma *m = id && id <= g.ndmas ? &g.dmas[id - 1] : NULL;
		bool in_window = m && m->issue_index >= 0;
		json_object_set_new(o, "backtail_cycles", in_window ? json_integer((json_int_t)m->backtail_cycles) : json_null());
		json_object_set_new(o, "backtail_insns", in_window ? json_integer((json_int_t)m->backtail_insns) : json_null());
		json_object_set_new(o, "relaxed_anchor",
				    in_window ? json_string(snr_anchor_kind_name(m->anchor_kind)) : json_null());
		json_t *issue = json_object_get(o, "issue");
		json_object_set_new(o, "place", json_is_object(issue) ? place_json(issue) : json_string("before the window"));
		coltab_add(&dma_tab, columns_only(o, DMA_COLS, sizeof(DMA_COLS) / sizeof(DMA_COLS[0])));
		if (i < DMA_ROWS)
			json_array_append_new(top, o);
		else
			json_decref(o);
	}
	json_t *dj = an_dma_doc_json(d, order, top);
	free(order);
	json_object_set_new(dj, "count", json_integer((json_int_t)dma_tab.n));
	json_object_set_new(all, "dma", dj);
	json_t *st = json_object();
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		json_object_set_new(st, snr_stall_cause_name((enum snr_stall_cause)k),
				    json_integer((json_int_t)d->src.stall_cycles[k]));
	json_object_set_new(all, "stall_cycles", st);
	json_object_set_new(all, "util", an_util_json(d, &u));
	/* the source page: annotate's lines and pcs, the text of the functions that ran */
	json_object_set_new(all, "annot", an_annot_json(&annot, &d->src, NULL));
	json_object_set_new(all, "sources", sources_json(&annot, source_dir));
	if (compare) {
		json_t *cj = compare_json_of(&annot, argv[optind], compare, config, source_dir, err, sizeof(err));
		if (!cj) {
			snr_err("report: --compare %s: %s", compare, err);
			coltab_free(&no_move);
			coltab_free(&dma_tab);
			json_decref(all);
			an_annot_free(&annot);
			an_util_free(&u);
			an_vmem_free(&v);
			snr_deps_free(&g);
			return 1;
		}
		json_object_set_new(all, "compare", cj);
	}
	json_object_set_new(all, "vmem", an_vmem_json(d, &v, true));
	json_object_set_new(all, "vmem_base", json_integer((json_int_t)TA1_VMEM_BASE));
	json_object_set_new(all, "suggest", sj);
	char *js = json_dumps(all, JSON_COMPACT);
	const json_t *cmpj = json_object_get(all, "compare"); /* NULL: no --compare */

	struct snr_outfile of;
	char oerr[600];
	FILE *f = snr_outfile_fopen(&of, out_path, oerr, sizeof(oerr));
	if (!f) {
		snr_err("report: %s", oerr);
		free(js);
		json_decref(all);
		coltab_free(&dma_tab);
		coltab_free(&no_move);
		an_util_free(&u);
		an_vmem_free(&v);
		an_annot_free(&annot);
		snr_deps_free(&g);
		return 1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>snr report: ", f);
	html_text(f, d->src.path);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\n"
	      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
	      "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}\n"
	      "th{text-align:left}.chart{width:1100px;height:380px}#c-dma{height:420px}#c-heat{height:460px}\n"
	      "#errors{display:none;color:#b00;white-space:pre}\n"
	      "nav a{margin-right:14px}.num{text-align:right;font-variant-numeric:tabular-nums}\n"
	      ".code{font:12px/1.3 ui-monospace,monospace;white-space:pre}\n"
	      ".stallbar{display:inline-flex;height:10px;vertical-align:middle;background:#f3f3f3}\n"
	      ".stallbar span{display:inline-block;height:10px}.key{display:inline-block;width:10px;height:10px;margin:0 3px 0 8px}\n"
	      ".side{display:flex;gap:16px;align-items:flex-start}.side table td{padding:0 6px;border:0;white-space:nowrap}.side table td.code{white-space:pre}\n"
	      ".asmbox{flex:1 1 420px;min-width:420px;max-height:480px;overflow:auto;border-left:1px solid #ddd;font-size:12px}\n"
	      "table.src tr.ran{cursor:pointer}table.src .heat{width:28px}tr.sel td{background:#fff3b0}\n"
	      "#selected{border:1px solid #ddd;padding:6px 10px;margin:10px 0}\n"
	      "</style>\n<script>\n",
	      f);
	fwrite(snr_echarts_js, 1, snr_echarts_js_len, f);
	fputs("\n</script>\n</head><body>\n<h1>snr report</h1>\n"
	      "<nav><a href=\"#hottest\">hottest lines</a><a href=\"#c-dma\">DMA timeline</a><a href=\"#dmas\">DMAs</a><a href=\"#c-util\">busy "
	      "intervals</a><a href=\"#c-vmem\">VMEM</a><a href=\"#suggest\">suggestions</a><a "
	      "href=\"#source-page\">source</a><a href=\"#compare-page\">compare</a></nav>\n<pre id=\"errors\"></pre>\n<table>\n",
	      f);
	json_t *tot = json_object_get(dj, "totals");
	uint64_t stall = (uint64_t)json_integer_value(json_object_get(tot, "stall_cycles"));
	fprintf(f, "<tr><th>source</th><td>");
	html_text(f, d->src.path);
	fprintf(f, " (%s)</td></tr>\n", d->src.is_trace ? "trace, replayed" : "metrics file");
	fprintf(f, "<tr><th>instructions</th><td>%llu</td></tr>\n<tr><th>cycles</th><td>%llu (IPC %.3f)</td></tr>\n",
		(unsigned long long)d->src.instructions, (unsigned long long)d->cycles,
		d->cycles ? (double)d->src.instructions / (double)d->cycles : 0.0);
	fprintf(f,
		"<tr><th>DMAs</th><td>%llu, %llu bytes</td></tr>\n"
		"<tr><th>DMA stall (the WAITs)</th><td>%llu cycles (%.1f%%): base latency %llu, transfer %llu; slack %llu</td></tr>\n",
		(unsigned long long)json_integer_value(json_object_get(tot, "dmas")),
		(unsigned long long)json_integer_value(json_object_get(tot, "bytes")), (unsigned long long)stall,
		d->cycles ? 100.0 * (double)stall / (double)d->cycles : 0.0,
		(unsigned long long)json_integer_value(json_object_get(tot, "stall_base_cycles")),
		(unsigned long long)json_integer_value(json_object_get(tot, "stall_transfer_cycles")),
		(unsigned long long)json_integer_value(json_object_get(tot, "slack_cycles")));
	stalls_write(f, d);
	if (cmpj) {
		json_t *tc = json_object_get(cmpj, "total_cycles");
		long long before = (long long)json_integer_value(json_object_get(tc, "before")),
			  after = (long long)json_integer_value(json_object_get(tc, "after"));
		fprintf(f, "<tr id=\"summary-compare\"><th>compared with</th><td><a href=\"#compare-page\">");
		html_text(f, json_string_value(json_object_get(cmpj, "after")));
		fprintf(f, "</a>: %lld cycles here, %lld there (%+lld, %+.1f%%); per line and cause below</td></tr>\n", before,
			after, after - before, before ? 100.0 * (double)(after - before) / (double)before : 0.0);
	}
	fprintf(f, "<tr><th>utilization</th><td>");
	for (int c = 0; c < u.ncols; c++)
		fprintf(f, "%s%s %.1f%%", c ? ", " : "", u.names[c], 100.0 * u.total[c]);
	fprintf(f, "</td></tr>\n");
	fprintf(f,
		"<tr><th>VMEM</th><td>median free %.1f%%, median largest contiguous free %.1f%%; pages used %llu, "
		"unused (written, never read) %llu</td></tr>\n</table>\n",
		v.free_median_pct, v.largest_median_pct, (unsigned long long)v.pages_used,
		(unsigned long long)v.pages_unused);
	if (cmpj) /* the comparison asked for: first, after the summary */
		fputs("<h2 id=\"compare-page\">Compared with another window, per line (matched by function and statement "
		      "text)</h2>\n<div id=\"compare\"></div>\n",
		      f);
	fputs("<h2 id=\"hottest\">Hottest source lines</h2><div id=\"hot\"></div>\n", f);
	fputs("<h2>DMA timeline (worst stall at the top; rows: the issuing line)</h2><p id=\"dma-what\"></p>"
	      "<div id=\"c-dma\" class=\"chart\"></div>\n"
	      "<h2 id=\"dmas\">Every DMA (worst stall first)</h2><div id=\"dma-table\"></div>\n"
	      "<h2>Busy intervals per unit and DMA link</h2><p>Zoom with the wheel or the slider; at a zoom\n"
	      "where intervals are closer than a pixel they are drawn merged, shaded by the share of the span that\n"
	      "is busy (the tooltip gives the span and its busy cycles).</p><div id=\"c-util\" class=\"chart\"></div>\n"
	      "<p id=\"util-lod\"></p>\n"
	      "<h2>VMEM occupancy and largest contiguous free region</h2><div id=\"c-vmem\" class=\"chart\"></div>\n"
	      "<h2>VMEM fragmentation over the pages the window touched, by address</h2><p id=\"heat-what\"></p>\n"
	      "<div id=\"c-heat\" class=\"chart\"></div>\n"
	      "<h2>Suggestions (Algorithm 2), each checked by a what-if replay</h2><div id=\"suggest\"></div>"
	      "<div id=\"no-move\"></div>\n"
	      "<h2 id=\"source-page\">Source: each function's lines beside its instructions</h2>\n"
	      "<div id=\"selected\"></div><div id=\"source\"></div>\n",
	      f);
	if (!cmpj)
		fputs("<h2 id=\"compare-page\">Compared with another window</h2>\n"
		      "<p id=\"compare\">none: <code>snr report A --compare B -o r.html</code> compares this window with B</p>\n",
		      f);
	fputs("<p>Definitions: docs/analyses.md. Charts: Apache ECharts (Apache-2.0).</p>\n"
	      "<script>\nwindow.SNR = ",
	      f);
	script_json(f, js);
	fputs(";\n</script>\n", f);
	struct packer pk = {.page_path = out_path, .inline_left = (size_t)inline_max};
	int rc = lanes_write(f, &pk, d, &u, oerr, sizeof(oerr));
	if (!rc)
		rc = table_write(f, &pk, "dmas", &dma_tab, oerr, sizeof(oerr));
	if (!rc)
		rc = table_write(f, &pk, "no_move", &no_move, oerr, sizeof(oerr));
	fputs("<script>\n", f);
	fwrite(snr_report_js, 1, snr_report_js_len, f);
	fputs("\n</script>\n</body></html>\n", f);
	if (rc)
		snr_err("report: %s", oerr);
	if (snr_outfile_close(&of, !rc, oerr, sizeof(oerr))) {
		snr_err("report: %s", oerr);
		rc = 1;
	}
	if (!rc)
		an_side_files_prune(&pk.written, out_path);
	an_side_files_free(&pk.written);
	coltab_free(&dma_tab);
	coltab_free(&no_move);
	free(js);
	json_decref(all);
	an_util_free(&u);
	an_vmem_free(&v);
	an_annot_free(&annot);
	snr_deps_free(&g);
	return rc;
}
