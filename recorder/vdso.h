/*
 * vdso.h: calls into the vDSO, shared by recorder/record.c.
 *
 * A call into x86-64 Linux's vDSO runs on the target as one unit, as a
 * system call does (which it is, done in user space): the recorder finds
 * the vDSO by the auxiliary vector's AT_SYSINFO_EHDR (the debugger's
 * read_auxv: /proc/PID/auxv, gdbserver's qXfer:auxv:read), reads its ELF
 * from the target's memory and names its exported functions by .dynsym.
 * When a step of the window (the one after a `call` or `jmp`) is at the
 * entry of a function below, the target runs to the return address on top
 * of the stack; the step is marked as a call (trace flag 64) whose outputs
 * are every general register, the flags and the pc after the return, and
 * the memory the matching system call's entry in the ISA plugin's
 * syscall_writes locates. Its loads from [vvar] and its seqlock retries
 * are the target's affair: through gdbserver a pass of that loop no longer
 * costs a round trip per load, so the kernel's clock update (every tick)
 * no longer lands in almost every pass. Any other vDSO code (an entry not
 * listed, a window that starts inside the vDSO) is stepped as before, its
 * [vvar] loads unread (reads_unreadable).
 */
#ifndef SNR_VDSO_H
#define SNR_VDSO_H

#include "recorder/record_int.h"

#define VDSO_KNOWN 5

struct vdso_known {
	const char *name;
	uint64_t sysno; /* the x86-64 system call it does in user space */
	unsigned nargs;
};
extern const struct vdso_known vdso_known[VDSO_KNOWN];

struct vdso_fn {
	uint64_t addr;
	const struct vdso_known *k;
};

struct vdso {
	uint64_t lo, hi; /* the vDSO's text, [lo, hi); lo == hi: none found */
	struct snr_elf *elf;
	uint64_t bias;
	struct vdso_fn fn[VDSO_KNOWN];
	unsigned nfn;
	const char *none; /* why no vDSO call runs on the target as a unit */
};

void vdso_free(struct vdso *v);
/* Finds the target's vDSO and its functions (x86-64 only). Leaves v->none
 * set, and no function, where the target or the debugger does not tell; an
 * error only where the target's own answers contradict themselves. */
void vdso_find(struct rec *r, struct vdso *v);
/* The known vDSO function whose entry is pc, or NULL. Asked for every
 * instruction: a pc outside the vDSO (every one of a TA1 window) is
 * answered inline, without the call (6 of the 1,239 million instructions
 * of the 1M serving window's recording, callgrind). */
const struct vdso_fn *vdso_entry_in(const struct vdso *v, uint64_t pc);
static inline const struct vdso_fn *vdso_entry(const struct vdso *v, uint64_t pc)
{
	return pc < v->lo || pc >= v->hi ? NULL : vdso_entry_in(v, pc);
}
/*
 * The access of a whole call to f, in place of its entry's instruction:
 * it reads its arguments, the stack pointer and the return address at it
 * (the `ret`), writes every general register and the flags (the function
 * runs unseen: none is assumed preserved) and the pc; its outputs are
 * recorded after it (record_outputs). Its memory outputs come after the
 * step, from vdso_call_writes.
 */
void vdso_call_access(struct rec *r, const struct vdso_fn *f, struct snr_insn_access *a);
/* Where the call returns to: the address on top of the stack at its entry. */
int vdso_return_address(struct rec *r, uint64_t index, uint64_t pc, uint64_t *ret, char *err, size_t errlen);
/* The memory the call to f wrote: the ISA plugin's syscall_writes for its
 * system call, asked as if a `syscall` had run with f's number in rax and
 * the call's arguments and result. */
unsigned vdso_call_writes(struct rec *r, const struct vdso_fn *f, const uint8_t *const *before,
			  const uint8_t *const *after, struct snr_mem_region *out, unsigned max);

#endif
