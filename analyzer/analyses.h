/*
 * analyses.h: the DMA, VMEM and utilization analyses, the Perfetto export
 * and the HTML report. All of them start from one collection pass
 * (an_load): the tracker events of a trace replayed in-process or of a
 * metrics file read back (source.h), kept in compact arrays, then each
 * analysis derives its tables from those arrays. docs/analyses.md defines
 * every quantity and the --json schemas.
 */
#ifndef SNR_ANALYZER_ANALYSES_H
#define SNR_ANALYZER_ANALYSES_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/source.h"
#include "lib/snr_spill.h"

/* What an_load keeps (the tracker registers only what is asked for). */
enum {
	AN_WANT_DMA = 1 << 0,  /* DMA records, instruction pcs */
	AN_WANT_BUSY = 1 << 1, /* unit busy intervals */
	AN_WANT_VMEM = 1 << 2, /* VMEM accesses */
	AN_WANT_ALL = 7,
};

#define AN_NONE UINT64_MAX

struct an_dma {
	uint64_t id;
	int64_t issue_index, wait_index; /* -1: before the window / not waited */
	uint64_t bytes, src_addr, dst_addr;
	uint16_t src_space, dst_space, src_chip, dst_chip, flag;
	uint64_t issue, start, complete, wait; /* cycles; AN_NONE if that phase was not seen */
	uint64_t active;                       /* the transfer became active on its link (derived) */
	uint64_t base_cycles, transfer_cycles;
	uint64_t stall_base, stall_transfer, slack;
	int link; /* index into an_data.links, -1 for a DMA without a link (0 bytes) */
	int32_t peer_owner; /* another chip's ta.dma.notify whose signal a WAIT here took: that chip; else -1 */
};

struct an_link {
	uint16_t src_space, src_chip, dst_space, dst_chip;
	char name[40]; /* "hbm0->vmem0" */
};

/* Host code (another ISA than TA1) has no units that report busy
 * intervals: collect.c derives them from each instruction's issue and
 * retire: SNR_UNIT_SCALAR its first cycle, AN_UNIT_MEMORY the rest. */
#define AN_UNIT_MEMORY SNR_UNIT_COUNT

struct an_busy {
	uint64_t start, end, index;
	uint8_t unit;
};

struct an_vmev {
	uint64_t cycle;
	uint64_t off; /* from the start of VMEM */
	uint32_t bytes;
	uint8_t write;
};

struct an_data {
	struct snr_source src;
	int ta1;       /* the trace's ISA is TA1: 1, another: 0, not known yet: -1 */
	unsigned chip; /* the replayed chip */
	uint64_t cycles;
	/* What grows with the window is spilled (lib/snr_spill.h): per
	 * instruction its pc (8 bytes, in the file), per busy interval and per
	 * VMEM access one record (32 and 24 bytes, in the file); memory holds a
	 * fixed budget of each (4, 4 and 8 MiB) and the DMA records. */
	struct snr_spill *pcs; /* uint64_t: the pc of instruction index i */
	struct an_dma *dmas; /* by id - 1 */
	size_t ndmas, capdmas;
	struct an_link links[64];
	int nlinks;
	struct snr_spill *busy; /* struct an_busy, in the model's order */
	struct snr_sorted *vm;  /* struct an_vmev, by cycle, writes before reads */
	uint64_t vmem_pages, page_bytes;
};

int an_load(struct an_data *d, const char *path, const char *config_path, unsigned want, char *err, size_t errlen);
/* an_load in two halves, for a pass that feeds other callbacks too
 * (deps.c): the callbacks that collect what want asks for into d (d zeroed
 * by the caller; t->user is d), then, after the source ran into d->src, the
 * derived fields. */
void an_collect_tracker(struct an_data *d, unsigned want, struct snr_tracker *t);
void an_collect_finish(struct an_data *d);

/* The command line dma, vmem and util share: [--NUMOPT CYCLES] [--config M.json]
 * [--json] FILE (numopt NULL: no number option), then an_load into d.
 * Returns -1 when d is loaded and the command goes on, otherwise the exit
 * status to return (0 after --help, 2 bad usage, 1 load failure). */
int an_cli_load(int argc, char **argv, const char *name, const char *numopt, uint64_t *num, bool *json,
		unsigned want, void (*usage)(FILE *), struct an_data *d);
void an_free(struct an_data *d);
/* The pc of instruction index i < d->pcs->n */
static inline uint64_t an_pc(const struct an_data *d, uint64_t i)
{
	return *(const uint64_t *)snr_spill_at(d->pcs, i);
}
/* The first error of a spilled array (a temporary file that could not be
 * written or read), or NULL: a result computed from it is not whole. */
const char *an_spill_error(const struct an_data *d);
/* "#5 0x80000123 attn.c:38 (attn)" (its line; without line tables the symbol
 * "func+0x1c"), or "(before the window)" for index -1 */
const char *an_insn_name(const struct an_data *d, int64_t index, char *buf, size_t len);
const char *an_space_name(unsigned space);
/* qsort order of VMEM accesses: cycle, then writes before reads */
int an_cmp_vmev(const void *a, const void *b);
/* qsort order of uint64_t[2] pairs: first, then second element */
int an_cmp_u64pair(const void *a, const void *b);
uint64_t an_dma_stall(const struct an_dma *m);
const char *an_dma_case(const struct an_dma *m);

/* ---- VMEM ---- */
struct an_vmem {
	uint64_t pages, page_bytes, blocks, pages_per_block, interval, nsamples;
	uint64_t *t;                    /* sample cycles */
	uint32_t *used, *unused, *largest, *largest_at; /* per sample, in pages */
	uint32_t *heat;                 /* nsamples x blocks: occupied pages per block */
	uint32_t *row_of_page;          /* the heatmap's row (block) of each page, UINT32_MAX: none;
					   pages_per_block 0 when rows are not uniform blocks */
	/* final page classes over the window */
	uint64_t pages_used, pages_unused, pages_livein, pages_untouched;
	double free_median_pct, largest_median_pct, unused_median_pct;
	char err[512]; /* when compute returned -1: a temporary file failed */
};
/* 0, or -1 with v->err (a temporary file failed; v is then not whole) */
int an_vmem_compute(const struct an_data *d, uint64_t interval, struct an_vmem *v);
/* The same with the heatmap's rows given: row_of_page[p] for every page
 * (UINT32_MAX: in no row), nrows rows. The rest covers all of VMEM. */
int an_vmem_compute_rows(const struct an_data *d, uint64_t interval, const uint32_t *row_of_page, uint64_t nrows,
			 struct an_vmem *v);
/* Rows of the pages the window touched, in address order, at most max_rows
 * (each the same number of touched pages but the last); the caller frees. */
uint32_t *an_vmem_touched_rows(const struct an_data *d, uint64_t max_rows, uint64_t *nrows);
void an_vmem_free(struct an_vmem *v);
json_t *an_vmem_json(const struct an_data *d, const struct an_vmem *v, bool heatmap);

/* ---- utilization ---- */
enum { AN_UTIL_SCALAR, AN_UTIL_VECTOR, AN_UTIL_MXU, AN_UTIL_DMA, AN_UTIL_HBM, AN_UTIL_FIXED };
enum { AN_UTIL_HOST_SCALAR, AN_UTIL_HOST_MEMORY, AN_UTIL_HOST_COLS }; /* host code's columns */
struct an_util {
	uint64_t window, nwindows;
	int ncols;           /* AN_UTIL_FIXED + nlinks */
	char (*names)[40];   /* per column */
	double *busy;        /* nwindows x ncols: fraction in [0, 1] */
	double *total;       /* per column over the window */
};
int an_util_compute(const struct an_data *d, uint64_t window, struct an_util *u);
void an_util_free(struct an_util *u);
json_t *an_util_json(const struct an_data *d, const struct an_util *u);
json_t *an_dma_json(const struct an_data *d);
/* an_dma_json in parts: one DMA's object, and the document around the
 * array arr (stolen) of the DMAs idx lists (an_dma_sorted's order; the
 * totals are theirs) */
json_t *an_dma_obj_json(const struct an_data *d, const struct an_dma *m);
json_t *an_dma_doc_json(const struct an_data *d, const size_t *idx, json_t *arr);
/* The same document written to f one DMA at a time (json_dumpf's
 * JSON_INDENT(1) text, byte for byte); 0, or -1 on a failed write */
int an_dma_json_write(const struct an_data *d, FILE *f);
/* DMA indices sorted by stall (descending), then id */
size_t *an_dma_sorted(const struct an_data *d);

/* commands */
int snr_analyze_dma(int argc, char **argv);
int snr_analyze_vmem(int argc, char **argv);
int snr_analyze_util(int argc, char **argv);
int snr_cmd_export(int argc, char **argv);
int snr_cmd_report(int argc, char **argv);
/* The report of several windows (report_windows.c): args are sets or files. */
int an_report_windows(int nargs, char **args, const char *out_path, const char *config, uint64_t interval,
		      const char *source_dir, uint64_t inline_max);
/* HTML text escaped; JSON inside <script> with every '<' escaped (report.c) */
void html_text(FILE *f, const char *s);
void script_json(FILE *f, const char *s);

/* shared by the commands: cycles to microseconds */
static inline double an_us(const struct an_data *d, uint64_t cycle)
{
	return (double)cycle * 1e6 / (double)d->src.cfg.clock_hz;
}
json_t *an_source_json(const struct an_data *d);

#endif
