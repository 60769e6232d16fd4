/*
 * source.h: where an analysis gets its events. Every analysis takes a trace
 * (.snrt, replayed in-process in its simulator) or a metrics file (.snrm,
 * read back); both deliver the same tracker events, in the same order, to
 * the analysis's callbacks, and the same context: symbols, the machine
 * config, the replay's summary.
 */
#ifndef SNR_ANALYZER_SOURCE_H
#define SNR_ANALYZER_SOURCE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <jansson.h>

#include "lib/snr_config.h"
#include "lib/snr_lines.h"
#include "sim/snr_tracker.h"

struct snr_trace;
struct snr_metrics;

struct snr_source {
	char *path;
	bool is_trace;          /* .snrt replayed (else .snrm read) */
	struct snr_config cfg;  /* the machine config the events were made under */
	char *meta_json;        /* the trace's META (for a .snrm, the trace META it stored) */
	uint64_t instructions, cycles;
	uint64_t stall_cycles[SNR_STALL_COUNT]; /* the replay's, by enum snr_stall_cause */
	bool verified;          /* the replay matched the recording */
	/* symbolization: trace or metrics symbols */
	struct snr_trace *trace;
	struct snr_metrics *metrics;
	/* the program's line tables (lib/snr_lines.h), NULL without them */
	struct snr_lines *lines;
};

/* Opens path (.snrt or .snrm, told apart by content) and delivers every
 * event to t. For a trace, sim/config_path are as for `snr replay`
 * (NULL: defaults). Returns 0, or -1 with err filled (a divergent replay is
 * an error: analyses of a replay that did not reproduce the recording would
 * mislead). */
int snr_source_run(struct snr_source *src, const char *path, const char *sim, const char *config_path,
		   const struct snr_tracker *t, char *err, size_t errlen);
void snr_source_close(struct snr_source *src);
/* When set, snr_source_run writes the summary of every input it ran (the
 * object of snr_replay_summary, one line of JSON) here: how a parent running
 * one window's command in a child learns its figures (analyzer/windows.h). */
extern FILE *snr_source_summary_sink;
/* "func+0x1c" or "0x..." */
const char *snr_source_symbolize(const struct snr_source *src, uint64_t pc, char *buf, size_t len);
/* Where pc is for a user: "attn.c:97 (attn)" from the line tables, else
 * the symbol as snr_source_symbolize gives it. */
const char *snr_source_where(const struct snr_source *src, uint64_t pc, char *buf, size_t len);
/* The same with the file's base name ("attn.c:97 (attn)"), for narrow
 * columns and timeline labels. */
const char *snr_source_where_short(const struct snr_source *src, uint64_t pc, char *buf, size_t len);
/* The "source" object printed beside a pc in --json output:
 * {"file", "line", "function"[, "inlined"]} (snr_place_json), or
 * {"function": "func+0x1c"} without line tables. A new reference. */
json_t *snr_source_json(const struct snr_source *src, uint64_t pc);
/* snr_source_json written to f (compact), for outputs printed by hand. */
void snr_source_json_print(FILE *f, const struct snr_source *src, uint64_t pc);
/* The place of pc (NULL: no line tables or no line for it). */
const struct snr_place *snr_source_place(const struct snr_source *src, uint64_t pc);

#endif
