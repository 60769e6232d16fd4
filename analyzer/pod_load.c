/*
 * pod_load.c: see pod.h. Each chip's metrics file is read once, keeping only
 * what the pod's analyses need: its peer signals, its WAITs' stall intervals,
 * its DMA engine's busy intervals and the fabric samples of the ports and
 * links it owns (all of them a few per DMA, none per instruction).
 */
#include "analyzer/pod.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/snr_line_pack.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"

#define GROW(arr, n, cap)                                                        \
	do {                                                                     \
		if ((n) == (cap)) {                                              \
			(cap) = (cap) ? 2 * (cap) : 16;                          \
			(arr) = snr_xrealloc((arr), (cap) * sizeof(*(arr)));     \
		}                                                                \
	} while (0)

struct loading {
	struct pod *p;
	struct pod_chip *c;
};

static void on_stall(void *u, const struct snr_ev_stall *e)
{
	struct pod_chip *c = ((struct loading *)u)->c;
	if (e->cause != SNR_STALL_DMA_BASE && e->cause != SNR_STALL_DMA_TRANSFER && e->cause != SNR_STALL_PEER)
		return;
	if (!e->cycles)
		return;
	GROW(c->waits, c->nwaits, c->cap_waits);
	c->waits[c->nwaits++] = (struct pod_interval){e->start, e->start + e->cycles};
}

static void on_busy(void *u, const struct snr_ev_busy *e)
{
	struct pod_chip *c = ((struct loading *)u)->c;
	if (e->unit != SNR_UNIT_DMA || e->end <= e->start)
		return;
	GROW(c->dma_busy, c->ndma_busy, c->cap_dma_busy);
	c->dma_busy[c->ndma_busy++] = (struct pod_interval){e->start, e->end};
}

static void on_peer(void *u, const struct snr_ev_peer *e)
{
	struct pod_chip *c = ((struct loading *)u)->c;
	GROW(c->peers, c->npeers, c->cap_peers);
	c->peers[c->npeers++] = *e;
}

static void on_fabric(void *u, const struct snr_ev_fabric *e)
{
	struct pod *p = ((struct loading *)u)->p;
	size_t i = 0;
	while (i < p->nres && p->res[i].resource != e->resource)
		i++; /* a few dozen resources */
	if (i == p->nres) {
		GROW(p->res, p->nres, p->cap_res);
		p->res[p->nres++] = (struct pod_resource){.resource = e->resource,
							  .kind = e->kind,
							  .from = e->from,
							  .to = e->to,
							  .bytes_per_cycle = e->bytes_per_cycle};
	}
	struct pod_resource *r = &p->res[i];
	r->bytes += e->bytes;
	r->busy += e->busy_cycles;
	r->contended += e->contended_cycles;
	GROW(r->samples, r->nsamples, r->cap_samples);
	r->samples[r->nsamples++] =
	    (struct pod_sample){e->start, e->end, e->bytes, e->busy_cycles, e->contended_cycles};
	p->nsamples++;
}

static int cmp_res(const void *a, const void *b)
{
	uint32_t x = ((const struct pod_resource *)a)->resource, y = ((const struct pod_resource *)b)->resource;
	return x < y ? -1 : x > y;
}

static int cmp_sample(const void *a, const void *b)
{
	uint64_t x = ((const struct pod_sample *)a)->start, y = ((const struct pod_sample *)b)->start;
	return x < y ? -1 : x > y;
}

/* Chip c's file: its summary, then its events. */
static int load_chip(struct pod *p, struct pod_chip *c, char *err, size_t errlen, int *status)
{
	c->m = snr_metrics_open(c->path, err, errlen);
	if (!c->m) {
		*status = 3;
		return -1;
	}
	json_t *meta = json_loads(snr_metrics_meta_json(c->m), 0, NULL);
	json_t *tm = json_object_get(meta, "trace_meta");
	json_t *chip = json_object_get(tm, "chip");
	if (chip && (!json_is_integer(chip) || json_integer_value(chip) != (json_int_t)c->chip)) {
		snr_fmt(err, errlen, "%s: the set names it chip %u, its META says chip %lld", c->path, c->chip,
			(long long)json_integer_value(chip));
		json_decref(meta);
		*status = 3;
		return -1;
	}
	char *tms = tm ? json_dumps(tm, JSON_COMPACT) : NULL;
	size_t nl;
	const uint8_t *lp = snr_metrics_lines(c->m, &nl);
	c->lines = snr_lines_open_meta_pack(tms, c->path, lp ? snr_line_pack_parse(lp, nl, err, errlen) : NULL, false);
	free(tms);
	json_decref(meta);
	const char *sum = snr_metrics_summary_json(c->m);
	json_t *sj = sum ? json_loads(sum, 0, NULL) : NULL;
	if (!sj) {
		snr_fmt(err, errlen, "%s: chip %u's metrics file has no summary: it was cut short", c->path, c->chip);
		*status = 3;
		return -1;
	}
	c->cycles = (uint64_t)json_integer_value(json_object_get(sj, "cycles"));
	c->instructions = (uint64_t)json_integer_value(json_object_get(sj, "instructions"));
	json_t *st = json_object_get(sj, "stall_cycles");
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		c->stall_cycles[k] =
		    (uint64_t)json_integer_value(json_object_get(st, snr_stall_cause_name((enum snr_stall_cause)k)));
	bool verified = json_is_true(json_object_get(sj, "verified"));
	json_decref(sj);
	if (!verified) {
		snr_fmt(err, errlen, "%s: chip %u's replay diverged from its recording", c->path, c->chip);
		*status = 3;
		return -1;
	}
	struct loading l = {p, c};
	struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION,
				.user = &l,
				.on_stall = on_stall,
				.on_busy = on_busy,
				.on_peer = on_peer,
				.on_fabric = on_fabric};
	if (snr_metrics_replay(c->m, &t, err, errlen)) {
		*status = 3;
		return -1;
	}
	return 0;
}

int pod_load(struct pod *p, const char *dir, char *err, size_t errlen, int *status)
{
	memset(p, 0, sizeof(*p));
	p->dir = snr_xstrdup(dir);
	*status = 2;
	struct stat st;
	if (stat(dir, &st)) {
		snr_fmt(err, errlen, "%s: %s", dir, strerror(errno));
		return -1;
	}
	if (!S_ISDIR(st.st_mode) || !snr_is_set(dir)) {
		snr_fmt(err, errlen,
			"%s is not a pod's metrics set (a folder with %s, written by snr device --timing -o MSET "
			"or a pod's replay)",
			dir, SNR_SET_MANIFEST);
		return -1;
	}
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, SNR_SET_MANIFEST);
	json_error_t je;
	json_t *man = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!man) {
		snr_fmt(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		*status = 3;
		return -1;
	}
	int rc = -1;
	json_t *windows = json_object_get(man, "windows"), *nch = json_object_get(man, "chips");
	if (!json_is_true(json_object_get(man, "pod")) ||
	    strcmp(json_string_value(json_object_get(man, "kind")) ? json_string_value(json_object_get(man, "kind")) : "",
		   "metrics")) {
		snr_fmt(err, errlen, "%s: not a pod's metrics set (its manifest has no \"pod\": true with \"kind\": "
			"\"metrics\"): snr analyze pod reads what snr device --timing -o MSET writes", path);
		goto out;
	}
	*status = 3;
	if (!json_is_true(json_object_get(man, "complete"))) {
		snr_fmt(err, errlen, "%s: the set is unfinished (\"complete\": false): its run did not end", path);
		goto out;
	}
	if (!json_is_integer(nch) || json_integer_value(nch) < 1 || json_integer_value(nch) > 4096 ||
	    !json_is_array(windows)) {
		snr_fmt(err, errlen, "%s: \"chips\" must be a count of chips (1 to 4096) and \"windows\" a list", path);
		goto out;
	}
	p->nchips = (unsigned)json_integer_value(nch);
	p->chips = snr_xcalloc(p->nchips, sizeof(*p->chips));
	size_t i;
	json_t *w;
	json_array_foreach(windows, i, w) {
		json_t *c = json_object_get(w, "chip");
		const char *file = json_string_value(json_object_get(w, "file"));
		if (!json_is_integer(c) || json_integer_value(c) < 0 || json_integer_value(c) >= (json_int_t)p->nchips ||
		    !file || strchr(file, '/')) {
			snr_fmt(err, errlen, "%s: window %zu: wants a \"chip\" of 0 to %u and a \"file\" in the set", path,
				i, p->nchips - 1);
			goto out;
		}
		struct pod_chip *pc = &p->chips[json_integer_value(c)];
		if (pc->path) {
			snr_fmt(err, errlen, "%s: chip %lld is named twice", path, (long long)json_integer_value(c));
			goto out;
		}
		pc->chip = (unsigned)json_integer_value(c);
		size_t n = strlen(dir) + strlen(file) + 2;
		pc->path = snr_xmalloc(n);
		snprintf(pc->path, n, "%s/%s", dir, file);
	}
	for (unsigned c = 0; c < p->nchips; c++)
		if (!p->chips[c].path) {
			snr_fmt(err, errlen, "%s: chip %u of the pod's %u has no metrics file in the set", path, c,
				p->nchips);
			goto out;
		}
	for (unsigned c = 0; c < p->nchips; c++)
		if (load_chip(p, &p->chips[c], err, errlen, status))
			goto out;
	qsort(p->res, p->nres, sizeof(*p->res), cmp_res);
	for (size_t r = 0; r < p->nres; r++)
		qsort(p->res[r].samples, p->res[r].nsamples, sizeof(struct pod_sample), cmp_sample);
	rc = 0;
out:
	json_decref(man);
	return rc;
}

void pod_free(struct pod *p)
{
	for (unsigned c = 0; p->chips && c < p->nchips; c++) {
		struct pod_chip *pc = &p->chips[c];
		if (pc->m)
			snr_metrics_close(pc->m);
		if (pc->lines)
			snr_lines_free(pc->lines);
		free(pc->path);
		free(pc->peers);
		free(pc->waits);
		free(pc->dma_busy);
	}
	free(p->chips);
	for (size_t r = 0; r < p->nres; r++)
		free(p->res[r].samples);
	free(p->res);
	free(p->dir);
	memset(p, 0, sizeof(*p));
}

const char *pod_where(struct pod *p, unsigned chip, uint64_t pc, char *buf, size_t len)
{
	char sym[512];
	struct pod_chip *c = &p->chips[chip];
	snr_metrics_symbolize(c->m, pc, sym, sizeof(sym));
	return snr_lines_where(c->lines, pc, sym, buf, len);
}

json_t *pod_source_json(struct pod *p, unsigned chip, uint64_t pc)
{
	char sym[512];
	struct pod_chip *c = &p->chips[chip];
	snr_metrics_symbolize(c->m, pc, sym, sizeof(sym));
	return snr_lines_source_json(c->lines, pc, sym);
}
