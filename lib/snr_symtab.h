/*
 * snr_symtab.h: a symbol table carried inside snr's files (traces and
 * metrics), so that they symbolize without the program's ELF. Encoded as a
 * varint count, then per symbol (sorted by address): zigzag address delta,
 * size, name length, name bytes.
 */
#ifndef SNR_SYMTAB_H
#define SNR_SYMTAB_H

#include <stddef.h>
#include <stdint.h>

#include "snr_chunkfile.h"

struct snr_symtab {
	size_t n;
	uint64_t *addr, *size;
	char **name;
};

/* Appends the encoding of n symbols (sorted by address) to b. */
void snr_symtab_encode(struct snr_buf *b, size_t n, const uint64_t *addr, const uint64_t *size,
		       const char *const *name);
/* Decodes a payload; -1 if malformed. */
int snr_symtab_decode(struct snr_symtab *t, const uint8_t *p, size_t len);
void snr_symtab_free(struct snr_symtab *t);
/* "name+0x1c", "name", or "0x..." */
const char *snr_symtab_symbolize(const struct snr_symtab *t, uint64_t addr, char *buf, size_t len);

#endif
