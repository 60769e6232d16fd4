/*
 * pod_sched.h: the pod's time-ordered scheduler, shared by the device's
 * timing run (device/timed_run.c) and the pod replay (replayer/pod.c), so
 * that both put the chips' instructions into the one fabric in the same
 * order.
 *
 * The chip whose clock (its timing model's now, or the cycle before which
 * its WAIT cannot finish) is lowest runs until it passes the next lowest by
 * the lookahead (the DMA base latency: another chip's DMA issued from then on
 * reaches the fabric after it), so no chip issues a DMA into the shared
 * fabric's past. A chip the functional machine blocks at a ta.wait (a peer
 * has not signalled yet) sits out until some chip issues a ta.dma.notify,
 * and bounds the lookahead meanwhile (it may run again one base latency
 * after the lowest clock); when every running chip is blocked, the pod
 * deadlocked. Ties go to the lowest chip: the order is a function of the
 * clocks alone.
 *
 * A caller may also say which chips' next instructions are private (touch
 * only that chip's own state: no DMA, no WAIT, nothing of the fabric's).
 * Such instructions commute with every other chip's, so when the chip the
 * order picks next has a private instruction next, every chip with one runs
 * its private instructions up to its next shared one (run_private, on
 * threads), and the order goes on with the shared ones. A chip's clock after
 * a private stretch is the lower bound on its next DMA, as before, so the
 * lookahead holds; the fabric sees every DMA at the same cycle with the same
 * id (sim/ta1_fabric.h), so the figures are those of the order without
 * private stretches.
 */
#ifndef SNR_POD_SCHED_H
#define SNR_POD_SCHED_H

#include <stdbool.h>
#include <stdint.h>

enum ta1_sched_step {
	TA1_SCHED_RAN,     /* one instruction ran */
	TA1_SCHED_NOTIFIED,/* it ran and was a ta.dma.notify: blocked chips may pass */
	TA1_SCHED_PARK,    /* a WAIT whose outcome is not known before the horizon: *resume */
	TA1_SCHED_BLOCKED, /* a WAIT the machine blocks: nothing ran */
	TA1_SCHED_STOP,    /* the run ends here (fault, divergence, budget): the caller knows why */
};

struct ta1_sched_ops {
	void *user;
	unsigned n;
	/* chip i still has instructions to run */
	bool (*running)(void *user, unsigned i);
	/* chip i's clock: the cycle its next instruction could issue */
	uint64_t (*now)(void *user, unsigned i);
	/* runs chip i's next instruction, no other chip issuing a DMA before
	 * `horizon` */
	enum ta1_sched_step (*step)(void *user, unsigned i, uint64_t horizon, uint64_t *resume);
	/* every running chip is blocked: true (with *which) if the pod is
	 * deadlocked; false lets every chip try again. NULL: always true */
	bool (*deadlock)(void *user, unsigned *which);
	/* NULL, or: chip i is running and its next instruction is private;
	 * then run_private runs at least that one */
	bool (*private_next)(void *user, unsigned i);
	/* runs every chip whose next instruction is private up to its next
	 * shared one; TA1_SCHED_STOP (*which: the lowest chip that failed) ends
	 * the run, anything else goes on */
	enum ta1_sched_step (*run_private)(void *user, unsigned *which);
};

enum ta1_sched_end {
	TA1_SCHED_DONE,     /* no chip is running */
	TA1_SCHED_STOPPED,  /* a step said STOP; *which is its chip */
	TA1_SCHED_DEADLOCK, /* every running chip is blocked */
};

enum ta1_sched_end ta1_sched_run(const struct ta1_sched_ops *ops, uint64_t lookahead, unsigned *which);

#endif
