/*
 * pod_metrics_threads.h: a pod replay's metrics files (-o) written on threads
 * of their own while the timing simulation runs.
 *
 * The simulation stays on one thread (replayer/pod.c: the chips meet in the
 * fabric and in HBM in the device's scheduler order). What each chip's events
 * cost after the simulation made them (the metrics writer's records, their
 * compression) is each chip's alone: the simulation's thread appends every
 * event of chip k, as it comes, to chip k's buffer; a full buffer goes to
 * worker k mod W, which hands its events, in the order they came, to chip k's
 * metrics tracker. Each chip's tracker so sees the very calls, in the very
 * order, it would have seen on the simulation's thread, and only ever from
 * one thread: its file is the same bytes whatever W.
 */
#ifndef SNR_POD_METRICS_THREADS_H
#define SNR_POD_METRICS_THREADS_H

#include "sim/snr_tracker.h"

struct pod_metrics_threads;

/* W = min(threads - 1, chips) workers for chips' consumers[k] (each tracker
 * one chip's, not called by anyone else until pod_metrics_threads_end).
 * NULL when threads < 2: the simulation calls the consumers itself. */
struct pod_metrics_threads *pod_metrics_threads_new(unsigned threads, unsigned chips,
						    const struct snr_tracker *const *consumers);

/* The tracker chip k's simulation reports to: it records the events that
 * consumers[k] registered for. */
const struct snr_tracker *pod_metrics_threads_tracker(struct pod_metrics_threads *m, unsigned k);

/* Hands every event still buffered to its worker, waits for the workers to
 * deliver them all, and frees m. Returns how many distinct threads called
 * the consumers (counted by kernel thread id). */
unsigned pod_metrics_threads_end(struct pod_metrics_threads *m);

#endif
