/*
 * isa_aarch64.c: the AArch64 ISA plugin, from capstone's detail mode plus
 * the encoding itself.
 *
 * Register file (GDB's names): x0-x30, sp, pc, cpsr, v0-v31 (16 bytes),
 * fpsr, fpcr, and tpidr (TLS, GDB's "tls" feature; optional). QEMU names
 * the vector registers z0-z31 when the CPU has SVE (their low 16 bytes are
 * v0-v31) and TLS tpidr_el0 among its system registers: the alternative
 * names. w, b, h, s, d
 * and q views map to the full register; every AArch64 write to a view
 * zero-extends, so it is a full write, except where a SIMD instruction keeps
 * part of its destination (ins, xtn2, lane loads, accumulating forms): SIMD
 * data-processing writes count as read + write of the vector register.
 *
 * Capstone 4's AArch64 detail is wrong in places that matter to Algorithm 1:
 * aliases with a zero-register destination (cmp, cmn, tst) report their
 * source as written and not read; msr reports its source as written; svc
 * reports x30 as written; movz and movn read their destination; ret does
 * not read x30; memory operands carry no size. So memory effects come from the encoding (the load/store group is
 * regular; the classes are drawn at ldst_effects()), and register writes
 * from capstone are kept only where the encoding says the instruction
 * writes that register (Rd for data processing).
 */
#include <capstone/capstone.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "isa/capstone/isa_cs.h"

enum {
	A_X0 = 0,
	A_SP = 31,
	A_PC,
	A_CPSR,
	A_V0,
	A_FPSR = A_V0 + 32,
	A_FPCR,
	A_TPIDR,
	A_NREGS,
};

#define X(n, alt) {n, alt, 8, false, false}
#define V(n) {"v" #n, "z" #n, 16, false, true}
static const struct snr_isa_reg a64_regs[A_NREGS] = {
	X("x0", NULL), X("x1", NULL), X("x2", NULL), X("x3", NULL), X("x4", NULL), X("x5", NULL), X("x6", NULL),
	X("x7", NULL), X("x8", NULL), X("x9", NULL), X("x10", NULL), X("x11", NULL), X("x12", NULL),
	X("x13", NULL), X("x14", NULL), X("x15", NULL), X("x16", NULL), X("x17", NULL), X("x18", NULL),
	X("x19", NULL), X("x20", NULL), X("x21", NULL), X("x22", NULL), X("x23", NULL), X("x24", NULL),
	X("x25", NULL), X("x26", NULL), X("x27", NULL), X("x28", NULL), X("x29", "fp"), X("x30", "lr"),
	X("sp", NULL), {"pc", NULL, 8, true, false}, {"cpsr", NULL, 4, false, false},
	V(0), V(1), V(2), V(3), V(4), V(5), V(6), V(7), V(8), V(9), V(10),
	V(11), V(12), V(13), V(14), V(15), V(16), V(17), V(18), V(19), V(20),
	V(21), V(22), V(23), V(24), V(25), V(26), V(27), V(28), V(29), V(30),
	V(31),
	{"fpsr", NULL, 4, false, true}, {"fpcr", NULL, 4, false, true}, {"tpidr", "tpidr_el0", 8, false, true},
};
#undef X
#undef V

enum a64_kind { K_NONE, K_ZERO, K_GPR, K_FLAGS, K_VEC };

struct a64_plugin {
	csh cs;
	cs_insn *insn;
	int16_t reg[ARM64_REG_ENDING];
	uint8_t kind[ARM64_REG_ENDING];
	char fault[160];
};

struct a64_query {
	struct a64_plugin *self;
	const struct snr_isa_regs *regs;
	struct snr_insn_access *out;
	cs_insn *insn;
	uint32_t w;
	uint64_t pc;
	bool system;
	bool sysreg_move; /* mrs/msr of a register in the file (nzcv, fpcr, fpsr, tpidr): a plain move */
};

static void map_register(struct a64_plugin *s, unsigned id, const char *name)
{
	s->reg[id] = -1;
	s->kind[id] = K_NONE;
	if (!name)
		return;
	char c = name[0];
	if (!strcmp(name, "sp") || !strcmp(name, "wsp")) {
		s->reg[id] = A_SP;
		s->kind[id] = K_GPR;
	} else if (!strcmp(name, "xzr") || !strcmp(name, "wzr")) {
		s->kind[id] = K_ZERO;
	} else if (!strcmp(name, "nzcv")) {
		s->reg[id] = A_CPSR;
		s->kind[id] = K_FLAGS;
	} else if (!strcmp(name, "fp") || !strcmp(name, "lr")) {
		s->reg[id] = name[0] == 'f' ? 29 : 30;
		s->kind[id] = K_GPR;
	} else if (strchr("xwbhsdqv", c) && name[1] >= '0' && name[1] <= '9') {
		int n = atoi(name + 1);
		if ((c == 'x' || c == 'w') && n <= 30) {
			s->reg[id] = (int16_t)n;
			s->kind[id] = K_GPR;
		} else if (c != 'x' && c != 'w' && n < 32) {
			s->reg[id] = (int16_t)(A_V0 + n);
			s->kind[id] = K_VEC;
		}
	}
}

static void *a64_create(const char *config_json, char *err, size_t errlen)
{
	(void)config_json;
	struct a64_plugin *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "aarch64: out of memory");
		return NULL;
	}
	if (cs_open_detail(CS_ARCH_ARM64, CS_MODE_ARM, "aarch64", &s->cs, &s->insn, err, errlen)) {
		free(s);
		return NULL;
	}
	for (unsigned id = 0; id < ARM64_REG_ENDING; id++)
		map_register(s, id, id ? cs_reg_name(s->cs, id) : NULL);
	return s;
}

static void a64_destroy(void *self)
{
	struct a64_plugin *s = self;
	if (!s)
		return;
	cs_close_detail(&s->cs, s->insn);
	free(s);
}

static const struct snr_isa_reg *a64_registers(void *self, size_t *n)
{
	(void)self;
	*n = A_NREGS;
	return a64_regs;
}

static void qfault(struct a64_query *q, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cs_fault_v(q->out, q->self->fault, sizeof q->self->fault, fmt, ap);
	va_end(ap);
}

static void not_modelled(struct a64_query *q, const char *what)
{
	qfault(q, "aarch64: %s %s not modelled", q->insn->mnemonic, what);
}

static bool value_of(struct a64_query *q, int r, uint64_t *v)
{
	cs_acc_read(q->out, r);
	if (cs_reg_value(q->regs, a64_regs, r, v))
		return true;
	qfault(q, "aarch64: %s needs the value of %s, which is unknown", q->insn->mnemonic, a64_regs[r].name);
	return false;
}

static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = 1ull << (bits - 1);
	return (int64_t)((v ^ m) - m);
}

/* Encoding groups (op0 = bits 28:25). */
static bool grp_ldst(uint32_t w) { return (w & 0x0a000000) == 0x08000000; }
static bool grp_dp(uint32_t w)
{
	return (w & 0x1c000000) == 0x10000000 || (w & 0x0e000000) == 0x0a000000 || (w & 0x0e000000) == 0x0e000000;
}
static bool grp_simd_fp(uint32_t w) { return (w & 0x0e000000) == 0x0e000000; }

static void reg_read(struct a64_query *q, unsigned id)
{
	if (id == ARM64_REG_INVALID || id >= ARM64_REG_ENDING)
		return;
	if (q->self->kind[id] == K_NONE)
		qfault(q, "aarch64: %s uses register %s, not modelled", q->insn->mnemonic,
		       cs_reg_name(q->self->cs, id));
	cs_acc_read(q->out, q->self->reg[id]);
}

static void reg_write(struct a64_query *q, unsigned id)
{
	if (id == ARM64_REG_INVALID || id >= ARM64_REG_ENDING)
		return;
	int r = q->self->reg[id];
	uint32_t w = q->w;
	switch ((enum a64_kind)q->self->kind[id]) {
	case K_NONE:
		qfault(q, "aarch64: %s writes register %s, not modelled", q->insn->mnemonic,
		       cs_reg_name(q->self->cs, id));
		return;
	case K_ZERO:
		return;
	case K_FLAGS:
		cs_acc_write_partial(q->out, A_CPSR); /* nzcv only: the rest of cpsr stays */
		return;
	case K_GPR: case K_VEC:
		break;
	}
	if (q->insn->id == ARM64_INS_SVC)
		return; /* capstone 4 has svc write x30; system_effects() models it */
	if (grp_dp(w)) {
		/* Data processing writes Rd and nothing else; capstone's alias
		 * forms (cmp = subs xzr, ...) name a source as written. */
		unsigned n = r == A_SP ? 31 : r >= A_V0 ? (unsigned)(r - A_V0) : (unsigned)r;
		if (n != (w & 31)) {
			cs_acc_read(q->out, r);
			return;
		}
		if (r >= A_V0 && grp_simd_fp(w)) {
			cs_acc_write_partial(q->out, r);
			return;
		}
	}
	if (!grp_ldst(w) && !grp_dp(w) && q->insn->id != ARM64_INS_BL && q->insn->id != ARM64_INS_BLR) {
		/* branches and system instructions: modelled in system_effects() */
		cs_acc_read(q->out, r);
		return;
	}
	cs_acc_write(q->out, r);
}

static void region(struct a64_query *q, bool load, bool conditional, uint64_t addr, uint64_t bytes)
{
	cs_acc_region(q->out, !load, addr, bytes);
	if (!load && conditional)
		cs_acc_region(q->out, 0, addr, bytes);
}

/* The base register Rn (31 = sp), its value, and writeback. */
static bool base_value(struct a64_query *q, bool writeback, uint64_t *v)
{
	unsigned rn = (q->w >> 5) & 31;
	int r = rn == 31 ? A_SP : (int)rn;
	if (writeback)
		cs_acc_write(q->out, r);
	return value_of(q, r, v);
}

/*
 * Loads and stores, from the encoding (Arm ARM C4.1.66, "Loads and Stores"):
 *
 *   bits 29..23   class                       size of the access
 *   001000x       exclusive / acquire-release 1<<size, pairs 2 * (4<<sz)
 *   011x0xx       literal (pc + imm19*4)      4, 8, 4 (ldrsw), V: 4<<opc
 *   101xxxx       pair (24:23 = nt/post/off/pre)  2 * element
 *   111xxxx       register (24 = unsigned imm; else 21, 11:10 pick
 *                 unscaled/post/unpriv/pre/register offset)  1<<size, V: up to 16
 *   0011000/1     SIMD multiple structures (ld1-ld4, st1-st4)  nregs * (Q ? 16 : 8)
 *   0011010/1     SIMD single structure (lane, ldNr)  selem * element
 */
static void ldst_effects(struct a64_query *q)
{
	uint32_t w = q->w;
	uint64_t base;
	if ((w & 0x3f000000) == 0x08000000) { /* exclusive, acquire/release */
		unsigned size = w >> 30, o2 = (w >> 23) & 1, load = (w >> 22) & 1, pair = (w >> 21) & 1;
		if ((o2 && pair) || (pair && !(size & 2))) {
			not_modelled(q, "(compare and swap) memory effects");
			return;
		}
		uint64_t bytes = pair ? 2ull * (4u << (size & 1)) : 1ull << size;
		if (base_value(q, false, &base))
			region(q, load, !o2, base, bytes); /* store-exclusive may not store */
		return;
	}
	if ((w & 0x3b000000) == 0x18000000) { /* literal */
		unsigned opc = w >> 30, v = (w >> 26) & 1;
		uint64_t addr = q->pc + (uint64_t)(sext((w >> 5) & 0x7ffff, 19) * 4);
		if (!v && opc == 3)
			return; /* prfm: a hint */
		region(q, true, false, addr, v ? 4u << opc : opc == 1 ? 8 : 4);
		return;
	}
	if ((w & 0x3a000000) == 0x28000000) { /* pair */
		unsigned opc = w >> 30, v = (w >> 26) & 1, load = (w >> 22) & 1, mode = (w >> 23) & 3;
		if (!v && opc == 1 && !load) {
			not_modelled(q, "(memory tags) effects");
			return;
		}
		uint64_t elem = v ? 4u << opc : opc == 2 ? 8 : 4;
		int64_t off = sext((w >> 15) & 0x7f, 7) * (int64_t)elem;
		if (base_value(q, mode == 1 || mode == 3, &base))
			region(q, load, false, mode == 1 ? base : base + (uint64_t)off, 2 * elem);
		return;
	}
	if ((w & 0x3a000000) == 0x38000000) { /* register */
		unsigned size = w >> 30, v = (w >> 26) & 1, opc = (w >> 22) & 3;
		uint64_t bytes = v ? ((opc & 2) ? 16 : 1ull << size) : 1ull << size;
		bool load = v ? (opc & 1) : opc != 0;
		bool prfm = !v && size == 3 && opc == 2;
		if (w & (1u << 24)) {
			if (!prfm && base_value(q, false, &base))
				region(q, load, false, base + ((w >> 10) & 0xfff) * bytes, bytes);
			return;
		}
		if (!(w & (1u << 21))) {
			unsigned mode = (w >> 10) & 3; /* unscaled, post, unprivileged, pre */
			int64_t off = sext((w >> 12) & 0x1ff, 9);
			bool wb = mode == 1 || mode == 3;
			if (!prfm && base_value(q, wb, &base))
				region(q, load, false, mode == 1 ? base : base + (uint64_t)off, bytes);
			return;
		}
		if (((w >> 10) & 3) == 2) { /* register offset */
			unsigned rm = (w >> 16) & 31, option = (w >> 13) & 7, s = (w >> 12) & 1;
			uint64_t idx = 0;
			if (rm != 31 && !value_of(q, (int)rm, &idx))
				return;
			if (option == 2)
				idx = (uint32_t)idx;
			else if (option == 6)
				idx = (uint64_t)(int64_t)(int32_t)idx;
			unsigned shift = 0;
			while (s && (1ull << shift) < bytes)
				shift++;
			if (!prfm && base_value(q, false, &base))
				region(q, load, false, base + (idx << shift), bytes);
			return;
		}
		not_modelled(q, "(atomic) memory effects");
		return;
	}
	if ((w & 0xbfa00000) == 0x0c000000 || (w & 0xbfa00000) == 0x0c800000) { /* SIMD multiple */
		static const uint8_t nregs[16] = {4, 0, 4, 0, 3, 0, 3, 1, 2, 0, 2, 0, 0, 0, 0, 0};
		unsigned q_ = (w >> 30) & 1, load = (w >> 22) & 1, n = nregs[(w >> 12) & 15];
		if (!n) {
			not_modelled(q, "memory effects");
			return;
		}
		if (base_value(q, (w & 0x00800000) != 0, &base))
			region(q, load, false, base, n * (q_ ? 16u : 8u));
		return;
	}
	if ((w & 0xbf000000) == 0x0d000000) { /* SIMD single structure */
		unsigned load = (w >> 22) & 1, r = (w >> 21) & 1, opcode = (w >> 13) & 7, size = (w >> 10) & 3;
		unsigned selem = (((opcode & 1) << 1) | r) + 1, scale = opcode >> 1;
		uint64_t esize = scale == 3 ? 1u << size : 1u << scale;
		if (scale == 2 && (size & 1))
			esize = 8;
		if (base_value(q, (w & 0x00800000) != 0, &base))
			region(q, load, false, base, selem * esize);
		if (load && scale != 3) /* a lane load keeps the other lanes */
			for (unsigned i = 0; i < q->insn->detail->arm64.op_count; i++)
				if (q->insn->detail->arm64.operands[i].type == ARM64_OP_REG)
					cs_acc_read(q->out, q->self->reg[q->insn->detail->arm64.operands[i].reg]);
		return;
	}
	not_modelled(q, "memory effects");
}

/* System registers by their o0:op1:CRn:CRm:op2 field (bits 19:5). */
#define SYSREG(op0, op1, crn, crm, op2) ((((op0) - 2) << 14) | ((op1) << 11) | ((crn) << 7) | ((crm) << 3) | (op2))
static int sysreg_register(unsigned key)
{
	switch (key) {
	case SYSREG(3, 3, 4, 2, 0): return A_CPSR; /* nzcv */
	case SYSREG(3, 3, 4, 4, 0): return A_FPCR;
	case SYSREG(3, 3, 4, 4, 1): return A_FPSR;
	case SYSREG(3, 3, 13, 0, 2): return A_TPIDR;
	default: return -1;
	}
}

/* Read-only machine registers: values from the machine, like cpuid. */
static bool sysreg_machine(unsigned key)
{
	return key == SYSREG(3, 3, 14, 0, 0) || key == SYSREG(3, 3, 14, 0, 1) || key == SYSREG(3, 3, 14, 0, 2) ||
	       key == SYSREG(3, 3, 0, 0, 1) || key == SYSREG(3, 3, 0, 0, 7) || key == SYSREG(3, 3, 13, 0, 3);
}

static void system_effects(struct a64_query *q)
{
	uint32_t w = q->w;
	unsigned rt = w & 31;
	switch (q->insn->id) {
	case ARM64_INS_SVC:
		/* Linux: number in x8, arguments in x0-x5, result in x0. What
		 * the kernel does to memory is beyond the ISA: class SYSTEM. */
		q->system = true;
		cs_acc_read(q->out, 8);
		for (int r = 0; r <= 5; r++)
			cs_acc_read(q->out, r);
		cs_acc_write(q->out, 0);
		return;
	case ARM64_INS_RET:
		if (q->insn->detail->arm64.op_count == 0)
			cs_acc_read(q->out, 30);
		return;
	case ARM64_INS_BRK: case ARM64_INS_HLT: case ARM64_INS_HVC: case ARM64_INS_SMC:
		q->system = true;
		qfault(q, "aarch64: %s raises an exception", q->insn->mnemonic);
		return;
	default:
		break;
	}
	if ((w & 0xffd00000) == 0xd5100000) { /* mrs (L = 1) and msr (register) */
		bool mrs = (w >> 21) & 1;
		unsigned key = (w >> 5) & 0x7fff;
		int r = sysreg_register(key);
		q->system = r < 0;
		q->sysreg_move = r >= 0;
		if (mrs) {
			if (rt != 31) { /* written whole (capstone 4 has mrs read it too) */
				q->out->regs_read[rt / 64] &= ~(1ull << rt % 64);
				cs_acc_write(q->out, (int)rt);
			}
			if (r >= 0)
				cs_acc_read(q->out, r);
			else if (!sysreg_machine(key))
				not_modelled(q, "of this system register");
		} else {
			if (rt != 31)
				cs_acc_read(q->out, (int)rt);
			if (r == A_CPSR)
				cs_acc_write_partial(q->out, r);
			else if (r >= 0)
				cs_acc_write(q->out, r);
			else
				not_modelled(q, "of this system register");
		}
		return;
	}
	if ((w & 0xfff8f01f) == 0xd500401f) { /* msr (immediate): pstate fields */
		q->system = true;
		not_modelled(q, "of a pstate field");
	} else if ((w & 0xffd80000) == 0xd5080000) { /* sys, sysl: dc zva, ic ivau, ... */
		q->system = true;
		not_modelled(q, "(system instruction) effects");
	}
}

static bool has_group(const cs_insn *in, uint8_t g)
{
	for (unsigned i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

static int a64_access(void *self, const uint8_t *code, size_t avail, uint64_t pc, const struct snr_isa_regs *regs,
		      struct snr_insn_access *out)
{
	struct a64_plugin *s = self;
	memset(out, 0, sizeof *out);
	const uint8_t *p = code;
	size_t n = avail;
	uint64_t addr = pc;
	if (avail < 4 || !cs_disasm_iter(s->cs, &p, &n, &addr, s->insn)) {
		out->fault = "aarch64: not a valid instruction (or cut short)";
		out->cls = SNR_CLASS_OTHER;
		return -1;
	}
	uint32_t w = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 | (uint32_t)code[3] << 24;
	struct a64_query q = {s, regs, out, s->insn, w, pc, false, false};
	out->length = 4;
	cs_acc_read(out, A_PC);
	cs_acc_write(out, A_PC);

	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	if (cs_regs_access(s->cs, s->insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		nrd = nwr = 0;
	for (unsigned i = 0; i < nrd; i++)
		reg_read(&q, rd[i]);
	for (unsigned i = 0; i < nwr; i++)
		reg_write(&q, wr[i]);
	if ((w & 0x1f800000) == 0x12800000 && ((w >> 29) & 3) != 3 && (w & 31) != 31) {
		/* movn, movz write all of Rd (capstone 4 has them read it, as movk does) */
		out->regs_read[(w & 31) / 64] &= ~(1ull << (w & 31) % 64);
	}
	cs_arm64 *d = &s->insn->detail->arm64;
	if (d->update_flags)
		cs_acc_write_partial(out, A_CPSR);
	if (d->cc != ARM64_CC_INVALID && d->cc != ARM64_CC_AL && d->cc != ARM64_CC_NV)
		cs_acc_read(out, A_CPSR);
	if (grp_ldst(w))
		ldst_effects(&q);
	else if (!grp_dp(w))
		system_effects(&q);
	if (grp_simd_fp(w) && !grp_ldst(w)) {
		cs_acc_read(out, A_FPCR);
		cs_acc_write_partial(out, A_FPSR); /* sticky exception bits */
	}

	bool ld = false, st = false;
	for (unsigned i = 0; i < out->nmem; i++)
		if (out->mem[i].write)
			st = true;
		else
			ld = true;
	if (q.system || has_group(s->insn, ARM64_GRP_INT) ||
	    (has_group(s->insn, ARM64_GRP_PRIVILEGE) && !q.sysreg_move))
		out->cls = SNR_CLASS_SYSTEM;
	else if (has_group(s->insn, ARM64_GRP_JUMP) || has_group(s->insn, ARM64_GRP_CALL) ||
		 has_group(s->insn, ARM64_GRP_RET) || has_group(s->insn, ARM64_GRP_BRANCH_RELATIVE))
		out->cls = SNR_CLASS_BRANCH;
	else if (st)
		out->cls = SNR_CLASS_STORE;
	else if (ld)
		out->cls = SNR_CLASS_LOAD;
	else if (grp_simd_fp(w))
		out->cls = SNR_CLASS_VECTOR;
	else
		out->cls = SNR_CLASS_SCALAR;
	/* svc's result, the counter registers: saved after the step (a move
	 * to or from a register in the file is computed: a simulator running
	 * ahead of the target runs it, as stepping's replay does) */
	out->record_outputs = out->cls == SNR_CLASS_SYSTEM;
	return 0;
}

static unsigned a64_disasm(void *self, const uint8_t *code, size_t avail, uint64_t pc, char *buf, size_t len)
{
	struct a64_plugin *s = self;
	const uint8_t *p = code;
	size_t n = avail;
	uint64_t addr = pc;
	if (avail < 4 || !cs_disasm_iter(s->cs, &p, &n, &addr, s->insn)) {
		if (len)
			snprintf(buf, len, "(bad)");
		return 0;
	}
	if (len)
		snprintf(buf, len, "%s%s%s", s->insn->mnemonic, s->insn->op_str[0] ? " " : "", s->insn->op_str);
	return 4;
}

/* Linux arm64 (asm-generic numbers) system calls that write memory their
 * arguments locate (x0-x5). Calls that write through pointers held in
 * memory (readv, recvmsg, ioctl) are not listed. */
static const struct cs_syscall_write a64_syscall_table[] = {
	{63, 1, -1, 0},     /* read(fd, buf, count): buf[0, result) */
	{67, 1, -1, 0},     /* pread64 */
	{207, 1, -1, 0},    /* recvfrom(fd, buf, len, ...) */
	{278, 0, -1, 0},    /* getrandom(buf, len, flags) */
	{17, 0, -1, 0},     /* getcwd(buf, size) */
	{78, 2, -1, 0},     /* readlinkat(dfd, path, buf, size) */
	{61, 1, -1, 0},     /* getdents64(fd, dirp, count) */
	{123, 2, -1, 0},    /* sched_getaffinity(pid, len, mask) */
	{79, 2, 128, 0},    /* newfstatat(dfd, path, statbuf, flags): arm64's struct stat */
	{80, 1, 128, 0},    /* fstat(fd, statbuf) */
	{291, 4, 256, 0},   /* statx(dfd, path, flags, mask, statxbuf) */
	{113, 1, 16, 0},    /* clock_gettime(clock, tp) */
	{169, 0, 16, 0},    /* gettimeofday(tv, tz) */
	{169, 1, 8, 0},
	{59, 0, 8, 0},      /* pipe2(fds, flags) */
	{160, 0, 390, 0},   /* uname(buf) */
	{179, 0, 112, 0},   /* sysinfo(info) */
	{165, 1, 144, 0},   /* getrusage(who, usage) */
	{163, 1, 16, 0},    /* getrlimit(resource, rlim) */
	{261, 3, 16, 0},    /* prlimit64(pid, resource, new, old) */
	{135, 2, -2 - 3, 0},/* rt_sigprocmask(how, set, oldset, sigsetsize) */
	{134, 2, 32, 0},    /* rt_sigaction(sig, act, oldact, 8): the kernel's struct */
	{101, 1, 16, 0},    /* nanosleep(req, rem) */
	{115, 3, 16, 0},    /* clock_nanosleep(clock, flags, req, rem) */
	{73, 0, -2 - 1, 8}, /* ppoll(fds, nfds, ...): struct pollfd fds[nfds] */
	{22, 1, -1, 16},    /* epoll_pwait(epfd, events, max, ...): result x epoll_event (16 bytes on arm64) */
};

static unsigned a64_syscall_writes(void *self, const uint8_t *code, size_t avail, uint64_t pc,
				   const struct snr_isa_regs *before, const struct snr_isa_regs *after,
				   struct snr_mem_region *out, unsigned max)
{
	(void)self, (void)pc;
	uint32_t w;
	if (avail < 4 || !before->val[8] || !after->val[A_X0])
		return 0;
	memcpy(&w, code, 4);
	if ((w & 0xffe0001fu) != 0xd4000001u)
		return 0; /* only svc */
	uint64_t nr, res, args[6] = {0};
	memcpy(&nr, before->val[8], 8);
	memcpy(&res, after->val[A_X0], 8);
	for (int i = 0; i < 6; i++)
		if (before->val[i])
			memcpy(&args[i], before->val[i], 8);
	return cs_syscall_writes(a64_syscall_table, sizeof(a64_syscall_table) / sizeof(a64_syscall_table[0]), nr, res,
				 args, out, max);
}

const struct snr_isa_ops snr_isa_aarch64 = {
	.abi_version = SNR_ISA_ABI_VERSION,
	.name = "aarch64",
	.gdb_arch = "aarch64",
	.max_insn_bytes = 4,
	.create = a64_create,
	.destroy = a64_destroy,
	.registers = a64_registers,
	.access = a64_access,
	.disasm = a64_disasm,
	.syscall_writes = a64_syscall_writes,
};
