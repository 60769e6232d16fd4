/*
 * test_isa_aarch64.c: the aarch64 plugin's access query on a table of
 * instructions: loads and stores with unsigned, pre- and post-index and
 * register offsets (the base is written back), pairs (2 x size), literal
 * loads, exclusives (a store-exclusive may not store: read + write), SIMD
 * ld1/st1 (multiple and lane), bl/blr/ret, flag-setting aliases whose
 * destination is the zero register (capstone 4 reports the source as
 * written), move-wide immediates (capstone 4 has movz read its destination),
 * scalar FP loads, stores and arithmetic, svc (not reading x30), mrs/msr,
 * and a system instruction that must fault.
 */
#include <stdio.h>
#include <string.h>

#include "tests/isa/isa_cases.h"

#define LOAD SNR_CLASS_LOAD
#define STORE SNR_CLASS_STORE
#define BRANCH SNR_CLASS_BRANCH
#define SYSTEM SNR_CLASS_SYSTEM
#define SCALAR SNR_CLASS_SCALAR
#define VECTOR SNR_CLASS_VECTOR

static const struct isa_case cases[] = {
	{"200440f9", "ldr x0, [x1, #8]", {{"x1", 0x1000}}, 4, LOAD, "x1", "x0", "x0", {{0, 0x1008, 8}}},
	{"208c40f8", "ldr x0, [x1, #8]!", {{"x1", 0x1000}}, 4, LOAD, "x1", "x0 x1", NULL, {{0, 0x1008, 8}}},
	{"208440f8", "ldr x0, [x1], #8", {{"x1", 0x1000}}, 4, LOAD, "x1", "x0 x1", NULL, {{0, 0x1000, 8}}},
	{"62cc1fb8", "str w2, [x3, #-4]!", {{"x3", 0x2000}}, 4, STORE, "x2 x3", "x3", NULL, {{1, 0x1ffc, 4}}},
	{"620401f8", "str x2, [x3], #0x10", {{"x3", 0x2000}}, 4, STORE, "x2 x3", "x3", NULL, {{1, 0x2000, 8}}},
	{"e00741a9", "ldp x0, x1, [sp, #0x10]", {{"sp", 0x8000}}, 4, LOAD, "sp", "x0 x1", NULL,
	 {{0, 0x8010, 16}}},
	{"fd7bbfa9", "stp x29, x30, [sp, #-0x10]!", {{"sp", 0x8000}}, 4, STORE, "x29 x30 sp", "sp", NULL,
	 {{1, 0x7ff0, 16}}},
	{"fd7bc1a8", "ldp x29, x30, [sp], #0x10", {{"sp", 0x8000}}, 4, LOAD, "sp", "x29 x30 sp", NULL,
	 {{0, 0x8000, 16}}},
	{"40044029", "ldp w0, w1, [x2]", {{"x2", 0x3000}}, 4, LOAD, "x2", "x0 x1", "x0 x1", {{0, 0x3000, 8}}},
	{"0004bfac", "stp q0, q1, [x0], #-0x20", {{"x0", 0x4000}}, 4, STORE, "v0 v1 x0", "x0", NULL,
	 {{1, 0x4000, 32}}},
	{"207862f8", "ldr x0, [x1, x2, lsl #3]", {{"x1", 0x1000}, {"x2", 3}}, 4, LOAD, "x1 x2", "x0", NULL,
	 {{0, 0x1018, 8}}},
	{"20c86238", "ldrb w0, [x1, w2, sxtw]", {{"x1", 0x1000}, {"x2", 0xffffffff}}, 4, LOAD, "x1 x2", "x0",
	 NULL, {{0, 0xfff, 1}}},
	{"205862b8", "ldr w0, [x1, w2, uxtw #2]", {{"x1", 0x1000}, {"x2", 0x100000001ull}}, 4, LOAD, "x1 x2",
	 "x0", NULL, {{0, 0x1004, 4}}},
	{"2000c03d", "ldr q0, [x1]", {{"x1", 0x1000}}, 4, LOAD, "x1", "v0", NULL, {{0, 0x1000, 16}}},
	{"2008803d", "str q0, [x1, #0x20]", {{"x1", 0x1000}}, 4, STORE, "v0 x1", "", NULL, {{1, 0x1020, 16}}},
	{"80000058", "ldr x0, #0x1010", {{0}}, 4, LOAD, NULL, "x0", NULL, {{0, 0x1010, 8}}, NULL, 0x1000},
	{"207c5fc8", "ldxr x0, [x1]", {{"x1", 0x1000}}, 4, LOAD, "x1", "x0", NULL, {{0, 0x1000, 8}}},
	{"207c03c8", "stxr w3, x0, [x1]", {{"x1", 0x1000}}, 4, STORE, "x0 x1", "x3", NULL,
	 {{1, 0x1000, 8}, {0, 0x1000, 8}}},
	{"00a8df4c", "ld1 {v0.4s, v1.4s}, [x0], #0x20", {{"x0", 0x4000}}, 4, LOAD, "x0", "v0 v1 x0", NULL,
	 {{0, 0x4000, 32}}},
	{"007c004c", "st1 {v0.2d}, [x0]", {{"x0", 0x4000}}, 4, STORE, "v0 x0", "", NULL, {{1, 0x4000, 16}}},
	{"0090400d", "ld1 {v0.s}[1], [x0]", {{"x0", 0x4000}}, 4, LOAD, "v0 x0", "v0", NULL, {{0, 0x4000, 4}}},
	/* branches */
	{"40000094", "bl #0x1100", {{0}}, 4, BRANCH, NULL, "x30", NULL, {{0}}, NULL, 0x1000},
	{"c0035fd6", "ret", {{0}}, 4, BRANCH, "x30", "", NULL, {{0}}},
	{"60003fd6", "blr x3", {{0}}, 4, BRANCH, "x3", "x30", NULL, {{0}}},
	{"400000b4", "cbz x0, #0x1008", {{0}}, 4, BRANCH, "x0", "", NULL, {{0}}, NULL, 0x1000},
	/* data processing, flags */
	{"1f0400f1", "cmp x0, #1", {{0}}, 4, SCALAR, "x0 cpsr", "cpsr", NULL, {{0}}},
	{"1f0040f2", "tst x0, #1", {{0}}, 4, SCALAR, "x0", "cpsr", NULL, {{0}}},
	{"200002ab", "adds x0, x1, x2", {{0}}, 4, SCALAR, "x1 x2", "x0 cpsr", NULL, {{0}}},
	{"2000020b", "add w0, w1, w2", {{0}}, 4, SCALAR, "x1 x2", "x0", "x0", {{0}}},
	/* move wide: movz and movn write all of Rd, movk keeps the rest */
	{"881580d2", "movz x8, #0xac", {{0}}, 4, SCALAR, NULL, "x8", "x8", {{0}}},
	{"08018052", "movz w8, #0x8", {{0}}, 4, SCALAR, NULL, "x8", "x8", {{0}}},
	{"e0ff9f92", "movn x0, #0xffff", {{0}}, 4, SCALAR, NULL, "x0", "x0", {{0}}},
	{"2000a0f2", "movk x0, #0x1, lsl #16", {{0}}, 4, SCALAR, "x0", "x0", NULL, {{0}}},
	/* scalar floating point (the matmul's inner loop) */
	{"4108611e", "fmul d1, d2, d1", {{0}}, 4, VECTOR, "v1 v2 fpcr", "v1 fpsr", NULL, {{0}}},
	{"a27864fc", "ldr d2, [x5, x4, lsl #3]", {{"x5", 0x1000}, {"x4", 2}}, 4, LOAD, "x4 x5", "v2", "v2",
	 {{0, 0x1010, 8}}},
	{"20782ffc", "str d0, [x1, x15, lsl #3]", {{"x1", 0x1000}, {"x15", 1}}, 4, STORE, "v0 x1 x15", "", NULL,
	 {{1, 0x1008, 8}}},
	{"ff4300d1", "sub sp, sp, #0x10", {{0}}, 4, SCALAR, "sp", "sp", NULL, {{0}}},
	{"2028614e", "xtn2 v0.8h, v1.4s", {{0}}, 4, VECTOR, "v0 v1 fpcr", "v0 fpsr", NULL, {{0}}},
	/* system */
	{"010000d4", "svc #0", {{0}}, 4, SYSTEM, "x8 x0 x1 x2 x3 x4 x5", "x0", "x30", {{0}}},
	{"00423bd5", "mrs x0, nzcv", {{0}}, 4, SCALAR, "cpsr", "x0", "x0", {{0}}},
	{"00421bd5", "msr nzcv, x0", {{0}}, 4, SCALAR, "x0", "cpsr", NULL, {{0}}},
	{"40d03bd5", "mrs x0, tpidr_el0", {{0}}, 4, SCALAR, "tpidr", "x0", "x0", {{0}}},
	{"20740bd5", "dc zva, x0", {{0}}, 4, SYSTEM, NULL, "", NULL, {{0}}, "not modelled"},
	{"000000", "(bad)", {{0}}, 0},
};


static void test_syscall_writes(void *self)
{
	static const char *const names[] = {"x8", "x0", "x1", "x2", "x3"};
	struct snr_mem_region m[4];
	/* svc #0 with x8 = 63, read(0, 0x5000, 64) returning 8 */
	uint64_t rd[] = {63, 0, 0x5000, 64, 0};
	unsigned k = syscall_case(&snr_isa_aarch64, self, "010000d4", names, rd, 5, "x0", 8, m);
	CHECK(k == 1 && m[0].addr == 0x5000 && m[0].row_bytes == 8, "read: %u regions", k);
	CHECK(syscall_case(&snr_isa_aarch64, self, "010000d4", names, rd, 5, "x0", (uint64_t)-14, m) == 0, "failed read");
	/* newfstatat(AT_FDCWD, path, 0x6000, 0): arm64's 128-byte struct stat */
	uint64_t st[] = {79, (uint64_t)-100, 0x4000, 0x6000, 0};
	k = syscall_case(&snr_isa_aarch64, self, "010000d4", names, st, 5, "x0", 0, m);
	CHECK(k == 1 && m[0].addr == 0x6000 && m[0].row_bytes == 128, "newfstatat");
	CHECK(syscall_case(&snr_isa_aarch64, self, "1f2003d5", names, rd, 5, "x0", 8, m) == 0, "nop");
}

int main(void)
{
	char err[128];
	void *self = snr_isa_aarch64.create(NULL, err, sizeof err);
	CHECK(self, "create: %s", err);
	if (!self)
		return check_report("test_isa_aarch64");
	size_t n;
	const struct snr_isa_reg *f = snr_isa_aarch64.registers(self, &n);
	static const char *const gdb[] = {"x0", "x30", "sp", "pc", "cpsr", "v0", "v31", "fpsr", "fpcr"};
	for (size_t i = 0; i < sizeof gdb / sizeof gdb[0]; i++)
		CHECK(case_reg_index(f, n, gdb[i]) >= 0, "no register %s", gdb[i]);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&snr_isa_aarch64, self, &cases[i], "cpsr", 0);
	test_syscall_writes(self);
	snr_isa_aarch64.destroy(self);
	return check_report("test_isa_aarch64");
}
