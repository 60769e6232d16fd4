/*
 * snr_line_sites.h: the code of a source line, FILE:LINE, as a debugger
 * places a breakpoint there (lib/snr_line_sites.c).
 */
#ifndef SNR_LINE_SITES_H
#define SNR_LINE_SITES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/snr_lines.h"

/* One place the line's code starts: the lowest address of the line's
 * statement-start (is_stmt) rows in one function, as gdb's `break
 * FILE:LINE` puts one location per function (an inlined copy is its own). */
struct snr_line_site {
	uint64_t addr;
	const char *function; /* the function the code was compiled into; owned by the snr_lines */
	bool inlined;         /* the line's code at addr is inlined into that function */
};

struct snr_line_sites {
	char *file;                   /* the line table's name of the file matched */
	struct snr_line_site *sites;  /* by address */
	size_t nsites;
	unsigned before, after;       /* no code at the line: the nearest lines with code (0: none) */
};

/* The sites of file:line in the line tables of l's objects. file matches a
 * table's file name when equal to it or to its end after a '/' ("softmax.c",
 * "src/softmax.c", or the whole path). Returns 0 with out filled (nsites 0:
 * the file has no code at that line, before/after say the nearest lines
 * that have); -1 with err when no line table names the file, or when it
 * names several files (err lists them). snr_line_sites_free frees out. */
int snr_line_sites_find(struct snr_lines *l, const char *file, unsigned line, struct snr_line_sites *out, char *err,
			size_t errlen);
void snr_line_sites_free(struct snr_line_sites *s);

/* The "FILE:LINE" form of a breakpoint spec: a name, a colon, a line number
 * (1..), the name not ending in ':' (C++'s "ns::f" is a symbol). Returns
 * whether spec has that form, with file and line filled. */
bool snr_line_spec_parse(const char *spec, char *file, size_t filelen, unsigned *line);

#endif
