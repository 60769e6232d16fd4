/*
 * snr_elf.h: reading ELF programs with libelf: loadable segments and the
 * symbol table (for breakpoints by name and symbol+offset in reports).
 */
#ifndef SNR_ELF_H
#define SNR_ELF_H

#include <stddef.h>
#include <stdint.h>

struct snr_elf_segment {
	uint64_t vaddr, memsz, filesz;
	uint32_t flags; /* PF_R | PF_W | PF_X */
	const uint8_t *data; /* filesz bytes, owned by the snr_elf */
};

struct snr_elf_symbol {
	char *name;
	uint64_t addr, size;
	int is_func;
	int is_object; /* STT_OBJECT: data */
};

struct snr_elf {
	char *path;
	uint16_t machine;   /* e_machine */
	uint32_t flags;     /* e_flags */
	int is64;
	uint64_t entry;
	size_t nsegments;
	struct snr_elf_segment *segments;
	size_t nsymbols;
	struct snr_elf_symbol *symbols; /* sorted by address */
	uint8_t *image; /* the file's bytes */
	size_t image_size;
};

/* Opens and parses path. Returns NULL with errbuf filled on failure. */
struct snr_elf *snr_elf_open(const char *path, char *errbuf, size_t errlen);
/* The same from an image in memory (copied), named name in messages: the
 * recorder reads the vDSO's ELF from the target's memory. */
struct snr_elf *snr_elf_from_memory(const char *name, const uint8_t *bytes, size_t len, char *errbuf, size_t errlen);
void snr_elf_free(struct snr_elf *elf);

/* Symbol by exact name, or NULL. */
const struct snr_elf_symbol *snr_elf_find(const struct snr_elf *elf, const char *name);
/* The symbol containing addr (or the nearest function below it), or NULL. */
const struct snr_elf_symbol *snr_elf_lookup(const struct snr_elf *elf, uint64_t addr);
/* The architecture as GDB names it ("riscv:rv64", "i386:x86-64",
 * "aarch64"), from e_machine and the class, or NULL for a machine snr does
 * not know. */
const char *snr_elf_gdb_arch(const struct snr_elf *elf);
/* "func+0x1c" or "0x10074" into buf. */
const char *snr_elf_symbolize(const struct snr_elf *elf, uint64_t addr, char *buf, size_t len);

#endif
