/*
 * ta1rt.h: libta1rt, the host runtime of a TA1 device, shaped like a GPU
 * runtime (cudaLaunchKernel / cudaStreamSynchronize): open a device, load a
 * program, launch it, wait for it. The device is a thread of the calling
 * process running device/ta1_machine.h, so a host program using it shows
 * real on/off-CPU and on/off-device time without an accelerator:
 * ta1rt_launch is control-path time (H:CTRL), ta1rt_wait blocks on a
 * condition variable (futex, H:WAIT_DEV) while the "ta1-device" thread
 * computes. Each launch is a reset (a fresh machine), an upload (the
 * program image into its memory, a host-to-device transfer) and a run, one
 * after the other:
 * this device has no copy engine of its own, so its transfers never
 * overlap its compute.
 */
#ifndef SNR_TA1RT_H
#define SNR_TA1RT_H

#include <stddef.h>
#include <stdint.h>

struct ta1rt_device;

/* Opens a device with the default machine config and `chips` chips; NULL
 * with err filled on failure. */
struct ta1rt_device *ta1rt_open(unsigned chips, char *err, size_t errlen);
void ta1rt_close(struct ta1rt_device *d);
/* Loads a TA1 program (`snr cc` output). 0, or -1 with err filled. */
int ta1rt_load(struct ta1rt_device *d, const char *elf_path, char *err, size_t errlen);
/* Starts the loaded program from reset on the device thread; returns at once.
 * -1 if nothing is loaded or a launch is still running. */
int ta1rt_launch(struct ta1rt_device *d);
/* Blocks until the launched program ends; its exit code, or -1 if it faulted
 * (err says where). */
int ta1rt_wait(struct ta1rt_device *d, char *err, size_t errlen);
/* Instructions retired by the last run (chip 0). */
uint64_t ta1rt_last_instret(const struct ta1rt_device *d);

/* The two pieces of device work of each launch, called on the device
 * thread and exported so a tracer can mark them (snr host record's presets
 * put uprobes on both: upload is G:XFER, run is G:COMP; docs/host.md,
 * "On/off-device"). Not for callers. Each launch first builds a fresh
 * machine (reset: its memories allocated, in neither piece), then
 * ta1rt_device_upload copies the program's image into the machine's memory
 * (0, or -1 with err filled), then ta1rt_device_run runs it to its end and
 * fills the launch's exit code, instructions and fault. */
struct ta1_machine;
int ta1rt_device_upload(struct ta1rt_device *d, struct ta1_machine *m, char *err, size_t errlen);
void ta1rt_device_run(struct ta1rt_device *d, struct ta1_machine *m, int *code, uint64_t *instret, char *err,
		      size_t errlen);

#endif
