/*
 * test_uc_sim.c: the unicorn simulator through the plugin ABI, without a
 * trace: hand-assembled x86-64 loaded with load_code, registers with
 * set_reg. Poisoning: a read of bytes never loaded fails the step naming
 * the instruction and the address, whether the page is unmapped or only
 * partly captured; a read of a register never set fails likewise; memory the
 * window wrote reads back; syscall does not execute; get_reg refuses
 * registers without a value; the tracker sees memory and register events.
 * The aarch64 engine likewise (hand-assembled A64): poisoned bytes and
 * registers, svc left to the recorded results, exit_group, an exception
 * that fails the step, cpsr bits beyond NZCV kept, vector registers.
 */
#include <string.h>

#include "isa/snr_isa.h"
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
static uint64_t busy_cycles, busy_events;
static void on_busy(void *u, const struct snr_ev_busy *e)
{
	(void)u;
	busy_cycles += e->end - e->start;
	busy_events++;
}

/* A fresh simulator with code at 0x401000 and rbx = 0x600000. */
static struct snr_sim *fresh(const uint8_t *code, unsigned len)
{
	char err[300];
	struct snr_sim *s = ops->create(NULL, 0, 1, err, sizeof(err));
	CHECK(s != NULL, "create: %s", err);
	static const struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION, .on_mem = on_mem, .on_reg = on_reg};
	ops->attach_tracker(s, &t);
	CHECK(ops->load_code(s, 0x401000, code, len) == 0, "load_code: %s", ops->error(s));
	set64(s, "rip", 0x401000);
	set64(s, "rbx", 0x600000);
	return s;
}

/* ---- aarch64 ----------------------------------------------------------------- */

static const struct snr_sim_ops *a64 = &snr_sim_unicorn_aarch64;

static unsigned a64_reg(const char *name)
{
	size_t n;
	const struct snr_isa_reg *r = snr_isa_aarch64.registers(NULL, &n);
	for (unsigned i = 0; i < n; i++)
		if (!strcmp(r[i].name, name))
			return i;
	return 9999;
}

static void a64_set(struct snr_sim *s, const char *name, uint64_t v)
{
	uint8_t b[16] = {0};
	unsigned size = name[0] == 'v' ? 16 : !strcmp(name, "cpsr") || name[0] == 'f' ? 4 : 8;
	memcpy(b, &v, size < 8 ? size : 8);
	CHECK(a64->set_reg(s, a64_reg(name), b, size) == 0, "set %s: %s", name, a64->error(s));
}

static uint64_t a64_get(struct snr_sim *s, const char *name, int *rc)
{
	uint8_t b[16] = {0};
	unsigned size = name[0] == 'v' ? 16 : !strcmp(name, "cpsr") || name[0] == 'f' ? 4 : 8;
	*rc = a64->get_reg(s, a64_reg(name), b, size);
	uint64_t v = 0;
	memcpy(&v, b, 8);
	return v;
}

/* A fresh aarch64 simulator with the words at 0x400000 and x1 = 0x600000. */
static struct snr_sim *a64_fresh(const uint32_t *code, unsigned nwords)
{
	char err[300];
	struct snr_sim *s = a64->create(NULL, 0, 1, err, sizeof(err));
	CHECK(s != NULL, "aarch64 create: %s", err);
	static const struct snr_tracker t = {
	    .abi_version = SNR_TRACKER_ABI_VERSION, .on_mem = on_mem, .on_reg = on_reg, .on_busy = on_busy};
	a64->attach_tracker(s, &t);
	for (unsigned i = 0; i < nwords; i++)
		CHECK(a64->load_code(s, 0x400000 + 4 * i, (const uint8_t *)&code[i], 4) == 0, "load_code: %s",
		      a64->error(s));
	a64_set(s, "pc", 0x400000);
	a64_set(s, "x1", 0x600000);
	return s;
}

static void test_aarch64(void)
{
	struct snr_sim_step out;
	int rc;
	CHECK(!strcmp(a64->name, "unicorn") && !strcmp(a64->isa, "aarch64"), "aarch64 names");

	/* ldr x0, [x1]: never loaded, then half loaded, then loaded */
	static const uint32_t ldr[] = {0xf9400020};
	struct snr_sim *s = a64_fresh(ldr, 1);
	CHECK(a64->step(s, 0, &out) != 0, "aarch64: a read of an unmapped page must fail");
	CHECK(strstr(a64->error(s), "ldr x0, [x1]") && strstr(a64->error(s), "0x600000") &&
		      strstr(a64->error(s), "did not capture"),
	      "message: %s", a64->error(s));
	a64->destroy(s);
	s = a64_fresh(ldr, 1);
	uint8_t bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
	a64->load_mem(s, 0, 0, 0x600000, bytes, 4);
	CHECK(a64->step(s, 0, &out) != 0 && strstr(a64->error(s), "reads 4 bytes at 0x600004"), "partly: %s",
	      a64->error(s));
	a64->destroy(s);
	s = a64_fresh(ldr, 1);
	a64->load_mem(s, 0, 0, 0x600000, bytes, 8);
	a64_get(s, "x0", &rc);
	CHECK(rc != 0, "aarch64: get_reg of x0 before it has a value must fail");
	nmem = 0;
	CHECK(a64->step(s, 0, &out) == 0, "aarch64 ldr: %s", a64->error(s));
	CHECK(out.pc == 0x400000 && out.next_pc == 0x400004, "aarch64 pcs %llx %llx", (unsigned long long)out.pc,
	      (unsigned long long)out.next_pc);
	CHECK(a64_get(s, "x0", &rc) == 0x0807060504030201ull && rc == 0, "x0 after the load");
	CHECK(nmem == 1, "aarch64: one memory event, got %u", nmem);
	a64->destroy(s);

	/* add x0, x0, x2: x2 never set */
	static const uint32_t add[] = {0x8b020000};
	s = a64_fresh(add, 1);
	a64_set(s, "x0", 1);
	CHECK(a64->step(s, 0, &out) != 0 && strstr(a64->error(s), "reads register x2"), "x2: %s", a64->error(s));
	a64->destroy(s);

	/* str x0, [x1, #8]; ldr x3, [x1, #8]: the write maps the page, reads back */
	static const uint32_t wr[] = {0xf9000420, 0xf9400423};
	s = a64_fresh(wr, 2);
	a64_set(s, "x0", 0x1234);
	busy_cycles = busy_events = 0;
	CHECK(a64->step(s, 0, &out) == 0 && a64->step(s, 1, &out) == 0, "aarch64 write, read: %s", a64->error(s));
	CHECK(a64_get(s, "x3", &rc) == 0x1234, "x3 read back");
	/* the store misses both cache levels (200 cycles, 196 beyond an L1
	 * hit), the load hits L1: the scalar unit is busy 2 of 2 + 196 cycles,
	 * in two runs */
	uint64_t cycles = a64->finish(s);
	CHECK(busy_cycles == 2 && busy_events == 2 && cycles == 198, "busy %llu cycles in %llu events of %llu",
	      (unsigned long long)busy_cycles, (unsigned long long)busy_events, (unsigned long long)cycles);
	a64->destroy(s);

	/* fadd d0, d0, d1: needs fpcr; vector registers round-trip all 16 bytes */
	static const uint32_t fadd[] = {0x1e612800};
	s = a64_fresh(fadd, 1);
	double one = 1.0, two = 2.0;
	uint64_t b1, b2;
	memcpy(&b1, &one, 8);
	memcpy(&b2, &two, 8);
	a64_set(s, "v0", b1);
	a64_set(s, "v1", b2);
	a64_set(s, "fpsr", 0);
	CHECK(a64->step(s, 0, &out) != 0 && strstr(a64->error(s), "reads register fpcr"), "fpcr: %s", a64->error(s));
	a64->destroy(s);
	s = a64_fresh(fadd, 1);
	a64_set(s, "v0", b1);
	a64_set(s, "v1", b2);
	a64_set(s, "fpsr", 0);
	a64_set(s, "fpcr", 0);
	CHECK(a64->step(s, 0, &out) == 0, "fadd: %s", a64->error(s));
	double three;
	uint64_t v0 = a64_get(s, "v0", &rc);
	memcpy(&three, &v0, 8);
	CHECK(rc == 0 && three == 3.0, "fadd: v0 %g", three);
	a64->destroy(s);

	/* cmp x0, x0: NZCV from unicorn (Z, C), the other cpsr bits as loaded */
	static const uint32_t cmp[] = {0xeb00001f};
	s = a64_fresh(cmp, 1);
	a64_set(s, "x0", 5);
	a64_set(s, "cpsr", 0x80001000u);
	CHECK(a64->step(s, 0, &out) == 0, "cmp: %s", a64->error(s));
	CHECK(a64_get(s, "cpsr", &rc) == 0x60001000u, "cpsr after cmp: %llx", (unsigned long long)a64_get(s, "cpsr", &rc));
	a64->destroy(s);

	/* svc #0: does not run (x0 unchanged), pc past it; exit_group ends */
	static const uint32_t svc[] = {0xd4000001};
	s = a64_fresh(svc, 1);
	for (int i = 0; i <= 5; i++) {
		char name[4] = {'x', (char)('0' + i), 0};
		a64_set(s, name, 0);
	}
	a64_set(s, "x8", 172); /* getpid */
	a64_set(s, "x0", 77);
	CHECK(a64->step(s, 0, &out) == 0, "svc: %s", a64->error(s));
	CHECK(out.next_pc == 0x400004 && !out.exited, "after svc: %llx", (unsigned long long)out.next_pc);
	CHECK(a64_get(s, "x0", &rc) == 77, "x0 unchanged by svc");
	a64->destroy(s);
	s = a64_fresh(svc, 1);
	for (int i = 0; i <= 5; i++) {
		char name[4] = {'x', (char)('0' + i), 0};
		a64_set(s, name, i == 0 ? 4 : 0);
	}
	a64_set(s, "x8", 94);
	CHECK(a64->step(s, 0, &out) == 0 && out.exited && out.exit_code == 4, "aarch64 exit_group");
	a64->destroy(s);

	/* brk #0: an exception a user-mode replay cannot take */
	static const uint32_t brk[] = {0xd4200000};
	s = a64_fresh(brk, 1);
	CHECK(a64->step(s, 0, &out) != 0 && strstr(a64->error(s), "(pc 0x400000: brk #0) raises exception"), "brk: %s", a64->error(s));
	a64->destroy(s);
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
	test_aarch64();
	return check_report("test_uc_sim");
}
