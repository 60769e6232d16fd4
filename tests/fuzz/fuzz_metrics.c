/*
 * fuzz_metrics.c: libFuzzer target for the metrics file (.snrm) as the
 * analyzer reads it: snr_source_run's META, config and SUMMARY checks, then
 * the events through every analysis `snr report` runs in one pass (dma, vmem
 * with its heatmap rows, util, the dependency graph and Algorithm 2's
 * suggestions without what-ifs, annotate's per-pc accumulator). fuzz_trace.c
 * covers the container and the event decoder alone; this target covers what
 * the analyses do with whatever events a well-checksummed file holds. When
 * the input's last byte is odd the chunk checksums are repaired first
 * (fuzz_common.h). Everything must end in an error or a result, never crash,
 * hang or read out of bounds (ASan and UBSan in the fuzz build). With
 * FUZZ_STANDALONE, main() replays the kept corpus (tests/fuzz/corpus/metrics/)
 * as a unit test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/analyses.h"
#include "analyzer/annotate.h"
#include "analyzer/deps.h"
#include "fuzz_common.h"
#include "replayer/metrics.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	/* only metrics files: a trace would be replayed, which fuzz_trace covers */
	if (size < 8 || memcmp(data, SNR_METRICS_MAGIC, 8))
		return 0;
	const char *path = fuzz_write_input("metrics", data, size);
	if (!path)
		return 0;
	char err[1024];
	struct an_annot_acc *acc = an_annot_acc_new();
	struct snr_deps_opts o = {.an_want = AN_WANT_ALL, .annot = acc};
	struct snr_deps g;
	struct an_annot annot;
	int rc = snr_deps_run(&g, path, &o, err, sizeof(err));
	char aerr[600];
	if (an_annot_finish(acc, &g.an.src, &annot, aerr, sizeof(aerr)) && !rc)
		rc = 1;
	if (!rc) {
		struct an_data *d = &g.an;
		json_decref(an_dma_json(d));
		uint64_t rows;
		uint32_t *row_of_page = an_vmem_touched_rows(d, 128, &rows);
		struct an_vmem v;
		if (!an_vmem_compute_rows(d, 0, row_of_page, rows, &v)) {
			json_decref(an_vmem_json(d, &v, true));
			an_vmem_free(&v);
		}
		free(row_of_page);
		struct an_util u;
		if (!an_util_compute(d, 0, &u)) {
			json_decref(an_util_json(d, &u));
			an_util_free(&u);
		}
		json_decref(an_annot_json(&annot, &d->src, NULL));
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		if (mem) {
			snr_suggest_write(&g, &o, 0, true, mem, err, sizeof(err));
			fclose(mem);
		}
		free(text);
	}
	an_annot_free(&annot);
	snr_deps_free(&g);
	unlink(path);
	return 0;
}

#ifndef FUZZ_STANDALONE
/* chunks dropped, repeated, reordered, numbers made extreme: behind valid CRCs */
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max, unsigned int seed)
{
	return fuzz_chunk_mutate(data, size, max, seed);
}
#endif

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv) { return fuzz_replay_corpus("fuzz_metrics", argc, argv); }
#endif
