/*
 * vendor_isa.c: an ISA plugin as a vendor would ship it, a shared object
 * exporting snr_isa_plugin (docs/recorder-plugins.md). It is the tree's TA1
 * description (so that the GRM replays what it records), counting the
 * access queries it answers and saying so at destroy. Built as ABI version
 * 1 (without syscall_writes) to show that such a table still loads.
 */
#include <stdio.h>

#include "isa/snr_isa.h"

static unsigned long queries;

static int v_access(void *self, const uint8_t *code, size_t avail, uint64_t pc, const struct snr_isa_regs *regs,
		    struct snr_insn_access *out)
{
	queries++;
	return snr_isa_ta1.access(self, code, avail, pc, regs, out);
}

static void v_destroy(void *self)
{
	if (queries)
		fprintf(stderr, "vendor-ta1: %lu queries\n", queries);
	snr_isa_ta1.destroy(self);
}

__attribute__((visibility("default"))) struct snr_isa_ops snr_isa_plugin;

__attribute__((constructor)) static void init(void)
{
	snr_isa_plugin = snr_isa_ta1;
	snr_isa_plugin.abi_version = 1;
	snr_isa_plugin.syscall_writes = NULL; /* not in a version 1 table */
	snr_isa_plugin.access = v_access;
	snr_isa_plugin.destroy = v_destroy;
}
