/*
 * windows.h: results per window and together, for the readers that take
 * several windows (a trace set, lib/snr_set.h, or several files): replay,
 * every analysis, annotate and report.
 *
 * Each window's replay summary (the object of snr_replay_summary: cycles,
 * stall cycles by cause, DMAs) is kept with the window's place (its index on
 * the command line, its group, its index in its set); "together" adds them
 * per group (a set is a group: e.g. prefill and decode) and over all
 * windows. Counts and cycles add; IPC is recomputed from the sums.
 *
 * an_windows_run runs one window's command in a child process (memory
 * bounded by one window; nothing of one window's state reaches the next),
 * capturing its standard output if asked and the summary of the window it
 * read (analyzer/source.c writes it to snr_source_summary_sink).
 */
#ifndef SNR_ANALYZER_WINDOWS_H
#define SNR_ANALYZER_WINDOWS_H

#include <jansson.h>
#include <stdio.h>

#include "lib/snr_set.h"

struct an_windows {
	const struct snr_inputs *in;
	json_t **summary; /* per window, NULL: none (its command failed) */
};

void an_windows_init(struct an_windows *w, const struct snr_inputs *in);
void an_windows_free(struct an_windows *w);
/* Window i's summary (a reference is taken). */
void an_windows_set(struct an_windows *w, size_t i, json_t *summary);
/* {"windows": [{window, group, set_window, path[, hit], summary}],
 *  "groups": [{group, windows, instructions, cycles, ipc, stall_cycles, dma_count, dma_bytes}],
 *  "total": {the same over every window}}. A new reference. */
json_t *an_windows_json(const struct an_windows *w);
/* The same as a table: a row per window, per group, and the total. */
void an_windows_print(const struct an_windows *w, FILE *f);

/* Runs fn(argc, argv) in a child. out: where its standard output goes (a
 * file opened by the caller; NULL: the parent's). *summary: the summary of
 * the window the child read (NULL if none). Returns the child's exit
 * status (3 when it refused a partial input). */
int an_windows_run(int (*fn)(int, char **), int argc, char **argv, FILE *out, json_t **summary);

#endif
