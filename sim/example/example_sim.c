/*
 * example_sim.c: the smallest useful simulator plugin, a walk-through of the
 * ABI in sim/snr_sim.h (docs/simulator-plugin.md explains it line by line).
 *
 * It replays TA1 traces functionally: semantics come from the device's
 * interpreter (device/ta1_machine.h, linked statically into this .so), the
 * timing is one cycle per instruction, and it reports to the tracker only
 * instruction issue and retire and register reads and writes. What it does
 * like every simulator must: it honours poisoning. The trace load marks the
 * registers and bytes it sets as valid, every instruction's writes make more
 * valid, and an instruction that reads anything else fails, naming itself.
 *
 * Build: meson builds it as build/sim/example/libsnr_example_sim.so.
 * Use:   snr replay T.snrt --sim build/sim/example/libsnr_example_sim.so
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_ranges.h"
#include "sim/snr_sim.h"

/* A test builds this file a second time with another version, to check that
 * snr refuses a plugin built against a different ABI. */
#ifndef EXAMPLE_ABI_VERSION
#define EXAMPLE_ABI_VERSION SNR_SIM_ABI_VERSION
#endif

struct snr_sim {
	struct snr_config cfg;
	struct ta1_machine *m;
	struct ta1_chip *c; /* the replayed chip */
	const struct snr_tracker *tracker;
	unsigned mask; /* snr_tracker_mask(tracker): which callbacks exist, tested once */
	struct snr_ranges valid;       /* bytes loaded or written: everything else is poisoned */
	bool reg_valid[TA1_REG_COUNT]; /* likewise for registers */
	uint64_t cycle;
	char err[512];
};

static const char *ex_error(struct snr_sim *s) { return s->err; }

static struct snr_sim *ex_create(const char *config_json, unsigned chip, unsigned nchips, char *err, size_t errlen)
{
	struct snr_sim *s = calloc(1, sizeof(*s));
	if (!s) {
		snprintf(err, errlen, "example: out of memory");
		return NULL;
	}
	snr_config_default(&s->cfg);
	if (config_json && snr_config_parse(&s->cfg, config_json, "the machine config", err, errlen))
		goto fail;
	if (nchips == 0 || chip >= nchips || nchips > TA1_MAX_CHIPS) {
		snprintf(err, errlen, "example: chip %u of %u chips", chip, nchips);
		goto fail;
	}
	s->cfg.chips = nchips; /* the peers exist so that global HBM addresses resolve */
	s->m = ta1_machine_new(&s->cfg, err, errlen);
	if (!s->m)
		goto fail;
	s->c = ta1_machine_chip(s->m, chip);
	/* Registers that are never captured because the machine defines them. */
	s->reg_valid[0] = s->reg_valid[TA1_REG_PC] = true;
	s->reg_valid[TA1_REG_CHIPID] = s->reg_valid[TA1_REG_NCHIPS] = true;
	s->reg_valid[TA1_REG_CYCLE] = s->reg_valid[TA1_REG_INSTRET] = true;
	return s;
fail:
	free(s);
	return NULL;
}

static void ex_destroy(struct snr_sim *s)
{
	if (!s)
		return;
	ta1_machine_free(s->m);
	snr_ranges_free(&s->valid);
	free(s);
}

static int ex_attach_tracker(struct snr_sim *s, const struct snr_tracker *t)
{
	if (t && (t->abi_version < 1 || t->abi_version > SNR_TRACKER_ABI_VERSION)) {
		snprintf(s->err, sizeof(s->err), "example: tracker ABI version %u, this plugin knows 1 to %d",
			 t->abi_version, SNR_TRACKER_ABI_VERSION);
		return -1;
	}
	s->tracker = t;
	s->mask = snr_tracker_mask(t);
	return 0;
}

/* TA1 registers are all 8 bytes (the META table says so); numbering is
 * enum ta1_reg_id, which is the order of the META table of a TA1 trace. */
static int ex_set_reg(struct snr_sim *s, unsigned reg, const uint8_t *val, unsigned size)
{
	uint64_t v;
	if (reg >= TA1_REG_COUNT || size != 8) {
		snprintf(s->err, sizeof(s->err), "example: no register %u of %u bytes", reg, size);
		return -1;
	}
	memcpy(&v, val, 8);
	if (reg == TA1_REG_CHIPID || reg == TA1_REG_NCHIPS || reg == TA1_REG_CYCLE || reg == TA1_REG_INSTRET)
		return 0; /* the machine's own */
	if (ta1_chip_set_reg(s->c, reg, v)) {
		snprintf(s->err, sizeof(s->err), "example: register %u cannot be set", reg);
		return -1;
	}
	s->reg_valid[reg] = true;
	return 0;
}

/* Fails for a register with no value to compare with the device's: one
 * never captured nor written, and the counters, which count this plugin's
 * cycles, not the device's. The end-state check skips those. */
static int ex_get_reg(struct snr_sim *s, unsigned reg, uint8_t *val, unsigned size)
{
	if (reg >= TA1_REG_COUNT || size != 8 || !s->reg_valid[reg] || reg == TA1_REG_CYCLE ||
	    reg == TA1_REG_INSTRET) {
		snprintf(s->err, sizeof(s->err), "example: register %u has no value comparable with the device", reg);
		return -1;
	}
	uint64_t v = ta1_chip_get_reg(s->c, reg);
	memcpy(val, &v, 8);
	return 0;
}

/* TA1 addresses name their memory themselves (docs/ta1-isa.md, memory map),
 * so space and chip only key the valid-bytes map. */
static int ex_load_mem(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, const void *data, uint64_t len)
{
	if (ta1_chip_write_mem(s->c, addr, data, len) != len) {
		snprintf(s->err, sizeof(s->err), "example: cannot load %llu bytes at 0x%llx", (unsigned long long)len,
			 (unsigned long long)addr);
		return -1;
	}
	snr_ranges_add(&s->valid, snr_ranges_key(space, chip), addr, addr + len);
	return 0;
}

static int ex_read_mem(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, void *data, uint64_t len)
{
	(void)space, (void)chip;
	if (ta1_chip_read_mem(s->c, addr, data, len) != len) {
		snprintf(s->err, sizeof(s->err), "example: cannot read %llu bytes at 0x%llx", (unsigned long long)len,
			 (unsigned long long)addr);
		return -1;
	}
	return 0;
}

static int ex_load_code(struct snr_sim *s, uint64_t pc, const uint8_t *code, unsigned len)
{
	return ex_load_mem(s, TA1_SPACE_CORE, (uint16_t)ta1_chip_id(s->c), pc, code, len);
}

/* Does the instruction read a register or a byte that is poisoned? The
 * operand-access query (isa/ta1) names everything it will touch. */
static int check_poison(struct snr_sim *s, uint64_t index, uint64_t pc, const struct ta1_insn *in,
			const struct ta1_query_ctx *q, const struct ta1_access *a)
{
	char dis[96]; /* formatted only on failure: this runs for every instruction */
	for (unsigned r = 1; r < TA1_REG_COUNT; r++)
		if ((a->regs_read >> r & 1) && !s->reg_valid[r]) {
			ta1_disasm(in, pc, dis, sizeof(dis));
			snprintf(s->err, sizeof(s->err),
				 "instruction %llu (pc 0x%llx: %s) reads register %u, which is poisoned (never "
				 "captured nor written)",
				 (unsigned long long)index, (unsigned long long)pc, dis, r);
			return -1;
		}
	for (unsigned i = 0; i < a->nregions; i++) {
		const struct ta1_region *g = &a->region[i];
		uint64_t base = ta1_region_canonical(q, g);
		for (uint64_t row = 0; !g->write && row < g->rows; row++) {
			uint64_t lo = base + (uint64_t)((int64_t)row * g->stride);
			struct snr_range *miss = NULL;
			size_t nmiss = 0, cap = 0;
			snr_ranges_missing(&s->valid, snr_ranges_key(g->space, g->chip), lo, lo + g->row_bytes, &miss,
					   &nmiss, &cap);
			if (nmiss) {
				ta1_disasm(in, pc, dis, sizeof(dis));
				snprintf(s->err, sizeof(s->err),
					 "instruction %llu (pc 0x%llx: %s) reads %llu poisoned bytes at 0x%llx (never "
					 "captured nor written)",
					 (unsigned long long)index, (unsigned long long)pc, dis,
					 (unsigned long long)(miss[0].hi - miss[0].lo), (unsigned long long)miss[0].lo);
				free(miss);
				return -1;
			}
		}
	}
	return 0;
}

static void report_regs(struct snr_sim *s, uint64_t index, uint64_t set, uint8_t write)
{
	for (unsigned r = 0; r < TA1_REG_COUNT; r++)
		if (r != TA1_REG_PC && (set >> r & 1)) {
			struct snr_ev_reg e = {.index = index, .reg = (uint16_t)r, .write = write};
			s->tracker->on_reg(s->tracker->user, &e);
		}
}

static int ex_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out)
{
	struct ta1_chip *c = s->c;
	uint64_t pc = ta1_chip_get_reg(c, TA1_REG_PC), x[32];
	uint32_t word = 0;
	struct ta1_insn in;
	memset(out, 0, sizeof(*out));
	out->pc = pc;
	if (ta1_chip_read_mem(c, pc, &word, 4) != 4 || !ta1_decode(word, &in)) {
		snprintf(s->err, sizeof(s->err), "instruction %llu: no valid instruction at pc 0x%llx",
			 (unsigned long long)index, (unsigned long long)pc);
		return -1;
	}
	/* What the instruction will read and write, from the registers before it. */
	for (unsigned r = 0; r < 32; r++)
		x[r] = ta1_chip_get_reg(c, r);
	struct ta1_query_ctx q;
	struct ta1_access a;
	ta1_chip_query_ctx(c, &q);
	q.x = x;
	ta1_access_query(&in, &q, &a);
	if (check_poison(s, index, pc, &in, &q, &a))
		return -1;

	/* One cycle per instruction: issue at `cycle`, retire at `cycle + 1`. */
	struct snr_ev_insn ev = {.index = index, .pc = pc, .issue = s->cycle, .retire = s->cycle + 1,
				 .unit = SNR_UNIT_SCALAR, .cls = (uint8_t)ta1_insn_table[in.op].cls};
	if (s->mask & SNR_TRACK_ISSUE)
		s->tracker->on_issue(s->tracker->user, &ev);
	ta1_chip_set_cycle(c, s->cycle);
	enum ta1_stop st = ta1_chip_step(c);
	if (st == TA1_STOP_FAULT || st == TA1_STOP_EBREAK || st == TA1_STOP_BLOCKED) {
		snprintf(s->err, sizeof(s->err), "instruction %llu: %s", (unsigned long long)index,
			 st == TA1_STOP_FAULT ? ta1_chip_fault(c)
			 : st == TA1_STOP_EBREAK ? "ebreak"
						  : "ta.wait for completions another chip signalled during the recording");
		return -1;
	}
	out->next_pc = st == TA1_STOP_EXIT ? pc + 4 : ta1_chip_get_reg(c, TA1_REG_PC);
	out->exited = st == TA1_STOP_EXIT;
	out->exit_code = out->exited ? ta1_chip_exit_code(c) : 0;
	s->cycle++;
	if (s->mask & SNR_TRACK_RETIRE)
		s->tracker->on_retire(s->tracker->user, &ev);
	if (s->mask & SNR_TRACK_REG) {
		report_regs(s, index, a.regs_read, 0);
		report_regs(s, index, a.regs_written, 1);
	}

	/* What it wrote is valid from now on. */
	for (unsigned r = 1; r < TA1_REG_COUNT; r++)
		if (a.regs_written >> r & 1)
			s->reg_valid[r] = true;
	for (unsigned i = 0; i < a.nregions; i++) {
		const struct ta1_region *g = &a.region[i];
		uint64_t base = ta1_region_canonical(&q, g);
		for (uint64_t row = 0; g->write && row < g->rows; row++) {
			uint64_t lo = base + (uint64_t)((int64_t)row * g->stride);
			snr_ranges_add(&s->valid, snr_ranges_key(g->space, g->chip), lo, lo + g->row_bytes);
		}
	}
	return 0;
}

static uint64_t ex_finish(struct snr_sim *s) { return s->cycle; } /* nothing is ever in flight */

/* The one symbol snr looks up (dlsym "snr_sim_plugin"). */
__attribute__((visibility("default"))) const struct snr_sim_ops snr_sim_plugin = {
	.abi_version = EXAMPLE_ABI_VERSION,
	.name = "example",
	.isa = "ta1",
	.create = ex_create,
	.destroy = ex_destroy,
	.error = ex_error,
	.attach_tracker = ex_attach_tracker,
	.set_reg = ex_set_reg,
	.get_reg = ex_get_reg,
	.load_mem = ex_load_mem,
	.read_mem = ex_read_mem,
	.load_code = ex_load_code,
	.step = ex_step,
	.finish = ex_finish,
};
