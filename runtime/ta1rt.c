/*
 * ta1rt.c: libta1rt (see ta1rt.h). One device thread per device; launch and
 * wait hand over through a mutex and two condition variables, like a GPU
 * stream with one queue slot. Each launch builds a fresh machine so a run
 * starts from reset.
 */
#include "ta1rt.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "lib/snr_config.h"
#include "lib/snr_elf.h"

struct ta1rt_device {
	pthread_t thread;
	pthread_mutex_t lock;
	pthread_cond_t work, done;
	bool launched, finished, quit;
	struct snr_config cfg;
	struct snr_elf *elf;
	int exit_code;
	uint64_t instret;
	char fault[512];
};

__attribute__((noinline)) int ta1rt_device_upload(struct ta1rt_device *d, struct ta1_machine *m, char *err,
						 size_t errlen)
{
	return ta1_machine_load(m, d->elf, err, errlen);
}

__attribute__((noinline)) void ta1rt_device_run(struct ta1rt_device *d, struct ta1_machine *m, int *code,
						 uint64_t *instret, char *err, size_t errlen)
{
	(void)d;
	unsigned which = 0;
	enum ta1_stop why = ta1_machine_run(m, 0, &which);
	struct ta1_chip *c = ta1_machine_chip(m, which);
	*instret = ta1_chip_stats(ta1_machine_chip(m, 0))->instret;
	if (why == TA1_STOP_EXIT)
		*code = ta1_chip_exit_code(ta1_machine_chip(m, 0));
	else
		snprintf(err, errlen, "chip %u stopped: %s", which,
			 why == TA1_STOP_FAULT ? ta1_chip_fault(c) : "breakpoint or ebreak");
}

static void *device_thread(void *arg)
{
	struct ta1rt_device *d = arg;
	pthread_setname_np(pthread_self(), "ta1-device");
	pthread_mutex_lock(&d->lock);
	for (;;) {
		while (!d->launched && !d->quit)
			pthread_cond_wait(&d->work, &d->lock);
		if (d->quit)
			break;
		d->launched = false;
		pthread_mutex_unlock(&d->lock);

		char err[512] = "";
		int code = -1;
		uint64_t instret = 0;
		struct ta1_machine *m = ta1_machine_new(&d->cfg, err, sizeof(err)); /* reset */
		if (m && ta1rt_device_upload(d, m, err, sizeof(err)) == 0)
			ta1rt_device_run(d, m, &code, &instret, err, sizeof(err));
		ta1_machine_free(m);

		pthread_mutex_lock(&d->lock);
		d->exit_code = code;
		d->instret = instret;
		snprintf(d->fault, sizeof(d->fault), "%s", err);
		d->finished = true;
		pthread_cond_broadcast(&d->done);
	}
	pthread_mutex_unlock(&d->lock);
	return NULL;
}

struct ta1rt_device *ta1rt_open(unsigned chips, char *err, size_t errlen)
{
	struct ta1rt_device *d = calloc(1, sizeof(*d));
	if (!d) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	snr_config_default(&d->cfg);
	d->cfg.chips = chips ? chips : 1;
	pthread_mutex_init(&d->lock, NULL);
	pthread_cond_init(&d->work, NULL);
	pthread_cond_init(&d->done, NULL);
	d->finished = true;
	if (pthread_create(&d->thread, NULL, device_thread, d)) {
		snprintf(err, errlen, "cannot start the device thread");
		free(d);
		return NULL;
	}
	return d;
}

void ta1rt_close(struct ta1rt_device *d)
{
	if (!d)
		return;
	pthread_mutex_lock(&d->lock);
	while (!d->finished)
		pthread_cond_wait(&d->done, &d->lock);
	d->quit = true;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	pthread_join(d->thread, NULL);
	snr_elf_free(d->elf);
	free(d);
}

int ta1rt_load(struct ta1rt_device *d, const char *elf_path, char *err, size_t errlen)
{
	pthread_mutex_lock(&d->lock);
	bool busy = !d->finished;
	pthread_mutex_unlock(&d->lock);
	if (busy) {
		snprintf(err, errlen, "ta1rt_load: a launch is still running");
		return -1;
	}
	struct snr_elf *elf = snr_elf_open(elf_path, err, errlen);
	if (!elf)
		return -1;
	snr_elf_free(d->elf);
	d->elf = elf;
	return 0;
}

int ta1rt_launch(struct ta1rt_device *d)
{
	pthread_mutex_lock(&d->lock);
	if (!d->elf || !d->finished) {
		pthread_mutex_unlock(&d->lock);
		return -1;
	}
	d->finished = false;
	d->launched = true;
	pthread_cond_signal(&d->work);
	pthread_mutex_unlock(&d->lock);
	return 0;
}

int ta1rt_wait(struct ta1rt_device *d, char *err, size_t errlen)
{
	pthread_mutex_lock(&d->lock);
	while (!d->finished)
		pthread_cond_wait(&d->done, &d->lock);
	int code = d->exit_code;
	if (code < 0 && err)
		snprintf(err, errlen, "%s", d->fault);
	pthread_mutex_unlock(&d->lock);
	return code;
}

uint64_t ta1rt_last_instret(const struct ta1rt_device *d)
{
	return d->instret;
}
