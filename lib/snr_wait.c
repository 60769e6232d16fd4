/*
 * snr_wait.c: the wait between a request and its reply on both ends of a
 * single-step (recorder/dbg_rsp.c waiting for the stub, device/rsp_server.c
 * waiting for the debugger's next packet).
 *
 * A reply to a step comes within microseconds, and on an idle machine a
 * blocking poll() adds tens of microseconds of wake-up latency to each, so
 * both ends used to spin first (the client 2,000 poll(0) calls, the server
 * 200 us). On a busy machine that is the wrong thing: a spinner is a CPU hog
 * to the scheduler, so it gets only its share of a core, and the reply it
 * spins for waits behind other tasks for whole time slices; a task that
 * blocks is woken by the reply and runs at once, ahead of the hogs.
 * Measured on 2 CPUs with two busy loops beside the recording: the fixed
 * spin 0.3-7k steps/s, blocking 10-34k/s; with the CPUs free, spinning wins
 * (figures in docs/recording.md, from bench/record_rate.py --wait-only).
 * So the adaptive wait spins only when a CPU is free for the peer:
 *
 *   - every 2 ms at most it reads the number of runnable tasks of the
 *     machine (/proc/loadavg's fourth field, a few microseconds); if it is
 *     more than the online CPUs in two looks in a row, every wait blocks.
 *     The count includes this task and the peer, both running while a step
 *     is in flight: two spinning ends on an idle 2-CPU machine are 2, and
 *     any third runnable task makes spinning a loss. A busy count after a
 *     free one is looked at again 250 us later and believed only then: a
 *     kernel thread's moment made the next 2 ms of waits block (100-400
 *     blocked waits of each 20,000 on the idle machine, each costing a
 *     wake-up of about 150 us where spinning takes a few);
 *   - otherwise it spins as the fixed spin did (up to its time: with a CPU
 *     free, spinning costs the peer nothing, and giving up early only adds
 *     wake-ups); a spin that runs out failed, and from the second failure in
 *     a row on the next 2^(failures-2) waits (at most 16) block at once
 *     before one spin probes again: a peer busy for long (a continue, the
 *     recorder simulating) is spun for at most once in 17 waits, while a
 *     lone slow reply costs only its own blocking wait, as with the fixed
 *     spin (the load is watched separately above, so the back-off need not
 *     be long);
 *   - a gap of more than 50 us between two polls means this task was
 *     descheduled: the spin ends, the wait blocks, and the next wait looks
 *     at the runnable count again; it is no failure by itself (on a virtual
 *     machine a vCPU is taken away now and then with the CPUs otherwise
 *     free: backing off there blocked hundreds of waits per 20,000 steps),
 *     and a machine that is really busy is seen by the look.
 *
 * SNR_WAIT_SPIN keeps the old fixed spin and SNR_WAIT_BLOCK never spins, so
 * that bench/record_rate.py --wait-only measures all three in one run.
 */
#include "lib/snr_wait.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "lib/snr_util.h"

#define DESCHEDULED_NS 50000
#define MAX_FAILURES 6 /* back-offs of 1, 2, 4, 8 and 16 blocking waits after the first */
#define LOOK_EVERY_NS 2000000
#define CONFIRM_BUSY_NS 250000

static int64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

/* /proc/loadavg stays open (one descriptor for the process, opened at the
 * first look): each look is one pread from offset 0, which the kernel
 * answers afresh, not an open, a read and a close (three system calls
 * every 2 ms of waiting, costly on a paravirtualized guest: 826 looks, a
 * sixth of a 10M recording's system calls) */
static int loadavg_fd = -1;

int snr_count_runnable(void)
{
	int fd = __atomic_load_n(&loadavg_fd, __ATOMIC_ACQUIRE);
	if (fd < 0) {
		fd = open("/proc/loadavg", O_RDONLY | O_CLOEXEC);
		if (fd < 0)
			return -1;
		int none = -1;
		if (!__atomic_compare_exchange_n(&loadavg_fd, &none, fd, false, __ATOMIC_ACQ_REL, __ATOMIC_ACQUIRE)) {
			close(fd); /* another thread's is there */
			fd = none;
		}
	}
	char buf[128];
	ssize_t n = pread(fd, buf, sizeof(buf) - 1, 0);
	if (n <= 0)
		return -1;
	buf[n] = 0;
	/* "0.52 0.61 0.70 3/412 12345": the fourth field is running/total */
	int running;
	if (sscanf(buf, "%*s %*s %*s %d/", &running) != 1 || running < 0)
		return -1;
	return running;
}

int snr_waiter_init(struct snr_waiter *w, const char *env, int64_t fixed_spin_ns, unsigned fixed_polls,
		    char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	w->fixed_spin_ns = fixed_spin_ns;
	w->fixed_polls = fixed_polls;
	w->clock_ns = monotonic_ns;
	w->count_runnable = snr_count_runnable;
	w->runnable = -1;
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	w->cpus = cpus > 0 ? (unsigned)cpus : 1;
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
	int64_t t0 = w->clock_ns();
	int r;
	while ((r = poll_once(fd, 0)) == 0 && w->clock_ns() - t0 < w->fixed_spin_ns)
		;
	return r;
}

/* Whether a CPU is free for the peer while this task spins: the runnable
 * count (looked at most every LOOK_EVERY_NS) is at most the CPUs. An
 * unreadable count leaves the decision to the spin's own record. */
static int cpu_free(struct snr_waiter *w, int64_t now)
{
	if (now >= w->next_look_ns) {
		int prev = w->runnable;
		w->runnable = w->count_runnable();
		bool busy = w->runnable >= 0 && (unsigned)w->runnable > w->cpus;
		bool was_busy = prev >= 0 && (unsigned)prev > w->cpus;
		/* a busy count after a free one is looked at again soon, and
		 * believed only if it is still there: a kernel thread's moment
		 * should not make the next 2 ms of waits block */
		w->busy = busy && was_busy;
		w->next_look_ns = now + (busy && !was_busy ? CONFIRM_BUSY_NS : LOOK_EVERY_NS);
	}
	return !w->busy;
}

/* The adaptive spin (a CPU is free): up to the fixed spin's time, unless
 * descheduled. Returns poll's answer, 0 if the spin failed. */
static int spin_adaptive(struct snr_waiter *w, int fd, int64_t t0)
{
	int64_t last = t0;
	for (;;) {
		int r = poll_once(fd, 0);
		int64_t t = w->clock_ns();
		if (r != 0) {
			if (r > 0) {
				w->failures = 0;
				w->spins_won++;
			}
			return r;
		}
		if (t - last > DESCHEDULED_NS) {
			w->spins_lost++;
			w->descheduled++;
			w->next_look_ns = 0;
			return 0;
		}
		if (t - t0 >= w->fixed_spin_ns) {
			w->spins_lost++;
			if (w->failures < MAX_FAILURES)
				w->failures++;
			w->block_left = w->failures < 2 ? 0 : 1u << (w->failures - 2);
			return 0;
		}
		last = t;
	}
}

int snr_wait_readable(struct snr_waiter *w, int fd, int timeout_ms)
{
	int r = 0;
	switch (w->mode) {
	case SNR_WAIT_SPIN: r = spin_fixed(w, fd); break;
	case SNR_WAIT_BLOCK: break;
	case SNR_WAIT_ADAPTIVE: {
		int64_t now = w->clock_ns();
		if (!cpu_free(w, now))
			w->busy_blocked++;
		else if (w->block_left > 0)
			w->block_left--;
		else
			r = spin_adaptive(w, fd, now);
		break;
	}
	}
	if (r != 0)
		return r;
	w->blocked++;
	return poll_once(fd, timeout_ms);
}
