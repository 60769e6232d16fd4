/*
 * dbg_ptrace.c: the debugger backend for programs on this host, through
 * Linux ptrace. open(NULL, argv) launches the command (fork, PTRACE_TRACEME,
 * execvp) and stops at its first instruction after exec; open("pid:N")
 * attaches with PTRACE_SEIZE + PTRACE_INTERRUPT.
 *
 * Single-threaded: the backend traces the thread it launched or attached to
 * (the thread group leader) and nothing else; nthreads() is 1. Other threads
 * of an attached program keep running.
 *
 * Registers (x86-64, named as GDB's target.xml names them): the
 * user_regs_struct GPRs (rax..r15, rip, eflags, cs ss ds es fs gs as 4 bytes,
 * fs_base, gs_base), then xmm0..xmm15 and mxcsr from PTRACE_GETFPREGS, then
 * ymm0h..ymm15h from PTRACE_GETREGSET NT_X86_XSTATE when the CPU has AVX
 * (zeros where the state is in its init form). On aarch64: x0..x30, sp, pc,
 * cpsr from NT_PRSTATUS. Memory: process_vm_readv, /proc/PID/mem when that
 * fails (pages the process cannot read itself, such as execute-only text).
 *
 * Breakpoints are software traps (int3 / brk #0) written through
 * /proc/PID/mem; the original bytes are kept, shown by read_mem, stepped
 * over on cont and restored on detach. A step runs one instruction: where
 * a probe finds that the platform's single step runs past an instruction a
 * hypervisor emulates (cpuid in some virtual machines), that instruction is
 * stepped by a trap after it and a continue. A step waits without a timeout
 * (an instruction that blocks in a system call blocks step); cont with a timeout
 * stops the program with SIGSTOP (launched) or PTRACE_INTERRUPT (attached).
 * A signal that stopped the program is passed to it on the next resume, as
 * GDB does by default.
 */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "isa/snr_isa.h"
#include "lib/snr_util.h"
#include "recorder/snr_debugger.h"

#if defined(__linux__) && (defined(__x86_64__) || defined(__aarch64__))
#define SNR_HAVE_PTRACE 1
#endif

#ifdef SNR_HAVE_PTRACE
#include <elf.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ptrace.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/user.h>
#include <sys/wait.h>

#define PT_MAX_BREAKPOINTS 1024

#if defined(__x86_64__)
static const uint8_t bp_insn[] = {0xcc};
#define BP_PC_ADVANCE 1 /* int3 traps with the pc after it */
#define ARCH_NAME "i386:x86-64"
#else
static const uint8_t bp_insn[] = {0x00, 0x00, 0x20, 0xd4}; /* brk #0 */
#define BP_PC_ADVANCE 0 /* brk traps with the pc on it */
#define ARCH_NAME "aarch64"
#endif
#define BP_LEN sizeof(bp_insn)

struct pt_bp {
	uint64_t addr;
	uint8_t saved[BP_LEN];
};

struct snr_dbg {
	pid_t pid;
	bool launched; /* our child (PTRACE_TRACEME) rather than seized */
	bool no_hw_count; /* the kernel gave no hardware breakpoint to count arrivals with */
	bool hw_probed; /* hw_breakpoints_fire has been asked */
	bool step_probed; /* probe_overstep has been asked */
	unsigned oversteps; /* x86-64: bit i, a single step runs past overstep_insns[i] here */
	void *isa; /* the x86-64 ISA plugin, for instruction lengths (made when first needed) */
	bool attached; /* alive and traced */
	int memfd;     /* /proc/PID/mem, opened lazily */
	int pending_sig;
	char err[512];

	struct snr_dbg_reg *regs;
	size_t nregs, regbytes, ngpr; /* the first ngpr entries are GPRs */
	uint8_t *cache;
	bool gpr_valid, ext_valid;
	bool have_ymm;

	struct pt_bp bps[PT_MAX_BREAKPOINTS];
	int nbps;

	/* How a step's stop is awaited (SNR_PTRACE_WAIT): */
	enum { WAIT_PINNED, WAIT_SPIN, WAIT_BLOCK } wait_mode;
	bool pinned; /* tracer and tracee share one CPU while stepping */
	cpu_set_t self_cpus, tracee_cpus; /* their affinities before */
};

static int fail(struct snr_dbg *d, const char *fmt, ...) SNR_PRINTF(2, 3);
static int fail(struct snr_dbg *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	return -1;
}

static void add_reg(struct snr_dbg *d, const char *name, uint32_t size)
{
	d->regs = snr_xrealloc(d->regs, (d->nregs + 1) * sizeof(*d->regs));
	struct snr_dbg_reg *r = &d->regs[d->nregs++];
	memset(r, 0, sizeof(*r));
	snprintf(r->name, sizeof(r->name), "%s", name);
	r->size = size;
	r->offset = (uint32_t)d->regbytes;
	d->regbytes += size;
}

/* ---- per-architecture registers ----------------------------------------- */

#if defined(__x86_64__)
/* GDB's names, in GDB's order, and where each lives in user_regs_struct. */
static const struct {
	const char *name;
	uint32_t size;
	size_t off;
} x86_gprs[] = {
#define R(n, s, f) {n, s, offsetof(struct user_regs_struct, f)}
	R("rax", 8, rax), R("rbx", 8, rbx), R("rcx", 8, rcx), R("rdx", 8, rdx), R("rsi", 8, rsi),
	R("rdi", 8, rdi), R("rbp", 8, rbp), R("rsp", 8, rsp), R("r8", 8, r8),   R("r9", 8, r9),
	R("r10", 8, r10), R("r11", 8, r11), R("r12", 8, r12), R("r13", 8, r13), R("r14", 8, r14),
	R("r15", 8, r15), R("rip", 8, rip), R("eflags", 4, eflags), R("cs", 4, cs), R("ss", 4, ss),
	R("ds", 4, ds),   R("es", 4, es),   R("fs", 4, fs),   R("gs", 4, gs),   R("fs_base", 8, fs_base),
	R("gs_base", 8, gs_base),
#undef R
};
#define NGPR (sizeof(x86_gprs) / sizeof(x86_gprs[0]))
#define PC_INDEX 16

/* XSAVE layout (non-compacted, as ptrace gives it) */
#define XSAVE_XCR0_OFFSET 464 /* Linux puts XCR0 in the sw_reserved bytes */
#define XSAVE_HDR_OFFSET 512
#define XSAVE_YMM_OFFSET 576
#define XSAVE_YMM_END (XSAVE_YMM_OFFSET + 256) /* legacy + header + YMM_Hi128: 832 bytes */
#define XSAVE_SIZE 1024                        /* a buffer for reading up to YMM_Hi128 */

static void arch_init_regs(struct snr_dbg *d)
{
	for (size_t i = 0; i < NGPR; i++)
		add_reg(d, x86_gprs[i].name, x86_gprs[i].size);
	d->ngpr = d->nregs;
	char name[16];
	for (int i = 0; i < 16; i++) {
		snprintf(name, sizeof(name), "xmm%d", i);
		add_reg(d, name, 16);
	}
	add_reg(d, "mxcsr", 4);
	/* ymm upper halves if the kernel says the CPU has AVX state */
	uint8_t xs[XSAVE_SIZE];
	struct iovec iov = {.iov_base = xs, .iov_len = sizeof(xs)};
	if (ptrace(PTRACE_GETREGSET, d->pid, (void *)NT_X86_XSTATE, &iov) == 0 && iov.iov_len >= XSAVE_YMM_END) {
		uint64_t xcr0;
		memcpy(&xcr0, xs + XSAVE_XCR0_OFFSET, 8);
		if (xcr0 & 4) {
			d->have_ymm = true;
			for (int i = 0; i < 16; i++) {
				snprintf(name, sizeof(name), "ymm%dh", i);
				add_reg(d, name, 16);
			}
		}
	}
}

static int arch_fetch_gprs(struct snr_dbg *d)
{
	struct user_regs_struct u;
	if (ptrace(PTRACE_GETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_GETREGS on pid %d: %s", d->pid, strerror(errno));
	for (size_t i = 0; i < NGPR; i++)
		memcpy(d->cache + d->regs[i].offset, (uint8_t *)&u + x86_gprs[i].off, d->regs[i].size);
	d->gpr_valid = true;
	return 0;
}

static int arch_fetch_ext(struct snr_dbg *d)
{
	size_t k = d->ngpr;
	if (d->have_ymm) {
		/* One request: the XSAVE area holds the legacy SSE state too
		 * (xmm at byte 160, mxcsr at byte 24); components whose xstate_bv
		 * bit is clear are in their initial state. */
		uint8_t xs[XSAVE_SIZE];
		struct iovec iov = {.iov_base = xs, .iov_len = sizeof(xs)};
		if (ptrace(PTRACE_GETREGSET, d->pid, (void *)NT_X86_XSTATE, &iov) < 0)
			return fail(d, "ptrace: PTRACE_GETREGSET NT_X86_XSTATE on pid %d: %s", d->pid, strerror(errno));
		uint64_t xstate_bv;
		memcpy(&xstate_bv, xs + XSAVE_HDR_OFFSET, 8);
		for (int i = 0; i < 16; i++, k++) {
			if (xstate_bv & 2)
				memcpy(d->cache + d->regs[k].offset, xs + 160 + 16 * i, 16);
			else
				memset(d->cache + d->regs[k].offset, 0, 16);
		}
		uint32_t mxcsr = 0x1f80;
		if (xstate_bv & 6)
			memcpy(&mxcsr, xs + 24, 4);
		memcpy(d->cache + d->regs[k++].offset, &mxcsr, 4);
		for (int i = 0; i < 16; i++, k++) {
			if (xstate_bv & 4)
				memcpy(d->cache + d->regs[k].offset, xs + XSAVE_YMM_OFFSET + 16 * i, 16);
			else
				memset(d->cache + d->regs[k].offset, 0, 16);
		}
	} else {
		struct user_fpregs_struct fp;
		if (ptrace(PTRACE_GETFPREGS, d->pid, NULL, &fp) < 0)
			return fail(d, "ptrace: PTRACE_GETFPREGS on pid %d: %s", d->pid, strerror(errno));
		for (int i = 0; i < 16; i++, k++)
			memcpy(d->cache + d->regs[k].offset, (uint8_t *)fp.xmm_space + 16 * i, 16);
		memcpy(d->cache + d->regs[k++].offset, &fp.mxcsr, 4);
	}
	d->ext_valid = true;
	return 0;
}

/* The kernel leaves RF (eflags bit 16) set after a hardware instruction
 * breakpoint so that the instruction runs on resume; the program's flags
 * are as they were without it (stepping never shows it). */
static int arch_clear_resume_flag(struct snr_dbg *d)
{
	struct user_regs_struct u;
	if (ptrace(PTRACE_GETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_GETREGS on pid %d: %s", d->pid, strerror(errno));
	if (!(u.eflags & 0x10000))
		return 0;
	u.eflags &= ~0x10000ull;
	if (ptrace(PTRACE_SETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_SETREGS on pid %d: %s", d->pid, strerror(errno));
	d->gpr_valid = false;
	return 0;
}

/* buf (read_regs' layout) into the thread: the general registers, then
 * the vector state through the same XSAVE or FP area they were read from. */
static int arch_write_regs(struct snr_dbg *d, const uint8_t *buf)
{
	struct user_regs_struct u;
	if (ptrace(PTRACE_GETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_GETREGS on pid %d: %s", d->pid, strerror(errno));
	for (size_t i = 0; i < NGPR; i++)
		memcpy((uint8_t *)&u + x86_gprs[i].off, buf + d->regs[i].offset, d->regs[i].size);
	if (ptrace(PTRACE_SETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_SETREGS on pid %d: %s", d->pid, strerror(errno));
	size_t k = d->ngpr;
	if (d->have_ymm) {
		/* the kernel takes only the whole XSAVE area back (AVX-512's is
		 * 2.7 KiB, AMX's 11 KiB) */
		uint8_t xs[16384];
		struct iovec iov = {.iov_base = xs, .iov_len = sizeof(xs)};
		if (ptrace(PTRACE_GETREGSET, d->pid, (void *)NT_X86_XSTATE, &iov) < 0)
			return fail(d, "ptrace: PTRACE_GETREGSET NT_X86_XSTATE on pid %d: %s", d->pid, strerror(errno));
		if (iov.iov_len < XSAVE_YMM_END || iov.iov_len == sizeof(xs))
			return fail(d, "ptrace: pid %d: an XSAVE area of %zu bytes", d->pid, iov.iov_len);
		for (int i = 0; i < 16; i++, k++)
			memcpy(xs + 160 + 16 * i, buf + d->regs[k].offset, 16);
		memcpy(xs + 24, buf + d->regs[k++].offset, 4);
		for (int i = 0; i < 16; i++, k++)
			memcpy(xs + XSAVE_YMM_OFFSET + 16 * i, buf + d->regs[k].offset, 16);
		uint64_t xstate_bv;
		memcpy(&xstate_bv, xs + XSAVE_HDR_OFFSET, 8);
		xstate_bv |= 6; /* the SSE and AVX components now hold what buf says */
		memcpy(xs + XSAVE_HDR_OFFSET, &xstate_bv, 8);
		if (ptrace(PTRACE_SETREGSET, d->pid, (void *)NT_X86_XSTATE, &iov) < 0)
			return fail(d, "ptrace: PTRACE_SETREGSET NT_X86_XSTATE on pid %d: %s", d->pid, strerror(errno));
	} else {
		struct user_fpregs_struct fp;
		if (ptrace(PTRACE_GETFPREGS, d->pid, NULL, &fp) < 0)
			return fail(d, "ptrace: PTRACE_GETFPREGS on pid %d: %s", d->pid, strerror(errno));
		for (int i = 0; i < 16; i++, k++)
			memcpy((uint8_t *)fp.xmm_space + 16 * i, buf + d->regs[k].offset, 16);
		memcpy(&fp.mxcsr, buf + d->regs[k++].offset, 4);
		if (ptrace(PTRACE_SETFPREGS, d->pid, NULL, &fp) < 0)
			return fail(d, "ptrace: PTRACE_SETFPREGS on pid %d: %s", d->pid, strerror(errno));
	}
	return 0;
}

static int arch_set_pc(struct snr_dbg *d, uint64_t pc)
{
	struct user_regs_struct u;
	if (ptrace(PTRACE_GETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_GETREGS on pid %d: %s", d->pid, strerror(errno));
	u.rip = pc;
	if (ptrace(PTRACE_SETREGS, d->pid, NULL, &u) < 0)
		return fail(d, "ptrace: PTRACE_SETREGS on pid %d: %s", d->pid, strerror(errno));
	d->gpr_valid = false;
	return 0;
}

#else /* __aarch64__ */

#define PC_INDEX 32

static void arch_init_regs(struct snr_dbg *d)
{
	char name[16];
	for (int i = 0; i < 31; i++) {
		snprintf(name, sizeof(name), "x%d", i);
		add_reg(d, name, 8);
	}
	add_reg(d, "sp", 8);
	add_reg(d, "pc", 8);
	add_reg(d, "cpsr", 4);
	d->ngpr = d->nregs;
}

static int arch_fetch_gprs(struct snr_dbg *d)
{
	struct user_regs_struct u; /* glibc: regs[31], sp, pc, pstate */
	struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};
	if (ptrace(PTRACE_GETREGSET, d->pid, (void *)NT_PRSTATUS, &iov) < 0)
		return fail(d, "ptrace: PTRACE_GETREGSET NT_PRSTATUS on pid %d: %s", d->pid, strerror(errno));
	memcpy(d->cache, u.regs, 31 * 8);
	memcpy(d->cache + 31 * 8, &u.sp, 8);
	memcpy(d->cache + 32 * 8, &u.pc, 8);
	uint32_t cpsr = (uint32_t)u.pstate;
	memcpy(d->cache + 33 * 8, &cpsr, 4);
	d->gpr_valid = true;
	return 0;
}

static int arch_fetch_ext(struct snr_dbg *d)
{
	d->ext_valid = true;
	return 0;
}

static int arch_clear_resume_flag(struct snr_dbg *d)
{
	(void)d;
	return 0;
}

static int arch_write_regs(struct snr_dbg *d, const uint8_t *buf)
{
	struct user_regs_struct u; /* glibc: regs[31], sp, pc, pstate */
	struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};
	if (ptrace(PTRACE_GETREGSET, d->pid, (void *)NT_PRSTATUS, &iov) < 0)
		return fail(d, "ptrace: PTRACE_GETREGSET NT_PRSTATUS on pid %d: %s", d->pid, strerror(errno));
	memcpy(u.regs, buf, 31 * 8);
	memcpy(&u.sp, buf + 31 * 8, 8);
	memcpy(&u.pc, buf + 32 * 8, 8);
	uint32_t cpsr;
	memcpy(&cpsr, buf + 33 * 8, 4);
	u.pstate = cpsr;
	if (ptrace(PTRACE_SETREGSET, d->pid, (void *)NT_PRSTATUS, &iov) < 0)
		return fail(d, "ptrace: PTRACE_SETREGSET NT_PRSTATUS on pid %d: %s", d->pid, strerror(errno));
	return 0;
}

static int arch_set_pc(struct snr_dbg *d, uint64_t pc)
{
	struct user_regs_struct u; /* glibc: regs[31], sp, pc, pstate */
	struct iovec iov = {.iov_base = &u, .iov_len = sizeof(u)};
	if (ptrace(PTRACE_GETREGSET, d->pid, (void *)NT_PRSTATUS, &iov) < 0)
		return fail(d, "ptrace: PTRACE_GETREGSET NT_PRSTATUS on pid %d: %s", d->pid, strerror(errno));
	u.pc = pc;
	if (ptrace(PTRACE_SETREGSET, d->pid, (void *)NT_PRSTATUS, &iov) < 0)
		return fail(d, "ptrace: PTRACE_SETREGSET NT_PRSTATUS on pid %d: %s", d->pid, strerror(errno));
	d->gpr_valid = false;
	return 0;
}
#endif

static int get_pc(struct snr_dbg *d, uint64_t *pc)
{
	if (!d->gpr_valid && arch_fetch_gprs(d) < 0)
		return -1;
	memcpy(pc, d->cache + d->regs[PC_INDEX].offset, 8);
	return 0;
}

/* ---- memory ------------------------------------------------------------- */

static int open_mem(struct snr_dbg *d)
{
	if (d->memfd >= 0)
		return 0;
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/mem", d->pid);
	d->memfd = open(path, O_RDWR | O_CLOEXEC);
	if (d->memfd < 0)
		return fail(d, "ptrace: open %s: %s", path, strerror(errno));
	return 0;
}

/* Raw read (breakpoint bytes as they are in memory). */
static int raw_read(struct snr_dbg *d, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = {.iov_base = buf, .iov_len = len};
	struct iovec remote = {.iov_base = (void *)(uintptr_t)addr, .iov_len = len};
	ssize_t n = process_vm_readv(d->pid, &local, 1, &remote, 1, 0);
	if (n == (ssize_t)len)
		return 0;
	if (open_mem(d) < 0)
		return -1;
	size_t done = 0;
	while (done < len) {
		ssize_t r = pread(d->memfd, (uint8_t *)buf + done, len - done, (off_t)(addr + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return fail(d, "ptrace: cannot read memory at 0x%llx (pid %d): %s",
				    (unsigned long long)(addr + done), d->pid, r < 0 ? strerror(errno) : "unmapped");
		done += (size_t)r;
	}
	return 0;
}

static int raw_write(struct snr_dbg *d, uint64_t addr, const void *buf, size_t len)
{
	if (open_mem(d) < 0)
		return -1;
	ssize_t r = pwrite(d->memfd, buf, len, (off_t)addr);
	if (r != (ssize_t)len)
		return fail(d, "ptrace: cannot write memory at 0x%llx (pid %d): %s", (unsigned long long)addr, d->pid,
			    r < 0 ? strerror(errno) : "short write");
	return 0;
}

/* ---- stops -------------------------------------------------------------- */

static int find_bp(const struct snr_dbg *d, uint64_t addr)
{
	for (int i = 0; i < d->nbps; i++)
		if (d->bps[i].addr == addr)
			return i;
	return -1;
}

/* The program's bytes in buf (len bytes read at addr), not our traps. */
static void show_saved(const struct snr_dbg *d, uint64_t addr, void *buf, size_t len)
{
	for (int i = 0; i < d->nbps; i++)
		for (size_t k = 0; k < BP_LEN; k++) {
			uint64_t a = d->bps[i].addr + k;
			if (a >= addr && a - addr < len)
				((uint8_t *)buf)[a - addr] = d->bps[i].saved[k];
		}
}

/* Turns a wait status into a stop; what names the request. */
static int decode_status(struct snr_dbg *d, int status, bool was_cont, bool interrupted, struct snr_dbg_stop *stop,
			 const char *what)
{
	memset(stop, 0, sizeof(*stop));
	stop->thread = 0;
	d->gpr_valid = d->ext_valid = false;
	if (WIFEXITED(status) || WIFSIGNALED(status)) {
		stop->kind = WIFEXITED(status) ? SNR_DBG_STOP_EXITED : SNR_DBG_STOP_KILLED;
		stop->code = WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status);
		stop->thread = -1;
		d->attached = false;
		d->nbps = 0;
		return 0;
	}
	if (!WIFSTOPPED(status))
		return fail(d, "ptrace: %s: unexpected wait status 0x%x for pid %d", what, status, d->pid);
	int sig = WSTOPSIG(status);
	bool event_stop = (status >> 16) == PTRACE_EVENT_STOP;
	if (interrupted && (event_stop || sig == SIGSTOP)) {
		stop->kind = SNR_DBG_STOP_TIMEOUT;
	} else if (event_stop) {
		stop->kind = SNR_DBG_STOP_SIGNAL; /* group stop of a seized process */
		stop->code = sig;
	} else if (sig == SIGTRAP) {
		stop->kind = SNR_DBG_STOP_TRAP;
		stop->code = SIGTRAP;
	} else {
		stop->kind = SNR_DBG_STOP_SIGNAL;
		stop->code = sig;
		d->pending_sig = sig;
	}
	uint64_t pc;
	if (get_pc(d, &pc) < 0)
		return -1;
	if (stop->kind == SNR_DBG_STOP_TRAP && was_cont && BP_PC_ADVANCE) {
		siginfo_t si;
		if (ptrace(PTRACE_GETSIGINFO, d->pid, NULL, &si) == 0 && si.si_code == SI_KERNEL &&
		    find_bp(d, pc - BP_PC_ADVANCE) >= 0) {
			pc -= BP_PC_ADVANCE;
			if (arch_set_pc(d, pc) < 0)
				return -1;
		}
	}
	stop->pc = pc;
	return 0;
}

/* While single-stepping, the tracer and the stepped thread are pinned to
 * the CPU the tracer is on: a step then hands that CPU to the tracee and
 * back without waking another CPU, whose wake-up latency dominates a step
 * otherwise (a VM's idle CPU most of all). Undone before the program runs
 * freely again (cont, detach). Failures leave things as they were. */
static void pin(struct snr_dbg *d)
{
	if (d->pinned || d->wait_mode != WAIT_PINNED)
		return;
	int cpu = sched_getcpu();
	if (cpu < 0 || sched_getaffinity(0, sizeof(d->self_cpus), &d->self_cpus) ||
	    sched_getaffinity(d->pid, sizeof(d->tracee_cpus), &d->tracee_cpus))
		return;
	cpu_set_t one;
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	if (sched_setaffinity(0, sizeof(one), &one))
		return;
	if (sched_setaffinity(d->pid, sizeof(one), &one)) {
		sched_setaffinity(0, sizeof(d->self_cpus), &d->self_cpus);
		return;
	}
	d->pinned = true;
}

static void unpin(struct snr_dbg *d)
{
	if (!d->pinned)
		return;
	sched_setaffinity(d->pid, sizeof(d->tracee_cpus), &d->tracee_cpus);
	sched_setaffinity(0, sizeof(d->self_cpus), &d->self_cpus);
	d->pinned = false;
}

static int wait_blocking(struct snr_dbg *d, int *status, const char *what)
{
	if (d->pinned) {
		/* The tracee runs on this CPU only when we give it up. */
		for (int spin = 0; spin < 200; spin++) {
			pid_t r = waitpid(d->pid, status, __WALL | WNOHANG);
			if (r == d->pid)
				return 0;
			if (r < 0 && errno != EINTR)
				return fail(d, "ptrace: %s: waitpid(%d): %s", what, d->pid, strerror(errno));
			sched_yield();
		}
	}
	/* A single step stops the tracee within microseconds; polling for that
	 * briefly avoids the blocking waitpid's wake-up latency, which otherwise
	 * dominates recording (measured: about 4k steps/s blocking). */
	for (int spin = 0; d->wait_mode == WAIT_SPIN && spin < 2000; spin++) {
		pid_t r = waitpid(d->pid, status, __WALL | WNOHANG);
		if (r == d->pid)
			return 0;
		if (r < 0 && errno != EINTR)
			return fail(d, "ptrace: %s: waitpid(%d): %s", what, d->pid, strerror(errno));
	}
	for (;;) {
		pid_t r = waitpid(d->pid, status, __WALL);
		if (r == d->pid)
			return 0;
		if (r < 0 && errno == EINTR)
			continue;
		return fail(d, "ptrace: %s: waitpid(%d): %s", what, d->pid, r < 0 ? strerror(errno) : "no status");
	}
}

/* Resumes with request (PTRACE_CONT or PTRACE_SINGLESTEP), delivering a
 * pending signal. */
static int resume(struct snr_dbg *d, int request, const char *what)
{
	int sig = d->pending_sig;
	d->pending_sig = 0;
	d->gpr_valid = d->ext_valid = false;
	if (ptrace(request, d->pid, NULL, (void *)(uintptr_t)sig) < 0)
		return fail(d, "ptrace: %s on pid %d: %s", what, d->pid, strerror(errno));
	return 0;
}

/* ---- one instruction per step ------------------------------------------ */

#if defined(__x86_64__)
/* Instructions a hypervisor may emulate (intercept, run for the guest and
 * skip). In some virtual machines (a Firecracker/PVM guest on AMD EPYC,
 * kernel 6.18) the trap flag's single-step trap after an emulated cpuid
 * comes one instruction late: PTRACE_SINGLESTEP over `cpuid; nop` stops
 * after the nop, and over `cpuid; int3` with the int3's SIGTRAP. A step
 * there would run two instructions, and a recorded pc sequence would miss
 * one. rdtsc, rdtscp, rdpid, xgetbv, rdrand and rdseed stepped exactly
 * there, but other hypervisors intercept other instructions, so each of
 * these is probed: the instruction, nops and a trap. (Not rdpid, which
 * capstone 4 decodes as rdseed: an rdpid is stepped as rdseed is.) */
#define OVERSTEP_PROBES(X)                                                                                     \
	X(cpuid, 0xa2, 2, ".byte 0x0f, 0xa2")                                                                  \
	X(rdtsc, 0x31, 2, ".byte 0x0f, 0x31")                                                                  \
	X(rdtscp, 0x01, 3, ".byte 0x0f, 0x01, 0xf9")                                                           \
	X(xgetbv, 0x01, 3, ".byte 0x0f, 0x01, 0xd0")                                                           \
	X(rdrand, 0xc7, 3, ".byte 0x0f, 0xc7, 0xf0")                                                           \
	X(rdseed, 0xc7, 3, ".byte 0x0f, 0xc7, 0xf8")

#define OVERSTEP_ASM(name, op, len, bytes)                                                                     \
	".globl snr_pt_probe_" #name "\n.hidden snr_pt_probe_" #name "\nsnr_pt_probe_" #name ":\n" bytes     \
	"\nnop\nnop\nint3\n"
__asm__(".pushsection .text\n" OVERSTEP_PROBES(OVERSTEP_ASM) ".popsection\n");
#define OVERSTEP_DECL(name, op, len, bytes)                                                                    \
	extern const uint8_t snr_pt_probe_##name[] __attribute__((visibility("hidden")));
OVERSTEP_PROBES(OVERSTEP_DECL)

static const struct {
	const char *mnemonic; /* as the ISA plugin disassembles it */
	uint8_t op;           /* the opcode byte after 0x0f */
	uint8_t len;          /* the probe's instruction's bytes */
	const uint8_t *probe;
} overstep_insns[] = {
#define OVERSTEP_ROW(name, op, len, bytes) {#name, op, len, snr_pt_probe_##name},
	OVERSTEP_PROBES(OVERSTEP_ROW)
#undef OVERSTEP_ROW
};
#define NOVERSTEP (sizeof(overstep_insns) / sizeof(overstep_insns[0]))

/* Which of overstep_insns a single step runs past on this machine (bit i
 * for the i-th): a forked child of ours, traced, steps each probe once
 * (eax and ecx 0: cpuid's leaf 0, xgetbv's XCR0). One the CPU lacks stops
 * with SIGILL and counts as exact. 0 if the probe cannot run. */
static unsigned probe_overstep(void)
{
	pid_t pid = fork();
	if (pid < 0)
		return 0;
	if (pid == 0) {
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			raise(SIGSTOP);
		_exit(0);
	}
	unsigned past = 0;
	int status;
	struct user_regs_struct u0, u;
	if (waitpid(pid, &status, __WALL) == pid && WIFSTOPPED(status) &&
	    ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(uintptr_t)PTRACE_O_EXITKILL) == 0 &&
	    ptrace(PTRACE_GETREGS, pid, NULL, &u0) == 0) {
		for (size_t i = 0; i < NOVERSTEP; i++) {
			const uint8_t *at = overstep_insns[i].probe;
			u = u0;
			u.rip = (uintptr_t)at;
			u.rax = u.rcx = 0;
			if (ptrace(PTRACE_SETREGS, pid, NULL, &u) < 0 ||
			    ptrace(PTRACE_SINGLESTEP, pid, NULL, NULL) < 0 || waitpid(pid, &status, __WALL) != pid ||
			    !WIFSTOPPED(status) || ptrace(PTRACE_GETREGS, pid, NULL, &u) < 0)
				break;
			if (WSTOPSIG(status) == SIGTRAP && u.rip != (uintptr_t)at + overstep_insns[i].len)
				past |= 1u << i;
		}
	}
	kill(pid, SIGKILL);
	while (waitpid(pid, &status, __WALL) < 0 && errno == EINTR)
		;
	return past;
}

static bool is_prefix(uint8_t b)
{
	return (b & 0xf0) == 0x40 /* REX */ || b == 0x66 || b == 0x67 || b == 0xf0 || b == 0xf2 || b == 0xf3 ||
	       b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 || b == 0x64 || b == 0x65;
}

/* 1 with *next the address after the instruction at pc if a single step
 * would run past it here, else 0 (-1: error). Costs nothing where the
 * probe found no such instruction; elsewhere a read of the instruction's
 * bytes, and a decode for one that starts like one of them. */
static int steps_past(struct snr_dbg *d, uint64_t pc, uint64_t *next)
{
	if (!d->step_probed) {
		d->step_probed = true;
		d->oversteps = probe_overstep();
	}
	if (!d->oversteps)
		return 0;
	uint8_t code[15];
	size_t n = sizeof(code), to_page_end = 4096 - (pc & 4095);
	if (raw_read(d, pc, code, n) < 0) {
		n = to_page_end < n ? to_page_end : 0;
		if (!n || raw_read(d, pc, code, n) < 0)
			return 0; /* the step faults on it */
	}
	show_saved(d, pc, code, n);
	size_t k = 0;
	while (k < n && is_prefix(code[k]))
		k++;
	if (k + 1 >= n || code[k] != 0x0f)
		return 0;
	bool maybe = false;
	for (size_t i = 0; i < NOVERSTEP; i++)
		maybe |= (d->oversteps >> i & 1) && overstep_insns[i].op == code[k + 1];
	if (!maybe)
		return 0;
	if (!d->isa) {
		char err[256];
		d->isa = snr_isa_x86_64.create(NULL, err, sizeof(err));
		if (!d->isa)
			return fail(d, "ptrace: step: %s", err);
	}
	char text[96];
	unsigned len = snr_isa_x86_64.disasm(d->isa, code, n, pc, text, sizeof(text));
	if (!len)
		return 0;
	for (size_t i = 0; i < NOVERSTEP; i++) {
		size_t m = strlen(overstep_insns[i].mnemonic);
		if ((d->oversteps >> i & 1) && !strncmp(text, overstep_insns[i].mnemonic, m) &&
		    (text[m] == 0 || text[m] == ' ')) {
			*next = pc + len;
			return 1;
		}
	}
	return 0;
}

static void free_isa(struct snr_dbg *d)
{
	if (d->isa)
		snr_isa_x86_64.destroy(d->isa);
}
#else
/* aarch64: single steps are exact where this backend has run. */
static int steps_past(struct snr_dbg *d, uint64_t pc, uint64_t *next)
{
	(void)d, (void)pc, (void)next;
	return 0;
}

static void free_isa(struct snr_dbg *d)
{
	(void)d;
}
#endif

/* Runs the one instruction at pc (a trap of ours there already lifted):
 * PTRACE_SINGLESTEP, or for an instruction a single step runs past here, a
 * trap at the next instruction (ours if one is there) and a continue. The
 * instructions steps_past knows all go on to the next one. */
static int step_insn(struct snr_dbg *d, uint64_t pc, struct snr_dbg_stop *stop)
{
	uint64_t next = 0;
	int past = steps_past(d, pc, &next);
	if (past < 0)
		return -1;
	int status;
	if (!past) {
		if (resume(d, PTRACE_SINGLESTEP, "PTRACE_SINGLESTEP") < 0 || wait_blocking(d, &status, "step") < 0)
			return -1;
		return decode_status(d, status, false, false, stop, "step");
	}
	bool ours = find_bp(d, next) >= 0;
	uint8_t saved[BP_LEN];
	if (!ours && (raw_read(d, next, saved, BP_LEN) < 0 || raw_write(d, next, bp_insn, BP_LEN) < 0))
		return -1;
	int rc = resume(d, PTRACE_CONT, "PTRACE_CONT");
	if (rc == 0)
		rc = wait_blocking(d, &status, "step");
	if (rc == 0)
		rc = decode_status(d, status, false, false, stop, "step");
	if (!ours && d->attached && raw_write(d, next, saved, BP_LEN) < 0)
		rc = -1;
	if (rc < 0)
		return -1;
	/* the trap's stop is the step's: at next, the trap not executed */
	siginfo_t si;
	if (stop->kind == SNR_DBG_STOP_TRAP && BP_PC_ADVANCE && stop->pc == next + BP_PC_ADVANCE &&
	    ptrace(PTRACE_GETSIGINFO, d->pid, NULL, &si) == 0 && si.si_code == SI_KERNEL) {
		if (arch_set_pc(d, next) < 0)
			return -1;
		stop->pc = next;
	}
	return 0;
}

/* If the pc sits on one of our breakpoints, executes the original
 * instruction under it: lift the trap, step, put it back. */
static int step_over_bp(struct snr_dbg *d, bool *stepped, struct snr_dbg_stop *stop)
{
	*stepped = false;
	uint64_t pc;
	if (get_pc(d, &pc) < 0)
		return -1;
	int i = find_bp(d, pc);
	if (i < 0)
		return 0;
	if (raw_write(d, pc, d->bps[i].saved, BP_LEN) < 0)
		return -1;
	if (step_insn(d, pc, stop) < 0)
		return -1;
	if (d->attached && raw_write(d, pc, bp_insn, BP_LEN) < 0)
		return -1;
	*stepped = true;
	return 0;
}

/* ---- the ABI ------------------------------------------------------------ */

static void unpin(struct snr_dbg *d);

static void pt_free(struct snr_dbg *d)
{
	unpin(d);
	free_isa(d);
	if (d->memfd >= 0)
		close(d->memfd);
	free(d->regs);
	free(d->cache);
	free(d);
}

static int launch(struct snr_dbg *d, char *const argv[])
{
	int pipefd[2];
	if (pipe2(pipefd, O_CLOEXEC) < 0)
		return fail(d, "ptrace: pipe: %s", strerror(errno));
	pid_t pid = fork();
	if (pid < 0) {
		close(pipefd[0]);
		close(pipefd[1]);
		return fail(d, "ptrace: fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(pipefd[0]);
		if (ptrace(PTRACE_TRACEME, 0, NULL, NULL) == 0)
			execvp(argv[0], argv);
		int e = errno;
		if (write(pipefd[1], &e, sizeof(e)) < 0)
			_exit(126);
		_exit(127);
	}
	close(pipefd[1]);
	d->pid = pid;
	d->launched = true;
	int status, e = 0;
	if (wait_blocking(d, &status, "launch") < 0) {
		close(pipefd[0]);
		return -1;
	}
	ssize_t n = read(pipefd[0], &e, sizeof(e));
	close(pipefd[0]);
	if (n == (ssize_t)sizeof(e))
		return fail(d, "ptrace: cannot run %s: %s", argv[0], strerror(e));
	if (!WIFSTOPPED(status) || WSTOPSIG(status) != SIGTRAP) {
		if (WIFSTOPPED(status))
			kill(pid, SIGKILL);
		return fail(d, "ptrace: %s did not stop at exec (wait status 0x%x)", argv[0], status);
	}
	ptrace(PTRACE_SETOPTIONS, pid, NULL, (void *)(uintptr_t)PTRACE_O_EXITKILL);
	return 0;
}

/* The state letter of /proc/PID/stat ('R', 'S', 'T', ...), 0 if unknown. */
static char process_state(pid_t pid)
{
	char path[64], buf[512];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	if (!f)
		return 0;
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = 0;
	const char *p = strrchr(buf, ')'); /* the command name may hold anything */
	return p && p[1] == ' ' ? p[2] : 0;
}

static int attach(struct snr_dbg *d, const char *spec)
{
	uint64_t v;
	if (!snr_parse_u64(spec, &v, false) || v == 0 || v > 0x3fffffff)
		return fail(d, "ptrace: target pid:%s: expected a process id", spec);
	d->pid = (pid_t)v;
	bool stopped = process_state(d->pid) == 'T';
	if (ptrace(PTRACE_SEIZE, d->pid, NULL, NULL) < 0)
		return fail(d, "ptrace: PTRACE_SEIZE pid %d: %s%s", d->pid, strerror(errno),
			    errno == EPERM ? " (check /proc/sys/kernel/yama/ptrace_scope or run as the owner)" : "");
	/* A process stopped by SIGSTOP (as a recorder that found something
	 * wrong before its window leaves it) would stay in its group stop
	 * through every PTRACE_CONT. SIGCONT ends that stop, and the tracee
	 * reports it (a signal-delivery stop) before it runs an instruction:
	 * the tracer takes it there, where it was, and drops the signal. */
	bool woken = stopped && kill(d->pid, SIGCONT) == 0;
	if (!woken && ptrace(PTRACE_INTERRUPT, d->pid, NULL, NULL) < 0)
		return fail(d, "ptrace: PTRACE_INTERRUPT pid %d: %s", d->pid, strerror(errno));
	int status;
	for (;;) {
		if (wait_blocking(d, &status, "attach") < 0)
			return -1;
		if (WIFEXITED(status) || WIFSIGNALED(status))
			return fail(d, "ptrace: pid %d ended while attaching", d->pid);
		bool event_stop = WIFSTOPPED(status) && (status >> 16) == PTRACE_EVENT_STOP;
		if (event_stop && !woken)
			return 0; /* the interrupt's stop */
		if (!event_stop && woken && WSTOPSIG(status) == SIGCONT)
			return 0;
		if (event_stop) { /* the group stop SIGCONT ends */
			if (ptrace(PTRACE_CONT, d->pid, NULL, NULL) < 0)
				return fail(d, "ptrace: attaching to pid %d: PTRACE_CONT: %s", d->pid, strerror(errno));
			continue;
		}
		/* a signal arrived first: pass it on and wait for our stop */
		if (ptrace(PTRACE_CONT, d->pid, NULL, (void *)(uintptr_t)WSTOPSIG(status)) < 0)
			return fail(d, "ptrace: attaching to pid %d: PTRACE_CONT: %s", d->pid, strerror(errno));
	}
}

static struct snr_dbg *pt_open(const char *target, char *const argv[], char *err, size_t errlen)
{
	struct snr_dbg *d = snr_xcalloc(1, sizeof(*d));
	d->memfd = -1;
	const char *wm = getenv("SNR_PTRACE_WAIT");
	if (!wm || !*wm || !strcmp(wm, "pinned")) {
		d->wait_mode = WAIT_PINNED;
	} else if (!strcmp(wm, "spin")) {
		d->wait_mode = WAIT_SPIN;
	} else if (!strcmp(wm, "block")) {
		d->wait_mode = WAIT_BLOCK;
	} else {
		snr_fmt(err, errlen, "ptrace: SNR_PTRACE_WAIT=%s: expected pinned, spin or block", wm);
		free(d);
		return NULL;
	}
	int r;
	if (target && !strncmp(target, "pid:", 4))
		r = attach(d, target + 4);
	else if (target)
		r = fail(d, "ptrace: target %s: expected pid:N, or a command to launch", target);
	else if (!argv || !argv[0])
		r = fail(d, "ptrace: nothing to launch (empty command)");
	else
		r = launch(d, argv);
	if (r == 0) {
		d->attached = true;
		arch_init_regs(d);
		d->cache = snr_xcalloc(d->regbytes, 1);
	}
	if (r < 0) {
		snr_fmt(err, errlen, "%s", d->err);
		pt_free(d);
		return NULL;
	}
	return d;
}

static int pt_detach(struct snr_dbg *d)
{
	if (!d->attached)
		return fail(d, "ptrace: detach: pid %d is not traced (ended or detached)", d->pid);
	for (int i = 0; i < d->nbps; i++)
		if (raw_write(d, d->bps[i].addr, d->bps[i].saved, BP_LEN) < 0)
			return -1;
	d->nbps = 0;
	unpin(d);
	int sig = d->pending_sig;
	d->pending_sig = 0;
	if (ptrace(PTRACE_DETACH, d->pid, NULL, (void *)(uintptr_t)sig) < 0)
		return fail(d, "ptrace: PTRACE_DETACH pid %d: %s", d->pid, strerror(errno));
	d->attached = false;
	return 0;
}

/* An attached process is detached with SIGSTOP, so it waits stopped for
 * the next debugger (kill -CONT lets it go on); a launched one is ours
 * alone and is killed. */
static int pt_close_stopped(struct snr_dbg *d, char *how, size_t howlen)
{
	int rc = -1;
	if (!d->attached) {
		snr_fmt(how, howlen, "pid %d is no longer traced", d->pid);
	} else if (d->launched) {
		kill(d->pid, SIGKILL);
		int status;
		while (waitpid(d->pid, &status, 0) < 0 && errno == EINTR)
			;
		d->attached = false;
		snr_fmt(how, howlen, "the program snr launched (pid %d) was killed: nothing else could debug it",
			d->pid);
	} else {
		/* PTRACE_DETACH's signal is ignored outside a signal-delivery
		 * stop: a SIGSTOP queued before it stops the process as it
		 * leaves the tracer. */
		d->pending_sig = 0;
		if (kill(d->pid, SIGSTOP) == 0 && pt_detach(d) == 0) {
			snr_fmt(how, howlen, "detached pid %d with SIGSTOP: it waits stopped (kill -CONT %d lets it go on)",
				d->pid, d->pid);
			rc = 0;
		} else {
			snr_fmt(how, howlen, "%s", d->attached ? strerror(errno) : d->err);
		}
	}
	pt_free(d);
	return rc;
}

static void pt_close(struct snr_dbg *d)
{
	if (!d)
		return;
	if (d->attached)
		pt_detach(d);
	pt_free(d);
}

static const char *pt_error(struct snr_dbg *d)
{
	return d->err;
}

static const char *pt_arch(struct snr_dbg *d)
{
	(void)d;
	return ARCH_NAME;
}

static int pt_nthreads(struct snr_dbg *d)
{
	(void)d;
	return 1;
}

static int pt_select_thread(struct snr_dbg *d, int thread)
{
	if (thread != 0)
		return fail(d, "ptrace: select_thread %d: this backend traces one thread (0)", thread);
	return 0;
}

static int pt_pid(struct snr_dbg *d)
{
	return d->pid;
}

/* The traced process's auxiliary vector, from /proc/PID/auxv. */
static int pt_read_auxv(struct snr_dbg *d, uint8_t *buf, size_t cap, size_t *len)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/auxv", d->pid);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return fail(d, "ptrace: opening %s: %s", path, strerror(errno));
	size_t n = 0;
	ssize_t got;
	while (n < cap && (got = read(fd, buf + n, cap - n)) != 0) {
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			int e = errno;
			close(fd);
			return fail(d, "ptrace: reading %s: %s", path, strerror(e));
		}
		n += (size_t)got;
	}
	close(fd);
	*len = n;
	return 0;
}

static const struct snr_dbg_reg *pt_registers(struct snr_dbg *d, size_t *n)
{
	*n = d->nregs;
	return d->regs;
}

static int pt_read_regs(struct snr_dbg *d, uint8_t *buf)
{
	if (!d->attached)
		return fail(d, "ptrace: read_regs: pid %d is not traced", d->pid);
	if (!d->gpr_valid && arch_fetch_gprs(d) < 0)
		return -1;
	if (!d->ext_valid && arch_fetch_ext(d) < 0)
		return -1;
	memcpy(buf, d->cache, d->regbytes);
	return 0;
}

static int pt_read_mem(struct snr_dbg *d, uint64_t addr, void *buf, size_t len)
{
	if (!d->attached)
		return fail(d, "ptrace: read_mem: pid %d is not traced", d->pid);
	if (len == 0)
		return 0;
	if (raw_read(d, addr, buf, len) < 0)
		return -1;
	show_saved(d, addr, buf, len);
	return 0;
}

static int pt_write_regs(struct snr_dbg *d, const uint8_t *buf)
{
	if (!d->attached)
		return fail(d, "ptrace: write_regs: pid %d is not traced", d->pid);
	int rc = arch_write_regs(d, buf);
	d->gpr_valid = false;
	d->ext_valid = false;
	return rc;
}

/* The program's bytes: a breakpoint in the range keeps its trap, with the
 * new byte under it. */
static int pt_write_mem(struct snr_dbg *d, uint64_t addr, const void *buf, size_t len)
{
	if (!d->attached)
		return fail(d, "ptrace: write_mem: pid %d is not traced", d->pid);
	if (len == 0)
		return 0;
	if (raw_write(d, addr, buf, len) < 0)
		return -1;
	for (int i = 0; i < d->nbps; i++) {
		bool hit = false;
		for (size_t k = 0; k < BP_LEN; k++) {
			uint64_t a = d->bps[i].addr + k;
			if (a >= addr && a - addr < len) {
				d->bps[i].saved[k] = ((const uint8_t *)buf)[a - addr];
				hit = true;
			}
		}
		if (hit && raw_write(d, d->bps[i].addr, bp_insn, BP_LEN) < 0)
			return -1;
	}
	return 0;
}

static int pt_set_breakpoint(struct snr_dbg *d, uint64_t addr)
{
	if (!d->attached)
		return fail(d, "ptrace: set_breakpoint: pid %d is not traced", d->pid);
	if (find_bp(d, addr) >= 0)
		return 0;
	if (d->nbps >= PT_MAX_BREAKPOINTS)
		return fail(d, "ptrace: set_breakpoint 0x%llx: more than %d breakpoints", (unsigned long long)addr,
			    PT_MAX_BREAKPOINTS);
	struct pt_bp *b = &d->bps[d->nbps];
	b->addr = addr;
	if (raw_read(d, addr, b->saved, BP_LEN) < 0 || raw_write(d, addr, bp_insn, BP_LEN) < 0)
		return fail(d, "ptrace: set_breakpoint 0x%llx: %s", (unsigned long long)addr, d->err);
	d->nbps++;
	return 0;
}

static int pt_clear_breakpoint(struct snr_dbg *d, uint64_t addr)
{
	int i = find_bp(d, addr);
	if (i < 0)
		return fail(d, "ptrace: clear_breakpoint: no breakpoint at 0x%llx", (unsigned long long)addr);
	if (d->attached && raw_write(d, addr, d->bps[i].saved, BP_LEN) < 0)
		return -1;
	d->bps[i] = d->bps[--d->nbps];
	return 0;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int pt_cont(struct snr_dbg *d, int timeout_ms, struct snr_dbg_stop *stop)
{
	if (!d->attached)
		return fail(d, "ptrace: cont: pid %d is not traced", d->pid);
	bool stepped;
	if (step_over_bp(d, &stepped, stop) < 0)
		return -1;
	if (stepped && (!d->attached || stop->kind != SNR_DBG_STOP_TRAP))
		return 0; /* the stepped instruction ended the program or faulted */
	unpin(d);
	if (resume(d, PTRACE_CONT, "PTRACE_CONT") < 0)
		return -1;
	int status;
	bool interrupted = false;
	if (timeout_ms <= 0) {
		if (wait_blocking(d, &status, "cont") < 0)
			return -1;
	} else {
		int64_t deadline = now_ms() + timeout_ms;
		long nap_ns = 20000;
		for (;;) {
			pid_t r = waitpid(d->pid, &status, __WALL | WNOHANG);
			if (r == d->pid)
				break;
			if (r < 0 && errno != EINTR)
				return fail(d, "ptrace: cont: waitpid(%d): %s", d->pid, strerror(errno));
			if (!interrupted && now_ms() >= deadline) {
				int k = d->launched ? kill(d->pid, SIGSTOP)
						    : (int)ptrace(PTRACE_INTERRUPT, d->pid, NULL, NULL);
				if (k < 0)
					return fail(d, "ptrace: cont: interrupting pid %d: %s", d->pid, strerror(errno));
				interrupted = true;
				if (wait_blocking(d, &status, "cont (interrupt)") < 0)
					return -1;
				break;
			}
			struct timespec ts = {0, nap_ns};
			nanosleep(&ts, NULL);
			if (nap_ns < 1000000)
				nap_ns *= 2;
		}
	}
	if (decode_status(d, status, true, interrupted, stop, "cont") < 0)
		return -1;
	return 0;
}

static int pt_step(struct snr_dbg *d, struct snr_dbg_stop *stop)
{
	if (!d->attached)
		return fail(d, "ptrace: step: pid %d is not traced", d->pid);
	pin(d);
	bool stepped;
	if (step_over_bp(d, &stepped, stop) < 0)
		return -1;
	if (stepped)
		return 0;
	uint64_t pc;
	if (get_pc(d, &pc) < 0)
		return -1;
	return step_insn(d, pc, stop);
}

/* An instruction breakpoint at addr as a perf event, for pid (0: this
 * process); period 0 counts without signalling. */
static int hw_bp_open(uint64_t addr, uint64_t period, pid_t pid)
{
	struct perf_event_attr a;
	memset(&a, 0, sizeof(a));
	a.type = PERF_TYPE_BREAKPOINT;
	a.size = sizeof(a);
	a.bp_type = HW_BREAKPOINT_X;
	a.bp_addr = addr;
	a.bp_len = sizeof(long);
	a.sample_period = period;
	a.wakeup_events = 1;
	a.exclude_kernel = 1;
	a.exclude_hv = 1;
	return (int)syscall(SYS_perf_event_open, &a, pid, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static __attribute__((noinline)) void hw_probe_mark(void)
{
	__asm__ volatile("" ::: "memory");
}

/* Whether a hardware breakpoint stops anything here. Some hypervisors (a
 * Firecracker/PVM guest on AMD EPYC, kernel 6.18) accept the event, and
 * debug registers written through PTRACE_POKEUSER read back as written, but
 * never raise the debug exception: the tracee would run past every arrival
 * it was to stop at, to its exit. So the tracer counts its own call of a
 * function under such a breakpoint once before trusting one. */
static bool hw_breakpoints_fire(void)
{
	void (*volatile mark)(void) = hw_probe_mark;
	int fd = hw_bp_open((uint64_t)(uintptr_t)hw_probe_mark, 0, 0);
	if (fd < 0)
		return false;
	mark();
	uint64_t count = 0;
	if (read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		count = 0;
	close(fd);
	return count == 1;
}

/* One traced thread: cont_selected is cont. Hits are counted here, one
 * continue per arrival (each a trap into this process, far cheaper than a
 * request over a socket), so the recorder asks once. */
/* The hits-th arrival at addr counted by the kernel: a hardware instruction
 * breakpoint as a perf event (PERF_TYPE_BREAKPOINT, the CPU's debug
 * registers) whose counter overflows at that arrival and signals the
 * tracee, which then stops at addr before executing it. The arrivals
 * before cost no stop at all (counting each in the tracer costs two: the
 * trap and the step off it, so a window ending in a 10,000-iteration loop
 * cost 20,000 context-switch pairs). Our trap at addr is lifted meanwhile.
 * 1: the kernel has no such event for us, or none that fires (then the
 * tracer counts). */
static int hw_cont_to_hit(struct snr_dbg *d, uint64_t addr, uint64_t hits, struct snr_dbg_stop *stop)
{
	if (!d->hw_probed) {
		d->hw_probed = true;
		d->no_hw_count = !hw_breakpoints_fire();
	}
	if (d->no_hw_count)
		return 1;
	int fd = hw_bp_open(addr, hits, d->pid);
	if (fd < 0) {
		d->no_hw_count = true;
		return 1;
	}
	if (fcntl(fd, F_SETOWN, d->pid) < 0 || fcntl(fd, F_SETSIG, SIGTRAP) < 0 || fcntl(fd, F_SETFL, O_ASYNC) < 0) {
		close(fd);
		d->no_hw_count = true;
		return 1;
	}
	int i = find_bp(d, addr);
	int rc = i >= 0 ? raw_write(d, addr, d->bps[i].saved, BP_LEN) : 0;
	int status = 0;
	if (rc == 0) {
		unpin(d);
		rc = resume(d, PTRACE_CONT, "PTRACE_CONT");
	}
	if (rc == 0)
		rc = wait_blocking(d, &status, "cont");
	uint64_t count = 0;
	if (rc == 0 && read(fd, &count, sizeof(count)) != (ssize_t)sizeof(count))
		count = 0;
	close(fd);
	if (rc == 0)
		rc = decode_status(d, status, false, false, stop, "cont");
	if (i >= 0 && d->attached && raw_write(d, addr, bp_insn, BP_LEN) < 0)
		rc = -1;
	if (rc)
		return -1;
	if (stop->kind == SNR_DBG_STOP_TRAP && stop->pc == addr && count != hits)
		return fail(d, "ptrace: stopped at 0x%llx after %llu arrivals there, not %llu", (unsigned long long)addr,
			    (unsigned long long)count, (unsigned long long)hits);
	return d->attached ? arch_clear_resume_flag(d) : 0;
}

static int pt_cont_to_hit(struct snr_dbg *d, uint64_t addr, uint64_t hits, struct snr_dbg_stop *stop)
{
	/* an arrival is a new one: off the breakpoint first, as cont does */
	bool stepped;
	if (step_over_bp(d, &stepped, stop) < 0)
		return -1;
	if (stepped && (!d->attached || stop->kind != SNR_DBG_STOP_TRAP))
		return 0;
	if (hits == 0)
		return 0;
	int hw = hw_cont_to_hit(d, addr, hits, stop);
	if (hw <= 0)
		return hw;
	for (uint64_t k = 0; k < hits; k++) {
		if (pt_cont(d, 0, stop) < 0)
			return -1;
		if (stop->kind != SNR_DBG_STOP_TRAP || stop->pc != addr)
			return 0; /* it went elsewhere: the caller sees where */
	}
	return 0;
}

static int pt_kill(struct snr_dbg *d)
{
	if (!d->attached)
		return fail(d, "ptrace: kill: pid %d is not traced", d->pid);
	unpin(d);
	if (kill(d->pid, SIGKILL) < 0)
		return fail(d, "ptrace: kill pid %d: %s", d->pid, strerror(errno));
	int status;
	do {
		if (wait_blocking(d, &status, "kill") < 0)
			return -1;
	} while (!WIFEXITED(status) && !WIFSIGNALED(status));
	d->attached = false;
	d->nbps = 0;
	return 0;
}

const struct snr_dbg_ops snr_dbg_ptrace = {
	.abi_version = SNR_DBG_ABI_VERSION,
	.name = "ptrace",
	.open = pt_open,
	.close = pt_close,
	.error = pt_error,
	.arch = pt_arch,
	.nthreads = pt_nthreads,
	.select_thread = pt_select_thread,
	.pid = pt_pid,
	.registers = pt_registers,
	.read_regs = pt_read_regs,
	.read_mem = pt_read_mem,
	.set_breakpoint = pt_set_breakpoint,
	.clear_breakpoint = pt_clear_breakpoint,
	.cont = pt_cont,
	.step = pt_step,
	.detach = pt_detach,
	.kill = pt_kill,
	.cont_selected = pt_cont,
	.cont_to_hit = pt_cont_to_hit,
	.write_regs = pt_write_regs,
	.write_mem = pt_write_mem,
	.close_stopped = pt_close_stopped,
	.read_auxv = pt_read_auxv,
};

#else /* no ptrace backend on this host */

static struct snr_dbg *pt_open(const char *target, char *const argv[], char *err, size_t errlen)
{
	(void)target;
	(void)argv;
	snr_fmt(err, errlen, "ptrace: this backend needs Linux on x86-64 or aarch64; use the rsp backend "
			     "with gdbserver instead");
	return NULL;
}

const struct snr_dbg_ops snr_dbg_ptrace = {
	.abi_version = SNR_DBG_ABI_VERSION,
	.name = "ptrace",
	.open = pt_open,
};
#endif
