/*
 * isa_registry.c: the ISA plugins built into snr, found by name or by the
 * architecture string a debugger reports. Adding an ISA
 * is one entry in registry() below.
 */
#include <stddef.h>
#include <string.h>

#include "isa/snr_isa.h"

/* GDB names x86-64 "i386:x86-64" and aarch64 "aarch64"; a target may also
 * report a variant ("i386:x86-64:intel", "aarch64:ilp32"), matched by prefix
 * up to a colon. */
static const struct snr_isa_ops *const *registry(size_t *n)
{
	static const struct snr_isa_ops *const all[] = {&snr_isa_ta1, &snr_isa_x86_64, &snr_isa_aarch64};
	*n = sizeof all / sizeof all[0];
	return all;
}

const struct snr_isa_ops *snr_isa_find(const char *name)
{
	size_t n;
	const struct snr_isa_ops *const *all = registry(&n);
	if (!name)
		return NULL;
	for (size_t i = 0; i < n; i++)
		if (all[i] && all[i]->abi_version >= SNR_ISA_ABI_MIN_VERSION &&
		    all[i]->abi_version <= SNR_ISA_ABI_VERSION && !strcmp(all[i]->name, name))
			return all[i];
	return NULL;
}

const struct snr_isa_ops *snr_isa_for_gdb_arch(const char *gdb_arch)
{
	size_t n;
	const struct snr_isa_ops *const *all = registry(&n);
	if (!gdb_arch)
		return NULL;
	for (size_t i = 0; i < n; i++) {
		if (!all[i] || all[i]->abi_version < SNR_ISA_ABI_MIN_VERSION || all[i]->abi_version > SNR_ISA_ABI_VERSION)
			continue;
		size_t len = strlen(all[i]->gdb_arch);
		if (!strncmp(all[i]->gdb_arch, gdb_arch, len) && (gdb_arch[len] == '\0' || gdb_arch[len] == ':'))
			return all[i];
	}
	return NULL;
}
