/*
 * pod_threads.h: the parts of a pod's replay that are each one chip's alone
 * (opening and loading its trace, checking its end state, writing its
 * metrics file, and in the timing simulation the stretches of instructions
 * that touch only their own chip: device/pod_sched.h), run on several
 * threads. Where the chips meet, in the fabric and in HBM, the simulation
 * stays on one thread, in the order of the device's scheduler.
 *
 * Chip k goes to thread k mod T, so every one of the T threads has a chip
 * and each chip's work is done whole by one thread; a task writes only its
 * own chip's state, and the caller merges the results in chip order, so the
 * output does not depend on T.
 */
#ifndef SNR_POD_THREADS_H
#define SNR_POD_THREADS_H

/* The default thread count for a pod of `chips`: the online CPUs, at most
 * the chips, at least 1. */
unsigned snr_pod_threads_default(unsigned chips);

/* Runs fn(user, k) for k in [0, n) on min(threads, n) threads (the caller's
 * among them) and returns how many distinct threads ran them, counted by
 * their kernel thread ids. A thread that cannot be created leaves its chips
 * to the caller's thread. */
unsigned snr_pod_each_chip(unsigned threads, unsigned n, void (*fn)(void *user, unsigned k), void *user);

/* A crew of threads kept for many short rounds of per-chip work (the pod
 * replay's private stretches, replayer/pod.c): min(threads, chips) threads,
 * the caller's among them. NULL when that is one: the caller does the work. */
struct snr_pod_crew;
struct snr_pod_crew *snr_pod_crew_new(unsigned threads, unsigned chips);
/* Runs fn(user, k) for every k in [0, n), each k once, on the crew's threads
 * (the next k to whichever thread is free: fn must write only k's state),
 * and returns when all have returned. */
void snr_pod_crew_run(struct snr_pod_crew *c, unsigned n, void (*fn)(void *user, unsigned k), void *user);
/* Stops and frees the crew; returns how many distinct threads ran work
 * (0 for NULL). */
unsigned snr_pod_crew_free(struct snr_pod_crew *c);

#endif
