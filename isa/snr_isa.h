/*
 * snr_isa.h: the ISA plugin ABI (version 2; version 1 tables, which end
 * before syscall_writes, are still accepted).
 *
 * For the recorder (Algorithm 1) and the dependency analysis an ISA is one
 * question: given the bytes at pc and the current register values, how long
 * is the instruction, what class is it, which registers and which memory
 * regions does it read and write? Plus a disassembler for people.
 * Implementations in the tree: ta1 (isa/ta1, from its instruction table),
 * x86-64 and aarch64 (isa/capstone, capstone's detail mode).
 *
 * Registers are the plugin's own numbering (0..nregs-1) with GDB's names, so
 * that the recorder can match them with a debugger's register list by name.
 */
#ifndef SNR_ISA_H
#define SNR_ISA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNR_ISA_ABI_VERSION 2
#define SNR_ISA_ABI_MIN_VERSION 1
#define SNR_ISA_MAX_REGS 256
#define SNR_ISA_MAX_MEM 16

struct snr_isa_reg {
	const char *name; /* GDB's name, e.g. "ra" or "x1" (aliases in alt_name), "rax" */
	const char *alt_name; /* another name a debugger may use, or NULL */
	uint16_t size;    /* bytes */
	bool pc;          /* the program counter */
	bool optional;    /* the recorder may go on if the debugger lacks it */
};

enum snr_insn_class {
	SNR_CLASS_SCALAR,
	SNR_CLASS_LOAD,
	SNR_CLASS_STORE,
	SNR_CLASS_BRANCH,
	SNR_CLASS_SYSTEM,
	SNR_CLASS_DMA_ISSUE,
	SNR_CLASS_DMA_WAIT,
	SNR_CLASS_VECTOR,
	SNR_CLASS_MATRIX,
	SNR_CLASS_OTHER,
};

/* A memory region: `rows` runs of row_bytes, the r-th at addr + r * stride.
 * space distinguishes address spaces an ISA has (0 if it has one); chip
 * the memory's owner where memories belong to chips. */
struct snr_mem_region {
	uint8_t write;
	uint8_t space;
	uint16_t chip;
	uint64_t addr;
	uint64_t row_bytes;
	uint64_t rows;
	int64_t stride;
};

struct snr_insn_access {
	unsigned length;          /* bytes of the instruction */
	enum snr_insn_class cls;
	uint64_t regs_read[SNR_ISA_MAX_REGS / 64];    /* bit set of plugin register numbers */
	uint64_t regs_written[SNR_ISA_MAX_REGS / 64];
	unsigned nmem;
	struct snr_mem_region mem[SNR_ISA_MAX_MEM]; /* the first nmem; callers read no entry past them */
	const char *fault; /* the instruction will fault (reason), or NULL */
	/* The register outputs cannot be recomputed by a simulator (a system
	 * call's results, a cycle counter): the recorder saves their values
	 * after the step and the replayer applies them. */
	bool record_outputs;
};

/* Register values the plugin may read: regs[i] points at register i's
 * little-endian bytes (NULL if unknown; val NULL: none is known). */
struct snr_isa_regs {
	const uint8_t *const *val;
	unsigned chip, nchips; /* the executing thread's chip, where that means something */
};

struct snr_isa_ops {
	uint32_t abi_version; /* SNR_ISA_ABI_VERSION */
	const char *name;     /* "ta1", "x86-64", "aarch64" */
	const char *gdb_arch; /* how GDB names it: "riscv:rv64", "i386:x86-64", "aarch64" */
	unsigned max_insn_bytes;

	/* Creates the plugin's state; config_json is the machine config (may be
	 * NULL). Returns NULL with err filled on failure. */
	void *(*create)(const char *config_json, char *err, size_t errlen);
	void (*destroy)(void *self);
	/* The register file. */
	const struct snr_isa_reg *(*registers)(void *self, size_t *n);
	/* Decodes code (avail bytes at pc) and answers the access query with the
	 * given register values. Returns 0, or -1 if the bytes are no valid
	 * instruction (out->fault says why). */
	int (*access)(void *self, const uint8_t *code, size_t avail, uint64_t pc,
		      const struct snr_isa_regs *regs, struct snr_insn_access *out);
	/* Disassembly into buf; returns the instruction length or 0 if invalid. */
	unsigned (*disasm)(void *self, const uint8_t *code, size_t avail, uint64_t pc, char *buf, size_t len);

	/* Version 2, optional (NULL: none known). After the step of an
	 * instruction whose access had record_outputs, the memory it wrote that
	 * the registers tell (a system call's buffers: read()'s bytes, fstat()'s
	 * struct), from the registers before and after the step. Fills up to max
	 * regions and returns how many; the recorder reads their bytes after the
	 * step and stores them with it, as it stores the registers. */
	unsigned (*syscall_writes)(void *self, const uint8_t *code, size_t avail, uint64_t pc,
				   const struct snr_isa_regs *before, const struct snr_isa_regs *after,
				   struct snr_mem_region *out, unsigned max);
};

/* Whether the plugin has syscall_writes (a version 1 table ends before it). */
static inline bool snr_isa_has_syscall_writes(const struct snr_isa_ops *isa)
{
	return isa->abi_version >= 2 && isa->syscall_writes;
}

static inline void snr_regset_add(uint64_t *set, unsigned r) { set[r / 64] |= 1ull << (r % 64); }
static inline bool snr_regset_has(const uint64_t *set, unsigned r) { return (set[r / 64] >> (r % 64)) & 1; }

extern const struct snr_isa_ops snr_isa_ta1;
extern const struct snr_isa_ops snr_isa_x86_64;
extern const struct snr_isa_ops snr_isa_aarch64;

/* The ISA named name ("ta1", "x86-64", "aarch64"), or for a GDB
 * architecture string; NULL if none. */
const struct snr_isa_ops *snr_isa_find(const char *name);
const struct snr_isa_ops *snr_isa_for_gdb_arch(const char *gdb_arch);

#endif
