/*
 * util.c: `snr analyze util`, busy fraction per cycle window for every
 * unit: the scalar core, the vector unit, the MXU, the DMA engine (a
 * transfer active), each DMA link, and HBM bandwidth (bytes moved through
 * this chip's HBM against dma.hbm_bytes_per_cycle). Units come from the
 * model's busy intervals; a link is busy while one of its transfers is
 * active (an_dma.active to completion); a transfer's bytes are spread
 * evenly over its active interval for the HBM column (the model's rates
 * vary only when another transfer starts or ends, so this is exact for a
 * transfer alone on HBM and an average otherwise). Host code has two
 * columns instead: scalar and memory, from the intervals collect.c derives
 * from its instructions' issue and retire. docs/analyses.md.
 *
 * Memory: per window and column one figure; the busy intervals are read back
 * in order from collect.c's spill, the links' from the DMA records.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_util.h"

/* adds weight * (overlap of [s, e) with each window) / window length */
static void spread(struct an_util *u, uint64_t cycles, int col, uint64_t s, uint64_t e, double per_cycle)
{
	if (e <= s)
		return;
	for (uint64_t w = s / u->window; w < u->nwindows && w * u->window < e; w++) {
		uint64_t ws = w * u->window, we = ws + u->window;
		if (we > cycles)
			we = cycles;
		uint64_t a = s > ws ? s : ws, b = e < we ? e : we;
		if (b > a && we > ws)
			u->busy[w * (uint64_t)u->ncols + (uint64_t)col] += per_cycle * (double)(b - a) / (double)(we - ws);
	}
}

/* Host code: the core (each instruction's first cycle) and memory (its
 * cycles beyond that), from the intervals collect.c derived. */
static int host_compute(const struct an_data *d, uint64_t cycles, struct an_util *u)
{
	u->ncols = AN_UTIL_HOST_COLS;
	u->names = snr_xcalloc((size_t)u->ncols, sizeof(*u->names));
	u->busy = snr_xcalloc(u->nwindows * (uint64_t)u->ncols, sizeof(*u->busy));
	u->total = snr_xcalloc((size_t)u->ncols, sizeof(*u->total));
	snprintf(u->names[AN_UTIL_HOST_SCALAR], sizeof(u->names[0]), "scalar");
	snprintf(u->names[AN_UTIL_HOST_MEMORY], sizeof(u->names[0]), "memory");
	for (uint64_t i = 0; i < d->busy->n; i++) {
		const struct an_busy *b = snr_spill_at(d->busy, i);
		int col = b->unit == AN_UNIT_MEMORY ? AN_UTIL_HOST_MEMORY : AN_UTIL_HOST_SCALAR;
		uint64_t e = b->end < cycles ? b->end : cycles;
		spread(u, cycles, col, b->start, e, 1.0);
		if (e > b->start)
			u->total[col] += (double)(e - b->start);
	}
	for (int c = 0; c < u->ncols; c++)
		u->total[c] /= (double)cycles;
	return 0;
}

int an_util_compute(const struct an_data *d, uint64_t window, struct an_util *u)
{
	memset(u, 0, sizeof(*u));
	uint64_t cycles = d->cycles ? d->cycles : 1;
	u->window = window ? window : (cycles + 19) / 20;
	u->nwindows = (cycles + u->window - 1) / u->window;
	if (!d->ta1)
		return host_compute(d, cycles, u);
	u->ncols = AN_UTIL_FIXED + d->nlinks;
	u->names = snr_xcalloc((size_t)u->ncols, sizeof(*u->names));
	u->busy = snr_xcalloc(u->nwindows * (uint64_t)u->ncols, sizeof(*u->busy));
	u->total = snr_xcalloc((size_t)u->ncols, sizeof(*u->total));
	static const char *fixed[] = {"scalar", "vector", "mxu", "dma", "hbm_bw"};
	for (int c = 0; c < AN_UTIL_FIXED; c++)
		snprintf(u->names[c], sizeof(u->names[c]), "%s", fixed[c]);
	for (int l = 0; l < d->nlinks; l++)
		snprintf(u->names[AN_UTIL_FIXED + l], sizeof(u->names[0]), "%s", d->links[l].name);
	double *tot_busy = snr_xcalloc((size_t)u->ncols, sizeof(double));
	for (uint64_t i = 0; i < d->busy->n; i++) {
		const struct an_busy *b = snr_spill_at(d->busy, i);
		int col = b->unit == SNR_UNIT_SCALAR   ? AN_UTIL_SCALAR
			  : b->unit == SNR_UNIT_VECTOR ? AN_UTIL_VECTOR
			  : b->unit == SNR_UNIT_MXU    ? AN_UTIL_MXU
						       : AN_UTIL_DMA;
		uint64_t e = b->end < cycles ? b->end : cycles;
		spread(u, cycles, col, b->start, e, 1.0);
		if (e > b->start)
			tot_busy[col] += (double)(e - b->start);
	}
	double hbm_bw = (double)(d->src.cfg.dma_hbm_bytes_per_cycle ? d->src.cfg.dma_hbm_bytes_per_cycle : 1);
	/* links: merge each link's active intervals (FIFO: they do not overlap,
	 * but clamp anyway) */
	for (int l = 0; l < d->nlinks; l++) {
		uint64_t covered = 0;
		for (size_t i = 0; i < d->ndmas; i++) {
			const struct an_dma *m = &d->dmas[i];
			if (!m->id || m->link != l || m->active == AN_NONE || m->complete == AN_NONE)
				continue;
			uint64_t s = m->active > covered ? m->active : covered, e = m->complete < cycles ? m->complete : cycles;
			spread(u, cycles, AN_UTIL_FIXED + l, s, e, 1.0);
			if (e > s)
				tot_busy[AN_UTIL_FIXED + l] += (double)(e - s);
			if (m->complete > covered)
				covered = m->complete;
		}
	}
	for (size_t i = 0; i < d->ndmas; i++) {
		const struct an_dma *m = &d->dmas[i];
		if (!m->id || m->active == AN_NONE || m->complete == AN_NONE || !m->bytes)
			continue;
		bool hbm = (m->src_space == TA1_SPACE_HBM && m->src_chip == d->chip) ||
			   (m->dst_space == TA1_SPACE_HBM && m->dst_chip == d->chip);
		if (!hbm)
			continue;
		uint64_t len = m->complete > m->active ? m->complete - m->active : 1;
		double rate = (double)m->bytes / (double)len / hbm_bw;
		uint64_t s = m->active, e = s + len;
		spread(u, cycles, AN_UTIL_HBM, s, e < cycles ? e : cycles, rate);
		tot_busy[AN_UTIL_HBM] += (double)m->bytes / hbm_bw;
	}
	for (int c = 0; c < u->ncols; c++)
		u->total[c] = tot_busy[c] / (double)cycles;
	free(tot_busy);
	for (uint64_t i = 0; i < u->nwindows * (uint64_t)u->ncols; i++)
		if (u->busy[i] > 1.0)
			u->busy[i] = 1.0;
	return 0;
}

void an_util_free(struct an_util *u)
{
	free(u->names);
	free(u->busy);
	free(u->total);
	memset(u, 0, sizeof(*u));
}

json_t *an_util_json(const struct an_data *d, const struct an_util *u)
{
	json_t *root = json_object(), *units = json_array(), *windows = json_array(), *total = json_object();
	json_object_set_new(root, "schema", json_string("snr.analyze.util/1"));
	json_object_set_new(root, "source", an_source_json(d));
	json_object_set_new(root, "window_cycles", json_integer((json_int_t)u->window));
	for (int c = 0; c < u->ncols; c++) {
		json_array_append_new(units, json_string(u->names[c]));
		json_object_set_new(total, u->names[c], json_real(u->total[c]));
	}
	json_object_set_new(root, "units", units);
	json_object_set_new(root, "total", total);
	for (uint64_t w = 0; w < u->nwindows; w++) {
		json_t *o = json_object(), *b = json_array();
		json_object_set_new(o, "start_cycle", json_integer((json_int_t)(w * u->window)));
		uint64_t end = (w + 1) * u->window;
		json_object_set_new(o, "end_cycle", json_integer((json_int_t)(end < d->cycles ? end : d->cycles)));
		for (int c = 0; c < u->ncols; c++)
			json_array_append_new(b, json_real(u->busy[w * (uint64_t)u->ncols + (uint64_t)c]));
		json_object_set_new(o, "busy", b);
		json_array_append_new(windows, o);
	}
	json_object_set_new(root, "windows", windows);
	return root;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snr analyze util T.snrt|M.snrm [--window CYCLES] [--config M.json] [--json]\n"
		   "\n"
		   "Busy fraction per window of CYCLES (default: the window's cycles / 20, rounded up)\n"
		   "for the scalar core, vector unit, MXU, DMA engine, each DMA link, and HBM bandwidth;\n"
		   "for host code (x86-64 under unicorn), the scalar core and memory.\n"
		   "docs/analyses.md.\n");
}

int snr_analyze_util(int argc, char **argv)
{
	uint64_t window = 0;
	bool json;
	struct an_data d;
	int rc = an_cli_load(argc, argv, "util", "window", &window, &json, AN_WANT_DMA | AN_WANT_BUSY, usage, &d);
	if (rc >= 0)
		return rc;
	struct an_util u;
	an_util_compute(&d, window, &u);
	if (json) {
		json_t *j = an_util_json(&d, &u);
		json_dumpf(j, stdout, JSON_INDENT(1) | JSON_COMPACT);
		putchar('\n');
		json_decref(j);
	} else {
		printf("busy %% per window of %llu cycles (%llu cycles)", (unsigned long long)u.window,
		       (unsigned long long)d.cycles);
		if (d.ta1) {
			printf("; links:");
			for (int l = 0; l < d.nlinks; l++)
				printf(" L%d=%s", l, d.links[l].name);
		} else {
			printf("; host code: scalar = each instruction's first cycle, memory = its cycles beyond "
			       "that");
		}
		printf("\n\n%12s", "cycle");
		int shown = u.ncols < AN_UTIL_FIXED + 8 ? u.ncols : AN_UTIL_FIXED + 8;
		for (int c = 0; c < shown; c++) {
			char h[16];
			if (c < AN_UTIL_FIXED || !d.ta1)
				snprintf(h, sizeof(h), "%.7s", u.names[c]);
			else
				snprintf(h, sizeof(h), "L%d", c - AN_UTIL_FIXED);
			printf(" %6s", h);
		}
		printf("\n");
		for (uint64_t w = 0; w < u.nwindows; w++) {
			printf("%12llu", (unsigned long long)(w * u.window));
			for (int c = 0; c < shown; c++)
				printf(" %6.1f", 100.0 * u.busy[w * (uint64_t)u.ncols + (uint64_t)c]);
			printf("\n");
		}
		printf("%12s", "total");
		for (int c = 0; c < shown; c++)
			printf(" %6.1f", 100.0 * u.total[c]);
		printf("\n");
		if (shown < u.ncols)
			printf("(%d more links in --json)\n", u.ncols - shown);
	}
	an_util_free(&u);
	an_free(&d);
	return 0;
}
