/*
 * line_sites.c: lib/snr_line_sites on a program, for comparison with gdb.
 * usage: line_sites ELF FILE:LINE...
 * Prints per spec one line: "FILE:LINE ADDR FUNCTION NSITES ENTRY OWN" (the
 * first site, the one `snr record --breakpoint` uses; the count of sites;
 * ENTRY 1 when ADDR is a function symbol's address; OWN 1 when the line
 * table's last row at ADDR is the line's own, 0 when it is inlined code's),
 * "FILE:LINE none BEFORE AFTER" for a line without code, or
 * "FILE:LINE error TEXT".
 */
#include <stdio.h>

#include "lib/snr_elf.h"
#include "lib/snr_line_sites.h"
#include "lib/snr_lines.h"

int main(int argc, char **argv)
{
	if (argc < 3) {
		fprintf(stderr, "usage: line_sites ELF FILE:LINE...\n");
		return 2;
	}
	struct snr_lines *l = snr_lines_new();
	char err[600], file[512];
	if (!l || snr_lines_add(l, argv[1], 0, NULL, err, sizeof(err))) {
		fprintf(stderr, "line_sites: %s\n", l ? err : "libdwfl");
		return 1;
	}
	struct snr_elf *elf = snr_elf_open(argv[1], err, sizeof(err));
	if (!elf) {
		fprintf(stderr, "line_sites: %s\n", err);
		return 1;
	}
	for (int i = 2; i < argc; i++) {
		unsigned line;
		struct snr_line_sites s;
		if (!snr_line_spec_parse(argv[i], file, sizeof(file), &line)) {
			printf("%s error not FILE:LINE\n", argv[i]);
			continue;
		}
		if (snr_line_sites_find(l, file, line, &s, err, sizeof(err))) {
			printf("%s error %s\n", argv[i], err);
			continue;
		}
		if (!s.nsites)
			printf("%s none %u %u\n", argv[i], s.before, s.after);
		else {
			const struct snr_elf_symbol *sym = snr_elf_lookup(elf, s.sites[0].addr);
			const struct snr_place *p = snr_lines_find(l, s.sites[0].addr);
			printf("%s 0x%llx %s %zu %d %d\n", argv[i], (unsigned long long)s.sites[0].addr,
			       s.sites[0].function ? s.sites[0].function : "?", s.nsites,
			       sym && sym->is_func && sym->addr == s.sites[0].addr,
			       p && p->nframes && p->frames[0].line == line);
		}
		snr_line_sites_free(&s);
	}
	snr_lines_free(l);
	snr_elf_free(elf);
	return 0;
}
