/*
 * isa_cs.h: what the capstone-based ISA plugins (x86-64, aarch64) share.
 *
 * Capstone's detail mode names the registers an instruction reads and writes
 * in its own numbering, with sub-registers (eax, w0, s0) as registers of their
 * own. Each plugin maps those to its GDB-named register file once, at create
 * time, by name, and then corrects capstone where the answer is known to be
 * incomplete (implicit memory, conditional and partial writes). Two rules keep
 * Algorithm 1 exact where the answer cannot be precise:
 *  - a write that may leave part of a register (or region) as it was is also
 *    a read of it, so the recorder saves the bytes the write does not define;
 *  - an effect the plugin does not model is reported in access->fault rather
 *    than guessed.
 */
#ifndef SNR_ISA_CS_H
#define SNR_ISA_CS_H

#include <capstone/capstone.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "isa/snr_isa.h"

/* Opens capstone for arch/mode in detail mode with one reusable instruction
 * buffer; on failure fills err (prefixed with the ISA's name) and returns -1. */
static inline int cs_open_detail(cs_arch arch, cs_mode mode, const char *isa, csh *cs, cs_insn **insn, char *err,
				 size_t errlen)
{
	cs_err e = cs_open(arch, mode, cs);
	if (e != CS_ERR_OK) {
		snprintf(err, errlen, "%s: capstone: %s", isa, cs_strerror(e));
		return -1;
	}
	cs_option(*cs, CS_OPT_DETAIL, CS_OPT_ON);
	*insn = cs_malloc(*cs);
	if (!*insn) {
		snprintf(err, errlen, "%s: out of memory", isa);
		cs_close(cs);
		return -1;
	}
	return 0;
}

static inline void cs_close_detail(csh *cs, cs_insn *insn)
{
	cs_free(insn, 1);
	cs_close(cs);
}

/* Sets the access's fault unless one is set already (the first wins); the
 * text lives in buf, the plugin's, until the next query. */
static inline void cs_fault_v(struct snr_insn_access *out, char *buf, size_t len, const char *fmt, va_list ap)
{
	if (out->fault)
		return;
	vsnprintf(buf, len, fmt, ap);
	out->fault = buf;
}

static inline void cs_acc_read(struct snr_insn_access *a, int r)
{
	if (r >= 0)
		snr_regset_add(a->regs_read, (unsigned)r);
}

static inline void cs_acc_write(struct snr_insn_access *a, int r)
{
	if (r >= 0)
		snr_regset_add(a->regs_written, (unsigned)r);
}

/* A write that may leave some bytes unchanged: a read too. */
static inline void cs_acc_write_partial(struct snr_insn_access *a, int r)
{
	cs_acc_read(a, r);
	cs_acc_write(a, r);
}

/* Records the first fault only: the first reason is the one to fix first. */
static inline void cs_acc_fault(struct snr_insn_access *a, const char *why)
{
	if (!a->fault)
		a->fault = why;
}

static inline void cs_acc_region(struct snr_insn_access *a, int write, uint64_t addr, uint64_t bytes)
{
	if (bytes == 0)
		return;
	if (a->nmem == SNR_ISA_MAX_MEM) {
		cs_acc_fault(a, "more memory regions than the ISA ABI carries");
		return;
	}
	struct snr_mem_region *m = &a->mem[a->nmem++];
	memset(m, 0, sizeof *m);
	m->write = (uint8_t)(write != 0);
	m->addr = addr;
	m->row_bytes = bytes;
	m->rows = 1;
	m->stride = (int64_t)bytes;
}

/* Register r's value (up to 8 little-endian bytes); false if unknown. */
static inline int cs_reg_value(const struct snr_isa_regs *regs, const struct snr_isa_reg *file, int r,
			       uint64_t *out)
{
	*out = 0;
	if (r < 0 || !regs || !regs->val || !regs->val[r])
		return 0;
	unsigned n = file[r].size < 8 ? file[r].size : 8;
	for (unsigned i = 0; i < n; i++)
		*out |= (uint64_t)regs->val[r][i] << (8 * i);
	return 1;
}

/* ---- what system calls write (snr_isa_ops.syscall_writes) ---------------- */

/* A system call that writes memory its arguments locate: number, the
 * argument holding the address (0-5), and the length: a constant, the
 * result (-1), or another argument's value (-2 - arg); times `scale`
 * (elements of an array: pollfd, epoll_event), 0 meaning 1. */
struct cs_syscall_write {
	unsigned nr;
	uint8_t arg;
	int64_t len;
	uint8_t scale;
};

/* The regions a call numbered nr, with arguments args[0..5] and result res,
 * wrote: none if it failed (res negative, -errno). */
static inline unsigned cs_syscall_writes(const struct cs_syscall_write *table, size_t n, uint64_t nr, uint64_t res,
					 const uint64_t args[6], struct snr_mem_region *out, unsigned max)
{
	unsigned k = 0;
	if ((int64_t)res < 0)
		return 0;
	for (size_t i = 0; i < n && k < max; i++) {
		if (table[i].nr != nr)
			continue;
		uint64_t addr = args[table[i].arg], len = table[i].len >= 0 ? (uint64_t)table[i].len
							   : table[i].len == -1 ? res
										: args[-2 - table[i].len];
		len *= table[i].scale ? table[i].scale : 1;
		if (!addr || !len || len > (64ull << 20))
			continue;
		out[k++] = (struct snr_mem_region){.write = 1, .addr = addr, .row_bytes = len, .rows = 1};
	}
	return k;
}

#endif
