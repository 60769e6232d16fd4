/*
 * snr_plugin.h: loading a vendor's plugin from a shared object (a simulator
 * for `snr replay --sim`, an ISA or a debugger backend for `snr record`).
 */
#ifndef SNR_PLUGIN_H
#define SNR_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

/* Opens path with dlopen(RTLD_NOW | RTLD_LOCAL) and returns its `symbol`,
 * which must start with a uint32_t ABI version in [min_version,
 * max_version]. NULL with err saying what failed: "cannot load WHAT plugin:
 * <dlerror>", "PATH is no WHAT plugin: it exports no symbol SYMBOL", or
 * "PATH implements WHAT ABI version N; this snr loads versions A to B:
 * rebuild the plugin against this snr's HEADER". *handle is the library's
 * dlopen handle: the caller keeps the library loaded for the life of the
 * process, or dlcloses it when it refuses the plugin after all (a NULL
 * member, say). */
const void *snr_plugin_open(const char *path, const char *symbol, const char *what, const char *header,
			    uint32_t min_version, uint32_t max_version, void **handle, char *err, size_t errlen);

#endif
