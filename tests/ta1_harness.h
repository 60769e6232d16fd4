/*
 * ta1_harness.h: helpers shared by the TA1 unit tests that execute single
 * instructions on a real ta1_machine (test_xta.c, test_access.c): a
 * deterministic random generator, a machine with small memories, and
 * "execute this one instruction with these registers".
 *
 * Everything is static so that each test stays one .c file.
 */
#ifndef SNR_TESTS_TA1_HARNESS_H
#define SNR_TESTS_TA1_HARNESS_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"

static uint64_t h_rng_state = 0x2545f4914f6cdd1dull;

static inline uint64_t h_rand(void)
{
	uint64_t x = h_rng_state;
	x ^= x << 13;
	x ^= x >> 7;
	x ^= x << 17;
	return h_rng_state = x;
}

/* Uniform in [0, n) (n > 0). */
static inline uint64_t h_below(uint64_t n)
{
	return h_rand() % n;
}

static inline void h_fill(void *p, size_t len)
{
	uint8_t *b = p;
	size_t i = 0;
	for (; i + 8 <= len; i += 8) {
		uint64_t v = h_rand();
		memcpy(b + i, &v, 8);
	}
	for (; i < len; i++)
		b[i] = (uint8_t)h_rand();
}

static inline float h_f32(uint32_t bits)
{
	float f;
	memcpy(&f, &bits, 4);
	return f;
}

static inline uint32_t h_bits(float f)
{
	uint32_t u;
	memcpy(&u, &f, 4);
	return u;
}

/* Where the tests place the one instruction they execute. */
#define H_PC (TA1_CORE_BASE + 0x1000)

/* A machine of `chips` chips with the given memory sizes (0 keeps the default). */
static inline struct ta1_machine *h_machine(unsigned chips, uint64_t core, uint64_t vmem, uint64_t hbm)
{
	struct snr_config cfg;
	char err[256];
	snr_config_default(&cfg);
	cfg.chips = chips;
	if (core)
		cfg.core_memory_bytes = core;
	if (vmem)
		cfg.vmem_bytes = vmem;
	if (hbm)
		cfg.hbm_bytes = hbm;
	struct ta1_machine *m = ta1_machine_new(&cfg, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "ta1_machine_new: %s\n", err);
		exit(2);
	}
	return m;
}

static inline struct ta1_insn h_insn(enum ta1_op op, unsigned rd, unsigned rs1, unsigned rs2, unsigned rs3,
				     int64_t imm)
{
	struct ta1_insn in = {0};
	in.op = (uint16_t)op;
	in.rd = (uint8_t)rd;
	in.rs1 = (uint8_t)rs1;
	in.rs2 = (uint8_t)rs2;
	in.rs3 = (uint8_t)rs3;
	in.imm = imm;
	return in;
}

/* Writes the instruction at `pc`, points the chip at it and executes it. */
static inline enum ta1_stop h_exec_at(struct ta1_chip *c, uint64_t pc, const struct ta1_insn *in)
{
	uint32_t w = ta1_encode(in);
	if (ta1_chip_write_mem(c, pc, &w, 4) != 4) {
		fprintf(stderr, "cannot place an instruction at 0x%llx\n", (unsigned long long)pc);
		exit(2);
	}
	ta1_chip_set_reg(c, TA1_REG_PC, pc);
	return ta1_chip_step(c);
}

static inline enum ta1_stop h_exec(struct ta1_chip *c, const struct ta1_insn *in)
{
	return h_exec_at(c, H_PC, in);
}

/* Executes an Xta instruction whose register operands are given as values:
 * they are placed in a0..a3 (rs1, rs2, rs3, rs4 = rd field). */
static inline enum ta1_stop h_xta(struct ta1_chip *c, enum ta1_op op, uint64_t v1, uint64_t v2, uint64_t v3,
				  uint64_t v4)
{
	ta1_chip_set_reg(c, 10, v1);
	ta1_chip_set_reg(c, 11, v2);
	ta1_chip_set_reg(c, 12, v3);
	ta1_chip_set_reg(c, 13, v4);
	struct ta1_insn in = h_insn(op, 13, 10, 11, 12, 0);
	return h_exec(c, &in);
}

#endif
