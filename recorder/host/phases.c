/*
 * phases.c: wall time of each phase of `snr host record` (phases.h).
 */
#include "phases.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void snrh_phases_init(struct snrh_phases *p)
{
	const char *e = getenv("SNR_HOST_TIMING");
	memset(p, 0, sizeof(*p));
	p->on = e && *e && strcmp(e, "0") != 0;
	p->t0 = p->last = now_ns();
}

void snrh_phase(struct snrh_phases *p, const char *name)
{
	if (!p->on)
		return;
	uint64_t t = now_ns();
	/* a phase met twice (a loop) adds up */
	for (int i = 0; i < p->n; i++)
		if (!strcmp(p->v[i].name, name)) {
			p->v[i].ns += t - p->last;
			p->last = t;
			return;
		}
	if (p->n < SNRH_MAX_PHASES)
		p->v[p->n++] = (struct snrh_phase_time){name, t - p->last};
	p->last = t;
}

void snrh_phases_print(const struct snrh_phases *p, FILE *f)
{
	if (!p->on)
		return;
	for (int i = 0; i < p->n; i++)
		fprintf(f, "snr host record: phase %-16s %.3f s\n", p->v[i].name, (double)p->v[i].ns / 1e9);
	fprintf(f, "snr host record: phase %-16s %.3f s\n", "total", (double)(p->last - p->t0) / 1e9);
}
