/*
 * snr_trace_int.h: what the trace writer (lib/snr_trace.c) and the journal's
 * compaction (lib/snr_trace_journal.c) share: how the trace proper batches
 * its steps into STEPS chunks. The batches must be the same whichever of
 * the two writes them, so that a trace finished from its journal is the
 * one the recorder would have written.
 */
#ifndef SNR_TRACE_INT_H
#define SNR_TRACE_INT_H

#include "snr_chunkfile.h"

#define STEPS_PER_CHUNK 4096
#define STEPS_BYTES_PER_CHUNK (4u << 20)

/* Appends a batch of step records (count of them, the first with index
 * first) as one zstd STEPS chunk, and empties the batch. */
int snr_trace_put_batch(struct snr_chunk_writer *out, struct snr_buf *batch, uint64_t first, uint64_t count);
/* What a journal held, as snr_trace_compact read it. */
struct snr_journal_end {
	uint64_t steps;
	bool has_digest;
	char *end_json; /* its END's text (allocated), NULL if it has none */
};
/* The journal's chunks into out: META and END as they are, SYMBOLS and
 * the DIGEST compressed, the steps in batches (the bytes the recorder's
 * trace has). Memory: a read buffer and one batch. je (optional) says what
 * it held. */
int snr_trace_compact(const char *journal, struct snr_chunk_writer *out, struct snr_journal_end *je);

#endif
