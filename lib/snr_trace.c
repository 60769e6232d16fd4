/*
 * snr_trace.c: writer and reader of the .snrt trace file (see snr_trace.h
 * and docs/trace-format.md).
 *
 * The reader maps the whole file and checks every chunk's header and payload
 * CRC when it opens it, so a flipped byte anywhere is reported at open with
 * the chunk number and file offset, before any step is handed out. Payload
 * parsing is bounds-checked as well (a CRC-valid payload can still be
 * malformed if a writer was buggy), and the reader is fuzzed
 * (tests/fuzz/fuzz_trace.c).
 */
#include "snr_trace.h"
#include "snr_line_pack.h"

#include "snr_chunkfile.h"
#include "snr_symtab.h"
#include "snr_trace_int.h"

#include <errno.h>
#include <fcntl.h>
#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zstd.h>

#include "snr_partial.h"
#include "snr_output.h"
#include "snr_set.h"
#include "snr_util.h"


uint64_t snr_trace_hash(const void *data, size_t len)
{
	const uint8_t *p = data;
	uint64_t h = 0xcbf29ce484222325ull;
	for (size_t i = 0; i < len; i++)
		h = (h ^ p[i]) * 0x100000001b3ull;
	return h;
}

const char *snr_trace_id_text(const struct snr_trace_id *id, char *buf, size_t len)
{
	snprintf(buf, len, "fnv1a64:%016llx", (unsigned long long)id->fnv1a64);
	return buf;
}

bool snr_trace_id_parse(const char *text, uint64_t bytes, struct snr_trace_id *id)
{
	if (!text || strncmp(text, "fnv1a64:", 8) || strlen(text) != 24 || strspn(text + 8, "0123456789abcdef") != 16)
		return false;
	id->fnv1a64 = strtoull(text + 8, NULL, 16);
	id->bytes = bytes;
	return true;
}

static uint64_t get_le(const uint8_t *p, int n)
{
	uint64_t v = 0;
	for (int i = 0; i < n; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

static void put_le(uint8_t *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* ---- writer ------------------------------------------------------------------ */

/*
 * The writer journals: every chunk goes at once to PATH.partial, each step
 * as its own raw STEPS chunk (one writev per step), so a recorder killed
 * with SIGKILL leaves a readable, truncated trace holding every step it
 * wrote. snr_trace_finish compacts the journal into the trace proper
 * (STEPS batched by STEPS_PER_CHUNK, zstd) in a temporary file renamed to
 * PATH, then removes the journal.
 *
 * The trace proper is written alongside (the "stream": a temporary file
 * beside PATH, renamed into place by snr_trace_finish): the same chunks in
 * the same order as compacting the journal would give, the steps gathered
 * into its batches as they come. So nothing is read back at the end. A
 * rewind the stream cannot follow (a batch or another chunk written since
 * the mark) or a failed write (a full disk) drops it, freeing its space:
 * the journal is then compacted at the end, as before, into the same bytes.
 *
 * Held steps (snr_trace_writer_hold: --method sim, whose steps reach the
 * journal at a checkpoint anyway) go into it as one STEPS chunk of many,
 * cut where the trace proper's batches end (batch_steps and batch_bytes
 * follow compact()'s count), so that compact() makes the same batches of
 * them as of one chunk per step: the journal is a fifth of the bytes (a
 * chunk header per step was most of it) and the trace the same.
 */
struct snr_trace_writer {
	struct snr_chunk_writer cw; /* the journal */
	char *path, *journal;
	size_t nregs;
	uint16_t *reg_size;
	struct snr_buf steps; /* the step being encoded, with its chunk prefix */
	uint64_t next_index;
	uint64_t prev_next_pc;
	/* held steps not yet in a chunk: their records, the first's index, how many */
	struct snr_buf held, held_chunk;
	uint64_t held_first, held_count;
	/* steps and record bytes since compact() last ended a batch */
	uint64_t batch_steps, batch_bytes;
	/* the trace proper, written alongside: its writer and batch (the
	 * records of steps batch_first on), while `streaming` */
	struct snr_chunk_writer out;
	bool streaming;
	struct snr_buf batch;
	uint64_t batch_first;
	/* the pcs executed and the META, for the LINES chunk (snr_trace_finish) */
	struct snr_pc_set pcs;
	/* pcs added to it lately, + 1 (0: none), direct-mapped: a step at one of
	 * them, with no code given, adds nothing to the set, so it is spared the
	 * set's hash (49 of the 1,691 million instructions of the 1M serving
	 * window's recording, callgrind) */
	uint64_t recent_pcs[1024];
	char *meta;
};

/* Drops the stream (a failed write, a rewind it cannot follow): its
 * temporary file goes, and snr_trace_finish compacts the journal. */
static void stream_drop(struct snr_trace_writer *w)
{
	if (!w->streaming)
		return;
	snr_chunkw_abort(&w->out);
	w->streaming = false;
}

/* The journal found the disk full: the stream makes room for it. */
static int journal_full(void *ctx)
{
	struct snr_trace_writer *w = ctx;
	if (!w->streaming)
		return 0;
	stream_drop(w);
	return 1;
}

/* A chunk other than STEPS into the stream: the batch first where the
 * steps end (DIGEST, END), as compaction does. */
static void stream_chunk(struct snr_trace_writer *w, enum snr_chunk_type type, const uint8_t *payload, size_t len)
{
	if (!w->streaming)
		return;
	if (type == SNR_CHUNK_DIGEST || type == SNR_CHUNK_END || type == SNR_CHUNK_LINES) {
		if (snr_trace_put_batch(&w->out, &w->batch, w->batch_first, w->next_index - w->batch_first)) {
			stream_drop(w);
			return;
		}
		w->batch_first = w->next_index;
	}
	if (snr_chunkw_put(&w->out, type, payload, len, type != SNR_CHUNK_META && type != SNR_CHUNK_END))
		stream_drop(w);
}

static int w_chunk(struct snr_trace_writer *w, enum snr_chunk_type type, const uint8_t *payload, size_t len,
		   bool compress);

/* The held steps as one STEPS chunk (into the chunk writer's own hold). */
static int emit_held(struct snr_trace_writer *w)
{
	if (!w->held_count)
		return 0;
	struct snr_buf *b = &w->held_chunk;
	b->len = 0;
	snr_buf_varint(b, w->held_first);
	snr_buf_varint(b, w->held_count);
	snr_buf_put(b, w->held.p, w->held.len);
	w->held.len = 0;
	w->held_count = 0;
	return w_chunk(w, SNR_CHUNK_STEPS, b->p, b->len, false);
}

static int w_chunk(struct snr_trace_writer *w, enum snr_chunk_type type, const uint8_t *payload, size_t len,
		   bool compress)
{
	if (type != SNR_CHUNK_STEPS && emit_held(w)) /* the journal keeps the order things came in */
		return -1;
	if (type != SNR_CHUNK_STEPS && type != SNR_CHUNK_END) /* END: snr_trace_finish */
		stream_chunk(w, type, payload, len);
	return snr_chunkw_put(&w->cw, type, payload, len, compress);
}

struct snr_trace_writer *snr_trace_create(const char *path, const char *meta_json, char *err, size_t errlen)
{
	json_error_t je;
	json_t *meta = json_loads(meta_json, 0, &je);
	json_t *regs = meta ? json_object_get(meta, "registers") : NULL;
	if (!json_is_array(regs) || json_array_size(regs) == 0 || json_array_size(regs) > 65535) {
		snr_fmt(err, errlen, "internal error: trace metadata lacks a register table");
		json_decref(meta);
		return NULL;
	}
	struct snr_trace_writer *w = snr_xcalloc(1, sizeof(*w));
	w->path = snr_xstrdup(path);
	w->journal = snr_trace_journal_path(path);
	if (snr_chunkw_open(&w->cw, w->journal, SNR_CHUNKW_NEW, SNR_TRACE_MAGIC, SNR_TRACE_VERSION, err, errlen)) {
		json_decref(meta);
		free(w->path);
		free(w->journal);
		free(w);
		return NULL;
	}
	w->nregs = json_array_size(regs);
	w->reg_size = snr_xcalloc(w->nregs, sizeof(*w->reg_size));
	for (size_t i = 0; i < w->nregs; i++)
		w->reg_size[i] = (uint16_t)json_integer_value(json_object_get(json_array_get(regs, i), "size"));
	json_decref(meta);
	w->cw.on_full = journal_full;
	w->cw.on_full_ctx = w;
	w->meta = snr_xstrdup(meta_json);
	char serr[300];
	w->streaming = !snr_chunkw_open(&w->out, path, SNR_CHUNKW_ATOMIC, SNR_TRACE_MAGIC, SNR_TRACE_VERSION, serr,
					sizeof(serr));
	if (w_chunk(w, SNR_CHUNK_META, (const uint8_t *)meta_json, strlen(meta_json), false)) {
		snr_fmt(err, errlen, "%s", w->cw.err);
		snr_trace_abandon(w);
		return NULL;
	}
	return w;
}

char *snr_trace_journal_path(const char *path)
{
	size_t n = strlen(path) + sizeof(".partial");
	char *j = snr_xmalloc(n);
	snprintf(j, n, "%s.partial", path);
	return j;
}

int snr_trace_check_path(const char *path, char *err, size_t errlen)
{
	if (snr_output_check(path, false, err, errlen))
		return -1;
	char *j = snr_trace_journal_path(path);
	int fd = open(j, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
	if (fd < 0)
		snr_fmt(err, errlen, "%s: %s", j,
			errno == EEXIST ? "exists already (a recording that did not end? snr does not overwrite it)"
					: strerror(errno));
	else {
		close(fd);
		unlink(j);
	}
	struct stat st;
	if (fd >= 0 && stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		snr_fmt(err, errlen, "%s: not a regular file", path);
		fd = -1;
	}
	free(j);
	return fd < 0 ? -1 : 0;
}

const char *snr_trace_writer_journal(const struct snr_trace_writer *w) { return w->journal; }

int snr_trace_write_symbols(struct snr_trace_writer *w, size_t n, const uint64_t *addr, const uint64_t *size,
			    const char *const *name)
{
	struct snr_buf b = {0};
	snr_symtab_encode(&b, n, addr, size, name);
	int rc = w_chunk(w, SNR_CHUNK_SYMBOLS, b.p, b.len, true);
	free(b.p);
	return rc;
}

static int put_regs(struct snr_trace_writer *w, unsigned n, const struct snr_trace_regval *regs)
{
	snr_buf_varint(&w->steps, n);
	for (unsigned i = 0; i < n; i++) {
		uint16_t r = regs[i].reg;
		if (r >= w->nregs) {
			snr_fmt(w->cw.err, sizeof(w->cw.err), "internal error: register %u out of range", r);
			w->cw.failed = 1;
			return -1;
		}
		snr_buf_varint(&w->steps, r);
		snr_buf_put(&w->steps, regs[i].val, w->reg_size[r]);
	}
	return 0;
}

static void put_mems(struct snr_buf *b, unsigned n, const struct snr_trace_mem *mem)
{
	snr_buf_varint(b, n);
	for (unsigned i = 0; i < n; i++) {
		snr_buf_u8(b, mem[i].space);
		snr_buf_varint(b, mem[i].chip);
		snr_buf_varint(b, mem[i].addr);
		snr_buf_varint(b, mem[i].len);
		snr_buf_put(b, mem[i].data, mem[i].len);
	}
}

/* A step's few encoded bytes (5-8 on the serving window) appended to the
 * batch or the held steps by one fixed 16-byte copy where both buffers have
 * the room (the bytes past n are scratch, overwritten by the next), not
 * snr_buf_put's call and libc's memcpy, which cost 70 million more of the
 * 1,829 million instructions of the 1M serving window's recording
 * (callgrind). `src` is `from` bytes into its buffer. */
static inline void put_step_bytes(struct snr_buf *dst, const struct snr_buf *src, size_t from)
{
	size_t n = src->len - from;
	if (n > 16 || dst->cap - dst->len < 16 || src->cap - from < 16) {
		snr_buf_put(dst, src->p + from, n);
		return;
	}
	memcpy(dst->p + dst->len, src->p + from, 16);
	dst->len += n;
}

/* The 16 bytes lo, hi (n of them meant) at the end of dst: two stores of
 * registers. */
static inline void put_plain_bytes(struct snr_buf *dst, uint64_t lo, uint64_t hi, size_t n)
{
	if (dst->cap - dst->len < 16)
		snr_buf_need(dst, 16);
	memcpy(dst->p + dst->len, &lo, 8);
	memcpy(dst->p + dst->len + 8, &hi, 8);
	dst->len += n;
}

/* A step with nothing but its pc (flags 0), held for a batch, as the
 * general path below encodes it: its bytes (the flags and the pc's delta)
 * go straight into the batch and the held chunk, not through w->steps after
 * its index, which only an unheld chunk carries. Most steps of a window are
 * plain: encoding them through w->steps was 15% of the instructions of the
 * 1M serving window's recording (callgrind). The bytes are built in two
 * words, not in a stack buffer read back whole: its byte stores could not
 * be forwarded to the 16-byte load, which stalled there (a third of this
 * function's samples, perf). */
static int add_plain_step(struct snr_trace_writer *w, const struct snr_trace_step *s)
{
	uint64_t lo = 0, hi = 0; /* byte 0, the flags: 0 */
	size_t n = 1;
	uint64_t z = snr_zigzag((int64_t)(s->pc - w->prev_next_pc));
	for (;;) {
		uint64_t byte = z >= 0x80 ? (z & 0x7f) | 0x80 : z;
		if (n < 8)
			lo |= byte << (8 * n);
		else
			hi |= byte << (8 * (n - 8));
		n++;
		if (z < 0x80)
			break;
		z >>= 7;
	}
	w->prev_next_pc = s->pc + 4;
	w->next_index++;
	w->batch_steps++;
	w->batch_bytes += n;
	bool batch_ends = w->batch_steps >= STEPS_PER_CHUNK || w->batch_bytes >= STEPS_BYTES_PER_CHUNK;
	if (batch_ends)
		w->batch_steps = w->batch_bytes = 0;
	if (w->streaming) {
		put_plain_bytes(&w->batch, lo, hi, n);
		if (batch_ends) {
			if (snr_trace_put_batch(&w->out, &w->batch, w->batch_first, w->next_index - w->batch_first))
				stream_drop(w);
			w->batch_first = w->next_index;
		}
	}
	if (!w->held_count)
		w->held_first = s->index;
	put_plain_bytes(&w->held, lo, hi, n);
	w->held_count++;
	return batch_ends ? emit_held(w) : 0;
}

int snr_trace_add_step(struct snr_trace_writer *w, const struct snr_trace_step *s)
{
	if (w->cw.failed)
		return -1;
	if (s->index != w->next_index) {
		snr_fmt(w->cw.err, sizeof(w->cw.err), "internal error: step %llu added after %llu",
			(unsigned long long)s->index, (unsigned long long)w->next_index);
		w->cw.failed = 1;
		return -1;
	}
	uint64_t *recent = &w->recent_pcs[(s->pc >> 2 ^ s->pc >> 12) & 1023];
	if (s->code_len || *recent != s->pc + 1) { /* the set never loses a pc: one seen is there */
		snr_pc_set_add(&w->pcs, s->pc, s->code, s->code_len);
		*recent = s->pc + 1;
	}
	/* a jump's target, a return's among them: the instruction before it is
	 * where annotate places a caller from before the window (its line
	 * row, at the return address - 4) */
	if (s->pc != w->prev_next_pc && s->pc >= 4)
		snr_pc_set_add(&w->pcs, s->pc - 4, NULL, 0);
	if (!(s->code_len | s->nregs | s->nmem | s->npost_regs | s->npost_mem | s->unread | s->call) && w->cw.hold)
		return add_plain_step(w, s);
	struct snr_buf *b = &w->steps;
	b->len = 0;
	snr_buf_varint(b, s->index);
	snr_buf_varint(b, 1);
	size_t prefix = b->len;
	uint8_t flags = (s->code_len ? 1 : 0) | (s->nregs ? 2 : 0) | (s->nmem ? 4 : 0) |
			(s->npost_regs ? 8 : 0) | (s->npost_mem ? 16 : 0) | (s->unread ? 32 : 0) |
			(s->call ? 64 : 0);
	snr_buf_u8(b, flags);
	snr_buf_varint(b, snr_zigzag((int64_t)(s->pc - w->prev_next_pc)));
	if (s->code_len) {
		snr_buf_u8(b, s->code_len);
		snr_buf_put(b, s->code, s->code_len);
	}
	if ((s->nregs && put_regs(w, s->nregs, s->regs)) || (s->npost_regs && put_regs(w, s->npost_regs, s->post_regs)))
		return -1;
	if (s->nmem)
		put_mems(b, s->nmem, s->mem);
	if (s->npost_mem)
		put_mems(b, s->npost_mem, s->post_mem);
	/* The common next pc is the fall-through one: 4 on TA1, the decoded
	 * length elsewhere; the writer only knows the code when given, so the
	 * delta base is the previous pc + 4 (small either way). */
	w->prev_next_pc = s->pc + 4;
	w->next_index++;
	w->batch_steps++;
	w->batch_bytes += b->len - prefix;
	bool batch_ends = w->batch_steps >= STEPS_PER_CHUNK || w->batch_bytes >= STEPS_BYTES_PER_CHUNK;
	if (batch_ends)
		w->batch_steps = w->batch_bytes = 0;
	if (w->streaming) {
		put_step_bytes(&w->batch, b, prefix);
		if (batch_ends) {
			if (snr_trace_put_batch(&w->out, &w->batch, w->batch_first, w->next_index - w->batch_first))
				stream_drop(w);
			w->batch_first = w->next_index;
		}
	}
	if (!w->cw.hold)
		return w_chunk(w, SNR_CHUNK_STEPS, b->p, b->len, false);
	if (!w->held_count)
		w->held_first = s->index;
	put_step_bytes(&w->held, b, prefix);
	w->held_count++;
	return batch_ends ? emit_held(w) : 0;
}

int snr_trace_writer_mark(struct snr_trace_writer *w, struct snr_trace_mark *m)
{
	struct snr_chunkw_mark cm;
	if (emit_held(w) || snr_chunkw_mark(&w->cw, &cm))
		return -1;
	*m = (struct snr_trace_mark){cm.offset,	     cm.seq,	       cm.bytes,       w->next_index,
				     w->prev_next_pc, w->batch_steps, w->batch_bytes, w->out.bytes,
				     w->batch.len};
	return 0;
}

int snr_trace_writer_hold(struct snr_trace_writer *w, bool on)
{
	if (!on && emit_held(w))
		return -1;
	w->cw.hold = on;
	return on ? 0 : snr_chunkw_flush(&w->cw);
}

int snr_trace_writer_flush(struct snr_trace_writer *w) { return emit_held(w) ? -1 : snr_chunkw_flush(&w->cw); }

int snr_trace_writer_rewind(struct snr_trace_writer *w, const struct snr_trace_mark *m)
{
	struct snr_chunkw_mark cm = {m->offset, m->seq, m->bytes};
	w->held.len = 0;
	w->held_count = 0;
	if (snr_chunkw_rewind(&w->cw, &cm))
		return -1;
	w->next_index = m->next_index;
	w->prev_next_pc = m->prev_next_pc;
	w->batch_steps = m->batch_steps;
	w->batch_bytes = m->batch_bytes;
	/* the stream follows while its file has not grown since the mark */
	if (w->streaming && w->out.bytes == m->stream_bytes && w->batch.len >= m->stream_batch_len)
		w->batch.len = m->stream_batch_len;
	else
		stream_drop(w);
	return 0;
}

int snr_trace_write_digest(struct snr_trace_writer *w, const uint8_t *const *regs, size_t nmem,
			   const struct snr_trace_mem *mem)
{
	if (w->cw.failed)
		return -1;
	struct snr_buf b = {0};
	size_t known = 0;
	for (size_t i = 0; i < w->nregs; i++)
		known += regs[i] != NULL;
	snr_buf_varint(&b, known);
	for (size_t i = 0; i < w->nregs; i++)
		if (regs[i]) {
			snr_buf_varint(&b, i);
			snr_buf_put(&b, regs[i], w->reg_size[i]);
		}
	/* Split every region at SNR_TRACE_DIGEST_BLOCK-aligned addresses. */
	size_t nblocks = 0;
	struct snr_buf blocks = {0};
	for (size_t i = 0; i < nmem; i++) {
		uint64_t a = mem[i].addr, end = mem[i].addr + mem[i].len;
		while (a < end) {
			uint64_t next = (a / SNR_TRACE_DIGEST_BLOCK + 1) * SNR_TRACE_DIGEST_BLOCK;
			if (next > end || next < a)
				next = end;
			snr_buf_u8(&blocks, mem[i].space);
			snr_buf_varint(&blocks, mem[i].chip);
			snr_buf_varint(&blocks, a);
			snr_buf_varint(&blocks, next - a);
			uint64_t h = snr_trace_hash(mem[i].data + (a - mem[i].addr), next - a);
			uint8_t hb[8];
			put_le(hb, h, 8);
			snr_buf_put(&blocks, hb, 8);
			nblocks++;
			a = next;
		}
	}
	snr_buf_varint(&b, nblocks);
	if (blocks.len)
		snr_buf_put(&b, blocks.p, blocks.len);
	free(blocks.p);
	int rc = w_chunk(w, SNR_CHUNK_DIGEST, b.p, b.len, true);
	free(b.p);
	return rc;
}

static void writer_free(struct snr_trace_writer *w)
{
	free(w->steps.p);
	free(w->held.p);
	free(w->held_chunk.p);
	stream_drop(w);
	free(w->batch.p);
	free(w->reg_size);
	snr_pc_set_free(&w->pcs);
	free(w->meta);
	free(w->path);
	free(w->journal);
	free(w);
}

int snr_trace_finish(struct snr_trace_writer *w, const char *end_json)
{
	struct snr_chunk_writer out;
	char err[600];
	/* Every step and the DIGEST in the journal first: a trace that cannot
	 * be written below leaves the window whole there. */
	int rc = w->cw.failed || emit_held(w) || snr_chunkw_flush(&w->cw) ? -1 : 0;
	/* the source lines of the pcs the window ran (lib/snr_line_pack.h),
	 * while the program's ELF and sources are at hand */
	struct snr_buf lines = {0};
	if (!rc && snr_line_pack_encode(w->meta, &w->pcs, &lines) &&
	    (w_chunk(w, SNR_CHUNK_LINES, lines.p, lines.len, true) || snr_chunkw_flush(&w->cw)))
		rc = -1;
	free(lines.p);
	if (!rc && w->streaming) {
		/* the trace written alongside: its END, then renamed into place */
		stream_chunk(w, SNR_CHUNK_END, (const uint8_t *)end_json, strlen(end_json));
		if (w->streaming) {
			w->streaming = false;
			if (!snr_chunkw_close(&w->out)) {
				snr_chunkw_close(&w->cw);
				unlink(w->journal);
				writer_free(w);
				return 0;
			}
		}
	}
	/* The trace was not written alongside, or its write failed (a full
	 * disk; its temporary file is gone): the end goes into the journal,
	 * which is then a whole trace (every reader takes it as one), and the
	 * journal is compacted, or left for `snr trace finish`. */
	if (!rc && w_chunk(w, SNR_CHUNK_END, (const uint8_t *)end_json, strlen(end_json), false))
		rc = -1;
	if (snr_chunkw_close(&w->cw) && !rc) /* the journal stays until the trace is in place */
		rc = -1;
	if (rc) {
		snr_err("%s (the journal %s holds the steps written before, without the window's end: a truncated "
			"trace)",
			w->cw.err, w->journal);
		writer_free(w);
		return -1;
	}
	if (snr_chunkw_open(&out, w->path, SNR_CHUNKW_ATOMIC, SNR_TRACE_MAGIC, SNR_TRACE_VERSION, err, sizeof(err))) {
		snr_err("%s; the recording is whole in %s: `snr trace finish %s` writes %s from it", err, w->journal,
			w->journal, w->path);
		writer_free(w);
		return -1;
	}
	rc = snr_trace_compact(w->journal, &out, NULL);
	if (rc) {
		snr_err("%s; the recording is whole in %s: `snr trace finish %s` writes %s from it", out.err,
			w->journal, w->journal, w->path);
		snr_chunkw_abort(&out);
	} else if (snr_chunkw_close(&out)) {
		snr_err("%s; the recording is whole in %s: `snr trace finish %s` writes %s from it", out.err,
			w->journal, w->journal, w->path);
		rc = -1;
	} else {
		unlink(w->journal);
	}
	writer_free(w);
	return rc;
}

void snr_trace_abandon(struct snr_trace_writer *w)
{
	if (!w)
		return;
	emit_held(w); /* what was recorded stays in the journal */
	snr_chunkw_close(&w->cw);
	writer_free(w);
}

const char *snr_trace_writer_error(struct snr_trace_writer *w) { return w->cw.err; }
uint64_t snr_trace_bytes_written(const struct snr_trace_writer *w) { return w->cw.bytes; }

/* ---- reader ------------------------------------------------------------------ */

struct snr_trace {
	struct snr_chunk_file f;
	char *meta;
	char *end;
	size_t nregs;
	struct snr_trace_reg *regs;
	struct snr_symtab syms;
	bool has_syms;
	bool truncated, interrupted;
	/* a file with an END that `trace verify` rejects (its count is not the
	 * steps', a count-ended window without its DIGEST): partial to every
	 * reader, and why */
	char end_wrong[200];
	uint64_t nsteps; /* instructions the file holds */
	/* step iteration */
	size_t cur_chunk;
	struct snr_cursor c;
	uint64_t remaining, index, next_pc;
	uint64_t chunk_first;
	struct snr_trace_regval *rv;
	size_t rv_cap;
	struct snr_trace_mem *mv;
	size_t mv_cap;
	struct snr_trace_regval *prv;
	size_t prv_cap;
	struct snr_trace_mem *pmv;
	size_t pmv_cap;
	/* digest */
	bool has_digest;
	/* the LINES chunk's payload (raw), NULL: none */
	uint8_t *lines;
	size_t nlines;
	uint8_t **dregs;
	struct snr_trace_mem *dblocks;
	uint64_t *dhashes;
	size_t ndblocks;
};

#define terr(t, c, ...) snr_chunkf_fail(&(t)->f, (c), __VA_ARGS__)

/* LINES: checked whole at open (a forged one is damage, exit 3), kept raw
 * for snr_trace_lines and a metrics file. */
static int parse_lines(struct snr_trace *t, const struct snr_chunk *c)
{
	long n = snr_chunkf_payload(&t->f, c);
	if (n < 0)
		return -1;
	char why[300];
	struct snr_line_pack *k = snr_line_pack_parse(t->f.raw, (size_t)n, why, sizeof(why));
	if (!k)
		return terr(t, c, "LINES chunk is malformed: %s", why);
	snr_line_pack_free(k);
	t->lines = snr_xmalloc((size_t)n + 1);
	memcpy(t->lines, t->f.raw, (size_t)n);
	t->nlines = (size_t)n;
	return 0;
}

size_t snr_trace_lines_stored(const struct snr_trace *t)
{
	for (size_t i = 0; t->lines && i < t->f.nchunks; i++)
		if (t->f.chunks[i].type == SNR_CHUNK_LINES)
			return 28 + (size_t)t->f.chunks[i].stored_len;
	return 0;
}

const uint8_t *snr_trace_lines(const struct snr_trace *t, size_t *n)
{
	*n = t->nlines;
	return t->lines;
}

static long load_payload(struct snr_trace *t, const struct snr_chunk *c)
{
	return snr_chunkf_payload(&t->f, c);
}

static int parse_meta(struct snr_trace *t, const struct snr_chunk *c)
{
	if (load_payload(t, c) < 0)
		return -1;
	t->meta = snr_json_escape_controls((const char *)t->f.raw); /* no raw control bytes in any output */
	if (!t->meta)
		t->meta = snr_xstrdup((const char *)t->f.raw);
	json_error_t je;
	json_t *m = json_loads(t->meta, JSON_REJECT_DUPLICATES, &je);
	if (!m)
		return terr(t, c, "metadata is not JSON: line %d column %d: %s", je.line, je.column, je.text);
	/* its counts are counts: a reader prints them and asks for as many */
	static const char *const counts[] = {"count", "skip", "chip", "chips"};
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++) {
		json_t *v = json_object_get(m, counts[k]);
		if (v && (!json_is_integer(v) || json_integer_value(v) < 0)) {
			char *text = json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT);
			terr(t, c, "metadata's \"%s\" is %s: not a count (an integer from 0)", counts[k], text ? text : "?");
			free(text);
			json_decref(m);
			snr_partial_damaged();
			return -1;
		}
	}
	/* the programs the trace names are inputs of whatever reads it (lib/snr_output.h) */
	snr_output_input(json_string_value(json_object_get(m, "elf")));
	size_t oi;
	json_t *obj;
	json_array_foreach(json_object_get(m, "objects"), oi, obj)
		snr_output_input(json_string_value(json_object_get(obj, "path")));
	json_t *regs = json_object_get(m, "registers");
	if (!json_is_array(regs) || !json_array_size(regs) || json_array_size(regs) > 65535) {
		json_decref(m);
		return terr(t, c, "metadata has no register table");
	}
	t->nregs = json_array_size(regs);
	t->regs = snr_xcalloc(t->nregs, sizeof(*t->regs));
	for (size_t i = 0; i < t->nregs; i++) {
		json_t *r = json_array_get(regs, i);
		const char *name = json_string_value(json_object_get(r, "name"));
		json_int_t size = json_integer_value(json_object_get(r, "size"));
		if (!name || size < 1 || size > 256) {
			json_decref(m);
			return terr(t, c, "register %zu in the metadata has no name or a bad size", i);
		}
		snprintf(t->regs[i].name, sizeof(t->regs[i].name), "%s", name);
		t->regs[i].size = (uint16_t)size;
	}
	json_decref(m);
	return 0;
}

static int parse_symbols(struct snr_trace *t, const struct snr_chunk *c)
{
	long n = load_payload(t, c);
	if (n < 0)
		return -1;
	t->has_syms = true;
	if (snr_symtab_decode(&t->syms, t->f.raw, (size_t)n))
		return terr(t, c, "symbol table is malformed");
	return 0;
}

static int parse_digest(struct snr_trace *t, const struct snr_chunk *c)
{
	long n = load_payload(t, c);
	if (n < 0)
		return -1;
	uint8_t *raw = snr_xmalloc((size_t)n + 1);
	memcpy(raw, t->f.raw, (size_t)n);
	struct snr_cursor cu = {raw, raw + n, 0};
	t->dregs = snr_xcalloc(t->nregs, sizeof(*t->dregs));
	uint64_t known = snr_cur_varint(&cu);
	for (uint64_t i = 0; i < known && !cu.bad; i++) {
		uint64_t r = snr_cur_varint(&cu);
		if (r >= t->nregs) {
			free(raw);
			return terr(t, c, "digest names register %llu of %zu", (unsigned long long)r, t->nregs);
		}
		const uint8_t *v = snr_cur_bytes(&cu, t->regs[r].size);
		if (v) {
			free(t->dregs[r]);
			t->dregs[r] = snr_xmalloc(t->regs[r].size);
			memcpy(t->dregs[r], v, t->regs[r].size);
		}
	}
	uint64_t nb = snr_cur_varint(&cu);
	if (nb > (uint64_t)n) {
		free(raw);
		return terr(t, c, "digest block count %llu exceeds the payload", (unsigned long long)nb);
	}
	t->dblocks = snr_xcalloc(nb ? nb : 1, sizeof(*t->dblocks));
	t->dhashes = snr_xcalloc(nb ? nb : 1, sizeof(*t->dhashes));
	for (uint64_t i = 0; i < nb && !cu.bad; i++) {
		struct snr_trace_mem *b = &t->dblocks[i];
		b->space = snr_cur_u8(&cu);
		b->chip = (uint16_t)snr_cur_varint(&cu);
		b->addr = snr_cur_varint(&cu);
		b->len = snr_cur_varint(&cu);
		const uint8_t *h = snr_cur_bytes(&cu, 8);
		if (h)
			t->dhashes[i] = get_le(h, 8);
		if (b->len == 0 || b->len > SNR_TRACE_DIGEST_BLOCK)
			cu.bad = 1;
		t->ndblocks = i + 1;
	}
	free(raw);
	if (cu.bad)
		return terr(t, c, "digest is malformed");
	t->has_digest = true;
	return 0;
}

void snr_trace_id_of(const struct snr_trace *t, struct snr_trace_id *id)
{
	id->fnv1a64 = snr_trace_hash(t->f.map, t->f.size);
	id->bytes = t->f.size;
}

/* The END against the file: its "instructions" is the steps' count, its
 * "reason" a word, and a window ended by its count has a DIGEST. A file
 * that fails one is what `trace verify` rejects: truncated to every reader
 * (refused unless --allow-truncated, labelled so with it), end_wrong says
 * why. */
static void check_end(struct snr_trace *t)
{
	json_t *e = json_loads(t->end, JSON_REJECT_DUPLICATES, NULL);
	json_t *n = json_object_get(e, "instructions");
	const char *reason = json_string_value(json_object_get(e, "reason"));
	char *text = n ? json_dumps(n, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	if (!json_is_object(e))
		snr_fmt(t->end_wrong, sizeof(t->end_wrong), "its END chunk is not a JSON object");
	else if (!json_is_integer(n) || json_integer_value(n) < 0)
		snr_fmt(t->end_wrong, sizeof(t->end_wrong), "END's \"instructions\" is %s: not a count",
			text ? text : "missing");
	else if ((uint64_t)json_integer_value(n) != t->nsteps)
		snr_fmt(t->end_wrong, sizeof(t->end_wrong),
			"END's \"instructions\" is %s, the STEPS chunks hold %llu (steps missing or added)", text,
			(unsigned long long)t->nsteps);
	else if (!reason)
		snr_fmt(t->end_wrong, sizeof(t->end_wrong), "END's \"reason\" is not a word");
	else if (!strcmp(reason, "count") && !t->has_digest)
		snr_fmt(t->end_wrong, sizeof(t->end_wrong),
			"END says the window ended by its count, but the DIGEST (the end state) is missing");
	free(text);
	if (t->end_wrong[0])
		t->truncated = true;
	else
		t->interrupted = !strcmp(reason, "interrupted");
	json_decref(e);
}

struct snr_trace *snr_trace_open(const char *path, char *err, size_t errlen)
{
	if (snr_set_refuse(path, err, errlen))
		return NULL;
	struct snr_trace *t = snr_xcalloc(1, sizeof(*t));
	if (snr_chunkf_open(&t->f, path, SNR_TRACE_MAGIC, "snr trace", SNR_TRACE_VERSION, SNR_TRACE_VERSION,
			    SNR_CHUNK_LINES, err, errlen)) {
		free(t);
		return NULL;
	}
	t->truncated = t->f.truncated;
	int rc = 0;
	for (size_t i = 0; !rc && i < t->f.nchunks; i++) {
		const struct snr_chunk *c = &t->f.chunks[i];
		if ((c->seq == 0) != (c->type == SNR_CHUNK_META))
			rc = terr(t, c, c->seq == 0 ? "the first chunk is not META" : "a second META chunk");
		else if (c->type == SNR_CHUNK_END && i + 1 < t->f.nchunks)
			rc = terr(t, &t->f.chunks[i + 1], "data after the END chunk");
	}
	if (!rc && t->f.truncated && t->f.nchunks && t->f.chunks[t->f.nchunks - 1].type == SNR_CHUNK_END)
		rc = terr(t, NULL, "data after the END chunk");
	if (!rc && t->f.nchunks == 0)
		rc = terr(t, NULL, "no META chunk: the trace is empty");
	for (size_t i = 0; !rc && i < t->f.nchunks; i++) {
		const struct snr_chunk *c = &t->f.chunks[i];
		switch (c->type) {
		case SNR_CHUNK_META: rc = parse_meta(t, c); break;
		case SNR_CHUNK_SYMBOLS: rc = t->has_syms ? terr(t, c, "a second SYMBOLS chunk") : parse_symbols(t, c); break;
		case SNR_CHUNK_DIGEST: rc = t->has_digest ? terr(t, c, "a second DIGEST chunk") : parse_digest(t, c); break;
		case SNR_CHUNK_END:
			if (load_payload(t, c) < 0) {
				rc = -1;
				break;
			}
			t->end = snr_xstrdup((const char *)t->f.raw);
			break;
		case SNR_CHUNK_LINES: rc = t->lines ? terr(t, c, "a second LINES chunk") : parse_lines(t, c); break;
		case SNR_CHUNK_STEPS:
			if (t->has_digest)
				rc = terr(t, c, "STEPS after the DIGEST");
			break;
		}
	}
	if (!rc && !t->end)
		t->truncated = true;
	/* How many instructions it holds: the last STEPS chunk's first index
	 * and count (bad ones are reported when the steps are read). */
	for (size_t i = t->f.nchunks; !rc && i-- > 0;) {
		const struct snr_chunk *c = &t->f.chunks[i];
		if (c->type != SNR_CHUNK_STEPS)
			continue;
		long n = load_payload(t, c);
		if (n < 0)
			break; /* left for snr_trace_next to report */
		struct snr_cursor cu = {t->f.raw, t->f.raw + n, 0};
		uint64_t first = snr_cur_varint(&cu), count = snr_cur_varint(&cu);
		if (!cu.bad && first + count >= first)
			t->nsteps = first + count;
		break;
	}
	if (!rc && t->end)
		check_end(t);
	if (rc) {
		snr_fmt(err, errlen, "%s", t->f.err);
		snr_trace_close(t);
		return NULL;
	}
	snr_trace_rewind(t);
	return t;
}

void snr_trace_close(struct snr_trace *t)
{
	if (!t)
		return;
	snr_chunkf_close(&t->f);
	snr_symtab_free(&t->syms);
	if (t->dregs)
		for (size_t i = 0; i < t->nregs; i++)
			free(t->dregs[i]);
	free(t->dregs);
	free(t->dblocks);
	free(t->dhashes);
	free(t->lines);
	free(t->meta);
	free(t->end);
	free(t->regs);
	free(t->rv);
	free(t->mv);
	free(t->prv);
	free(t->pmv);
	free(t);
}

const char *snr_trace_meta_json(const struct snr_trace *t) { return t->meta; }
size_t snr_trace_nregs(const struct snr_trace *t) { return t->nregs; }
const struct snr_trace_reg *snr_trace_regs(const struct snr_trace *t) { return t->regs; }
size_t snr_trace_nsymbols(const struct snr_trace *t) { return t->syms.n; }
const char *snr_trace_error(const struct snr_trace *t) { return t->f.err; }
bool snr_trace_truncated(const struct snr_trace *t) { return t->truncated; }
bool snr_trace_interrupted(const struct snr_trace *t) { return t->interrupted; }
uint64_t snr_trace_instructions(const struct snr_trace *t) { return t->nsteps; }

const char *snr_trace_partial_text(const struct snr_trace *t, char *buf, size_t len)
{
	if (!t->truncated && !t->interrupted)
		return NULL;
	json_t *m = json_loads(t->meta, 0, NULL);
	long long asked = json_integer_value(json_object_get(m, "count"));
	json_decref(m);
	if (t->end_wrong[0]) {
		snprintf(buf, len, "%llu of the %lld instructions asked for, and %s", (unsigned long long)t->nsteps,
			 asked, t->end_wrong);
		return buf;
	}
	snprintf(buf, len, "%llu of the %lld instructions asked for: %s", (unsigned long long)t->nsteps, asked,
		 t->interrupted ? "the recording was interrupted (SIGINT or SIGTERM)"
				: "the recorder stopped before finishing (killed, or it failed)");
	return buf;
}
const char *snr_trace_end_json(const struct snr_trace *t) { return t->end; }

void snr_trace_symbol(const struct snr_trace *t, size_t i, uint64_t *addr, uint64_t *size, const char **name)
{
	*addr = t->syms.addr[i];
	*size = t->syms.size[i];
	*name = t->syms.name[i];
}

const char *snr_trace_symbolize(const struct snr_trace *t, uint64_t addr, char *buf, size_t len)
{
	return snr_symtab_symbolize(&t->syms, addr, buf, len);
}

int snr_trace_rewind(struct snr_trace *t)
{
	t->cur_chunk = 0;
	t->remaining = 0;
	t->index = 0;
	t->next_pc = 0;
	t->c.p = t->c.end = NULL;
	return 0;
}

static const struct snr_trace_regval *get_regs(struct snr_trace *t, struct snr_trace_regval **arr, size_t *cap,
					       unsigned *count)
{
	struct snr_cursor *cu = &t->c;
	uint64_t n = cu->bad ? 0 : snr_cur_varint(cu);
	if (n > t->nregs || n == 0)
		cu->bad = 1;
	if (cu->bad)
		return NULL;
	if (n > *cap) {
		*cap = n;
		*arr = snr_xrealloc(*arr, n * sizeof(**arr));
	}
	for (uint64_t i = 0; i < n && !cu->bad; i++) {
		uint64_t r = snr_cur_varint(cu);
		if (r >= t->nregs) {
			cu->bad = 1;
			break;
		}
		(*arr)[i].reg = (uint16_t)r;
		(*arr)[i].val = snr_cur_bytes(cu, t->regs[r].size);
	}
	*count = (unsigned)n;
	return *arr;
}

static const struct snr_trace_mem *get_mems(struct snr_trace *t, struct snr_trace_mem **arr, size_t *cap,
					    unsigned *count)
{
	struct snr_cursor *cu = &t->c;
	uint64_t n = cu->bad ? 0 : snr_cur_varint(cu);
	if (n > (uint64_t)(cu->end - cu->p) || n == 0)
		cu->bad = 1;
	if (cu->bad)
		return NULL;
	if (n > *cap) {
		*cap = n;
		*arr = snr_xrealloc(*arr, n * sizeof(**arr));
	}
	for (uint64_t i = 0; i < n && !cu->bad; i++) {
		struct snr_trace_mem *m = &(*arr)[i];
		m->space = snr_cur_u8(cu);
		m->chip = (uint16_t)snr_cur_varint(cu);
		m->addr = snr_cur_varint(cu);
		m->len = snr_cur_varint(cu);
		m->data = snr_cur_bytes(cu, m->len);
	}
	*count = (unsigned)n;
	return *arr;
}

int snr_trace_next(struct snr_trace *t, struct snr_trace_step *s)
{
	while (t->remaining == 0) {
		while (t->cur_chunk < t->f.nchunks && t->f.chunks[t->cur_chunk].type != SNR_CHUNK_STEPS)
			t->cur_chunk++;
		if (t->cur_chunk >= t->f.nchunks)
			return 0;
		const struct snr_chunk *c = &t->f.chunks[t->cur_chunk++];
		long n = load_payload(t, c);
		if (n < 0)
			return -1;
		t->c = (struct snr_cursor){t->f.raw, t->f.raw + n, 0};
		uint64_t first = snr_cur_varint(&t->c), count = snr_cur_varint(&t->c);
		if (t->c.bad || first != t->index || count == 0 || count > (uint64_t)n)
			return terr(t, c, "STEPS chunk starts at instruction %llu with %llu steps; expected start %llu",
				    (unsigned long long)first, (unsigned long long)count,
				    (unsigned long long)t->index);
		t->remaining = count;
		t->chunk_first = first;
	}
	const struct snr_chunk *c = &t->f.chunks[t->cur_chunk - 1];
	struct snr_cursor *cu = &t->c;
	/* every field, one by one: GCC makes a memset of the whole struct a
	 * `rep stos`, half of this function's time (it runs once per instruction) */
	s->code_len = 0;
	memset(s->code, 0, sizeof(s->code));
	s->nregs = s->nmem = s->npost_regs = s->npost_mem = 0;
	s->regs = s->post_regs = NULL;
	s->mem = s->post_mem = NULL;
	uint8_t flags = snr_cur_u8(cu);
	s->index = t->index;
	s->pc = t->next_pc + (uint64_t)snr_unzigzag(snr_cur_varint(cu));
	if (flags & ~127u)
		cu->bad = 1;
	s->unread = (flags & 32) != 0;
	s->call = (flags & 64) != 0;
	if (flags & 1) {
		s->code_len = snr_cur_u8(cu);
		if (s->code_len == 0 || s->code_len > sizeof(s->code))
			cu->bad = 1;
		const uint8_t *code = cu->bad ? NULL : snr_cur_bytes(cu, s->code_len);
		if (code)
			memcpy(s->code, code, s->code_len);
	}
	if (flags & 2)
		s->regs = get_regs(t, &t->rv, &t->rv_cap, &s->nregs);
	if (flags & 8)
		s->post_regs = get_regs(t, &t->prv, &t->prv_cap, &s->npost_regs);
	if (flags & 4)
		s->mem = get_mems(t, &t->mv, &t->mv_cap, &s->nmem);
	if (flags & 16)
		s->post_mem = get_mems(t, &t->pmv, &t->pmv_cap, &s->npost_mem);
	if (cu->bad)
		return terr(t, c, "step record of instruction %llu is malformed", (unsigned long long)t->index);
	t->next_pc = s->pc + 4;
	t->index++;
	t->remaining--;
	if (t->remaining == 0 && cu->p != cu->end)
		return terr(t, c, "%zu bytes left over after the last step", (size_t)(cu->end - cu->p));
	return 1;
}

size_t snr_trace_next_plain(struct snr_trace *t, uint64_t *pcs, size_t max)
{
	/* Only what snr_trace_next reads alike: a flags byte of 0 and a pc delta
	 * of one or two bytes, never the chunk's last step (snr_trace_next
	 * checks that nothing follows it) nor past a malformed record. */
	if (t->c.bad)
		return 0;
	const uint8_t *p = t->c.p, *const end = t->c.end;
	uint64_t pc = t->next_pc;
	size_t k = 0;
	size_t n = 0;
	if (t->remaining > 1)
		n = t->remaining - 1 < max ? (size_t)(t->remaining - 1) : max;
	const uint8_t *stop = p; /* a step starting at or before it has three bytes: one bounds test */
	if (end - p >= 3)
		stop = end - 3;
	else
		n = 0; /* the chunk's last bytes are snr_trace_next's */
	while (k < n && p <= stop) {
		const unsigned h = (unsigned)p[0] | (unsigned)p[1] << 8; /* the flags byte and the delta's first */
		uint64_t v = h >> 8;
		if (__builtin_expect(h & 0x80ff, 0)) {
			if ((h & 0xff) || p[2] >= 0x80)
				break;
			v = (v & 0x7f) | (uint64_t)p[2] << 7;
			p++;
		}
		p += 2;
		pc += (uint64_t)snr_unzigzag(v);
		pcs[k++] = pc;
		pc += 4;
	}
	t->c.p = p;
	t->next_pc = pc;
	t->index += k;
	t->remaining -= k;
	return k;
}

bool snr_trace_digest(const struct snr_trace *t, const uint8_t *const **regs, size_t *nblocks,
		      const struct snr_trace_mem **blocks, const uint64_t **hashes)
{
	if (!t->has_digest)
		return false;
	*regs = (const uint8_t *const *)t->dregs;
	*nblocks = t->ndblocks;
	*blocks = t->dblocks;
	*hashes = t->dhashes;
	return true;
}
