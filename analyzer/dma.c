/*
 * dma.c: `snr analyze dma`, the paper's DMA stall analysis (§4.3, Figure
 * 4). Per DMA: its ISSUE and the WAIT that consumed it, its link, bytes and
 * phase cycles, and how the WAIT's stall splits into base latency and
 * transfer, or the slack when it had completed before the WAIT came. The
 * numbers are the timing model's own (the WAITED event, docs/ta1-timing.md
 * Rule 4); this file orders and prints them, worst stall first.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "lib/snr_util.h"

static void usage(FILE *f)
{
	fprintf(f, "usage: snr analyze dma T.snrt|M.snrm [--config M.json] [--json]\n"
		   "\n"
		   "Per DMA: ISSUE and WAIT (pc, symbol+offset), link, bytes, issue/start/complete/wait\n"
		   "cycles, the WAIT's stall on it split into base latency and transfer, or its slack\n"
		   "(Figure 4 of the paper); sorted by stall, then totals. docs/analyses.md.\n");
}

static void cell(char *buf, size_t len, uint64_t c)
{
	if (c == AN_NONE)
		snprintf(buf, len, "-");
	else
		snprintf(buf, len, "%llu", (unsigned long long)c);
}

int snr_analyze_dma(int argc, char **argv)
{
	bool json;
	struct an_data d;
	int rc = an_cli_load(argc, argv, "dma", NULL, NULL, &json, AN_WANT_DMA, usage, &d);
	if (rc >= 0)
		return rc;
	if (json) {
		int wrc = an_dma_json_write(&d, stdout);
		putchar('\n');
		an_free(&d);
		if (wrc) {
			snr_err("analyze dma: cannot write the JSON document to the standard output");
			return 1;
		}
		return 0;
	}
	printf("%llu DMAs in %llu instructions, %llu cycles (Tb %llu); sorted by stall\n\n",
	       (unsigned long long)d.ndmas, (unsigned long long)d.src.instructions, (unsigned long long)d.cycles,
	       (unsigned long long)d.src.cfg.dma_base_latency_cycles);
	printf("%5s %-12s %9s %8s %8s %8s %8s %6s %6s %6s %s\n", "id", "link", "bytes", "issue", "start",
	       "complete", "wait", "base", "xfer", "slack", "case");
	size_t *idx = an_dma_sorted(&d);
	uint64_t tb = 0, tt = 0, ts = 0, bytes = 0, n = 0;
	for (size_t k = 0; idx[k] != SIZE_MAX; k++) {
		const struct an_dma *m = &d.dmas[idx[k]];
		char c[4][24], a[600], b[600];
		cell(c[0], sizeof(c[0]), m->issue);
		cell(c[1], sizeof(c[1]), m->start);
		cell(c[2], sizeof(c[2]), m->complete);
		cell(c[3], sizeof(c[3]), m->wait);
		printf("%5llu %-12s %9llu %8s %8s %8s %8s %6llu %6llu %6llu %s\n", (unsigned long long)m->id,
		       m->link >= 0 ? d.links[m->link].name : "-", (unsigned long long)m->bytes, c[0], c[1], c[2],
		       c[3], (unsigned long long)m->stall_base, (unsigned long long)m->stall_transfer,
		       (unsigned long long)m->slack, an_dma_case(m));
		an_insn_name(&d, m->issue_index, a, sizeof(a));
		if (m->wait == AN_NONE)
			snprintf(b, sizeof(b), "(not waited in the window)");
		else
			an_insn_name(&d, m->wait_index, b, sizeof(b));
		printf("      issue %s  wait %s\n", a, b); /* whole: a function name is never cut */
		tb += m->stall_base;
		tt += m->stall_transfer;
		ts += m->slack;
		bytes += m->bytes;
		n++;
	}
	free(idx);
	uint64_t st = tb + tt;
	printf("\ntotal: %llu DMAs, %llu bytes; stall %llu cycles (%.1f%% of %llu) = base %llu + transfer %llu; "
	       "slack %llu\n",
	       (unsigned long long)n, (unsigned long long)bytes, (unsigned long long)st,
	       d.cycles ? 100.0 * (double)st / (double)d.cycles : 0.0, (unsigned long long)d.cycles,
	       (unsigned long long)tb, (unsigned long long)tt, (unsigned long long)ts);
	an_free(&d);
	return 0;
}
