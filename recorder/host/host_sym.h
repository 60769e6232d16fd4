/*
 * host_sym.h: user-space symbolization of the addresses the stack maps hold.
 * User addresses go through the process's /proc/PID/maps (kept from the last
 * snapshot taken while it lived), the file offset, the PT_LOAD segment
 * (which takes care of PIE and shared-library bias) and the file's .symtab,
 * else .dynsym (libelf). Kernel addresses go through /proc/kallsyms.
 */
#ifndef SNR_HOST_SYM_H
#define SNR_HOST_SYM_H

#include <jansson.h>
#include <stdint.h>

struct snrh_symbolizer;

struct snrh_symbolizer *snrh_sym_new(void);
void snrh_sym_free(struct snrh_symbolizer *s);
/* Re-reads /proc/PID/maps; keeps the previous snapshot if the process is
 * gone (its maps read empty). Returns the number of executable mappings. */
int snrh_sym_snapshot(struct snrh_symbolizer *s, int pid);
/* Resolves a user address: symbol name, module path, offset in symbol.
 * Returns 0 if a symbol was found, -1 otherwise (module may still be set). */
int snrh_sym_user(struct snrh_symbolizer *s, uint64_t addr, const char **sym, const char **module,
		  uint64_t *offset);
int snrh_sym_kernel(struct snrh_symbolizer *s, uint64_t addr, const char **sym, uint64_t *offset);
/* The executable mappings with their build-ids, as a JSON array. */
json_t *snrh_sym_maps_json(struct snrh_symbolizer *s);

#endif
