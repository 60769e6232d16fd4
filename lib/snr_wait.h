/*
 * snr_wait.h: waiting for a socket to become readable, spinning first only
 * while a CPU is free for the peer and spinning pays (lib/snr_wait.c).
 */
#ifndef SNR_WAIT_H
#define SNR_WAIT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum snr_wait_mode {
	SNR_WAIT_ADAPTIVE, /* spin while a CPU is free for the peer and spins catch replies; else block */
	SNR_WAIT_SPIN,     /* always spin the fixed budget first (the behaviour before the adaptive wait) */
	SNR_WAIT_BLOCK,    /* never spin */
};

struct snr_waiter {
	enum snr_wait_mode mode;
	int64_t fixed_spin_ns;  /* the longest spin: SNR_WAIT_SPIN's and the adaptive wait's */
	unsigned fixed_polls;   /* SNR_WAIT_SPIN: this many poll(0) calls instead of a time, if nonzero */
	unsigned block_left;    /* adaptive: waits that block at once before spinning is tried again */
	unsigned failures;      /* adaptive: spins in a row that ran out */
	unsigned cpus;          /* adaptive: online CPUs */
	int runnable;           /* adaptive: runnable tasks at the last look (-1: unknown) */
	bool busy;              /* adaptive: two looks in a row found more runnable tasks than CPUs */
	int64_t next_look_ns;   /* adaptive: when to look at the runnable count again */
	/* the clock (ns) and the machine's runnable task count (-1 if unknown);
	 * CLOCK_MONOTONIC and /proc/loadavg unless a test injects its own */
	int64_t (*clock_ns)(void);
	int (*count_runnable)(void);
	uint64_t spins_won, spins_lost, descheduled, blocked, busy_blocked; /* counts, for benchmarks and tests */
};

/* mode from the environment variable env ("adaptive", "spin", "block";
 * unset or empty: adaptive); anything else is an error (-1, message in err). */
int snr_waiter_init(struct snr_waiter *w, const char *env, int64_t fixed_spin_ns, unsigned fixed_polls,
		    char *err, size_t errlen);

/* Waits until fd is readable, at most timeout_ms (-1: forever). Returns as
 * poll() does: 1 readable (or hung up), 0 timed out, -1 with errno. */
int snr_wait_readable(struct snr_waiter *w, int fd, int timeout_ms);

/* The machine's runnable tasks now, from /proc/loadavg's fourth field
 * (running/total); -1 if it cannot be read. */
int snr_count_runnable(void);

#endif
