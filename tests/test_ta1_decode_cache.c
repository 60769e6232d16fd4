/*
 * test_ta1_decode_cache.c: the TA1 plugin's access query with its decode
 * kept per pc (isa/ta1/ta1_decode_cache.c) answers exactly what decoding the
 * word and running ta1_access_query each time answers (the reference below,
 * the plugin's query before the cache).
 *
 * For random instances of every opcode and random words, at random pcs, the
 * query is asked several times with different register values (in core
 * memory, VMEM, HBM, nowhere, unknown), so that a slot classified from one
 * set of values answers for others; then the same pc is given another
 * word, which must be decoded again. The cache's counters say the slots were
 * used (a hit per repeated query) and refilled.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/snr_isa.h"
#include "isa/ta1/ta1_decode_cache.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "tests/check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;

/* The plugin's answer before the cache: decode, query, convert. */
static int reference(const struct snr_config *cfg, const uint8_t *code, uint64_t pc, const struct snr_isa_regs *regs,
		     struct snr_insn_access *out)
{
	memset(out, 0, sizeof(*out));
	out->length = 4;
	out->cls = SNR_CLASS_SCALAR;
	if (pc & 3) {
		out->fault = "ta1: pc not 4-byte aligned";
		return -1;
	}
	uint32_t w = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 | (uint32_t)code[3] << 24;
	struct ta1_insn in;
	if (!ta1_decode(w, &in)) {
		out->fault = "ta1: illegal instruction";
		return -1;
	}
	uint64_t x[32] = {0};
	for (unsigned r = 1; r < 32; r++)
		if (regs->val && regs->val[r])
			memcpy(&x[r], regs->val[r], 8);
	struct ta1_query_ctx q = {.x = x,
				  .chip = regs->chip,
				  .nchips = regs->nchips ? regs->nchips : 1,
				  .core_size = cfg->core_memory_bytes,
				  .vmem_size = cfg->vmem_bytes,
				  .hbm_size = cfg->hbm_bytes};
	struct ta1_access a;
	ta1_access_query(&in, &q, &a);
	enum ta1_class c = ta1_insn_table[in.op].cls;
	out->cls = c == TA1_CLASS_LOAD		 ? SNR_CLASS_LOAD
		   : c == TA1_CLASS_STORE	 ? SNR_CLASS_STORE
		   : c == TA1_CLASS_BRANCH || c == TA1_CLASS_JUMP ? SNR_CLASS_BRANCH
		   : c == TA1_CLASS_SYSTEM	 ? SNR_CLASS_SYSTEM
		   : c == TA1_CLASS_DMA_ISSUE	 ? SNR_CLASS_DMA_ISSUE
		   : c == TA1_CLASS_DMA_WAIT	 ? SNR_CLASS_DMA_WAIT
		   : c == TA1_CLASS_VECTOR	 ? SNR_CLASS_VECTOR
		   : c == TA1_CLASS_MATRIX	 ? SNR_CLASS_MATRIX
						 : SNR_CLASS_SCALAR;
	out->regs_read[0] = a.regs_read;
	out->regs_written[0] = a.regs_written;
	out->fault = a.fault;
	out->record_outputs = c == TA1_CLASS_CSR;
	for (unsigned i = 0; i < a.nregions && out->nmem < SNR_ISA_MAX_MEM; i++) {
		const struct ta1_region *r = &a.region[i];
		if (!r->rows)
			continue;
		out->mem[out->nmem++] = (struct snr_mem_region){.write = r->write,
								.space = r->space,
								.chip = r->chip,
								.addr = ta1_region_canonical(&q, r),
								.row_bytes = r->row_bytes,
								.rows = r->rows,
								.stride = r->stride};
	}
	return 0;
}

static int same(const struct snr_insn_access *a, const struct snr_insn_access *b)
{
	if (a->length != b->length || a->cls != b->cls || a->nmem != b->nmem || a->record_outputs != b->record_outputs ||
	    memcmp(a->regs_read, b->regs_read, sizeof(a->regs_read)) ||
	    memcmp(a->regs_written, b->regs_written, sizeof(a->regs_written)))
		return 0;
	if ((a->fault == NULL) != (b->fault == NULL) || (a->fault && strcmp(a->fault, b->fault)))
		return 0;
	for (unsigned i = 0; i < a->nmem; i++) {
		const struct snr_mem_region *x = &a->mem[i], *y = &b->mem[i];
		if (x->write != y->write || x->space != y->space || x->chip != y->chip || x->addr != y->addr ||
		    x->row_bytes != y->row_bytes || x->rows != y->rows || x->stride != y->stride)
			return 0;
	}
	return 1;
}

/* A register value: in one of the memories, or anywhere. */
static uint64_t any_value(const struct snr_config *cfg)
{
	uint64_t r = check_rand(&rng);
	switch (r % 8) {
	case 0: return TA1_CORE_BASE + (r >> 8) % cfg->core_memory_bytes;
	case 1: return TA1_CORE_BASE + cfg->core_memory_bytes - (r >> 8) % 8; /* across the end */
	case 2: return TA1_VMEM_BASE + (r >> 8) % cfg->vmem_bytes;
	case 3: return TA1_HBM_BASE + (r >> 8) % (1u << 20);
	case 4: return TA1_HBM_GLOBAL_BASE + (r >> 8) % (1u << 20);
	case 5: return (r >> 8) % 4096; /* small: sizes, flags, a7's selectors */
	case 6: return r % 2 ? 64 : 93;
	default: return r;
	}
}

static unsigned cases, mismatches;

/* The plugin's answer against the reference, for `word` at pc with rounds
 * of fresh register values. */
static void one(const struct snr_isa_ops *isa, void *self, const struct snr_config *cfg, uint64_t pc, uint32_t word,
		unsigned rounds)
{
	uint8_t code[4] = {(uint8_t)word, (uint8_t)(word >> 8), (uint8_t)(word >> 16), (uint8_t)(word >> 24)};
	for (unsigned k = 0; k < rounds; k++) {
		uint64_t val[TA1_REG_COUNT];
		const uint8_t *vp[TA1_REG_COUNT];
		for (unsigned r = 0; r < TA1_REG_COUNT; r++) {
			val[r] = r ? any_value(cfg) : 0;
			vp[r] = check_rand(&rng) % 6 ? (const uint8_t *)&val[r] : NULL; /* some unknown */
		}
		unsigned chip = (unsigned)(check_rand(&rng) % 2);
		struct snr_isa_regs regs = {.val = vp, .chip = chip, .nchips = 2};
		struct snr_insn_access got, want;
		int rg = isa->access(self, code, 4, pc, &regs, &got);
		int rw = reference(cfg, code, pc, &regs, &want);
		cases++;
		if (rg != rw || !same(&got, &want)) {
			if (mismatches++ < 10)
				fprintf(stderr, "word 0x%08x at 0x%llx (round %u): the cached answer differs (fault %s / %s)\n",
					word, (unsigned long long)pc, k, got.fault ? got.fault : "-",
					want.fault ? want.fault : "-");
		}
	}
}

int main(void)
{
	const struct snr_isa_ops *isa = &snr_isa_ta1;
	char err[256];
	void *self = isa->create(NULL, err, sizeof(err));
	CHECK(self != NULL, "create: %s", err);
	if (!self)
		return check_report("test_ta1_decode_cache");
	struct snr_config cfg;
	snr_config_default(&cfg);

	/* every opcode, with random fields, at pcs that share slots */
	for (unsigned rep = 0; rep < 200; rep++)
		for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
			uint64_t r = check_rand(&rng);
			struct ta1_insn in = {.op = (uint16_t)op,
					      .rd = (uint8_t)(r & 31),
					      .rs1 = (uint8_t)(r >> 5 & 31),
					      .rs2 = (uint8_t)(r >> 10 & 31),
					      .rs3 = (uint8_t)(r >> 15 & 31),
					      .imm = (int64_t)(r >> 20 & 0xfff) - 2048};
			if (ta1_insn_table[op].format == TA1_FMT_CSR || ta1_insn_table[op].format == TA1_FMT_CSRI)
				in.imm = r & 64 ? TA1_CSR_CYCLE : r & 128 ? TA1_CSR_INSTRET : (int64_t)(r >> 40 & 0xfff);
			uint32_t w = ta1_encode(&in);
			uint64_t pc = TA1_CORE_BASE + 4 * (check_rand(&rng) % 65536);
			one(isa, self, &cfg, pc, w, 6);
		}
	/* random words (most illegal), and a misaligned pc */
	for (unsigned k = 0; k < 20000; k++)
		one(isa, self, &cfg, TA1_CORE_BASE + 4 * (check_rand(&rng) % 4096), (uint32_t)check_rand(&rng), 2);
	one(isa, self, &cfg, TA1_CORE_BASE + 2, 0x00000013u /* addi x0, x0, 0 */, 2);
	CHECK(mismatches == 0, "%u of %u answers differ from decoding and querying each time", mismatches, cases);

	/* the cache itself: a repeated pc and word hits; another word at the
	 * same pc, or the same word at another pc of the slot, decodes again */
	struct ta1_decode_cache c = {0};
	struct ta1_query_ctx q = {.nchips = 1,
				  .core_size = cfg.core_memory_bytes,
				  .vmem_size = cfg.vmem_bytes,
				  .hbm_size = cfg.hbm_bytes};
	struct ta1_insn addi = {.op = TA1_OP_ADDI, .rd = 5, .rs1 = 6, .imm = 1};
	struct ta1_insn ld = {.op = TA1_OP_LD, .rd = 5, .rs1 = 6, .imm = 8};
	struct ta1_insn dma = {.op = TA1_OP_TA_DMA, .rd = 1, .rs1 = 2, .rs2 = 3, .rs3 = 4};
	uint64_t pc = TA1_CORE_BASE + 0x100;
	const struct ta1_dc_slot *s1 = ta1_decode_cache_get(&c, pc, ta1_encode(&addi), &q);
	const struct ta1_dc_slot *s2 = ta1_decode_cache_get(&c, pc, ta1_encode(&addi), &q);
	CHECK(s1 == s2 && c.hits == 1 && c.misses == 1, "a repeated query hits (hits %llu, misses %llu)",
	      (unsigned long long)c.hits, (unsigned long long)c.misses);
	CHECK(s1->kind == TA1_DC_STATIC && s1->in.op == TA1_OP_ADDI, "addi is static (kind %u)", s1->kind);
	s1 = ta1_decode_cache_get(&c, pc, ta1_encode(&ld), &q);
	CHECK(c.misses == 2 && s1->kind == TA1_DC_MEM && s1->in.op == TA1_OP_LD,
	      "code overwritten at the same pc is decoded again (misses %llu, kind %u)",
	      (unsigned long long)c.misses, s1->kind);
	s1 = ta1_decode_cache_get(&c, pc + 4ull * TA1_DC_SLOTS, ta1_encode(&ld), &q);
	CHECK(c.misses == 3 && s1->pc == pc + 4ull * TA1_DC_SLOTS, "another pc of the same slot is decoded again");
	s1 = ta1_decode_cache_get(&c, pc, ta1_encode(&dma), &q);
	CHECK(s1->kind == TA1_DC_DYNAMIC, "a DMA is queried each time (kind %u)", s1->kind);
	s1 = ta1_decode_cache_get(&c, pc, 0xffffffffu, &q);
	CHECK(s1->illegal, "an illegal word is kept as illegal");
	ta1_decode_cache_free(&c);
	isa->destroy(self);
	return check_report("test_ta1_decode_cache");
}
