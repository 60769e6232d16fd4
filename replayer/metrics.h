/*
 * metrics.h: the metrics file (.snrm) that `snr replay -o` writes and the
 * analyzer reads: the tracker's events as a compact binary stream plus a
 * JSON summary, in the chunk container of lib/snr_chunkfile.h.
 * docs/metrics-format.md specifies it.
 *
 * Writing: the writer *is* a tracker (snr_metrics_tracker): attach it to a
 * simulator and every event lands in the file. Reading: events are delivered
 * to a tracker's callbacks, so an analysis consumes a live replay and a
 * stored one through the same code.
 */
#ifndef SNR_METRICS_H
#define SNR_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "sim/snr_tracker.h"

#define SNR_METRICS_MAGIC "SNRMETRC"
#define SNR_METRICS_VERSION 6 /* 2: DMA events carry the WAITED stall split and slack;
				 3: indices, pcs, cycles, addresses as deltas;
				 4: each EVENTS chunk starts with the count of records before it;
				 5: one INSN record for an instruction's ISSUE, RETIRE and REGs;
				 6: a pod's PEER and FABRIC records */
/* FABRIC's bytes and cycles are stored in units of 1/SNR_METRICS_FABRIC_UNIT */
#define SNR_METRICS_FABRIC_UNIT 256

struct snr_metrics_writer;

/* meta_json: an object (trace, isa, simulator, config, chip, ...). */
struct snr_metrics_writer *snr_metrics_create(const char *path, const char *meta_json, char *err, size_t errlen);
/* Copies the trace's symbols so the metrics file symbolizes on its own. */
/* The trace's LINES payload (snr_trace_lines), carried as it is. */
int snr_metrics_write_lines(struct snr_metrics_writer *w, const uint8_t *payload, size_t len);
int snr_metrics_write_symbols(struct snr_metrics_writer *w, size_t n, const uint64_t *addr, const uint64_t *size,
			      const char *const *name);
struct snr_trace;
/* Copies t's symbols and its LINES chunk (where it has one) into w, so that
 * the metrics file symbolizes and answers in source lines on its own. */
int snr_metrics_write_trace_tables(struct snr_metrics_writer *w, const struct snr_trace *t);
/* The tracker that writes events into w (valid while w lives). */
const struct snr_tracker *snr_metrics_tracker(struct snr_metrics_writer *w);
/* The tracker's callbacks (u is the writer), for a caller that forwards
 * events to the writer with direct calls (the replayer's collector; with no
 * other tracker to forward to, it inlines metrics_write.h's encoders). */
void snr_metrics_on_issue(void *u, const struct snr_ev_insn *e);
void snr_metrics_on_retire(void *u, const struct snr_ev_insn *e);
void snr_metrics_on_stall(void *u, const struct snr_ev_stall *e);
void snr_metrics_on_peer(void *u, const struct snr_ev_peer *e);
void snr_metrics_on_fabric(void *u, const struct snr_ev_fabric *e);
void snr_metrics_on_dma(void *u, const struct snr_ev_dma *e);
void snr_metrics_on_mem(void *u, const struct snr_ev_mem *e);
void snr_metrics_on_reg(void *u, const struct snr_ev_reg *e);
void snr_metrics_on_busy(void *u, const struct snr_ev_busy *e);
void snr_metrics_on_insn(void *u, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread, unsigned nwrite);
/* Writes the summary (a JSON object) and closes; 0 if every write succeeded. */
int snr_metrics_finish(struct snr_metrics_writer *w, const char *summary_json, char *err, size_t errlen);
void snr_metrics_abandon(struct snr_metrics_writer *w);

struct snr_metrics;

struct snr_metrics *snr_metrics_open(const char *path, char *err, size_t errlen);
void snr_metrics_close(struct snr_metrics *m);
const char *snr_metrics_meta_json(const struct snr_metrics *m);
const char *snr_metrics_summary_json(const struct snr_metrics *m); /* NULL if the file has none */
const char *snr_metrics_symbolize(const struct snr_metrics *m, uint64_t addr, char *buf, size_t len);
/* The LINES chunk's payload (checked at open), NULL with *n 0 when none. */
const uint8_t *snr_metrics_lines(const struct snr_metrics *m, size_t *n);
/* Delivers every event, in file order, to t's callbacks. 0, or -1 with
 * the error naming chunk and offset in err. */
int snr_metrics_replay(struct snr_metrics *m, const struct snr_tracker *t, char *err, size_t errlen);

#endif
