/*
 * test_isa_x86_64.c: the x86-64 plugin's access query on a table of
 * instructions: addressing (base + index*scale + disp, rip-relative, fs/gs,
 * 32-bit addresses), the stack (push/pop/call/ret/leave/enter/pushf/popf),
 * string instructions with rep and both directions, cmpxchg/xchg/xadd, SSE
 * and AVX loads and stores, lea, partial and 32-bit register writes,
 * compares that write no memory, syscall, and instructions that must report
 * a fault. Also the registry.
 */
#include <stdio.h>
#include <string.h>

#include "tests/isa/isa_cases.h"

/* Written elsewhere; listed by the registry only when linked. */
extern const struct snr_isa_ops snr_isa_ta1 __attribute__((weak));

#define LOAD SNR_CLASS_LOAD
#define STORE SNR_CLASS_STORE
#define BRANCH SNR_CLASS_BRANCH
#define SYSTEM SNR_CLASS_SYSTEM
#define SCALAR SNR_CLASS_SCALAR
#define VECTOR SNR_CLASS_VECTOR
#define DF 0x602 /* eflags with the direction flag set */

static const struct isa_case cases[] = {
	{"488b448b10", "mov rax, qword ptr [rbx + rcx*4 + 0x10]", {{"rbx", 0x1000}, {"rcx", 3}}, 5, LOAD,
	 "rbx rcx", "rax", "rax", {{0, 0x101c, 8}}},
	{"4889448b10", "mov qword ptr [rbx + rcx*4 + 0x10], rax", {{"rbx", 0x1000}, {"rcx", 3}}, 5, STORE,
	 "rax rbx rcx", "", NULL, {{1, 0x101c, 8}}},
	{"894cCBf8", "mov dword ptr [rbx + rcx*8 - 8], ecx", {{"rbx", 0x1000}, {"rcx", 2}}, 4, STORE, "rbx rcx",
	 "", NULL, {{1, 0x1008, 4}}},
	{"488b0510000000", "mov rax, qword ptr [rip + 0x10]", {{0}}, 7, LOAD, NULL, "rax", NULL,
	 {{0, 0x400017, 8}}, NULL, 0x400000},
	{"64488b042528000000", "mov rax, qword ptr fs:[0x28]", {{"fs_base", 0x7f0000}}, 9, LOAD, "fs_base", "rax",
	 NULL, {{0, 0x7f0028, 8}}},
	{"65488b4308", "mov rax, qword ptr gs:[rbx + 8]", {{"gs_base", 0x10000}, {"rbx", 0x1000}}, 5, LOAD,
	 "gs_base rbx", "rax", NULL, {{0, 0x11008, 8}}},
	{"678b03", "mov eax, dword ptr [ebx]", {{"rbx", 0x100001000ull}}, 3, LOAD, "rbx", "rax", NULL,
	 {{0, 0x1000, 4}}},
	/* stack */
	{"50", "push rax", {{"rsp", 0x8000}}, 1, STORE, "rax rsp", "rsp", NULL, {{1, 0x7ff8, 8}}},
	{"5b", "pop rbx", {{"rsp", 0x8000}}, 1, LOAD, "rsp", "rbx rsp", "rbx", {{0, 0x8000, 8}}},
	{"ff33", "push qword ptr [rbx]", {{"rsp", 0x8000}, {"rbx", 0x1000}}, 2, STORE, "rsp rbx", "rsp", NULL,
	 {{0, 0x1000, 8}, {1, 0x7ff8, 8}}},
	{"e800000000", "call 0x401005", {{"rsp", 0x8000}}, 5, BRANCH, "rsp", "rsp", NULL, {{1, 0x7ff8, 8}}, NULL,
	 0x401000},
	{"ff13", "call qword ptr [rbx]", {{"rsp", 0x8000}, {"rbx", 0x1000}}, 2, BRANCH, "rsp rbx", "rsp", NULL,
	 {{0, 0x1000, 8}, {1, 0x7ff8, 8}}},
	{"c3", "ret", {{"rsp", 0x8000}}, 1, BRANCH, "rsp", "rsp", NULL, {{0, 0x8000, 8}}},
	{"c9", "leave", {{"rsp", 0x7000}, {"rbp", 0x9000}}, 1, LOAD, "rbp", "rsp rbp", NULL, {{0, 0x9000, 8}}},
	{"c8100000", "enter 0x10, 0", {{"rsp", 0x8000}, {"rbp", 0x9000}}, 4, STORE, "rsp rbp", "rsp rbp", NULL,
	 {{1, 0x7ff8, 8}}},
	{"9c", "pushfq", {{"rsp", 0x8000}}, 1, STORE, "rsp eflags", "rsp", NULL, {{1, 0x7ff8, 8}}},
	{"9d", "popfq", {{"rsp", 0x8000}}, 1, LOAD, "rsp eflags", "rsp eflags", NULL, {{0, 0x8000, 8}}},
	/* strings: rcx elements, DF=1 grows downwards */
	{"f3a4", "rep movsb byte ptr [rdi], byte ptr [rsi]", {{"rsi", 0x2000}, {"rdi", 0x3000}, {"rcx", 5}}, 2,
	 STORE, "rsi rdi rcx eflags", "rsi rdi rcx", NULL, {{0, 0x2000, 5}, {1, 0x3000, 5}}},
	{"f3a4", "rep movsb byte ptr [rdi], byte ptr [rsi]",
	 {{"rsi", 0x2000}, {"rdi", 0x3000}, {"rcx", 5}, {"eflags", DF}}, 2, STORE, "rsi rdi rcx eflags",
	 "rsi rdi rcx", NULL, {{0, 0x1ffc, 5}, {1, 0x2ffc, 5}}},
	{"f3a4", "rep movsb byte ptr [rdi], byte ptr [rsi]", {{"rsi", 0x2000}, {"rdi", 0x3000}, {"rcx", 0}}, 2,
	 SCALAR, "rcx", "rsi rdi rcx", NULL, {{0}}},
	{"f348a5", "rep movsq qword ptr [rdi], qword ptr [rsi]", {{"rsi", 0x2000}, {"rdi", 0x3000}, {"rcx", 3}},
	 3, STORE, "rsi rdi rcx", "rsi rdi rcx", NULL, {{0, 0x2000, 24}, {1, 0x3000, 24}}},
	{"f348a5", "rep movsq qword ptr [rdi], qword ptr [rsi]",
	 {{"rsi", 0x2000}, {"rdi", 0x3000}, {"rcx", 3}, {"eflags", DF}}, 3, STORE, "rsi rdi rcx",
	 "rsi rdi rcx", NULL, {{0, 0x1ff0, 24}, {1, 0x2ff0, 24}}},
	{"f3aa", "rep stosb byte ptr [rdi], al", {{"rdi", 0x3000}, {"rcx", 7}}, 2, STORE, "rax rdi rcx eflags",
	 "rdi rcx", NULL, {{1, 0x3000, 7}}},
	{"f3aa", "rep stosb byte ptr [rdi], al", {{"rdi", 0x3000}, {"rcx", 7}, {"eflags", DF}}, 2, STORE,
	 "rax rdi rcx", "rdi rcx", NULL, {{1, 0x2ffa, 7}}},
	{"a4", "movsb byte ptr [rdi], byte ptr [rsi]", {{"rsi", 0x2000}, {"rdi", 0x3000}, {"rcx", 99}}, 1, STORE,
	 "rsi rdi", "rsi rdi", NULL, {{0, 0x2000, 1}, {1, 0x3000, 1}}},
	{"ac", "lodsb al, byte ptr [rsi]", {{"rsi", 0x2000}}, 1, LOAD, "rsi rax", "rax rsi", NULL,
	 {{0, 0x2000, 1}}},
	{"f2ae", "repne scasb al, byte ptr [rdi]", {{"rdi", 0x3000}, {"rcx", 4}}, 2, LOAD, "rax rdi rcx",
	 "rdi rcx eflags", NULL, {{0, 0x3000, 4}}},
	/* atomics: conditional writes are reads too */
	{"f0480fb10b", "lock cmpxchg qword ptr [rbx], rcx", {{"rbx", 0x1000}}, 5, STORE, "rax rbx rcx eflags",
	 "rax eflags", NULL, {{0, 0x1000, 8}, {1, 0x1000, 8}}},
	{"488703", "xchg qword ptr [rbx], rax", {{"rbx", 0x1000}}, 3, STORE, "rax rbx", "rax", NULL,
	 {{0, 0x1000, 8}, {1, 0x1000, 8}}},
	{"480fc103", "xadd qword ptr [rbx], rax", {{"rbx", 0x1000}}, 4, STORE, "rax rbx", "rax eflags", NULL,
	 {{0, 0x1000, 8}, {1, 0x1000, 8}}},
	/* SSE / AVX */
	{"0f1003", "movups xmm0, xmmword ptr [rbx]", {{"rbx", 0x1000}}, 3, LOAD, "rbx", "xmm0 mxcsr", "xmm0",
	 {{0, 0x1000, 16}}},
	{"0f1103", "movups xmmword ptr [rbx], xmm0", {{"rbx", 0x1000}}, 3, STORE, "rbx xmm0", "mxcsr", NULL,
	 {{1, 0x1000, 16}}},
	{"0f2903", "movaps xmmword ptr [rbx], xmm0", {{"rbx", 0x1000}}, 3, STORE, "rbx xmm0", "mxcsr", NULL,
	 {{1, 0x1000, 16}}},
	{"c5fe6f03", "vmovdqu ymm0, ymmword ptr [rbx]", {{"rbx", 0x1000}}, 4, LOAD, "rbx",
	 "xmm0 ymm0h mxcsr", "xmm0 ymm0h", {{0, 0x1000, 32}}},
	{"c5fe7f03", "vmovdqu ymmword ptr [rbx], ymm0", {{"rbx", 0x1000}}, 4, STORE, "rbx xmm0 ymm0h", "mxcsr",
	 NULL, {{1, 0x1000, 32}}},
	{"c5fa6f03", "vmovdqu xmm0, xmmword ptr [rbx]", {{"rbx", 0x1000}}, 4, LOAD, "rbx", "xmm0 ymm0h mxcsr",
	 "xmm0 ymm0h", {{0, 0x1000, 16}}},
	{"c5f058c2", "vaddps xmm0, xmm1, xmm2", {{0}}, 4, VECTOR, "xmm1 xmm2 mxcsr", "xmm0 ymm0h mxcsr", "xmm0",
	 {{0}}},
	{"f2480f2ac0", "cvtsi2sd xmm0, rax", {{0}}, 5, VECTOR, "rax xmm0", "xmm0 mxcsr", "ymm0h", {{0}}},
	{"f30f10c1", "movss xmm0, xmm1", {{0}}, 4, VECTOR, "xmm0 xmm1", "xmm0 mxcsr", NULL, {{0}}},
	{"c5f877", "vzeroupper", {{0}}, 3, VECTOR, NULL,
	 "ymm0h ymm1h ymm2h ymm3h ymm4h ymm5h ymm6h ymm7h ymm8h ymm9h ymm10h ymm11h ymm12h ymm13h ymm14h ymm15h "
	 "mxcsr", "xmm0", {{0}}},
	{"0fae1b", "stmxcsr dword ptr [rbx]", {{"rbx", 0x1000}}, 3, STORE, "mxcsr rbx", "", NULL,
	 {{1, 0x1000, 4}}},
	/* lea reads no memory */
	{"488d448b10", "lea rax, [rbx + rcx*4 + 0x10]", {{"rbx", 0x1000}, {"rcx", 3}}, 5, SCALAR, "rbx rcx", "rax",
	 "rax", {{0}}},
	{"0f1f440000", "nop dword ptr [rax + rax]", {{0}}, 5, SCALAR, NULL, "", NULL, {{0}}},
	/* partial and 32-bit register writes */
	{"b005", "mov al, 5", {{0}}, 2, SCALAR, "rax", "rax", NULL, {{0}}},
	{"8a23", "mov ah, byte ptr [rbx]", {{"rbx", 0x1000}}, 2, LOAD, "rax rbx", "rax", NULL, {{0, 0x1000, 1}}},
	{"668b03", "mov ax, word ptr [rbx]", {{"rbx", 0x1000}}, 3, LOAD, "rax rbx", "rax", NULL, {{0, 0x1000, 2}}},
	{"b801000000", "mov eax, 1", {{0}}, 5, SCALAR, NULL, "rax", "rax", {{0}}},
	{"31c0", "xor eax, eax", {{0}}, 2, SCALAR, "rax", "rax eflags", NULL, {{0}}},
	{"480f44c3", "cmove rax, rbx", {{0}}, 4, SCALAR, "rax rbx eflags", "rax", NULL, {{0}}},
	{"0f94c0", "sete al", {{0}}, 3, SCALAR, "rax eflags", "rax", NULL, {{0}}},
	{"48f7e3", "mul rbx", {{0}}, 3, SCALAR, "rax rbx", "rax rdx eflags", "rdx", {{0}}},
	{"d7", "xlatb", {{"rbx", 0x1000}, {"rax", 0x1ff}}, 1, LOAD, "rax rbx", "rax", NULL, {{0, 0x10ff, 1}}},
	{"480fa303", "bt qword ptr [rbx], rax", {{"rbx", 0x1000}, {"rax", 130}}, 4, LOAD, "rax rbx", "eflags",
	 NULL, {{0, 0x1010, 8}}},
	{"480fa303", "bt qword ptr [rbx], rax", {{"rbx", 0x1000}, {"rax", (uint64_t)-1}}, 4, LOAD, "rax rbx",
	 "eflags", NULL, {{0, 0xff8, 8}}},
	/* compares write no memory (capstone 4 marks test [m], imm as written; the
	 * vDSO's pvclock read tests a flag in [vvar_vclock] that way) */
	{"f6461d01", "test byte ptr [rsi + 0x1d], 1", {{"rsi", 0x1000}}, 4, LOAD, "rsi", "eflags", NULL,
	 {{0, 0x101d, 1}}},
	{"48f70601000000", "test qword ptr [rsi], 1", {{"rsi", 0x1000}}, 7, LOAD, "rsi", "eflags", NULL,
	 {{0, 0x1000, 8}}},
	{"833e01", "cmp dword ptr [rsi], 1", {{"rsi", 0x1000}}, 3, LOAD, "rsi", "eflags", NULL, {{0, 0x1000, 4}}},
	/* system */
	{"0f05", "syscall", {{0}}, 2, SYSTEM, "rax rdi rsi rdx r10 r8 r9", "rax rcx r11 eflags", NULL, {{0}}},
	{"0fa2", "cpuid", {{0}}, 2, SYSTEM, "rax rcx", "rax rbx rcx rdx", NULL, {{0}}},
	/* the vDSO's clock read: user code runs it, no fault (capstone files it as privileged) */
	{"0f01f9", "rdtscp", {{0}}, 3, SYSTEM, NULL, "rax rcx rdx", NULL, {{0}}},
	/* not modelled: best-known access plus a fault */
	{"dd03", "fld qword ptr [rbx]", {{"rbx", 0x1000}}, 2, LOAD, NULL, NULL, NULL, {{0, 0x1000, 8}}, "x87"},
	{"62f17c481003", "vmovups zmm0, zmmword ptr [rbx]", {{"rbx", 0x1000}}, 6, LOAD, NULL, NULL, NULL,
	 {{0, 0x1000, 64}}, "AVX-512"},
	{"c4e26d90048b", "vpgatherdd ymm0, dword ptr [rbx + ymm1*4], ymm2", {{0}}, 6, -1, NULL,
	 "xmm0 ymm0h mxcsr", NULL, {{0}}, "gather"},
	{"0fae03", "fxsave [rbx]", {{"rbx", 0x1000}}, 3, STORE, NULL, "", NULL, {{1, 0x1000, 8}}, "fxsave"},
	{"cc", "int3", {{0}}, 1, SYSTEM, NULL, "eflags", NULL, {{0}}, "breakpoint"},
	{"06", "(bad)", {{0}}, 0},
};

static void test_registry(void)
{
	CHECK(snr_isa_find("x86-64") == &snr_isa_x86_64, "find x86-64");
	CHECK(snr_isa_find("aarch64") == &snr_isa_aarch64, "find aarch64");
	CHECK(snr_isa_find("mips") == NULL, "find mips");
	CHECK(snr_isa_for_gdb_arch("i386:x86-64") == &snr_isa_x86_64, "gdb i386:x86-64");
	CHECK(snr_isa_for_gdb_arch("i386:x86-64:intel") == &snr_isa_x86_64, "gdb i386:x86-64:intel");
	CHECK(snr_isa_for_gdb_arch("i386") == NULL, "gdb i386 is not x86-64");
	CHECK(snr_isa_for_gdb_arch("aarch64") == &snr_isa_aarch64, "gdb aarch64");
	if (&snr_isa_ta1)
		CHECK(snr_isa_find("ta1") == &snr_isa_ta1, "find ta1");
	else
		CHECK(snr_isa_find("ta1") == NULL, "ta1 not linked, not listed");
}

static void test_register_file(const struct snr_isa_ops *ops, void *self)
{
	size_t n;
	const struct snr_isa_reg *f = ops->registers(self, &n);
	int pcs = 0;
	for (size_t i = 0; i < n; i++) {
		pcs += f[i].pc;
		for (size_t j = 0; j < i; j++)
			CHECK(strcmp(f[i].name, f[j].name), "register name %s twice", f[i].name);
	}
	CHECK(pcs == 1, "%s: %d pc registers", ops->name, pcs);
	CHECK(n <= SNR_ISA_MAX_REGS, "%s: too many registers", ops->name);
	static const char *const gdb[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8", "r15",
					  "rip", "eflags", "cs", "ss", "ds", "es", "fs", "gs", "fs_base",
					  "gs_base", "xmm0", "xmm15", "ymm0h", "ymm15h", "mxcsr"};
	for (size_t i = 0; i < sizeof gdb / sizeof gdb[0]; i++)
		CHECK(case_reg_index(f, n, gdb[i]) >= 0, "no register %s", gdb[i]);
}


static void test_syscall_writes(void *self)
{
	static const char *const names[] = {"rax", "rdi", "rsi", "rdx", "r10"};
	struct snr_mem_region m[4];
	/* read(0, 0x5000, 64) returning 8: 8 bytes at 0x5000 */
	uint64_t rd[] = {0, 0, 0x5000, 64, 0};
	unsigned k = syscall_case(&snr_isa_x86_64, self, "0f05", names, rd, 5, "rax", 8, m);
	CHECK(k == 1 && m[0].write && m[0].addr == 0x5000 && m[0].row_bytes == 8, "read: %u regions", k);
	/* a failed read (-EFAULT) wrote nothing */
	CHECK(syscall_case(&snr_isa_x86_64, self, "0f05", names, rd, 5, "rax", (uint64_t)-14, m) == 0, "failed read");
	/* fstat(3, 0x6000): the 144-byte struct */
	uint64_t st[] = {5, 3, 0x6000, 0, 0};
	k = syscall_case(&snr_isa_x86_64, self, "0f05", names, st, 5, "rax", 0, m);
	CHECK(k == 1 && m[0].addr == 0x6000 && m[0].row_bytes == 144, "fstat");
	/* poll(0x7000, 3, -1): three 8-byte pollfds */
	uint64_t pl[] = {7, 0x7000, 3, (uint64_t)-1, 0};
	k = syscall_case(&snr_isa_x86_64, self, "0f05", names, pl, 5, "rax", 1, m);
	CHECK(k == 1 && m[0].addr == 0x7000 && m[0].row_bytes == 24, "poll");
	/* write(1, ...) writes no memory of the program; nor does an instruction that is not syscall */
	uint64_t wr[] = {1, 1, 0x5000, 8, 0};
	CHECK(syscall_case(&snr_isa_x86_64, self, "0f05", names, wr, 5, "rax", 8, m) == 0, "write");
	CHECK(syscall_case(&snr_isa_x86_64, self, "90", names, rd, 5, "rax", 8, m) == 0, "nop");
}

int main(void)
{
	char err[128];
	void *self = snr_isa_x86_64.create(NULL, err, sizeof err);
	CHECK(self, "create: %s", err);
	if (!self)
		return check_report("test_isa_x86_64");
	CHECK(snr_isa_x86_64.abi_version == SNR_ISA_ABI_VERSION && snr_isa_x86_64.max_insn_bytes == 15, "ops");
	test_register_file(&snr_isa_x86_64, self);
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
		run_case(&snr_isa_x86_64, self, &cases[i], "eflags", 0x202);
	test_registry();
	test_syscall_writes(self);
	snr_isa_x86_64.destroy(self);
	return check_report("test_isa_x86_64");
}
