/*
 * snr_line_sites.c: where the code of a source line starts, so that
 * `snr record --breakpoint softmax.c:55` stops where `break softmax.c:55`
 * stops gdb. Every line table (elfutils libdw, each compile unit of each
 * object added to the snr_lines) is read once; the rows of the file at the
 * line that begin a statement (is_stmt) are grouped by the function their
 * code was compiled into, and each group's lowest address is a site. At -O2
 * a line's code is often split (a loop's test at its end, a hoisted load);
 * its first statement row in address order is where gdb puts the location
 * too. A line without rows is answered with the nearest lines that have
 * some, as a user then picks one. Cost: one pass over the line tables.
 */
#include "lib/snr_line_sites.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

struct walk {
	const char *want;
	unsigned line;
	char **files; /* distinct table file names that match want */
	size_t nfiles;
	uint64_t *addrs;
	size_t naddrs, cap;
	unsigned before, after;
};

/* want names path: equal, or path's end after a '/'. */
static bool names(const char *want, const char *path)
{
	size_t lw = strlen(want), lp = strlen(path);
	if (lw > lp)
		return false;
	if (lw == lp)
		return !strcmp(want, path);
	return path[lp - lw - 1] == '/' && !strcmp(path + lp - lw, want);
}

static int walk_module(Dwfl_Module *m, void **user, const char *name, Dwarf_Addr start, void *arg)
{
	(void)user, (void)name, (void)start;
	struct walk *w = arg;
	Dwarf_Addr bias;
	Dwarf *dw = dwfl_module_getdwarf(m, &bias);
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (dw && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		Dwarf_Lines *lines;
		size_t n;
		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_getsrclines(&cu, &lines, &n) == 0) {
			for (size_t i = 0; i < n; i++) {
				Dwarf_Line *dl = dwarf_onesrcline(lines, i);
				bool stmt = false, end = false;
				int lineno;
				Dwarf_Addr a;
				const char *file = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
				if (!file || dwarf_lineno(dl, &lineno) || dwarf_lineaddr(dl, &a) ||
				    dwarf_linebeginstatement(dl, &stmt) || dwarf_lineendsequence(dl, &end) || end ||
				    !stmt || lineno <= 0 || !names(w->want, file))
					continue;
				size_t k = 0;
				while (k < w->nfiles && strcmp(w->files[k], file))
					k++;
				if (k == w->nfiles) {
					w->files = snr_xrealloc(w->files, (w->nfiles + 1) * sizeof(*w->files));
					w->files[w->nfiles++] = snr_xstrdup(file);
				}
				unsigned ln = (unsigned)lineno;
				if (ln < w->line && ln > w->before)
					w->before = ln;
				if (ln > w->line && (!w->after || ln < w->after))
					w->after = ln;
				if (ln != w->line)
					continue;
				if (w->naddrs == w->cap) {
					w->cap = w->cap ? 2 * w->cap : 16;
					w->addrs = snr_xrealloc(w->addrs, w->cap * sizeof(*w->addrs));
				}
				w->addrs[w->naddrs++] = a + bias;
			}
		}
		off = next;
	}
	return DWARF_CB_OK;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int snr_line_sites_find(struct snr_lines *l, const char *file, unsigned line, struct snr_line_sites *out, char *err,
			size_t errlen)
{
	memset(out, 0, sizeof(*out));
	struct walk w = {.want = file, .line = line};
	dwfl_getmodules(snr_lines_dwfl(l), walk_module, &w, 0);
	int rc = -1;
	if (!w.nfiles) {
		snr_fmt(err, errlen, "no line table names a file %s (is the program built with -g?)", file);
		goto out;
	}
	if (w.nfiles > 1) {
		size_t o = 0;
		o += (size_t)snprintf(err, errlen, "%s names %zu files:", file, w.nfiles);
		for (size_t i = 0; i < w.nfiles && o < errlen; i++)
			o += (size_t)snprintf(err + o, errlen - o, "%s %s", i ? "," : "", w.files[i]);
		if (o < errlen)
			snprintf(err + o, errlen - o, "; give more of the path");
		goto out;
	}
	out->file = w.files[0];
	w.files[0] = NULL;
	out->before = w.before;
	out->after = w.after;
	snr_qsort(w.addrs, w.naddrs, sizeof(*w.addrs), cmp_u64);
	/* in address order, the first row of each function is its site */
	for (size_t i = 0; i < w.naddrs; i++) {
		const struct snr_place *p = snr_lines_find(l, w.addrs[i]);
		const char *fn = p && p->nframes ? p->frames[p->nframes - 1].function : NULL;
		bool seen = false;
		for (size_t k = 0; k < out->nsites && !seen; k++)
			seen = out->sites[k].function == fn || (fn && out->sites[k].function &&
								 !strcmp(out->sites[k].function, fn));
		if (seen)
			continue;
		out->sites = snr_xrealloc(out->sites, (out->nsites + 1) * sizeof(*out->sites));
		out->sites[out->nsites++] = (struct snr_line_site){
			.addr = w.addrs[i], .function = fn, .inlined = p && p->nframes > 1};
	}
	rc = 0;
out:
	for (size_t i = 0; i < w.nfiles; i++)
		free(w.files[i]);
	free(w.files);
	free(w.addrs);
	return rc;
}

void snr_line_sites_free(struct snr_line_sites *s)
{
	free(s->file);
	free(s->sites);
	memset(s, 0, sizeof(*s));
}

bool snr_line_spec_parse(const char *spec, char *file, size_t filelen, unsigned *line)
{
	const char *colon = spec ? strrchr(spec, ':') : NULL;
	uint64_t v;
	if (!colon || colon == spec || colon[-1] == ':' || !colon[1] || colon[1] < '0' || colon[1] > '9' ||
	    !snr_parse_u64(colon + 1, &v, false) || v == 0 || v > 0xffffffffu || (size_t)(colon - spec) >= filelen)
		return false;
	memcpy(file, spec, (size_t)(colon - spec));
	file[colon - spec] = 0;
	*line = (unsigned)v;
	return true;
}
