/*
 * vmem.c: `snr analyze vmem`, the paper's data-cache analysis (§5.3.2,
 * Figure 8) on TA1's VMEM. VMEM is cut into pages (machine config
 * vmem.page_bytes); every VMEM read and write the timing model reports is
 * replayed in cycle order against per-page state, which turns each value a
 * page holds into one occupancy interval:
 *
 *   written at w, last read at r (before the next write)  -> occupied [w, r+1), "used"
 *   written at w, never read before the next write at w2  -> occupied [w, w2),  "unused"
 *   written at w, never read until the window ends        -> occupied [w, end], "unused"
 *   read at r before any write in the window (live-in)    -> occupied [0, r+1), "used"
 *
 * A page is free at cycle t when no interval covers t. Samples are taken
 * every `interval` cycles (t = 0, interval, 2*interval, ... <= cycles);
 * each sample has the used, unused and free pages, the largest run of
 * consecutive free pages and the occupied pages per block (the heatmap).
 * docs/analyses.md has the definitions and the --json schema.
 *
 * Memory: the accesses come sorted from collect.c's spilled runs; per page
 * its open value (17 bytes) and the occupancy intervals in a sorted spill
 * too (16 bytes per interval end, in temporary files past 8 MiB); per
 * sample the figures and a heatmap row. Nothing per instruction or per
 * access stays in memory.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "lib/snr_util.h"

struct pev {
	uint64_t cycle;
	uint32_t page;
	int8_t delta;
	uint8_t unused;
};

static int cmp_pev(const void *a, const void *b)
{
	const struct pev *x = a, *y = b;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	return 0;
}

static void interval(struct snr_sorted *p, uint32_t page, uint64_t start, uint64_t end, bool unused)
{
	if (end <= start)
		return;
	struct pev ev;
	memset(&ev, 0, sizeof(ev)); /* the padding too: it goes to the file */
	ev.cycle = start;
	ev.page = page;
	ev.delta = 1;
	ev.unused = unused;
	snr_sorted_push(p, &ev);
	ev.cycle = end;
	ev.delta = -1;
	snr_sorted_push(p, &ev);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

static double median(double *v, size_t n)
{
	if (!n)
		return 0;
	snr_qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

uint32_t *an_vmem_touched_rows(const struct an_data *d, uint64_t max_rows, uint64_t *nrows)
{
	uint64_t pages = d->vmem_pages, touched = 0;
	uint32_t *row = snr_xmalloc((pages + 1) * sizeof(*row));
	for (uint64_t p = 0; p < pages; p++)
		row[p] = 0;
	snr_sorted_rewind(d->vm);
	for (const struct an_vmev *e; (e = snr_sorted_next(d->vm));) {
		uint64_t first = e->off / d->page_bytes, last = (e->off + e->bytes - 1) / d->page_bytes;
		for (uint64_t p = first; p <= last && p < pages; p++)
			row[p] = 1;
	}
	for (uint64_t p = 0; p < pages; p++)
		touched += row[p];
	uint64_t per = touched ? (touched + max_rows - 1) / max_rows : 1, k = 0;
	for (uint64_t p = 0; p < pages; p++)
		row[p] = row[p] ? (uint32_t)(k++ / per) : UINT32_MAX;
	*nrows = touched ? (touched + per - 1) / per : 0;
	return row;
}

int an_vmem_compute(const struct an_data *d, uint64_t interval_cycles, struct an_vmem *v)
{
	return an_vmem_compute_rows(d, interval_cycles, NULL, 0, v);
}

int an_vmem_compute_rows(const struct an_data *d, uint64_t interval_cycles, const uint32_t *row_of_page,
			 uint64_t nrows, struct an_vmem *v)
{
	memset(v, 0, sizeof(*v));
	uint64_t pages = d->vmem_pages, end = d->cycles + 1;
	v->pages = pages;
	v->page_bytes = d->page_bytes;
	if (row_of_page) {
		v->blocks = nrows;
		v->row_of_page = snr_xmalloc((pages + 1) * sizeof(*v->row_of_page));
		memcpy(v->row_of_page, row_of_page, pages * sizeof(*v->row_of_page));
		v->pages_per_block = 0;
	} else {
		v->blocks = pages < 128 ? pages : 128;
		v->pages_per_block = v->blocks ? (pages + v->blocks - 1) / v->blocks : 1;
		v->row_of_page = snr_xmalloc((pages + 1) * sizeof(*v->row_of_page));
		for (uint64_t p = 0; p < pages; p++)
			v->row_of_page[p] = (uint32_t)(p / v->pages_per_block);
	}
	v->interval = interval_cycles ? interval_cycles : (d->cycles + 999) / 1000;
	if (!v->interval)
		v->interval = 1;
	if (!pages)
		return 0;

	uint64_t *val = snr_xmalloc(pages * sizeof(*val)), *last_read = snr_xmalloc(pages * sizeof(*last_read));
	uint8_t *cls = snr_xcalloc(pages, 1); /* bit0 written, bit1 read after a write, bit2 live-in read */
	for (uint64_t p = 0; p < pages; p++)
		val[p] = last_read[p] = AN_NONE;
	/* the occupancy intervals, sorted by the cycle of each end */
	struct snr_sorted pv;
	snr_sorted_init_key(&pv, sizeof(struct pev), cmp_pev, offsetof(struct pev, cycle), 8u << 20,
			    "VMEM occupancy intervals");
	snr_sorted_rewind(d->vm);
	for (const struct an_vmev *e; (e = snr_sorted_next(d->vm));) {
		uint64_t first = e->off / d->page_bytes, last = (e->off + e->bytes - 1) / d->page_bytes;
		if (first >= pages)
			continue;
		if (last >= pages)
			last = pages - 1;
		for (uint64_t p = first; p <= last; p++) {
			if (!e->write) {
				if (val[p] == AN_NONE) {
					val[p] = 0;
					cls[p] |= 4;
				} else if (cls[p] & 1) {
					cls[p] |= 2;
				}
				last_read[p] = e->cycle;
				continue;
			}
			if (val[p] != AN_NONE) {
				if (last_read[p] != AN_NONE)
					interval(&pv, (uint32_t)p, val[p], last_read[p] + 1, false);
				else
					interval(&pv, (uint32_t)p, val[p], e->cycle, true);
			}
			val[p] = e->cycle;
			last_read[p] = AN_NONE;
			cls[p] |= 1;
		}
	}
	for (uint64_t p = 0; p < pages; p++) {
		if (val[p] != AN_NONE) {
			if (last_read[p] != AN_NONE)
				interval(&pv, (uint32_t)p, val[p], last_read[p] + 1, false);
			else
				interval(&pv, (uint32_t)p, val[p], end, true);
		}
		if ((cls[p] & 3) == 3)
			v->pages_used++;
		else if (cls[p] & 1)
			v->pages_unused++;
		else if (cls[p] & 4)
			v->pages_livein++;
		else
			v->pages_untouched++;
	}
	free(val);
	free(last_read);
	free(cls);
	snr_sorted_rewind(&pv);
	const struct pev *next = snr_sorted_next(&pv);

	v->nsamples = d->cycles / v->interval + 1;
	size_t ns = v->nsamples;
	v->t = snr_xmalloc(ns * sizeof(*v->t));
	v->used = snr_xmalloc(ns * sizeof(*v->used));
	v->unused = snr_xmalloc(ns * sizeof(*v->unused));
	v->largest = snr_xmalloc(ns * sizeof(*v->largest));
	v->largest_at = snr_xmalloc(ns * sizeof(*v->largest_at));
	v->heat = snr_xcalloc(ns * v->blocks, sizeof(*v->heat));
	uint16_t *occ = snr_xcalloc(pages, sizeof(*occ));
	uint32_t *block = snr_xcalloc(v->blocks, sizeof(*block));
	int64_t used = 0, unused = 0;
	double *fr = snr_xmalloc(ns * sizeof(*fr)), *lg = snr_xmalloc(ns * sizeof(*lg)),
	       *un = snr_xmalloc(ns * sizeof(*un));
	for (size_t s = 0; s < ns; s++) {
		uint64_t t = (uint64_t)s * v->interval;
		for (; next && next->cycle <= t; next = snr_sorted_next(&pv)) {
			const struct pev *e = next;
			uint16_t before = occ[e->page];
			occ[e->page] = (uint16_t)(occ[e->page] + e->delta);
			if (e->unused)
				unused += e->delta;
			else
				used += e->delta;
			uint32_t b = v->row_of_page[e->page];
			if (b == UINT32_MAX)
				continue;
			if (!before && occ[e->page])
				block[b]++;
			else if (before && !occ[e->page])
				block[b]--;
		}
		uint32_t best = 0, best_at = 0, run = 0;
		for (uint64_t p = 0; p < pages; p++) {
			if (occ[p]) {
				run = 0;
				continue;
			}
			if (++run > best) {
				best = run;
				best_at = (uint32_t)(p + 1 - run);
			}
		}
		/* values of a page never overlap, so used + unused counts occupied pages */
		v->t[s] = t;
		v->used[s] = (uint32_t)used;
		v->unused[s] = (uint32_t)unused;
		v->largest[s] = best;
		v->largest_at[s] = best_at;
		memcpy(&v->heat[s * v->blocks], block, v->blocks * sizeof(*block));
		fr[s] = 100.0 * (double)(pages - (uint64_t)(used + unused)) / (double)pages;
		lg[s] = 100.0 * best / (double)pages;
		un[s] = 100.0 * (double)unused / (double)pages;
	}
	v->free_median_pct = median(fr, ns);
	v->largest_median_pct = median(lg, ns);
	v->unused_median_pct = median(un, ns);
	free(fr);
	free(lg);
	free(un);
	free(occ);
	free(block);
	int rc = 0;
	if (snr_sorted_failed(d->vm) || snr_sorted_failed(&pv)) {
		snr_fmt(v->err, sizeof(v->err), "%s",
			snr_sorted_failed(d->vm) ? snr_sorted_error(d->vm) : snr_sorted_error(&pv));
		rc = -1;
	}
	snr_sorted_free(&pv);
	return rc;
}

void an_vmem_free(struct an_vmem *v)
{
	free(v->t);
	free(v->used);
	free(v->unused);
	free(v->largest);
	free(v->largest_at);
	free(v->heat);
	free(v->row_of_page);
	memset(v, 0, sizeof(*v));
}

json_t *an_vmem_json(const struct an_data *d, const struct an_vmem *v, bool heatmap)
{
	json_t *root = json_object();
	json_object_set_new(root, "schema", json_string("snr.analyze.vmem/1"));
	json_object_set_new(root, "source", an_source_json(d));
	json_object_set_new(root, "vmem_bytes", json_integer((json_int_t)(v->pages * v->page_bytes)));
	json_object_set_new(root, "page_bytes", json_integer((json_int_t)v->page_bytes));
	json_object_set_new(root, "pages", json_integer((json_int_t)v->pages));
	json_object_set_new(root, "blocks", json_integer((json_int_t)v->blocks));
	if (v->pages_per_block) {
		json_object_set_new(root, "pages_per_block", json_integer((json_int_t)v->pages_per_block));
	} else {
		/* rows of the touched pages: each row's first and last page and its
		 * page count (a row may span pages nobody touched) */
		json_t *rows = json_array();
		for (uint64_t p = 0; p < v->pages; p++) {
			uint32_t r = v->row_of_page[p];
			if (r == UINT32_MAX)
				continue;
			if (r >= json_array_size(rows))
				json_array_append_new(rows, json_pack("{s:I,s:I,s:i}", "first_page", (json_int_t)p,
								      "last_page", (json_int_t)p, "pages", 0));
			json_t *o = json_array_get(rows, r);
			json_object_set_new(o, "last_page", json_integer((json_int_t)p));
			json_object_set_new(o, "pages", json_integer(json_integer_value(json_object_get(o, "pages")) + 1));
		}
		json_object_set_new(root, "heat_rows", rows);
	}
	json_object_set_new(root, "interval_cycles", json_integer((json_int_t)v->interval));
	json_object_set_new(root, "page_classes",
			    json_pack("{s:I,s:I,s:I,s:I}", "used", (json_int_t)v->pages_used, "unused",
				      (json_int_t)v->pages_unused, "livein", (json_int_t)v->pages_livein, "untouched",
				      (json_int_t)v->pages_untouched));
	json_object_set_new(root, "medians",
			    json_pack("{s:f,s:f,s:f}", "free_pct", v->free_median_pct, "largest_free_pct",
				      v->largest_median_pct, "unused_pct", v->unused_median_pct));
	json_t *samples = json_array();
	for (size_t s = 0; s < v->nsamples; s++) {
		uint64_t occ = (uint64_t)v->used[s] + v->unused[s];
		json_array_append_new(samples,
				      json_pack("{s:I,s:I,s:I,s:I,s:I,s:I,s:I}", "cycle", (json_int_t)v->t[s],
						"used_pages", (json_int_t)v->used[s], "unused_pages",
						(json_int_t)v->unused[s], "occupied_pages", (json_int_t)occ,
						"free_pages", (json_int_t)(v->pages - occ), "largest_free_pages",
						(json_int_t)v->largest[s], "largest_free_first_page",
						(json_int_t)v->largest_at[s]));
	}
	json_object_set_new(root, "samples", samples);
	if (heatmap) {
		json_t *rows = json_array();
		for (size_t s = 0; s < v->nsamples; s++) {
			json_t *r = json_array();
			for (uint64_t b = 0; b < v->blocks; b++)
				json_array_append_new(r, json_integer(v->heat[s * v->blocks + b]));
			json_array_append_new(rows, r);
		}
		json_object_set_new(root, "heatmap", rows);
	}
	return root;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snr analyze vmem T.snrt|M.snrm [--interval CYCLES] [--config M.json] [--json]\n"
		   "\n"
		   "VMEM pages over time: used (read after being written), unused (written and never\n"
		   "read), free; occupancy, the largest contiguous free region, the blocks x pages\n"
		   "heatmap, and the medians of free and of largest-free as percentages of VMEM.\n"
		   "Samples every CYCLES (default: cycles/1000, rounded up). docs/analyses.md.\n");
}

static void print_heat(const struct an_vmem *v)
{
	const char *ramp = " .:-=+*#%@";
	size_t cols = v->nsamples < 72 ? v->nsamples : 72;
	uint64_t groups = v->blocks < 16 ? v->blocks : 16, per = (v->blocks + groups - 1) / groups;
	printf("\nheatmap: occupied share of %llu blocks of %llu pages (rows: %llu blocks each), time ->\n",
	       (unsigned long long)v->blocks, (unsigned long long)v->pages_per_block, (unsigned long long)per);
	for (uint64_t g = 0; g < groups; g++) {
		printf("%5llu |", (unsigned long long)(g * per));
		for (size_t c = 0; c < cols; c++) {
			size_t s0 = c * v->nsamples / cols, s1 = (c + 1) * v->nsamples / cols;
			double sum = 0, n = 0;
			for (size_t s = s0; s < s1; s++)
				for (uint64_t b = g * per; b < (g + 1) * per && b < v->blocks; b++) {
					sum += v->heat[s * v->blocks + b];
					n += (double)v->pages_per_block;
				}
			double f = n ? sum / n : 0;
			int lvl = f <= 0 ? 0 : 1 + (int)(f * 8.999);
			putchar(ramp[lvl > 9 ? 9 : lvl]);
		}
		printf("|\n");
	}
}

int snr_analyze_vmem(int argc, char **argv)
{
	uint64_t interval = 0;
	bool json;
	struct an_data d;
	int rc = an_cli_load(argc, argv, "vmem", "interval", &interval, &json, AN_WANT_VMEM, usage, &d);
	if (rc >= 0)
		return rc;
	struct an_vmem v;
	if (an_vmem_compute(&d, interval, &v)) {
		snr_err("analyze vmem: %s", v.err);
		an_vmem_free(&v);
		an_free(&d);
		return 1;
	}
	if (json) {
		json_t *j = an_vmem_json(&d, &v, true);
		json_dumpf(j, stdout, JSON_INDENT(1) | JSON_COMPACT);
		putchar('\n');
		json_decref(j);
	} else {
		printf("vmem: %llu KiB in %llu pages of %llu B; heatmap %llu blocks x %llu pages;\n"
		       "sampled every %llu cycles (%llu samples)\n",
		       (unsigned long long)(v.pages * v.page_bytes / 1024), (unsigned long long)v.pages,
		       (unsigned long long)v.page_bytes, (unsigned long long)v.blocks,
		       (unsigned long long)v.pages_per_block, (unsigned long long)v.interval,
		       (unsigned long long)v.nsamples);
		printf("pages: %llu used (read after written), %llu unused (written, never read), "
		       "%llu live-in, %llu untouched\n",
		       (unsigned long long)v.pages_used, (unsigned long long)v.pages_unused,
		       (unsigned long long)v.pages_livein, (unsigned long long)v.pages_untouched);
		printf("median free %.1f%% of VMEM (the paper's \"unused space\"), median largest contiguous free "
		       "%.1f%%,\nmedian written-never-read %.1f%%\n\n",
		       v.free_median_pct, v.largest_median_pct, v.unused_median_pct);
		printf("%12s %9s %9s %9s %7s %9s %8s %9s\n", "cycle", "used", "unused", "free", "free%", "largest",
		       "largest%", "at page");
		size_t step = v.nsamples > 40 ? (v.nsamples + 39) / 40 : 1;
		for (size_t s = 0; s < v.nsamples; s += step) {
			uint64_t occ = (uint64_t)v.used[s] + v.unused[s];
			printf("%12llu %9u %9u %9llu %6.1f%% %9u %7.1f%% %9u\n", (unsigned long long)v.t[s], v.used[s],
			       v.unused[s], (unsigned long long)(v.pages - occ),
			       100.0 * (double)(v.pages - occ) / (double)v.pages, v.largest[s],
			       100.0 * v.largest[s] / (double)v.pages, v.largest_at[s]);
		}
		if (step > 1)
			printf("(every %zu-th sample; --json has all)\n", step);
		print_heat(&v);
	}
	an_vmem_free(&v);
	an_free(&d);
	return 0;
}
