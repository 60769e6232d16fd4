/*
 * pod_threads.h: the parts of a pod's replay that are each one chip's alone
 * (opening and loading its trace, checking its end state, writing its
 * metrics file), run on several threads. The timing simulation itself stays
 * on one thread: the chips meet in the fabric and in HBM in the order of the
 * device's scheduler (device/pod_sched.h), which fixes the figures.
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

#endif
