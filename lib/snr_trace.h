/*
 * snr_trace.h: the trace file (.snrt), written as a stream by the recorder
 * and read by replay, analysis and `snr trace`. docs/trace-format.md
 * specifies every byte; in short:
 *
 *   file header   "SNRTRACE", u32 version, u32 crc
 *   chunk*        28-byte header (magic, type, codec, seq, sizes, crcs) + payload
 *     META        JSON: isa, register table, machine config, target, breakpoint, N
 *     SYMBOLS     the program's symbols, so traces symbolize without the ELF
 *     STEPS       a batch of per-instruction records (pc, code bytes first seen,
 *                 first-use registers and memory captured before the step)
 *     DIGEST      end state: every register, and a hash per 4 KiB block of the
 *                 memory written in the window
 *     END         JSON: instructions recorded, why recording stopped, totals
 *
 * Every chunk carries a CRC-32C of its header and of its payload; STEPS
 * payloads are zstd-compressed. While recording, the trace is a journal,
 * PATH.partial, with one STEPS chunk per step (or per held group), and the
 * trace proper is written alongside it; a recorder killed part-way
 * leaves it with whole chunks followed by at most one partial one: readers
 * report it as truncated after the last whole step and read everything
 * before it.
 */
#ifndef SNR_TRACE_H
#define SNR_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNR_TRACE_VERSION 1
#define SNR_TRACE_MAGIC "SNRTRACE"
#define SNR_TRACE_DIGEST_BLOCK 4096

enum snr_chunk_type {
	SNR_CHUNK_META = 1,
	SNR_CHUNK_SYMBOLS = 2,
	SNR_CHUNK_STEPS = 3,
	SNR_CHUNK_DIGEST = 4,
	SNR_CHUNK_END = 5,
	SNR_CHUNK_LINES = 6, /* the window's source lines (lib/snr_line_pack.h) */
};

struct snr_trace_reg {
	char name[32];
	uint16_t size;
};

struct snr_trace_regval {
	uint16_t reg;
	const uint8_t *val; /* reg's size bytes */
};

struct snr_trace_mem {
	uint8_t space;
	uint16_t chip;
	uint64_t addr;
	uint64_t len;
	const uint8_t *data;
};

/* One recorded instruction and what was captured just before it ran. */
struct snr_trace_step {
	uint64_t index;
	uint64_t pc;
	uint8_t code_len; /* 0 if the code bytes were given at an earlier step */
	uint8_t code[16];
	unsigned nregs;
	const struct snr_trace_regval *regs;
	unsigned nmem;
	const struct snr_trace_mem *mem;
	/* Effects the simulator cannot compute (a host system call's results):
	 * register values and memory as they were right after the step, which a
	 * replayer applies instead of executing the instruction's side effects. */
	unsigned npost_regs;
	const struct snr_trace_regval *post_regs;
	unsigned npost_mem;
	const struct snr_trace_mem *post_mem;
	/* The instruction read memory the debugger cannot read (x86-64 Linux's
	 * [vvar] time page, which the vDSO's clock_gettime loads): the target
	 * ran it, its inputs there are not in the trace, and its outputs are
	 * the post registers. A replayer lets it read zeros there and applies
	 * the post registers after it. */
	bool unread;
	/* A call the target ran as a whole (x86-64 Linux's vDSO functions,
	 * such as __vdso_clock_gettime): pc is the function's entry, the post
	 * registers hold every register the call may change, the pc (the
	 * return address) among them, and the post memory what it wrote (the
	 * matching system call's buffers). A replayer applies them instead of
	 * running the function. */
	bool call;
};

/* ---- writing --------------------------------------------------------------- */

struct snr_trace_writer;

/* Starts a trace for path: creates its journal, PATH.partial (refused if it
 * exists), and writes the file header and the META chunk (meta_json is a
 * JSON object text; it must contain "registers": [{name,size},...]). Every
 * chunk, each step as its own, is written to the journal at once: a writer
 * killed part-way leaves PATH.partial, a truncated trace holding every step
 * added. path itself is written only by snr_trace_finish. */
struct snr_trace_writer *snr_trace_create(const char *path, const char *meta_json, char *err, size_t errlen);
/* Before a recording starts: can path's trace be written (its journal
 * created in its folder, PATH.partial not there already, path not a device
 * or folder)? 0, or -1 with err saying why. */
int snr_trace_check_path(const char *path, char *err, size_t errlen);
/* PATH.partial (allocated). */
char *snr_trace_journal_path(const char *path);
const char *snr_trace_writer_journal(const struct snr_trace_writer *w);
int snr_trace_write_symbols(struct snr_trace_writer *w, size_t n, const uint64_t *addr, const uint64_t *size,
			    const char *const *name);
/* Appends one step to the journal (one write). */
int snr_trace_add_step(struct snr_trace_writer *w, const struct snr_trace_step *s);
/* The steps added so far, and taking back every step added after them
 * (the journal is cut back there): `snr record --method sim` drops a stride
 * the target did not confirm. */
struct snr_trace_mark {
	int64_t offset; /* the journal's length */
	uint32_t seq;
	uint64_t bytes, next_index, prev_next_pc;
	uint64_t batch_steps, batch_bytes; /* the trace proper's batch there */
	uint64_t stream_bytes, stream_batch_len; /* the trace written alongside, and its batch */
};
int snr_trace_writer_mark(struct snr_trace_writer *w, struct snr_trace_mark *m);
int snr_trace_writer_rewind(struct snr_trace_writer *w, const struct snr_trace_mark *m);
/* on: steps gather in memory and reach the journal at the next flush
 * (or mark); off: each step is written as it comes (flushing first). */
int snr_trace_writer_hold(struct snr_trace_writer *w, bool on);
int snr_trace_writer_flush(struct snr_trace_writer *w);
/* Ends STEPS and writes the DIGEST into the journal: final values of every register (regs[i]
 * for register i, NULL if unknown) and the written memory's block hashes. */
int snr_trace_write_digest(struct snr_trace_writer *w, const uint8_t *const *regs, size_t nmem,
			   const struct snr_trace_mem *mem);
/* Writes END (a JSON object text) into the journal, which is then a whole
 * trace, and compacts the journal into path (STEPS in batches, the DIGEST,
 * END) through a temporary file renamed into place, then removes the
 * journal. Returns 0 if every write succeeded; otherwise path is untouched,
 * the journal kept (whole, for snr_trace_finish_journal, if only the
 * trace's write failed), and the error printed. The writer is freed in any
 * case. */
int snr_trace_finish(struct snr_trace_writer *w, const char *end_json);
/* `snr trace finish`: a journal whose recording ended (its END written,
 * then writing the trace failed: a full disk) compacted into path as
 * snr_trace_finish would have, through a temporary file renamed into place;
 * the journal is then removed and *steps says how many instructions it
 * held. -1 with err: a journal without its END (the recorder killed: exit 3,
 * lib/snr_partial.h), damaged, or a failed write (path untouched). */
int snr_trace_finish_journal(const char *journal, const char *path, uint64_t *steps, char *err, size_t errlen);
/* Frees a writer without an END: the journal stays, read as truncated. */
void snr_trace_abandon(struct snr_trace_writer *w);
const char *snr_trace_writer_error(struct snr_trace_writer *w);
uint64_t snr_trace_bytes_written(const struct snr_trace_writer *w);

/* ---- reading --------------------------------------------------------------- */

struct snr_trace;

/* Opens a trace and reads its META (and SYMBOLS). NULL with err naming the
 * file, chunk and offset on failure. */
struct snr_trace *snr_trace_open(const char *path, char *err, size_t errlen);
void snr_trace_close(struct snr_trace *t);
/* The LINES chunk's payload (uncompressed, checked at open:
 * snr_line_pack_parse takes it), NULL with *n 0 when the trace has none. */
const uint8_t *snr_trace_lines(const struct snr_trace *t, size_t *n);
/* The LINES chunk's size in the file (header and stored payload), 0: none. */
size_t snr_trace_lines_stored(const struct snr_trace *t);

/* The META chunk's JSON text, and the register table from it. */
const char *snr_trace_meta_json(const struct snr_trace *t);
size_t snr_trace_nregs(const struct snr_trace *t);
const struct snr_trace_reg *snr_trace_regs(const struct snr_trace *t);

/* Symbols carried by the trace (sorted by address). */
size_t snr_trace_nsymbols(const struct snr_trace *t);
void snr_trace_symbol(const struct snr_trace *t, size_t i, uint64_t *addr, uint64_t *size, const char **name);
/* "func+0x1c" or "0x..." into buf. */
const char *snr_trace_symbolize(const struct snr_trace *t, uint64_t addr, char *buf, size_t len);

/* Next step: 1 = *s filled (valid until the next call), 0 = no more steps,
 * -1 = error (snr_trace_error says what and where). Reaching the end of a
 * truncated file is not an error: it returns 0 and snr_trace_truncated()
 * becomes true. */
int snr_trace_next(struct snr_trace *t, struct snr_trace_step *s);
/* The pcs of the next steps, as long as they are plain (nothing but the pc:
 * no code, registers, memory, post values, unread or call flag), into pcs
 * (at most max): how many were read, 0 when the next step is not plain or
 * is the last of its chunk (snr_trace_next reads that one). For a reader
 * that wants only the pcs of most steps (the replayer's trace load): no
 * step record filled per instruction. */
size_t snr_trace_next_plain(struct snr_trace *t, uint64_t *pcs, size_t max);
/* Rewinds to the first step. */
int snr_trace_rewind(struct snr_trace *t);
const char *snr_trace_error(const struct snr_trace *t);

/* After the steps: the END and DIGEST chunks, if the file has them. */
bool snr_trace_truncated(const struct snr_trace *t);
/* Finished, but its END says "interrupted" (SIGINT/SIGTERM ended the window). */
bool snr_trace_interrupted(const struct snr_trace *t);
/* Instructions the file holds (from its last STEPS chunk's header). */
uint64_t snr_trace_instructions(const struct snr_trace *t);
/* NULL for a whole trace; for a truncated or interrupted one, how much it
 * holds and why ("4096 of the 200000 instructions asked for: ...") in buf. */
const char *snr_trace_partial_text(const struct snr_trace *t, char *buf, size_t len);
const char *snr_trace_end_json(const struct snr_trace *t); /* NULL if none */
/* Final register values (NULL entries for unknown) and the digest's memory
 * blocks; false if the trace has no DIGEST. */
bool snr_trace_digest(const struct snr_trace *t, const uint8_t *const **regs, size_t *nblocks,
		      const struct snr_trace_mem **blocks, const uint64_t **hashes);

/* A trace file's identity, which a metrics file records so that whoever
 * reopens "the trace it was replayed from" can tell that trace from another
 * one at the same path: the 64-bit FNV-1a hash of every byte of the file
 * (header, every chunk) and its size. Stored in a metrics file's META as
 * "trace_digest": "fnv1a64:<16 hex digits>", "trace_bytes": N. */
struct snr_trace_id {
	uint64_t fnv1a64;
	uint64_t bytes;
};
void snr_trace_id_of(const struct snr_trace *t, struct snr_trace_id *id);
/* "fnv1a64:0123456789abcdef" into buf (at least 25 bytes). */
const char *snr_trace_id_text(const struct snr_trace_id *id, char *buf, size_t len);
/* From the text above; false if it is not that form. */
bool snr_trace_id_parse(const char *text, uint64_t bytes, struct snr_trace_id *id);

/* Hash used by DIGEST blocks (64-bit FNV-1a over the bytes). */
uint64_t snr_trace_hash(const void *data, size_t len);

#endif
