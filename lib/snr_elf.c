/*
 * snr_elf.c: see snr_elf.h. The file is read into memory once; segments
 * point into that copy, so a loaded program owns no other buffers.
 */
#include "snr_elf.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snr_output.h"
#include "snr_util.h"

static int read_file(const char *path, uint8_t **out, size_t *len, char *err, size_t errlen)
{
	int fd = open(path, O_RDONLY);
	if (fd < 0) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	struct stat st;
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		snr_fmt(err, errlen, "%s: not a regular file", path);
		close(fd);
		return -1;
	}
	snr_output_input(path);
	uint8_t *buf = snr_xmalloc((size_t)st.st_size + 1);
	size_t got = 0;
	while (got < (size_t)st.st_size) {
		ssize_t r = read(fd, buf + got, (size_t)st.st_size - got);
		if (r <= 0) {
			snr_fmt(err, errlen, "%s: read failed: %s", path, r < 0 ? strerror(errno) : "short file");
			free(buf);
			close(fd);
			return -1;
		}
		got += (size_t)r;
	}
	close(fd);
	*out = buf;
	*len = got;
	return 0;
}

static int cmp_sym(const void *a, const void *b)
{
	const struct snr_elf_symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return y->is_func - x->is_func;
}

static struct snr_elf *parse(struct snr_elf *e, char *err, size_t errlen);

struct snr_elf *snr_elf_open(const char *path, char *err, size_t errlen)
{
	struct snr_elf *e = snr_xcalloc(1, sizeof(*e));
	e->path = snr_xstrdup(path);
	if (read_file(path, &e->image, &e->image_size, err, errlen)) {
		snr_elf_free(e);
		return NULL;
	}
	return parse(e, err, errlen);
}

struct snr_elf *snr_elf_from_memory(const char *name, const uint8_t *bytes, size_t len, char *err, size_t errlen)
{
	struct snr_elf *e = snr_xcalloc(1, sizeof(*e));
	e->path = snr_xstrdup(name);
	e->image = snr_xmalloc(len ? len : 1);
	memcpy(e->image, bytes, len);
	e->image_size = len;
	return parse(e, err, errlen);
}

/* Parses e->image (named e->path); frees e on failure. */
static struct snr_elf *parse(struct snr_elf *e, char *err, size_t errlen)
{
	Elf *elf = NULL;
	const char *path = e->path;
	if (elf_version(EV_CURRENT) == EV_NONE) {
		snr_fmt(err, errlen, "libelf initialisation failed: %s", elf_errmsg(-1));
		goto fail;
	}
	elf = elf_memory((char *)e->image, e->image_size);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		snr_fmt(err, errlen, "%s: not an ELF file", path);
		goto fail;
	}
	GElf_Ehdr eh;
	if (!gelf_getehdr(elf, &eh)) {
		snr_fmt(err, errlen, "%s: bad ELF header: %s", path, elf_errmsg(-1));
		goto fail;
	}
	e->is64 = gelf_getclass(elf) == ELFCLASS64;
	e->machine = eh.e_machine;
	e->flags = eh.e_flags;
	e->entry = eh.e_entry;

	size_t nph;
	if (elf_getphdrnum(elf, &nph)) {
		snr_fmt(err, errlen, "%s: bad program headers: %s", path, elf_errmsg(-1));
		goto fail;
	}
	e->segments = snr_xcalloc(nph ? nph : 1, sizeof(*e->segments));
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(elf, (int)i, &ph)) {
			snr_fmt(err, errlen, "%s: program header %zu: %s", path, i, elf_errmsg(-1));
			goto fail;
		}
		if (ph.p_type != PT_LOAD || ph.p_memsz == 0)
			continue;
		if (ph.p_filesz > ph.p_memsz || ph.p_offset > e->image_size ||
		    ph.p_filesz > e->image_size - ph.p_offset) {
			snr_fmt(err, errlen, "%s: segment %zu lies outside the file", path, i);
			goto fail;
		}
		struct snr_elf_segment *s = &e->segments[e->nsegments++];
		s->vaddr = ph.p_vaddr;
		s->memsz = ph.p_memsz;
		s->filesz = ph.p_filesz;
		s->flags = ph.p_flags;
		s->data = e->image + ph.p_offset;
	}

	/* .symtab; a stripped shared library (Debian's libc) keeps only its
	 * exported symbols in .dynsym, which is then read instead. */
	size_t cap = 0;
	bool have_symtab = false;
	for (int pass = 0; pass < 2 && !have_symtab; pass++) {
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB))
			continue;
		have_symtab |= !pass;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !sh.sh_entsize)
			continue;
		size_t n = sh.sh_size / sh.sh_entsize;
		for (size_t i = 0; i < n; i++) {
			GElf_Sym sym;
			if (!gelf_getsym(d, (int)i, &sym))
				break;
			int type = GELF_ST_TYPE(sym.st_info);
			if ((type != STT_FUNC && type != STT_OBJECT && type != STT_NOTYPE) ||
			    sym.st_shndx == SHN_UNDEF || sym.st_shndx == SHN_ABS)
				continue;
			const char *name = elf_strptr(elf, sh.sh_link, sym.st_name);
			if (!name || !*name || name[0] == '$' || !strncmp(name, ".L", 2))
				continue;
			if (e->nsymbols == cap) {
				cap = cap ? cap * 2 : 64;
				e->symbols = snr_xrealloc(e->symbols, cap * sizeof(*e->symbols));
			}
			struct snr_elf_symbol *s = &e->symbols[e->nsymbols++];
			s->name = snr_xstrdup(name);
			s->addr = sym.st_value;
			s->size = sym.st_size;
			s->is_func = type == STT_FUNC;
			s->is_object = type == STT_OBJECT;
		}
	}
	}
	snr_qsort(e->symbols, e->nsymbols, sizeof(*e->symbols), cmp_sym);
	elf_end(elf);
	return e;
fail:
	if (elf)
		elf_end(elf);
	snr_elf_free(e);
	return NULL;
}

void snr_elf_free(struct snr_elf *e)
{
	if (!e)
		return;
	for (size_t i = 0; i < e->nsymbols; i++)
		free(e->symbols[i].name);
	free(e->symbols);
	free(e->segments);
	free(e->image);
	free(e->path);
	free(e);
}

const struct snr_elf_symbol *snr_elf_find(const struct snr_elf *e, const char *name)
{
	const struct snr_elf_symbol *best = NULL;
	for (size_t i = 0; i < e->nsymbols; i++)
		if (!strcmp(e->symbols[i].name, name)) {
			if (e->symbols[i].is_func)
				return &e->symbols[i];
			best = &e->symbols[i];
		}
	return best;
}

const struct snr_elf_symbol *snr_elf_lookup(const struct snr_elf *e, uint64_t addr)
{
	size_t lo = 0, hi = e->nsymbols;
	while (lo < hi) { /* first symbol with addr > target */
		size_t mid = (lo + hi) / 2;
		if (e->symbols[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) {
		const struct snr_elf_symbol *s = &e->symbols[i];
		if (addr < s->addr + (s->size ? s->size : 1) || (s->is_func && !s->size))
			return s;
		if (s->is_func) /* past the end of the nearest function */
			return NULL;
	}
	return NULL;
}

const char *snr_elf_symbolize(const struct snr_elf *e, uint64_t addr, char *buf, size_t len)
{
	const struct snr_elf_symbol *s = e ? snr_elf_lookup(e, addr) : NULL;
	if (!s)
		snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	else if (addr == s->addr)
		snprintf(buf, len, "%s", s->name);
	else
		snprintf(buf, len, "%s+0x%llx", s->name, (unsigned long long)(addr - s->addr));
	return buf;
}

const char *snr_elf_gdb_arch(const struct snr_elf *e)
{
	switch (e->machine) {
	case EM_RISCV: return e->is64 ? "riscv:rv64" : "riscv:rv32";
	case EM_X86_64: return "i386:x86-64";
	case EM_386: return "i386";
	case EM_AARCH64: return "aarch64";
	case EM_ARM: return "arm";
	default: return NULL;
	}
}
