/*
 * isa_ta1.c: TA1 behind the ISA plugin ABI (isa/snr_isa.h), a thin
 * adapter over ta1_decode and ta1_access_query, with the decode kept per
 * pc (isa/ta1/ta1_decode_cache.c).
 *
 * Register numbering is enum ta1_reg_id: x0..x31 (GDB's ABI names, "x1"
 * etc. as alternates), pc, the sixteen DMA sync flags, cycle, instret,
 * chipid, nchips (the device's GDB feature "org.snr.ta1"). HBM regions are
 * reported by their global address (ta_hbm_of(chip, offset)), so that a
 * chip's local and global names of the same byte are one address to the
 * recorder.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/ta1/ta1_decode_cache.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_util.h"
#include "isa/snr_isa.h"

struct ta1_plugin {
	struct snr_config cfg;
	struct snr_isa_reg regs[TA1_REG_COUNT];
	char names[TA1_REG_COUNT][16];
	char alt[32][8];
	struct ta1_decode_cache dc;
	struct ta1_query_ctx sizes; /* the memories' sizes, for the decode cache and core-memory loads and stores */
};

static const char *const abi_names[32] = {
	"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0",
	"a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
	"s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

static void *ta1_create(const char *config_json, char *err, size_t errlen)
{
	struct ta1_plugin *p = snr_xcalloc(1, sizeof(*p));
	snr_config_default(&p->cfg);
	if (config_json && snr_config_parse(&p->cfg, config_json, "the machine config", err, errlen)) {
		free(p);
		return NULL;
	}
	p->sizes = (struct ta1_query_ctx){.nchips = 1,
					  .core_size = p->cfg.core_memory_bytes,
					  .vmem_size = p->cfg.vmem_bytes,
					  .hbm_size = p->cfg.hbm_bytes};
	for (unsigned r = 0; r < TA1_REG_COUNT; r++) {
		struct snr_isa_reg *g = &p->regs[r];
		g->size = 8;
		if (r < 32) {
			/* GDB's riscv feature names x8 "fp" (and accepts "s0"). */
			g->name = abi_names[r];
			snprintf(p->alt[r], sizeof(p->alt[r]), "x%u", r);
			g->alt_name = r == 8 ? "s0" : p->alt[r];
		} else if (r == TA1_REG_PC) {
			g->name = "pc";
			g->pc = true;
		} else if (r < TA1_REG_FLAG0 + TA1_NUM_FLAGS) {
			snprintf(p->names[r], sizeof(p->names[r]), "flag%u", r - TA1_REG_FLAG0);
			g->name = p->names[r];
			g->optional = true;
		} else {
			g->optional = true; /* plain RV64 targets (qemu) lack these */
			g->name = r == TA1_REG_CYCLE ? "cycle" : r == TA1_REG_INSTRET ? "instret"
							 : r == TA1_REG_CHIPID ? "chipid"
										: "nchips";
		}
	}
	return p;
}

static void ta1_destroy(void *self)
{
	struct ta1_plugin *p = self;
	if (p)
		ta1_decode_cache_free(&p->dc);
	free(p);
}

static const struct snr_isa_reg *ta1_registers(void *self, size_t *n)
{
	struct ta1_plugin *p = self;
	*n = TA1_REG_COUNT;
	return p->regs;
}

static enum snr_insn_class class_of(enum ta1_class c)
{
	switch (c) {
	case TA1_CLASS_LOAD: return SNR_CLASS_LOAD;
	case TA1_CLASS_STORE: return SNR_CLASS_STORE;
	case TA1_CLASS_BRANCH:
	case TA1_CLASS_JUMP: return SNR_CLASS_BRANCH;
	case TA1_CLASS_SYSTEM: return SNR_CLASS_SYSTEM;
	case TA1_CLASS_DMA_ISSUE: return SNR_CLASS_DMA_ISSUE;
	case TA1_CLASS_DMA_WAIT: return SNR_CLASS_DMA_WAIT;
	case TA1_CLASS_VECTOR: return SNR_CLASS_VECTOR;
	case TA1_CLASS_MATRIX: return SNR_CLASS_MATRIX;
	default: return SNR_CLASS_SCALAR;
	}
}

/* The query's answer for the decoded instruction `in` (the slow path: every
 * instruction but STATIC ones and loads and stores in core memory). */
static void query(const struct ta1_plugin *p, const struct ta1_insn *in, const struct snr_isa_regs *regs,
		  struct snr_insn_access *out)
{
	/* The query reads the instruction's register fields' values, and an
	 * ecall's a0-a7 (isa/ta1/ta1_isa.c: ta1_access_query's x[] reads): only those are
	 * fetched (all 31 through their pointers was a third of this function
	 * when recording, and zeroing the rest another); an unknown one is 0,
	 * and x[] has no other entry the query reads. */
	uint64_t x[32];
	const uint8_t fields[4] = {in->rd, in->rs1, in->rs2, in->rs3};
	x[0] = 0;
	for (unsigned k = 0; k < 4; k++) {
		unsigned f = fields[k] & 31;
		x[f] = 0;
		if (f && regs->val && regs->val[f])
			memcpy(&x[f], regs->val[f], 8);
	}
	if (in->op == TA1_OP_ECALL)
		for (unsigned r = 10; r <= 17; r++) {
			x[r] = 0;
			if (regs->val && regs->val[r])
				memcpy(&x[r], regs->val[r], 8);
		}
	struct ta1_query_ctx q = {
		.x = x,
		.chip = regs->chip,
		.nchips = regs->nchips ? regs->nchips : 1,
		.core_size = p->cfg.core_memory_bytes,
		.vmem_size = p->cfg.vmem_bytes,
		.hbm_size = p->cfg.hbm_bytes,
	};
	struct ta1_access a;
	ta1_access_query(in, &q, &a);
	out->regs_read[0] = a.regs_read;
	out->regs_written[0] = a.regs_written;
	out->fault = a.fault;
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
}

static int ta1_access(void *self, const uint8_t *code, size_t avail, uint64_t pc, const struct snr_isa_regs *regs,
		      struct snr_insn_access *out)
{
	struct ta1_plugin *p = self;
	/* every field but the regions past nmem, which no caller reads (a
	 * memset of the whole, 16 regions, was a sixth of this query's time
	 * when recording) */
	out->length = 4;
	out->cls = SNR_CLASS_SCALAR;
	memset(out->regs_read, 0, sizeof(out->regs_read));
	memset(out->regs_written, 0, sizeof(out->regs_written));
	out->nmem = 0;
	out->fault = NULL;
	out->record_outputs = false;
	if (avail < 4 || (pc & 3)) {
		out->fault = avail < 4 ? "ta1: fewer than 4 code bytes" : "ta1: pc not 4-byte aligned";
		return -1;
	}
	uint32_t w = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 | (uint32_t)code[3] << 24;
	/* decoded once per pc (isa/ta1/ta1_decode_cache.c) */
	const struct ta1_dc_slot *sl = ta1_decode_cache_get(&p->dc, pc, w, &p->sizes);
	if (sl->illegal) {
		out->fault = "ta1: illegal instruction";
		return -1;
	}
	out->cls = class_of((enum ta1_class)sl->cls);
	/* cycle, time and instret differ between the device and any replay */
	out->record_outputs = sl->cls == TA1_CLASS_CSR;
	if (sl->kind == TA1_DC_STATIC) {
		out->regs_read[0] = sl->regs_read;
		out->regs_written[0] = sl->regs_written;
		return 0;
	}
	if (sl->kind == TA1_DC_MEM) {
		/* what the query answers for an address in core memory (the
		 * region's canonical address is its own there) */
		uint64_t x[32];
		unsigned f = sl->in.rs1 & 31;
		x[f] = 0;
		if (f && regs->val && regs->val[f])
			memcpy(&x[f], regs->val[f], 8);
		struct ta1_query_ctx q = p->sizes;
		q.x = x;
		q.chip = regs->chip;
		q.nchips = regs->nchips ? regs->nchips : 1;
		struct ta1_access a;
		if (ta1_access_scalar_mem(&sl->in, &q, sl->cls == TA1_CLASS_STORE, sl->mem_size, sl->regs_read,
					  sl->regs_written, &a)) {
			const struct ta1_region *r = &a.region[0];
			out->regs_read[0] = a.regs_read;
			out->regs_written[0] = a.regs_written;
			out->nmem = 1;
			out->mem[0] = (struct snr_mem_region){.write = r->write,
							      .space = r->space,
							      .chip = r->chip,
							      .addr = r->addr,
							      .row_bytes = r->row_bytes,
							      .rows = r->rows,
							      .stride = r->stride};
			return 0;
		}
	}
	query(p, &sl->in, regs, out);
	return 0;
}

static unsigned ta1_disasm_plugin(void *self, const uint8_t *code, size_t avail, uint64_t pc, char *buf,
				  size_t len)
{
	(void)self;
	if (avail < 4) {
		snprintf(buf, len, "(no code)");
		return 0;
	}
	uint32_t w = (uint32_t)code[0] | (uint32_t)code[1] << 8 | (uint32_t)code[2] << 16 | (uint32_t)code[3] << 24;
	struct ta1_insn in;
	bool ok = ta1_decode(w, &in);
	ta1_disasm(&in, pc, buf, len);
	return ok ? 4 : 0;
}

const struct snr_isa_ops snr_isa_ta1 = {
	.abi_version = SNR_ISA_ABI_VERSION,
	.name = "ta1",
	.gdb_arch = "riscv:rv64",
	.max_insn_bytes = 4,
	.create = ta1_create,
	.destroy = ta1_destroy,
	.registers = ta1_registers,
	.access = ta1_access,
	.disasm = ta1_disasm_plugin,
};
