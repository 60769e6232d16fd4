/*
 * ta1_isa.h: the TA1 instruction set as data.
 *
 * TA1's scalar core is RV64IM with Zicsr's user counters; Xta adds DMA, vector
 * and matrix instructions in the custom opcode space. Everything here is
 * generated from ta1_insns.def: the op enum, the decoder, the disassembler and
 * the operand-access query, which answers, for one instruction and the current
 * register values, exactly which registers and which memory regions it reads
 * and writes. The recorder (Algorithm 1) and the dependency analysis rest on
 * that answer, so it is tested against the semantics in tests/.
 *
 * The memory map (docs/ta1-isa.md has the full table):
 *
 *   0x0000_0000_0001_0000  core memory (code, stack, scalar data), 16 MiB default
 *   0x0000_0000_2000_0000  VMEM, on-chip vector memory, 32 MiB default
 *   0x0000_0000_3000_0000  MXU weight buffer, 64 KiB (read and written only by
 *                          ta.mxu.load / ta.mxu.mm*, visible to debuggers)
 *   0x0000_0000_4000_0000  this chip's HBM, 4 GiB default, sparse
 *   0x0001_0000_0000_0000  global HBM window: chip c's HBM at + (c << 40)
 *
 * Scalar loads and stores reach core memory only; anything else faults.
 */
#ifndef SNR_TA1_ISA_H
#define SNR_TA1_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define TA1_CORE_BASE 0x10000ull
#define TA1_VMEM_BASE 0x20000000ull
#define TA1_MXUW_BASE 0x30000000ull
#define TA1_MXUW_SIZE (128ull * 128ull * 4ull)
#define TA1_HBM_BASE 0x40000000ull
#define TA1_HBM_GLOBAL_BASE 0x0001000000000000ull
#define TA1_HBM_GLOBAL_SHIFT 40
#define TA1_MAX_CHIPS 256
#define TA1_NUM_FLAGS 16
#define TA1_MXU_DIM 128
/* Upper bounds that keep every size computation free of overflow. */
#define TA1_MAX_ELEMS (1ull << 36)
#define TA1_MAX_DMA_BYTES (1ull << 40)

enum ta1_op {
#define TA1_INSN(id, mn, match, mask, fmt, cls, tim, msz) TA1_OP_##id,
#include "ta1_insns.def"
#undef TA1_INSN
	TA1_OP_COUNT,
	TA1_OP_ILLEGAL = TA1_OP_COUNT,
};

enum ta1_format {
	TA1_FMT_R,     /* rd, rs1, rs2 */
	TA1_FMT_I,     /* rd, rs1, imm12 (loads and jalr too) */
	TA1_FMT_SH6,   /* rd, rs1, shamt[5:0] */
	TA1_FMT_SH5,   /* rd, rs1, shamt[4:0] (word shifts) */
	TA1_FMT_S,     /* rs2 -> imm(rs1) */
	TA1_FMT_B,     /* rs1, rs2, pc-relative target */
	TA1_FMT_U,     /* rd, imm20 << 12 */
	TA1_FMT_J,     /* rd, pc-relative target */
	TA1_FMT_CSR,   /* rd, csr, rs1 */
	TA1_FMT_CSRI,  /* rd, csr, uimm5 (in the rs1 field) */
	TA1_FMT_FENCE, /* no operands that matter to TA1 */
	TA1_FMT_NONE,  /* ecall, ebreak */
	TA1_FMT_XR4,   /* Xta: rs1, rs2, rs3, rs4 (rd field), all sources */
	TA1_FMT_XR3,   /* Xta: rs1, rs2, rs4 (rd field), all sources */
	TA1_FMT_XR2,   /* Xta: rs1, rs2 */
	TA1_FMT_XR1,   /* Xta: rs1 */
	TA1_FMT_XRD,   /* Xta: rd only (written) */
};

enum ta1_class {
	TA1_CLASS_ALU,
	TA1_CLASS_MUL,
	TA1_CLASS_DIV,
	TA1_CLASS_LOAD,
	TA1_CLASS_STORE,
	TA1_CLASS_BRANCH,
	TA1_CLASS_JUMP,
	TA1_CLASS_CSR,
	TA1_CLASS_SYSTEM,
	TA1_CLASS_DMA_ISSUE,
	TA1_CLASS_DMA_WAIT,
	TA1_CLASS_VECTOR,
	TA1_CLASS_MATRIX,
	TA1_CLASS_CONTROL,
	TA1_CLASS_COUNT,
};

/* The Xta classes: work the scalar pipeline hands off (DMA, vector, MXU) or
 * waits for; everything else is a plain scalar instruction to the GRM and
 * the timing model. */
static inline bool ta1_class_is_xta(enum ta1_class c)
{
	return c == TA1_CLASS_DMA_ISSUE || c == TA1_CLASS_DMA_WAIT || c == TA1_CLASS_VECTOR || c == TA1_CLASS_MATRIX;
}

enum ta1_timing {
	TA1_TIME_ALU,
	TA1_TIME_MUL,
	TA1_TIME_DIV,
	TA1_TIME_LOAD,
	TA1_TIME_STORE,
	TA1_TIME_BRANCH,
	TA1_TIME_SYSTEM,
	TA1_TIME_DMA_ISSUE,
	TA1_TIME_DMA_WAIT,
	TA1_TIME_VECTOR,
	TA1_TIME_MXU_LOAD,
	TA1_TIME_MXU_MATMUL,
	TA1_TIME_COUNT,
};

/* User counter CSRs that TA1 implements (read-only). */
#define TA1_CSR_CYCLE 0xc00
#define TA1_CSR_TIME 0xc01
#define TA1_CSR_INSTRET 0xc02

struct ta1_insn_info {
	const char *mnemonic;
	uint32_t match, mask;
	enum ta1_format format;
	enum ta1_class cls;
	enum ta1_timing timing;
	uint8_t mem_size;
};

extern const struct ta1_insn_info ta1_insn_table[TA1_OP_COUNT];

/* One decoded instruction. Register fields are 0 where the format has none. */
struct ta1_insn {
	uint16_t op;  /* enum ta1_op, TA1_OP_ILLEGAL if no row matches */
	uint8_t rd;   /* for XR4/XR3 this is rs4, a source */
	uint8_t rs1, rs2, rs3;
	int64_t imm;  /* sign-extended immediate, shift amount, or CSR number (FMT_CSR*) */
	uint32_t raw;
};

/* Decodes one 32-bit word. Compressed (16-bit) encodings are not part of TA1
 * and decode as illegal. Returns false for an illegal word (op = ILLEGAL). */
bool ta1_decode(uint32_t word, struct ta1_insn *out);

/* Encodes the fields of `insn` (op, rd, rs1, rs2, rs3, imm) into a word.
 * Fields the format does not have are ignored; the immediate is truncated to
 * its field (branch and jump offsets must be even). */
uint32_t ta1_encode(const struct ta1_insn *insn);

/* Writes objdump-style assembly ("add a0, a1, a2", "beq a0, zero, 0x10074")
 * for the instruction at pc. Returns the length snprintf would return. */
int ta1_disasm(const struct ta1_insn *insn, uint64_t pc, char *buf, size_t len);

/* ABI name of x register r ("zero", "ra", "sp", ... "t6"). */
const char *ta1_reg_name(unsigned r);

const char *ta1_class_name(enum ta1_class cls);
const char *ta1_timing_name(enum ta1_timing t);

/* ---- Xta operand packing (shared with isa/ta1/ta1.h) ---------------------- */

/* ta.dma2d shape register: row_bytes[31:0], rows[47:32], flag[63:48]. */
static inline uint64_t ta1_dma2d_shape(uint64_t row_bytes, uint64_t rows, uint64_t flag)
{
	return (row_bytes & 0xffffffffull) | ((rows & 0xffffull) << 32) | ((flag & 0xffffull) << 48);
}
/* ta.dma2d strides register: src_stride[31:0], dst_stride[63:32], both signed. */
static inline uint64_t ta1_dma2d_strides(int64_t dst_stride, int64_t src_stride)
{
	return ((uint64_t)(uint32_t)(int32_t)src_stride) | ((uint64_t)(uint32_t)(int32_t)dst_stride << 32);
}

/* ---- The operand-access query -------------------------------------------- */

enum ta1_space {
	TA1_SPACE_CORE,
	TA1_SPACE_VMEM,
	TA1_SPACE_MXUW,
	TA1_SPACE_HBM, /* some chip's HBM; region.chip says which */
	TA1_SPACE_NONE, /* an address in no memory: the instruction will fault */
};

/*
 * A memory region an instruction touches: `rows` runs of `row_bytes` bytes,
 * the r-th starting at addr + r * stride. A plain region has rows = 1.
 * addr is the address as the program names it (local or global HBM form);
 * space and chip say which memory that is for the executing chip.
 */
struct ta1_region {
	uint8_t space;  /* enum ta1_space */
	uint8_t write;  /* 1 = written, 0 = read */
	uint16_t chip;  /* owning chip for HBM, the executing chip otherwise */
	uint64_t addr;
	uint64_t row_bytes;
	uint64_t rows;
	int64_t stride;
};

/*
 * Register ids beyond x0..x31 that instructions can read or write:
 * the pc, the DMA sync flags, the counters and the chip id registers.
 */
enum ta1_reg_id {
	TA1_REG_X0 = 0,
	TA1_REG_PC = 32,
	TA1_REG_FLAG0 = 33, /* flag f is TA1_REG_FLAG0 + f */
	TA1_REG_CYCLE = TA1_REG_FLAG0 + TA1_NUM_FLAGS,
	TA1_REG_INSTRET,
	TA1_REG_CHIPID,
	TA1_REG_NCHIPS,
	TA1_REG_COUNT,
};

#define TA1_MAX_REGIONS 4

struct ta1_access {
	uint64_t regs_read;    /* bit i = ta1_reg_id i (x0 never listed) */
	uint64_t regs_written;
	unsigned nregions;
	struct ta1_region region[TA1_MAX_REGIONS];
	const char *fault;     /* non-NULL: the instruction faults with this reason */
	unsigned fault_region; /* with fault: 1 + index of the region at fault, 0 if none is */
};

/* Register values the query needs: x registers, and the executing chip. */
struct ta1_query_ctx {
	const uint64_t *x;   /* x[0..31] */
	unsigned chip;       /* executing chip */
	unsigned nchips;
	uint64_t core_size, vmem_size, hbm_size;
};

/*
 * Which registers and memory regions `insn` reads and writes when executed
 * with the registers in ctx. The regions are exactly the bytes the semantics
 * touch (scalar load/store of its size; DMA source and destination, 2-D ones
 * as strided regions; vector and MXU operands in VMEM; the MXU weight buffer).
 * A DMA's destination is reported as written by its ISSUE, where the data
 * dependency starts; its completion is counted into the sync flag, which the
 * ISSUE writes and the WAIT reads and writes.
 */
void ta1_access_query(const struct ta1_insn *insn, const struct ta1_query_ctx *ctx,
		      struct ta1_access *out);

/* ta1_access_query() of a scalar load or store (class LOAD or STORE) whose
 * address lies in core memory, for callers that run it for every
 * instruction (sim/grm_ta1.c): regs_read and regs_written are what the query
 * gave for this instruction before (they do not depend on register values
 * for these classes). Returns false, leaving *a alone, when the address is
 * not wholly in core memory: the query then says where it is and the fault.
 * Fills only the region used (tests/test_access.c compares it with the
 * query). */
static inline bool ta1_access_scalar_mem(const struct ta1_insn *in, const struct ta1_query_ctx *ctx, int store,
					 unsigned size, uint64_t regs_read, uint64_t regs_written,
					 struct ta1_access *a)
{
	uint64_t addr = ctx->x[in->rs1] + (uint64_t)in->imm;
	if (addr < TA1_CORE_BASE || ctx->core_size < size || addr - TA1_CORE_BASE > ctx->core_size - size)
		return false;
	a->regs_read = regs_read;
	a->regs_written = regs_written;
	a->nregions = 1;
	a->region[0] = (struct ta1_region){.space = TA1_SPACE_CORE,
					   .write = (uint8_t)store,
					   .chip = (uint16_t)ctx->chip,
					   .addr = addr,
					   .row_bytes = size,
					   .rows = 1,
					   .stride = 0};
	a->fault = NULL;
	a->fault_region = 0;
	return true;
}

/* Classifies an address for chip `chip`: space, owning chip and the offset in
 * that memory. Returns TA1_SPACE_NONE if [addr, addr+len) is not wholly inside
 * one memory. */
enum ta1_space ta1_classify(const struct ta1_query_ctx *ctx, uint64_t addr, uint64_t len,
			    unsigned *owner_chip, uint64_t *offset);

/* The one address the recorder and replayer use for a region's first byte:
 * HBM by its global address (ta_hbm_of(owner, offset)), so that a chip's
 * local and global names of the same byte coincide; other spaces as given. */
uint64_t ta1_region_canonical(const struct ta1_query_ctx *ctx, const struct ta1_region *r);

#endif
