/*
 * snr_trace_journal.c: a recording's journal (PATH.partial, one raw STEPS
 * chunk per step or per held group: lib/snr_trace.c) compacted into the
 * trace proper, STEPS in batches of STEPS_PER_CHUNK steps (or 4 MiB),
 * zstd. Read front to back through lib/snr_chunkstream.c: a 100M window's
 * journal is gigabytes, and its memory here is the read buffer and one
 * batch.
 *
 * The recorder writes the window's DIGEST and END into the journal before
 * it compacts it, so a journal whose compaction failed (a full disk) is a
 * whole trace still: `snr trace finish` compacts it later
 * (snr_trace_finish_journal) into the bytes the recorder would have written.
 */
#include <errno.h>
#include <jansson.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snr_chunkstream.h"
#include "snr_output.h"
#include "snr_partial.h"
#include "snr_trace.h"
#include "snr_trace_int.h"
#include "snr_util.h"

int snr_trace_put_batch(struct snr_chunk_writer *out, struct snr_buf *batch, uint64_t first, uint64_t count)
{
	if (!count)
		return 0;
	struct snr_buf b = {0};
	snr_buf_varint(&b, first);
	snr_buf_varint(&b, count);
	snr_buf_put(&b, batch->p, batch->len);
	int rc = snr_chunkw_put(out, SNR_CHUNK_STEPS, b.p, b.len, true);
	free(b.p);
	batch->len = 0;
	return rc;
}

int snr_trace_compact(const char *journal, struct snr_chunk_writer *out, struct snr_journal_end *je)
{
	if (je)
		*je = (struct snr_journal_end){0};
	struct snr_chunk_stream js;
	char err[600];
	/* read front to back: the journal has a chunk per step */
	if (snr_chunks_open(&js, journal, SNR_TRACE_MAGIC, "snr trace", SNR_TRACE_VERSION, SNR_TRACE_VERSION, err,
			    sizeof(err))) {
		snr_fmt(out->err, sizeof(out->err), "reading the journal back: %s", err);
		return -1;
	}
	struct snr_buf batch = {0};
	uint64_t first = 0, count = 0;
	int rc = 0;
	for (size_t i = 0; !rc; i++) {
		uint16_t type;
		const uint8_t *p;
		size_t n;
		int got = snr_chunks_next(&js, SNR_CHUNK_LINES, &type, &p, &n);
		if (got < 0) {
			snr_fmt(out->err, sizeof(out->err), "reading the journal back: %s", js.err);
			rc = -1;
			break;
		}
		if (got == 0)
			break;
		if (type != SNR_CHUNK_STEPS) {
			if (type == SNR_CHUNK_DIGEST || type == SNR_CHUNK_END || type == SNR_CHUNK_LINES) { /* the steps end before them */
				rc = snr_trace_put_batch(out, &batch, first, count);
				first += count;
				count = 0;
			}
			if (!rc)
				rc = snr_chunkw_put(out, type, p, n, type != SNR_CHUNK_META && type != SNR_CHUNK_END);
			if (je && type == SNR_CHUNK_DIGEST)
				je->has_digest = true;
			if (je && type == SNR_CHUNK_END) {
				free(je->end_json);
				je->end_json = snr_xmalloc(n + 1);
				memcpy(je->end_json, p, n);
				je->end_json[n] = 0;
			}
			continue;
		}
		struct snr_cursor cu = {p, p + n, 0};
		uint64_t index = snr_cur_varint(&cu), k = snr_cur_varint(&cu);
		if (cu.bad || index != first + count) {
			snr_fmt(out->err, sizeof(out->err), "%s: journal chunk %zu is out of order", journal, i);
			rc = -1;
			break;
		}
		snr_buf_put(&batch, cu.p, (size_t)(cu.end - cu.p));
		count += k;
		if (count >= STEPS_PER_CHUNK || batch.len >= STEPS_BYTES_PER_CHUNK) {
			rc = snr_trace_put_batch(out, &batch, first, count);
			first += count;
			count = 0;
		}
	}
	if (!rc)
		rc = snr_trace_put_batch(out, &batch, first, count);
	if (je)
		je->steps = first + count;
	free(batch.p);
	snr_chunks_close(&js);
	return rc;
}

int snr_trace_finish_journal(const char *journal, const char *path, uint64_t *steps, char *err, size_t errlen)
{
	struct snr_chunk_writer out;
	snr_output_input(journal);
	if (snr_chunkw_open(&out, path, SNR_CHUNKW_ATOMIC, SNR_TRACE_MAGIC, SNR_TRACE_VERSION, err, errlen))
		return -1;
	struct snr_journal_end je;
	int rc = snr_trace_compact(journal, &out, &je);
	if (rc) {
		snr_fmt(err, errlen, "%s", out.err);
	} else if (!je.end_json) {
		snr_partial_damaged();
		snr_fmt(err, errlen,
			"%s holds %llu instructions but not the window's end (its recorder was killed, or could not "
			"write the end): it cannot be finished; readers use what it holds with --allow-truncated",
			journal, (unsigned long long)je.steps);
		rc = -1;
	} else {
		json_t *e = json_loads(je.end_json, 0, NULL);
		json_t *n = json_object_get(e, "instructions");
		const char *reason = json_string_value(json_object_get(e, "reason"));
		if (!json_is_integer(n) || (uint64_t)json_integer_value(n) != je.steps || !reason ||
		    (!strcmp(reason, "count") && !je.has_digest)) {
			snr_partial_damaged();
			snr_fmt(err, errlen,
				"%s: its END does not match its steps (%llu steps%s): a damaged journal, not finished",
				journal, (unsigned long long)je.steps, je.has_digest ? "" : ", no DIGEST");
			rc = -1;
		}
		json_decref(e);
	}
	free(je.end_json);
	if (rc) {
		snr_chunkw_abort(&out);
		return -1;
	}
	if (snr_chunkw_close(&out)) {
		snr_fmt(err, errlen, "%s", out.err);
		return -1;
	}
	if (unlink(journal))
		snr_warn("%s: written, but removing %s failed: %s", path, journal, strerror(errno));
	*steps = je.steps;
	return 0;
}
