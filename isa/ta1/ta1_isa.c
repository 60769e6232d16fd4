/*
 * ta1_isa.c: decoding, disassembly and the operand-access query for TA1,
 * all driven by ta1_insns.def.
 *
 * Decoding walks a per-major-opcode list of table rows (built once), so a
 * decode costs a handful of mask compares; the interpreter decodes each code
 * word once and caches the result, so this is not on its hot path.
 */
#include "ta1_isa.h"

#include <stdio.h>
#include <string.h>

const struct ta1_insn_info ta1_insn_table[TA1_OP_COUNT] = {
#define TA1_INSN(id, mn, mt, mk, fmt, cls, tim, msz) \
	[TA1_OP_##id] = {mn, mt, mk, fmt, cls, tim, msz},
#include "ta1_insns.def"
#undef TA1_INSN
};

static const char *const reg_names[32] = {
	"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0",
	"a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
	"s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

const char *ta1_reg_name(unsigned r)
{
	return r < 32 ? reg_names[r] : "?";
}

const char *ta1_class_name(enum ta1_class cls)
{
	static const char *const names[TA1_CLASS_COUNT] = {
		"alu", "mul", "div", "load", "store", "branch", "jump", "csr", "system",
		"dma-issue", "dma-wait", "vector", "matrix", "control",
	};
	return (unsigned)cls < TA1_CLASS_COUNT ? names[cls] : "?";
}

const char *ta1_timing_name(enum ta1_timing t)
{
	static const char *const names[TA1_TIME_COUNT] = {
		"alu", "mul", "div", "load", "store", "branch", "system",
		"dma-issue", "dma-wait", "vector", "mxu-load", "mxu-matmul",
	};
	return (unsigned)t < TA1_TIME_COUNT ? names[t] : "?";
}

/* Rows grouped by major opcode (bits 6:2), in table order. */
static uint16_t by_major[32][TA1_OP_COUNT];
static uint8_t by_major_n[32];
static int by_major_ready;

static void build_index(void)
{
	for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
		unsigned major = (ta1_insn_table[op].match >> 2) & 31;
		by_major[major][by_major_n[major]++] = (uint16_t)op;
	}
	by_major_ready = 1;
}

static int64_t sext(uint64_t v, unsigned bits)
{
	uint64_t m = 1ull << (bits - 1);
	v &= (bits == 64) ? ~0ull : ((1ull << bits) - 1);
	return (int64_t)((v ^ m) - m);
}

static int64_t imm_of(enum ta1_format fmt, uint32_t w)
{
	switch (fmt) {
	case TA1_FMT_I:
		return sext(w >> 20, 12);
	case TA1_FMT_SH6:
		return (w >> 20) & 63;
	case TA1_FMT_SH5:
		return (w >> 20) & 31;
	case TA1_FMT_S:
		return sext(((w >> 25) << 5) | ((w >> 7) & 31), 12);
	case TA1_FMT_B:
		return sext(((uint64_t)((w >> 31) & 1) << 12) | (((w >> 7) & 1) << 11) |
				    (((w >> 25) & 63) << 5) | (((w >> 8) & 15) << 1),
			    13);
	case TA1_FMT_U:
		return sext(w & 0xfffff000u, 32);
	case TA1_FMT_J:
		return sext(((uint64_t)((w >> 31) & 1) << 20) | (((w >> 12) & 255) << 12) |
				    (((w >> 20) & 1) << 11) | (((w >> 21) & 1023) << 1),
			    21);
	case TA1_FMT_CSR:
	case TA1_FMT_CSRI:
		return (w >> 20) & 0xfff;
	case TA1_FMT_R:
	case TA1_FMT_FENCE:
	case TA1_FMT_NONE:
	case TA1_FMT_XR4:
	case TA1_FMT_XR3:
	case TA1_FMT_XR2:
	case TA1_FMT_XR1:
	case TA1_FMT_XRD:
		return 0;
	}
	return 0;
}

bool ta1_decode(uint32_t w, struct ta1_insn *out)
{
	if (!by_major_ready)
		build_index();
	memset(out, 0, sizeof(*out));
	out->raw = w;
	out->op = TA1_OP_ILLEGAL;
	if ((w & 3) != 3)
		return false;
	unsigned major = (w >> 2) & 31;
	for (unsigned i = 0; i < by_major_n[major]; i++) {
		unsigned op = by_major[major][i];
		const struct ta1_insn_info *ii = &ta1_insn_table[op];
		if ((w & ii->mask) != ii->match)
			continue;
		out->op = (uint16_t)op;
		out->rd = (w >> 7) & 31;
		out->rs1 = (w >> 15) & 31;
		out->rs2 = (w >> 20) & 31;
		out->rs3 = (w >> 27) & 31;
		out->imm = imm_of(ii->format, w);
		switch (ii->format) {
		case TA1_FMT_I:
		case TA1_FMT_SH6:
		case TA1_FMT_SH5:
		case TA1_FMT_U:
		case TA1_FMT_J:
		case TA1_FMT_CSR:
		case TA1_FMT_CSRI:
			out->rs2 = out->rs3 = 0;
			if (ii->format == TA1_FMT_U || ii->format == TA1_FMT_J)
				out->rs1 = 0;
			break;
		case TA1_FMT_S:
		case TA1_FMT_B:
			out->rd = out->rs3 = 0;
			break;
		case TA1_FMT_R:
		case TA1_FMT_XR3:
		case TA1_FMT_XR2:
			out->rs3 = 0;
			break;
		case TA1_FMT_FENCE:
		case TA1_FMT_NONE:
			out->rd = out->rs1 = out->rs2 = out->rs3 = 0;
			break;
		case TA1_FMT_XR1:
			out->rd = out->rs2 = out->rs3 = 0;
			break;
		case TA1_FMT_XRD:
			out->rs1 = out->rs2 = out->rs3 = 0;
			break;
		case TA1_FMT_XR4:
			break;
		}
		if (ii->format == TA1_FMT_XR2)
			out->rd = 0;
		return true;
	}
	return false;
}

uint32_t ta1_encode(const struct ta1_insn *in)
{
	const struct ta1_insn_info *ii = &ta1_insn_table[in->op];
	uint32_t w = ii->match;
	uint32_t rd = (uint32_t)(in->rd & 31) << 7, rs1 = (uint32_t)(in->rs1 & 31) << 15,
		 rs2 = (uint32_t)(in->rs2 & 31) << 20, rs3 = (uint32_t)(in->rs3 & 31) << 27;
	uint32_t imm = (uint32_t)in->imm;
	switch (ii->format) {
	case TA1_FMT_R: w |= rd | rs1 | rs2; break;
	case TA1_FMT_I: w |= rd | rs1 | (imm & 0xfff) << 20; break;
	case TA1_FMT_SH6: w |= rd | rs1 | (imm & 63) << 20; break;
	case TA1_FMT_SH5: w |= rd | rs1 | (imm & 31) << 20; break;
	case TA1_FMT_S: w |= rs1 | rs2 | (imm & 0x1f) << 7 | ((imm >> 5) & 0x7f) << 25; break;
	case TA1_FMT_B:
		w |= rs1 | rs2 | ((imm >> 11) & 1) << 7 | ((imm >> 1) & 15) << 8 | ((imm >> 5) & 63) << 25 |
		     ((imm >> 12) & 1) << 31;
		break;
	case TA1_FMT_U: w |= rd | (imm & 0xfffff000u); break;
	case TA1_FMT_J:
		w |= rd | ((imm >> 12) & 255) << 12 | ((imm >> 11) & 1) << 20 | ((imm >> 1) & 1023) << 21 |
		     ((imm >> 20) & 1) << 31;
		break;
	case TA1_FMT_CSR:
	case TA1_FMT_CSRI: w |= rd | rs1 | (imm & 0xfff) << 20; break;
	case TA1_FMT_FENCE:
	case TA1_FMT_NONE: break;
	case TA1_FMT_XR4: w |= rd | rs1 | rs2 | rs3; break;
	case TA1_FMT_XR3: w |= rd | rs1 | rs2; break;
	case TA1_FMT_XR2: w |= rs1 | rs2; break;
	case TA1_FMT_XR1: w |= rs1; break;
	case TA1_FMT_XRD: w |= rd; break;
	}
	return w;
}

static const char *csr_name(unsigned csr, char *tmp, size_t len)
{
	switch (csr) {
	case TA1_CSR_CYCLE:
		return "cycle";
	case TA1_CSR_TIME:
		return "time";
	case TA1_CSR_INSTRET:
		return "instret";
	default:
		snprintf(tmp, len, "0x%x", csr);
		return tmp;
	}
}

int ta1_disasm(const struct ta1_insn *in, uint64_t pc, char *buf, size_t len)
{
	if (in->op >= TA1_OP_COUNT)
		return snprintf(buf, len, ".word 0x%08x", in->raw);
	const struct ta1_insn_info *ii = &ta1_insn_table[in->op];
	const char *mn = ii->mnemonic;
	const char *rd = reg_names[in->rd], *r1 = reg_names[in->rs1], *r2 = reg_names[in->rs2],
		   *r3 = reg_names[in->rs3];
	char tmp[16];
	switch (ii->format) {
	case TA1_FMT_R:
		return snprintf(buf, len, "%s %s, %s, %s", mn, rd, r1, r2);
	case TA1_FMT_I:
		if (ii->cls == TA1_CLASS_LOAD || in->op == TA1_OP_JALR)
			return snprintf(buf, len, "%s %s, %lld(%s)", mn, rd, (long long)in->imm, r1);
		return snprintf(buf, len, "%s %s, %s, %lld", mn, rd, r1, (long long)in->imm);
	case TA1_FMT_SH6:
	case TA1_FMT_SH5:
		return snprintf(buf, len, "%s %s, %s, 0x%llx", mn, rd, r1, (unsigned long long)in->imm);
	case TA1_FMT_S:
		return snprintf(buf, len, "%s %s, %lld(%s)", mn, r2, (long long)in->imm, r1);
	case TA1_FMT_B:
		return snprintf(buf, len, "%s %s, %s, 0x%llx", mn, r1, r2,
				(unsigned long long)(pc + (uint64_t)in->imm));
	case TA1_FMT_U:
		return snprintf(buf, len, "%s %s, 0x%llx", mn, rd,
				(unsigned long long)(((uint64_t)in->imm >> 12) & 0xfffff));
	case TA1_FMT_J:
		return snprintf(buf, len, "%s %s, 0x%llx", mn, rd,
				(unsigned long long)(pc + (uint64_t)in->imm));
	case TA1_FMT_CSR:
		return snprintf(buf, len, "%s %s, %s, %s", mn, rd,
				csr_name((unsigned)in->imm, tmp, sizeof(tmp)), r1);
	case TA1_FMT_CSRI:
		return snprintf(buf, len, "%s %s, %s, %u", mn, rd,
				csr_name((unsigned)in->imm, tmp, sizeof(tmp)), in->rs1);
	case TA1_FMT_FENCE:
	case TA1_FMT_NONE:
		return snprintf(buf, len, "%s", mn);
	case TA1_FMT_XR4:
		return snprintf(buf, len, "%s %s, %s, %s, %s", mn, r1, r2, r3, rd);
	case TA1_FMT_XR3:
		return snprintf(buf, len, "%s %s, %s, %s", mn, r1, r2, rd);
	case TA1_FMT_XR2:
		return snprintf(buf, len, "%s %s, %s", mn, r1, r2);
	case TA1_FMT_XR1:
		return snprintf(buf, len, "%s %s", mn, r1);
	case TA1_FMT_XRD:
		return snprintf(buf, len, "%s %s", mn, rd);
	}
	return snprintf(buf, len, "?");
}

enum ta1_space ta1_classify(const struct ta1_query_ctx *ctx, uint64_t addr, uint64_t len,
			    unsigned *owner, uint64_t *offset)
{
	uint64_t end = addr + len;
	*owner = ctx->chip;
	if (end < addr)
		return TA1_SPACE_NONE;
	if (addr >= TA1_CORE_BASE && end <= TA1_CORE_BASE + ctx->core_size) {
		*offset = addr - TA1_CORE_BASE;
		return TA1_SPACE_CORE;
	}
	if (addr >= TA1_VMEM_BASE && end <= TA1_VMEM_BASE + ctx->vmem_size) {
		*offset = addr - TA1_VMEM_BASE;
		return TA1_SPACE_VMEM;
	}
	if (addr >= TA1_MXUW_BASE && end <= TA1_MXUW_BASE + TA1_MXUW_SIZE) {
		*offset = addr - TA1_MXUW_BASE;
		return TA1_SPACE_MXUW;
	}
	if (addr >= TA1_HBM_BASE && end <= TA1_HBM_BASE + ctx->hbm_size) {
		*offset = addr - TA1_HBM_BASE;
		return TA1_SPACE_HBM;
	}
	if (addr >= TA1_HBM_GLOBAL_BASE) {
		uint64_t rel = addr - TA1_HBM_GLOBAL_BASE;
		uint64_t chip = rel >> TA1_HBM_GLOBAL_SHIFT;
		uint64_t off = rel & ((1ull << TA1_HBM_GLOBAL_SHIFT) - 1);
		if (chip < ctx->nchips && off + len <= ctx->hbm_size && off + len >= off) {
			*owner = (unsigned)chip;
			*offset = off;
			return TA1_SPACE_HBM;
		}
	}
	return TA1_SPACE_NONE;
}

static void add_region(const struct ta1_query_ctx *ctx, struct ta1_access *a, int write,
		       uint64_t addr, uint64_t row_bytes, uint64_t rows, int64_t stride,
		       unsigned allowed_spaces)
{
	struct ta1_region *r = &a->region[a->nregions++];
	unsigned owner = ctx->chip;
	uint64_t off;
	r->write = (uint8_t)write;
	r->addr = addr;
	r->row_bytes = row_bytes;
	r->rows = rows;
	r->stride = stride;
	r->chip = (uint16_t)ctx->chip;
	if (rows == 0 || row_bytes == 0) {
		r->space = TA1_SPACE_NONE;
		r->rows = 0;
		r->row_bytes = 0;
		return;
	}
	/* The whole strided extent must sit in one memory. */
	uint64_t lo = addr, hi;
	int64_t span = (int64_t)(rows - 1) * stride;
	if (span < 0)
		lo = addr + (uint64_t)span;
	hi = (span < 0 ? addr : addr + (uint64_t)span) + row_bytes;
	enum ta1_space sp = ta1_classify(ctx, lo, hi - lo, &owner, &off);
	if (hi < lo)
		sp = TA1_SPACE_NONE;
	r->space = (uint8_t)sp;
	r->chip = (uint16_t)owner;
	if (sp == TA1_SPACE_NONE || !(allowed_spaces & (1u << sp))) {
		if (!a->fault) {
			a->fault = sp == TA1_SPACE_NONE ? "address outside every memory"
						      : "operand in a memory this instruction cannot reach";
			a->fault_region = a->nregions;
		}
	}
}

#define SP(x) (1u << TA1_SPACE_##x)
#define REG(r) (1ull << (r))

void ta1_access_query(const struct ta1_insn *in, const struct ta1_query_ctx *ctx,
		      struct ta1_access *a)
{
	memset(a, 0, sizeof(*a));
	if (in->op >= TA1_OP_COUNT) {
		a->fault = "illegal instruction";
		return;
	}
	const struct ta1_insn_info *ii = &ta1_insn_table[in->op];
	const uint64_t *x = ctx->x;
	uint64_t rd = REG(in->rd), r1 = REG(in->rs1), r2 = REG(in->rs2), r3 = REG(in->rs3);

	a->regs_read = REG(TA1_REG_PC);
	a->regs_written = REG(TA1_REG_PC);
	switch (ii->format) {
	case TA1_FMT_R:
		a->regs_read |= r1 | r2;
		a->regs_written |= rd;
		break;
	case TA1_FMT_I:
	case TA1_FMT_SH6:
	case TA1_FMT_SH5:
		a->regs_read |= r1;
		a->regs_written |= rd;
		break;
	case TA1_FMT_S:
	case TA1_FMT_B:
		a->regs_read |= r1 | r2;
		break;
	case TA1_FMT_U:
	case TA1_FMT_J:
		a->regs_written |= rd;
		break;
	case TA1_FMT_CSR:
	case TA1_FMT_CSRI:
		if (ii->format == TA1_FMT_CSR)
			a->regs_read |= r1;
		a->regs_written |= rd;
		switch (in->imm) {
		case TA1_CSR_CYCLE:
		case TA1_CSR_TIME:
			a->regs_read |= REG(TA1_REG_CYCLE);
			break;
		case TA1_CSR_INSTRET:
			a->regs_read |= REG(TA1_REG_INSTRET);
			break;
		default:
			a->fault = "unimplemented CSR";
		}
		/* Writes to the read-only counters fault (csrrs/csrrc with x0 only read). */
		if (in->op == TA1_OP_CSRRW || in->op == TA1_OP_CSRRWI ||
		    ((in->op == TA1_OP_CSRRS || in->op == TA1_OP_CSRRC || in->op == TA1_OP_CSRRSI ||
		      in->op == TA1_OP_CSRRCI) &&
		     in->rs1 != 0))
			a->fault = "write to a read-only CSR";
		break;
	case TA1_FMT_FENCE:
		break;
	case TA1_FMT_NONE:
		if (in->op == TA1_OP_ECALL) {
			/* a7 selects: 93 exit(a0), 64 write(a0, a1, a2) -> a0 */
			a->regs_read |= REG(17) | REG(10);
			if (x[17] == 64) {
				a->regs_read |= REG(11) | REG(12);
				a->regs_written |= REG(10);
				if (x[12] > 0)
					add_region(ctx, a, 0, x[11], x[12], 1, 0, SP(CORE));
			} else if (x[17] != 93) {
				a->regs_written |= REG(10); /* -ENOSYS */
			}
		}
		break;
	case TA1_FMT_XR4:
		a->regs_read |= r1 | r2 | r3 | rd;
		break;
	case TA1_FMT_XR3:
		a->regs_read |= r1 | r2 | rd;
		break;
	case TA1_FMT_XR2:
		a->regs_read |= r1 | r2;
		break;
	case TA1_FMT_XR1:
		a->regs_read |= r1;
		break;
	case TA1_FMT_XRD:
		a->regs_written |= rd;
		break;
	}

	const unsigned anymem = SP(CORE) | SP(VMEM) | SP(HBM);
	switch ((enum ta1_op)in->op) {
	case TA1_OP_LB: case TA1_OP_LH: case TA1_OP_LW: case TA1_OP_LD:
	case TA1_OP_LBU: case TA1_OP_LHU: case TA1_OP_LWU:
		add_region(ctx, a, 0, x[in->rs1] + (uint64_t)in->imm, ii->mem_size, 1, 0, SP(CORE));
		break;
	case TA1_OP_SB: case TA1_OP_SH: case TA1_OP_SW: case TA1_OP_SD:
		add_region(ctx, a, 1, x[in->rs1] + (uint64_t)in->imm, ii->mem_size, 1, 0, SP(CORE));
		break;
	case TA1_OP_TA_DMA: {
		uint64_t flag = x[in->rd];
		if (x[in->rs3] > TA1_MAX_DMA_BYTES) {
			a->fault = "DMA size too large";
		} else if (x[in->rs3] > 0) {
			add_region(ctx, a, 0, x[in->rs2], x[in->rs3], 1, 0, anymem);
			add_region(ctx, a, 1, x[in->rs1], x[in->rs3], 1, 0, anymem);
		}
		if (flag >= TA1_NUM_FLAGS) {
			a->fault = "DMA sync flag out of range";
			a->fault_region = 0;
		} else {
			a->regs_read |= REG(TA1_REG_FLAG0 + flag);
			a->regs_written |= REG(TA1_REG_FLAG0 + flag);
		}
		break;
	}
	case TA1_OP_TA_DMA_NOTIFY: {
		uint64_t flag = x[in->rd] & 0xffffffffu, peer = x[in->rd] >> 32;
		if (x[in->rs3] > TA1_MAX_DMA_BYTES) {
			a->fault = "DMA size too large";
		} else if (x[in->rs3] > 0) {
			add_region(ctx, a, 0, x[in->rs2], x[in->rs3], 1, 0, anymem);
			add_region(ctx, a, 1, x[in->rs1], x[in->rs3], 1, 0, anymem);
		}
		if (flag >= TA1_NUM_FLAGS || peer >= TA1_NUM_FLAGS) {
			a->fault = "DMA sync flag out of range";
			a->fault_region = 0;
		} else {
			a->regs_read |= REG(TA1_REG_FLAG0 + flag);
			a->regs_written |= REG(TA1_REG_FLAG0 + flag);
			/* A destination on this chip (and a DMA of no bytes) signals this
			 * chip's peer flag; another chip's flag is not this chip's state. */
			if (x[in->rs3] == 0 || (a->nregions == 2 && a->region[1].chip == ctx->chip)) {
				a->regs_read |= REG(TA1_REG_FLAG0 + peer);
				a->regs_written |= REG(TA1_REG_FLAG0 + peer);
			}
		}
		break;
	}
	case TA1_OP_TA_DMA2D: {
		uint64_t shape = x[in->rs3], strides = x[in->rd];
		uint64_t row_bytes = shape & 0xffffffffu, rows = (shape >> 32) & 0xffff;
		uint64_t flag = shape >> 48;
		int64_t src_stride = (int32_t)(uint32_t)strides;
		int64_t dst_stride = (int32_t)(uint32_t)(strides >> 32);
		if (row_bytes > 0 && rows > 0) {
			add_region(ctx, a, 0, x[in->rs2], row_bytes, rows, src_stride, anymem);
			add_region(ctx, a, 1, x[in->rs1], row_bytes, rows, dst_stride, anymem);
		}
		if (flag >= TA1_NUM_FLAGS) {
			a->fault = "DMA sync flag out of range";
			a->fault_region = 0;
		} else {
			a->regs_read |= REG(TA1_REG_FLAG0 + flag);
			a->regs_written |= REG(TA1_REG_FLAG0 + flag);
		}
		break;
	}
	case TA1_OP_TA_WAIT:
		if (x[in->rs1] >= TA1_NUM_FLAGS) {
			a->fault = "DMA sync flag out of range";
			a->fault_region = 0;
		} else {
			a->regs_read |= REG(TA1_REG_FLAG0 + x[in->rs1]);
			a->regs_written |= REG(TA1_REG_FLAG0 + x[in->rs1]);
		}
		break;
	case TA1_OP_TA_CHIPID:
		a->regs_read |= REG(TA1_REG_CHIPID);
		break;
	case TA1_OP_TA_NCHIPS:
		a->regs_read |= REG(TA1_REG_NCHIPS);
		break;
	case TA1_OP_TA_VADD: case TA1_OP_TA_VMUL: case TA1_OP_TA_VMAX: {
		uint64_t n = x[in->rd];
		if (n > TA1_MAX_ELEMS) {
			a->fault = "element count too large";
		} else if (n > 0) {
			add_region(ctx, a, 0, x[in->rs2], n * 4, 1, 0, SP(VMEM));
			add_region(ctx, a, 0, x[in->rs3], n * 4, 1, 0, SP(VMEM));
			add_region(ctx, a, 1, x[in->rs1], n * 4, 1, 0, SP(VMEM));
		}
		break;
	}
	case TA1_OP_TA_VSCALE: case TA1_OP_TA_VEXP: {
		uint64_t n = x[in->rd];
		if (n > TA1_MAX_ELEMS) {
			a->fault = "element count too large";
		} else if (n > 0) {
			add_region(ctx, a, 0, x[in->rs2], n * 4, 1, 0, SP(VMEM));
			add_region(ctx, a, 1, x[in->rs1], n * 4, 1, 0, SP(VMEM));
		}
		break;
	}
	case TA1_OP_TA_VSUMROWS: {
		uint64_t rows = x[in->rs3], cols = x[in->rd];
		if (rows > TA1_MAX_ELEMS || cols > TA1_MAX_ELEMS || (cols && rows > TA1_MAX_ELEMS / cols)) {
			a->fault = "element count too large";
			break;
		}
		if (rows > 0 && cols > 0)
			add_region(ctx, a, 0, x[in->rs2], rows * cols * 4, 1, 0, SP(VMEM));
		if (rows > 0)
			add_region(ctx, a, 1, x[in->rs1], rows * 4, 1, 0, SP(VMEM));
		break;
	}
	case TA1_OP_TA_MXU_LOAD:
		add_region(ctx, a, 0, x[in->rs1], TA1_MXUW_SIZE, 1, 0, SP(VMEM));
		add_region(ctx, a, 1, TA1_MXUW_BASE, TA1_MXUW_SIZE, 1, 0, SP(MXUW));
		break;
	case TA1_OP_TA_MXU_MM: case TA1_OP_TA_MXU_MMA: {
		uint64_t rows = x[in->rd], bytes = rows * TA1_MXU_DIM * 4;
		if (rows > TA1_MAX_ELEMS) {
			a->fault = "row count too large";
		} else if (rows > 0) {
			add_region(ctx, a, 0, x[in->rs2], bytes, 1, 0, SP(VMEM));
			add_region(ctx, a, 0, TA1_MXUW_BASE, TA1_MXUW_SIZE, 1, 0, SP(MXUW));
			if (in->op == TA1_OP_TA_MXU_MMA)
				add_region(ctx, a, 0, x[in->rs1], bytes, 1, 0, SP(VMEM));
			add_region(ctx, a, 1, x[in->rs1], bytes, 1, 0, SP(VMEM));
		}
		break;
	}
	default:
		break;
	}
	if (!a->fault && (ii->cls == TA1_CLASS_VECTOR || ii->cls == TA1_CLASS_MATRIX))
		for (unsigned i = 0; i < a->nregions; i++)
			if (!a->fault && (a->region[i].addr & 3)) {
				a->fault = "vector or matrix operand not 4-byte aligned";
				a->fault_region = i + 1;
			}
	/* x0 is hard-wired: never an input worth recording, never an output. */
	a->regs_read &= ~1ull;
	a->regs_written &= ~1ull;
}

uint64_t ta1_region_canonical(const struct ta1_query_ctx *ctx, const struct ta1_region *r)
{
	unsigned owner;
	uint64_t off;
	if (r->space == TA1_SPACE_HBM && ta1_classify(ctx, r->addr, 1, &owner, &off) == TA1_SPACE_HBM)
		return TA1_HBM_GLOBAL_BASE + ((uint64_t)owner << TA1_HBM_GLOBAL_SHIFT) + off;
	return r->addr;
}
