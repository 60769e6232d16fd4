/*
 * run_device.h: `snr record --run PROG.elf`: the device started for the
 * recording and stopped after it (recorder/run_device.c).
 */
#ifndef SNR_RUN_DEVICE_H
#define SNR_RUN_DEVICE_H

#include <stddef.h>

/* What `snr device` is given besides PROG and its --gdb endpoint: the
 * recorder's --chips and --config, and any further device options a mode
 * adds (a NULL-ended list, such as a pod's), passed through as they are. */
struct snr_run_device_opts {
	const char *program;
	const char *chips;  /* NULL: the device's default */
	const char *config; /* NULL: none */
	const char *const *extra_args;
	int timeout_s; /* for the device to listen */
};

/* Starts `snr device PROG --gdb unix:DIR/gdb --halt ...` (this executable,
 * in its own process group so that a terminal's Ctrl-C reaches only the
 * recorder, and killed by the kernel if the recorder dies) in a new private
 * folder DIR, and waits until it listens. target receives "unix:DIR/gdb".
 * Returns 0, or -1 with err saying why (the device's own message is on
 * stderr) and nothing left running. One device at a time per process. */
int snr_run_device_start(const struct snr_run_device_opts *o, char *target, size_t targetlen, char *err,
			 size_t errlen);

/* Waits up to grace_s seconds for the device to end by itself (the
 * recorder killed the program), then ends it (SIGTERM, then SIGKILL), and
 * removes DIR. Returns the device's exit status, 128+signal when it was
 * ended, -1 when none was started. */
int snr_run_device_stop(int grace_s);

/* For a signal handler: SIGKILL to the device, its socket and DIR removed
 * (async-signal-safe calls only). */
void snr_run_device_kill_now(void);

/* The device's process id, 0 when none runs. */
int snr_run_device_pid(void);

#endif
