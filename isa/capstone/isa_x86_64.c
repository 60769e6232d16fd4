/*
 * isa_x86_64.c: the x86-64 ISA plugin, from capstone's detail mode.
 *
 * The register file is GDB's amd64 one, restricted to what user code reads
 * and writes and this plugin models: the 16 GPRs, rip, eflags, the segment
 * selectors, fs_base/gs_base, xmm0-15, the AVX upper halves ymm0h-ymm15h and
 * mxcsr. Sub-registers map to the full register:
 *
 *   write of   eax (32-bit)        full write of rax (the CPU zero-extends)
 *              ax, al, ah (8/16)   read + write of rax (the other bytes stay)
 *              xmmN, legacy SSE    read + write of xmmN unless a known full move
 *                                  (movaps/movups/movdqa/movdqu/movq/movd, or
 *                                  movss/movsd from memory); ymmNh stays
 *              xmmN, VEX           write of xmmN and ymmNh (VEX zeroes bits 128+)
 *              ymmN                write of xmmN and ymmNh
 *              eflags              read + write (no instruction sets all bits)
 *
 * Capstone 4 lists explicit memory operands with their access but not the
 * implicit ones; those are modelled here: push/pop (and pushf/popf), call,
 * ret, leave, enter (level 0), string instructions with and without rep
 * (rcx elements; DF=1 grows the region downwards), xlat, bt* with a register
 * bit offset, cmpxchg (conditional writes, so read + write), stmxcsr.
 * Instructions whose effects are not modelled (x87, AVX-512, gathers, masked
 * moves, xsave, port I/O, far transfers, privileged ones) come back with
 * their best-known access and a fault message naming the mnemonic.
 */
#include <capstone/capstone.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>

#include "isa/capstone/isa_cs.h"

enum {
	X_RAX, X_RBX, X_RCX, X_RDX, X_RSI, X_RDI, X_RBP, X_RSP,
	X_R8, X_R9, X_R10, X_R11, X_R12, X_R13, X_R14, X_R15,
	X_RIP, X_EFLAGS, X_CS, X_SS, X_DS, X_ES, X_FS, X_GS, X_FS_BASE, X_GS_BASE,
	X_XMM0,
	X_YMM0H = X_XMM0 + 16,
	X_MXCSR = X_YMM0H + 16,
	X_NREGS,
};

#define GPR(n) {n, NULL, 8, false, false}
#define VEC(n) {n, NULL, 16, false, false}
#define VECH(n) {n, NULL, 16, false, true}
static const struct snr_isa_reg x86_regs[X_NREGS] = {
	GPR("rax"), GPR("rbx"), GPR("rcx"), GPR("rdx"), GPR("rsi"), GPR("rdi"), GPR("rbp"), GPR("rsp"),
	GPR("r8"), GPR("r9"), GPR("r10"), GPR("r11"), GPR("r12"), GPR("r13"), GPR("r14"), GPR("r15"),
	{"rip", "pc", 8, true, false}, {"eflags", NULL, 4, false, false},
	{"cs", NULL, 4, false, false}, {"ss", NULL, 4, false, false}, {"ds", NULL, 4, false, false},
	{"es", NULL, 4, false, false}, {"fs", NULL, 4, false, false}, {"gs", NULL, 4, false, false},
	{"fs_base", NULL, 8, false, true}, {"gs_base", NULL, 8, false, true},
	VEC("xmm0"), VEC("xmm1"), VEC("xmm2"), VEC("xmm3"), VEC("xmm4"), VEC("xmm5"), VEC("xmm6"), VEC("xmm7"),
	VEC("xmm8"), VEC("xmm9"), VEC("xmm10"), VEC("xmm11"), VEC("xmm12"), VEC("xmm13"), VEC("xmm14"),
	VEC("xmm15"),
	VECH("ymm0h"), VECH("ymm1h"), VECH("ymm2h"), VECH("ymm3h"), VECH("ymm4h"), VECH("ymm5h"), VECH("ymm6h"),
	VECH("ymm7h"), VECH("ymm8h"), VECH("ymm9h"), VECH("ymm10h"), VECH("ymm11h"), VECH("ymm12h"),
	VECH("ymm13h"), VECH("ymm14h"), VECH("ymm15h"),
	{"mxcsr", NULL, 4, false, true},
};
#undef GPR
#undef VEC
#undef VECH

/* How a capstone register relates to the register file. */
enum x86_kind {
	K_NONE,     /* not modelled (x87, MMX, AVX-512, control/debug registers) */
	K_FULL,     /* the whole register (rax, rip, cs) */
	K_GPR32,    /* 32-bit view: a write defines the whole register */
	K_PART,     /* 8/16-bit view: a write leaves bytes unchanged */
	K_FLAGS,
	K_XMM,
	K_YMM,
};

/* capstone names of each GPR's views: 64, 32, 16, low 8, high 8 */
static const char *const x86_gpr_views[16][5] = {
	{"rax", "eax", "ax", "al", "ah"}, {"rbx", "ebx", "bx", "bl", "bh"}, {"rcx", "ecx", "cx", "cl", "ch"},
	{"rdx", "edx", "dx", "dl", "dh"}, {"rsi", "esi", "si", "sil", NULL}, {"rdi", "edi", "di", "dil", NULL},
	{"rbp", "ebp", "bp", "bpl", NULL}, {"rsp", "esp", "sp", "spl", NULL}, {"r8", "r8d", "r8w", "r8b", NULL},
	{"r9", "r9d", "r9w", "r9b", NULL}, {"r10", "r10d", "r10w", "r10b", NULL},
	{"r11", "r11d", "r11w", "r11b", NULL}, {"r12", "r12d", "r12w", "r12b", NULL},
	{"r13", "r13d", "r13w", "r13b", NULL}, {"r14", "r14d", "r14w", "r14b", NULL},
	{"r15", "r15d", "r15w", "r15b", NULL},
};

struct x86_plugin {
	csh cs;
	cs_insn *insn;
	int16_t reg[X86_REG_ENDING];  /* capstone register -> plugin register, -1 if none */
	uint8_t kind[X86_REG_ENDING]; /* enum x86_kind */
	char fault[160];              /* the last fault message with a mnemonic in it */
};

/* One access query in progress. */
struct x86_query {
	struct x86_plugin *self;
	const struct snr_isa_regs *regs;
	struct snr_insn_access *out;
	cs_insn *insn;
	cs_x86 *x;
	uint64_t pc;
	bool vex; /* VEX or EVEX encoded: xmm writes zero the upper bits */
	bool touches_vector;
};

static void map_register(struct x86_plugin *s, unsigned id, const char *name)
{
	s->reg[id] = -1;
	s->kind[id] = K_NONE;
	if (!name)
		return;
	for (int g = 0; g < 16; g++)
		for (int v = 0; v < 5; v++)
			if (x86_gpr_views[g][v] && !strcmp(name, x86_gpr_views[g][v])) {
				s->reg[id] = (int16_t)g;
				s->kind[id] = v == 0 ? K_FULL : v == 1 ? K_GPR32 : K_PART;
				return;
			}
	static const char *const seg[6] = {"cs", "ss", "ds", "es", "fs", "gs"};
	for (int i = 0; i < 6; i++)
		if (!strcmp(name, seg[i])) {
			s->reg[id] = (int16_t)(X_CS + i);
			s->kind[id] = K_FULL;
			return;
		}
	if (!strcmp(name, "rip") || !strcmp(name, "eip") || !strcmp(name, "ip")) {
		s->reg[id] = X_RIP;
		s->kind[id] = K_FULL;
	} else if (!strcmp(name, "rflags") || !strcmp(name, "eflags") || !strcmp(name, "flags")) {
		s->reg[id] = X_EFLAGS;
		s->kind[id] = K_FLAGS;
	} else if ((!strncmp(name, "xmm", 3) || !strncmp(name, "ymm", 3)) && name[3] >= '0' && name[3] <= '9') {
		int n = atoi(name + 3);
		if (n < 16) {
			s->reg[id] = (int16_t)(X_XMM0 + n);
			s->kind[id] = name[0] == 'x' ? K_XMM : K_YMM;
		}
	}
}

static void *x86_create(const char *config_json, char *err, size_t errlen)
{
	(void)config_json;
	struct x86_plugin *s = calloc(1, sizeof *s);
	if (!s) {
		snprintf(err, errlen, "x86-64: out of memory");
		return NULL;
	}
	if (cs_open_detail(CS_ARCH_X86, CS_MODE_64, "x86-64", &s->cs, &s->insn, err, errlen)) {
		free(s);
		return NULL;
	}
	for (unsigned id = 0; id < X86_REG_ENDING; id++)
		map_register(s, id, id ? cs_reg_name(s->cs, id) : NULL);
	return s;
}

static void x86_destroy(void *self)
{
	struct x86_plugin *s = self;
	if (!s)
		return;
	cs_close_detail(&s->cs, s->insn);
	free(s);
}

static const struct snr_isa_reg *x86_registers(void *self, size_t *n)
{
	(void)self;
	*n = X_NREGS;
	return x86_regs;
}

static void qfault(struct x86_query *q, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	cs_fault_v(q->out, q->self->fault, sizeof q->self->fault, fmt, ap);
	va_end(ap);
}

static void not_modelled(struct x86_query *q, const char *what)
{
	qfault(q, "x86-64: %s %s not modelled", q->insn->mnemonic, what);
}

static void reg_read(struct x86_query *q, unsigned id)
{
	if (id >= X86_REG_ENDING || id == X86_REG_INVALID)
		return;
	int r = q->self->reg[id];
	switch ((enum x86_kind)q->self->kind[id]) {
	case K_NONE:
		qfault(q, "x86-64: %s uses register %s, not modelled", q->insn->mnemonic, cs_reg_name(q->self->cs, id));
		break;
	case K_YMM:
		cs_acc_read(q->out, r - X_XMM0 + X_YMM0H);
		q->touches_vector = true;
		/* fall through */
	case K_XMM:
		q->touches_vector = true;
		/* fall through */
	default:
		cs_acc_read(q->out, r);
	}
}

/* Legacy SSE moves that define all 16 bytes of their xmm destination. */
static bool legacy_full_xmm_write(struct x86_query *q)
{
	switch (q->insn->id) {
	case X86_INS_MOVAPS: case X86_INS_MOVAPD: case X86_INS_MOVUPS: case X86_INS_MOVUPD:
	case X86_INS_MOVDQA: case X86_INS_MOVDQU: case X86_INS_LDDQU: case X86_INS_MOVNTDQA:
	case X86_INS_MOVQ: case X86_INS_MOVD:
		return true;
	case X86_INS_MOVSS: case X86_INS_MOVSD: /* from memory they zero the rest */
		for (unsigned i = 0; i < q->x->op_count; i++)
			if (q->x->operands[i].type == X86_OP_MEM)
				return true;
		return false;
	default:
		return false;
	}
}

static void reg_write(struct x86_query *q, unsigned id)
{
	if (id >= X86_REG_ENDING || id == X86_REG_INVALID)
		return;
	int r = q->self->reg[id];
	switch ((enum x86_kind)q->self->kind[id]) {
	case K_NONE:
		qfault(q, "x86-64: %s writes register %s, not modelled", q->insn->mnemonic,
		       cs_reg_name(q->self->cs, id));
		break;
	case K_FULL: case K_GPR32:
		cs_acc_write(q->out, r);
		break;
	case K_PART: case K_FLAGS:
		cs_acc_write_partial(q->out, r);
		break;
	case K_XMM:
		q->touches_vector = true;
		if (q->vex) {
			cs_acc_write(q->out, r);
			cs_acc_write(q->out, r - X_XMM0 + X_YMM0H);
		} else if (legacy_full_xmm_write(q)) {
			cs_acc_write(q->out, r);
		} else {
			cs_acc_write_partial(q->out, r);
		}
		break;
	case K_YMM:
		q->touches_vector = true;
		cs_acc_write(q->out, r);
		cs_acc_write(q->out, r - X_XMM0 + X_YMM0H);
		break;
	}
}

/* The value of a plugin register the address computation needs. */
static bool value_of(struct x86_query *q, int r, uint64_t *v)
{
	cs_acc_read(q->out, r);
	if (cs_reg_value(q->regs, x86_regs, r, v))
		return true;
	qfault(q, "x86-64: %s needs the value of %s, which is unknown", q->insn->mnemonic, x86_regs[r].name);
	return false;
}

static bool capstone_reg_value(struct x86_query *q, unsigned id, uint64_t *v)
{
	*v = 0;
	if (id == X86_REG_INVALID)
		return true;
	if (id == X86_REG_RIP || id == X86_REG_EIP) {
		*v = q->pc + q->insn->size; /* rip-relative: the next instruction */
		return true;
	}
	int r = q->self->reg[id];
	enum x86_kind k = q->self->kind[id];
	if (k != K_FULL && k != K_GPR32) {
		not_modelled(q, "address register");
		return false;
	}
	if (!value_of(q, r, v))
		return false;
	if (k == K_GPR32)
		*v &= 0xffffffffull;
	return true;
}

static bool effective_address(struct x86_query *q, const x86_op_mem *m, uint64_t *ea)
{
	uint64_t base, index;
	if (m->index != X86_REG_INVALID &&
	    (q->self->kind[m->index] == K_XMM || q->self->kind[m->index] == K_YMM || q->self->kind[m->index] == K_NONE)) {
		not_modelled(q, "vector-indexed (gather/scatter) memory effects");
		return false;
	}
	if (!capstone_reg_value(q, m->base, &base) || !capstone_reg_value(q, m->index, &index))
		return false;
	*ea = base + index * (uint64_t)(int64_t)m->scale + (uint64_t)m->disp;
	if (q->x->addr_size == 4)
		*ea &= 0xffffffffull;
	uint64_t seg = 0;
	if (m->segment == X86_REG_FS && !value_of(q, X_FS_BASE, &seg))
		return false;
	if (m->segment == X86_REG_GS && !value_of(q, X_GS_BASE, &seg))
		return false;
	*ea += seg;
	return true;
}

static unsigned stack_operand_size(struct x86_query *q)
{
	return q->x->prefix[2] == X86_PREFIX_OPSIZE ? 2 : 8;
}

static bool rsp_value(struct x86_query *q, uint64_t *v)
{
	return value_of(q, X_RSP, v);
}

static bool is_string_insn(struct x86_query *q)
{
	uint8_t op = q->x->opcode[0];
	return q->x->opcode[1] == 0 && op >= 0xa4 && op <= 0xaf && op != 0xa8 && op != 0xa9;
}

/* rep count and direction for string instructions; false on a fault. */
static bool string_shape(struct x86_query *q, uint64_t *count, bool *down)
{
	uint64_t fl;
	if (!value_of(q, X_EFLAGS, &fl))
		return false;
	*down = (fl >> 10) & 1;
	*count = 1;
	if (q->x->prefix[0] == X86_PREFIX_REP || q->x->prefix[0] == X86_PREFIX_REPNE) {
		if (!value_of(q, X_RCX, count))
			return false;
		if (q->x->addr_size == 4)
			*count &= 0xffffffffull;
		/* repe/repne cmps/scas may stop early: the region is the most
		 * they can touch, a superset of what they read. */
	}
	return true;
}

static bool skip_memory_operand(struct x86_query *q)
{
	const char *mn = q->insn->mnemonic;
	return q->insn->id == X86_INS_LEA || q->insn->id == X86_INS_NOP || !strncmp(mn, "prefetch", 8) ||
	       !strncmp(mn, "clflush", 7) || !strcmp(mn, "clwb") || !strcmp(mn, "cldemote");
}

/* Instructions whose first (Intel destination) operand is only read. */
static bool read_only_destination(struct x86_query *q)
{
	static const char *const prefixes[] = {"cmp", "test", "comis", "ucomis", "vcomis", "vucomis", "ptest",
					       "vptest", "vtestp", "push", "call", "jmp"};
	const char *mn = q->insn->mnemonic;
	if (!strcmp(mn, "bt"))
		return true;
	for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++)
		if (!strncmp(mn, prefixes[i], strlen(prefixes[i])))
			return true;
	return false;
}

static void memory_operands(struct x86_query *q)
{
	struct snr_insn_access *a = q->out;
	unsigned id = q->insn->id;
	if (skip_memory_operand(q))
		return;
	for (unsigned i = 0; i < q->x->op_count; i++) {
		cs_x86_op *op = &q->x->operands[i];
		if (op->type != X86_OP_MEM)
			continue;
		uint64_t ea;
		if (!effective_address(q, &op->mem, &ea))
			continue;
		uint64_t size = op->size;
		bool rd = op->access & CS_AC_READ, wr = op->access & CS_AC_WRITE;
		if (size == 0) {
			not_modelled(q, "memory operand size");
			continue;
		}
		if (i == 0 && q->x->op_count >= 2 && read_only_destination(q)) {
			wr = false; /* capstone 4 marks test [m], imm as written */
		} else if (i == 0 && q->x->op_count >= 2 && op->access == CS_AC_READ) {
			/* Capstone 4 marks some stores (movups/vmovdqu [m], r) as
			 * reads of their destination. A move only writes it; for
			 * anything else read + write is safe either way. */
			rd = !strstr(q->insn->mnemonic, "mov");
			wr = true;
		}
		switch (id) {
		case X86_INS_CMPXCHG: case X86_INS_CMPXCHG8B: case X86_INS_CMPXCHG16B:
			rd = wr = true; /* written only if equal: a read too */
			break;
		case X86_INS_STMXCSR: case X86_INS_VSTMXCSR:
			rd = false, wr = true; /* capstone 4 says read */
			break;
		case X86_INS_POP:
			if (op->mem.base == X86_REG_RSP)
				ea += stack_operand_size(q); /* rsp is incremented first */
			break;
		case X86_INS_BT: case X86_INS_BTS: case X86_INS_BTR: case X86_INS_BTC:
			if (q->x->op_count == 2 && q->x->operands[1].type == X86_OP_REG) {
				uint64_t off;
				if (!capstone_reg_value(q, q->x->operands[1].reg, &off))
					continue;
				unsigned bits = (unsigned)size * 8;
				int64_t soff = bits == 64 ? (int64_t)off
					       : bits == 32 ? (int64_t)(int32_t)off : (int64_t)(int16_t)off;
				/* floor(soff / bits) units of `size` bytes */
				int64_t unit = soff >= 0 ? soff / bits : -((-soff + bits - 1) / bits);
				ea += (uint64_t)(unit * (int64_t)size);
			}
			break;
		default:
			break;
		}
		if (is_string_insn(q)) {
			uint64_t count;
			bool down;
			if (!string_shape(q, &count, &down))
				continue;
			if (count > (1ull << 40) / size) {
				not_modelled(q, "count beyond 2^40 bytes");
				continue;
			}
			uint64_t start = down && count ? ea - (count - 1) * size : ea;
			if (rd)
				cs_acc_region(a, 0, start, count * size);
			if (wr)
				cs_acc_region(a, 1, start, count * size);
			continue;
		}
		if (rd)
			cs_acc_region(a, 0, ea, size);
		if (wr)
			cs_acc_region(a, 1, ea, size);
	}
}

/* Memory and registers that capstone does not list. */
static void implicit_effects(struct x86_query *q)
{
	struct snr_insn_access *a = q->out;
	uint64_t rsp, v;
	unsigned osz = stack_operand_size(q);
	switch (q->insn->id) {
	case X86_INS_PUSH: case X86_INS_PUSHF: case X86_INS_PUSHFD: case X86_INS_PUSHFQ:
		if (rsp_value(q, &rsp))
			cs_acc_region(a, 1, rsp - osz, osz);
		cs_acc_write(a, X_RSP);
		break;
	case X86_INS_POP: case X86_INS_POPF: case X86_INS_POPFD: case X86_INS_POPFQ:
		if (rsp_value(q, &rsp))
			cs_acc_region(a, 0, rsp, osz);
		cs_acc_write(a, X_RSP);
		if (q->insn->id != X86_INS_POP)
			cs_acc_write_partial(a, X_EFLAGS);
		break;
	case X86_INS_CALL:
		if (rsp_value(q, &rsp))
			cs_acc_region(a, 1, rsp - 8, 8);
		cs_acc_write(a, X_RSP);
		break;
	case X86_INS_RET:
		if (rsp_value(q, &rsp))
			cs_acc_region(a, 0, rsp, 8);
		cs_acc_write(a, X_RSP);
		break;
	case X86_INS_LEAVE:
		if (value_of(q, X_RBP, &v))
			cs_acc_region(a, 0, v, osz);
		cs_acc_write(a, X_RSP);
		cs_acc_write(a, X_RBP);
		break;
	case X86_INS_ENTER:
		if (q->x->op_count == 2 && (q->x->operands[1].imm & 31) != 0)
			not_modelled(q, "nesting level above 0");
		if (rsp_value(q, &rsp))
			cs_acc_region(a, 1, rsp - 8, 8);
		cs_acc_read(a, X_RBP);
		cs_acc_write(a, X_RBP);
		cs_acc_write(a, X_RSP);
		break;
	case X86_INS_XLATB: {
		uint64_t rbx, rax;
		if (value_of(q, X_RBX, &rbx) && value_of(q, X_RAX, &rax))
			cs_acc_region(a, 0, rbx + (rax & 0xff), 1);
		cs_acc_write_partial(a, X_RAX);
		break;
	}
	case X86_INS_CMPXCHG:
		cs_acc_write_partial(a, X_RAX);
		if (q->x->operands[0].type == X86_OP_REG)
			cs_acc_write_partial(a, q->self->reg[q->x->operands[0].reg]);
		break;
	case X86_INS_CMPXCHG8B: case X86_INS_CMPXCHG16B:
		cs_acc_write_partial(a, X_RAX);
		cs_acc_write_partial(a, X_RDX);
		break;
	case X86_INS_SYSCALL:
		/* Linux: number in rax, arguments in rdi rsi rdx r10 r8 r9; the
		 * CPU puts rip in rcx and rflags in r11; the result in rax. What
		 * the kernel does to memory is beyond the ISA: class SYSTEM. */
		for (int r = 0; r < 16; r++)
			if (r == X_RAX || r == X_RDI || r == X_RSI || r == X_RDX || r == X_R10 || r == X_R8 || r == X_R9)
				cs_acc_read(a, r);
		cs_acc_write(a, X_RAX);
		cs_acc_write(a, X_RCX);
		cs_acc_write(a, X_R11);
		cs_acc_write_partial(a, X_EFLAGS);
		break;
	case X86_INS_LDMXCSR: case X86_INS_VLDMXCSR:
		cs_acc_write(a, X_MXCSR);
		break;
	case X86_INS_STMXCSR: case X86_INS_VSTMXCSR:
		cs_acc_read(a, X_MXCSR);
		break;
	case X86_INS_RDFSBASE: cs_acc_read(a, X_FS_BASE); break;
	case X86_INS_RDGSBASE: cs_acc_read(a, X_GS_BASE); break;
	case X86_INS_WRFSBASE: cs_acc_write(a, X_FS_BASE); break;
	case X86_INS_WRGSBASE: cs_acc_write(a, X_GS_BASE); break;
	default:
		break;
	}
}

/* Instructions whose effects this plugin does not model. */
static void unmodelled(struct x86_query *q)
{
	const char *mn = q->insn->mnemonic;
	unsigned id = q->insn->id;
	for (unsigned g = 0; g < q->insn->detail->groups_count; g++) {
		uint8_t grp = q->insn->detail->groups[g];
		if (grp == X86_GRP_FPU)
			not_modelled(q, "x87 state");
		else if (grp == X86_GRP_AVX512)
			not_modelled(q, "AVX-512 state");
		else if (grp == X86_GRP_PRIVILEGE && id != X86_INS_RDTSCP)
			not_modelled(q, "(privileged) effects"); /* capstone files rdtscp here; user code runs it */
		else if (grp == X86_GRP_IRET)
			not_modelled(q, "far return");
	}
	if (!strncmp(mn, "fxsave", 6) || !strncmp(mn, "fxrstor", 7) || !strncmp(mn, "xsave", 5) ||
	    !strncmp(mn, "xrstor", 6))
		not_modelled(q, "memory effects (size depends on the enabled state)");
	else if (strstr(mn, "maskmov"))
		not_modelled(q, "masked memory effects");
	else if (!strncmp(mn, "vgather", 7) || !strncmp(mn, "vpgather", 8))
		not_modelled(q, "gather memory effects");
	else if (!strncmp(mn, "ins", 3) && is_string_insn(q))
		not_modelled(q, "port I/O");
	else if (!strncmp(mn, "outs", 4) || !strcmp(mn, "in") || !strcmp(mn, "out"))
		not_modelled(q, "port I/O");
	switch (id) {
	case X86_INS_LCALL: case X86_INS_LJMP: case X86_INS_RETF: case X86_INS_RETFQ:
		not_modelled(q, "far transfer");
		break;
	case X86_INS_INT: case X86_INS_INTO: case X86_INS_SYSENTER:
		not_modelled(q, "memory effects (a system call or interrupt)");
		break;
	case X86_INS_INT3:
		qfault(q, "x86-64: int3 raises a breakpoint trap");
		break;
	case X86_INS_UD2: case X86_INS_UD2B:
		qfault(q, "x86-64: %s raises an invalid-opcode exception", mn);
		break;
	default:
		break;
	}
}

static bool has_group(const cs_insn *in, uint8_t g)
{
	for (unsigned i = 0; i < in->detail->groups_count; i++)
		if (in->detail->groups[i] == g)
			return true;
	return false;
}

static enum snr_insn_class classify(struct x86_query *q)
{
	const cs_insn *in = q->insn;
	switch (in->id) {
	case X86_INS_SYSCALL: case X86_INS_SYSENTER: case X86_INS_INT: case X86_INS_INT3: case X86_INS_INTO:
	case X86_INS_CPUID: case X86_INS_RDTSC: case X86_INS_RDTSCP: case X86_INS_RDRAND: case X86_INS_RDSEED:
	case X86_INS_XGETBV: case X86_INS_HLT: case X86_INS_UD2: case X86_INS_UD2B:
		return SNR_CLASS_SYSTEM;
	default:
		break;
	}
	if (has_group(in, X86_GRP_PRIVILEGE) || has_group(in, X86_GRP_INT))
		return SNR_CLASS_SYSTEM;
	if (has_group(in, X86_GRP_JUMP) || has_group(in, X86_GRP_CALL) || has_group(in, X86_GRP_RET) ||
	    has_group(in, X86_GRP_IRET) || has_group(in, X86_GRP_BRANCH_RELATIVE))
		return SNR_CLASS_BRANCH;
	bool rd = false, wr = false;
	for (unsigned i = 0; i < q->out->nmem; i++)
		if (q->out->mem[i].write)
			wr = true;
		else
			rd = true;
	if (wr)
		return SNR_CLASS_STORE;
	if (rd)
		return SNR_CLASS_LOAD;
	return q->touches_vector ? SNR_CLASS_VECTOR : SNR_CLASS_SCALAR;
}

/* VEX (c4/c5) or EVEX (62) after the legacy prefixes and REX. */
static bool vex_encoded(const uint8_t *code, size_t len)
{
	for (size_t i = 0; i < len; i++) {
		uint8_t b = code[i];
		if (b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 || b == 0x2e || b == 0x36 ||
		    b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65 || (b >= 0x40 && b <= 0x4f))
			continue;
		return b == 0xc4 || b == 0xc5 || b == 0x62;
	}
	return false;
}

#define EFLAGS_TESTS                                                                                     \
	(X86_EFLAGS_TEST_OF | X86_EFLAGS_TEST_SF | X86_EFLAGS_TEST_ZF | X86_EFLAGS_TEST_PF | X86_EFLAGS_TEST_CF | \
	 X86_EFLAGS_TEST_NT | X86_EFLAGS_TEST_DF | X86_EFLAGS_TEST_RF | X86_EFLAGS_TEST_IF | X86_EFLAGS_TEST_TF | \
	 X86_EFLAGS_TEST_AF)

static int x86_access(void *self, const uint8_t *code, size_t avail, uint64_t pc, const struct snr_isa_regs *regs,
		      struct snr_insn_access *out)
{
	struct x86_plugin *s = self;
	memset(out, 0, sizeof *out);
	const uint8_t *p = code;
	size_t n = avail;
	uint64_t addr = pc;
	if (!cs_disasm_iter(s->cs, &p, &n, &addr, s->insn)) {
		out->fault = "x86-64: not a valid instruction (or cut short)";
		out->cls = SNR_CLASS_OTHER;
		return -1;
	}
	struct x86_query q = {s, regs, out, s->insn, &s->insn->detail->x86, pc,
			      vex_encoded(code, s->insn->size), false};
	out->length = s->insn->size;
	cs_acc_read(out, X_RIP);
	cs_acc_write(out, X_RIP);

	unmodelled(&q); /* first: its message is the more telling one */
	cs_regs rd, wr;
	uint8_t nrd = 0, nwr = 0;
	if (cs_regs_access(s->cs, s->insn, rd, &nrd, wr, &nwr) != CS_ERR_OK)
		nrd = nwr = 0;
	for (unsigned i = 0; i < nrd; i++)
		reg_read(&q, rd[i]);
	if (s->insn->id == X86_INS_VZEROUPPER) {
		for (int r = 0; r < 16; r++)
			cs_acc_write(out, X_YMM0H + r);
		q.touches_vector = true;
	} else {
		for (unsigned i = 0; i < nwr; i++)
			reg_write(&q, wr[i]);
	}
	/* Capstone lists rflags for some instructions, the eflags bit set for
	 * others (not for x87, where the field holds the FPU flags). */
	if (!has_group(s->insn, X86_GRP_FPU) && q.x->eflags) {
		cs_acc_read(out, X_EFLAGS);
		if (q.x->eflags & ~(uint64_t)EFLAGS_TESTS)
			cs_acc_write(out, X_EFLAGS);
	}
	memory_operands(&q);
	implicit_effects(&q);
	if (q.touches_vector) {
		/* SSE/AVX arithmetic reads the rounding mode and sets sticky
		 * exception flags; moves do neither, but which is which is not
		 * in capstone's detail: read + write covers both. */
		cs_acc_write_partial(out, X_MXCSR);
	}
	out->cls = classify(&q);
	/* A system call's results, cpuid, rdtsc, rdrand: no simulator can
	 * recompute them, so the recorder saves them after the step. */
	out->record_outputs = out->cls == SNR_CLASS_SYSTEM;
	return 0;
}

static unsigned x86_disasm(void *self, const uint8_t *code, size_t avail, uint64_t pc, char *buf, size_t len)
{
	struct x86_plugin *s = self;
	const uint8_t *p = code;
	size_t n = avail;
	uint64_t addr = pc;
	if (!cs_disasm_iter(s->cs, &p, &n, &addr, s->insn)) {
		if (len)
			snprintf(buf, len, "(bad)");
		return 0;
	}
	if (len)
		snprintf(buf, len, "%s%s%s", s->insn->mnemonic, s->insn->op_str[0] ? " " : "", s->insn->op_str);
	return s->insn->size;
}

/* ---- what system calls write ------------------------------------------- */

/* Linux x86-64 system calls that write memory their arguments locate (rdi
 * rsi rdx r10 r8 r9 are arguments 0-5). Calls that write through pointers
 * held in memory (readv's iovecs, recvmsg) or only on some paths (ioctl) are
 * not listed. */
static const struct cs_syscall_write x86_syscall_table[] = {
	{0, 1, -1, 0},      /* read(fd, buf, count): buf[0, result) */
	{17, 1, -1, 0},     /* pread64 */
	{45, 1, -1, 0},     /* recvfrom(fd, buf, len, ...) */
	{4, 1, 144, 0},     /* stat(path, statbuf) */
	{5, 1, 144, 0},     /* fstat(fd, statbuf) */
	{6, 1, 144, 0},     /* lstat */
	{262, 2, 144, 0},   /* newfstatat(dfd, path, statbuf, flags) */
	{332, 4, 256, 0},   /* statx(dfd, path, flags, mask, statxbuf) */
	{228, 1, 16, 0},    /* clock_gettime(clock, tp) */
	{96, 0, 16, 0},     /* gettimeofday(tv, tz) */
	{96, 1, 8, 0},
	{201, 0, 8, 0},     /* time(tloc) */
	{229, 1, 16, 0},    /* clock_getres(clock, res) */
	{309, 0, 4, 0},     /* getcpu(cpu, node, cache) */
	{309, 1, 4, 0},
	{318, 0, -1, 0},    /* getrandom(buf, len, flags) */
	{22, 0, 8, 0},      /* pipe(fds) */
	{293, 0, 8, 0},     /* pipe2(fds, flags) */
	{63, 0, 390, 0},    /* uname(buf) */
	{79, 0, -1, 0},     /* getcwd(buf, size): the path and its NUL */
	{89, 1, -1, 0},     /* readlink(path, buf, size) */
	{267, 2, -1, 0},    /* readlinkat(dfd, path, buf, size) */
	{217, 1, -1, 0},    /* getdents64(fd, dirp, count) */
	{99, 0, 112, 0},    /* sysinfo(info) */
	{98, 1, 144, 0},    /* getrusage(who, usage) */
	{97, 1, 16, 0},     /* getrlimit(resource, rlim) */
	{302, 3, 16, 0},    /* prlimit64(pid, resource, new, old) */
	{204, 2, -1, 0},    /* sched_getaffinity(pid, len, mask) */
	{14, 2, -2 - 3, 0}, /* rt_sigprocmask(how, set, oldset, sigsetsize) */
	{13, 2, 32, 0},     /* rt_sigaction(sig, act, oldact, 8): the kernel's struct */
	{35, 1, 16, 0},     /* nanosleep(req, rem) */
	{230, 3, 16, 0},    /* clock_nanosleep(clock, flags, req, rem) */
	{7, 0, -2 - 1, 8},  /* poll(fds, nfds, timeout): struct pollfd fds[nfds] */
	{232, 1, -1, 12},   /* epoll_wait(epfd, events, max, timeout): result x packed epoll_event */
};

static unsigned x86_syscall_writes(void *self, const uint8_t *code, size_t avail, uint64_t pc,
				   const struct snr_isa_regs *before, const struct snr_isa_regs *after,
				   struct snr_mem_region *out, unsigned max)
{
	(void)self, (void)pc;
	static const int argr[6] = {X_RDI, X_RSI, X_RDX, X_R10, X_R8, X_R9};
	if (avail < 2 || code[0] != 0x0f || code[1] != 0x05 || !before->val[X_RAX] || !after->val[X_RAX])
		return 0; /* only syscall */
	uint64_t nr, res, args[6] = {0};
	memcpy(&nr, before->val[X_RAX], 8);
	memcpy(&res, after->val[X_RAX], 8);
	for (int i = 0; i < 6; i++)
		if (before->val[argr[i]])
			memcpy(&args[i], before->val[argr[i]], 8);
	return cs_syscall_writes(x86_syscall_table, sizeof(x86_syscall_table) / sizeof(x86_syscall_table[0]), nr, res,
				 args, out, max);
}

const struct snr_isa_ops snr_isa_x86_64 = {
	.abi_version = SNR_ISA_ABI_VERSION,
	.name = "x86-64",
	.gdb_arch = "i386:x86-64",
	.max_insn_bytes = 15,
	.create = x86_create,
	.destroy = x86_destroy,
	.registers = x86_registers,
	.access = x86_access,
	.disasm = x86_disasm,
	.syscall_writes = x86_syscall_writes,
};
