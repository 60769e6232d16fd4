/*
 * cmd_analyze.c: `snr analyze KIND ...`, dispatching to the analyses in
 * analyzer/. Each analysis is one row of the table below and one function
 * `int snr_analyze_KIND(int argc, char **argv)` (argv[0] = KIND).
 */
#include <stdio.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "lib/snr_util.h"
#include "analyzer/deps.h"
#include "snr_cli.h"

struct analysis {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct analysis analyses[] = {
	{"dma", snr_analyze_dma, "per DMA: issue, wait, link, base-latency and transfer stall, slack"},
	{"vmem", snr_analyze_vmem, "VMEM pages over time: used, unused, free, largest free region"},
	{"util", snr_analyze_util, "busy fraction per window: scalar, vector, MXU, DMA links, HBM"},
	{"deps", snr_analyze_deps, "dependency graph, conservative and relaxed; per DMA its backtail"},
	{"suggest", snr_analyze_suggest, "Algorithm 2: DMA moves that remove stalls (--verify: what-if replay)"},
	{NULL, NULL, NULL},
};

static void usage(FILE *f)
{
	fprintf(f, "usage: snr analyze KIND T.snrt|M.snrm [OPTIONS]\n\nkinds:\n");
	for (size_t i = 0; analyses[i].name; i++)
		fprintf(f, "  %-8s %s\n", analyses[i].name, analyses[i].summary);
	fprintf(f, "\n`snr analyze KIND --help` describes one. A trace is replayed in its simulator first;\n"
		   "a metrics file (snr replay -o) is read back. --json output is documented in\n"
		   "docs/analyses.md. Every pc is printed with its source line when the program\n"
		   "has line tables (snr cc -g); --elf PROG names the program if the trace's is gone.\n");
}

int snr_cmd_analyze(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	for (size_t i = 0; analyses[i].name; i++)
		if (!strcmp(argv[1], analyses[i].name))
			return analyses[i].run(argc - 1, argv + 1);
	snr_err("analyze: unknown analysis '%s'", argv[1]);
	usage(stderr);
	return 2;
}
