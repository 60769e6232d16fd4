/*
 * unicorn.c: the unicorn engine (libunicorn 2, QEMU's TCG) behind the
 * simulator ABI, for traces of x86-64 and aarch64 host code, and for
 * `snr record --method sim` of those and of plain RV64 programs under
 * qemu-riscv64 (the ta1 plugin's registers and access query). An engine
 * written by other people than snr's recorder and ISA plugins, so a replay
 * that matches is evidence about the recording, not about shared code.
 *
 * One engine table per ISA (struct engine below: unicorn's arch and CPU, the
 * register map from the trace's names to unicorn's ids, how a system call
 * traps); everything else is shared. Memory is mapped on demand in 4 KiB
 * pages: loading bytes (captured memory, code) maps the pages they touch; a
 * write to an unmapped page maps it. A byte is valid once the trace loaded it
 * or the window wrote it (one range set, lib/snr_ranges.h); the read hook
 * checks every read against that set, so a read of a byte the recorder did
 * not capture fails the step, whether its page is mapped (partly captured)
 * or not. Registers: the ISA plugin's access query (isa/capstone, cached per
 * pc) names the registers each instruction reads and writes; reading one
 * never captured nor written fails the step the same way, and get_reg
 * refuses such registers so the end-state comparison covers only registers
 * with a meaningful value.
 *
 * Each step is uc_emu_start(pc, 0, 0, 1). A system call (x86-64 `syscall`,
 * aarch64 `svc #0`, RV64 `ecall`) does not run: its hook leaves the registers as they are
 * and the replayer applies the values the recorder saved after it
 * (exit/exit_group end the window). Registers user code cannot change are
 * kept beside the engine: x86-64's segment selectors and AVX upper halves
 * (unicorn 2's TCG has no AVX: an AVX instruction fails the step as an
 * invalid instruction), and aarch64's cpsr bits other than NZCV.
 *
 * Timing: one cycle per instruction plus, for each memory access, the cache
 * model's latency beyond an L1 hit (sim/snr_cache.h; docs/unicorn-sim.md).
 * The scalar unit is busy for the instruction's one cycle, not while it waits
 * on memory: busy events are those runs, so `snr analyze util` shows the
 * fraction of cycles the core executed.
 */
#include <capstone/capstone.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unicorn/unicorn.h>

#include "lib/snr_ranges.h"
#include "lib/snr_util.h"
#include "isa/snr_isa.h"
#include "sim/snr_cache.h"
#include "sim/snr_sim.h"

#define PAGE 4096ull

enum reg_kind {
	R_UC,     /* unicorn's register of the same size */
	R_SHADOW, /* kept beside the engine */
	R_EFLAGS, /* x86-64: bit 1 reads as 1 */
	R_NZCV,   /* aarch64 cpsr: NZCV in unicorn, the other bits beside it */
	R_CLOCK,  /* a counter of the machine running the program (qemu-riscv64's cycle and instret: the host's
		     clock): no value, so a checkpoint does not compare it */
};

/* What differs between the ISAs. */
struct engine {
	const struct snr_isa_ops *isa;
	uc_arch arch;
	uc_mode mode;
	int cpu_model; /* UC_CPU_*, or -1 for unicorn's default */
	int pc_id;
	/* unicorn's id for register `index` of the ISA plugin's file, or -1 */
	int (*uc_id_for)(const struct snr_isa_reg *file, size_t index, enum reg_kind *kind);
	/* installs the hook that stops a system call from running */
	uc_err (*hook_syscall)(struct snr_sim *s);
};

struct reg_map {
	const char *name;
	unsigned size;
	int uc_id; /* unicorn register, or -1 */
	enum reg_kind kind;
};

/* What one code address decodes to, from the ISA plugin's query. */
struct code_entry {
	uint64_t pc; /* pc + 1: 0 marks an empty slot */
	uint8_t len;
	uint8_t bytes[16];
	bool queried;
	uint64_t regs_read[SNR_ISA_MAX_REGS / 64], regs_written[SNR_ISA_MAX_REGS / 64];
};

struct snr_sim {
	const struct engine *eng;
	uc_engine *uc;
	uc_hook h_read, h_write, h_read_unmapped, h_write_unmapped, h_fetch_unmapped, h_syscall;
	const struct snr_isa_ops *isa;
	void *isa_self;
	struct reg_map *regs;
	size_t nregs;
	unsigned pc_reg;
	uint8_t (*shadow)[16]; /* values of R_SHADOW registers */
	uint64_t reg_valid[SNR_ISA_MAX_REGS / 64];
	struct snr_ranges valid;
	struct snr_range hit; /* the last valid range a read or write fell in */
	struct snr_range *miss;
	size_t miss_cap;
	struct code_entry *code;
	size_t code_cap, code_n;

	const struct snr_tracker *tracker;
	unsigned mask;
	struct snr_cache *cache;
	uint64_t now, stall; /* cycles; this instruction's memory cycles beyond L1 hits */
	uint64_t l1_latency;
	/* the scalar unit's current busy run (cycles with an instruction
	 * executing, not waiting on memory), reported as one busy event */
	bool run_open;
	uint64_t run_start, run_end, run_index;

	/* the step in progress */
	uint64_t index, pc;
	bool in_rep; /* the last step left a rep string instruction mid-way (rep_pc, rep_index) */
	uint64_t rep_pc, rep_index;
	bool failed, exited;
	bool fetched_ahead; /* the step ran and unicorn then fetched code not loaded (hook_unmapped) */
	int exit_code;
	char err[600];
};

static const char *uc_sim_error(struct snr_sim *s) { return s->err; }

static void describe(struct snr_sim *s, uint64_t pc, char *buf, size_t len);

/* ---- registers ---------------------------------------------------------------- */

static int x86_id_for(const struct snr_isa_reg *file, size_t index, enum reg_kind *kind)
{
	const char *name = file[index].name;
	static const char *const gpr[16] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp",
					    "r8",  "r9",  "r10", "r11", "r12", "r13", "r14", "r15"};
	static const int gpr_id[16] = {UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX,
				       UC_X86_REG_RSI, UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP,
				       UC_X86_REG_R8,  UC_X86_REG_R9,  UC_X86_REG_R10, UC_X86_REG_R11,
				       UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14, UC_X86_REG_R15};
	*kind = R_UC;
	for (int i = 0; i < 16; i++)
		if (!strcmp(name, gpr[i]))
			return gpr_id[i];
	if (!strcmp(name, "rip"))
		return UC_X86_REG_RIP;
	if (!strcmp(name, "eflags")) {
		*kind = R_EFLAGS;
		return UC_X86_REG_EFLAGS;
	}
	if (!strcmp(name, "mxcsr"))
		return UC_X86_REG_MXCSR;
	if (!strcmp(name, "fs_base"))
		return UC_X86_REG_FS_BASE;
	if (!strcmp(name, "gs_base"))
		return UC_X86_REG_GS_BASE;
	if (!strncmp(name, "xmm", 3) && name[3] >= '0' && name[3] <= '9' && atoi(name + 3) < 16)
		return UC_X86_REG_XMM0 + atoi(name + 3);
	*kind = R_SHADOW; /* segment selectors, ymmNh */
	return -1;
}

/* aarch64, the trace's (GDB's) names: x0-x30, sp, pc, cpsr, v0-v31, fpsr,
 * fpcr, tpidr. */
static int a64_id_for(const struct snr_isa_reg *file, size_t index, enum reg_kind *kind)
{
	const char *name = file[index].name;
	*kind = R_UC;
	if ((name[0] == 'x' || name[0] == 'v') && name[1] >= '0' && name[1] <= '9') {
		int n = atoi(name + 1);
		if (name[0] == 'v' && n < 32)
			return UC_ARM64_REG_V0 + n;
		if (n <= 28) /* x29 and x30 are numbered apart from x0-x28 */
			return UC_ARM64_REG_X0 + n;
		if (n == 29)
			return UC_ARM64_REG_X29;
		if (n == 30)
			return UC_ARM64_REG_X30;
	}
	static const struct {
		const char *name;
		int id;
	} other[] = {{"sp", UC_ARM64_REG_SP},     {"pc", UC_ARM64_REG_PC},     {"fpsr", UC_ARM64_REG_FPSR},
		     {"fpcr", UC_ARM64_REG_FPCR}, {"tpidr", UC_ARM64_REG_TPIDR_EL0}};
	for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
		if (!strcmp(name, other[i].name))
			return other[i].id;
	if (!strcmp(name, "cpsr")) {
		*kind = R_NZCV;
		return UC_ARM64_REG_NZCV;
	}
	*kind = R_SHADOW;
	return -1;
}

/* plain RV64 (Linux user mode) through the ta1 plugin's register file:
 * x0-x31 (ABI names) first, then pc; TA1's own registers (flags,
 * counters, chip id), which a plain RV64 program has not, are kept beside
 * the engine; QEMU's cycle and instret count the host's time, so they
 * have no value here */
static int rv64_id_for(const struct snr_isa_reg *file, size_t index, enum reg_kind *kind)
{
	*kind = R_UC;
	if (index < 32)
		return UC_RISCV_REG_X0 + (int)index;
	if (file[index].pc)
		return UC_RISCV_REG_PC;
	*kind = !strcmp(file[index].name, "cycle") || !strcmp(file[index].name, "instret") ? R_CLOCK : R_SHADOW;
	return -1;
}

static void hook_syscall_x86(uc_engine *uc, void *user);
static void hook_intr_a64(uc_engine *uc, uint32_t intno, void *user);
static void hook_intr_rv64(uc_engine *uc, uint32_t intno, void *user);

static uc_err x86_hook_syscall(struct snr_sim *s)
{
	return uc_hook_add(s->uc, &s->h_syscall, UC_HOOK_INSN, (void *)hook_syscall_x86, s, 1, 0, UC_X86_INS_SYSCALL);
}

static uc_err a64_hook_syscall(struct snr_sim *s)
{
	return uc_hook_add(s->uc, &s->h_syscall, UC_HOOK_INTR, (void *)hook_intr_a64, s, 1, 0);
}

static uc_err rv64_hook_syscall(struct snr_sim *s)
{
	return uc_hook_add(s->uc, &s->h_syscall, UC_HOOK_INTR, (void *)hook_intr_rv64, s, 1, 0);
}

static const struct engine engine_x86_64 = {
	&snr_isa_x86_64, UC_ARCH_X86, UC_MODE_64, -1, UC_X86_REG_RIP, x86_id_for, x86_hook_syscall,
};
/* The "max" CPU: the instructions QEMU's default aarch64 CPU runs (no SVE
 * state is in the trace's register file, so SVE code cannot replay). */
static const struct engine engine_aarch64 = {
	&snr_isa_aarch64, UC_ARCH_ARM64, UC_MODE_ARM, UC_CPU_ARM64_MAX, UC_ARM64_REG_PC, a64_id_for, a64_hook_syscall,
};

/* RV64GC: unicorn's default RISC-V CPU runs the compressed instructions
 * too; the ta1 plugin decodes the program's instructions for the access
 * query (RV64IM and Zicsr: a plain RV64 program built by `snr cc`). */
static const struct engine engine_rv64 = {
	&snr_isa_ta1, UC_ARCH_RISCV, UC_MODE_RISCV64, -1, UC_RISCV_REG_PC, rv64_id_for, rv64_hook_syscall,
};

static struct snr_sim *uc_sim_create(const struct engine *eng, const char *config_json, char *err, size_t errlen)
{
	struct snr_sim *s = snr_xcalloc(1, sizeof(*s));
	s->eng = eng;
	struct snr_cache_cfg cc;
	if (snr_cache_cfg_parse(&cc, config_json, err, errlen))
		goto fail;
	s->cache = snr_cache_new(&cc);
	s->l1_latency = cc.l1.latency;
	s->isa = eng->isa;
	s->isa_self = s->isa->create(config_json, err, errlen);
	if (!s->isa_self)
		goto fail;
	uc_err e = uc_open(eng->arch, eng->mode, &s->uc);
	if (e != UC_ERR_OK) {
		snr_fmt(err, errlen, "unicorn: uc_open (%s): %s", eng->isa->name, uc_strerror(e));
		goto fail;
	}
	if (eng->cpu_model >= 0 && (e = uc_ctl_set_cpu_model(s->uc, eng->cpu_model)) != UC_ERR_OK) {
		snr_fmt(err, errlen, "unicorn: selecting the %s CPU model: %s", eng->isa->name, uc_strerror(e));
		goto fail;
	}
	const struct snr_isa_reg *file = s->isa->registers(s->isa_self, &s->nregs);
	s->regs = snr_xcalloc(s->nregs, sizeof(*s->regs));
	s->shadow = snr_xcalloc(s->nregs, sizeof(*s->shadow));
	for (size_t i = 0; i < s->nregs; i++) {
		s->regs[i].name = file[i].name;
		s->regs[i].size = file[i].size;
		s->regs[i].uc_id = eng->uc_id_for(file, i, &s->regs[i].kind);
		if (file[i].pc)
			s->pc_reg = (unsigned)i;
	}
	snr_regset_add(s->reg_valid, s->pc_reg);
	return s;
fail:
	if (s->uc)
		uc_close(s->uc);
	snr_cache_free(s->cache);
	if (s->isa_self)
		s->isa->destroy(s->isa_self);
	free(s);
	return NULL;
}

static struct snr_sim *uc_sim_create_x86_64(const char *config_json, unsigned chip, unsigned nchips, char *err,
					    size_t errlen)
{
	(void)chip, (void)nchips;
	return uc_sim_create(&engine_x86_64, config_json, err, errlen);
}

static struct snr_sim *uc_sim_create_aarch64(const char *config_json, unsigned chip, unsigned nchips, char *err,
					     size_t errlen)
{
	(void)chip, (void)nchips;
	return uc_sim_create(&engine_aarch64, config_json, err, errlen);
}

static struct snr_sim *uc_sim_create_rv64(const char *config_json, unsigned chip, unsigned nchips, char *err,
					  size_t errlen)
{
	(void)chip, (void)nchips;
	return uc_sim_create(&engine_rv64, config_json, err, errlen);
}

static void uc_sim_destroy(struct snr_sim *s)
{
	if (!s)
		return;
	if (s->uc)
		uc_close(s->uc);
	s->isa->destroy(s->isa_self);
	snr_cache_free(s->cache);
	snr_ranges_free(&s->valid);
	free(s->regs);
	free(s->shadow);
	free(s->code);
	free(s->miss);
	free(s);
}

static int uc_sim_set_reg(struct snr_sim *s, unsigned reg, const uint8_t *val, unsigned size)
{
	if (reg >= s->nregs || size != s->regs[reg].size) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: no register %u of %u bytes", reg, size);
		return -1;
	}
	const struct reg_map *m = &s->regs[reg];
	if (m->kind == R_CLOCK)
		return 0; /* stays without a value */
	uint8_t buf[64] = {0};
	memcpy(buf, val, size);
	if (m->kind == R_SHADOW || m->kind == R_NZCV)
		memcpy(s->shadow[reg], val, size);
	if (m->kind != R_SHADOW) {
		if (m->kind == R_EFLAGS)
			buf[0] |= 2; /* the reserved bit reads as 1 */
		uc_err e = uc_reg_write(s->uc, m->uc_id, buf);
		if (e != UC_ERR_OK) {
			snr_fmt(s->err, sizeof(s->err), "unicorn: writing %s: %s", m->name, uc_strerror(e));
			return -1;
		}
	}
	snr_regset_add(s->reg_valid, reg);
	return 0;
}

static int reg_value(struct snr_sim *s, unsigned reg, uint8_t *val)
{
	const struct reg_map *m = &s->regs[reg];
	uint8_t buf[64] = {0};
	if (m->kind == R_SHADOW) {
		memcpy(val, s->shadow[reg], m->size);
		return 0;
	}
	uc_err e = uc_reg_read(s->uc, m->uc_id, buf);
	if (e != UC_ERR_OK) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: reading %s: %s", m->name, uc_strerror(e));
		return -1;
	}
	if (m->kind == R_NZCV) { /* NZCV from unicorn, the rest as loaded */
		uint32_t nzcv, rest;
		memcpy(&nzcv, buf, 4);
		memcpy(&rest, s->shadow[reg], 4);
		nzcv = (nzcv & 0xf0000000u) | (rest & 0x0fffffffu);
		memcpy(buf, &nzcv, 4);
	}
	memcpy(val, buf, m->size);
	return 0;
}

static int uc_sim_get_reg(struct snr_sim *s, unsigned reg, uint8_t *val, unsigned size)
{
	if (reg >= s->nregs || size != s->regs[reg].size) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: no register %u of %u bytes", reg, size);
		return -1;
	}
	if (!snr_regset_has(s->reg_valid, reg)) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: register %s was neither captured nor written",
			s->regs[reg].name);
		return -1;
	}
	return reg_value(s, reg, val);
}

/* ---- memory ------------------------------------------------------------------- */

static int map_pages(struct snr_sim *s, uint64_t lo, uint64_t hi)
{
	for (uint64_t p = lo & ~(PAGE - 1); p < hi; p += PAGE) {
		uc_err e = uc_mem_map(s->uc, p, PAGE, UC_PROT_ALL);
		if (e != UC_ERR_OK && e != UC_ERR_MAP) {
			snr_fmt(s->err, sizeof(s->err), "unicorn: mapping the page at 0x%llx: %s",
				(unsigned long long)p, uc_strerror(e));
			return -1;
		}
		if (p + PAGE < p)
			break;
	}
	return 0;
}

static void mark_valid(struct snr_sim *s, uint64_t lo, uint64_t hi)
{
	if (lo >= s->hit.lo && hi <= s->hit.hi)
		return;
	snr_ranges_add(&s->valid, snr_ranges_key(0, 0), lo, hi);
}

/* Is [lo, hi) valid? Remembers the range that held it. */
static bool is_valid(struct snr_sim *s, uint64_t lo, uint64_t hi)
{
	if (lo >= s->hit.lo && hi <= s->hit.hi)
		return true;
	const struct snr_range_list *l = snr_ranges_get(&s->valid, snr_ranges_key(0, 0));
	if (!l)
		return false;
	size_t a = 0, b = l->n; /* the first range with r.hi > lo */
	while (a < b) {
		size_t mid = (a + b) / 2;
		if (l->r[mid].hi > lo)
			b = mid;
		else
			a = mid + 1;
	}
	if (a < l->n && l->r[a].lo <= lo && hi <= l->r[a].hi) {
		s->hit = l->r[a];
		return true;
	}
	return false;
}

static int uc_sim_load_mem(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, const void *data,
			   uint64_t len)
{
	(void)chip;
	if (space != 0) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: %s has one address space; the trace names space %u",
			s->isa->name, space);
		return -1;
	}
	if (!len)
		return 0;
	if (map_pages(s, addr, addr + len))
		return -1;
	uc_err e = uc_mem_write(s->uc, addr, data, len);
	if (e != UC_ERR_OK) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: loading %llu bytes at 0x%llx: %s", (unsigned long long)len,
			(unsigned long long)addr, uc_strerror(e));
		return -1;
	}
	/* Code translated from these bytes before they were loaded is stale:
	 * TCG translates the block at the next pc while stopping after a
	 * step's one instruction, so a block whose page was mapped (for data
	 * the window read there) but whose code was not yet loaded was
	 * translated from zeros (seen on RV64: an illegal instruction at a
	 * function's first instruction). */
	e = uc_ctl_remove_cache(s->uc, addr, addr + len);
	if (e != UC_ERR_OK) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: dropping code translated at 0x%llx: %s",
			(unsigned long long)addr, uc_strerror(e));
		return -1;
	}
	mark_valid(s, addr, addr + len);
	return 0;
}

static int uc_sim_read_mem(struct snr_sim *s, uint8_t space, uint16_t chip, uint64_t addr, void *data, uint64_t len)
{
	(void)chip;
	uc_err e = space ? UC_ERR_ARG : uc_mem_read(s->uc, addr, data, len);
	if (e != UC_ERR_OK) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: reading %llu bytes at 0x%llx: %s", (unsigned long long)len,
			(unsigned long long)addr, uc_strerror(e));
		return -1;
	}
	return 0;
}

static struct code_entry *code_slot(struct snr_sim *s, uint64_t pc)
{
	if (!s->code_cap)
		return NULL;
	size_t h = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (s->code_cap - 1);
	while (s->code[h].pc && s->code[h].pc != pc + 1)
		h = (h + 1) & (s->code_cap - 1);
	return &s->code[h];
}

static int uc_sim_load_code(struct snr_sim *s, uint64_t pc, const uint8_t *code, unsigned len)
{
	if (len > 16)
		len = 16;
	if ((s->code_n + 1) * 2 > s->code_cap) {
		struct code_entry *old = s->code;
		size_t ocap = s->code_cap;
		s->code_cap = ocap ? ocap * 2 : 256;
		s->code = snr_xcalloc(s->code_cap, sizeof(*s->code));
		for (size_t i = 0; i < ocap; i++)
			if (old[i].pc)
				*code_slot(s, old[i].pc - 1) = old[i];
		free(old);
	}
	struct code_entry *c = code_slot(s, pc);
	if (!c->pc)
		s->code_n++;
	c->pc = pc + 1;
	c->len = (uint8_t)len;
	memcpy(c->bytes, code, len);
	c->queried = false;
	return uc_sim_load_mem(s, 0, 0, pc, code, len);
}

/* ---- hooks -------------------------------------------------------------------- */

static void fail(struct snr_sim *s, const char *fmt, ...) SNR_PRINTF(2, 3);
static void fail(struct snr_sim *s, const char *fmt, ...)
{
	if (s->failed)
		return; /* the first error wins */
	s->failed = true;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(s->err, sizeof(s->err), fmt, ap);
	va_end(ap);
	uc_emu_stop(s->uc);
}

static void poisoned_read(struct snr_sim *s, uint64_t addr, uint64_t size)
{
	size_t nmiss = 0;
	snr_ranges_missing(&s->valid, snr_ranges_key(0, 0), addr, addr + size, &s->miss, &nmiss, &s->miss_cap);
	uint64_t lo = nmiss ? s->miss[0].lo : addr, n = nmiss ? s->miss[0].hi - s->miss[0].lo : size;
	char at[300];
	describe(s, s->pc, at, sizeof(at));
	fail(s,
	     "instruction %llu (%s) reads %llu bytes at 0x%llx that the trace did not capture (poisoned): the "
	     "recording is incomplete",
	     (unsigned long long)s->index, at, (unsigned long long)n, (unsigned long long)lo);
}

static void memory_event(struct snr_sim *s, uint64_t addr, uint64_t size, bool write)
{
	uint64_t cycles = 0;
	snr_cache_access(s->cache, addr, size, &cycles);
	uint64_t lines = ((addr + (size ? size : 1) - 1) >> 6) - (addr >> 6) + 1;
	if (cycles > lines * s->l1_latency)
		s->stall += cycles - lines * s->l1_latency;
	if (s->mask & SNR_TRACK_MEM) {
		struct snr_ev_mem e = {s->index, s->now, write, 0, 0, addr, size};
		s->tracker->on_mem(s->tracker->user, &e);
	}
}

static void hook_read(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	(void)uc, (void)type, (void)value;
	struct snr_sim *s = user;
	if (!is_valid(s, addr, addr + (uint64_t)size)) {
		poisoned_read(s, addr, (uint64_t)size);
		return;
	}
	memory_event(s, addr, (uint64_t)size, false);
}

static void hook_write(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	(void)uc, (void)type, (void)value;
	struct snr_sim *s = user;
	mark_valid(s, addr, addr + (uint64_t)size);
	memory_event(s, addr, (uint64_t)size, true);
}

static bool hook_unmapped(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	(void)uc, (void)value;
	struct snr_sim *s = user;
	if (type == UC_MEM_WRITE_UNMAPPED)
		return map_pages(s, addr, addr + (uint64_t)size) == 0; /* the write defines the bytes */
	struct code_entry *c = code_slot(s, s->pc);
	if (type == UC_MEM_FETCH_UNMAPPED && c && c->pc && (addr < s->pc || addr >= s->pc + c->len)) {
		/* The instruction ran and unicorn is translating the next one
		 * ahead of the step's end: not this step's business (a next
		 * step at a pc without code fails on its own). snr record
		 * --method sim loads code as the window reaches it. */
		s->fetched_ahead = true;
		return false;
	}
	if (type == UC_MEM_READ_UNMAPPED) {
		poisoned_read(s, addr, (uint64_t)size);
	} else {
		char at[300];
		describe(s, s->pc, at, sizeof(at));
		fail(s, "instruction %llu (%s) fetches code at 0x%llx that the trace did not capture",
		     (unsigned long long)s->index, at, (unsigned long long)addr);
	}
	return false;
}

static void hook_syscall_x86(uc_engine *uc, void *user)
{
	struct snr_sim *s = user;
	uint64_t nr = 0, code = 0;
	uc_reg_read(uc, UC_X86_REG_RAX, &nr);
	uc_reg_read(uc, UC_X86_REG_RDI, &code);
	if (nr == 60 || nr == 231) { /* exit, exit_group */
		s->exited = true;
		s->exit_code = (int)code;
	}
	/* nothing else: the replayer applies the recorded results */
}

/* A Linux user-mode exception: `syscall_intno` is the system call (number
 * in nr_reg, first argument in arg_reg), left to the recorded results
 * (exit and exit_group, 93 and 94 on aarch64 and RV64, end the window); any
 * other exception fails the step. True for the system call. */
static bool linux_exception(struct snr_sim *s, uint32_t intno, uint32_t syscall_intno, int nr_reg, int arg_reg)
{
	if (intno != syscall_intno) {
		char at[300];
		describe(s, s->pc, at, sizeof(at));
		fail(s, "instruction %llu (%s) raises exception %u, which a user-mode replay cannot take",
		     (unsigned long long)s->index, at, intno);
		return false;
	}
	uint64_t nr = 0, code = 0;
	uc_reg_read(s->uc, nr_reg, &nr);
	uc_reg_read(s->uc, arg_reg, &code);
	if (nr == 93 || nr == 94) { /* exit, exit_group */
		s->exited = true;
		s->exit_code = (int)code;
	}
	return true;
}

/* aarch64: svc (Linux: number in x8, result in x0); pc is past the svc
 * already. Other exceptions: brk, udf, hvc. */
#define A64_EXCP_SWI 2 /* QEMU's number for svc */
static void hook_intr_a64(uc_engine *uc, uint32_t intno, void *user)
{
	(void)uc;
	linux_exception(user, intno, A64_EXCP_SWI, UC_ARM64_REG_X8, UC_ARM64_REG_X0);
}

/* RV64: ecall (number in a7, result in a0). unicorn 2 moves the pc past
 * it before the hook runs (its issue 1477); where it has not, the hook
 * does. Other exceptions: ebreak, an illegal instruction (an Xta
 * instruction in a plain RV64 program). */
#define RV_EXCP_U_ECALL 8 /* the cause of an ecall from user mode */
static void hook_intr_rv64(uc_engine *uc, uint32_t intno, void *user)
{
	struct snr_sim *s = user;
	uint64_t pc = 0;
	if (!linux_exception(s, intno, RV_EXCP_U_ECALL, UC_RISCV_REG_A7, UC_RISCV_REG_A0))
		return;
	uc_reg_read(uc, UC_RISCV_REG_PC, &pc);
	if (pc == s->pc) {
		pc += 4;
		uc_reg_write(uc, UC_RISCV_REG_PC, &pc);
	}
}

static int uc_sim_attach_tracker(struct snr_sim *s, const struct snr_tracker *t)
{
	s->tracker = t;
	s->mask = snr_tracker_mask(t);
	return 0;
}

static int install_hooks(struct snr_sim *s)
{
	uc_err e = uc_hook_add(s->uc, &s->h_read, UC_HOOK_MEM_READ, (void *)hook_read, s, 1, 0);
	if (e == UC_ERR_OK)
		e = uc_hook_add(s->uc, &s->h_write, UC_HOOK_MEM_WRITE, (void *)hook_write, s, 1, 0);
	if (e == UC_ERR_OK)
		e = uc_hook_add(s->uc, &s->h_read_unmapped,
				UC_HOOK_MEM_READ_UNMAPPED | UC_HOOK_MEM_WRITE_UNMAPPED | UC_HOOK_MEM_FETCH_UNMAPPED,
				(void *)hook_unmapped, s, 1, 0);
	if (e == UC_ERR_OK)
		e = s->eng->hook_syscall(s);
	if (e != UC_ERR_OK) {
		snr_fmt(s->err, sizeof(s->err), "unicorn: adding hooks: %s", uc_strerror(e));
		return -1;
	}
	s->h_fetch_unmapped = 1; /* installed */
	return 0;
}

/* ---- stepping ----------------------------------------------------------------- */

static void describe(struct snr_sim *s, uint64_t pc, char *buf, size_t len)
{
	char dis[128] = "?";
	struct code_entry *c = code_slot(s, pc);
	if (c && c->pc)
		s->isa->disasm(s->isa_self, c->bytes, c->len, pc, dis, sizeof(dis));
	snprintf(buf, len, "pc 0x%llx: %s", (unsigned long long)pc, dis);
}

static void reg_events(struct snr_sim *s, const uint64_t *set, bool write)
{
	for (unsigned w = 0; w < SNR_ISA_MAX_REGS / 64; w++)
		for (uint64_t b = set[w]; b; b &= b - 1) {
			struct snr_ev_reg e = {s->index, (uint16_t)(w * 64 + (unsigned)__builtin_ctzll(b)), write};
			s->tracker->on_reg(s->tracker->user, &e);
		}
}

static void flush_busy(struct snr_sim *s)
{
	if (!s->run_open)
		return;
	struct snr_ev_busy e = {SNR_UNIT_SCALAR, s->run_start, s->run_end, s->run_index};
	s->tracker->on_busy(s->tracker->user, &e);
	s->run_open = false;
}

static int uc_sim_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out)
{
	memset(out, 0, sizeof(*out));
	if (!s->h_fetch_unmapped && install_hooks(s))
		return -1;
	uint64_t pc = 0;
	uc_reg_read(s->uc, s->eng->pc_id, &pc);
	out->pc = pc;
	s->index = index;
	s->pc = pc;
	s->failed = s->exited = false;
	s->stall = 0;
	struct code_entry *c = code_slot(s, pc);
	if (!c || !c->pc) {
		snr_fmt(s->err, sizeof(s->err), "instruction %llu: the trace holds no code at pc 0x%llx",
			(unsigned long long)index, (unsigned long long)pc);
		return -1;
	}
	if (!c->queried) {
		struct snr_insn_access a;
		struct snr_isa_regs none = {0};
		if (s->isa->access(s->isa_self, c->bytes, c->len, pc, &none, &a) == 0) {
			memcpy(c->regs_read, a.regs_read, sizeof(c->regs_read));
			memcpy(c->regs_written, a.regs_written, sizeof(c->regs_written));
		}
		c->queried = true;
	}
	for (unsigned w = 0; w < SNR_ISA_MAX_REGS / 64; w++) {
		uint64_t unknown = c->regs_read[w] & ~s->reg_valid[w];
		if (unknown) {
			char at[300];
			describe(s, pc, at, sizeof(at));
			snr_fmt(s->err, sizeof(s->err),
				"instruction %llu (%s) reads register %s, which the trace neither captured nor saw "
				"written: the recording is incomplete",
				(unsigned long long)index, at, s->regs[w * 64 + (unsigned)__builtin_ctzll(unknown)].name);
			return -1;
		}
	}
	struct snr_ev_insn ev = {index, pc, s->now, s->now, SNR_UNIT_SCALAR, SNR_CLASS_SCALAR};
	if (s->mask & SNR_TRACK_ISSUE)
		s->tracker->on_issue(s->tracker->user, &ev);
	if (s->mask & SNR_TRACK_REG)
		reg_events(s, c->regs_read, false);
	s->fetched_ahead = false;
	uc_err e = uc_emu_start(s->uc, pc, 0, 0, 1);
	if (s->failed)
		return -1;
	if (e == UC_ERR_FETCH_UNMAPPED && s->fetched_ahead) { /* ran, if the pc moved on */
		uint64_t now_pc = pc;
		uc_reg_read(s->uc, s->eng->pc_id, &now_pc);
		if (now_pc != pc)
			e = UC_ERR_OK;
	}
	if (e != UC_ERR_OK) {
		char at[300];
		describe(s, pc, at, sizeof(at));
		snr_fmt(s->err, sizeof(s->err), "instruction %llu (%s) stops unicorn: %s", (unsigned long long)index,
			at, uc_strerror(e));
		return -1;
	}
	for (unsigned w = 0; w < SNR_ISA_MAX_REGS / 64; w++)
		s->reg_valid[w] |= c->regs_written[w];
	if (s->mask & SNR_TRACK_REG)
		reg_events(s, c->regs_written, true);
	if (s->mask & SNR_TRACK_BUSY) {
		if (s->run_open && s->run_end == s->now) {
			s->run_end++;
		} else {
			flush_busy(s);
			s->run_open = true;
			s->run_start = s->now;
			s->run_end = s->now + 1;
			s->run_index = index;
		}
	}
	s->now += 1 + s->stall;
	ev.retire = s->now;
	if (s->mask & SNR_TRACK_RETIRE)
		s->tracker->on_retire(s->tracker->user, &ev);
	uc_reg_read(s->uc, s->eng->pc_id, &out->next_pc);
	/* x86's rep string instructions stay at their pc between iterations */
	s->in_rep = s->eng->arch == UC_ARCH_X86 && out->next_pc == pc;
	s->rep_pc = pc;
	s->rep_index = index;
	if (s->exited) {
		out->exited = true;
		out->exit_code = s->exit_code;
	}
	return 0;
}

/* A single-step trap may come after several iterations of a rep string
 * instruction (x86 fast-string operation), while unicorn steps one
 * iteration at a time: when the recording has left the instruction and the
 * replay has not, the remaining iterations belong to its last recorded step. */
static int finish_rep(struct snr_sim *s)
{
	uint64_t pc = s->rep_pc;
	s->index = s->rep_index;
	s->pc = pc;
	for (uint64_t n = 0; pc == s->rep_pc; n++) {
		if (n >= (1ull << 32)) {
			snr_fmt(s->err, sizeof(s->err), "instruction %llu: a rep instruction that does not end",
				(unsigned long long)s->rep_index);
			return -1;
		}
		uc_err e = uc_emu_start(s->uc, pc, 0, 0, 1);
		if (s->failed)
			return -1;
		if (e != UC_ERR_OK) {
			char at[300];
			describe(s, pc, at, sizeof(at));
			snr_fmt(s->err, sizeof(s->err), "instruction %llu (%s) stops unicorn: %s",
				(unsigned long long)s->rep_index, at, uc_strerror(e));
			return -1;
		}
		s->now += 1 + s->stall;
		s->stall = 0;
		uc_reg_read(s->uc, s->eng->pc_id, &pc);
	}
	s->in_rep = false;
	return 0;
}

static int uc_sim_run(struct snr_sim *s, uint64_t first, uint64_t n, const uint64_t *pcs, struct snr_sim_run *out)
{
	memset(out, 0, sizeof(*out));
	for (uint64_t i = 0; i < n; i++) {
		uint64_t pc = 0;
		uc_reg_read(s->uc, s->eng->pc_id, &pc);
		if (pc != pcs[i] && s->in_rep && pc == s->rep_pc) {
			if (finish_rep(s))
				return -1;
			uc_reg_read(s->uc, s->eng->pc_id, &pc);
		}
		if (pc != pcs[i]) {
			out->diverged = true;
			out->pc = pc;
			return 0;
		}
		struct snr_sim_step st;
		if (uc_sim_step(s, first + i, &st))
			return -1;
		out->done = i + 1;
		out->next_pc = st.next_pc;
		if (st.exited) {
			out->exited = true;
			out->exit_code = st.exit_code;
			return 0;
		}
	}
	return 0;
}

static uint64_t uc_sim_finish(struct snr_sim *s)
{
	flush_busy(s);
	return s->now;
}

#define UC_SIM_OPS(ISA, CREATE)                                                                                \
	{                                                                                                      \
		.abi_version = SNR_SIM_ABI_VERSION, .name = "unicorn", .isa = ISA, .create = CREATE,           \
		.destroy = uc_sim_destroy, .error = uc_sim_error, .attach_tracker = uc_sim_attach_tracker,     \
		.set_reg = uc_sim_set_reg, .get_reg = uc_sim_get_reg, .load_mem = uc_sim_load_mem,             \
		.read_mem = uc_sim_read_mem, .load_code = uc_sim_load_code, .step = uc_sim_step,               \
		.finish = uc_sim_finish, .run = uc_sim_run,                                                    \
	}
const struct snr_sim_ops snr_sim_unicorn = UC_SIM_OPS("x86-64", uc_sim_create_x86_64);
const struct snr_sim_ops snr_sim_unicorn_aarch64 = UC_SIM_OPS("aarch64", uc_sim_create_aarch64);
const struct snr_sim_ops snr_sim_unicorn_rv64 = UC_SIM_OPS("ta1", uc_sim_create_rv64);
