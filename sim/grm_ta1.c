/*
 * grm_ta1.c: the TA1 golden reference model behind the simulator ABI.
 *
 * Semantics are the device's (a ta1_machine with the replayed chip and its
 * peers, so global HBM addresses resolve exactly as on the device); timing is
 * sim/ta1_timing.c; the operand-access query, computed before each step,
 * feeds both the timing model and the poison check. Bytes and registers are
 * valid once the trace loaded them or the window wrote them; an instruction
 * that reads anything else fails with the instruction, the address and the
 * size named, because a complete recording never lets that happen.
 */
#include <fcntl.h>
#include <stdbool.h>
#include <sys/mman.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_ranges.h"
#include "lib/snr_util.h"
#include "sim/grm_ta1.h"
#include "sim/snr_sim.h"
#include "sim/ta1_fabric.h"
#include "sim/ta1_timing.h"

/* Decode cache: one slot per 4-byte word of core memory, valid while the
 * word it was decoded from is still there (a slot checks its word on every
 * fetch, so code the window overwrites is decoded again). It is the only
 * decode of a step: the chip executes the slot's instruction
 * (ta1_chip_step_known) rather than looking it up in its own cache.
 * Instructions whose operand access does not depend on register values (ALU,
 * multiply, divide, branches, jumps) keep their access in the slot; scalar
 * loads and stores keep their registers and compute their one region
 * (ta1_access_scalar_mem, the query's answer for an address in core memory);
 * the others ask the query each time. */
enum { SLOT_EMPTY, SLOT_STATIC, SLOT_MEM, SLOT_DYNAMIC };
struct slot {
	uint32_t word;
	uint8_t kind;
	uint8_t cls;
	uint8_t mem_size;
	bool rare; /* Xta (DMA, WAIT, vector or matrix: timed from the registers
		    * before it) or CSR (reads the model's clock) */
	bool timing_pre; /* static or mem, and tp holds what the timing model takes from it */
	struct ta1_timing_pre tp;
	struct ta1_insn in;
	uint64_t regs_read, regs_written;
} __attribute__((aligned(64))); /* a cache line, found by a shift */

/* Recently confirmed ranges of valid (captured or written) bytes: subsets of
 * `valid`, which only grows, so a hit needs no lookup. */
#define VALID_CACHE 8
struct valid_hit {
	uint32_t key;
	uint64_t lo, hi;
};

struct snr_sim {
	struct snr_config cfg;
	struct ta1_machine *m;
	struct ta1_chip *c;
	unsigned chip;
	struct ta1_timing_model *timing;
	bool functional_only; /* no timing model (bench/: the functional-only rate) */
	const struct snr_tracker *tracker;
	struct snr_ranges valid;
	struct valid_hit hits[VALID_CACHE];
	unsigned next_hit; /* the next to replace */
	/* the last that answered for a read (the poison check) and for a write
	 * (valid_add): a copy loop's reads and writes each stay in one range */
	unsigned last_hit[2];
	uint64_t reg_valid; /* bit r: register r was loaded or written (ta1_reg_id) */
	const uint8_t *core;
	uint64_t core_size;
	uint64_t last_word; /* (core_size - 4) / 4: the last slot */
	struct slot *slots;
	struct ta1_query_ctx q;
	int null_fd;
	bool flags_seeded;
	bool seed_flags; /* with the timing model, flags not seeded yet */
	/* A pod's chip (ta1_grm_new_pod): the machine and fabric are the pod's,
	 * HBM captures and reads go through the pod's hooks, and a WAIT the
	 * machine blocks returns with `blocked` set instead of failing. */
	const struct ta1_grm_pod_hooks *pod;
	struct ta1_fabric *fabric;
	bool blocked;
	char err[600];
};

static const char *grm_error(struct snr_sim *s) { return s->err; }

static struct snr_sim *grm_create(const char *config_json, unsigned chip, unsigned nchips, char *err, size_t errlen)
{
	struct snr_sim *s = snr_xcalloc(1, sizeof(*s));
	s->null_fd = -1;
	snr_config_default(&s->cfg);
	if (config_json && snr_config_parse(&s->cfg, config_json, "the machine config", err, errlen))
		goto fail;
	if (nchips == 0 || chip >= nchips || nchips > TA1_MAX_CHIPS) {
		snr_fmt(err, errlen, "ta1: chip %u of %u chips", chip, nchips);
		goto fail;
	}
	s->cfg.chips = nchips;
	s->chip = chip;
	s->m = ta1_machine_new(&s->cfg, err, errlen);
	if (!s->m)
		goto fail;
	s->c = ta1_machine_chip(s->m, chip);
	s->core = ta1_chip_core(s->c, &s->core_size);
	s->last_word = (s->core_size - 4) >> 2;
	s->slots = mmap(NULL, s->core_size / 4 * sizeof(*s->slots), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->slots == MAP_FAILED) {
		s->slots = NULL;
		snr_fmt(err, errlen, "ta1: cannot map the decode cache for %llu bytes of core memory",
			(unsigned long long)s->core_size);
		ta1_machine_free(s->m);
		goto fail;
	}
	ta1_chip_query_ctx(s->c, &s->q);
	/* The replayed program's writes go nowhere but must succeed as on the device. */
	s->null_fd = open("/dev/null", O_WRONLY | O_CLOEXEC);
	ta1_machine_set_output(s->m, s->null_fd, s->null_fd);
	s->timing = ta1_timing_new(&s->cfg, NULL, chip);
	s->seed_flags = true;
	s->reg_valid = 1ull << 0 | 1ull << TA1_REG_PC | 1ull << TA1_REG_CHIPID | 1ull << TA1_REG_NCHIPS |
		       1ull << TA1_REG_CYCLE | 1ull << TA1_REG_INSTRET;
	return s;
fail:
	free(s);
	return NULL;
}

static void grm_destroy(struct snr_sim *s)
{
	if (!s)
		return;
	ta1_timing_free(s->timing);
	if (!s->pod)
		ta1_machine_free(s->m);
	if (s->slots)
		munmap(s->slots, s->core_size / 4 * sizeof(*s->slots));
	snr_ranges_free(&s->valid);
	if (s->null_fd >= 0)
		close(s->null_fd);
	free(s);
}

static int grm_attach_tracker(struct snr_sim *s, const struct snr_tracker *t)
{
	s->tracker = t;
	ta1_timing_free(s->timing);
	s->timing = s->pod ? ta1_timing_new_pod(s->fabric, t, s->chip) : ta1_timing_new(&s->cfg, t, s->chip);
	return 0;
}

static int grm_set_reg(struct snr_sim *s, unsigned reg, const uint8_t *val, unsigned size)
{
	uint64_t v = 0;
	if (reg >= TA1_REG_COUNT || size != 8) {
		snr_fmt(s->err, sizeof(s->err), "ta1: no register %u of %u bytes", reg, size);
		return -1;
	}
	memcpy(&v, val, 8);
	if (reg == TA1_REG_CHIPID || reg == TA1_REG_NCHIPS) {
		if (v != ta1_chip_get_reg(s->c, reg)) {
			snr_fmt(s->err, sizeof(s->err), "ta1: the trace says %s = %llu, the simulator has %llu",
				reg == TA1_REG_CHIPID ? "chipid" : "nchips", (unsigned long long)v,
				(unsigned long long)ta1_chip_get_reg(s->c, reg));
			return -1;
		}
		return 0;
	}
	if (reg == TA1_REG_CYCLE || reg == TA1_REG_INSTRET)
		return 0; /* counters are the model's own */
	if (ta1_chip_set_reg(s->c, reg, v)) {
		snr_fmt(s->err, sizeof(s->err), "ta1: register %u cannot be set", reg);
		return -1;
	}
	s->reg_valid |= 1ull << reg;
	return 0;
}

static int grm_get_reg(struct snr_sim *s, unsigned reg, uint8_t *val, unsigned size)
{
	if (reg >= TA1_REG_COUNT || size != 8) {
		snr_fmt(s->err, sizeof(s->err), "ta1: no register %u of %u bytes", reg, size);
		return -1;
	}
	if (!((s->reg_valid >> reg) & 1) || reg == TA1_REG_CYCLE || reg == TA1_REG_INSTRET) {
		snr_fmt(s->err, sizeof(s->err), "ta1: register %u has no value comparable with the device", reg);
		return -1;
	}
	uint64_t v = ta1_chip_get_reg(s->c, reg);
	memcpy(val, &v, 8);
	return 0;
}

static int grm_load_mem(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, const void *data,
			uint64_t len)
{
	if (s->pod && space == TA1_SPACE_HBM) { /* the pod places it at this chip's first read */
		s->pod->defer(s->pod->user, s->chip, chip, addr, data, len);
		snr_ranges_add(&s->valid, snr_ranges_key(space, chip), addr, addr + len);
		return 0;
	}
	if (ta1_chip_write_mem(s->c, addr, data, len) != len) {
		snr_fmt(s->err, sizeof(s->err), "ta1: cannot load %llu bytes at 0x%llx: not inside one memory",
			(unsigned long long)len, (unsigned long long)addr);
		return -1;
	}
	snr_ranges_add(&s->valid, snr_ranges_key(space, chip), addr, addr + len);
	return 0;
}

static int grm_read_mem(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, void *data, uint64_t len)
{
	(void)space;
	(void)chip;
	if (ta1_chip_read_mem(s->c, addr, data, len) != len) {
		snr_fmt(s->err, sizeof(s->err), "ta1: cannot read %llu bytes at 0x%llx", (unsigned long long)len,
			(unsigned long long)addr);
		return -1;
	}
	return 0;
}

static int grm_load_code(struct snr_sim *s, uint64_t pc, const uint8_t *code, unsigned len)
{
	if (ta1_chip_write_mem(s->c, pc, code, len) != len) {
		snr_fmt(s->err, sizeof(s->err), "ta1: code at 0x%llx is outside core memory", (unsigned long long)pc);
		return -1;
	}
	snr_ranges_add(&s->valid, snr_ranges_key(TA1_SPACE_CORE, s->chip), pc, pc + len);
	return 0;
}

/* [lo, hi) of key lies inside one valid range: from the recent hits, else
 * from the set (remembering the range found). */
static inline bool valid_covers(struct snr_sim *s, uint32_t key, uint64_t lo, uint64_t hi, int write)
{
	const struct valid_hit *h = &s->hits[s->last_hit[write]]; /* consecutive accesses mostly share one */
	if (h->key == key && lo >= h->lo && hi <= h->hi && h->hi > h->lo)
		return true;
	for (unsigned i = 0; i < VALID_CACHE; i++) {
		h = &s->hits[i];
		if (h->key == key && lo >= h->lo && hi <= h->hi && h->hi > h->lo) {
			s->last_hit[write] = i;
			return true;
		}
	}
	struct snr_range r;
	if (!snr_ranges_find(&s->valid, key, lo, &r) || hi > r.hi)
		return false;
	s->hits[s->next_hit] = (struct valid_hit){key, r.lo, r.hi};
	s->last_hit[write] = s->next_hit;
	s->next_hit = (s->next_hit + 1) % VALID_CACHE;
	return true;
}

/* ta1_region_canonical without the call for the spaces it returns as given. */
static inline uint64_t canonical(const struct snr_sim *s, const struct ta1_region *g)
{
	return g->space == TA1_SPACE_HBM ? ta1_region_canonical(&s->q, g) : g->addr;
}

static void valid_add(struct snr_sim *s, uint32_t key, uint64_t lo, uint64_t hi)
{
	if (hi <= lo || valid_covers(s, key, lo, hi, 1))
		return;
	snr_ranges_add(&s->valid, key, lo, hi);
}

static int poisoned(struct snr_sim *s, uint64_t index, uint64_t pc, const struct ta1_insn *in,
		    const struct ta1_access *a)
{
	char dis[96]; /* formatted only on failure: this runs for every instruction */
	uint64_t unknown = a->regs_read & ~s->reg_valid & ~1ull;
	if (unknown) {
		unsigned r = (unsigned)__builtin_ctzll(unknown);
		ta1_disasm(in, pc, dis, sizeof(dis));
		snr_fmt(s->err, sizeof(s->err),
			"instruction %llu (pc 0x%llx: %s) reads register %u, which the trace neither captured "
			"nor saw written: the recording is incomplete",
			(unsigned long long)index, (unsigned long long)pc, dis, r);
		return -1;
	}
	for (unsigned i = 0; i < a->nregions; i++) {
		const struct ta1_region *g = &a->region[i];
		if (g->write || !g->rows)
			continue;
		uint64_t base = canonical(s, g);
		uint32_t key = snr_ranges_key(g->space, g->chip);
		for (uint64_t row = 0; row < g->rows; row++) {
			uint64_t lo = base + (uint64_t)((int64_t)row * g->stride);
			if (valid_covers(s, key, lo, lo + g->row_bytes, 0))
				continue;
			struct snr_range *miss = NULL;
			size_t nmiss = 0, cap = 0;
			snr_ranges_missing(&s->valid, key, lo, lo + g->row_bytes, &miss, &nmiss, &cap);
			if (!nmiss) { /* valid, but across ranges that touch without merging */
				free(miss);
				continue;
			}
			ta1_disasm(in, pc, dis, sizeof(dis));
			snr_fmt(s->err, sizeof(s->err),
				"instruction %llu (pc 0x%llx: %s) reads %llu bytes at 0x%llx that the trace did not "
				"capture (poisoned): the recording is incomplete",
				(unsigned long long)index, (unsigned long long)pc, dis,
				(unsigned long long)(miss[0].hi - miss[0].lo), (unsigned long long)miss[0].lo);
			free(miss);
			return -1;
		}
	}
	return 0;
}

/* The bytes an executed instruction wrote are valid from now on. */
static __attribute__((noinline)) void note_writes(struct snr_sim *s, const struct ta1_access *a)
{
	for (unsigned i = 0; i < a->nregions; i++) {
		const struct ta1_region *g = &a->region[i];
		if (!g->write || !g->rows)
			continue;
		uint64_t base = canonical(s, g);
		uint32_t key = snr_ranges_key(g->space, g->chip);
		bool shared = s->pod && g->space == TA1_SPACE_HBM;
		if (g->rows == 1 || g->stride == (int64_t)g->row_bytes) {
			valid_add(s, key, base, base + g->row_bytes * g->rows);
			if (shared)
				s->pod->wrote(s->pod->user, g->chip, base, base + g->row_bytes * g->rows);
			continue;
		}
		for (uint64_t row = 0; row < g->rows; row++) {
			uint64_t lo = base + (uint64_t)((int64_t)row * g->stride);
			valid_add(s, key, lo, lo + g->row_bytes);
			if (shared)
				s->pod->wrote(s->pod->user, g->chip, lo, lo + g->row_bytes);
		}
	}
}

/* A pod's chip: every HBM row the instruction reads, before it runs, handed
 * to the pod (which places the chip's captured bytes there, or checks them
 * against what the pod's replay holds). */
static __attribute__((noinline)) int pod_reads(struct snr_sim *s, uint64_t index, uint64_t pc,
					       const struct ta1_insn *in, const struct ta1_access *a)
{
	for (unsigned i = 0; i < a->nregions; i++) {
		const struct ta1_region *g = &a->region[i];
		if (g->write || !g->rows || g->space != TA1_SPACE_HBM)
			continue;
		uint64_t base = canonical(s, g);
		for (uint64_t row = 0; row < g->rows; row++) {
			uint64_t lo = base + (uint64_t)((int64_t)row * g->stride);
			if (s->pod->read(s->pod->user, s->chip, index, pc, in, g->chip, lo, lo + g->row_bytes, s->err,
					 sizeof(s->err)))
				return -1;
		}
	}
	return 0;
}

/* The access of the instruction in a slot that still holds the word at pc. */
static inline __attribute__((always_inline)) void slot_access(struct snr_sim *s, const struct slot *sl,
								struct ta1_access *a)
{
	if (sl->kind == SLOT_STATIC) {
		a->regs_read = sl->regs_read;
		a->regs_written = sl->regs_written;
		a->nregions = 0;
		a->fault = NULL;
		a->fault_region = 0;
	} else if (sl->kind != SLOT_MEM ||
		   !ta1_access_scalar_mem(&sl->in, &s->q, sl->cls == TA1_CLASS_STORE, sl->mem_size, sl->regs_read,
					  sl->regs_written, a)) {
		ta1_access_query(&sl->in, &s->q, a);
	}
}

/* The decoded instruction at pc and its access when its slot does not hold
 * the word in memory: decoded (into the slot, *slp, when pc is in core
 * memory and aligned, else into buf with *slp NULL) and queried. NULL if pc
 * holds no valid instruction (or lies in no memory: the step then faults). */
static __attribute__((noinline)) const struct ta1_insn *fetch_slow(struct snr_sim *s, uint64_t pc,
								   struct ta1_insn *buf, struct ta1_access *a,
								   const struct slot **slp)
{
	uint64_t off = pc - TA1_CORE_BASE;
	uint32_t w;
	struct slot *sl = NULL;
	*slp = NULL;
	if (off <= s->core_size - 4 && !(pc & 3)) {
		memcpy(&w, s->core + off, 4);
		sl = &s->slots[off >> 2];
	} else if (ta1_chip_read_mem(s->c, pc, &w, 4) != 4) {
		return NULL;
	}
	if (!ta1_decode(w, buf))
		return NULL;
	unsigned cls = ta1_insn_table[buf->op].cls;
	ta1_access_query(buf, &s->q, a);
	if (!sl)
		return buf;
	bool fixed = (cls == TA1_CLASS_ALU || cls == TA1_CLASS_MUL || cls == TA1_CLASS_DIV ||
		      cls == TA1_CLASS_BRANCH || cls == TA1_CLASS_JUMP) &&
		     a->nregions == 0 && !a->fault;
	bool mem = cls == TA1_CLASS_LOAD || cls == TA1_CLASS_STORE;
	struct ta1_timing_pre tp = {0}; /* copied into the slot even when unused */
	bool timing_pre = (fixed || mem) && ta1_timing_pre_of(buf, a, &tp);
	*sl = (struct slot){.word = w,
			    .kind = fixed ? SLOT_STATIC : mem ? SLOT_MEM : SLOT_DYNAMIC,
			    .cls = (uint8_t)cls,
			    .mem_size = ta1_insn_table[buf->op].mem_size,
			    .rare = ta1_class_is_xta((enum ta1_class)cls) || cls == TA1_CLASS_CSR,
			    .timing_pre = timing_pre,
			    .tp = tp,
			    .in = *buf,
			    .regs_read = a->regs_read,
			    .regs_written = a->regs_written};
	*slp = sl;
	return &sl->in;
}

static __attribute__((noinline)) void seed_flags(struct snr_sim *s)
{
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		for (uint64_t k = ta1_chip_get_reg(s->c, TA1_REG_FLAG0 + f); k > 0; k--)
			ta1_timing_pre_window_dma(s->timing, f, 0, TA1_SPACE_HBM, TA1_SPACE_VMEM);
	s->flags_seeded = true;
	s->seed_flags = false;
}

/* Executes the instruction at pc, the chip's current pc. Inlined into the
 * run loop: it is most of what the replay does per instruction. */
static inline __attribute__((always_inline)) int step_one(struct snr_sim *s, uint64_t index, uint64_t pc,
							  struct snr_sim_step *out)
{
	struct ta1_chip *c = s->c;
	struct ta1_insn buf;
	struct ta1_access a;
	const struct slot *sl = NULL;
	const struct ta1_insn *in = NULL;
	out->pc = pc;
	out->exited = false;
	out->exit_code = 0;
	uint64_t off = pc - TA1_CORE_BASE;
	/* off / 4 with off's two low bits on top: one compare finds an aligned pc
	 * in core memory */
	uint64_t word = off >> 2 | off << 62;
	if (__builtin_expect(word <= s->last_word, 1)) {
		uint32_t w;
		memcpy(&w, s->core + off, 4);
		sl = &s->slots[word];
		if (__builtin_expect(sl->kind != SLOT_EMPTY && sl->word == w, 1)) {
			slot_access(s, sl, &a);
			in = &sl->in;
		}
	}
	if (__builtin_expect(!in, 0))
		in = fetch_slow(s, pc, &buf, &a, &sl);
	if (!in) {
		uint32_t w = 0;
		ta1_chip_read_mem(c, pc, &w, 4);
		snr_fmt(s->err, sizeof(s->err), "instruction %llu: no valid instruction at pc 0x%llx (0x%08x)",
			(unsigned long long)index, (unsigned long long)pc, w);
		return -1;
	}
	if (a.regs_read & ~s->reg_valid & ~1ull) {
		if (poisoned(s, index, pc, in, &a))
			return -1;
	} else if (a.nregions) { /* a scalar load's one region in core memory is checked here */
		const struct ta1_region *g = &a.region[0];
		if (a.nregions != 1 || g->space != TA1_SPACE_CORE || g->rows != 1 ||
		    (!g->write && !valid_covers(s, snr_ranges_key(TA1_SPACE_CORE, g->chip), g->addr,
						g->addr + g->row_bytes, 0)))
			if (poisoned(s, index, pc, in, &a))
				return -1;
	}
	if (__builtin_expect(s->pod != NULL, 0) && a.nregions && pod_reads(s, index, pc, in, &a))
		return -1;
	/* The timing model reads the registers an Xta instruction names as they
	 * were before it executed; scalar instructions it times from their
	 * access alone. */
	uint64_t before[32];
	const uint64_t *x = s->q.x;
	if (__builtin_expect(sl ? sl->rare : true, 0)) {
		const unsigned cls = ta1_insn_table[in->op].cls;
		if (ta1_class_is_xta((enum ta1_class)cls)) {
			memcpy(before, s->q.x, sizeof(before));
			x = before;
		}
		if (cls == TA1_CLASS_CSR && !s->functional_only) /* the cycle CSR reads the model's clock */
			ta1_chip_set_cycle(c, ta1_timing_now(s->timing));
	}
	/* Flags captured at the window's start are completions of DMAs issued
	 * before it; the timing model learns of them once. */
	if (__builtin_expect(s->seed_flags, 0))
		seed_flags(s);
	/* The chip runs the slot's decode, and an Xta instruction the query's
	 * answer (a dynamic slot or a fresh decode): it need not decode or query
	 * again. Outside core memory the chip's own step faults on the fetch. */
	enum ta1_stop st;
	uint64_t next_pc; /* not out->next_pc: out stays the caller's local, in registers */
	if (__builtin_expect(sl != NULL, 1)) {
		st = ta1_chip_step_known(c, in, &a, &next_pc);
	} else {
		st = ta1_chip_step(c);
		next_pc = ta1_chip_get_reg(c, TA1_REG_PC);
	}
	out->next_pc = next_pc;
	if (__builtin_expect(st != TA1_STOP_BUDGET, 0)) {
		s->blocked = false; /* ta1_grm_waits_on_peer: this step's */
		if (st == TA1_STOP_FAULT) {
			snr_fmt(s->err, sizeof(s->err), "instruction %llu faults: %s", (unsigned long long)index,
				ta1_chip_fault(c));
			return -1;
		}
		if (st == TA1_STOP_EBREAK) {
			snr_fmt(s->err, sizeof(s->err), "instruction %llu at pc 0x%llx is an ebreak",
				(unsigned long long)index, (unsigned long long)pc);
			return -1;
		}
		if (st == TA1_STOP_BLOCKED && s->pod) { /* a peer has not signalled yet: nothing ran */
			s->blocked = true;
			out->next_pc = pc;
			return 0;
		}
		if (st == TA1_STOP_BLOCKED) {
			s->blocked = true; /* ta1_grm_waits_on_peer */
			snr_fmt(s->err, sizeof(s->err),
				"instruction %llu at pc 0x%llx waits for more completions than its flag holds: another "
				"chip signalled them during the recording (ta.dma.notify), which this chip's window does "
				"not hold",
				(unsigned long long)index, (unsigned long long)pc);
			return -1;
		}
		if (st == TA1_STOP_EXIT) {
			out->exited = true;
			out->exit_code = ta1_chip_exit_code(c);
			out->next_pc = pc + 4;
		}
	}
	if (!s->functional_only) {
		if (sl && sl->timing_pre && !a.fault) /* a scalar instruction whose registers the slot lists */
			ta1_timing_scalar_insn(s->timing, index, pc, &sl->tp, &a, out->next_pc);
		else
			ta1_timing_insn(s->timing, index, pc, in, &a, x, out->next_pc);
	}
	s->reg_valid |= a.regs_written;
	if (a.nregions && (a.nregions > 1 || a.region[0].write)) /* not for a load's one region */
		note_writes(s, &a);
	return 0;
}

static int grm_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out)
{
	return step_one(s, index, ta1_chip_get_reg(s->c, TA1_REG_PC), out);
}

static int grm_run(struct snr_sim *s, uint64_t first, uint64_t n, const uint64_t *pcs, struct snr_sim_run *out)
{
	memset(out, 0, sizeof(*out));
	uint64_t pc = ta1_chip_get_reg(s->c, TA1_REG_PC), i;
	int rc = 0;
	/* done and next_pc are written once, when the loop ends */
	for (i = 0; i < n; i++) {
		if (pc != pcs[i]) {
			out->diverged = true;
			out->pc = pc;
			break;
		}
		struct snr_sim_step st;
		if (step_one(s, first + i, pc, &st)) {
			rc = -1;
			break;
		}
		pc = st.next_pc;
		if (st.exited) {
			out->exited = true;
			out->exit_code = st.exit_code;
			i++;
			break;
		}
	}
	out->done = i;
	if (i)
		out->next_pc = pc; /* the pc after the last instruction executed */
	return rc;
}

void ta1_grm_set_functional_only(struct snr_sim *s, bool on)
{
	s->functional_only = on;
	s->seed_flags = !on && !s->flags_seeded;
}

static uint64_t grm_finish(struct snr_sim *s) { return ta1_timing_drain(s->timing); }

struct snr_sim *ta1_grm_new_pod(struct ta1_machine *m, struct ta1_fabric *fabric, unsigned chip,
				const struct ta1_grm_pod_hooks *hooks, char *err, size_t errlen)
{
	if (chip >= ta1_machine_nchips(m)) {
		snr_fmt(err, errlen, "ta1: chip %u of a pod of %u chips", chip, ta1_machine_nchips(m));
		return NULL;
	}
	struct snr_sim *s = snr_xcalloc(1, sizeof(*s));
	s->null_fd = -1;
	s->cfg = *ta1_machine_config(m);
	s->chip = chip;
	s->m = m;
	s->pod = hooks;
	s->fabric = fabric;
	s->c = ta1_machine_chip(m, chip);
	s->core = ta1_chip_core(s->c, &s->core_size);
	s->last_word = (s->core_size - 4) >> 2;
	s->slots = mmap(NULL, s->core_size / 4 * sizeof(*s->slots), PROT_READ | PROT_WRITE,
			MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (s->slots == MAP_FAILED) {
		snr_fmt(err, errlen, "ta1: cannot map the decode cache for %llu bytes of core memory",
			(unsigned long long)s->core_size);
		free(s);
		return NULL;
	}
	ta1_chip_query_ctx(s->c, &s->q);
	s->timing = ta1_timing_new_pod(fabric, NULL, chip);
	s->seed_flags = true;
	/* the flags are the pod's (set from the manifest's flags_at_start) */
	s->reg_valid = 1ull << 0 | 1ull << TA1_REG_PC | 1ull << TA1_REG_CHIPID | 1ull << TA1_REG_NCHIPS |
		       1ull << TA1_REG_CYCLE | 1ull << TA1_REG_INSTRET;
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		s->reg_valid |= 1ull << (TA1_REG_FLAG0 + f);
	return s;
}

void ta1_grm_pod_seed_flags(struct snr_sim *s)
{
	if (s->seed_flags)
		seed_flags(s);
}

bool ta1_grm_waits_on_peer(const struct snr_sim *s) { return s->blocked; }

int ta1_grm_pod_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out, bool *blocked)
{
	s->blocked = false;
	int rc = step_one(s, index, ta1_chip_get_reg(s->c, TA1_REG_PC), out);
	*blocked = s->blocked;
	return rc;
}

const struct ta1_insn *ta1_grm_pod_insn(struct snr_sim *s, uint64_t pc, struct ta1_insn *buf)
{
	uint64_t off = pc - TA1_CORE_BASE, word = off >> 2 | off << 62; /* as step_one */
	if (__builtin_expect(word <= s->last_word, 1)) {
		uint32_t w;
		memcpy(&w, s->core + off, 4);
		const struct slot *sl = &s->slots[word];
		if (__builtin_expect(sl->kind != SLOT_EMPTY && sl->word == w, 1))
			return &sl->in;
	}
	uint32_t w;
	if (ta1_chip_read_mem(s->c, pc, &w, 4) != 4 || !ta1_decode(w, buf))
		return NULL;
	return buf;
}

struct ta1_timing_model *ta1_grm_timing(struct snr_sim *s) { return s->timing; }
struct ta1_chip *ta1_grm_chip(struct snr_sim *s) { return s->c; }

const struct snr_sim_ops snr_sim_ta1 = {
	.abi_version = SNR_SIM_ABI_VERSION,
	.name = "ta1",
	.isa = "ta1",
	.create = grm_create,
	.destroy = grm_destroy,
	.error = grm_error,
	.attach_tracker = grm_attach_tracker,
	.set_reg = grm_set_reg,
	.get_reg = grm_get_reg,
	.load_mem = grm_load_mem,
	.read_mem = grm_read_mem,
	.load_code = grm_load_code,
	.step = grm_step,
	.run = grm_run,
	.finish = grm_finish,
};
