/*
 * snr_set.h: several windows of one run, and several inputs on one command
 * line (docs/trace-format.md, "Trace sets").
 *
 * A set is a folder: one normal trace (or metrics file) per window,
 * window-K.snrt (window-K.snrm), and a manifest, set.json, naming them in
 * order with where each window started. Every tool reads a window's file as
 * it reads any trace; the readers that take a set (replay, analyze,
 * annotate, report) expand it into its windows here.
 *
 * Writing is journaled like a single trace: the folder is DIR.partial while
 * the windows are recorded, its manifest rewritten (atomically) after each
 * finished window with "complete": false, and renamed to DIR once the last
 * window is written with "complete": true. A killed recorder leaves
 * DIR.partial holding every finished window (and the journal of the one in
 * flight); readers take such a set as partial: refused (exit 3) unless
 * --allow-truncated (lib/snr_partial.h).
 */
#ifndef SNR_SET_H
#define SNR_SET_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNR_SET_MANIFEST "set.json"

/* ---- writing ---- */
struct snr_set_writer;

/* Creates DIR.partial (refused if DIR or DIR.partial exists: nothing the
 * user has is replaced). kind: "trace" or "metrics". info: fields copied
 * into the manifest (a reference is taken). NULL with err filled. */
struct snr_set_writer *snr_set_create(const char *dir, const char *kind, json_t *info, char *err, size_t errlen);
/* Where window k's file goes (inside DIR.partial); valid until the next call. */
const char *snr_set_window_path(struct snr_set_writer *w, uint64_t k);
/* Window k is written: entry (a reference is taken) gets "window" and
 * "file", is appended, and the manifest is rewritten. 0 or -1. */
int snr_set_add(struct snr_set_writer *w, uint64_t k, json_t *entry, char *err, size_t errlen);
/* The set is whole: "complete": true, end reason, DIR.partial renamed to
 * DIR; the writer is freed. 0 or -1 (the writer freed either way). */
int snr_set_finish(struct snr_set_writer *w, const char *end, char *err, size_t errlen);
/* Stops without completing: the manifest says why (end) and DIR.partial
 * stays, with every window added; the writer is freed. */
void snr_set_abandon(struct snr_set_writer *w, const char *end);
const char *snr_set_writer_dir(const struct snr_set_writer *w); /* DIR.partial */

/* ---- reading ---- */

/* One window to read: a trace or metrics file, from a set or given alone. */
struct snr_input {
	char *path;
	char *group;         /* the set's name (its folder's base name without .snrs/.snrms), or the file's */
	uint64_t set_window; /* index within its set (0 for a file given alone) */
	bool in_set;
	int64_t hit;         /* the breakpoint hit (1-based) the window started at, -1 if not known */
};

struct snr_inputs {
	struct snr_input *v;
	size_t n;
	bool any_set;
};

/* True if path is a folder holding a manifest. */
bool snr_is_set(const char *path);
/* For the readers of one window: -1 with err naming the set and its first
 * window if path is a set (0 otherwise). */
int snr_set_refuse(const char *path, char *err, size_t errlen);
/* Expands the command line's inputs (files and sets) into windows, in
 * order. A partial set is checked by snr_partial_check. 0, or -1 with err
 * filled (a missing window file, a bad manifest, a partial set refused). */
int snr_inputs_expand(char *const *args, int nargs, struct snr_inputs *in, char *err, size_t errlen);
void snr_inputs_free(struct snr_inputs *in);
/* {"window": i, "group": ..., "set_window": k, "path": ...[, "hit": h]}: the
 * fields a per-window JSON result carries. A new reference. */
json_t *snr_input_json(const struct snr_inputs *in, size_t i);

#endif
