/*
 * test_isa.c: the TA1 instruction table is consistent.
 *  - every row encodes and decodes round trip with random operands;
 *  - no two rows overlap (no word matches two rows);
 *  - every row's match bits lie inside its mask;
 *  - disassembly of known words equals GNU objdump's spelling.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/ta1/ta1_isa.h"
#include "tests/check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	return check_rand(&rng);
}

static int64_t imm_for(enum ta1_format f)
{
	int64_t r = (int64_t)next();
	switch (f) {
	case TA1_FMT_I: case TA1_FMT_S: return (r % 4096) - 2048 + ((r % 4096) < 0 ? 4096 : 0) - 0;
	case TA1_FMT_SH6: return (int64_t)(next() % 64);
	case TA1_FMT_SH5: return (int64_t)(next() % 32);
	case TA1_FMT_B: return ((int64_t)(next() % 4096) - 2048) * 2;
	case TA1_FMT_U: return (int64_t)(int32_t)(uint32_t)(next() & 0xfffff000u);
	case TA1_FMT_J: return ((int64_t)(next() % (1 << 20)) - (1 << 19)) * 2;
	case TA1_FMT_CSR: case TA1_FMT_CSRI: return (int64_t)(next() % 4096);
	default: return 0;
	}
}

static void clear_unused(struct ta1_insn *in, enum ta1_format f)
{
	switch (f) {
	case TA1_FMT_R: in->rs3 = 0; in->imm = 0; break;
	case TA1_FMT_I: case TA1_FMT_SH6: case TA1_FMT_SH5: case TA1_FMT_CSR: case TA1_FMT_CSRI:
		in->rs2 = in->rs3 = 0; break;
	case TA1_FMT_S: case TA1_FMT_B: in->rd = in->rs3 = 0; break;
	case TA1_FMT_U: case TA1_FMT_J: in->rs1 = in->rs2 = in->rs3 = 0; break;
	case TA1_FMT_FENCE: case TA1_FMT_NONE: in->rd = in->rs1 = in->rs2 = in->rs3 = 0; in->imm = 0; break;
	case TA1_FMT_XR4: in->imm = 0; break;
	case TA1_FMT_XR3: in->rs3 = 0; in->imm = 0; break;
	case TA1_FMT_XR2: in->rd = in->rs3 = 0; in->imm = 0; break;
	case TA1_FMT_XR1: in->rd = in->rs2 = in->rs3 = 0; in->imm = 0; break;
	case TA1_FMT_XRD: in->rs1 = in->rs2 = in->rs3 = 0; in->imm = 0; break;
	}
}

static void test_round_trip(void)
{
	for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
		const struct ta1_insn_info *ii = &ta1_insn_table[op];
		for (int k = 0; k < 2000; k++) {
			struct ta1_insn in = {0}, out;
			in.op = (uint16_t)op;
			in.rd = next() % 32;
			in.rs1 = next() % 32;
			in.rs2 = next() % 32;
			in.rs3 = next() % 32;
			in.imm = imm_for(ii->format);
			if (ii->format == TA1_FMT_I || ii->format == TA1_FMT_S)
				in.imm = (int64_t)(next() % 4096) - 2048;
			clear_unused(&in, ii->format);
			uint32_t w = ta1_encode(&in);
			CHECK(ta1_decode(w, &out), "%s: 0x%08x does not decode", ii->mnemonic, w);
			CHECK(out.op == op, "%s: 0x%08x decodes as %s", ii->mnemonic, w,
			      out.op < TA1_OP_COUNT ? ta1_insn_table[out.op].mnemonic : "illegal");
			CHECK(out.rd == in.rd && out.rs1 == in.rs1 && out.rs2 == in.rs2 && out.rs3 == in.rs3 &&
				      out.imm == in.imm,
			      "%s: fields differ after round trip of 0x%08x (rd %u/%u rs1 %u/%u rs2 %u/%u rs3 %u/%u "
			      "imm %lld/%lld)",
			      ii->mnemonic, w, in.rd, out.rd, in.rs1, out.rs1, in.rs2, out.rs2, in.rs3, out.rs3,
			      (long long)in.imm, (long long)out.imm);
			if (check_failures > 20)
				return;
		}
	}
}

static void test_no_overlap(void)
{
	for (unsigned a = 0; a < TA1_OP_COUNT; a++) {
		const struct ta1_insn_info *x = &ta1_insn_table[a];
		CHECK((x->match & ~x->mask) == 0, "%s: match has bits outside its mask", x->mnemonic);
		for (unsigned b = a + 1; b < TA1_OP_COUNT; b++) {
			const struct ta1_insn_info *y = &ta1_insn_table[b];
			/* Some word matches both iff they agree on the bits both fix. */
			CHECK(((x->match ^ y->match) & x->mask & y->mask) != 0, "%s and %s overlap", x->mnemonic,
			      y->mnemonic);
		}
	}
}

static void test_illegal(void)
{
	struct ta1_insn in;
	CHECK(!ta1_decode(0x00000000, &in), "all-zero word must be illegal");
	CHECK(!ta1_decode(0xffffffff, &in), "all-ones word must be illegal");
	CHECK(!ta1_decode(0x4501, &in), "a compressed instruction must be illegal");
	CHECK(!ta1_decode(0x0000700b, &in), "custom-0 funct3=7 must be illegal");
}

static void test_disasm(void)
{
	static const struct { uint32_t w; uint64_t pc; const char *text; } cases[] = {
		{0x00b50533, 0, "add a0, a0, a1"},
		{0xfe010113, 0, "addi sp, sp, -32"},
		{0x00813823, 0, "sd s0, 16(sp)"},
		{0x01013403, 0, "ld s0, 16(sp)"},
		{0x00050463, 0x10000, "beq a0, zero, 0x10008"},
		{0x008000ef, 0x10000, "jal ra, 0x10008"},
		{0x000125b7, 0, "lui a1, 0x12"},
		{0xc0002573, 0, "csrrs a0, cycle, zero"},
		{0x02b50533, 0, "mul a0, a0, a1"},
		{0x00000073, 0, "ecall"},
		{0x60b5068b, 0, "ta.dma a0, a1, a2, a3"},
	};
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct ta1_insn in;
		char buf[96];
		ta1_decode(cases[i].w, &in);
		ta1_disasm(&in, cases[i].pc, buf, sizeof(buf));
		CHECK(!strcmp(buf, cases[i].text), "0x%08x: got \"%s\", want \"%s\"", cases[i].w, buf, cases[i].text);
	}
}

int main(void)
{
	test_round_trip();
	test_no_overlap();
	test_illegal();
	test_disasm();
	return check_report("test_isa");
}
