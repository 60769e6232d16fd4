/*
 * rsp_machine_config.h: the machine config a TA1 device serves to a
 * debugger that asks (qXfer:snr-config:read, snr's own qXfer object,
 * advertised in qSupported as qXfer:snr-config:read+).
 *
 * `snr record` stores the config of the machine it records in the trace,
 * and `snr replay` times the window with it: a device started with
 * `--config M.json` tells the recorder M.json's values, so the replay is
 * timed for the machine that ran, not the built-in one (docs/recording.md,
 * "The machine config").
 *
 * The object is JSON: {"from": WHERE, "config": {every key of
 * docs/machine-config.md}}, WHERE saying where the device's config came
 * from ("--config M.json" or "built-in defaults": the summary of
 * `snr record` says "the target's (its WHERE)").
 */
#ifndef SNR_RSP_MACHINE_CONFIG_H
#define SNR_RSP_MACHINE_CONFIG_H

#include "lib/snr_config.h"

/* The object's text (malloc'd, NUL-terminated; NULL when out of memory). */
char *rsp_machine_config_object(const struct snr_config *cfg, const char *from);

#endif
