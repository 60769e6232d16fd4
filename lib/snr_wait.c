/*
 * snr_wait.c: the wait between a request and its reply on both ends of a
 * single-step (recorder/dbg_rsp.c waiting for the stub, device/rsp_server.c
 * waiting for the debugger's next packet).
 *
 * A reply to a step comes within microseconds, and on an idle machine a
 * blocking poll() adds tens of microseconds of wake-up latency to each, so
 * both ends used to spin first (the client 2,000 poll(0) calls, the server
 * 200 us). On a busy machine that is the wrong thing: the spinner burns the
 * time slice the peer needs to produce the reply, and recording collapsed
 * (`__poll` was 83% of all CPU; blocking recorded 8x faster at load 4.5 and
 * 5x slower at load 1). So the spin here is adaptive:
 *
 *   - it spins only within a budget learned from the replies that spinning
 *     caught (four times the latest latency, between 20 us and the ceiling);
 *   - it yields the CPU between polls, so a runnable peer on the same core
 *     gets it;
 *   - a spin that runs out of budget, or that finds it was descheduled (a
 *     gap of more than 50 us between two polls: the core is contended),
 *     failed: the next 2^failures waits (at most 512) block at once, and
 *     then one spin probes again. On a loaded machine that is nearly always
 *     blocking; on an idle one nearly always spinning.
 *
 * SNR_WAIT_SPIN keeps the old fixed spin and SNR_WAIT_BLOCK never spins, so
 * that bench/record_rate.py measures all three in one run.
 */
#include "lib/snr_wait.h"

#include <errno.h>
#include <poll.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "lib/snr_util.h"

#define MIN_BUDGET_NS 20000
#define DESCHEDULED_NS 50000
#define MAX_BACKOFF_SHIFT 9

static int64_t now_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

int snr_waiter_init(struct snr_waiter *w, const char *env, int64_t fixed_spin_ns, unsigned fixed_polls,
		    char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->fixed_spin_ns = fixed_spin_ns;
	w->fixed_polls = fixed_polls;
	w->budget_ns = fixed_spin_ns;
	const char *v = env ? getenv(env) : NULL;
	if (!v || !*v || !strcmp(v, "adaptive"))
		w->mode = SNR_WAIT_ADAPTIVE;
	else if (!strcmp(v, "spin"))
		w->mode = SNR_WAIT_SPIN;
	else if (!strcmp(v, "block"))
		w->mode = SNR_WAIT_BLOCK;
	else {
		snr_fmt(err, errlen, "%s=%s: expected adaptive, spin or block", env, v);
		return -1;
	}
	return 0;
}

static int poll_once(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	return poll(&p, 1, timeout_ms);
}

/* The old fixed spin: a count of polls, or a time. */
static int spin_fixed(struct snr_waiter *w, int fd)
{
	if (w->fixed_polls) {
		int r = 0;
		for (unsigned i = 0; i < w->fixed_polls && r == 0; i++)
			r = poll_once(fd, 0);
		return r;
	}
	int64_t t0 = now_ns();
	int r;
	while ((r = poll_once(fd, 0)) == 0 && now_ns() - t0 < w->fixed_spin_ns)
		;
	return r;
}

/* The adaptive spin: returns poll's answer, 0 if the spin failed. */
static int spin_adaptive(struct snr_waiter *w, int fd)
{
	int64_t t0 = now_ns(), last = t0;
	for (;;) {
		int r = poll_once(fd, 0);
		int64_t t = now_ns();
		if (r != 0) {
			if (r > 0) {
				int64_t b = 4 * (t - t0);
				w->budget_ns = b < MIN_BUDGET_NS ? MIN_BUDGET_NS : b > w->fixed_spin_ns ? w->fixed_spin_ns : b;
				w->failures = 0;
				w->spins_won++;
			}
			return r;
		}
		if (t - t0 >= w->budget_ns || t - last > DESCHEDULED_NS) {
			w->spins_lost++;
			if (w->failures < MAX_BACKOFF_SHIFT)
				w->failures++;
			w->block_left = 1u << w->failures;
			/* the next probe starts from the ceiling: replies may have
			 * become slower without spinning having stopped paying */
			w->budget_ns = w->fixed_spin_ns;
			return 0;
		}
		last = t;
		sched_yield();
	}
}

int snr_wait_readable(struct snr_waiter *w, int fd, int timeout_ms)
{
	int r = 0;
	switch (w->mode) {
	case SNR_WAIT_SPIN: r = spin_fixed(w, fd); break;
	case SNR_WAIT_BLOCK: break;
	case SNR_WAIT_ADAPTIVE:
		if (w->block_left > 0)
			w->block_left--;
		else
			r = spin_adaptive(w, fd);
		break;
	}
	if (r != 0)
		return r;
	w->blocked++;
	return poll_once(fd, timeout_ms);
}
