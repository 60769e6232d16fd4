/*
 * test_pod_wait.c: a chip blocked at a ta.wait whose flag a peer has since
 * signalled is not part of a deadlock. A debugger resumes a pod's chips one
 * at a time (snr device --gdb), so a chip can stay marked blocked while the
 * chip that signals it runs on and blocks in turn: the device must not report
 * a pod-wide deadlock then, and must when every chip's wait is unmet.
 */
#include <stdio.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "tests/check.h"
#include "tests/ta1_harness.h"

#define WAIT_PC 0x10100ull

/* Chip c waits at WAIT_PC for n completions on flag f. */
static enum ta1_stop wait_at(struct ta1_chip *c, uint64_t f, uint64_t n)
{
	ta1_chip_set_reg(c, 10, f);
	ta1_chip_set_reg(c, 11, n);
	struct ta1_insn in = h_insn(TA1_OP_TA_WAIT, 0, 10, 11, 0, 0);
	return h_exec_at(c, WAIT_PC, &in);
}

int main(void)
{
	struct ta1_machine *m = h_machine(2, 0, 0, 0);
	struct ta1_chip *c0 = ta1_machine_chip(m, 0), *c1 = ta1_machine_chip(m, 1);
	unsigned which = 99;

	/* chip 0 waits for one completion on flag 3: blocked */
	CHECK(wait_at(c0, 3, 1) == TA1_STOP_BLOCKED && ta1_chip_blocked(c0), "%s",
	      "chip 0 does not block at its wait");
	CHECK(!ta1_machine_deadlock(m, &which), "%s", "a deadlock with chip 1 free to run");

	/* chip 1 pushes 64 bytes into chip 0's HBM, signalling chip 0's flag 3,
	 * then waits for a signal of its own (flag 5) that chip 0 sends later */
	uint64_t dst = TA1_HBM_GLOBAL_BASE + 0x100, src = TA1_HBM_BASE;
	enum ta1_stop s = h_xta(c1, TA1_OP_TA_DMA_NOTIFY, dst, src, 64, 3ull << 32 | 1);
	CHECK(s == TA1_STOP_BUDGET, "ta.dma.notify on chip 1 stopped %d: %s", (int)s, ta1_chip_fault(c1));
	CHECK(ta1_chip_get_reg(c0, TA1_REG_FLAG0 + 3) == 1, "chip 0's flag 3 is %llu after the notify",
	      (unsigned long long)ta1_chip_get_reg(c0, TA1_REG_FLAG0 + 3));
	CHECK(wait_at(c1, 5, 1) == TA1_STOP_BLOCKED, "%s", "chip 1 does not block at its wait");

	/* chip 0 is still marked blocked, but its wait is met: no deadlock */
	CHECK(!ta1_machine_deadlock(m, &which), "pod-wide deadlock reported while chip 0's wait is met: %s",
	      ta1_chip_fault(ta1_machine_chip(m, which)));
	CHECK(ta1_chip_state(c0) == TA1_CHIP_RUNNING && ta1_chip_state(c1) == TA1_CHIP_RUNNING, "%s",
	      "a chip faulted without a deadlock");

	/* chip 0 passes its wait; then both wait on flags nobody signals */
	s = ta1_chip_step(c0);
	CHECK(s == TA1_STOP_BUDGET && !ta1_chip_blocked(c0), "chip 0's met wait stopped %d", (int)s);
	CHECK(ta1_chip_get_reg(c0, TA1_REG_FLAG0 + 3) == 0, "%s",
	      "chip 0's wait did not take its completion");
	CHECK(wait_at(c0, 6, 1) == TA1_STOP_BLOCKED, "%s", "chip 0 does not block at its second wait");
	CHECK(ta1_machine_deadlock(m, &which), "%s", "no deadlock reported with every chip's wait unmet");
	const char *f = ta1_chip_fault(ta1_machine_chip(m, which));
	CHECK(strstr(f, "pod-wide deadlock") && strstr(f, "chip 0 waits") && strstr(f, "flag 6") &&
		  strstr(f, "chip 1 waits") && strstr(f, "flag 5"),
	      "the deadlock does not name each chip's wait: %s", f);
	ta1_machine_free(m);
	return check_report("test_pod_wait");
}
