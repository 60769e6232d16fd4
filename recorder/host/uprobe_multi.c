/*
 * uprobe_multi.c: symbol offsets and uprobe_multi links (uprobe_multi.h).
 * libbpf 1.1 has no uprobe_multi attach, and the installed UAPI headers may
 * predate it, so the link is created with the bpf(2) system call and the
 * attribute laid out as in the kernel's include/uapi/linux/bpf.h (6.6).
 */
#include "uprobe_multi.h"

#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <unistd.h>

#ifndef BPF_LINK_CREATE
#define BPF_LINK_CREATE 28
#endif
#define SNRH_BPF_F_UPROBE_MULTI_RETURN 1u

bool snrh_uprobe_multi_supported(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 6);
}

/* SYM exactly, or SYM@VER / SYM@@VER. */
static bool sym_named(const char *name, const char *sym, size_t n)
{
	return !strncmp(name, sym, n) && (name[n] == 0 || name[n] == '@');
}

int snrh_func_offset(const char *path, const char *sym, uint64_t *off, char *err, size_t errlen)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	if (e && elf_kind(e) != ELF_K_ELF) {
		elf_end(e);
		e = NULL;
	}
	size_t n = strlen(sym);
	int found = 0; /* 2: global, 1: weak */
	for (int pass = 0; e && pass < 2 && found < 2; pass++) {
		if (pass == 1 && found) /* .symtab had it */
			break;
		Elf_Scn *scn = NULL;
		while ((scn = elf_nextscn(e, scn)) && found < 2) {
			GElf_Shdr sh;
			if (!gelf_getshdr(scn, &sh) || sh.sh_type != (pass ? SHT_DYNSYM : SHT_SYMTAB) || !sh.sh_entsize)
				continue;
			Elf_Data *d = elf_getdata(scn, NULL), *versym = NULL;
			size_t count = sh.sh_size / sh.sh_entsize;
			/* .dynsym names carry no version: .gnu.version marks the
			 * old ones of a symbol defined in several (hidden bit) */
			for (Elf_Scn *v = NULL; pass && (v = elf_nextscn(e, v));) {
				GElf_Shdr vh;
				if (gelf_getshdr(v, &vh) && vh.sh_type == SHT_GNU_versym && vh.sh_link == elf_ndxscn(scn))
					versym = elf_getdata(v, NULL);
			}
			for (size_t i = 0; d && i < count; i++) {
				GElf_Sym s;
				if (!gelf_getsym(d, (int)i, &s))
					break;
				int type = GELF_ST_TYPE(s.st_info), bind = GELF_ST_BIND(s.st_info);
				if ((type != STT_FUNC && type != STT_GNU_IFUNC) || s.st_shndx == SHN_UNDEF ||
				    s.st_shndx >= SHN_LORESERVE || !s.st_value)
					continue;
				const char *name = elf_strptr(e, sh.sh_link, s.st_name);
				if (!name || !sym_named(name, sym, n) || (name[n] == '@' && name[n + 1] != '@'))
					continue; /* SYM@OLD in .symtab: not the default version */
				GElf_Versym vs;
				if (versym && gelf_getversym(versym, (int)i, &vs) && (vs & 0x8000))
					continue;
				int rank = bind == STB_WEAK ? 1 : 2;
				if (rank <= found)
					continue;
				GElf_Shdr in;
				if (!gelf_getshdr(elf_getscn(e, s.st_shndx), &in))
					continue;
				/* virtual address -> file offset, through its section */
				*off = s.st_value - in.sh_addr + in.sh_offset;
				found = rank;
			}
		}
	}
	if (!e)
		snprintf(err, errlen, "%s is not an ELF file", path);
	else if (!found)
		snprintf(err, errlen, "no function '%s' in %s", sym, path);
	if (e)
		elf_end(e);
	close(fd);
	return found ? 0 : -1;
}

int snrh_uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
			     uint32_t cnt, bool ret)
{
	/* union bpf_attr's link_create for BPF_TRACE_UPROBE_MULTI */
	struct link_create_uprobe_multi {
		uint32_t prog_fd, target_fd, attach_type, flags;
		uint64_t path, offsets, ref_ctr_offsets, cookies;
		uint32_t cnt, uflags, pid, pad;
		uint8_t rest[64]; /* the rest of union bpf_attr, zero */
	} attr;
	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (uint32_t)prog_fd;
	attr.attach_type = SNRH_BPF_TRACE_UPROBE_MULTI;
	attr.path = (uint64_t)(uintptr_t)path;
	attr.offsets = (uint64_t)(uintptr_t)offsets;
	attr.cookies = (uint64_t)(uintptr_t)cookies;
	attr.cnt = cnt;
	attr.uflags = ret ? SNRH_BPF_F_UPROBE_MULTI_RETURN : 0;
	int fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, (unsigned)offsetof(struct link_create_uprobe_multi, pad));
	return fd < 0 ? -errno : fd;
}
