/*
 * host_lines.c: where a host stack's frames are in the source. The host
 * trace's MAPS chunk names every object the process had mapped, with its
 * build-id; each one still on disk with that build-id is added to a
 * lib/snr_lines (elfutils libdwfl: the DWARF line tables, separate debug
 * files found the standard way) at its load bias, from the executable
 * mapping's address and file offset and the segment there (libelf). A frame other than the
 * innermost is a return address: its line is that of addr - 1, the call,
 * as perf and gdb place callers. Objects without DWARF (a libc without
 * its debug package) answer nothing, and their frames keep func+0x...
 */
#include "analyzer/host_lines.h"

#include <fcntl.h>
#include <gelf.h>
#include <jansson.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_lines.h"

/* The load bias of path mapped at start from file offset off: the PT_LOAD
 * segment whose page-aligned file offset is off lies at its page-aligned
 * vaddr plus the bias. -1 when none is. */
static int map_bias(const char *path, uint64_t start, uint64_t off, uint64_t *bias)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc = -1;
	if (fd < 0)
		return -1;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ, NULL);
	size_t n = 0;
	if (e && elf_getphdrnum(e, &n) == 0)
		for (size_t i = 0; i < n && rc; i++) {
			GElf_Phdr ph;
			if (gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD && (ph.p_offset & ~0xfffull) == off) {
				*bias = start - (ph.p_vaddr & ~0xfffull);
				rc = 0;
			}
		}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

struct snr_lines *snrh_lines_open(const struct snrh_trace *t)
{
	json_t *m;
	size_t i, added = 0;
	struct snr_lines *l = NULL;
	json_array_foreach(t->maps, i, m) {
		const char *path = json_string_value(json_object_get(m, "path"));
		const char *id = json_string_value(json_object_get(m, "build_id"));
		uint64_t start = (uint64_t)json_integer_value(json_object_get(m, "start")), bias;
		uint64_t off = (uint64_t)json_integer_value(json_object_get(m, "offset"));
		if (!path || path[0] != '/' || map_bias(path, start, off, &bias))
			continue;
		if (!l && !(l = snr_lines_new()))
			return NULL;
		char err[600];
		if (snr_lines_add(l, path, bias, id, err, sizeof(err)) == 0)
			added++;
	}
	if (l && !added) {
		snr_lines_free(l);
		l = NULL;
	}
	return l;
}

const char *snrh_frame_line(struct snr_lines *l, uint64_t addr, int caller_frame, char *buf, size_t len)
{
	buf[0] = 0;
	const struct snr_place *p = l && addr ? snr_lines_find(l, caller_frame ? addr - 1 : addr) : NULL;
	if (!p || !p->nframes || !p->frames[0].line)
		return buf;
	const char *file = p->frames[0].file, *base = strrchr(file, '/');
	snprintf(buf, len, " %s:%u", base ? base + 1 : file, p->frames[0].line);
	return buf;
}
