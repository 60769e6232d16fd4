/*
 * vendor_dbg.c: a debugger backend as a vendor would ship it, a shared
 * object exporting snr_dbg_plugin (docs/recorder-plugins.md). It is the
 * tree's RSP client under another name that counts the steps it is asked
 * for and says so when closed, so a test can tell it was the one used.
 * Built a second time with VENDOR_ABI_VERSION=99, which snr must refuse.
 *
 * With SNR_TEST_LIE_AT=0xADDR in the environment it also lies: every memory
 * read that covers ADDR returns that byte inverted. A recording by stepping
 * cannot tell; `snr record --method sim` must, when the target then runs the
 * window for real (tests/rec/vendor_plugins.sh). A lying backend offers no
 * write_regs and write_mem (so the mismatch is an error) unless
 * SNR_TEST_LIE_RESTORE=1 is set too (then the recorder falls back to
 * stepping, and says so).
 *
 * With VENDOR_NO_CONFIG=1 it offers no machine_config (ABI version 8): a
 * backend that cannot tell its target's machine config.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "recorder/snr_debugger.h"

#ifndef VENDOR_ABI_VERSION
#define VENDOR_ABI_VERSION SNR_DBG_ABI_VERSION
#endif

static unsigned long steps;

static int v_step(struct snr_dbg *d, struct snr_dbg_stop *stop)
{
	steps++;
	return snr_dbg_rsp.step(d, stop);
}

static int v_read_mem(struct snr_dbg *d, uint64_t addr, void *buf, size_t len)
{
	int rc = snr_dbg_rsp.read_mem(d, addr, buf, len);
	const char *lie = getenv("SNR_TEST_LIE_AT");
	uint64_t at = lie ? strtoull(lie, NULL, 0) : 0;
	if (rc == 0 && lie && at >= addr && at < addr + len)
		((unsigned char *)buf)[at - addr] ^= 0xff;
	return rc;
}

static void v_close(struct snr_dbg *d)
{
	fprintf(stderr, "vendor-rsp: %lu steps\n", steps);
	snr_dbg_rsp.close(d);
}

__attribute__((visibility("default"))) struct snr_dbg_ops snr_dbg_plugin;

__attribute__((constructor)) static void init(void)
{
	snr_dbg_plugin = snr_dbg_rsp;
	snr_dbg_plugin.abi_version = VENDOR_ABI_VERSION;
	snr_dbg_plugin.name = "vendor-rsp";
	snr_dbg_plugin.step = v_step;
	snr_dbg_plugin.close = v_close;
	snr_dbg_plugin.read_mem = v_read_mem;
	const char *noconf = getenv("VENDOR_NO_CONFIG");
	if (noconf && !strcmp(noconf, "1"))
		snr_dbg_plugin.machine_config = NULL;
	const char *restore = getenv("SNR_TEST_LIE_RESTORE");
	if (getenv("SNR_TEST_LIE_AT") && !(restore && !strcmp(restore, "1"))) {
		snr_dbg_plugin.write_regs = NULL;
		snr_dbg_plugin.write_mem = NULL;
	}
}
