/*
 * test_uc_sim.c: the unicorn simulator through the plugin ABI, without a
 * trace: hand-assembled x86-64 loaded with load_code, registers with
 * set_reg. Poisoning: a read of bytes never loaded fails the step naming
 * the instruction and the address, whether the page is unmapped or only
 * partly captured; a read of a register never set fails likewise; memory the
 * window wrote reads back; syscall does not execute; get_reg refuses
 * registers without a value; the tracker sees memory and register events.
 */
#include <string.h>

#include "recorder/snr_isa.h"
#include "sim/snr_sim.h"
#include "tests/check.h"

static const struct snr_sim_ops *ops = &snr_sim_unicorn;
static unsigned reg_no(const char *name)
{
	size_t n;
	const struct snr_isa_reg *r = snr_isa_x86_64.registers(NULL, &n);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return i;
	return 9999;
}

static void set64(struct snr_sim *s, const char *name, uint64_t v)
{
	uint8_t b[8];
	memcpy(b, &v, 8);
	CHECK(ops->set_reg(s, reg_no(name), b, 8) == 0, "set %s: %s", name, ops->error(s));
}

static void set_eflags(struct snr_sim *s, uint32_t v)
{
	CHECK(ops->set_reg(s, reg_no("eflags"), (const uint8_t *)&v, 4) == 0, "set eflags: %s", ops->error(s));
}

static uint64_t get64(struct snr_sim *s, const char *name, int *rc)
{
	uint64_t v = 0;
	*rc = ops->get_reg(s, reg_no(name), (uint8_t *)&v, 8);
	return v;
}

static unsigned nmem, nreg_reads;
static void on_mem(void *u, const struct snr_ev_mem *e) { (void)u, (void)e, nmem++; }
static void on_reg(void *u, const struct snr_ev_reg *e) { (void)u, nreg_reads += !e->write; }

/* A fresh simulator with code at 0x401000 and rbx = 0x600000. */
static struct snr_sim *fresh(const uint8_t *code, unsigned len)
{
	char err[300];
	struct snr_sim *s = ops->create(NULL, 0, 1, err, sizeof(err));
	CHECK(s != NULL, "create: %s", err);
	static const struct snr_tracker t = {SNR_TRACKER_ABI_VERSION, NULL, NULL, NULL, NULL, NULL, on_mem, on_reg, NULL};
	ops->attach_tracker(s, &t);
	CHECK(ops->load_code(s, 0x401000, code, len) == 0, "load_code: %s", ops->error(s));
	set64(s, "rip", 0x401000);
	set64(s, "rbx", 0x600000);
	return s;
}

int main(void)
{
	struct snr_sim_step out;
	int rc;
	CHECK(!strcmp(ops->name, "unicorn") && !strcmp(ops->isa, "x86-64"), "names");

	/* mov rax, [rbx]: the page was never loaded */
	static const uint8_t load[] = {0x48, 0x8b, 0x03};
	struct snr_sim *s = fresh(load, sizeof(load));
	CHECK(ops->step(s, 0, &out) != 0, "a read of an unmapped page must fail");
	CHECK(strstr(ops->error(s), "instruction 0") && strstr(ops->error(s), "0x600000") &&
		      strstr(ops->error(s), "did not capture"),
	      "message: %s", ops->error(s));
	ops->destroy(s);

	/* the same, the page mapped but only 4 of the 8 bytes captured */
	s = fresh(load, sizeof(load));
	uint8_t four[4] = {1, 2, 3, 4};
	ops->load_mem(s, 0, 0, 0x600000, four, 4);
	CHECK(ops->step(s, 0, &out) != 0, "a read of a partly captured qword must fail");
	CHECK(strstr(ops->error(s), "reads 4 bytes at 0x600004"), "message: %s", ops->error(s));
	ops->destroy(s);

	/* all 8 captured: runs, rax defined and comparable */
	s = fresh(load, sizeof(load));
	uint8_t eight[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	ops->load_mem(s, 0, 0, 0x600000, eight, 8);
	get64(s, "rax", &rc);
	CHECK(rc != 0, "get_reg of a register never set nor written must fail");
	nmem = 0;
	CHECK(ops->step(s, 0, &out) == 0, "step: %s", ops->error(s));
	CHECK(out.pc == 0x401000 && out.next_pc == 0x401003, "pcs %llx %llx", (unsigned long long)out.pc,
	      (unsigned long long)out.next_pc);
	CHECK(get64(s, "rax", &rc) == 0x0807060504030201ull && rc == 0, "rax after the load");
	CHECK(nmem == 1, "one memory event, got %u", nmem);
	ops->destroy(s);

	/* add rax, rcx: rcx never set */
	static const uint8_t add[] = {0x48, 0x01, 0xc8};
	s = fresh(add, sizeof(add));
	set64(s, "rax", 1);
	set_eflags(s, 0x202);
	CHECK(ops->step(s, 0, &out) != 0, "a read of a register never set must fail");
	CHECK(strstr(ops->error(s), "reads register rcx"), "message: %s", ops->error(s));
	ops->destroy(s);

	/* mov [rbx+8], rax; mov rcx, [rbx+8]: a write to an unmapped page maps
	 * it, and the written bytes read back */
	static const uint8_t wr[] = {0x48, 0x89, 0x43, 0x08, 0x48, 0x8b, 0x4b, 0x08};
	s = fresh(wr, 4);
	CHECK(ops->load_code(s, 0x401004, wr + 4, 4) == 0, "load_code");
	set64(s, "rax", 0x1234);
	CHECK(ops->step(s, 0, &out) == 0, "write: %s", ops->error(s));
	nreg_reads = 0;
	CHECK(ops->step(s, 1, &out) == 0, "read back: %s", ops->error(s));
	CHECK(get64(s, "rcx", &rc) == 0x1234, "rcx");
	CHECK(nreg_reads >= 1, "register read events");
	uint64_t m = 0;
	CHECK(ops->read_mem(s, 0, 0, 0x600008, &m, 8) == 0 && m == 0x1234, "read_mem");
	ops->destroy(s);

	/* syscall: does not run (rax unchanged), rip advances; exit_group ends */
	static const uint8_t sys[] = {0x0f, 0x05};
	s = fresh(sys, sizeof(sys));
	static const char *const args[] = {"rax", "rdi", "rsi", "rdx", "r10", "r8", "r9"};
	for (int i = 0; i < 7; i++)
		set64(s, args[i], i == 0 ? 39 : 0);
	set_eflags(s, 0x202);
	CHECK(ops->step(s, 0, &out) == 0, "syscall: %s", ops->error(s));
	CHECK(out.next_pc == 0x401002 && !out.exited, "after syscall: %llx", (unsigned long long)out.next_pc);
	CHECK(get64(s, "rax", &rc) == 39, "rax unchanged by syscall");
	ops->destroy(s);
	s = fresh(sys, sizeof(sys));
	for (int i = 0; i < 7; i++)
		set64(s, args[i], i == 0 ? 231 : i == 1 ? 3 : 0);
	set_eflags(s, 0x202);
	CHECK(ops->step(s, 0, &out) == 0 && out.exited && out.exit_code == 3, "exit_group");
	ops->destroy(s);
	return check_report("test_uc_sim");
}
