/*
 * breakpoint.h: the program's symbols and the --breakpoint spec resolved
 * against them (recorder/breakpoint.c).
 */
#ifndef SNR_BREAKPOINT_H
#define SNR_BREAKPOINT_H

#include <stddef.h>
#include <stdint.h>

#include "lib/snr_elf.h"

struct loaded_obj {
	struct snr_elf *elf;
	uint64_t bias;
};

/* The objects whose symbols place the breakpoint: elf_path alone (at the
 * bias pid maps it, for a PIE), or with elf_path NULL pid's executable
 * first and every other object it maps at offset 0 (none without a pid). */
int snr_rec_load_symbols(const char *elf_path, int pid, struct loaded_obj **objs, size_t *nobjs, char *err,
			 size_t errlen);
void snr_rec_free_symbols(struct loaded_obj *objs, size_t n);

/* sym (the symbol part of spec, as snr_parse_breakpoint gave it) in the
 * first object that has it: *bp += its address and the object's bias.
 * -1 with err naming the symbol and the program when none has it. */
int snr_breakpoint_resolve(const char *spec, const char *sym, const struct loaded_obj *objs, size_t nobjs,
			   uint64_t *bp, char *err, size_t errlen);

#endif
