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

/* A --breakpoint spec: FILE:LINE (line > 0), SYMBOL[+OFF] (sym set, value
 * the offset) or 0xADDR[+OFF] (value the address). */
struct snr_bp_spec {
	char sym[256];
	char file[1024];
	unsigned line;
	uint64_t value;
};

/* -1 with err saying the forms a spec takes when spec has none of them. */
int snr_breakpoint_parse(const char *spec, struct snr_bp_spec *bs, char *err, size_t errlen);

/* The address the window starts at: FILE:LINE through the objects' DWARF
 * line tables (lib/snr_line_sites.h: the first statement of the line, said
 * on stderr, with the other functions the line has code in), a symbol in
 * the first object that has it plus its bias, or the address as given.
 * -1 with err naming what is wrong: no such symbol, a data object (a
 * breakpoint there is never hit), no such file in the line tables, no code
 * at the line (the nearest lines with code named). */
int snr_breakpoint_resolve(const char *spec, const struct snr_bp_spec *bs, const struct loaded_obj *objs,
			   size_t nobjs, uint64_t *bp, char *err, size_t errlen);

#endif
