/*
 * causal_page.h: the causal profile as a page of plots, as COZ draws them:
 * one chart per candidate, the predicted change of each progress point's
 * throughput (and latency p50/p99) against the candidate's speedup, ranked
 * as in the text view (vendored ECharts, self-contained HTML).
 */
#ifndef SNR_CAUSAL_PAGE_H
#define SNR_CAUSAL_PAGE_H

#include <stddef.h>
#include <stdio.h>

#include "analyzer/causal.h"

/* Writes the page to out (through snr_outfile: never over an input, an
 * existing file only with --force). 0, or -1 with err. */
int snrh_causal_page(const struct snrh_causal *c, const char *trace_path, const char *out, char *err, size_t errlen);

/* The parts the page is made of, shared with `snr report H.snrh`'s host
 * page (analyzer/report_host.c): the script that draws the plots
 * (drawCausal(), after ECharts is loaded, into #plots), the paragraph that
 * says how to read them, and the data (the script element #causal-data,
 * snrh_causal_json's document). */
extern const char snrh_causal_plots_js[];
void snrh_causal_note_write(FILE *f);
void snrh_causal_data_write(FILE *f, const struct snrh_causal *c);

#endif
