/*
 * breakpoint.c: where a window starts. The program's symbols (the --elf,
 * or a local process's executable and every object mapped at offset 0,
 * each with its load bias from /proc/PID/maps), and the --breakpoint spec
 * resolved against them to the address the recorder stops at.
 */
#include "recorder/breakpoint.h"

#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_util.h"
#include "recorder/record.h"

int snr_parse_breakpoint(const char *spec, char *sym, size_t symlen, uint64_t *value)
{
	if (!spec || !*spec)
		return -1;
	char buf[256];
	snprintf(buf, sizeof(buf), "%s", spec);
	uint64_t off = 0;
	char *plus = strrchr(buf, '+');
	if (plus) {
		*plus = 0;
		if (!snr_parse_u64(plus + 1, &off, false))
			return -1;
	}
	if (!buf[0])
		return -1;
	uint64_t a;
	if ((buf[0] >= '0' && buf[0] <= '9') && snr_parse_u64(buf, &a, false)) {
		sym[0] = 0;
		*value = a + off;
		return 0;
	}
	snprintf(sym, symlen, "%s", buf);
	*value = off;
	return 0;
}

/* ---- symbols: --elf, or the process's executable and mapped objects ------ */

/* Load bias of the object mapped from `path` in pid's address space. */
static int object_bias(int pid, const char *path, const struct snr_elf *elf, uint64_t *bias)
{
	char maps[64], line[PATH_MAX + 128];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	FILE *f = fopen(maps, "r");
	if (!f)
		return -1;
	uint64_t first_vaddr = UINT64_MAX;
	for (size_t i = 0; i < elf->nsegments; i++)
		if (elf->segments[i].vaddr < first_vaddr)
			first_vaddr = elf->segments[i].vaddr;
	int rc = -1;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[PATH_MAX];
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perms, &off, file) < 4)
			continue;
		if (strcmp(file, path) || off != 0)
			continue;
		*bias = lo - (first_vaddr & ~0xfffull);
		rc = 0;
		break;
	}
	fclose(f);
	return rc;
}

int snr_rec_load_symbols(const char *elf_path, int pid, struct loaded_obj **objs, size_t *nobjs, char *err,
			 size_t errlen)
{
	*objs = NULL;
	*nobjs = 0;
	if (elf_path) {
		struct snr_elf *e = snr_elf_open(elf_path, err, errlen);
		if (!e)
			return -1;
		*objs = snr_xcalloc(1, sizeof(**objs));
		(*objs)[0].elf = e;
		*nobjs = 1;
		if (pid > 0) { /* a PIE given with --elf: find where it is mapped */
			char exe[PATH_MAX], link[64];
			snprintf(link, sizeof(link), "/proc/%d/exe", pid);
			ssize_t n = readlink(link, exe, sizeof(exe) - 1);
			if (n > 0) {
				exe[n] = 0;
				uint64_t b;
				if (object_bias(pid, exe, e, &b) == 0)
					(*objs)[0].bias = b;
			}
		}
		return 0;
	}
	if (pid <= 0)
		return 0;
	/* The executable first, then every other object mapped at offset 0. */
	char maps[64], line[PATH_MAX + 128];
	snprintf(maps, sizeof(maps), "/proc/%d/maps", pid);
	FILE *f = fopen(maps, "r");
	if (!f) {
		snr_fmt(err, errlen, "%s: %s", maps, strerror(errno));
		return -1;
	}
	char exe[PATH_MAX] = "", link[64];
	snprintf(link, sizeof(link), "/proc/%d/exe", pid);
	ssize_t n = readlink(link, exe, sizeof(exe) - 1);
	if (n > 0)
		exe[n] = 0;
	char (*paths)[PATH_MAX] = NULL;
	size_t npaths = 0;
	while (fgets(line, sizeof(line), f)) {
		unsigned long long lo, hi, off;
		char perms[8], file[PATH_MAX];
		file[0] = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s %4095s", &lo, &hi, perms, &off, file) < 5)
			continue;
		if (file[0] != '/' || off != 0)
			continue;
		int seen = 0;
		for (size_t i = 0; i < npaths; i++)
			seen |= !strcmp(paths[i], file);
		if (seen)
			continue;
		paths = snr_xrealloc(paths, (npaths + 1) * sizeof(*paths));
		snprintf(paths[npaths++], PATH_MAX, "%s", file);
	}
	fclose(f);
	/* executable first */
	for (size_t i = 0; i < npaths; i++)
		if (!strcmp(paths[i], exe) && i) {
			char tmp[PATH_MAX];
			memcpy(tmp, paths[0], PATH_MAX);
			memcpy(paths[0], paths[i], PATH_MAX);
			memcpy(paths[i], tmp, PATH_MAX);
		}
	*objs = snr_xcalloc(npaths ? npaths : 1, sizeof(**objs));
	for (size_t i = 0; i < npaths; i++) {
		char e2[256];
		struct snr_elf *e = snr_elf_open(paths[i], e2, sizeof(e2));
		if (!e)
			continue;
		uint64_t b = 0;
		if (object_bias(pid, paths[i], e, &b)) {
			snr_elf_free(e);
			continue;
		}
		(*objs)[*nobjs].elf = e;
		(*objs)[*nobjs].bias = b;
		(*nobjs)++;
	}
	free(paths);
	return 0;
}

void snr_rec_free_symbols(struct loaded_obj *objs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		snr_elf_free(objs[i].elf);
	free(objs);
}

/* The symbol sym of the breakpoint spec, looked up in every object in order,
 * added with its object's load bias to *bp (the spec's offset). */
int snr_breakpoint_resolve(const char *spec, const char *sym, const struct loaded_obj *objs, size_t nobjs,
			   uint64_t *bp, char *err, size_t errlen)
{
	const struct snr_elf_symbol *s = NULL;
	size_t which = 0;
	for (size_t i = 0; i < nobjs && !s; i++)
		if ((s = snr_elf_find(objs[i].elf, sym)))
			which = i;
	if (!s) {
		snr_fmt(err, errlen, "--breakpoint %s: no symbol '%s' in %s", spec, sym,
			nobjs ? objs[0].elf->path : "(no symbols: give --elf PROG)");
		return -1;
	}
	*bp += s->addr + objs[which].bias;
	return 0;
}
