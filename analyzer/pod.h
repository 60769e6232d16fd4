/*
 * pod.h: a pod's metrics set read whole (pod_load.c) and analyzed across its
 * chips (pod.c, `snr analyze pod`): the collective's critical path through
 * peer signals, each port's and link's use over time, and each chip's time
 * split Elk's way. docs/analyses.md, "A pod".
 */
#ifndef SNR_ANALYZER_POD_H
#define SNR_ANALYZER_POD_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/snr_lines.h"
#include "replayer/metrics.h"
#include "sim/snr_tracker.h"

struct pod_interval {
	uint64_t start, end;
};

struct pod_chip {
	unsigned chip;
	char *path;
	struct snr_metrics *m;
	struct snr_lines *lines;
	uint64_t cycles, instructions;
	uint64_t stall_cycles[SNR_STALL_COUNT];
	struct snr_ev_peer *peers; /* the peer signals its WAITs consumed, in file order */
	size_t npeers, cap_peers;
	struct pod_interval *waits; /* its WAITs' stalls (dma-base, dma-transfer, peer) */
	size_t nwaits, cap_waits;
	struct pod_interval *dma_busy; /* its DMA engine busy (BUSY, unit dma) */
	size_t ndma_busy, cap_dma_busy;
};

struct pod_sample {
	uint64_t start, end;
	double bytes, busy, contended;
};

struct pod_resource {
	uint32_t resource;
	uint8_t kind; /* enum snr_fabric_kind */
	uint16_t from, to;
	uint64_t bytes_per_cycle;
	double bytes, busy, contended;
	struct pod_sample *samples;
	size_t nsamples, cap_samples;
};

struct pod {
	char *dir;
	unsigned nchips;
	struct pod_chip *chips;
	struct pod_resource *res; /* by resource number, those that moved bytes */
	size_t nres, cap_res;
	uint64_t nsamples;
};

/* Reads the set DIR: its manifest must say "pod" and name chips 0..N-1 once
 * each, every file a finished metrics file. 0, or -1 with err naming what is
 * wrong and where; the exit status to use in *status (2 bad input, 3 a
 * damaged or partial file). */
int pod_load(struct pod *p, const char *dir, char *err, size_t errlen, int *status);
void pod_free(struct pod *p);

/* "allreduce.c:70 (allreduce)", or the symbol, for chip c's pc. */
const char *pod_where(struct pod *p, unsigned chip, uint64_t pc, char *buf, size_t len);
json_t *pod_source_json(struct pod *p, unsigned chip, uint64_t pc);

/* The --json document of `snr analyze pod DIR` (the report's pod section);
 * NULL with err and the exit status in *status. */
json_t *an_pod_document(const char *dir, char *err, size_t errlen, int *status);
/* `snr analyze pod MSET [--json]` (argv[0] = "pod"). */
int snr_analyze_pod(int argc, char **argv);

#endif
