/*
 * host_sym.h: turning the addresses the host tracer collects into stacks a
 * user can read, through elfutils libdw (libdwfl).
 *
 * User space: the traced process's /proc/PID/maps (re-read while it runs,
 * the last copy kept after it exits) is reported to one Dwfl, module by
 * module (the vDSO from the tracer's own image: the kernel maps the same
 * one into every 64-bit process). Names come from dwfl_module_addrinfo,
 * which reads .symtab, .dynsym, the MiniDebugInfo in .gnu_debugdata and
 * the separate debug files under /usr/lib/debug/.build-id when installed;
 * PLT entries are named SYMBOL@plt from the relocation of the GOT slot they
 * jump through. DWARF unwinding (snrh_sym_unwind) runs libdw's unwinder
 * (.eh_frame / .debug_frame CFI, its frame-pointer step where a module has
 * none) over the registers and stack copy the BPF programs took.
 * Kernel addresses go through /proc/kallsyms.
 */
#ifndef SNR_HOST_SYM_H
#define SNR_HOST_SYM_H

#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#include "recorder/host/host.h"

struct snrh_symbolizer;

/* pid: the traced process (its tid's stacks are what snrh_sym_unwind
 * unwinds). NULL if libdw cannot be set up. */
struct snrh_symbolizer *snrh_sym_new(int pid);
void snrh_sym_free(struct snrh_symbolizer *s);
/* Re-reads /proc/PID/maps and reports the modules to libdw when they
 * changed; keeps the previous copy if the process is gone (its maps read
 * empty). Returns the number of executable mappings. */
int snrh_sym_snapshot(struct snrh_symbolizer *s);
/* Makes sure the modules cover a stack's pcs (leaf first, the rest return
 * addresses): when one is outside them (a library mapped since the last
 * read, or the loader had not mapped it yet), re-reads the maps, at most
 * every 2 ms. True if that changed them. */
bool snrh_sym_cover(struct snrh_symbolizer *s, const uint64_t *pcs, int n);
/* Resolves a user address: symbol name, module path, offset (from the
 * symbol, else from the module's load address). return_address: addr is
 * a caller's return address, so the call before it is looked up (a call
 * that ends a function, a noreturn or tail position, would otherwise be
 * named after the next function). Returns 0 if a symbol was found, -1
 * otherwise (module may still be set). sym is valid until the next call,
 * module as long as s. */
int snrh_sym_user(struct snrh_symbolizer *s, uint64_t addr, bool return_address, const char **sym,
		  const char **module, uint64_t *offset);
/* Reads /proc/kallsyms (tens of ms of CPU): done once, by the first
 * snrh_sym_kernel or here, before the traced command starts, so that the
 * cost is not paid beside it. */
void snrh_sym_load_kernel(struct snrh_symbolizer *s);
/* Adds kernel symbols kallsyms did not list when it was read (the
 * tracer's own BPF programs, loaded beside that read): addr, size and name
 * per symbol. A symbol read earlier that ran past one of them ends at it. */
void snrh_sym_add_kernel(struct snrh_symbolizer *s, size_t n, const uint64_t *addr, const uint64_t *size,
			 const char *const *name);
int snrh_sym_kernel(struct snrh_symbolizer *s, uint64_t addr, const char **sym, uint64_t *offset);
/* How an unwind ended: outermost, when it reached the thread's outermost
 * frame, is the address above the highest stack word it read (what a copy
 * must reach), else 0; ran_out, when a word it needed (a saved register or
 * return address) lay above the copy, is the lowest such address, else 0. */
struct snrh_unwind_end {
	uint64_t outermost;
	uint64_t ran_out;
};
/* Unwinds thread tid from u (registers and stack copy): writes up to max
 * pcs, leaf first (pcs[0] the interrupted instruction, the rest return
 * addresses); returns how many. */
int snrh_sym_unwind(struct snrh_symbolizer *s, uint32_t tid, const struct snrh_ustack *u, uint64_t *pcs, int max,
		    struct snrh_unwind_end *end);
/* The executable mappings with their build-ids, as a JSON array. */
json_t *snrh_sym_maps_json(struct snrh_symbolizer *s);

#endif
