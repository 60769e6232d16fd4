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

#include "lib/snr_line_sites.h"
#include "lib/snr_lines.h"
#include "lib/snr_util.h"
#include "recorder/record.h"

int snr_breakpoint_parse(const char *spec, struct snr_bp_spec *bs, char *err, size_t errlen)
{
	memset(bs, 0, sizeof(*bs));
	if (spec && snr_line_spec_parse(spec, bs->file, sizeof(bs->file), &bs->line))
		return 0;
	char buf[256];
	uint64_t off = 0;
	char *plus = NULL;
	if (spec && *spec && strlen(spec) < sizeof(buf)) {
		memcpy(buf, spec, strlen(spec) + 1);
		plus = strrchr(buf, '+');
	} else {
		buf[0] = 0;
	}
	if (plus) {
		*plus = 0;
		if (!snr_parse_u64(plus + 1, &off, false))
			buf[0] = 0;
	}
	if (!buf[0]) {
		snr_fmt(err, errlen,
			"--breakpoint '%s': expected FILE:LINE, SYMBOL, 0xADDRESS, SYMBOL+OFFSET or 0xADDRESS+OFFSET",
			spec ? spec : "");
		return -1;
	}
	uint64_t a;
	if ((buf[0] >= '0' && buf[0] <= '9') && snr_parse_u64(buf, &a, false)) {
		bs->value = a + off;
		return 0;
	}
	snprintf(bs->sym, sizeof(bs->sym), "%s", buf);
	bs->value = off;
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

/* FILE:LINE through the objects' line tables: the first site (by address)
 * of the line; several are named on stderr, with the one used. */
static int resolve_line(const char *spec, const struct snr_bp_spec *bs, const struct loaded_obj *objs, size_t nobjs,
			uint64_t *bp, char *err, size_t errlen)
{
	struct snr_lines *l = snr_lines_new();
	struct snr_line_sites ls = {0};
	char why[600];
	int rc = -1;
	if (!l) {
		snr_fmt(err, errlen, "--breakpoint %s: cannot start libdwfl", spec);
		return -1;
	}
	if (!nobjs) {
		snr_fmt(err, errlen, "--breakpoint %s: no program to read line tables from: give --elf PROG", spec);
		goto out;
	}
	for (size_t i = 0; i < nobjs; i++)
		if (snr_lines_add(l, objs[i].elf->path, objs[i].bias, NULL, why, sizeof(why)))
			snr_warn("record: %s", why);
	if (snr_line_sites_find(l, bs->file, bs->line, &ls, why, sizeof(why))) {
		snr_fmt(err, errlen, "--breakpoint %s: %s in %s", spec, why, objs[0].elf->path);
		goto out;
	}
	if (!ls.nsites) {
		char near[80] = "";
		if (ls.before && ls.after)
			snr_fmt(near, sizeof(near), "the nearest lines with code are %u and %u", ls.before, ls.after);
		else if (ls.before || ls.after)
			snr_fmt(near, sizeof(near), "the nearest line with code is %u", ls.before ? ls.before : ls.after);
		snr_fmt(err, errlen, "--breakpoint %s: no code at line %u of %s; %s", spec, bs->line, ls.file, near);
		goto out;
	}
	*bp = ls.sites[0].addr;
	if (ls.nsites > 1) {
		fprintf(stderr, "snr: record: --breakpoint %s has code in %zu functions; the window starts at the first:\n",
			spec, ls.nsites);
		for (size_t i = 0; i < ls.nsites; i++)
			fprintf(stderr, "  0x%llx in %s%s%s\n", (unsigned long long)ls.sites[i].addr,
				ls.sites[i].function ? ls.sites[i].function : "(no function)",
				ls.sites[i].inlined ? " (inlined)" : "", i ? "" : "  <- used (--breakpoint 0xADDR picks another)");
	} else {
		fprintf(stderr, "snr: record: --breakpoint %s is at 0x%llx in %s%s\n", spec, (unsigned long long)*bp,
			ls.sites[0].function ? ls.sites[0].function : "(no function)", ls.sites[0].inlined ? " (inlined)" : "");
	}
	rc = 0;
out:
	snr_line_sites_free(&ls);
	snr_lines_free(l);
	return rc;
}

int snr_breakpoint_resolve(const char *spec, const struct snr_bp_spec *bs, const struct loaded_obj *objs,
			   size_t nobjs, uint64_t *bp, char *err, size_t errlen)
{
	*bp = bs->value;
	if (bs->line)
		return resolve_line(spec, bs, objs, nobjs, bp, err, errlen);
	if (!bs->sym[0])
		return 0;
	const struct snr_elf_symbol *s = NULL;
	size_t which = 0;
	for (size_t i = 0; i < nobjs && !s; i++)
		if ((s = snr_elf_find(objs[i].elf, bs->sym)))
			which = i;
	if (!s) {
		snr_fmt(err, errlen, "--breakpoint %s: no symbol '%s' in %s", spec, bs->sym,
			nobjs ? objs[0].elf->path : "(no symbols: give --elf PROG)");
		return -1;
	}
	if (s->is_object) {
		/* a breakpoint there is never hit: the program would run to its end */
		snr_fmt(err, errlen,
			"--breakpoint %s: '%s' is a data object (%llu bytes at 0x%llx in %s), not code: give a function, "
			"FILE:LINE or a code address",
			spec, bs->sym, (unsigned long long)s->size, (unsigned long long)(s->addr + objs[which].bias),
			objs[which].elf->path);
		return -1;
	}
	*bp += s->addr + objs[which].bias;
	return 0;
}
