/*
 * fuzz_trace.c: libFuzzer target for the readers of snr's binary files:
 * the trace (.snrt) and metrics (.snrm) readers, through every accessor.
 *
 * Random bytes rarely get past the CRC-32Cs, so when the input's last byte
 * is odd the harness first repairs every chunk's checksums (walking the
 * chunk chain as the reader does): the payload parsers behind the CRCs get
 * fuzzed too. Readers must return an error or data, never crash, hang or
 * leak (the fuzz build runs under ASan and UBSan).
 *
 * With FUZZ_STANDALONE this is a main() that replays files, so the kept
 * corpus (tests/fuzz/corpus/trace/) runs as a unit test in every build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "lib/snr_chunkfile.h"
#include "lib/snr_trace.h"
#include "replayer/metrics.h"

/* Sinks for what the readers hand out, so every byte is touched. */
static volatile uint64_t events;

static void on_insn(void *u, const struct snr_ev_insn *e) { (void)u, events += e->index; }
static void on_stall(void *u, const struct snr_ev_stall *e) { (void)u, events += e->cycles; }
static void on_dma(void *u, const struct snr_ev_dma *e) { (void)u, events += e->bytes; }
static void on_mem(void *u, const struct snr_ev_mem *e) { (void)u, events += e->addr; }
static void on_reg(void *u, const struct snr_ev_reg *e) { (void)u, events += e->reg; }
static void on_busy(void *u, const struct snr_ev_busy *e) { (void)u, events += e->end; }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_write_input("trace", data, size);
	if (!path)
		return 0;

	char err[700];
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	if (t) {
		struct snr_trace_step s;
		uint64_t n = 0;
		char sym[128];
		int rc;
		uint64_t *pcs = NULL;
		size_t cap = 0;
		while ((rc = snr_trace_next(t, &s)) == 1 && n < 1000000) {
			if (n == cap) {
				cap = cap ? 2 * cap : 1024;
				pcs = realloc(pcs, cap * sizeof(*pcs));
				if (!pcs)
					abort();
			}
			pcs[n++] = s.pc;
			snr_trace_symbolize(t, s.pc, sym, sizeof(sym));
			for (unsigned i = 0; i < s.nregs; i++)
				events += s.regs[i].val[0];
			for (unsigned i = 0; i < s.nmem; i++)
				if (s.mem[i].len)
					events += s.mem[i].data[s.mem[i].len - 1];
		}
		if (n < 1000000) {
			/* The plain steps' reader (snr_trace_next_plain, the replayer's
			 * trace load) with snr_trace_next for the others reads the same
			 * pcs and ends the same way. */
			snr_trace_rewind(t);
			uint64_t m = 0, buf[5];
			int rc2 = 1;
			for (size_t round = 0; rc2 == 1 && m <= n; round++) {
				size_t k = snr_trace_next_plain(t, buf, 1 + round % 5);
				for (size_t i = 0; i < k; i++, m++)
					if (m >= n || buf[i] != pcs[m])
						abort();
				if (!k && (rc2 = snr_trace_next(t, &s)) == 1) {
					if (m >= n || s.pc != pcs[m])
						abort();
					m++;
				}
			}
			if (m != n || rc2 != rc)
				abort();
		}
		free(pcs);
		const uint8_t *const *regs;
		size_t nb;
		const struct snr_trace_mem *blocks;
		const uint64_t *hashes;
		snr_trace_digest(t, &regs, &nb, &blocks, &hashes);
		snr_trace_end_json(t);
		snr_trace_rewind(t);
		snr_trace_close(t);
	}
	struct snr_metrics *m = snr_metrics_open(path, err, sizeof(err));
	if (m) {
		struct snr_tracker tr = {
			.abi_version = SNR_TRACKER_ABI_VERSION,
			.on_issue = on_insn,
			.on_retire = on_insn,
			.on_stall = on_stall,
			.on_dma = on_dma,
			.on_mem = on_mem,
			.on_reg = on_reg,
			.on_busy = on_busy,
		};
		snr_metrics_replay(m, &tr, err, sizeof(err));
		snr_metrics_close(m);
	}
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
int main(int argc, char **argv) { return fuzz_replay_corpus("fuzz_trace", argc, argv); }
#endif
