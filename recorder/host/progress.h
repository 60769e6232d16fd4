/*
 * progress.h: progress points and request latency for `snr host record`
 * (--progress SYM, --latency BEGIN:END[:arg]): a uprobe on each marked
 * function of the traced program (progress.bpf.c), every call one
 * snrh_mark in the trace; META.marks names the marks and META.progress
 * says which marks make which point (docs/host.md, "Progress points").
 */
#ifndef SNR_HOST_PROGRESS_REC_H
#define SNR_HOST_PROGRESS_REC_H

#include <stddef.h>
#include <stdint.h>

#include "lib/snr_host_trace.h"

struct snrh_progress;

/* Checks the specs (--progress SYM, --latency BEGIN:END or BEGIN:END:arg);
 * returns 0 or -1 with err naming the bad one. */
int snrh_progress_check(const char *const *progress, unsigned nprogress, const char *const *latency,
			unsigned nlatency, char *err, size_t errlen);
/* Opens and loads the program when there is anything to mark (*out NULL
 * otherwise). Returns 0 or -1 with err. */
int snrh_progress_load(const char *const *progress, unsigned nprogress, const char *const *latency,
		       unsigned nlatency, int tgid, struct snrh_progress **out, char *err, size_t errlen);
/* Attaches a uprobe to every marked function in exe and writes META.marks
 * and META.progress into t. Returns 0 or -1 with err naming the symbol. */
int snrh_progress_attach(struct snrh_progress *p, const char *exe, struct snrh_trace *t, char *err,
			 size_t errlen);
/* The ring buffer's fd (-1 without marks). */
int snrh_progress_ring_fd(const struct snrh_progress *p);
/* A record from that ring: appended to t->marks. */
void snrh_progress_event(struct snrh_trace *t, const void *data, size_t size);
uint64_t snrh_progress_dropped(const struct snrh_progress *p);
void snrh_progress_free(struct snrh_progress *p);

#endif
