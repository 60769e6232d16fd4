/*
 * vdso.c: calls into x86-64 Linux's vDSO, run on the target as one unit
 * (see vdso.h).
 */
#include "recorder/vdso.h"

#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_elf.h"
#include "lib/snr_util.h"

const struct vdso_known vdso_known[VDSO_KNOWN] = {
	{"__vdso_clock_gettime", 228, 2}, {"__vdso_gettimeofday", 96, 2}, {"__vdso_time", 201, 1},
	{"__vdso_clock_getres", 229, 2},  {"__vdso_getcpu", 309, 3},
};

void vdso_free(struct vdso *v)
{
	snr_elf_free(v->elf);
	memset(v, 0, sizeof(*v));
}

/* Finds the target's vDSO and its functions (x86-64 only). Leaves v->none
 * set, and no function, where the target or the debugger does not tell; an
 * error only where the target's own answers contradict themselves. */
void vdso_find(struct rec *r, struct vdso *v)
{
	memset(v, 0, sizeof(*v));
	v->none = "not an x86-64 target";
	if (strcmp(r->isa->name, "x86-64") || !snr_isa_has_syscall_writes(r->isa))
		return;
	v->none = "the debugger tells no auxiliary vector";
	uint8_t auxv[4096];
	size_t n = 0;
	if (r->dbg->abi_version < 6 || !r->dbg->read_auxv)
		return;
	r->requests++;
	if (r->dbg->read_auxv(r->d, auxv, sizeof(auxv), &n) != 0)
		return;
	uint64_t base = 0;
	for (size_t k = 0; k + 16 <= n; k += 16) {
		uint64_t type, val;
		memcpy(&type, auxv + k, 8);
		memcpy(&val, auxv + k + 8, 8);
		if (type == AT_SYSINFO_EHDR)
			base = val;
		if (type == AT_NULL)
			break;
	}
	v->none = "the auxiliary vector names no vDSO (AT_SYSINFO_EHDR)";
	if (!base)
		return;
	Elf64_Ehdr eh;
	v->none = "the vDSO's ELF header could not be read";
	r->requests++;
	if (r->dbg->read_mem(r->d, base, &eh, sizeof(eh)) || memcmp(eh.e_ident, ELFMAG, SELFMAG) ||
	    eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_phentsize != sizeof(Elf64_Phdr) ||
	    eh.e_shentsize != sizeof(Elf64_Shdr))
		return;
	uint64_t size = eh.e_shoff + (uint64_t)eh.e_shnum * eh.e_shentsize;
	uint64_t phend = eh.e_phoff + (uint64_t)eh.e_phnum * eh.e_phentsize;
	size = size > phend ? size : phend;
	v->none = "the vDSO's ELF is larger than 1 MiB";
	if (size > (1u << 20))
		return;
	uint8_t *img = snr_xmalloc(size);
	char msg[300];
	r->requests++;
	v->none = "the vDSO's image could not be read";
	if (!r->dbg->read_mem(r->d, base, img, size))
		v->elf = snr_elf_from_memory("[vdso]", img, size, msg, sizeof(msg));
	free(img);
	v->none = "the vDSO's ELF could not be parsed";
	if (!v->elf)
		return;
	uint64_t first = UINT64_MAX, end = 0;
	for (size_t s = 0; s < v->elf->nsegments; s++) {
		const struct snr_elf_segment *g = &v->elf->segments[s];
		first = g->vaddr < first ? g->vaddr : first;
		end = g->vaddr + g->memsz > end ? g->vaddr + g->memsz : end;
	}
	if (first == UINT64_MAX)
		return;
	v->bias = base - (first & ~(uint64_t)4095);
	v->lo = base;
	v->hi = v->bias + end;
	for (size_t k = 0; k < sizeof(vdso_known) / sizeof(vdso_known[0]); k++) {
		const struct snr_elf_symbol *s = snr_elf_find(v->elf, vdso_known[k].name);
		if (s && s->is_func)
			v->fn[v->nfn++] = (struct vdso_fn){s->addr + v->bias, &vdso_known[k]};
	}
	v->none = v->nfn ? NULL : "the vDSO exports none of the functions snr runs as a unit";
}

const struct vdso_fn *vdso_entry_in(const struct vdso *v, uint64_t pc)
{
	for (unsigned k = 0; k < v->nfn; k++)
		if (v->fn[k].addr == pc)
			return &v->fn[k];
	return NULL;
}

/*
 * The access of a whole call to f, in place of its entry's instruction:
 * it reads its arguments, the stack pointer and the return address at it
 * (the `ret`), writes every general register and the flags (the function
 * runs unseen: none is assumed preserved) and the pc; its outputs are
 * recorded after it (record_outputs). Its memory outputs come after the
 * step, from vdso_call_writes.
 */
void vdso_call_access(struct rec *r, const struct vdso_fn *f, struct snr_insn_access *a)
{
	static const char *const gprs[] = {"rax", "rbx", "rcx", "rdx", "rsi", "rdi", "rbp", "rsp", "r8",
					   "r9",  "r10", "r11", "r12", "r13", "r14", "r15", "eflags"};
	static const char *const args[] = {"rdi", "rsi", "rdx"};
	unsigned length = a->length;
	memset(a, 0, sizeof(*a));
	a->length = length;
	a->cls = SNR_CLASS_SYSTEM;
	a->record_outputs = true;
	for (size_t k = 0; k < sizeof(gprs) / sizeof(gprs[0]); k++) {
		int g = reg_named(r, gprs[k]);
		if (g >= 0)
			snr_regset_add(a->regs_written, (unsigned)g);
	}
	snr_regset_add(a->regs_written, (unsigned)r->pc_reg);
	for (unsigned k = 0; k < f->k->nargs; k++) {
		int g = reg_named(r, args[k]);
		if (g >= 0)
			snr_regset_add(a->regs_read, (unsigned)g);
	}
	int sp = reg_named(r, "rsp");
	if (sp >= 0) {
		snr_regset_add(a->regs_read, (unsigned)sp);
		a->nmem = 1;
		a->mem[0] = (struct snr_mem_region){.addr = reg_u64(r, (size_t)sp), .row_bytes = 8, .rows = 1};
	}
}

/* Where the call returns to: the address on top of the stack at its entry. */
int vdso_return_address(struct rec *r, uint64_t index, uint64_t pc, uint64_t *ret, char *err, size_t errlen)
{
	int sp = reg_named(r, "rsp");
	uint8_t b[8];
	r->requests++;
	if (sp < 0 || r->dbg->read_mem(r->d, reg_u64(r, (size_t)sp), b, 8)) {
		snr_fmt(err, errlen, "instruction %llu at 0x%llx: reading the vDSO call's return address on the stack: %s",
			(unsigned long long)index, (unsigned long long)pc, sp < 0 ? "no rsp" : r->dbg->error(r->d));
		return -1;
	}
	memcpy(ret, b, 8);
	return 0;
}

/* The memory the call to f wrote: the ISA plugin's syscall_writes for its
 * system call, asked as if a `syscall` had run with f's number in rax and
 * the call's arguments and result. */
unsigned vdso_call_writes(struct rec *r, const struct vdso_fn *f, const uint8_t *const *before,
			  const uint8_t *const *after, struct snr_mem_region *out, unsigned max)
{
	static const uint8_t syscall_insn[2] = {0x0f, 0x05};
	int rax = reg_named(r, "rax");
	if (rax < 0)
		return 0;
	uint8_t nr[8];
	memcpy(nr, &f->k->sysno, 8);
	const uint8_t **val = snr_xcalloc(r->niregs, sizeof(*val));
	memcpy(val, before, r->niregs * sizeof(*val));
	val[rax] = nr;
	struct snr_isa_regs b = {.val = val, .chip = (unsigned)r->o->chip, .nchips = r->nchips};
	struct snr_isa_regs a = {.val = after, .chip = (unsigned)r->o->chip, .nchips = r->nchips};
	unsigned n = r->isa->syscall_writes(r->isa_self, syscall_insn, sizeof(syscall_insn), 0, &b, &a, out, max);
	free(val);
	return n;
}
