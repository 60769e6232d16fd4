/*
 * isa_cases.h: table-driven access-query cases for an ISA plugin. A case is
 * data: the instruction bytes, the register values that matter (others are
 * zero; eflags/cpsr as given), and the expected length, class, the registers
 * that must be read, the exact set written (the pc aside), registers that
 * must NOT be read, the exact memory regions, and a fault substring.
 */
#ifndef SNR_TESTS_ISA_CASES_H
#define SNR_TESTS_ISA_CASES_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/snr_isa.h"
#include "tests/check.h"

struct case_reg {
	const char *name;
	uint64_t val;
};

struct case_mem {
	int write;
	uint64_t addr, bytes;
};

struct isa_case {
	const char *hex;      /* instruction bytes */
	const char *asm_text; /* capstone's disassembly, checked too */
	struct case_reg regs[6];
	unsigned length;      /* 0 = invalid bytes, access() must return -1 */
	int cls;              /* enum snr_insn_class, -1 = don't care */
	const char *reads;    /* space-separated names that must be read */
	const char *writes;   /* the exact set written besides the pc */
	const char *not_reads;
	struct case_mem mem[4];
	const char *fault;    /* substring of the fault, or NULL for none */
	uint64_t pc;
};

static int case_reg_index(const struct snr_isa_reg *file, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(file[i].name, name))
			return (int)i;
	return -1;
}

static size_t case_hex(const char *hex, uint8_t *out, size_t max)
{
	size_t n = 0;
	while (hex[0] && hex[1] && n < max) {
		char b[3] = {hex[0], hex[1], 0};
		out[n++] = (uint8_t)strtoul(b, NULL, 16);
		hex += 2;
	}
	return n;
}

/* Every name in the space-separated list `names` must (want) or must not
 * (!want) be in set. */
static void case_names(const struct isa_case *c, const char *what, const struct snr_isa_reg *file, size_t n,
		       const uint64_t *set, const char *names, int want)
{
	char buf[256];
	snprintf(buf, sizeof buf, "%s", names ? names : "");
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		int r = case_reg_index(file, n, tok);
		CHECK(r >= 0, "%s: no register %s", c->asm_text, tok);
		if (r >= 0)
			CHECK(snr_regset_has(set, (unsigned)r) == want, "%s: %s %s%s", c->asm_text, tok,
			      want ? "not " : "", what);
	}
}

static void run_case(const struct snr_isa_ops *ops, void *self, const struct isa_case *c, const char *flags_reg,
		     uint64_t default_flags)
{
	size_t n;
	const struct snr_isa_reg *file = ops->registers(self, &n);
	uint8_t (*vals)[16] = calloc(n, 16);
	const uint8_t **ptr = calloc(n, sizeof *ptr);
	for (size_t i = 0; i < n; i++)
		ptr[i] = vals[i];
	int fl = case_reg_index(file, n, flags_reg);
	memcpy(vals[fl], &default_flags, 8);
	for (int i = 0; i < 6 && c->regs[i].name; i++) {
		int r = case_reg_index(file, n, c->regs[i].name);
		CHECK(r >= 0, "%s: no register %s", c->asm_text, c->regs[i].name);
		if (r >= 0)
			memcpy(vals[r], &c->regs[i].val, 8); /* little-endian host */
	}
	struct snr_isa_regs regs = {ptr, 0, 1};
	uint8_t code[16];
	size_t len = case_hex(c->hex, code, sizeof code);
	struct snr_insn_access a;
	int rc = ops->access(self, code, len, c->pc, &regs, &a);
	if (c->length == 0) {
		CHECK(rc == -1 && a.fault, "%s: invalid bytes accepted", c->hex);
		goto out;
	}
	CHECK(rc == 0, "%s: access failed: %s", c->asm_text, a.fault ? a.fault : "?");
	char text[128];
	ops->disasm(self, code, len, c->pc, text, sizeof text);
	CHECK(!strcmp(text, c->asm_text), "%s: disassembles as \"%s\"", c->asm_text, text);
	CHECK(a.length == c->length, "%s: length %u, want %u", c->asm_text, a.length, c->length);
	if (c->cls >= 0)
		CHECK((int)a.cls == c->cls, "%s: class %d, want %d", c->asm_text, (int)a.cls, c->cls);
	case_names(c, "read", file, n, a.regs_read, c->reads, 1);
	case_names(c, "read (must not be)", file, n, a.regs_read, c->not_reads, 0);
	/* the written set exactly: the listed names plus the pc */
	uint64_t want[SNR_ISA_MAX_REGS / 64] = {0};
	char buf[256];
	snprintf(buf, sizeof buf, "%s", c->writes ? c->writes : "");
	for (char *tok = strtok(buf, " "); tok; tok = strtok(NULL, " ")) {
		int r = case_reg_index(file, n, tok);
		CHECK(r >= 0, "%s: no register %s", c->asm_text, tok);
		if (r >= 0)
			snr_regset_add(want, (unsigned)r);
	}
	for (size_t r = 0; r < n; r++) {
		if (file[r].pc)
			continue;
		CHECK(snr_regset_has(a.regs_written, (unsigned)r) == snr_regset_has(want, (unsigned)r),
		      "%s: %s %s", c->asm_text, file[r].name,
		      snr_regset_has(want, (unsigned)r) ? "not written" : "written, unexpectedly");
	}
	unsigned nwant = 0;
	while (nwant < 4 && c->mem[nwant].bytes)
		nwant++;
	CHECK(a.nmem == nwant, "%s: %u regions, want %u", c->asm_text, a.nmem, nwant);
	for (unsigned i = 0; i < nwant; i++) {
		int found = 0;
		for (unsigned j = 0; j < a.nmem; j++)
			found |= a.mem[j].write == c->mem[i].write && a.mem[j].addr == c->mem[i].addr &&
				 a.mem[j].row_bytes * a.mem[j].rows == c->mem[i].bytes;
		CHECK(found, "%s: no %s region [%#llx, +%llu)", c->asm_text, c->mem[i].write ? "write" : "read",
		      (unsigned long long)c->mem[i].addr, (unsigned long long)c->mem[i].bytes);
	}
	if (c->fault)
		CHECK(a.fault && strstr(a.fault, c->fault), "%s: fault \"%s\", want \"%s\"", c->asm_text,
		      a.fault ? a.fault : "(none)", c->fault);
	else
		CHECK(!a.fault, "%s: unexpected fault \"%s\"", c->asm_text, a.fault);
out:
	free(vals);
	free(ptr);
}

/* syscall_writes: the buffers a system call filled, from the registers
 * before the step (number, arguments) and after it (the result). */
static inline unsigned syscall_case(const struct snr_isa_ops *isa, void *self, const char *hex, const char *const *names,
			     const uint64_t *before_v, size_t nb, const char *res_name, uint64_t res,
			     struct snr_mem_region *out)
{
	size_t n;
	const struct snr_isa_reg *f = isa->registers(self, &n);
	static uint8_t bb[256][16], ab[256][16];
	const uint8_t *bv[256] = {0}, *av[256] = {0};
	for (size_t i = 0; i < nb; i++) {
		int r = case_reg_index(f, n, names[i]);
		memcpy(bb[r], &before_v[i], 8);
		bv[r] = bb[r];
		av[r] = ab[r];
		memcpy(ab[r], &before_v[i], 8);
	}
	int r = case_reg_index(f, n, res_name);
	memcpy(ab[r], &res, 8);
	av[r] = ab[r];
	uint8_t code[16];
	size_t len = strlen(hex) / 2;
	for (size_t i = 0; i < len; i++)
		sscanf(hex + 2 * i, "%2hhx", &code[i]);
	struct snr_isa_regs before = {.val = bv}, after = {.val = av};
	return isa->syscall_writes(self, code, len, 0x1000, &before, &after, out, 4);
}

#endif
