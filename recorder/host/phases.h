/*
 * phases.h: where `snr host record`'s own time goes, phase by phase
 * (opening and loading each BPF object, attaching, the command's run,
 * writing, tearing the probes down). SNR_HOST_TIMING=1 prints one line a
 * phase on stderr at the end: "snr host record: phase NAME S s", wall
 * seconds measured with CLOCK_MONOTONIC; bench/host_startup.sh reads them.
 */
#ifndef SNR_HOST_PHASES_H
#define SNR_HOST_PHASES_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#define SNRH_MAX_PHASES 32

struct snrh_phases {
	bool on;
	uint64_t t0, last;
	int n;
	struct snrh_phase_time {
		const char *name;
		uint64_t ns;
	} v[SNRH_MAX_PHASES];
};

/* Starts the clock; on only when SNR_HOST_TIMING is set and not "0". */
void snrh_phases_init(struct snrh_phases *p);
/* Ends the phase NAME (a string literal) here: the time since the last mark. */
void snrh_phase(struct snrh_phases *p, const char *name);
/* One line a phase and the total, when on. */
void snrh_phases_print(const struct snrh_phases *p, FILE *f);

#endif
