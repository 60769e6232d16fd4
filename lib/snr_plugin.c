/*
 * snr_plugin.c: see snr_plugin.h.
 */
#include "snr_plugin.h"

#include <dlfcn.h>
#include <string.h>

#include "snr_util.h"

const void *snr_plugin_open(const char *path, const char *symbol, const char *what, const char *header,
			    uint32_t min_version, uint32_t max_version, void **handle, char *err, size_t errlen)
{
	void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		snr_fmt(err, errlen, "cannot load %s plugin: %s", what, dlerror());
		return NULL;
	}
	const uint32_t *p = dlsym(h, symbol);
	if (!p) {
		snr_fmt(err, errlen, "%s is no %s plugin: it exports no symbol %s", path, what, symbol);
		dlclose(h);
		return NULL;
	}
	if (*p < min_version || *p > max_version) {
		snr_fmt(err, errlen,
			"%s implements %s ABI version %u; this snr loads versions %u to %u: rebuild the plugin "
			"against this snr's %s",
			path, what, *p, min_version, max_version, header);
		dlclose(h);
		return NULL;
	}
	*handle = h;
	return p;
}
