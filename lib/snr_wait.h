/*
 * snr_wait.h: waiting for a socket to become readable, spinning first only
 * while spinning pays (lib/snr_wait.c).
 */
#ifndef SNR_WAIT_H
#define SNR_WAIT_H

#include <stddef.h>
#include <stdint.h>

enum snr_wait_mode {
	SNR_WAIT_ADAPTIVE, /* spin within a budget learned from recent replies; block when spinning fails */
	SNR_WAIT_SPIN,     /* always spin the fixed budget first (the behaviour before the adaptive wait) */
	SNR_WAIT_BLOCK,    /* never spin */
};

struct snr_waiter {
	enum snr_wait_mode mode;
	int64_t fixed_spin_ns;  /* SNR_WAIT_SPIN's budget, and the adaptive budget's ceiling */
	unsigned fixed_polls;   /* SNR_WAIT_SPIN: this many poll(0) calls instead of a time, if nonzero */
	int64_t budget_ns;      /* adaptive: the current spin budget */
	unsigned block_left;    /* adaptive: waits that block at once before spinning is tried again */
	unsigned failures;      /* adaptive: spins in a row that ran out or were descheduled */
	uint64_t spins_won, spins_lost, blocked; /* counts, for benchmarks and tests */
};

/* mode from the environment variable env ("adaptive", "spin", "block";
 * unset or empty: adaptive); anything else is an error (-1, message in err). */
int snr_waiter_init(struct snr_waiter *w, const char *env, int64_t fixed_spin_ns, unsigned fixed_polls,
		    char *err, size_t errlen);

/* Waits until fd is readable, at most timeout_ms (-1: forever). Returns as
 * poll() does: 1 readable (or hung up), 0 timed out, -1 with errno. */
int snr_wait_readable(struct snr_waiter *w, int fd, int timeout_ms);

#endif
