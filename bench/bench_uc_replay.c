/*
 * bench_uc_replay.c: replay speed of the unicorn simulator on a recorded
 * x86-64 or aarch64 window (the engine by the trace's ISA), four ways over
 * the same instructions:
 *   sim, no tracker    the plugin ABI stepping one instruction per
 *                      uc_emu_start, poison checks on (they are not optional)
 *   sim, tracker       every tracker callback registered (counting), the
 *                      cache model, register and busy events included
 *   snr_replay()       the whole replayer: pc checks, post-step values,
 *                      its own collector, the end-state digest
 *   unicorn alone      the peer figure: one uc_emu_start(pc, 0, 0, N) over
 *                      the same loaded state, no memory or code hooks
 *                      (only the unmapped-page and syscall hooks, which run
 *                      only on a fault or a syscall)
 * Loading is outside the timed part; each figure is the best of REPS.
 *
 * usage: bench_uc_replay TRACE.snrt [REPS]
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unicorn/unicorn.h>

#include "lib/snr_trace.h"
#include "replayer/replay.h"
#include "sim/snr_sim.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static uint64_t events;
static void ev_insn(void *u, const struct snr_ev_insn *e) { (void)u, (void)e, events++; }
static void ev_mem(void *u, const struct snr_ev_mem *e) { (void)u, (void)e, events++; }
static void ev_reg(void *u, const struct snr_ev_reg *e) { (void)u, (void)e, events++; }
static void ev_busy(void *u, const struct snr_ev_busy *e) { (void)u, (void)e, events++; }
static const struct snr_tracker counting = {.abi_version = SNR_TRACKER_ABI_VERSION,
					    .on_issue = ev_insn,
					    .on_retire = ev_insn,
					    .on_mem = ev_mem,
					    .on_reg = ev_reg,
					    .on_busy = ev_busy};

static const struct snr_sim_ops *ops = &snr_sim_unicorn;
static bool aarch64;

struct loaded {
	struct snr_sim *s;
	uint64_t first_pc;
	unsigned pc_reg;
};

/* The trace-load command of replay.c, for one simulator. */
static int load(struct snr_trace *t, const struct snr_tracker *tr, struct loaded *L)
{
	char err[300];
	L->s = ops->create(NULL, 0, 1, err, sizeof(err));
	if (!L->s) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (tr)
		ops->attach_tracker(L->s, tr);
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	struct snr_trace_step st;
	snr_trace_rewind(t);
	bool first = true;
	while (snr_trace_next(t, &st) == 1) {
		if (first)
			L->first_pc = st.pc;
		first = false;
		if (st.code_len && ops->load_code(L->s, st.pc, st.code, st.code_len))
			return -1;
		for (unsigned i = 0; i < st.nregs; i++)
			ops->set_reg(L->s, st.regs[i].reg, st.regs[i].val, regs[st.regs[i].reg].size);
		for (unsigned i = 0; i < st.nmem; i++)
			ops->load_mem(L->s, 0, 0, st.mem[i].addr, st.mem[i].data, st.mem[i].len);
	}
	for (size_t i = 0; i < snr_trace_nregs(t); i++)
		if (!strcmp(regs[i].name, aarch64 ? "pc" : "rip"))
			L->pc_reg = (unsigned)i;
	uint8_t pc[8];
	memcpy(pc, &L->first_pc, 8);
	return ops->set_reg(L->s, L->pc_reg, pc, 8);
}

static double run_sim(struct snr_trace *t, const struct snr_tracker *tr, uint64_t *n)
{
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	struct loaded L = {0};
	if (load(t, tr, &L))
		return -1;
	snr_trace_rewind(t);
	struct snr_trace_step st;
	struct snr_sim_step out;
	*n = 0;
	double t0 = now_s();
	while (snr_trace_next(t, &st) == 1) {
		if (ops->step(L.s, st.index, &out)) {
			fprintf(stderr, "%s\n", ops->error(L.s));
			return -1;
		}
		for (unsigned i = 0; i < st.npost_regs; i++)
			ops->set_reg(L.s, st.post_regs[i].reg, st.post_regs[i].val, regs[st.post_regs[i].reg].size);
		(*n)++;
	}
	double dt = now_s() - t0;
	ops->destroy(L.s);
	return dt;
}

static bool map_on_fault(uc_engine *uc, uc_mem_type type, uint64_t addr, int size, int64_t value, void *user)
{
	(void)type, (void)size, (void)value, (void)user;
	return uc_mem_map(uc, addr & ~4095ull, 4096, UC_PROT_ALL) == UC_ERR_OK;
}
static void no_syscall(uc_engine *uc, void *user) { (void)uc, (void)user; }
static void no_intr(uc_engine *uc, uint32_t intno, void *user) { (void)uc, (void)intno, (void)user; }

/* unicorn's id for a trace register, or -1 (as sim/unicorn.c maps them; cpsr
 * as NZCV) */
static int bare_id(const char *nm)
{
	if (aarch64) {
		int k = atoi(nm + 1);
		if (nm[0] == 'x' && nm[1] >= '0' && nm[1] <= '9')
			return k <= 28 ? UC_ARM64_REG_X0 + k : k == 29 ? UC_ARM64_REG_X29 : UC_ARM64_REG_X30;
		if (nm[0] == 'v' && nm[1] >= '0' && nm[1] <= '9')
			return UC_ARM64_REG_V0 + k;
		static const char *const names[] = {"sp", "cpsr", "fpsr", "fpcr", "tpidr"};
		static const int ids[] = {UC_ARM64_REG_SP, UC_ARM64_REG_NZCV, UC_ARM64_REG_FPSR, UC_ARM64_REG_FPCR,
					  UC_ARM64_REG_TPIDR_EL0};
		for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
			if (!strcmp(nm, names[i]))
				return ids[i];
		return -1;
	}
	static const char *const names[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r9",
					    "r10", "r11", "r12", "r13", "r14", "r15", "eflags", "fs_base"};
	static const int ids[] = {UC_X86_REG_RAX, UC_X86_REG_RBX, UC_X86_REG_RCX, UC_X86_REG_RDX, UC_X86_REG_RSI,
				  UC_X86_REG_RDI, UC_X86_REG_RBP, UC_X86_REG_RSP, UC_X86_REG_R8,  UC_X86_REG_R9,
				  UC_X86_REG_R10, UC_X86_REG_R11, UC_X86_REG_R12, UC_X86_REG_R13, UC_X86_REG_R14,
				  UC_X86_REG_R15, UC_X86_REG_EFLAGS, UC_X86_REG_FS_BASE};
	for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++)
		if (!strcmp(nm, names[k]))
			return ids[k];
	if (!strncmp(nm, "xmm", 3))
		return UC_X86_REG_XMM0 + atoi(nm + 3);
	return -1;
}

/* Unicorn by itself: the same registers and bytes, one uc_emu_start. */
static double run_bare(struct snr_trace *t, uint64_t n)
{
	uc_engine *uc;
	if (uc_open(aarch64 ? UC_ARCH_ARM64 : UC_ARCH_X86, aarch64 ? UC_MODE_ARM : UC_MODE_64, &uc) != UC_ERR_OK)
		return -1;
	if (aarch64)
		uc_ctl_set_cpu_model(uc, UC_CPU_ARM64_MAX); /* as sim/unicorn.c */
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	struct snr_trace_step st;
	uint64_t first = 0;
	bool have = false;
	snr_trace_rewind(t);
	while (snr_trace_next(t, &st) == 1) {
		if (!have)
			first = st.pc;
		have = true;
		for (unsigned i = 0; i < st.nregs; i++) {
			int id = bare_id(regs[st.regs[i].reg].name);
			uint8_t v[64] = {0};
			memcpy(v, st.regs[i].val, regs[st.regs[i].reg].size);
			if (id >= 0)
				uc_reg_write(uc, id, v);
		}
		struct snr_trace_mem code = {0, 0, st.pc, st.code_len, st.code};
		for (unsigned i = 0; i <= st.nmem; i++) {
			const struct snr_trace_mem *m = i < st.nmem ? &st.mem[i] : &code;
			for (uint64_t p = m->addr & ~4095ull; p < m->addr + m->len; p += 4096)
				uc_mem_map(uc, p, 4096, UC_PROT_ALL);
			uc_mem_write(uc, m->addr, m->data, m->len);
		}
	}
	uc_hook h1, h2;
	uc_hook_add(uc, &h1, UC_HOOK_MEM_UNMAPPED, (void *)map_on_fault, NULL, 1, 0);
	if (aarch64)
		uc_hook_add(uc, &h2, UC_HOOK_INTR, (void *)no_intr, NULL, 1, 0);
	else
		uc_hook_add(uc, &h2, UC_HOOK_INSN, (void *)no_syscall, NULL, 1, 0, UC_X86_INS_SYSCALL);
	double t0 = now_s();
	uc_err e = uc_emu_start(uc, first, 0, 0, n);
	double dt = now_s() - t0;
	if (e != UC_ERR_OK)
		fprintf(stderr, "unicorn alone: %s\n", uc_strerror(e));
	uc_close(uc);
	return e == UC_ERR_OK ? dt : -1;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: bench_uc_replay TRACE.snrt [REPS]\n");
		return 2;
	}
	int reps = argc > 2 ? atoi(argv[2]) : 5;
	char err[600];
	struct snr_trace *t = snr_trace_open(argv[1], err, sizeof(err));
	if (!t) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	const char *isa = json_string_value(json_object_get(meta, "isa"));
	aarch64 = isa && !strcmp(isa, "aarch64");
	if (aarch64)
		ops = &snr_sim_unicorn_aarch64;
	else if (!isa || strcmp(isa, "x86-64")) {
		fprintf(stderr, "%s: a %s trace; the unicorn engine replays x86-64 and aarch64\n", argv[1],
			isa ? isa : "(no ISA)");
		return 1;
	}
	json_decref(meta);
	double best[4] = {1e30, 1e30, 1e30, 1e30};
	uint64_t n = 0;
	for (int r = 0; r < reps; r++) {
		double a = run_sim(t, NULL, &n), b = run_sim(t, &counting, &n);
		struct snr_replay_opts o = {.trace_path = argv[1], .sim = "unicorn"};
		struct snr_replay_result res;
		if (snr_replay(&o, &res, err, sizeof(err)) || !res.ok) {
			fprintf(stderr, "snr_replay: %s%s\n", err, res.report);
			return 1;
		}
		double c = res.seconds, d = run_bare(t, n);
		if (a < 0 || b < 0 || d < 0)
			return 1;
		double v[4] = {a, b, c, d};
		for (int k = 0; k < 4; k++)
			if (v[k] < best[k])
				best[k] = v[k];
	}
	static const char *const label[4] = {"sim, no tracker", "sim, tracker (all events)",
					     "snr_replay() (load + check incl.)", "unicorn alone (no hooks)"};
	printf("%llu %s instructions from %s, best of %d\n", (unsigned long long)n, aarch64 ? "aarch64" : "x86-64",
	       argv[1], reps);
	for (int k = 0; k < 4; k++)
		printf("%-36s %10.0f instructions/s  (%.3f s)\n", label[k], (double)n / best[k], best[k]);
	printf("unicorn alone / sim no tracker: %.1fx\n", best[0] / best[3]);
	snr_trace_close(t);
	return 0;
}
