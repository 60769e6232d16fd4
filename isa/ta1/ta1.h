/*
 * ta1.h: C intrinsics for TA1 programs (built with `snr cc`).
 *
 * Each intrinsic is one Xta instruction, emitted with the assembler's .insn
 * directive so that Debian's stock riscv64-unknown-elf toolchain builds TA1
 * programs. Addresses are uint64_t; sizes are bytes for DMA and f32 elements
 * for the vector and matrix units. docs/ta1-isa.md defines every instruction.
 *
 *   TA1_CORE: code, stack and scalar data; the only memory scalar loads and
 *             stores reach.
 *   VMEM:     TA_VMEM_BASE .. + TA_VMEM_SIZE, vector and MXU operands.
 *   HBM:      TA_HBM_BASE (this chip), ta_hbm_of(chip, offset) (any chip).
 *
 * Only DMA moves data between memories; a scalar access to VMEM or HBM faults.
 */
#ifndef TA1_H
#define TA1_H

#include <stdint.h>

#define TA_VMEM_BASE 0x20000000ull
#define TA_VMEM_SIZE (32ull << 20) /* default; the machine config may change it */
#define TA_HBM_BASE 0x40000000ull
#define TA_HBM_GLOBAL_BASE 0x0001000000000000ull
#define TA_NUM_FLAGS 16
#define TA_MXU_DIM 128

/* Global address of `offset` in chip `chip`'s HBM (reachable by DMA only). */
#define ta_hbm_of(chip, offset) \
	(TA_HBM_GLOBAL_BASE + ((uint64_t)(chip) << 40) + (uint64_t)(offset))

/* Places a global in this chip's HBM; the device loads it there on every chip. */
#define TA_HBM_DATA __attribute__((section(".hbm"), aligned(64)))

/* Address of an object as a TA1 address. */
#define ta_addr(p) ((uint64_t)(uintptr_t)(p))

/* DMA `bytes` from src to dst; completion adds 1 to sync flag `flag`. */
static inline void ta_dma(uint64_t dst, uint64_t src, uint64_t bytes, uint64_t flag)
{
	__asm__ volatile(".insn r4 CUSTOM_0, 0, 0, %3, %0, %1, %2"
			 :
			 : "r"(dst), "r"(src), "r"(bytes), "r"(flag)
			 : "memory");
}

/* DMA `bytes` from src to dst; completion adds 1 to sync flag `flag` of this
 * chip and 1 to sync flag `peer_flag` of the chip that owns dst (another
 * chip's HBM: that chip; this chip's memory: this chip). The peer waits for
 * the data with ta_wait(peer_flag, ...), which blocks until it arrives. */
static inline void ta_dma_notify(uint64_t dst, uint64_t src, uint64_t bytes, uint64_t flag, uint64_t peer_flag)
{
	uint64_t flags = (flag & 0xffffffffull) | (peer_flag << 32);
	__asm__ volatile(".insn r4 CUSTOM_0, 4, 0, %3, %0, %1, %2"
			 :
			 : "r"(dst), "r"(src), "r"(bytes), "r"(flags)
			 : "memory");
}

/* 2-D DMA: `rows` rows of `row_bytes`, row r from src + r*src_stride to
 * dst + r*dst_stride. rows < 65536; strides fit in 32 signed bits. */
static inline void ta_dma2d(uint64_t dst, uint64_t src, uint64_t row_bytes, uint64_t rows,
			    int64_t dst_stride, int64_t src_stride, uint64_t flag)
{
	uint64_t shape = (row_bytes & 0xffffffffull) | ((rows & 0xffffull) << 32) | (flag << 48);
	uint64_t strides = (uint64_t)(uint32_t)src_stride | ((uint64_t)(uint32_t)dst_stride << 32);
	__asm__ volatile(".insn r4 CUSTOM_0, 1, 0, %3, %0, %1, %2"
			 :
			 : "r"(dst), "r"(src), "r"(shape), "r"(strides)
			 : "memory");
}

/* Blocks until `count` DMAs signalling `flag` have completed, then consumes
 * them. Completions may come from this chip's DMAs or, through
 * ta_dma_notify, from another chip's. */
static inline void ta_wait(uint64_t flag, uint64_t count)
{
	__asm__ volatile(".insn r CUSTOM_0, 2, 0, x0, %0, %1" : : "r"(flag), "r"(count) : "memory");
}

#define TA1_VOP4_(f2, dst, a, b, n) \
	__asm__ volatile(".insn r4 CUSTOM_1, 0, " #f2 ", %3, %0, %1, %2" \
			 : \
			 : "r"(dst), "r"(a), "r"(b), "r"(n) \
			 : "memory")

/* dst[i] = a[i] + b[i], i < n (f32, all in VMEM) */
static inline void ta_vadd(uint64_t dst, uint64_t a, uint64_t b, uint64_t n) { TA1_VOP4_(0, dst, a, b, n); }
/* dst[i] = a[i] * b[i] */
static inline void ta_vmul(uint64_t dst, uint64_t a, uint64_t b, uint64_t n) { TA1_VOP4_(1, dst, a, b, n); }
/* dst[i] = max(a[i], b[i]) */
static inline void ta_vmax(uint64_t dst, uint64_t a, uint64_t b, uint64_t n) { TA1_VOP4_(2, dst, a, b, n); }

/* dst[i] = a[i] * s */
static inline void ta_vscale(uint64_t dst, uint64_t a, float s, uint64_t n)
{
	union { float f; uint32_t u; } bits = {s};
	uint64_t sv = bits.u;
	TA1_VOP4_(3, dst, a, sv, n);
}

/* dst[i] = exp(a[i]) */
static inline void ta_vexp(uint64_t dst, uint64_t a, uint64_t n)
{
	__asm__ volatile(".insn r4 CUSTOM_1, 1, 0, %2, %0, %1, x0" : : "r"(dst), "r"(a), "r"(n) : "memory");
}

/* dst[r] = sum over c of a[r*cols + c], r < rows */
static inline void ta_vsum_rows(uint64_t dst, uint64_t a, uint64_t rows, uint64_t cols)
{
	__asm__ volatile(".insn r4 CUSTOM_1, 2, 0, %3, %0, %1, %2"
			 :
			 : "r"(dst), "r"(a), "r"(rows), "r"(cols)
			 : "memory");
}

/* Loads the MXU's 128x128 f32 weights (row-major, 64 KiB) from VMEM. */
static inline void ta_mxu_load(uint64_t w)
{
	__asm__ volatile(".insn r CUSTOM_1, 4, 0, x0, %0, x0" : : "r"(w) : "memory");
}

/* dst[rows][128] = lhs[rows][128] x W (+ dst when accumulate), all in VMEM. */
static inline void ta_mxu_matmul(uint64_t dst, uint64_t lhs, uint64_t rows, int accumulate)
{
	if (accumulate)
		__asm__ volatile(".insn r4 CUSTOM_1, 3, 1, %2, %0, %1, x0" : : "r"(dst), "r"(lhs), "r"(rows) : "memory");
	else
		__asm__ volatile(".insn r4 CUSTOM_1, 3, 0, %2, %0, %1, x0" : : "r"(dst), "r"(lhs), "r"(rows) : "memory");
}

static inline uint64_t ta_chip_id(void)
{
	uint64_t v;
	__asm__ volatile(".insn r CUSTOM_0, 3, 0, %0, x0, x0" : "=r"(v));
	return v;
}

static inline uint64_t ta_num_chips(void)
{
	uint64_t v;
	__asm__ volatile(".insn r CUSTOM_0, 3, 1, %0, x0, x0" : "=r"(v));
	return v;
}

/* The cycle counter (csrr cycle). On the functional device one instruction is
 * one cycle; under the timing model it counts modelled cycles. */
static inline uint64_t ta_cycles(void)
{
	uint64_t v;
	__asm__ volatile("csrr %0, cycle" : "=r"(v));
	return v;
}

#endif
