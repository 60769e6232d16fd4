/*
 * snr_pod.h: a pod recording (`snr record --pod`), read as a whole: the
 * trace set whose manifest says "pod", one trace per chip
 * (docs/trace-format.md, "Pod recordings").
 */
#ifndef SNR_POD_READ_H
#define SNR_POD_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snr_pod_chip {
	char *path;             /* its trace */
	uint64_t instructions;  /* from the trace */
	char end[32];           /* its window's end: count, returned, exited... */
	uint64_t breakpoint;    /* the window's start address */
	uint64_t flags_at_start[16]; /* the chip's sync flags as the windows started (the manifest's) */
	bool has_flags;              /* the manifest has them (a pod replay needs them) */
};

struct snr_pod {
	unsigned chips;
	struct snr_pod_chip *chip; /* chip k's trace */
};

/* Whether the set folder dir is a pod recording (its manifest says "pod"). */
bool snr_pod_is(const char *dir);
/* Opens every chip's trace of the pod recording dir and checks that they
 * belong together: one trace per chip 0..N-1 in order, each saying it is
 * that chip of N, all of one program (the same code objects, build ids and
 * breakpoint) and one machine config. 0, or -1 with err naming the file and
 * what is wrong (a missing chip file, a chip of another recording). */
int snr_pod_open(const char *dir, struct snr_pod *pod, char *err, size_t errlen);
void snr_pod_free(struct snr_pod *pod);

#endif
