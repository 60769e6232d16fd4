/*
 * test_isa_x86_native.c: the x86-64 plugin against the CPU it runs on.
 *
 * A forked child is single-stepped by the ptrace debugger backend (attached
 * as pid:N), whose steps must each run one instruction even where the
 * platform's own single step runs past some (see dbg_ptrace.c). For each
 * trial the parent writes one instruction into a shared code page, gives
 * the child fresh random registers (pointers into a shared scratch buffer,
 * small counts and bit offsets, random flags including DF, random xmm
 * contents) and random scratch bytes, asks the plugin, steps once, and
 * checks:
 *  (a) every register that changed is in regs_written (GPRs, rip, eflags
 *      without TF/RF, segment selectors, fs_base/gs_base, xmm0-15, mxcsr);
 *  (b) every scratch byte that changed lies in a written region;
 *  (c) a non-branch instruction moves rip by its length (a rep string
 *      instruction may stay: the CPU traps after each iteration).
 * The scratch buffer lies below 4 GiB so that 32-bit addressing reaches it.
 * Skips (exit 77) where ptrace is not allowed or the host is not x86-64.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/snr_isa.h"
#include "recorder/snr_debugger.h"
#include "tests/check.h"

#if defined(__x86_64__) && defined(__linux__)
#include <cpuid.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/ptrace.h>
#include <sys/user.h>
#include <sys/wait.h>
#include <unistd.h>

#define SCRATCH_SIZE 0x10000
#define TRIALS 40

/* One instruction per row; pointers are rbx rsi rdi rbp rsp (into scratch),
 * counts rcx (0..8), other GPRs hold 0..255. */
static const struct {
	const char *hex;
	bool avx;
} insns[] = {
	{"488b448b10"}, {"4889448b10"}, {"894ccbf8"}, {"8b4308"}, {"668903"}, {"8823"}, {"8a23"}, {"668b03"},
	{"b005"}, {"b801000000"}, {"48c7c0ffffffff"}, {"480343f8"}, {"480103"}, {"2903"}, {"4831c0"}, {"31c0"},
	{"48ff03"}, {"fe0b"}, {"48f71b"}, {"f713"}, {"48d123"}, {"48c1e003"}, {"480fc8"}, {"0fc8"},
	{"480fb603"}, {"480fbe03"}, {"4863c3"}, {"480f44c3"}, {"0f44c3"}, {"0f94c0"}, {"0f9503"}, {"480fafc3"},
	{"48f7e3"}, {"f6e3"}, {"4899"}, {"99"}, {"9f"}, {"9e"}, {"f9"}, {"f8"}, {"fd"}, {"fc"}, {"f5"},
	{"50"}, {"5b"}, {"ff33"}, {"8f03"}, {"6a05"}, {"666a05"}, {"9c"}, {"e800000000"}, {"c3"}, {"c20800"},
	{"c9"}, {"c8100000"}, {"ebfe"}, {"7400"}, {"ffe3"},
	{"f3a4"}, {"a4"}, {"f348a5"}, {"f3aa"}, {"f348ab"}, {"aa"}, {"ac"}, {"48ad"}, {"f3a6"}, {"f2ae"},
	{"a6"}, {"af"},
	{"f0480fb10b"}, {"480fb10b"}, {"0fb10b"}, {"0fb01b"}, {"488703"}, {"8603"}, {"480fc103"},
	{"f0480fc103"}, {"f04883030f"}, {"4887d8"},
	{"0f1003"}, {"0f1103"}, {"0f2903"}, {"0f2803"}, {"660f6f03"}, {"660f7f03"}, {"f30f6f03"}, {"f30f7f03"},
	{"f30f1003"}, {"f20f1103"}, {"f30f10c1"}, {"f2480f2ac0"}, {"0f58c1"}, {"660fefc0"}, {"660f7ec0"},
	{"66480f6ec0"}, {"f30f7e03"}, {"660fd603"}, {"0f1203"}, {"0f1303"}, {"0f1703"}, {"660f3a1603" "01"},
	{"660f3a22c001"}, {"0fae1b"}, {"0f2ec1"}, {"f30f51c1"}, {"660f7403"},
	{"c5fe6f03", true}, {"c5fe7f03", true}, {"c5fa6f03", true}, {"c5f058c2", true}, {"c5f877", true},
	{"c5fc5803", true}, {"c5f91003", true}, {"c5fa1003", true}, {"c4e27d1803", true},
	{"488d448b10"}, {"8d0418"}, {"0f1f440000"}, {"90"}, {"d7"}, {"480fa303"}, {"480fab03"}, {"0fb303"},
	{"480fbb03"}, {"480fba2305"}, {"0fa2"}, {"0f31"}, {"64488b042528000000"}, {"6448a12800000000000000"},
	{"678b03"}, {"67880b"}, {"480fbcc3"}, {"f3480fb8c3"}, {"480fa4d808"}, {"0f1803"},
};

static uint64_t rng = 0x2545f4914f6cdd1dull;
static uint64_t rnd(void)
{
	return check_rand(&rng);
}

static int reg_index(const struct snr_isa_reg *f, size_t n, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(f[i].name, name))
			return (int)i;
	return -1;
}

static bool has_avx(void)
{
	unsigned a, b, c, d;
	if (!__get_cpuid(1, &a, &b, &c, &d))
		return false;
	return (c & (1u << 28)) && (c & (1u << 27)); /* AVX and OSXSAVE */
}

struct state {
	struct user_regs_struct g;
	struct user_fpregs_struct f;
};

static void get_state(pid_t pid, struct state *s)
{
	ptrace(PTRACE_GETREGS, pid, 0, &s->g);
	ptrace(PTRACE_GETFPREGS, pid, 0, &s->f);
}

/* The plugin's register values from a ptrace state. */
struct values {
	uint8_t v[SNR_ISA_MAX_REGS][16];
	const uint8_t *p[SNR_ISA_MAX_REGS];
};

static void put(struct values *v, const struct snr_isa_reg *f, size_t n, const char *name, const void *src,
		size_t len)
{
	int r = reg_index(f, n, name);
	if (r < 0)
		return;
	memset(v->v[r], 0, 16);
	memcpy(v->v[r], src, len);
	v->p[r] = v->v[r];
}

/* Calls each(ctx, name, bytes, size) for every register of a ptrace state. */
static void each_reg(const struct state *s, void (*each)(void *ctx, const char *name, const void *src, size_t len),
		     void *ctx)
{
	const struct user_regs_struct *g = &s->g;
	const unsigned long long gpr[] = {g->rax, g->rbx, g->rcx, g->rdx, g->rsi, g->rdi, g->rbp, g->rsp,
					  g->r8,  g->r9,  g->r10, g->r11, g->r12, g->r13, g->r14, g->r15,
					  g->rip, g->eflags, g->cs, g->ss, g->ds, g->es, g->fs, g->gs,
					  g->fs_base, g->gs_base};
	static const char *const names[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
					    "r9", "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags",
					    "cs", "ss", "ds", "es", "fs", "gs", "fs_base", "gs_base"};
	for (size_t i = 0; i < sizeof gpr / sizeof gpr[0]; i++)
		each(ctx, names[i], &gpr[i], 8);
	for (int x = 0; x < 16; x++) {
		char name[8];
		snprintf(name, sizeof name, "xmm%d", x);
		each(ctx, name, &s->f.xmm_space[4 * x], 16);
	}
	each(ctx, "mxcsr", &s->f.mxcsr, 4);
}

struct to_values_ctx {
	const struct snr_isa_reg *f;
	size_t n;
	struct values *v;
};

static void put_value(void *ctx, const char *name, const void *src, size_t len)
{
	struct to_values_ctx *c = ctx;
	put(c->v, c->f, c->n, name, src, len);
}

static void to_values(const struct state *s, const struct snr_isa_reg *f, size_t n, struct values *v)
{
	memset(v->p, 0, sizeof v->p);
	struct to_values_ctx c = {f, n, v};
	each_reg(s, put_value, &c);
}

/* The debugger backend's register buffer (its layout, GDB's names). */
struct dbg_regs {
	const struct snr_dbg_reg *r;
	size_t n;
	uint8_t buf[4096];
};

static void put_dbg(void *ctx, const char *name, const void *src, size_t len)
{
	struct dbg_regs *b = ctx;
	for (size_t i = 0; i < b->n; i++)
		if (!strcmp(b->r[i].name, name)) {
			memcpy(b->buf + b->r[i].offset, src, b->r[i].size < len ? b->r[i].size : len);
			return;
		}
}

static const struct snr_dbg_ops *dbg = &snr_dbg_ptrace;

/* s into the child through the backend (the vector registers it has
 * beyond s, ymm's upper halves, as they were). */
static bool set_state(struct snr_dbg *d, const struct state *s)
{
	static struct dbg_regs b;
	b.r = dbg->registers(d, &b.n);
	if (b.r[b.n - 1].offset + b.r[b.n - 1].size > sizeof b.buf || dbg->read_regs(d, b.buf) < 0)
		return false;
	each_reg(s, put_dbg, &b);
	return dbg->write_regs(d, b.buf) == 0;
}

static void run(struct snr_dbg *d, uint8_t *code, uint8_t *scratch, void *self)
{
	pid_t pid = (pid_t)dbg->pid(d);
	size_t n;
	const struct snr_isa_reg *f = snr_isa_x86_64.registers(self, &n);
	static uint8_t before[SCRATCH_SIZE];
	static struct values vb, va;
	bool avx = has_avx();
	struct state s0;
	get_state(pid, &s0);
	uint64_t sbase = (uint64_t)(uintptr_t)scratch;
	int steps = 0;
	for (size_t k = 0; k < sizeof insns / sizeof insns[0]; k++) {
		if (insns[k].avx && !avx)
			continue;
		uint8_t bytes[16];
		size_t len = 0;
		for (const char *h = insns[k].hex; h[0] && h[1]; h += 2) {
			char b[3] = {h[0], h[1], 0};
			bytes[len++] = (uint8_t)strtoul(b, NULL, 16);
		}
		for (int t = 0; t < TRIALS; t++) {
			/* code at a random offset, then int3s */
			memset(code, 0xcc, 4096);
			size_t off = 64 + rnd() % 512;
			memcpy(code + off, bytes, len);
			for (size_t i = 0; i < SCRATCH_SIZE; i++)
				scratch[i] = (uint8_t)rnd();
			struct state s = s0;
			uint64_t ptr[5];
			for (int i = 0; i < 5; i++)
				ptr[i] = sbase + 0x4000 + (rnd() % 0x800) * 16;
			s.g.rbx = ptr[0], s.g.rsi = ptr[1], s.g.rdi = ptr[2], s.g.rbp = ptr[3], s.g.rsp = ptr[4];
			s.g.rcx = rnd() % 9;
			/* ret, ret 8 and leave+ret find a return address in the code page */
			uint64_t ret_to = (uint64_t)(uintptr_t)code;
			memcpy(scratch + (ptr[4] - sbase), &ret_to, 8);
			unsigned long long *data[] = {&s.g.rax, &s.g.rdx, &s.g.r8,  &s.g.r9,  &s.g.r10, &s.g.r11,
						      &s.g.r12, &s.g.r13, &s.g.r14, &s.g.r15};
			for (size_t i = 0; i < sizeof data / sizeof data[0]; i++)
				*data[i] = rnd() % 256;
			s.g.eflags = 0x202 | (rnd() & 0x8d5) | ((rnd() & 1) << 10);
			s.g.rip = (uint64_t)(uintptr_t)(code + off);
			for (int i = 0; i < 64; i++)
				s.f.xmm_space[i] = (unsigned)rnd();
			s.f.mxcsr = 0x1f80;
			if (!set_state(d, &s)) {
				CHECK(0, "%s: setting registers: %s", insns[k].hex, dbg->error(d));
				return;
			}
			get_state(pid, &s);
			to_values(&s, f, n, &vb);
			memcpy(before, scratch, SCRATCH_SIZE);

			struct snr_isa_regs regs = {vb.p, 0, 1};
			struct snr_insn_access a;
			char text[96];
			snr_isa_x86_64.disasm(self, code + off, 16, s.g.rip, text, sizeof text);
			int rc = snr_isa_x86_64.access(self, code + off, 16, s.g.rip, &regs, &a);
			CHECK(rc == 0, "%s: access: %s", insns[k].hex, a.fault ? a.fault : "?");
			CHECK(a.length == len, "%s (%s): length %u, assembled %zu", insns[k].hex, text, a.length, len);

			struct snr_dbg_stop stop;
			if (dbg->step(d, &stop) < 0 || stop.kind == SNR_DBG_STOP_EXITED ||
			    stop.kind == SNR_DBG_STOP_KILLED) {
				CHECK(0, "%s: child lost: %s", text, dbg->error(d));
				return;
			}
			CHECK(stop.kind == SNR_DBG_STOP_TRAP, "%s: stop kind %d (signal %d), not a step", text,
			      stop.kind, stop.code);
			steps++;
			struct state s1;
			get_state(pid, &s1);
			to_values(&s1, f, n, &va);
			for (size_t r = 0; r < n; r++) {
				if (!vb.p[r] || !va.p[r])
					continue;
				uint8_t x[16], y[16];
				memcpy(x, vb.p[r], 16);
				memcpy(y, va.p[r], 16);
				if (!strcmp(f[r].name, "eflags")) {
					x[1] &= (uint8_t)~0x01, y[1] &= (uint8_t)~0x01; /* TF */
					x[2] &= (uint8_t)~0x01, y[2] &= (uint8_t)~0x01; /* RF */
				}
				if (memcmp(x, y, f[r].size))
					CHECK(snr_regset_has(a.regs_written, (unsigned)r), "%s: %s changed, not in regs_written",
					      text, f[r].name);
			}
			for (size_t i = 0; i < SCRATCH_SIZE; i++) {
				if (before[i] == scratch[i])
					continue;
				uint64_t addr = sbase + i;
				bool in = false;
				for (unsigned m = 0; m < a.nmem; m++)
					in |= a.mem[m].write && addr >= a.mem[m].addr &&
					      addr - a.mem[m].addr < a.mem[m].row_bytes * a.mem[m].rows;
				CHECK(in, "%s: byte at scratch+%#zx changed, not in a written region", text, i);
				if (!in)
					break;
			}
			bool rep = bytes[0] == 0xf3 || bytes[0] == 0xf2;
			if (a.cls != SNR_CLASS_BRANCH)
				CHECK(s1.g.rip == s.g.rip + a.length || (rep && s1.g.rip == s.g.rip),
				      "%s: rip moved by %lld, length %u", text, (long long)(s1.g.rip - s.g.rip), a.length);
		}
	}
	fprintf(stderr, "test_isa_x86_native: %d single steps compared\n", steps);
}

int main(void)
{
	uint8_t *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
	uint8_t *scratch = mmap(NULL, SCRATCH_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS | MAP_32BIT, -1, 0);
	if (code == MAP_FAILED || scratch == MAP_FAILED) {
		fprintf(stderr, "test_isa_x86_native: mmap failed, skipped\n");
		return 77;
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		for (;;)
			pause();
	char err[512], target[32];
	struct snr_dbg *d = NULL;
	if (pid > 0) {
		snprintf(target, sizeof target, "pid:%d", (int)pid);
		d = dbg->open(target, NULL, err, sizeof err);
	}
	if (!d) {
		fprintf(stderr, "test_isa_x86_native: ptrace not available here (%s), skipped\n",
			pid < 0 ? "fork failed" : err);
		if (pid > 0)
			kill(pid, SIGKILL), waitpid(pid, NULL, 0);
		return 77;
	}
	void *self = snr_isa_x86_64.create(NULL, err, sizeof err);
	CHECK(self, "create: %s", err);
	if (self) {
		run(d, code, scratch, self);
		snr_isa_x86_64.destroy(self);
	}
	if (dbg->kill(d) < 0)
		kill(pid, SIGKILL);
	dbg->close(d);
	return check_report("test_isa_x86_native");
}
#else
int main(void)
{
	fprintf(stderr, "test_isa_x86_native: not an x86-64 Linux host, skipped\n");
	return 77;
}
#endif
