/*
 * test_dbg_interop.c: the RSP client against real stubs. For each of
 * qemu-riscv64 -g (running rv_prog.elf) and gdbserver --attach (to the
 * static, non-PIE x86_prog, waiting on stdin): connect, check the architecture and register list,
 * break at checksum() (address from nm), and check what the client reads
 * against independent sources: the argument registers hold nm's address of
 * data[] and 64, memory there holds i*i+7 (the program's formula), and at
 * the return address the result register holds the checksum computed here,
 * the same value the program prints. Steps 1000 instructions, every PC
 * inside checksum(); on x86 the sequence must equal the one the ptrace
 * backend steps through on the same binary. Then detaches and checks that
 * the program prints its result and exits 42; under qemu, also runs a
 * second copy to the end and expects the W stop reply with code 42.
 *
 *
 * Interrupts: against gdbserver running x86_prog's endless loop, cont with
 * a 300 ms timeout sends 0x03 and reports TIMEOUT, and stepping goes on.
 * QEMU 7.2's user-mode stub does not read the socket while the guest runs,
 * so against rv_spin.elf the client must report, within its reply timeout,
 * that the interrupt went unanswered, and fail later requests at once.
 *
 * usage: test_dbg_interop X86_PROG RV_PROG_ELF RV_SPIN_ELF ("" to skip);
 * exits 77 (skipped) when neither qemu-riscv64 nor gdbserver is installed.
 */
#include "tests/check.h"
#include "tests/dbg/dbg_testutil.h"

#define NSTEPS 1000

struct arch_names {
	const char *nm, *arch, *pc, *arg0, *arg1, *ret, *ra; /* ra NULL: return address at [sp] */
	const char *sp;
};

static const struct arch_names rv = {"riscv64-unknown-elf-nm", "riscv:rv64", "pc", "a0", "a1", "a0", "ra", "sp"};
static const struct arch_names x86 = {"nm", "i386:x86-64", "rip", "rdi", "rsi", "rax", NULL, "rsp"};

static int in_path(const char *prog)
{
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "command -v %s >/dev/null 2>&1", prog);
	return system(cmd) == 0;
}

/* Breakpoint, checks, NSTEPS steps (PCs into pcs), finish. Returns 0 when it
 * got far enough to detach. */
static int drive(const char *who, const struct snr_dbg_ops *ops, struct snr_dbg *d, const char *elf,
		 const struct arch_names *an, uint64_t *pcs)
{
	uint64_t fn = 0, fn_size = 0, data = 0, data_size = 0;
	if (dbgt_nm(an->nm, elf, "checksum", &fn, &fn_size) < 0 || dbgt_nm(an->nm, elf, "data", &data, &data_size) < 0) {
		CHECK(0, "%s: nm found no checksum/data in %s", who, elf);
		return -1;
	}
	const char *arch = ops->arch(d);
	CHECK(arch && !strcmp(arch, an->arch), "%s: arch %s, expected %s", who, arch ? arch : "(null)", an->arch);
	size_t nregs;
	const struct snr_dbg_reg *regs = ops->registers(d, &nregs);
	CHECK(nregs > 16, "%s: only %zu registers", who, nregs);
	size_t bytes = regs[nregs - 1].offset + regs[nregs - 1].size;
	uint8_t *buf = calloc(1, bytes);
	struct snr_dbg_stop st;
	int rc = -1;

	if (ops->set_breakpoint(d, fn) < 0 || ops->cont(d, 10000, &st) < 0) {
		CHECK(0, "%s: breakpoint/cont: %s", who, ops->error(d));
		goto cleanup;
	}
	CHECK(st.kind == SNR_DBG_STOP_TRAP && st.pc == fn, "%s: stop kind %d pc 0x%llx, expected trap at 0x%llx", who,
	      st.kind, (unsigned long long)st.pc, (unsigned long long)fn);
	if (ops->read_regs(d, buf) < 0) {
		CHECK(0, "%s: read_regs: %s", who, ops->error(d));
		goto cleanup;
	}
	CHECK(dbgt_reg(regs, nregs, buf, an->pc) == fn, "%s: %s register 0x%llx != checksum 0x%llx", who, an->pc,
	      (unsigned long long)dbgt_reg(regs, nregs, buf, an->pc), (unsigned long long)fn);
	CHECK(dbgt_reg(regs, nregs, buf, an->arg0) == data, "%s: %s = 0x%llx, nm says data is at 0x%llx", who,
	      an->arg0, (unsigned long long)dbgt_reg(regs, nregs, buf, an->arg0), (unsigned long long)data);
	CHECK((uint32_t)dbgt_reg(regs, nregs, buf, an->arg1) == 64, "%s: %s = %llu, expected 64", who, an->arg1,
	      (unsigned long long)dbgt_reg(regs, nregs, buf, an->arg1));
	uint64_t mem[64];
	if (ops->read_mem(d, data, mem, sizeof(mem)) < 0) {
		CHECK(0, "%s: read_mem data: %s", who, ops->error(d));
		goto cleanup;
	}
	int bad = 0;
	for (uint64_t i = 0; i < 64; i++)
		bad += mem[i] != i * i + 7;
	CHECK(bad == 0, "%s: %d of data[64] differ from i*i+7", who, bad);
	uint64_t ret;
	if (an->ra) {
		ret = dbgt_reg(regs, nregs, buf, an->ra);
	} else if (ops->read_mem(d, dbgt_reg(regs, nregs, buf, an->sp), &ret, 8) < 0) {
		CHECK(0, "%s: read_mem [sp]: %s", who, ops->error(d));
		goto cleanup;
	}

	if (ops->clear_breakpoint(d, fn) < 0) {
		CHECK(0, "%s: clear_breakpoint: %s", who, ops->error(d));
		goto cleanup;
	}
	int outside = 0, moves = 0;
	for (int i = 0; i < NSTEPS; i++) {
		if (ops->step(d, &st) < 0) {
			CHECK(0, "%s: step %d: %s", who, i, ops->error(d));
			goto cleanup;
		}
		if (st.kind != SNR_DBG_STOP_TRAP) {
			CHECK(0, "%s: step %d: stop kind %d", who, i, st.kind);
			goto cleanup;
		}
		pcs[i] = st.pc;
		outside += st.pc < fn || st.pc >= fn + fn_size;
		moves += i > 0 && pcs[i] != pcs[i - 1];
	}
	CHECK(outside == 0, "%s: %d of %d stepped PCs outside checksum()", who, outside, NSTEPS);
	CHECK(moves == NSTEPS - 1, "%s: the PC stood still on %d steps", who, NSTEPS - 1 - moves);
	CHECK(pcs[0] != fn, "%s: first step did not move off the breakpoint", who);

	if (ops->set_breakpoint(d, ret) < 0 || ops->cont(d, 10000, &st) < 0) {
		CHECK(0, "%s: breakpoint at the return address: %s", who, ops->error(d));
		goto cleanup;
	}
	CHECK(st.kind == SNR_DBG_STOP_TRAP && st.pc == ret, "%s: stop kind %d pc 0x%llx, expected return to 0x%llx",
	      who, st.kind, (unsigned long long)st.pc, (unsigned long long)ret);
	if (ops->read_regs(d, buf) < 0) {
		CHECK(0, "%s: read_regs at return: %s", who, ops->error(d));
		goto cleanup;
	}
	CHECK(dbgt_reg(regs, nregs, buf, an->ret) == dbgt_expected_checksum(), "%s: %s = %llu, expected %llu", who,
	      an->ret, (unsigned long long)dbgt_reg(regs, nregs, buf, an->ret),
	      (unsigned long long)dbgt_expected_checksum());
	CHECK(ops->clear_breakpoint(d, ret) == 0, "%s: clear_breakpoint: %s", who, ops->error(d));
	rc = 0;
cleanup:
	free(buf);
	return rc;
}

static void check_output(const char *who, const char *outfile, int status)
{
	char out[4096], want[64];
	dbgt_slurp(outfile, out, sizeof(out));
	snprintf(want, sizeof(want), "result %llu\n", (unsigned long long)dbgt_expected_checksum());
	CHECK(strstr(out, want) != NULL, "%s: program output \"%s\" lacks \"%s\"", who, out, want);
	CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 42, "%s: program wait status %d, expected exit 42",
	      who, status);
}

static void test_qemu(const char *elf)
{
	int port = dbgt_free_port();
	char portstr[16], target[64], err[512];
	snprintf(portstr, sizeof(portstr), "%d", port);
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%d", port);
	char out[] = "/tmp/snr-dbg-qemu-XXXXXX";
	close(mkstemp(out));
	char *argv[] = {"qemu-riscv64", "-g", portstr, (char *)elf, NULL};
	pid_t qemu = dbgt_spawn(argv, out);
	struct snr_dbg *d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
	CHECK(d != NULL, "qemu: open %s: %s", target, err);
	if (d) {
		uint64_t pcs[NSTEPS];
		CHECK(snr_dbg_rsp.nthreads(d) == 1, "qemu: %d threads", snr_dbg_rsp.nthreads(d));
		CHECK(snr_dbg_rsp.pid(d) == 0, "qemu: pid %d, expected 0 (QEMU's process ids are not host pids)",
		      snr_dbg_rsp.pid(d));
		if (drive("qemu", &snr_dbg_rsp, d, elf, &rv, pcs) == 0)
			CHECK(snr_dbg_rsp.detach(d) == 0, "qemu: detach: %s", snr_dbg_rsp.error(d));
		snr_dbg_rsp.close(d);
	}
	check_output("qemu", out, dbgt_wait(qemu, 10000));

	/* run to the end under the stub: the W stop reply */
	snprintf(portstr, sizeof(portstr), "%d", dbgt_free_port());
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%s", portstr);
	qemu = dbgt_spawn(argv, out);
	d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
	CHECK(d != NULL, "qemu: open %s: %s", target, err);
	if (d) {
		struct snr_dbg_stop st;
		CHECK(snr_dbg_rsp.cont(d, 10000, &st) == 0 && st.kind == SNR_DBG_STOP_EXITED && st.code == 42,
		      "qemu: run to the end: kind %d code %d: %s", st.kind, st.code, snr_dbg_rsp.error(d));
		CHECK(snr_dbg_rsp.detach(d) < 0, "qemu: detach after the exit did not fail");
		snr_dbg_rsp.close(d);
	}
	check_output("qemu (run to the end)", out, dbgt_wait(qemu, 10000));
	unlink(out);
}

/* gdbserver attaches to the program (our child, waiting for a byte on
 * stdin): after D it runs on as our child, so its exit code is ours to see
 * (a program gdbserver launched is reaped by gdbserver). */
static void test_gdbserver(const char *prog, const uint64_t *ptrace_pcs)
{
	int port = dbgt_free_port(), in[2];
	char hostport[32], target[64], err[512], pidstr[16];
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%d", port);
	snprintf(target, sizeof(target), "tcp:%s", hostport);
	char out[] = "/tmp/snr-dbg-gdbserver-XXXXXX";
	close(mkstemp(out));
	if (pipe(in) < 0) {
		CHECK(0, "pipe");
		return;
	}
	pid_t child = fork();
	if (child == 0) {
		int fd = open(out, O_WRONLY | O_TRUNC);
		dup2(in[0], 0);
		dup2(fd, 1);
		close(in[0]);
		close(in[1]);
		execl(prog, prog, "wait", (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	snprintf(pidstr, sizeof(pidstr), "%d", (int)child);
	char *argv[] = {"gdbserver", "--once", "--attach", hostport, pidstr, NULL};
	pid_t server = dbgt_spawn(argv, NULL);
	struct snr_dbg *d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
	CHECK(d != NULL, "gdbserver: open %s: %s", target, err);
	CHECK(write(in[1], "g", 1) == 1, "writing to the program's stdin");
	close(in[1]);
	if (d) {
		uint64_t pcs[NSTEPS];
		int pid = snr_dbg_rsp.pid(d);
		CHECK(pid == child, "gdbserver: pid %d, expected %d", pid, (int)child);
		if (drive("gdbserver", &snr_dbg_rsp, d, prog, &x86, pcs) == 0) {
			if (ptrace_pcs) {
				int first = -1;
				for (int i = 0; i < NSTEPS && first < 0; i++)
					if (pcs[i] != ptrace_pcs[i])
						first = i;
				CHECK(first < 0, "gdbserver and ptrace step through different PCs from step %d "
						 "(0x%llx vs 0x%llx)",
				      first, first < 0 ? 0ull : (unsigned long long)pcs[first],
				      first < 0 ? 0ull : (unsigned long long)ptrace_pcs[first]);
			}
			CHECK(snr_dbg_rsp.detach(d) == 0, "gdbserver: detach: %s", snr_dbg_rsp.error(d));
		}
		snr_dbg_rsp.close(d);
	}
	int ss = dbgt_wait(server, 10000);
	CHECK(ss >= 0, "gdbserver --once did not exit after the detach");
	check_output("gdbserver", out, dbgt_wait(child, 10000));
	unlink(out);
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void test_gdbserver_interrupt(const char *prog)
{
	int port = dbgt_free_port();
	char hostport[32], target[64], err[512];
	snprintf(hostport, sizeof(hostport), "127.0.0.1:%d", port);
	snprintf(target, sizeof(target), "tcp:%s", hostport);
	char *argv[] = {"gdbserver", "--once", hostport, (char *)prog, "loop", NULL};
	pid_t server = dbgt_spawn(argv, NULL);
	struct snr_dbg *d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
	CHECK(d != NULL, "gdbserver interrupt: open %s: %s", target, err);
	if (d) {
		uint64_t fn = 0, size = 0, main_addr = 0, main_size = 0;
		struct snr_dbg_stop st;
		CHECK(dbgt_nm("nm", prog, "checksum", &fn, &size) == 0 && dbgt_nm("nm", prog, "main", &main_addr, &main_size) == 0,
		      "nm checksum/main");
		CHECK(snr_dbg_rsp.set_breakpoint(d, fn) == 0, "gdbserver interrupt: Z0: %s", snr_dbg_rsp.error(d));
		double t0 = now_s();
		int r = snr_dbg_rsp.cont(d, 300, &st);
		double dt = now_s() - t0;
		CHECK(r == 0 && st.kind == SNR_DBG_STOP_TIMEOUT, "gdbserver interrupt: cont: rc %d kind %d: %s", r, st.kind,
		      snr_dbg_rsp.error(d));
		CHECK(dt >= 0.29 && dt < 3.0, "gdbserver interrupt: cont(300 ms) took %.2f s", dt);
		CHECK(st.pc >= main_addr && st.pc < main_addr + main_size, "gdbserver interrupt: stopped at 0x%llx, not in main",
		      (unsigned long long)st.pc);
		CHECK(snr_dbg_rsp.step(d, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP, "gdbserver interrupt: step after: %s",
		      snr_dbg_rsp.error(d));
		CHECK(snr_dbg_rsp.kill(d) == 0, "gdbserver interrupt: kill: %s", snr_dbg_rsp.error(d));
		snr_dbg_rsp.close(d);
	}
	CHECK(dbgt_wait(server, 5000) >= 0, "gdbserver did not exit after k");
}

static void test_qemu_interrupt(const char *elf)
{
	char port[16], target[64], err[512];
	snprintf(port, sizeof(port), "%d", dbgt_free_port());
	snprintf(target, sizeof(target), "tcp:127.0.0.1:%s", port);
	char *argv[] = {"qemu-riscv64", "-g", port, (char *)elf, NULL};
	pid_t qemu = dbgt_spawn(argv, NULL);
	setenv("SNR_RSP_TIMEOUT_MS", "1000", 1);
	struct snr_dbg *d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
	unsetenv("SNR_RSP_TIMEOUT_MS");
	CHECK(d != NULL, "qemu interrupt: open %s: %s", target, err);
	if (d) {
		struct snr_dbg_stop st;
		double t0 = now_s();
		int r = snr_dbg_rsp.cont(d, 300, &st);
		double dt = now_s() - t0;
		if (r == 0) /* a QEMU that honours 0x03 */
			CHECK(st.kind == SNR_DBG_STOP_TIMEOUT, "qemu interrupt: kind %d", st.kind);
		else
			CHECK(strstr(snr_dbg_rsp.error(d), "0x03") != NULL, "qemu interrupt: %s", snr_dbg_rsp.error(d));
		CHECK(dt < 3.0, "qemu interrupt: cont(300 ms) took %.2f s", dt);
		if (r < 0) {
			t0 = now_s();
			CHECK(snr_dbg_rsp.step(d, &st) < 0 && strstr(snr_dbg_rsp.error(d), "unusable"),
			      "qemu interrupt: step after a lost interrupt: %s", snr_dbg_rsp.error(d));
			CHECK(now_s() - t0 < 0.1, "qemu interrupt: failing step took %.2f s", now_s() - t0);
		}
		snr_dbg_rsp.close(d);
	}
	kill(qemu, SIGKILL);
	waitpid(qemu, NULL, 0);
}

/* The ptrace backend's PCs on the same binary and breakpoint. */
static int ptrace_sequence(const char *prog, uint64_t *pcs)
{
	char err[512], *argv[] = {(char *)prog, NULL};
	char out[] = "/tmp/snr-dbg-ptrace-XXXXXX";
	close(mkstemp(out));
	struct snr_dbg *d = snr_dbg_ptrace.open(NULL, argv, err, sizeof(err));
	CHECK(d != NULL, "ptrace: launch %s: %s", prog, err);
	if (!d)
		return -1;
	int rc = drive("ptrace", &snr_dbg_ptrace, d, prog, &x86, pcs);
	int pid = snr_dbg_ptrace.pid(d);
	if (rc == 0)
		CHECK(snr_dbg_ptrace.detach(d) == 0, "ptrace: detach: %s", snr_dbg_ptrace.error(d));
	snr_dbg_ptrace.close(d);
	int status = dbgt_wait(pid, 10000);
	CHECK(status >= 0 && WIFEXITED(status) && WEXITSTATUS(status) == 42, "ptrace: wait status %d", status);
	unlink(out);
	return rc;
}

int main(int argc, char **argv)
{
	const char *x86_prog = argc > 1 ? argv[1] : "", *rv_elf = argc > 2 ? argv[2] : "";
	const char *rv_spin = argc > 3 ? argv[3] : "";
	bool have_qemu = *rv_elf && in_path("qemu-riscv64") && in_path("riscv64-unknown-elf-nm");
	bool have_gdbserver = *x86_prog && in_path("gdbserver");
	if (!have_qemu && !have_gdbserver) {
		fprintf(stderr, "skipped: needs qemu-riscv64 (with rv_prog.elf) or gdbserver\n");
		return 77;
	}
	signal(SIGPIPE, SIG_IGN);
	if (have_qemu) {
		test_qemu(rv_elf);
		if (*rv_spin)
			test_qemu_interrupt(rv_spin);
	} else
		fprintf(stderr, "qemu part skipped\n");
	if (have_gdbserver) {
		uint64_t pcs[NSTEPS];
		int have_ptrace = ptrace_sequence(x86_prog, pcs) == 0;
		test_gdbserver(x86_prog, have_ptrace ? pcs : NULL);
		test_gdbserver_interrupt(x86_prog);
	} else {
		fprintf(stderr, "gdbserver part skipped\n");
	}
	return check_report("test_dbg_interop");
}
