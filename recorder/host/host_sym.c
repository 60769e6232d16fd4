/*
 * host_sym.c: see host_sym.h. Files are opened once and their function
 * symbols kept sorted; a process with a few dozen libraries symbolizes its
 * stacks in well under a second.
 */
#include "host_sym.h"

#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_util.h"

struct sym {
	uint64_t addr, size;
	char *name;
};

struct segment {
	uint64_t offset, vaddr, filesz;
};

struct elf_file {
	char *path;
	int ok;
	struct sym *syms;
	size_t nsyms;
	struct segment *segs;
	size_t nsegs;
	char build_id[80];
};

struct mapping {
	uint64_t start, end, offset;
	struct elf_file *file;
};

struct snrh_symbolizer {
	struct mapping *maps;
	size_t nmaps;
	struct elf_file **files;
	size_t nfiles;
	struct sym *ksyms;
	size_t nksyms;
	int kloaded;
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
}

struct snrh_symbolizer *snrh_sym_new(void)
{
	elf_version(EV_CURRENT);
	return snr_xcalloc(1, sizeof(struct snrh_symbolizer));
}

static void free_syms(struct sym *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(s[i].name);
	free(s);
}

void snrh_sym_free(struct snrh_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nfiles; i++) {
		free_syms(s->files[i]->syms, s->files[i]->nsyms);
		free(s->files[i]->segs);
		free(s->files[i]->path);
		free(s->files[i]);
	}
	free(s->files);
	free(s->maps);
	free_syms(s->ksyms, s->nksyms);
	free(s);
}

static void load_elf(struct elf_file *f)
{
	int fd = open(f->path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return;
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	if (!e) {
		close(fd);
		return;
	}
	size_t nph = 0;
	elf_getphdrnum(e, &nph);
	f->segs = snr_xcalloc(nph ? nph : 1, sizeof(*f->segs));
	for (size_t i = 0; i < nph; i++) {
		GElf_Phdr ph;
		if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD)
			f->segs[f->nsegs++] = (struct segment){ph.p_offset, ph.p_vaddr, ph.p_filesz};
	}
	/* .symtab when present (unstripped), else .dynsym. */
	size_t cap = 0;
	for (int want = SHT_SYMTAB; want >= SHT_SYMTAB; want = (want == SHT_SYMTAB && !f->nsyms) ? SHT_DYNSYM : -1) {
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn))) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh))
				continue;
			if (sh.sh_type == SHT_NOTE && !f->build_id[0]) {
				Elf_Data *d = elf_getdata(scn, NULL);
				size_t off = 0, name_off, desc_off;
				GElf_Nhdr nh;
				while (d && (off = gelf_getnote(d, off, &nh, &name_off, &desc_off)) > 0) {
					if (nh.n_type == NT_GNU_BUILD_ID && nh.n_descsz <= 32) {
						const uint8_t *p = (const uint8_t *)d->d_buf + desc_off;
						for (size_t k = 0; k < nh.n_descsz; k++)
							sprintf(f->build_id + 2 * k, "%02x", p[k]);
					}
				}
			}
			if ((int)sh.sh_type != want)
				continue;
			Elf_Data *d = elf_getdata(scn, NULL);
			size_t n = sh.sh_entsize ? sh.sh_size / sh.sh_entsize : 0;
			for (size_t i = 0; d && i < n; i++) {
				GElf_Sym sy;
				if (!gelf_getsym(d, (int)i, &sy) || GELF_ST_TYPE(sy.st_info) != STT_FUNC || !sy.st_value)
					continue;
				const char *name = elf_strptr(e, sh.sh_link, sy.st_name);
				if (!name || !*name)
					continue;
				if (f->nsyms == cap) {
					cap = cap ? cap * 2 : 256;
					f->syms = snr_xrealloc(f->syms, cap * sizeof(*f->syms));
				}
				f->syms[f->nsyms++] = (struct sym){sy.st_value, sy.st_size, snr_xstrdup(name)};
			}
		}
	}
	qsort(f->syms, f->nsyms, sizeof(*f->syms), sym_cmp);
	f->ok = 1;
	elf_end(e);
	close(fd);
}

static struct elf_file *file_for(struct snrh_symbolizer *s, const char *path)
{
	for (size_t i = 0; i < s->nfiles; i++)
		if (!strcmp(s->files[i]->path, path))
			return s->files[i];
	struct elf_file *f = snr_xcalloc(1, sizeof(*f));
	f->path = snr_xstrdup(path);
	load_elf(f);
	s->files = snr_xrealloc(s->files, (s->nfiles + 1) * sizeof(*s->files));
	s->files[s->nfiles++] = f;
	return f;
}

int snrh_sym_snapshot(struct snrh_symbolizer *s, int pid)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", pid);
	FILE *fp = fopen(path, "r");
	if (!fp)
		return (int)s->nmaps;
	struct mapping *maps = NULL;
	size_t n = 0;
	char line[4096];
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long start, end, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &start, &end, perms, &off, &pos) < 4 || perms[2] != 'x')
			continue;
		char *file = line + pos;
		while (*file == ' ')
			file++;
		file[strcspn(file, "\n")] = 0;
		if (file[0] != '/')
			continue;
		maps = snr_xrealloc(maps, (n + 1) * sizeof(*maps));
		maps[n++] = (struct mapping){start, end, off, file_for(s, file)};
	}
	fclose(fp);
	if (n) {
		free(s->maps);
		s->maps = maps;
		s->nmaps = n;
	} else {
		free(maps);
	}
	return (int)s->nmaps;
}

static const struct sym *find_sym(const struct sym *v, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (v[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct sym *c = &v[lo - 1];
	/* Prefer sized symbols that contain addr; a size-0 symbol only if it is close. */
	if (c->size ? addr < c->addr + c->size : addr - c->addr < 4096)
		return c;
	return NULL;
}

int snrh_sym_user(struct snrh_symbolizer *s, uint64_t addr, const char **sym, const char **module, uint64_t *offset)
{
	*sym = NULL;
	*module = NULL;
	*offset = 0;
	for (size_t i = 0; i < s->nmaps; i++) {
		const struct mapping *m = &s->maps[i];
		if (addr < m->start || addr >= m->end)
			continue;
		*module = m->file->path;
		uint64_t file_off = addr - m->start + m->offset;
		*offset = file_off;
		for (size_t k = 0; k < m->file->nsegs; k++) {
			const struct segment *g = &m->file->segs[k];
			if (file_off < g->offset || file_off >= g->offset + g->filesz)
				continue;
			uint64_t vaddr = file_off - g->offset + g->vaddr;
			const struct sym *y = find_sym(m->file->syms, m->file->nsyms, vaddr);
			if (!y)
				return -1;
			*sym = y->name;
			*offset = vaddr - y->addr;
			return 0;
		}
		return -1;
	}
	return -1;
}

static void load_kallsyms(struct snrh_symbolizer *s)
{
	s->kloaded = 1;
	FILE *fp = fopen("/proc/kallsyms", "r");
	if (!fp)
		return;
	size_t cap = 0;
	char line[512];
	while (fgets(line, sizeof(line), fp)) {
		unsigned long long a;
		char type, name[256];
		if (sscanf(line, "%llx %c %255s", &a, &type, name) != 3 || !a)
			continue;
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			s->ksyms = snr_xrealloc(s->ksyms, cap * sizeof(*s->ksyms));
		}
		s->ksyms[s->nksyms++] = (struct sym){a, 0, snr_xstrdup(name)};
	}
	fclose(fp);
	qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), sym_cmp);
	for (size_t i = 0; i + 1 < s->nksyms; i++)
		s->ksyms[i].size = s->ksyms[i + 1].addr - s->ksyms[i].addr;
}

int snrh_sym_kernel(struct snrh_symbolizer *s, uint64_t addr, const char **sym, uint64_t *offset)
{
	if (!s->kloaded)
		load_kallsyms(s);
	const struct sym *y = s->nksyms ? find_sym(s->ksyms, s->nksyms, addr) : NULL;
	*sym = y ? y->name : NULL;
	*offset = y ? addr - y->addr : 0;
	return y ? 0 : -1;
}

json_t *snrh_sym_maps_json(struct snrh_symbolizer *s)
{
	json_t *a = json_array();
	for (size_t i = 0; i < s->nmaps; i++) {
		const struct mapping *m = &s->maps[i];
		json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:s, s:s}", "start", (json_int_t)m->start, "end",
						   (json_int_t)m->end, "offset", (json_int_t)m->offset, "path",
						   m->file->path, "build_id", m->file->build_id));
	}
	return a;
}
