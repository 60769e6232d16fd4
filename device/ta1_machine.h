/*
 * ta1_machine.h: the TA1 device, a pod of N chips that runs whole programs.
 *
 * Each chip has its own scalar core, core memory, VMEM, MXU weight buffer,
 * DMA sync flags and HBM. The device is functional: a DMA completes when it
 * is issued (its sync flag counts the completion at once), vector and MXU
 * operations complete immediately, and the cycle counter equals the
 * instructions retired (unless a timing model drives it: ta1_chip_set_cycle). Chips run round-robin in fixed quanta, so a run is
 * deterministic. The same objects serve the GDB remote protocol
 * (device/rsp_server.c): registers, memory by address in any space,
 * breakpoints, single steps.
 */
#ifndef SNR_TA1_MACHINE_H
#define SNR_TA1_MACHINE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_elf.h"

struct ta1_machine;
struct ta1_chip;

enum ta1_chip_state {
	TA1_CHIP_RUNNING,
	TA1_CHIP_EXITED,
	TA1_CHIP_FAULTED,
};

enum ta1_stop {
	TA1_STOP_BUDGET,     /* ran the instructions asked for */
	TA1_STOP_BREAKPOINT, /* at a breakpoint address, before executing it */
	TA1_STOP_EXIT,       /* the program called exit */
	TA1_STOP_FAULT,      /* see ta1_chip_fault() */
	TA1_STOP_EBREAK,     /* executed ebreak (pc left at the ebreak) */
	TA1_STOP_BLOCKED,    /* at a ta.wait that another chip must signal first (pc left at the wait) */
};

struct ta1_chip_stats {
	uint64_t instret;
	uint64_t by_class[TA1_CLASS_COUNT];
	uint64_t dma_bytes;
};

/* Creates a machine of cfg->chips chips with the config's memory sizes. */
struct ta1_machine *ta1_machine_new(const struct snr_config *cfg, char *err, size_t errlen);
void ta1_machine_free(struct ta1_machine *m);

/* Performs every pending lazy copy and gives every MXU that refers to VMEM
 * its own copy of the weights: what any access would read stays the same,
 * and from then on reads (ta1_chip_read_mem) change nothing in the machine,
 * so several threads may read its memories at once (the pod replay's
 * end-state checks) until the next write or instruction. */
void ta1_machine_settle(struct ta1_machine *m);

/* Loads the program into every chip: segments in core memory or HBM, pc at
 * the entry point, sp and the rest of the registers zero. Returns -1 with a
 * message naming the segment on failure. The ELF stays owned by the caller and
 * must outlive the machine. */
int ta1_machine_load(struct ta1_machine *m, const struct snr_elf *elf, char *err, size_t errlen);

unsigned ta1_machine_nchips(const struct ta1_machine *m);
struct ta1_chip *ta1_machine_chip(struct ta1_machine *m, unsigned i);
const struct snr_config *ta1_machine_config(const struct ta1_machine *m);
/* Counting per instruction class costs a little; off unless asked for. */
void ta1_machine_set_stats(struct ta1_machine *m, bool on);
/* For tests of the recorder (snr device --test-dma): once chip `chip` has
 * retired at_instret instructions, len bytes at addr in its memory become
 * 0xa5 ^ (offset), once, as a DMA from another chip landing there would.
 * The device's own chips never do that while a debugger holds the others
 * stopped; this plants it. */
void ta1_machine_inject_write(struct ta1_machine *m, unsigned chip, uint64_t at_instret, uint64_t addr,
			      uint64_t len);
/* Output of the write system call goes to these host fds (default 1 and 2). */
void ta1_machine_set_output(struct ta1_machine *m, int out_fd, int err_fd);

/* Runs all chips round-robin until every chip has exited, one faults, or a
 * chip stops at a breakpoint or ebreak; `limit` caps the instructions of any
 * one chip (0 = none; reaching it returns TA1_STOP_BUDGET). *which is the chip
 * that stopped. A chip blocked at a ta.wait (TA1_STOP_BLOCKED) gives its turn
 * to the others and tries again on its next turn; when every running chip is
 * blocked, the lowest one faults with a message naming each chip's wait. */
enum ta1_stop ta1_machine_run(struct ta1_machine *m, uint64_t limit, unsigned *which);

/* A chip on a pod of more than one chip that stopped at a ta.wait with too
 * few completions (TA1_STOP_BLOCKED) and has not passed it since. */
bool ta1_chip_blocked(const struct ta1_chip *c);
/* True if every chip still running is blocked; then the lowest of them
 * faults with a message that names every chip's wait (*which: that chip). */
bool ta1_machine_deadlock(struct ta1_machine *m, unsigned *which);

/* Runs one chip for at most n instructions (stops early at a breakpoint,
 * exit, fault or ebreak). A breakpoint at the current pc is stepped over. */
enum ta1_stop ta1_chip_run(struct ta1_chip *c, uint64_t n);
/* Executes exactly one instruction, ignoring breakpoints. */
enum ta1_stop ta1_chip_step(struct ta1_chip *c);
/* ta1_chip_step when the caller has just decoded the instruction at the pc,
 * which lies in core memory, 4-byte aligned (in: ta1_decode of the word
 * there, a legal instruction), and queried its access (ta1_access_query with
 * ta1_chip_query_ctx's context) on the chip's current state: the chip runs
 * that decode instead of looking up its own cache, and an Xta instruction
 * uses the access instead of querying again (the simulator computes both
 * before every step anyway). *next_pc is the pc after the step. */
enum ta1_stop ta1_chip_step_known(struct ta1_chip *c, const struct ta1_insn *in, const struct ta1_access *a,
				  uint64_t *next_pc);

enum ta1_chip_state ta1_chip_state(const struct ta1_chip *c);
int ta1_chip_exit_code(const struct ta1_chip *c);
/* Why the chip faulted, with pc and disassembly; "" if it did not. */
const char *ta1_chip_fault(const struct ta1_chip *c);
unsigned ta1_chip_id(const struct ta1_chip *c);
const struct ta1_chip_stats *ta1_chip_stats(const struct ta1_chip *c);

/* Registers by enum ta1_reg_id (x0..x31, pc, flags, cycle, instret, chip id,
 * chip count). Writing chip id, chip count or x0 is refused (-1). */
uint64_t ta1_chip_get_reg(const struct ta1_chip *c, unsigned reg);
int ta1_chip_set_reg(struct ta1_chip *c, unsigned reg, uint64_t value);

/* The timing model's clock (`snr device --timing`): once set, the cycle and
 * time CSRs (and register TA1_REG_CYCLE) read `cycle` instead of the
 * instructions retired; the caller sets it before each step to the cycle at
 * which the model will issue that instruction. instret is unaffected. */
void ta1_chip_set_cycle(struct ta1_chip *c, uint64_t cycle);

/* Debugger access to memory by address in any space the chip can name
 * (core, VMEM, MXU weights, local or global HBM). Returns the bytes done:
 * a short count stops at the first address that is in no memory. */
size_t ta1_chip_read_mem(struct ta1_chip *c, uint64_t addr, void *buf, size_t len);
size_t ta1_chip_write_mem(struct ta1_chip *c, uint64_t addr, const void *buf, size_t len);

/* The chip's core memory (code, data, stack) as host bytes, starting at
 * TA1_CORE_BASE; *size is its size. For readers that fetch instruction
 * words at the rate the replayer steps (sim/grm_ta1.c). */
const uint8_t *ta1_chip_core(const struct ta1_chip *c, uint64_t *size);

/* Software breakpoints (per chip; the RSP server sets them on every chip).
 * Returns 0, or -1 if the table is full (64 per chip). */
int ta1_chip_set_breakpoint(struct ta1_chip *c, uint64_t addr);
int ta1_chip_clear_breakpoint(struct ta1_chip *c, uint64_t addr);
bool ta1_chip_has_breakpoint(const struct ta1_chip *c, uint64_t addr);

/* The query context (register values, sizes) for the operand-access query. */
void ta1_chip_query_ctx(const struct ta1_chip *c, struct ta1_query_ctx *ctx);

#endif
