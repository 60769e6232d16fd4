/*
 * test_trace.c: the .snrt writer and reader.
 *  - a trace round-trips: every step's pc, code, registers, memory and post
 *    effects, the symbols, the digest and END come back as written;
 *  - the plain steps' bulk reader (snr_trace_next_plain) with snr_trace_next
 *    reads the same pcs;
 *  - single-byte corruptions (every header byte, a sample of payload bytes)
 *    are reported at open, naming a chunk and offset (or the file header),
 *    never read as valid data;
 *  - every truncation reads as truncated with exactly the steps of the whole
 *    chunks before the cut, or fails cleanly if META itself is cut;
 *  - steps held in memory (--method sim), flushed, cut back to a mark and
 *    written again, make the same trace bytes, and an abandoned journal
 *    holds them all.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "tests/check.h"

#define NSTEPS 9000 /* spans three STEPS chunks */

static const char meta[] = "{\"isa\": \"test\", \"registers\": [{\"name\": \"a\", \"size\": 8}, "
			   "{\"name\": \"pc\", \"size\": 8}, {\"name\": \"v\", \"size\": 16}]}";

static void step_for(uint64_t i, struct snr_trace_step *s, struct snr_trace_regval *rv, struct snr_trace_mem *mv,
		     uint8_t *regbuf, uint8_t *membuf)
{
	memset(s, 0, sizeof(*s));
	s->index = i;
	s->pc = 0x10000 + 4 * i + (i % 97 == 0 ? 0x400 : 0);
	if (i % 5 == 0) {
		s->code_len = 4;
		for (int k = 0; k < 4; k++)
			s->code[k] = (uint8_t)(i * 7 + (uint64_t)k);
	}
	if (i % 3 == 0) {
		for (int k = 0; k < 8; k++)
			regbuf[k] = (uint8_t)(i >> (k % 3));
		for (int k = 0; k < 16; k++)
			regbuf[8 + k] = (uint8_t)(i + (uint64_t)k);
		rv[0] = (struct snr_trace_regval){0, regbuf};
		rv[1] = (struct snr_trace_regval){2, regbuf + 8};
		s->nregs = 2;
		s->regs = rv;
	}
	if (i % 4 == 0) {
		uint64_t len = 1 + i % 40;
		for (uint64_t k = 0; k < len; k++)
			membuf[k] = (uint8_t)(i ^ k);
		mv[0] = (struct snr_trace_mem){(uint8_t)(i % 3), (uint16_t)(i % 2), 0x20000000 + i * 8, len, membuf};
		s->nmem = 1;
		s->mem = mv;
	}
	if (i % 11 == 0) {
		s->npost_regs = 1;
		s->post_regs = rv + 2;
		rv[2] = (struct snr_trace_regval){1, regbuf};
		s->unread = i % 22 == 0; /* a load from memory the debugger could not read */
		s->call = i % 37 == 3;   /* a call the target ran as a unit (flag 64) */
	}
}

static int add_steps(struct snr_trace_writer *w, uint64_t from, uint64_t to)
{
	for (uint64_t i = from; i < to; i++) {
		struct snr_trace_step s;
		struct snr_trace_regval rv[3];
		struct snr_trace_mem mv[1];
		uint8_t regbuf[24] = {0}, membuf[64] = {0}; /* a post register of a step that sets none is 0 */
		step_for(i, &s, rv, mv, regbuf, membuf);
		if (snr_trace_add_step(w, &s)) {
			CHECK(0, "add_step %llu", (unsigned long long)i);
			return -1;
		}
	}
	return 0;
}

/* held: the steps held as --method sim holds them (snr_trace_writer_hold),
 * flushed at uneven points, a stretch written, then cut back to a mark and
 * written again, and the rest written one by one after the hold ends (a
 * fallback to stepping): the trace must be the same bytes. abandon: the
 * journal is left as a recorder that failed leaves it (returns 1). */
static int write_trace_as(const char *path, bool held, bool abandon)
{
	char err[256];
	struct snr_trace_writer *w = snr_trace_create(path, meta, err, sizeof(err));
	CHECK(w != NULL, "create: %s", err);
	if (!w)
		return -1;
	if (held)
		snr_trace_writer_hold(w, true);
	uint64_t addr[3] = {0x10000, 0x10400, 0x10500};
	uint64_t size[3] = {0x400, 0x100, 0x10};
	const char *name[3] = {"main", "helper", "red\x1b[31mname\x07"};
	CHECK(snr_trace_write_symbols(w, 3, addr, size, name) == 0, "symbols");
	if (!held) {
		if (add_steps(w, 0, NSTEPS))
			return -1;
	} else {
		struct snr_trace_mark m;
		if (add_steps(w, 0, 1000) || snr_trace_writer_flush(w) || add_steps(w, 1000, 4500) ||
		    snr_trace_writer_mark(w, &m) || add_steps(w, 4500, 6000) || snr_trace_writer_flush(w) ||
		    add_steps(w, 6000, 6100) || snr_trace_writer_rewind(w, &m) || add_steps(w, 4500, 8200) ||
		    snr_trace_writer_hold(w, false) || add_steps(w, 8200, NSTEPS)) {
			CHECK(0, "held writes: %s", snr_trace_writer_error(w));
			return -1;
		}
	}
	if (abandon) {
		snr_trace_abandon(w);
		return 1;
	}
	uint8_t a[8] = {1, 2, 3, 4, 5, 6, 7, 8}, pc[8] = {9};
	const uint8_t *regs[3] = {a, pc, NULL};
	uint8_t mem[10000];
	for (int i = 0; i < 10000; i++)
		mem[i] = (uint8_t)(i * 31);
	struct snr_trace_mem m = {1, 0, 0x20000f00, sizeof(mem), mem};
	CHECK(snr_trace_write_digest(w, regs, 1, &m) == 0, "digest");
	return snr_trace_finish(w, "{\"instructions\": 9000, \"reason\": \"count\"}");
}

static int write_trace(const char *path) { return write_trace_as(path, false, false); }

static uint64_t count_steps(struct snr_trace *t, int *rc)
{
	struct snr_trace_step s;
	uint64_t n = 0;
	while ((*rc = snr_trace_next(t, &s)) == 1)
		n++;
	return n;
}

static void test_round_trip(const char *path)
{
	char err[256];
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	CHECK(t != NULL, "open: %s", err);
	if (!t)
		return;
	CHECK(!snr_trace_truncated(t), "complete trace reads as truncated");
	CHECK(snr_trace_nregs(t) == 3 && snr_trace_regs(t)[2].size == 16, "register table");
	char sym[64];
	CHECK(!strcmp(snr_trace_symbolize(t, 0x10008, sym, sizeof(sym)), "main+0x8"), "symbolize: %s", sym);
	CHECK(!strcmp(snr_trace_symbolize(t, 0x10400, sym, sizeof(sym)), "helper"), "symbolize: %s", sym);
	/* control bytes in a name reach no output raw */
	CHECK(!strcmp(snr_trace_symbolize(t, 0x10500, sym, sizeof(sym)), "red\\x1b[31mname\\x07"), "escaped: %s", sym);
	for (uint64_t i = 0; i < NSTEPS; i++) {
		struct snr_trace_step got, want;
		struct snr_trace_regval rv[3];
		struct snr_trace_mem mv[1];
		uint8_t regbuf[24], membuf[64];
		int rc = snr_trace_next(t, &got);
		CHECK(rc == 1, "step %llu: rc %d: %s", (unsigned long long)i, rc, snr_trace_error(t));
		if (rc != 1)
			break;
		step_for(i, &want, rv, mv, regbuf, membuf);
		CHECK(got.index == i && got.pc == want.pc && got.code_len == want.code_len &&
			      !memcmp(got.code, want.code, want.code_len),
		      "step %llu: pc/code differ", (unsigned long long)i);
		CHECK(got.nregs == want.nregs && got.nmem == want.nmem && got.npost_regs == want.npost_regs &&
			      got.unread == want.unread && got.call == want.call,
		      "step %llu: counts differ", (unsigned long long)i);
		if (got.nregs == want.nregs)
			for (unsigned k = 0; k < got.nregs; k++)
				CHECK(got.regs[k].reg == want.regs[k].reg &&
					      !memcmp(got.regs[k].val, want.regs[k].val, got.regs[k].reg == 2 ? 16 : 8),
				      "step %llu: register %u differs", (unsigned long long)i, k);
		if (got.nmem == 1 && want.nmem == 1)
			CHECK(got.mem[0].addr == want.mem[0].addr && got.mem[0].len == want.mem[0].len &&
				      got.mem[0].space == want.mem[0].space && got.mem[0].chip == want.mem[0].chip &&
				      !memcmp(got.mem[0].data, want.mem[0].data, want.mem[0].len),
			      "step %llu: memory differs", (unsigned long long)i);
	}
	struct snr_trace_step s;
	CHECK(snr_trace_next(t, &s) == 0, "steps beyond the last");
	const uint8_t *const *regs;
	size_t nb;
	const struct snr_trace_mem *blocks;
	const uint64_t *hashes;
	CHECK(snr_trace_digest(t, &regs, &nb, &blocks, &hashes), "no digest");
	CHECK(regs[0] && regs[0][7] == 8 && regs[1] && !regs[2], "digest registers");
	/* 10000 bytes from 0x20000f00: blocks [f00,1000) [1000,2000) [2000,3000) [3000,3610) */
	CHECK(nb == 4 && blocks[0].addr == 0x20000f00 && blocks[0].len == 0x100 && blocks[3].len == 0x610,
	      "digest blocks: %zu", nb);
	CHECK(snr_trace_end_json(t) && strstr(snr_trace_end_json(t), "\"count\""), "END");
	snr_trace_rewind(t);
	int rc;
	CHECK(count_steps(t, &rc) == NSTEPS && rc == 0, "rewind");
	snr_trace_close(t);
}

/* snr_trace_next_plain, with snr_trace_next for the steps it leaves,
 * reads every pc in order (the plain steps in bulk, of as many as max). */
static void test_plain(const char *path, size_t max)
{
	char err[256];
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	CHECK(t != NULL, "open: %s", err);
	if (!t)
		return;
	uint64_t pcs[64], i = 0, bulk = 0;
	int rc = 1;
	while (rc == 1 && i <= NSTEPS) {
		size_t k = snr_trace_next_plain(t, pcs, max);
		CHECK(k <= max, "%zu plain steps for a max of %zu", k, max);
		for (size_t j = 0; j < k; j++, i++) {
			struct snr_trace_step want;
			struct snr_trace_regval rv[3];
			struct snr_trace_mem mv[1];
			uint8_t regbuf[24], membuf[64];
			step_for(i, &want, rv, mv, regbuf, membuf);
			CHECK(pcs[j] == want.pc && !want.code_len && !want.nregs && !want.nmem && !want.npost_regs &&
				      !want.unread && !want.call,
			      "plain step %llu: pc %llx, want %llx (or not a plain step)", (unsigned long long)i,
			      (unsigned long long)pcs[j], (unsigned long long)want.pc);
		}
		bulk += k;
		if (k)
			continue;
		struct snr_trace_step got;
		rc = snr_trace_next(t, &got);
		if (rc == 1) {
			CHECK(got.index == i, "step %llu read as %llu after plain steps", (unsigned long long)i,
			      (unsigned long long)got.index);
			i++;
		}
	}
	CHECK(rc == 0 && i == NSTEPS, "plain reader (max %zu): %llu steps, rc %d: %s", max, (unsigned long long)i, rc,
	      snr_trace_error(t));
	CHECK(bulk > NSTEPS / 4, "only %llu of the steps read as plain", (unsigned long long)bulk);
	snr_trace_close(t);
}

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	fseek(f, 0, SEEK_END);
	*len = (size_t)ftell(f);
	fseek(f, 0, SEEK_SET);
	uint8_t *b = malloc(*len);
	if (fread(b, 1, *len, f) != *len)
		abort();
	fclose(f);
	return b;
}

static void spit(const char *path, const uint8_t *b, size_t len)
{
	FILE *f = fopen(path, "wb");
	fwrite(b, 1, len, f);
	fclose(f);
}

/* Flips one byte of the file in place (pwrite), opens, flips it back. Every
 * byte of the file header and of every chunk header is tried, and every
 * 7th payload byte (each payload is covered by one CRC, so a sample of its
 * bytes exercises the same check). */
static void test_corruption(const char *path, const char *tmp)
{
	size_t len;
	uint8_t *b = slurp(path, &len);
	spit(tmp, b, len);
	int fd = open(tmp, O_RDWR);
	unsigned tried = 0, reported = 0;
	/* chunk header offsets: walk the chunk chain */
	uint8_t *is_header = calloc(len, 1);
	memset(is_header, 1, 16);
	for (size_t off = 16; off + 28 <= len;) {
		memset(is_header + off, 1, 28);
		uint32_t stored = (uint32_t)b[off + 12] | (uint32_t)b[off + 13] << 8 | (uint32_t)b[off + 14] << 16 |
				  (uint32_t)b[off + 15] << 24;
		off += 28 + stored;
	}
	for (size_t off = 0; off < len; off++) {
		if (!is_header[off] && off % 7)
			continue;
		uint8_t bad = b[off] ^ 0x5a;
		if (pwrite(fd, &bad, 1, (off_t)off) != 1)
			abort();
		char err[512];
		struct snr_trace *t = snr_trace_open(tmp, err, sizeof(err));
		if (pwrite(fd, &b[off], 1, (off_t)off) != 1)
			abort();
		tried++;
		if (t) {
			CHECK(0, "byte %zu corrupted: the trace still opens", off);
			snr_trace_close(t);
			continue;
		}
		int named = strstr(err, "chunk") || strstr(err, "header");
		CHECK(named, "byte %zu: error names no place: %s", off, err);
		reported += named;
		if (check_failures > 10)
			break;
	}
	fprintf(stderr, "corruption: %u of %u single-byte corruptions (of a %zu-byte file) reported with a place\n",
		reported, tried, len);
	close(fd);
	free(is_header);
	free(b);
}

static void test_truncation(const char *path, const char *tmp)
{
	size_t len;
	uint8_t *b = slurp(path, &len);
	uint64_t last = 0;
	for (size_t cut = 0; cut < len; cut += (cut < 200 ? 1 : 37)) {
		spit(tmp, b, cut);
		char err[512];
		struct snr_trace *t = snr_trace_open(tmp, err, sizeof(err));
		if (!t)
			continue; /* cut inside the header or META: refused cleanly */
		CHECK(snr_trace_truncated(t), "cut at %zu: not reported as truncated", cut);
		int rc;
		uint64_t n = count_steps(t, &rc);
		CHECK(rc == 0, "cut at %zu: error while reading steps: %s", cut, snr_trace_error(t));
		CHECK(n % 4096 == 0 || n == NSTEPS, "cut at %zu: %llu steps, not whole chunks", cut,
		      (unsigned long long)n);
		CHECK(n >= last, "cut at %zu: fewer steps (%llu) than a shorter cut", cut, (unsigned long long)n);
		last = n;
		snr_trace_close(t);
	}
	CHECK(last == NSTEPS, "the longest cut should have every step, got %llu", (unsigned long long)last);
	free(b);
}

/* A recorded file's JSON strings come out with their control bytes as
 * \xHH (and the text is untouched when none has any). */
/* Steps held in memory reach the journal as few chunks, and the trace is
 * the same bytes as one written a step at a time; the journal a failed
 * recorder leaves holds every step. */
static void test_held(const char *path, const char *tmp)
{
	size_t na, nb;
	CHECK(write_trace_as(tmp, true, false) == 0, "held write");
	uint8_t *a = slurp(path, &na), *b = slurp(tmp, &nb);
	CHECK(a && b && na == nb && !memcmp(a, b, na), "held: the trace differs (%zu and %zu bytes)", na, nb);
	free(a);
	free(b);
	unlink(tmp);
	CHECK(write_trace_as(tmp, true, true) == 1, "held, abandoned");
	char journal[300], err[300];
	snprintf(journal, sizeof(journal), "%s.partial", tmp);
	struct snr_trace *t = snr_trace_open(journal, err, sizeof(err));
	CHECK(t != NULL, "the journal: %s", err);
	if (t) {
		int rc;
		CHECK(count_steps(t, &rc) == NSTEPS && rc == 0, "the journal's steps");
		snr_trace_close(t);
	}
	/* held steps went in as a chunk per flush or batch, the 800 after the
	 * hold ended as a chunk each */
	struct snr_chunk_file f;
	if (snr_chunkf_open(&f, journal, SNR_TRACE_MAGIC, "snr trace", SNR_TRACE_VERSION, SNR_TRACE_VERSION,
			    SNR_CHUNK_END, err, sizeof(err)) == 0) {
		size_t steps = 0;
		for (size_t i = 0; i < f.nchunks; i++)
			steps += f.chunks[i].type == SNR_CHUNK_STEPS;
		CHECK(steps <= 810, "the journal has %zu STEPS chunks for 8200 held steps and 800 others", steps);
		snr_chunkf_close(&f);
	} else {
		CHECK(0, "the journal: %s", err);
	}
	unlink(journal);
}

static void test_json_escape(void)
{
	char *e = snr_json_escape_controls("{\"target\":\"tcp:\\u001b]0;t\\u0007\",\"n\":[1,2.5,\"\\u007fok\"]}");
	CHECK(e && !strcmp(e, "{\"target\":\"tcp:\\\\x1b]0;t\\\\x07\",\"n\":[1,2.5,\"\\\\x7fok\"]}"), "escaped: %s",
	      e ? e : "(null)");
	free(e);
	CHECK(snr_json_escape_controls("{\"isa\":\"ta1\",\"chips\":4}") == NULL, "clean JSON is left alone");
	CHECK(snr_json_escape_controls("not json") == NULL, "not JSON");
}

int main(void)
{
	char dir[] = "/tmp/snr-test-trace-XXXXXX";
	if (!mkdtemp(dir))
		return 1;
	char path[256], tmp[256];
	snprintf(path, sizeof(path), "%s/t.snrt", dir);
	snprintf(tmp, sizeof(tmp), "%s/bad.snrt", dir);
	CHECK(write_trace(path) == 0, "write");
	test_round_trip(path);
	test_plain(path, 1);
	test_plain(path, 5);
	test_plain(path, 64);
	test_corruption(path, tmp);
	test_truncation(path, tmp);
	test_held(path, tmp);
	test_json_escape();
	unlink(path);
	unlink(tmp);
	rmdir(dir);
	return check_report("test_trace");
}
