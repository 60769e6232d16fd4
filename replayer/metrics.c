/*
 * metrics.c: the .snrm file (see metrics.h and docs/metrics-format.md).
 *
 * Chunks: META (JSON), SYMBOLS, EVENTS (zstd batches of event records),
 * SUMMARY (JSON, last). An event record is one kind byte followed by varint
 * fields in the order of the struct in sim/snr_tracker.h; signed fields are
 * zigzag-encoded. Since version 3, instruction indices, pcs, cycles and
 * memory addresses are stored as zigzag deltas from the chunk's running
 * context (struct snr_mw_ctx), which makes most fields one byte. Batches flush every
 * 64 Ki events and each starts from a zero context. The file is written to a
 * temporary name and renamed into place by snr_metrics_finish
 * (lib/snr_outfile.h): a replay that fails or is killed part-way leaves the
 * path as it was.
 */
#include "metrics.h"

#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_line_pack.h"
#include "lib/snr_output.h"
#include "lib/snr_partial.h"
#include "lib/snr_symtab.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "replayer/metrics_write.h"

enum { CH_META = 1, CH_SYMBOLS = 2, CH_EVENTS = 3, CH_SUMMARY = 4, CH_LINES = 5 };
enum {
	EV_ISSUE = SNR_MW_ISSUE,
	EV_RETIRE = SNR_MW_RETIRE,
	EV_STALL = SNR_MW_STALL,
	EV_DMA = SNR_MW_DMA,
	EV_MEM = SNR_MW_MEM,
	EV_REG = SNR_MW_REG,
	EV_BUSY = SNR_MW_BUSY,
	EV_INSN = SNR_MW_INSN,
	EV_PEER = SNR_MW_PEER,
	EV_FABRIC = SNR_MW_FABRIC,
}; /* the reader's names for the writer's record kinds */
#define METRICS_INDEX_SLACK 65536 /* how far an instruction index may run past the records read */
/* how far a SUMMARY's cycles may run past the events' last cycle: the
 * simulators here finish exactly there; an engine may drain a little after */
#define METRICS_CYCLE_SLACK ((uint64_t)1 << 20)

/* The writer's state and its encoders are in metrics_write.h. */

/* Starts the next EVENTS payload: the number of records before it
 * (version 4), then room for the records. */
static void start_events(struct snr_metrics_writer *w)
{
	w->ev.len = 0;
	snr_buf_varint(&w->ev, w->before);
	snr_buf_need(&w->ev, SNR_MW_ROOM);
	w->wp = w->ev.p + w->ev.len;
	w->lim = w->ev.p + w->ev.cap - SNR_MW_ROOM;
	w->left = SNR_MW_EVENTS_PER_CHUNK - 1;
	memset(&w->x, 0, sizeof(w->x));
	w->insn_end = NULL; /* records never straddle chunks */
}

static uint32_t chunk_records(const struct snr_metrics_writer *w) { return SNR_MW_EVENTS_PER_CHUNK - 1 - w->left; }

static void flush_events(struct snr_metrics_writer *w)
{
	if (!chunk_records(w))
		return;
	w->ev.len = (size_t)(w->wp - w->ev.p);
	snr_chunkw_put(&w->cw, CH_EVENTS, w->ev.p, w->ev.len, true);
	w->before += chunk_records(w);
	start_events(w);
}

void snr_mw_room(struct snr_metrics_writer *w)
{
	if (w->pending) { /* an ISSUE no RETIRE merged with: its record, before the caller's */
		w->pending = 0;
		const struct snr_ev_insn e = {.index = w->pend_index,
					      .pc = w->pend_pc,
					      .issue = w->pend_issue,
					      .retire = w->pend_retire,
					      .unit = w->pend_unit,
					      .cls = w->pend_cls};
		w->wp = snr_mw_insn(w, snr_mw_begin(w), EV_ISSUE, &e);
	}
	if (!w->left) { /* a chunk holds SNR_MW_EVENTS_PER_CHUNK - 1 records */
		flush_events(w);
		return;
	}
	w->ev.len = (size_t)(w->wp - w->ev.p);
	snr_buf_need(&w->ev, SNR_MW_ROOM);
	w->wp = w->ev.p + w->ev.len;
	w->lim = w->ev.p + w->ev.cap - SNR_MW_ROOM;
	w->insn_end = NULL; /* the buffer may have moved: the new record closes the INSN anyway */
}

uint8_t *snr_mw_insn_long(uint8_t *p, uint8_t kind, uint64_t di, uint64_t dp, uint64_t dc, uint64_t dr, uint8_t unit,
			  uint8_t cls)
{
	*p++ = kind;
	p = snr_mw_put(p, di);
	p = snr_mw_put(p, dp);
	p = snr_mw_put(p, dc);
	p = snr_mw_put(p, dr);
	p = snr_mw_put(p, unit);
	return snr_mw_put(p, cls);
}

void snr_mw_issue_slow(struct snr_metrics_writer *w, const struct snr_ev_insn *e)
{
	if (w->pending)
		snr_mw_room(w); /* the ISSUE before it, on its own */
	snr_mw_issue(w, e); /* no ISSUE pending now */
}

void snr_mw_retire_slow(struct snr_metrics_writer *w, const struct snr_ev_insn *e)
{
	if (w->pending && e->index == w->pend_index && e->pc == w->pend_pc && e->issue == w->pend_issue &&
	    e->retire == w->pend_retire && e->unit == w->pend_unit && e->cls == w->pend_cls) {
		w->pending = 0;
		uint8_t *p = snr_mw_insn(w, snr_mw_begin(w), EV_INSN, e);
		w->open_at = p;
		*p++ = 0;
		w->wp = w->insn_end = p;
		return;
	}
	w->wp = snr_mw_insn(w, snr_mw_begin(w), EV_RETIRE, e); /* the pending ISSUE, if any, first */
}

void snr_mw_reg_slow(struct snr_metrics_writer *w, const struct snr_ev_reg *e)
{
	if (w->wp == w->insn_end && e->index == w->x.index && e->write <= 1 && *w->open_at < SNR_MW_INSN_REGS_MAX) {
		/* a register of the INSN just written, of more than one byte */
		(*w->open_at)++;
		w->wp = w->insn_end = snr_mw_put(w->wp, (uint32_t)e->reg << 1 | e->write);
		return;
	}
	uint8_t *p = snr_mw_begin(w);
	const uint64_t di = snr_zigzag((int64_t)(e->index - w->x.index));
	if (SNR_MW_PACKED && (di | e->reg | e->write) < 0x80) {
		uint32_t v = (uint32_t)EV_REG | (uint32_t)di << 8 | (uint32_t)e->reg << 16 | (uint32_t)e->write << 24;
		memcpy(p, &v, 4);
		p += 4;
	} else {
		*p++ = EV_REG;
		p = snr_mw_put(p, di);
		p = snr_mw_put(p, e->reg);
		p = snr_mw_put(p, e->write);
	}
	w->wp = p;
	w->x.index = e->index;
}

void snr_metrics_on_issue(void *u, const struct snr_ev_insn *e) { snr_mw_issue(u, e); }
void snr_metrics_on_retire(void *u, const struct snr_ev_insn *e) { snr_mw_retire(u, e); }
void snr_metrics_on_stall(void *u, const struct snr_ev_stall *e) { snr_mw_stall(u, e); }
void snr_metrics_on_dma(void *u, const struct snr_ev_dma *e) { snr_mw_dma(u, e); }
void snr_metrics_on_mem(void *u, const struct snr_ev_mem *e) { snr_mw_mem(u, e); }
void snr_metrics_on_reg(void *u, const struct snr_ev_reg *e) { snr_mw_reg(u, e); }
void snr_metrics_on_busy(void *u, const struct snr_ev_busy *e) { snr_mw_busy(u, e); }
/* A pod's records (version 6): rare (one per peer wait, one per resource and
 * sampling period), so written plainly, every field a varint. */
void snr_metrics_on_peer(void *u, const struct snr_ev_peer *e)
{
	struct snr_metrics_writer *w = u;
	uint8_t *p = snr_mw_begin(w);
	*p++ = EV_PEER;
	const uint64_t v[] = {e->wait_index, e->wait_pc,   e->wait_start,  e->stall_cycles,
			      e->dma_id,     e->chip,      e->flag,        snr_zigzag(e->issue_index),
			      e->issue_pc,   e->issue_cycle, e->done_cycle, e->bytes};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		p = snr_mw_put(p, v[k]);
	w->wp = p;
}

static uint64_t fabric_units(double x)
{
	double q = nearbyint(x * SNR_METRICS_FABRIC_UNIT);
	return q > 0 && q < 1.8e19 ? (uint64_t)q : 0;
}

void snr_metrics_on_fabric(void *u, const struct snr_ev_fabric *e)
{
	struct snr_metrics_writer *w = u;
	uint8_t *p = snr_mw_begin(w);
	*p++ = EV_FABRIC;
	const uint64_t v[] = {e->resource, e->kind, e->from, e->to, e->start, e->end - e->start, e->bytes_per_cycle,
			      fabric_units(e->bytes), fabric_units(e->busy_cycles), fabric_units(e->contended_cycles)};
	for (size_t k = 0; k < sizeof(v) / sizeof(v[0]); k++)
		p = snr_mw_put(p, v[k]);
	w->wp = p;
}

void snr_metrics_on_insn(void *u, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread, unsigned nwrite)
{
	snr_mw_insn_regs(u, e, regs, nread, nwrite);
}

struct snr_metrics_writer *snr_metrics_create(const char *path, const char *meta_json, char *err, size_t errlen)
{
	struct snr_metrics_writer *w = snr_xcalloc(1, sizeof(*w));
	if (snr_chunkw_open(&w->cw, path, SNR_CHUNKW_ATOMIC, SNR_METRICS_MAGIC, SNR_METRICS_VERSION, err, errlen)) {
		free(w);
		return NULL;
	}
	w->cw.level = 1;
	start_events(w);
	if (snr_chunkw_put(&w->cw, CH_META, meta_json, strlen(meta_json), false)) {
		snr_fmt(err, errlen, "%s", w->cw.err);
		snr_metrics_abandon(w);
		return NULL;
	}
	w->tracker = (struct snr_tracker){
		.abi_version = SNR_TRACKER_ABI_VERSION,
		.user = w,
		.on_issue = snr_metrics_on_issue,
		.on_retire = snr_metrics_on_retire,
		.on_stall = snr_metrics_on_stall,
		.on_dma = snr_metrics_on_dma,
		.on_mem = snr_metrics_on_mem,
		.on_reg = snr_metrics_on_reg,
		.on_busy = snr_metrics_on_busy,
		.on_insn = snr_metrics_on_insn,
		.on_peer = snr_metrics_on_peer,
		.on_fabric = snr_metrics_on_fabric,
	};
	return w;
}

int snr_metrics_write_symbols(struct snr_metrics_writer *w, size_t n, const uint64_t *addr, const uint64_t *size,
			      const char *const *name)
{
	struct snr_buf b = {0};
	snr_symtab_encode(&b, n, addr, size, name);
	int rc = snr_chunkw_put(&w->cw, CH_SYMBOLS, b.p, b.len, true);
	free(b.p);
	return rc;
}

int snr_metrics_write_lines(struct snr_metrics_writer *w, const uint8_t *payload, size_t len)
{
	int level = w->cw.level;
	w->cw.level = 0; /* zstd's default, as the trace stores it: written once, not at replay speed */
	int rc = snr_chunkw_put(&w->cw, CH_LINES, payload, len, true);
	w->cw.level = level;
	return rc;
}

int snr_metrics_write_trace_tables(struct snr_metrics_writer *w, const struct snr_trace *t)
{
	size_t ns = snr_trace_nsymbols(t);
	uint64_t *sa = snr_xcalloc(ns + 1, 8), *sz = snr_xcalloc(ns + 1, 8);
	const char **sn = snr_xcalloc(ns + 1, sizeof(char *));
	for (size_t i = 0; i < ns; i++)
		snr_trace_symbol(t, i, &sa[i], &sz[i], &sn[i]);
	int rc = snr_metrics_write_symbols(w, ns, sa, sz, sn);
	free(sa);
	free(sz);
	free(sn);
	size_t nl;
	const uint8_t *lines = snr_trace_lines(t, &nl);
	if (!rc && lines)
		rc = snr_metrics_write_lines(w, lines, nl);
	return rc;
}

const struct snr_tracker *snr_metrics_tracker(struct snr_metrics_writer *w) { return &w->tracker; }

int snr_metrics_finish(struct snr_metrics_writer *w, const char *summary_json, char *err, size_t errlen)
{
	if (w->pending) /* the last ISSUE, unless a RETIRE merged it */
		snr_mw_room(w);
	flush_events(w);
	/* the end of the events: an EVENTS chunk of no records, only the count
	 * of all of them (start_events wrote it), so that a reader misses no
	 * chunk dropped at the end */
	w->ev.len = (size_t)(w->wp - w->ev.p);
	snr_chunkw_put(&w->cw, CH_EVENTS, w->ev.p, w->ev.len, false);
	snr_chunkw_put(&w->cw, CH_SUMMARY, summary_json, strlen(summary_json), false);
	int rc = snr_chunkw_close(&w->cw);
	if (rc)
		snr_fmt(err, errlen, "%s", w->cw.err);
	free(w->ev.p);
	free(w);
	return rc;
}

void snr_metrics_abandon(struct snr_metrics_writer *w)
{
	if (!w)
		return;
	snr_chunkw_abort(&w->cw); /* the file at the path, if any, stays as it was */
	free(w->ev.p);
	free(w);
}

/* ---- reading ----------------------------------------------------------------- */

struct snr_metrics {
	struct snr_chunk_file f;
	char *meta, *summary;
	struct snr_symtab syms;
	uint8_t *lines; /* the LINES chunk's payload, NULL: none */
	size_t nlines;
	const struct snr_chunk *summary_chunk;
	uint64_t instructions, cycles; /* the SUMMARY's, checked against the events by snr_metrics_replay */
};

/* A SUMMARY number that contradicts its meaning: the file is refused
 * (exit 3), naming the field. */
static int summary_fail(struct snr_metrics *m, const char *key, const json_t *v, const char *why)
{
	char *text = v ? json_dumps(v, JSON_ENCODE_ANY | JSON_COMPACT) : NULL;
	snr_chunkf_fail(&m->f, m->summary_chunk, "SUMMARY's \"%s\" is %s: %s", key, text ? text : "missing", why);
	free(text);
	snr_partial_damaged();
	return -1;
}

/* The SUMMARY's figures, each a count of its kind (a non-negative integer),
 * its flags booleans (docs/metrics-format.md, SUMMARY: "What the reader checks"). */
static int summary_check(struct snr_metrics *m)
{
	json_error_t je;
	json_t *j = json_loads(m->summary, JSON_REJECT_DUPLICATES, &je);
	if (!j || !json_is_object(j)) {
		if (j)
			snr_chunkf_fail(&m->f, m->summary_chunk, "SUMMARY is not a JSON object");
		else
			snr_chunkf_fail(&m->f, m->summary_chunk, "SUMMARY is not JSON: line %d column %d: %s", je.line,
					je.column, je.text);
		json_decref(j);
		snr_partial_damaged();
		return -1;
	}
	static const char *const counts[] = {"instructions", "cycles", "dma_count", "dma_bytes"};
	static const char *const flags[] = {"verified", "end_state_checked", "truncated_trace", "truncated",
					    "program_exited"};
	int rc = 0;
	for (size_t k = 0; !rc && k < sizeof(counts) / sizeof(counts[0]); k++) {
		json_t *v = json_object_get(j, counts[k]);
		if ((v || k < 2) && (!json_is_integer(v) || json_integer_value(v) < 0))
			rc = summary_fail(m, counts[k], v, "not a count (an integer from 0)");
	}
	for (size_t k = 0; !rc && k < sizeof(flags) / sizeof(flags[0]); k++) {
		json_t *v = json_object_get(j, flags[k]);
		if (v && !json_is_boolean(v))
			rc = summary_fail(m, flags[k], v, "not true or false");
	}
	json_t *ipc = json_object_get(j, "ipc");
	if (!rc && ipc && (!json_is_number(ipc) || json_number_value(ipc) < 0))
		rc = summary_fail(m, "ipc", ipc, "not a number from 0");
	json_t *st = json_object_get(j, "stall_cycles");
	if (!rc && st && !json_is_object(st))
		rc = summary_fail(m, "stall_cycles", st, "not an object of counts");
	const char *key;
	json_t *v;
	json_object_foreach(st, key, v) {
		if (rc)
			break;
		if (!json_is_integer(v) || json_integer_value(v) < 0) {
			char name[80];
			snr_fmt(name, sizeof(name), "stall_cycles.%s", key);
			rc = summary_fail(m, name, v, "not a count (an integer from 0)");
		}
	}
	if (!rc) {
		m->instructions = (uint64_t)json_integer_value(json_object_get(j, "instructions"));
		m->cycles = (uint64_t)json_integer_value(json_object_get(j, "cycles"));
	}
	json_decref(j);
	return rc;
}

struct snr_metrics *snr_metrics_open(const char *path, char *err, size_t errlen)
{
	struct snr_metrics *m = snr_xcalloc(1, sizeof(*m));
	if (snr_chunkf_open(&m->f, path, SNR_METRICS_MAGIC, "snr metrics file", 1, SNR_METRICS_VERSION, CH_LINES, err, errlen)) {
		free(m);
		return NULL;
	}
	int rc = 0;
	for (size_t i = 0; !rc && i < m->f.nchunks; i++) {
		const struct snr_chunk *c = &m->f.chunks[i];
		if ((i == 0) != (c->type == CH_META)) {
			rc = snr_chunkf_fail(&m->f, c, i == 0 ? "the first chunk is not META" : "a second META chunk");
			break;
		}
		if (c->type == CH_EVENTS)
			continue;
		long n = snr_chunkf_payload(&m->f, c);
		if (n < 0) {
			rc = -1;
			break;
		}
		if (c->type == CH_META) {
			m->meta = snr_json_escape_controls((const char *)m->f.raw); /* no raw control bytes out */
			if (!m->meta)
				m->meta = snr_xstrdup((const char *)m->f.raw);
		} else if (c->type == CH_SUMMARY) {
			if (i + 1 != m->f.nchunks)
				rc = snr_chunkf_fail(&m->f, &m->f.chunks[i + 1], "data after the SUMMARY chunk");
			m->summary = snr_json_escape_controls((const char *)m->f.raw);
			if (!m->summary)
				m->summary = snr_xstrdup((const char *)m->f.raw);
			m->summary_chunk = c;
			if (!rc)
				rc = summary_check(m);
		} else if (c->type == CH_LINES) {
			char why[300];
			struct snr_line_pack *k =
				m->lines ? NULL : snr_line_pack_parse(m->f.raw, (size_t)n, why, sizeof(why));
			if (m->lines)
				rc = snr_chunkf_fail(&m->f, c, "a second LINES chunk");
			else if (!k)
				rc = snr_chunkf_fail(&m->f, c, "LINES chunk is malformed: %s", why);
			else {
				snr_line_pack_free(k);
				m->lines = snr_xmalloc((size_t)n + 1);
				memcpy(m->lines, m->f.raw, (size_t)n);
				m->nlines = (size_t)n;
			}
		} else if (c->type == CH_SYMBOLS) {
			if (m->syms.n || snr_symtab_decode(&m->syms, m->f.raw, (size_t)n))
				rc = snr_chunkf_fail(&m->f, c, "symbol table is malformed or repeated");
		}
	}
	if (!rc && !m->meta && m->f.truncated) { /* cut inside its first chunk: as a file without a summary */
		snr_partial_unusable(path, "it ends inside its metadata (the rest of the file is missing); replay "
					   "its trace again (snr replay T.snrt -o M.snrm)",
				     err, errlen);
		snr_metrics_close(m);
		return NULL;
	}
	if (!rc && !m->meta)
		rc = snr_chunkf_fail(&m->f, NULL, "no META chunk: the metrics file is empty");
	if (!rc) {
		json_error_t je;
		json_t *j = json_loads(m->meta, JSON_REJECT_DUPLICATES, &je);
		if (!j)
			rc = snr_chunkf_fail(&m->f, &m->f.chunks[0], "metadata is not JSON: line %d column %d: %s",
					     je.line, je.column, je.text);
		else if (!json_is_object(j))
			rc = snr_chunkf_fail(&m->f, &m->f.chunks[0], "metadata is not a JSON object");
		else /* the trace it was replayed from: an input of whatever reads it (lib/snr_output.h) */
			snr_output_input(json_string_value(json_object_get(j, "trace")));
		json_decref(j);
	}
	if (rc) {
		snr_fmt(err, errlen, "%s", m->f.err);
		snr_metrics_close(m);
		return NULL;
	}
	return m;
}

void snr_metrics_close(struct snr_metrics *m)
{
	if (!m)
		return;
	snr_chunkf_close(&m->f);
	snr_symtab_free(&m->syms);
	free(m->meta);
	free(m->summary);
	free(m->lines);
	free(m);
}

const char *snr_metrics_meta_json(const struct snr_metrics *m) { return m->meta; }
const char *snr_metrics_summary_json(const struct snr_metrics *m) { return m->summary; }

const uint8_t *snr_metrics_lines(const struct snr_metrics *m, size_t *n)
{
	*n = m->nlines;
	return m->lines;
}

const char *snr_metrics_symbolize(const struct snr_metrics *m, uint64_t addr, char *buf, size_t len)
{
	return snr_symtab_symbolize(&m->syms, addr, buf, len);
}

/* The SUMMARY's figures against the events they summarize: every
 * instruction an event names is counted (and no more than an engine that
 * skips some could leave without events: METRICS_INDEX_SLACK), and the
 * window's cycles (the simulator's finish) end where the last event ends,
 * or soon after (METRICS_CYCLE_SLACK). */
static int summary_against(struct snr_metrics *m, uint64_t records, uint64_t insn_end, uint64_t cycle_end)
{
	char why[200];
	if (m->instructions < insn_end || m->instructions > records + METRICS_INDEX_SLACK) {
		snr_fmt(why, sizeof(why), "the events name instructions 0..%llu (%llu records)",
			(unsigned long long)insn_end - (insn_end > 0), (unsigned long long)records);
		json_t *v = json_integer((json_int_t)m->instructions);
		summary_fail(m, "instructions", v, why);
		json_decref(v);
		return -1;
	}
	if (m->cycles < cycle_end || m->cycles - cycle_end > METRICS_CYCLE_SLACK) {
		snr_fmt(why, sizeof(why), "the events end at cycle %llu (the window's cycles end there%s)",
			(unsigned long long)cycle_end, m->cycles < cycle_end ? "" : ", or soon after");
		json_t *v = json_integer((json_int_t)m->cycles);
		summary_fail(m, "cycles", v, why);
		json_decref(v);
		return -1;
	}
	return 0;
}

/* The register events an INSN record carries (version 5): a count, then
 * for each a varint reg << 1 | write, all of instruction INDEX. */
static void insn_regs(struct snr_cursor *cu, uint64_t index, const struct snr_tracker *t)
{
	uint64_t n = snr_cur_varint(cu);
	struct snr_ev_reg e = {.index = index};
	for (uint64_t k = 0; k < n && !cu->bad; k++) {
		uint64_t v = snr_cur_varint(cu);
		e.reg = (uint16_t)(v >> 1);
		e.write = (uint8_t)(v & 1);
		if (!cu->bad && t->on_reg)
			t->on_reg(t->user, &e);
	}
}

int snr_metrics_replay(struct snr_metrics *m, const struct snr_tracker *t, char *err, size_t errlen)
{
	uint64_t records = 0; /* read so far, from every EVENTS chunk */
	const struct snr_chunk *last = NULL; /* the last EVENTS chunk */
	bool last_empty = false;
	/* how far the events reach, for the SUMMARY's figures (summary_against) */
	uint64_t insn_end = 0, cycle_end = 0;
#define REACH(end, v) ((end) = (v) > (end) ? (v) : (end))
	for (size_t i = 0; i < m->f.nchunks; i++) {
		const struct snr_chunk *c = &m->f.chunks[i];
		if (c->type != CH_EVENTS)
			continue;
		last = c;
		const uint64_t records_before = records;
		long n = snr_chunkf_payload(&m->f, c);
		if (n < 0) {
			snr_fmt(err, errlen, "%s", m->f.err);
			return -1;
		}
		struct snr_cursor cu = {m->f.raw, m->f.raw + n, 0};
		const bool delta = m->f.version >= 3, insn = m->f.version >= 5, pod = m->f.version >= 6;
		struct snr_mw_ctx x = {0};
		if (m->f.version >= 4) {
			/* Each chunk says how many records came before it: chunks
			 * exchanged, dropped or repeated (each with valid checksums
			 * and renumbered) are caught here, not analyzed out of order. */
			uint64_t first = snr_cur_varint(&cu);
			if (!cu.bad && first != records) {
				snr_chunkf_fail(&m->f, c,
						"EVENTS out of order: this chunk follows %llu records, the chunks before it "
						"hold %llu (chunks exchanged, missing or repeated)",
						(unsigned long long)first, (unsigned long long)records);
				snr_fmt(err, errlen, "%s", m->f.err);
				return -1;
			}
		}
#define V() snr_cur_varint(&cu)
#define Z() snr_unzigzag(snr_cur_varint(&cu))
/* a field stored as a delta from base since version 3, as itself before */
#define D(base) (delta ? (uint64_t)(base) + (uint64_t)Z() : V())
		while (cu.p < cu.end && !cu.bad) {
			uint8_t kind = snr_cur_u8(&cu);
			records++;
			switch (kind) {
			case EV_ISSUE:
			case EV_RETIRE:
			case EV_INSN: {
				if (kind == EV_INSN && !insn) {
					cu.bad = 1; /* version 5's record */
					break;
				}
				struct snr_ev_insn e;
				e.index = D(x.index);
				e.pc = D(x.pc);
				e.issue = D(x.cycle);
				e.retire = D(e.issue);
				e.unit = (uint8_t)V();
				e.cls = (uint8_t)V();
				x.index = e.index;
				x.pc = e.pc;
				x.cycle = e.issue;
				/* Every instruction before this one issued in a record of its own,
				 * so its index cannot run far past the records read: a forged
				 * index would have readers that file by index fill the gap
				 * (2^40 entries). The slack allows an engine that skips some. */
				if (e.index >= records + METRICS_INDEX_SLACK)
					cu.bad = 1;
				if (cu.bad)
					break;
				REACH(insn_end, e.index + 1);
				REACH(cycle_end, e.issue);
				REACH(cycle_end, e.retire);
				if (kind != EV_RETIRE && t->on_issue)
					t->on_issue(t->user, &e);
				if (kind != EV_ISSUE && t->on_retire)
					t->on_retire(t->user, &e);
				if (kind == EV_INSN) /* version 5: the instruction's register events */
					insn_regs(&cu, e.index, t);
				break;
			}
			case EV_STALL: {
				struct snr_ev_stall e;
				e.index = D(x.index);
				e.cycles = V();
				e.start = D(x.cycle);
				e.cause = (uint8_t)V();
				e.responsible = delta ? (int64_t)(e.index - (uint64_t)Z()) : Z();
				e.dma_id = V();
				x.index = e.index;
				if (e.cause >= SNR_STALL_COUNT)
					cu.bad = 1;
				REACH(cycle_end, e.start + e.cycles >= e.start ? e.start + e.cycles : UINT64_MAX);
				if (!cu.bad && t->on_stall)
					t->on_stall(t->user, &e);
				break;
			}
			case EV_DMA: {
				struct snr_ev_dma e = {0}; /* the Figure-4 fields are not stored (docs/metrics-format.md) */
				e.id = V();
				e.phase = (uint8_t)V();
				e.issue_index = Z();
				e.wait_index = Z();
				e.cycle = V();
				e.bytes = V();
				e.src_space = (uint16_t)V();
				e.dst_space = (uint16_t)V();
				e.src_chip = (uint16_t)V();
				e.dst_chip = (uint16_t)V();
				e.src_addr = V();
				e.dst_addr = V();
				e.flag = (uint16_t)V();
				e.base_cycles = V();
				e.transfer_cycles = V();
				e.stall_base_cycles = e.stall_transfer_cycles = e.slack_cycles = 0;
				if (m->f.version >= 2) {
					e.stall_base_cycles = V();
					e.stall_transfer_cycles = V();
					e.slack_cycles = V();
				}
				if (e.phase > SNR_DMA_WAITED)
					cu.bad = 1;
				REACH(cycle_end, e.cycle);
				if (!cu.bad && t->on_dma)
					t->on_dma(t->user, &e);
				break;
			}
			case EV_MEM: {
				struct snr_ev_mem e;
				e.index = D(x.index);
				e.cycle = D(x.cycle);
				e.write = (uint8_t)V();
				e.space = (uint8_t)V();
				e.chip = (uint16_t)V();
				e.addr = D(x.addr);
				e.bytes = V();
				x.index = e.index;
				x.addr = e.addr;
				REACH(cycle_end, e.cycle);
				if (!cu.bad && t->on_mem)
					t->on_mem(t->user, &e);
				break;
			}
			case EV_REG: {
				struct snr_ev_reg e;
				e.index = D(x.index);
				e.reg = (uint16_t)V();
				e.write = (uint8_t)V();
				x.index = e.index;
				if (!cu.bad && t->on_reg)
					t->on_reg(t->user, &e);
				break;
			}
			case EV_BUSY: {
				struct snr_ev_busy e;
				e.unit = (uint8_t)V();
				e.start = D(x.cycle);
				e.end = D(e.start);
				e.index = D(x.index);
				if (e.unit >= SNR_UNIT_COUNT || e.end < e.start)
					cu.bad = 1;
				REACH(cycle_end, e.end);
				if (!cu.bad && t->on_busy)
					t->on_busy(t->user, &e);
				break;
			}
			case EV_PEER: {
				struct snr_ev_peer e;
				e.wait_index = V();
				e.wait_pc = V();
				e.wait_start = V();
				e.stall_cycles = V();
				e.dma_id = V();
				e.chip = (uint16_t)V();
				e.flag = (uint16_t)V();
				e.issue_index = Z();
				e.issue_pc = V();
				e.issue_cycle = V();
				e.done_cycle = V();
				e.bytes = V();
				if (!pod)
					cu.bad = 1; /* version 6's record */
				REACH(cycle_end, e.done_cycle);
				if (!cu.bad && t->abi_version >= 3 && t->on_peer)
					t->on_peer(t->user, &e);
				break;
			}
			case EV_FABRIC: {
				/* not REACHed: a link's or port's sample may run past its owner's
				 * last cycle (another chip's transfer through it) */
				struct snr_ev_fabric e;
				e.resource = (uint32_t)V();
				e.kind = (uint8_t)V();
				e.from = (uint16_t)V();
				e.to = (uint16_t)V();
				e.start = V();
				uint64_t len = V();
				e.end = e.start + len;
				e.bytes_per_cycle = V();
				e.bytes = (double)V() / SNR_METRICS_FABRIC_UNIT;
				e.busy_cycles = (double)V() / SNR_METRICS_FABRIC_UNIT;
				e.contended_cycles = (double)V() / SNR_METRICS_FABRIC_UNIT;
				if (!pod || e.kind >= SNR_FABRIC_KIND_COUNT || e.end < e.start ||
				    e.busy_cycles > (double)len + 1 || e.contended_cycles > e.busy_cycles + 1)
					cu.bad = 1;
				if (!cu.bad && t->abi_version >= 3 && t->on_fabric)
					t->on_fabric(t->user, &e);
				break;
			}
			default:
				cu.bad = 1;
			}
		}
#undef V
#undef Z
#undef D
		if (cu.bad) {
			snr_chunkf_fail(&m->f, c, "event record at payload offset %td is malformed", cu.p - m->f.raw);
			snr_fmt(err, errlen, "%s", m->f.err);
			return -1;
		}
		last_empty = records == records_before;
	}
	if (m->f.version >= 4 && m->summary && !last_empty) {
		/* a finished file's events end with the count alone (EVENTS of no records) */
		snr_chunkf_fail(&m->f, last ? last : &m->f.chunks[m->f.nchunks - 1],
				"the events' end (an EVENTS chunk of no records, counting all %s) is missing: "
				"EVENTS chunks were left out",
				last ? "of them" : "records");
		snr_fmt(err, errlen, "%s", m->f.err);
		return -1;
	}
#undef REACH
	if (m->summary_chunk && summary_against(m, records, insn_end, cycle_end)) {
		snr_fmt(err, errlen, "%s", m->f.err);
		return -1;
	}
	return 0;
}
