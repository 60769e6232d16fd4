/*
 * bench_dbg_step.c: single-step rate of each debugger backend, the figure
 * that bounds how fast the recorder can snap a window. For each of RSP
 * against qemu-riscv64 -g, RSP against gdbserver, and ptrace: break at
 * checksum() in the test programs (tests/dbg), then time N steps alone and
 * N steps each followed by read_regs (what the recorder does per step).
 *
 * usage: bench_dbg_step X86_PROG RV_PROG_ELF [N]   (meson test --benchmark)
 */
#include "tests/dbg/dbg_testutil.h"

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void run(const char *label, const struct snr_dbg_ops *ops, struct snr_dbg *d, const char *nm,
		const char *elf, int n)
{
	uint64_t fn, size;
	struct snr_dbg_stop st;
	if (dbgt_nm(nm, elf, "checksum", &fn, &size) < 0 || ops->set_breakpoint(d, fn) < 0 ||
	    ops->cont(d, 10000, &st) < 0 || ops->clear_breakpoint(d, fn) < 0) {
		printf("%-24s setup failed: %s\n", label, ops->error(d));
		return;
	}
	size_t nregs;
	const struct snr_dbg_reg *regs = ops->registers(d, &nregs);
	uint8_t *buf = malloc(regs[nregs - 1].offset + regs[nregs - 1].size);
	double t0 = now_s();
	int i;
	for (i = 0; i < n && ops->step(d, &st) == 0; i++)
		;
	double t1 = now_s();
	int j;
	for (j = 0; j < n && ops->step(d, &st) == 0 && ops->read_regs(d, buf) == 0; j++)
		;
	double t2 = now_s();
	if (i < n || j < n)
		printf("%-24s failed after %d/%d steps: %s\n", label, i, j, ops->error(d));
	else
		printf("%-24s %9.0f steps/s   %9.0f steps/s with read_regs (%zu registers)\n", label, n / (t1 - t0),
		       n / (t2 - t1), nregs);
	fflush(stdout);
	free(buf);
	ops->kill(d);
	ops->close(d);
}

int main(int argc, char **argv)
{
	const char *x86 = argc > 1 ? argv[1] : "", *rv = argc > 2 ? argv[2] : "";
	int n = argc > 3 ? atoi(argv[3]) : 5000;
	char err[512], port[16], hostport[32], target[64];
	signal(SIGPIPE, SIG_IGN);
	if (n <= 0 || n > 9000)
		n = 5000; /* checksum() runs ~20k instructions: 2n must fit */

	if (*rv) {
		snprintf(port, sizeof(port), "%d", dbgt_free_port());
		snprintf(target, sizeof(target), "tcp:127.0.0.1:%s", port);
		char *av[] = {"qemu-riscv64", "-g", port, (char *)rv, NULL};
		pid_t p = dbgt_spawn(av, NULL);
		struct snr_dbg *d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
		if (d)
			run("rsp/qemu-riscv64", &snr_dbg_rsp, d, "riscv64-unknown-elf-nm", rv, n);
		else
			printf("%-24s unavailable: %s\n", "rsp/qemu-riscv64", err);
		dbgt_wait(p, 3000);
	}
	if (*x86) {
		snprintf(hostport, sizeof(hostport), "127.0.0.1:%d", dbgt_free_port());
		snprintf(target, sizeof(target), "tcp:%s", hostport);
		char *av[] = {"gdbserver", "--once", hostport, (char *)x86, NULL};
		pid_t p = dbgt_spawn(av, NULL);
		struct snr_dbg *d = dbgt_connect(&snr_dbg_rsp, target, 5000, err, sizeof(err));
		if (d)
			run("rsp/gdbserver", &snr_dbg_rsp, d, "nm", x86, n);
		else
			printf("%-24s unavailable: %s\n", "rsp/gdbserver", err);
		dbgt_wait(p, 3000);

		char *pv[] = {(char *)x86, NULL};
		d = snr_dbg_ptrace.open(NULL, pv, err, sizeof(err));
		if (d)
			run("ptrace", &snr_dbg_ptrace, d, "nm", x86, n);
		else
			printf("%-24s unavailable: %s\n", "ptrace", err);
	}
	return 0;
}
