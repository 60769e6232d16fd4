/*
 * isa_registry.c: the ISA plugins built into snr, found by name or by the
 * architecture name a GDB stub reports. Plugins not linked into this build
 * (weak references) are skipped.
 */
#include <stddef.h>
#include <string.h>

#include "recorder/snr_isa.h"

extern const struct snr_isa_ops snr_isa_x86_64 __attribute__((weak));
extern const struct snr_isa_ops snr_isa_aarch64 __attribute__((weak));

static const struct snr_isa_ops *const plugins[] = {&snr_isa_ta1, &snr_isa_x86_64, &snr_isa_aarch64};

const struct snr_isa_ops *snr_isa_find(const char *name)
{
	for (size_t i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++)
		if (plugins[i] && !strcmp(plugins[i]->name, name))
			return plugins[i];
	return NULL;
}

const struct snr_isa_ops *snr_isa_for_gdb_arch(const char *arch)
{
	for (size_t i = 0; i < sizeof(plugins) / sizeof(plugins[0]); i++)
		if (plugins[i] && !strcmp(plugins[i]->gdb_arch, arch))
			return plugins[i];
	/* GDB stubs also say "riscv" or "i386:x86-64:intel" */
	if (!strncmp(arch, "riscv", 5))
		return &snr_isa_ta1;
	if (!strncmp(arch, "i386:x86-64", 11))
		return snr_isa_find("x86-64");
	if (!strncmp(arch, "aarch64", 7))
		return snr_isa_find("aarch64");
	return NULL;
}
