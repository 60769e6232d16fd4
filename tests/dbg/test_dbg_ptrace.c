/*
 * test_dbg_ptrace.c: the ptrace backend on x86_prog (static, non-PIE).
 *  - launch: stopped at the ELF entry point; breakpoint at checksum() (nm);
 *    the argument registers hold data[]'s address and 64, memory there
 *    holds i*i+7, and the breakpoint's int3 is invisible to read_mem;
 *    10k single steps all stay inside checksum() and move the PC; the
 *    result register at the return address equals the checksum computed
 *    here; xmm/mxcsr are present; kill ends it and later calls fail.
 *  - a breakpoint left in place at detach is restored: the program runs
 *    on, prints its result and exits 42.
 *  - attach to a spinning child (pid:N), read registers, step, detach: the
 *    child keeps running.
 *  - a breakpoint never hit: cont with a timeout reports TIMEOUT.
 *  - exits and signals are stops: run to the end gives EXITED 42; a null
 *    store gives SIGNAL SIGSEGV in main, then KILLED SIGSEGV.
 *  - launching a missing command fails with a message naming it.
 *  - cont_to_hit: from checksum()'s entry, the 60th arrival at a pc of its
 *    loop leaves every general register (eflags too, with no RF left by the
 *    hardware breakpoint that counts the arrivals) as 2,000 single steps
 *    to that arrival do; a pc never reached stops at the program's exit.
 *  - one instruction per step over cpuid and rdtsc (emulated() in x86_prog),
 *    which some hypervisors' single steps run past: the pcs follow the
 *    instructions' lengths (the ISA plugin's), stepping off a breakpoint on
 *    cpuid too, and cont from a breakpoint on a cpuid stops at one on the
 *    next instruction.
 */
#include <errno.h>
#include <sys/personality.h>

#include "isa/snr_isa.h"
#include "tests/check.h"
#include "tests/dbg/dbg_testutil.h"

static const struct snr_dbg_ops *ops = &snr_dbg_ptrace;
static uint64_t fn, fn_size, data, data_size, entry;

static uint64_t reg(struct snr_dbg *d, const char *name)
{
	size_t n;
	const struct snr_dbg_reg *regs = ops->registers(d, &n);
	uint8_t buf[4096];
	if (regs[n - 1].offset + regs[n - 1].size > sizeof(buf) || ops->read_regs(d, buf) < 0)
		return ~0ull;
	return dbgt_reg(regs, n, buf, name);
}

static void test_launch(const char *prog)
{
	char err[512], *argv[] = {(char *)prog, NULL};
	struct snr_dbg *d = ops->open(NULL, argv, err, sizeof(err));
	CHECK(d != NULL, "launch %s: %s", prog, err);
	if (!d)
		return;
	struct snr_dbg_stop st;
	CHECK(!strcmp(ops->arch(d), "i386:x86-64"), "arch %s", ops->arch(d));
	CHECK(reg(d, "rip") == entry, "stopped at 0x%llx, not the entry 0x%llx", (unsigned long long)reg(d, "rip"),
	      (unsigned long long)entry);
	size_t n;
	const struct snr_dbg_reg *regs = ops->registers(d, &n);
	int have_xmm15 = 0, have_mxcsr = 0, have_fs_base = 0;
	for (size_t i = 0; i < n; i++) {
		have_xmm15 |= !strcmp(regs[i].name, "xmm15") && regs[i].size == 16;
		have_mxcsr |= !strcmp(regs[i].name, "mxcsr");
		have_fs_base |= !strcmp(regs[i].name, "fs_base");
	}
	CHECK(have_xmm15 && have_mxcsr && have_fs_base, "register list lacks xmm15, mxcsr or fs_base");
	CHECK((reg(d, "mxcsr") & 0xffff) == 0x1f80, "mxcsr 0x%llx at start, expected the default 0x1f80",
	      (unsigned long long)reg(d, "mxcsr"));

	uint8_t orig[4], seen[4];
	CHECK(ops->read_mem(d, fn, orig, 4) == 0, "read_mem checksum: %s", ops->error(d));
	CHECK(ops->set_breakpoint(d, fn) == 0, "set_breakpoint: %s", ops->error(d));
	CHECK(ops->read_mem(d, fn, seen, 4) == 0 && !memcmp(orig, seen, 4), "read_mem shows the breakpoint's int3");
	CHECK(ops->cont(d, 10000, &st) == 0, "cont: %s", ops->error(d));
	CHECK(st.kind == SNR_DBG_STOP_TRAP && st.pc == fn, "stop kind %d pc 0x%llx, expected trap at checksum 0x%llx",
	      st.kind, (unsigned long long)st.pc, (unsigned long long)fn);
	CHECK(reg(d, "rip") == fn, "rip 0x%llx after the breakpoint", (unsigned long long)reg(d, "rip"));
	CHECK(reg(d, "rdi") == data && reg(d, "rsi") == 64, "rdi 0x%llx rsi %llu, expected data 0x%llx and 64",
	      (unsigned long long)reg(d, "rdi"), (unsigned long long)reg(d, "rsi"), (unsigned long long)data);
	uint64_t mem[64], ret = 0;
	CHECK(ops->read_mem(d, data, mem, sizeof(mem)) == 0, "read_mem data: %s", ops->error(d));
	int bad = 0;
	for (uint64_t i = 0; i < 64; i++)
		bad += mem[i] != i * i + 7;
	CHECK(bad == 0, "%d of data[] differ from i*i+7", bad);
	CHECK(ops->read_mem(d, reg(d, "rsp"), &ret, 8) == 0, "read_mem [rsp]: %s", ops->error(d));

	/* steps: the breakpoint stays in, so the first step steps over it */
	int outside = 0, still = 0, notrap = 0;
	uint64_t prev = fn;
	for (int i = 0; i < 10000; i++) {
		if (ops->step(d, &st) < 0) {
			CHECK(0, "step %d: %s", i, ops->error(d));
			break;
		}
		notrap += st.kind != SNR_DBG_STOP_TRAP;
		outside += st.pc < fn || st.pc >= fn + fn_size;
		still += st.pc == prev;
		prev = st.pc;
	}
	CHECK(notrap == 0 && outside == 0 && still == 0, "10k steps: %d not traps, %d outside checksum(), %d stood still",
	      notrap, outside, still);
	CHECK(ops->set_breakpoint(d, ret) == 0, "set_breakpoint ret: %s", ops->error(d));
	CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == ret,
	      "cont to the return address 0x%llx: kind %d pc 0x%llx %s", (unsigned long long)ret, st.kind,
	      (unsigned long long)st.pc, ops->error(d));
	CHECK(reg(d, "rax") == dbgt_expected_checksum(), "rax %llu, expected checksum %llu",
	      (unsigned long long)reg(d, "rax"), (unsigned long long)dbgt_expected_checksum());
	CHECK(ops->kill(d) == 0, "kill: %s", ops->error(d));
	CHECK(ops->read_mem(d, data, mem, 8) < 0 && ops->error(d)[0], "read_mem after kill did not fail");
	CHECK(ops->step(d, &st) < 0, "step after kill did not fail");
	ops->close(d);
}

static void test_detach_restores(const char *prog)
{
	char err[512], *argv[] = {(char *)prog, NULL};
	char out[] = "/tmp/snr-dbg-ptrace-XXXXXX", text[256], want[64];
	int fd = mkstemp(out);
	/* the launched program inherits our stdout: point it at the file */
	int saved = dup(1);
	dup2(fd, 1);
	struct snr_dbg *d = ops->open(NULL, argv, err, sizeof(err));
	dup2(saved, 1);
	close(saved);
	close(fd);
	CHECK(d != NULL, "launch: %s", err);
	if (!d)
		return;
	int pid = ops->pid(d);
	CHECK(ops->set_breakpoint(d, fn) == 0, "set_breakpoint: %s", ops->error(d));
	CHECK(ops->detach(d) == 0, "detach: %s", ops->error(d));
	ops->close(d);
	int status = dbgt_wait(pid, 10000);
	CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 42,
	      "after detach with a breakpoint set: wait status 0x%x, expected exit 42", status);
	dbgt_slurp(out, text, sizeof(text));
	snprintf(want, sizeof(want), "result %llu\n", (unsigned long long)dbgt_expected_checksum());
	CHECK(!strcmp(text, want), "output \"%s\"", text);
	unlink(out);
}

static void test_attach(const char *prog)
{
	char *argv[] = {(char *)prog, "loop", NULL}, target[32], err[512];
	pid_t child = dbgt_spawn(argv, NULL);
	uint64_t main_addr = 0, main_size = 0, rip = 0;
	CHECK(dbgt_nm("nm", prog, "main", &main_addr, &main_size) == 0, "nm main");
	snprintf(target, sizeof(target), "pid:%d", (int)child);
	struct snr_dbg *d = NULL;
	/* until the child has reached its loop (a loaded machine may take a
	 * while to exec it): attach, look, detach, retry */
	for (int tries = 0; tries < 100; tries++) {
		usleep(20000);
		d = ops->open(target, NULL, err, sizeof(err));
		if (!d)
			break;
		rip = reg(d, "rip");
		if (rip >= main_addr && rip < main_addr + main_size)
			break;
		CHECK(ops->detach(d) == 0, "detach while waiting for the loop: %s", ops->error(d));
		ops->close(d);
		d = NULL;
	}
	CHECK(d != NULL, "attach %s: %s (last pc 0x%llx, main's loop never seen)", target, err, (unsigned long long)rip);
	if (d) {
		struct snr_dbg_stop st;
		for (int i = 0; i < 100; i++)
			CHECK(ops->step(d, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP, "step %d after attach: %s", i,
			      ops->error(d));
		CHECK(ops->pid(d) == child, "pid %d", ops->pid(d));
		CHECK(ops->detach(d) == 0, "detach: %s", ops->error(d));
		ops->close(d);
	}
	usleep(100000);
	int status;
	CHECK(waitpid(child, &status, WNOHANG) == 0 && kill(child, 0) == 0, "the child did not keep running after detach");
	kill(child, SIGKILL);
	waitpid(child, &status, 0);
}

static void test_timeout(const char *prog)
{
	char err[512], *argv[] = {(char *)prog, "loop", NULL};
	struct snr_dbg *d = ops->open(NULL, argv, err, sizeof(err));
	CHECK(d != NULL, "launch: %s", err);
	if (!d)
		return;
	struct snr_dbg_stop st;
	CHECK(ops->set_breakpoint(d, fn) == 0, "set_breakpoint: %s", ops->error(d));
	struct timespec t0, t1;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(ops->cont(d, 300, &st) == 0, "cont: %s", ops->error(d));
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double s = (double)(t1.tv_sec - t0.tv_sec) + (double)(t1.tv_nsec - t0.tv_nsec) / 1e9;
	CHECK(st.kind == SNR_DBG_STOP_TIMEOUT, "stop kind %d, expected TIMEOUT", st.kind);
	CHECK(s >= 0.29 && s < 2.0, "cont(300 ms) took %.3f s", s);
	/* still usable after the interrupt */
	CHECK(ops->step(d, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP, "step after timeout: %s", ops->error(d));
	CHECK(ops->kill(d) == 0, "kill: %s", ops->error(d));
	ops->close(d);
}

static void test_exit_and_signal(const char *prog)
{
	char err[512], *argv[] = {(char *)prog, NULL}, *segv[] = {(char *)prog, "segv", NULL};
	char out[] = "/tmp/snr-dbg-ptrace-XXXXXX";
	int fd = mkstemp(out), saved = dup(1);
	dup2(fd, 1);
	struct snr_dbg *d = ops->open(NULL, argv, err, sizeof(err));
	dup2(saved, 1);
	close(saved);
	close(fd);
	unlink(out);
	struct snr_dbg_stop st;
	CHECK(d != NULL, "launch: %s", err);
	if (d) {
		CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_EXITED && st.code == 42,
		      "run to the end: kind %d code %d: %s", st.kind, st.code, ops->error(d));
		CHECK(ops->step(d, &st) < 0, "step after the exit did not fail");
		ops->close(d);
	}
	d = ops->open(NULL, segv, err, sizeof(err));
	CHECK(d != NULL, "launch segv: %s", err);
	if (d) {
		uint64_t main_addr, main_size;
		dbgt_nm("nm", prog, "main", &main_addr, &main_size);
		CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_SIGNAL && st.code == SIGSEGV &&
			      st.pc >= main_addr && st.pc < main_addr + main_size,
		      "null store: kind %d code %d pc 0x%llx: %s", st.kind, st.code, (unsigned long long)st.pc,
		      ops->error(d));
		CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_KILLED && st.code == SIGSEGV,
		      "after the fault: kind %d code %d: %s", st.kind, st.code, ops->error(d));
		ops->close(d);
	}
}

/* Launched and stopped at checksum()'s entry, its breakpoint cleared. */
static struct snr_dbg *at_checksum(const char *prog)
{
	char err[512], *argv[] = {(char *)prog, NULL};
	struct snr_dbg *d = ops->open(NULL, argv, err, sizeof(err));
	CHECK(d != NULL, "launch %s: %s", prog, err);
	if (!d)
		return NULL;
	struct snr_dbg_stop st;
	CHECK(ops->set_breakpoint(d, fn) == 0 && ops->cont(d, 10000, &st) == 0 && st.pc == fn &&
		      ops->clear_breakpoint(d, fn) == 0,
	      "to checksum(): %s", ops->error(d));
	return d;
}

static void test_cont_to_hit(const char *prog)
{
	enum { STEPS = 2000, NGPR = 18 }; /* rax..r15, rip, eflags */
	static const char *const names[NGPR] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
						"r9",  "r10", "r11", "r12", "r13", "r14", "r15", "rip", "eflags"};
	/* the three launches below put the stack at the same address */
	int persona = personality(0xffffffff);
	CHECK(persona >= 0 && personality((unsigned long)persona | ADDR_NO_RANDOMIZE) >= 0, "personality: %s",
	      strerror(errno));
	struct snr_dbg *d = at_checksum(prog);
	if (!d)
		return;
	CHECK(ops->abi_version >= 3 && ops->cont_to_hit, "no cont_to_hit");
	static uint64_t pcs[STEPS + 1];
	pcs[0] = fn;
	struct snr_dbg_stop st;
	for (int i = 1; i <= STEPS; i++) {
		if (ops->step(d, &st) < 0 || st.kind != SNR_DBG_STOP_TRAP) {
			CHECK(0, "step %d: %s", i, ops->error(d));
			ops->kill(d);
			ops->close(d);
			return;
		}
		pcs[i] = st.pc;
	}
	/* the step of the 60th arrival at the first loop pc seen 60 times */
	int at = -1;
	for (int i = 1; i <= STEPS && at < 0; i++) {
		int seen = 0;
		for (int k = 1; k <= i; k++)
			seen += pcs[k] == pcs[i];
		if (seen == 60)
			at = i;
	}
	CHECK(at > 0, "no pc arrived at 60 times in %d steps", STEPS);
	ops->kill(d);
	ops->close(d);
	if (at <= 0)
		return;
	uint64_t want[NGPR];
	d = at_checksum(prog);
	if (!d)
		return;
	for (int i = 1; i <= at; i++)
		ops->step(d, &st);
	for (int k = 0; k < NGPR; k++)
		want[k] = reg(d, names[k]);
	ops->kill(d);
	ops->close(d);
	d = at_checksum(prog);
	if (!d)
		return;
	CHECK(ops->set_breakpoint(d, pcs[at]) == 0, "set_breakpoint: %s", ops->error(d));
	CHECK(ops->cont_to_hit(d, pcs[at], 60, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == pcs[at],
	      "cont_to_hit 60: kind %d pc 0x%llx: %s", st.kind, (unsigned long long)st.pc, ops->error(d));
	for (int k = 0; k < NGPR; k++)
		CHECK(reg(d, names[k]) == want[k], "after cont_to_hit, %s is 0x%llx; 60 arrivals by stepping: 0x%llx",
		      names[k], (unsigned long long)reg(d, names[k]), (unsigned long long)want[k]);
	/* and on from there: a breakpoint the program never reaches again */
	CHECK(ops->clear_breakpoint(d, pcs[at]) == 0 && ops->set_breakpoint(d, entry) == 0, "breakpoints: %s",
	      ops->error(d));
	CHECK(ops->cont_to_hit(d, entry, 5, &st) == 0 && st.kind == SNR_DBG_STOP_EXITED && st.code == 42,
	      "cont_to_hit at a pc never reached: kind %d code %d: %s", st.kind, st.code, ops->error(d));
	ops->close(d);
	personality((unsigned long)persona);
}

static void test_one_insn_steps(const char *prog)
{
	uint64_t at, size;
	CHECK(dbgt_nm("nm", prog, "emulated", &at, &size) == 0 && size > 0 && size <= 32, "nm emulated");
	char err[512], *argv[] = {(char *)prog, "cpuid", NULL};
	struct snr_dbg *d = ops->open(NULL, argv, err, sizeof(err));
	CHECK(d != NULL, "launch %s cpuid: %s", prog, err);
	if (!d)
		return;
	/* the instructions' addresses, by the ISA plugin's lengths */
	uint8_t code[32];
	uint64_t pcs[16];
	int npcs = 0;
	void *isa = snr_isa_x86_64.create(NULL, err, sizeof(err));
	CHECK(isa != NULL, "x86-64 plugin: %s", err);
	struct snr_dbg_stop st;
	CHECK(ops->set_breakpoint(d, at) == 0 && ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP &&
		      st.pc == at && ops->read_mem(d, at, code, size) == 0,
	      "to emulated(): %s", ops->error(d));
	char text[96];
	for (uint64_t off = 0; isa && off < size && npcs < 16;) {
		unsigned len = snr_isa_x86_64.disasm(isa, code + off, size - off, at + off, text, sizeof(text));
		if (!len)
			break;
		pcs[npcs++] = at + off;
		off += len;
	}
	if (isa)
		snr_isa_x86_64.destroy(isa);
	CHECK(npcs == 10, "emulated() decodes to %d instructions, not 10", npcs);
	/* a step from each (the first off the breakpoint) to the next */
	for (int i = 1; i < npcs; i++)
		CHECK(ops->step(d, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == pcs[i],
		      "step %d from 0x%llx: kind %d pc 0x%llx, expected 0x%llx: %s", i, (unsigned long long)pcs[i - 1],
		      st.kind, (unsigned long long)st.pc, (unsigned long long)pcs[i], ops->error(d));
	ops->kill(d);
	ops->close(d);

	/* breakpoints on both cpuids: cont from the first stops at the second,
	 * a step from that one (the trap lifted) stops at the rex.w cpuid */
	d = ops->open(NULL, argv, err, sizeof(err));
	CHECK(d != NULL, "launch %s cpuid: %s", prog, err);
	if (!d || npcs != 10) {
		if (d)
			ops->kill(d), ops->close(d);
		return;
	}
	CHECK(ops->set_breakpoint(d, pcs[2]) == 0 && ops->set_breakpoint(d, pcs[3]) == 0, "set_breakpoint: %s",
	      ops->error(d));
	CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == pcs[2],
	      "cont to the first cpuid: kind %d pc 0x%llx: %s", st.kind, (unsigned long long)st.pc, ops->error(d));
	CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == pcs[3],
	      "cont from the first cpuid to the second: kind %d pc 0x%llx: %s", st.kind, (unsigned long long)st.pc,
	      ops->error(d));
	CHECK(ops->step(d, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == pcs[4],
	      "step off the breakpoint on the second cpuid: kind %d pc 0x%llx, expected 0x%llx: %s", st.kind,
	      (unsigned long long)st.pc, (unsigned long long)pcs[4], ops->error(d));
	uint8_t b[2];
	CHECK(ops->read_mem(d, pcs[3], b, 2) == 0 && b[0] == 0x0f && b[1] == 0xa2,
	      "read_mem shows %02x %02x at the second cpuid", b[0], b[1]);
	CHECK(ops->cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_EXITED && st.code == 42,
	      "run to the end: kind %d code %d: %s", st.kind, st.code, ops->error(d));
	ops->close(d);
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		fprintf(stderr, "usage: test_dbg_ptrace X86_PROG\n");
		return 2;
	}
#if !defined(__linux__) || !defined(__x86_64__)
	fprintf(stderr, "skipped: the ptrace test program is x86-64 Linux\n");
	return 77;
#endif
	const char *prog = argv[1];
	uint64_t es;
	if (dbgt_nm("nm", prog, "checksum", &fn, &fn_size) < 0 || dbgt_nm("nm", prog, "data", &data, &data_size) < 0 ||
	    dbgt_nm("nm", prog, "_start", &entry, &es) < 0) {
		fprintf(stderr, "nm found no checksum, data or _start in %s\n", prog);
		return 1;
	}
	char err[512], *missing[] = {"/nonexistent/snr-no-such-program", NULL};
	struct snr_dbg *d = ops->open(NULL, missing, err, sizeof(err));
	CHECK(d == NULL && strstr(err, "snr-no-such-program") && strstr(err, "No such file"),
	      "launching a missing program: %s", err);
	d = ops->open("pid:notanumber", NULL, err, sizeof(err));
	CHECK(d == NULL && strstr(err, "notanumber"), "pid:notanumber: %s", err);

	test_launch(prog);
	test_detach_restores(prog);
	test_attach(prog);
	test_timeout(prog);
	test_exit_and_signal(prog);
	test_cont_to_hit(prog);
	test_one_insn_steps(prog);
	return check_report("test_dbg_ptrace");
}
