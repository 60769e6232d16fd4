/*
 * machine_config.h: the TA1 machine config a recording stores in its trace
 * (META "config", docs/trace-format.md), which `snr replay` then times the
 * window with (docs/recording.md, "The machine config").
 *
 * A target that tells its config (snr device: qXfer:snr-config:read,
 * device/rsp_machine_config.h) is recorded with it: with no --config the
 * trace stores the device's; a --config that differs from it in any key but
 * "chips" (the pod's size is the target's threads) is refused before
 * anything runs, naming both and the first key that differs. A vendor's
 * backend tells its target's through the debugger ABI's machine_config
 * (version 8, recorder/snr_debugger.h). A target that tells none
 * (gdbserver, QEMU's stubs, ptrace, a backend without the entry) is
 * recorded with --config's, or the built-in one, as the recorder's own.
 */
#ifndef SNR_REC_MACHINE_CONFIG_H
#define SNR_REC_MACHINE_CONFIG_H

#include <stddef.h>

#include "recorder/record.h"
#include "recorder/snr_debugger.h"

/* The target's config object, asked of d through o's backend's
 * machine_config (rsp: snr_dbg_rsp_machine_config, snr device's), or
 * o->target_config when the caller asked already (a pod). *text: malloc'd, or NULL when the target
 * tells none. 0, or -1 with err filled. */
int snr_rec_target_config(const struct snr_record_opts *o, struct snr_dbg *d, char **text, char *err, size_t errlen);

/* The config to store, from o->config_path and the target's object (NULL:
 * it told none): *json (malloc'd, snr_config_to_json), and said, the
 * summary's line ("machine config: the target's (its --config M.json)").
 * 0, or -1 with err filled: a --config that cannot be read or differs from
 * the target's, an object from the target that is not a valid config. */
int snr_rec_machine_config(const char *config_path, const char *target_text, char **json, char *said, size_t saidlen,
			   char *err, size_t errlen);

#endif
