/*
 * step_insn.c: the recorder runs one instruction on the target (see
 * record_int.h): by a single step, or, for a system call or a call run as
 * a unit, by continuing to a breakpoint after it.
 */
#include <stdbool.h>
#include <stdint.h>

#include "lib/snr_util.h"
#include "recorder/record_int.h"

/* Does the instruction go on at the next one (or, x86 rep, at itself)? */
static bool falls_through(enum snr_insn_class c)
{
	return c == SNR_CLASS_SCALAR || c == SNR_CLASS_LOAD || c == SNR_CLASS_STORE || c == SNR_CLASS_VECTOR;
}

/*
 * Executes the instruction at pc, and only it. QEMU's user-mode stub (7.2,
 * qemu-aarch64 -g) single-steps a system call and the instruction after it
 * in one go (the svc leaves the translated code by an exception, and the
 * step's debug exception comes one instruction later), and a breakpoint
 * does not stop it ("singlestep overrides breakpoints"). So a system call
 * (a system instruction whose outputs are recorded) runs to a breakpoint on
 * the instruction after it instead, within the --timeout (one that does not
 * come back there, such as rt_sigreturn, is an error). A call run on the
 * target as a unit (resume: its return address, else 0) runs the same way
 * to a breakpoint at resume. Any other step that
 * lands anywhere but after an instruction that falls through is an error
 * too: the debugger ran instructions the trace would not hold.
 */
int step_insn(struct rec *r, const struct snr_insn_access *a, uint64_t index, uint64_t pc, uint64_t resume,
		     struct snr_dbg_stop *st, char *err, size_t errlen)
{
	uint64_t next = resume ? resume : pc + a->length;
	bool to_next = resume || (a->cls == SNR_CLASS_SYSTEM && a->record_outputs);
	r->requests += to_next ? 3 : 1;
	if (to_next) {
		int timeout_ms = r->o->timeout_s > 0 ? r->o->timeout_s * 1000 : 60000;
		if (r->dbg->set_breakpoint(r->d, next) || r->dbg->cont(r->d, timeout_ms, st)) {
			snr_fmt(err, errlen, "instruction %llu at 0x%llx: running the system instruction to a breakpoint "
				"after it: %s", (unsigned long long)index, (unsigned long long)pc, r->dbg->error(r->d));
			return -1;
		}
		if (st->kind == SNR_DBG_STOP_TIMEOUT) {
			snr_fmt(err, errlen, "instruction %llu at 0x%llx: the %s did not come back to the %s (0x%llx) "
				"within %d s; the program was left stopped", (unsigned long long)index,
				(unsigned long long)pc, resume ? "call" : "system call",
				resume ? "return address" : "next instruction", (unsigned long long)next, timeout_ms / 1000);
			return -1;
		}
		bool alive = st->kind == SNR_DBG_STOP_TRAP || st->kind == SNR_DBG_STOP_SIGNAL;
		if (alive && r->dbg->clear_breakpoint(r->d, next)) {
			snr_fmt(err, errlen, "instruction %llu at 0x%llx: clearing the breakpoint after it: %s",
				(unsigned long long)index, (unsigned long long)pc, r->dbg->error(r->d));
			return -1;
		}
		if (st->kind == SNR_DBG_STOP_TRAP && st->pc != next) {
			snr_fmt(err, errlen, "instruction %llu at 0x%llx: the %s stopped at 0x%llx, not at the %s (0x%llx)",
				(unsigned long long)index, (unsigned long long)pc, resume ? "call" : "system call",
				(unsigned long long)st->pc, resume ? "return address" : "next instruction",
				(unsigned long long)next);
			return -1;
		}
		return 0;
	}
	if (r->dbg->step(r->d, st)) {
		snr_fmt(err, errlen, "instruction %llu at 0x%llx: single-step failed: %s", (unsigned long long)index,
			(unsigned long long)pc, r->dbg->error(r->d));
		return -1;
	}
	if (st->kind == SNR_DBG_STOP_TRAP && falls_through(a->cls) && st->pc != next && st->pc != pc) {
		snr_fmt(err, errlen,
			"instruction %llu at 0x%llx: the single step stopped at 0x%llx, not at the next instruction "
			"(0x%llx): the debugger ran instructions the trace would miss",
			(unsigned long long)index, (unsigned long long)pc, (unsigned long long)st->pc,
			(unsigned long long)next);
		return -1;
	}
	return 0;
}
