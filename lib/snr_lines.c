/*
 * snr_lines.c: pc -> file, line, function and inline chain through
 * elfutils' libdwfl (see snr_lines.h for the attribution rule). One Dwfl
 * session holds every object at its bias; results are cached per pc in an
 * open-addressing table whose entries point at places allocated once each
 * (a place and its frames in one block), so returned pointers stay valid.
 */
#include "snr_lines.h"

#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <elfutils/libdwfl.h>
#include <fcntl.h>
#include <gelf.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "snr_line_pack.h"
#include "snr_output.h"
#include "snr_util.h"

struct cache_slot {
	uint64_t pc;
	const struct snr_place *place; /* NULL: looked up, no line */
	bool used;
};

/* A module's compile units by address range. libdw's own lookup
 * (dwarf_addrdie, through .debug_aranges) refuses the RISC-V toolchain's
 * ELFs ("invalid DWARF": picolibc's and libgcc's aranges), so the index is
 * built from each CU's DW_AT_ranges / low_pc-high_pc (dwarf_ranges). */
struct cu_range {
	uint64_t lo, hi; /* [lo, hi) in the module's DWARF addresses */
	Dwarf_Off die_off;
};

struct module_index {
	Dwfl_Module *mod;
	Dwarf *dw;
	Dwarf_Addr bias;
	struct cu_range *r;
	size_t n;
};

struct snr_lines {
	Dwfl *dwfl;
	struct module_index *mods;
	size_t nmods;
	bool have_lines;
	struct cache_slot *slots;
	size_t nslots, nused;
	struct snr_place **places; /* every allocated place, to free */
	size_t nplaces, capplaces;
	struct snr_line_pack *pack; /* the lines the trace carries (lib/snr_line_pack.h), NULL: none */
};

static char *debuginfo_path; /* libdwfl's default search path (NULL) */

static const Dwfl_Callbacks dwfl_callbacks = {
	.find_elf = dwfl_build_id_find_elf,
	.find_debuginfo = dwfl_standard_find_debuginfo,
	.section_address = dwfl_offline_section_address,
	.debuginfo_path = &debuginfo_path,
};

struct snr_lines *snr_lines_new(void)
{
	struct snr_lines *l = snr_xcalloc(1, sizeof(*l));
	l->dwfl = dwfl_begin(&dwfl_callbacks);
	if (!l->dwfl) {
		free(l);
		return NULL;
	}
	return l;
}

void snr_lines_free(struct snr_lines *l)
{
	if (!l)
		return;
	dwfl_end(l->dwfl);
	for (size_t i = 0; i < l->nmods; i++)
		free(l->mods[i].r);
	free(l->mods);
	for (size_t i = 0; i < l->nplaces; i++)
		free(l->places[i]);
	free(l->places);
	free(l->slots);
	snr_line_pack_free(l->pack);
	free(l);
}

static void hex_of(const unsigned char *bits, int n, char *hex, size_t len)
{
	size_t k = 0;
	for (int i = 0; i < n && k + 3 <= len; i++)
		k += (size_t)snprintf(hex + k, len - k, "%02x", bits[i]);
	if (len)
		hex[k < len ? k : len - 1] = 0;
}

int snr_elf_build_id(const char *path, char *hex, size_t len)
{
	elf_version(EV_CURRENT);
	int fd = open(path, O_RDONLY);
	if (fd < 0)
		return -1;
	int rc = -1;
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	const void *bits = NULL;
	ssize_t n = e ? dwelf_elf_gnu_build_id(e, &bits) : -1;
	if (n > 0 && (size_t)n * 2 + 1 <= len) {
		hex_of(bits, (int)n, hex, len);
		rc = 0;
	}
	if (e)
		elf_end(e);
	close(fd);
	return rc;
}

int snr_lines_add(struct snr_lines *l, const char *path, uint64_t bias, const char *expected_build_id, char *err,
		  size_t errlen)
{
	if (access(path, R_OK)) {
		snr_fmt(err, errlen, "%s: cannot read the program's ELF", path);
		return -1;
	}
	char have[129];
	if (expected_build_id && expected_build_id[0]) {
		if (snr_elf_build_id(path, have, sizeof(have))) {
			snr_fmt(err, errlen, "%s has no build-id; the recorded one had %s: not the same file", path,
				expected_build_id);
			return -1;
		}
		if (strcmp(have, expected_build_id)) {
			snr_fmt(err, errlen, "%s has build-id %s; the recorded one had %s: not the same build", path,
				have, expected_build_id);
			return -1;
		}
	}
	snr_output_input(path);
	dwfl_report_begin_add(l->dwfl);
	Dwfl_Module *m = dwfl_report_elf(l->dwfl, path, path, -1, bias, false);
	dwfl_report_end(l->dwfl, NULL, NULL);
	if (!m) {
		snr_fmt(err, errlen, "%s: %s", path, dwfl_errmsg(-1));
		return -1;
	}
	Dwarf_Addr dbias;
	if (dwfl_module_getdwarf(m, &dbias))
		l->have_lines = true;
	/* earlier lookups may have answered "no line" for this range */
	for (size_t i = 0; i < l->nslots; i++)
		if (l->slots[i].used && !l->slots[i].place)
			l->slots[i].used = false, l->nused--;
	return 0;
}

struct Dwfl *snr_lines_dwfl(struct snr_lines *l) { return l->dwfl; }

bool snr_lines_have_lines(const struct snr_lines *l)
{
	return l && (l->have_lines || l->pack);
}

bool snr_lines_is_system_file(const char *path)
{
	if (!path)
		return true;
	static const char *const prefixes[] = {"/usr/", "/lib/", "/lib64/", "/opt/"};
	for (size_t i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (!strncmp(path, prefixes[i], strlen(prefixes[i])))
			return true;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	return !strcmp(base, "ta1.h");
}

static bool is_function_scope(Dwarf_Die *d)
{
	int tag = dwarf_tag(d);
	return tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine;
}

/* The file a DW_AT_call_file index names in cu's file table. */
static const char *call_file(Dwarf_Die *cu, Dwarf_Die *inl)
{
	Dwarf_Attribute a;
	Dwarf_Word idx;
	Dwarf_Files *files;
	size_t nfiles;
	if (!dwarf_attr(inl, DW_AT_call_file, &a) || dwarf_formudata(&a, &idx) ||
	    dwarf_getsrcfiles(cu, &files, &nfiles) || idx >= nfiles)
		return NULL;
	return dwarf_filesrc(files, idx, NULL, NULL);
}

static unsigned call_line(Dwarf_Die *inl)
{
	Dwarf_Attribute a;
	Dwarf_Word v;
	if (!dwarf_attr(inl, DW_AT_call_line, &a) || dwarf_formudata(&a, &v))
		return 0;
	return (unsigned)v;
}

#define MAX_FRAMES 32

static int cmp_range(const void *a, const void *b)
{
	const struct cu_range *x = a, *y = b;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

static const struct module_index *module_of(struct snr_lines *l, Dwfl_Module *m)
{
	for (size_t i = 0; i < l->nmods; i++)
		if (l->mods[i].mod == m)
			return &l->mods[i];
	l->mods = snr_xrealloc(l->mods, (l->nmods + 1) * sizeof(*l->mods));
	struct module_index *mi = &l->mods[l->nmods++];
	*mi = (struct module_index){.mod = m};
	mi->dw = dwfl_module_getdwarf(m, &mi->bias);
	size_t cap = 0;
	Dwarf_Off off = 0, next;
	size_t hsize;
	while (mi->dw && dwarf_nextcu(mi->dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu;
		if (dwarf_offdie(mi->dw, off + hsize, &cu)) {
			Dwarf_Addr base, lo, hi;
			ptrdiff_t it = 0;
			while ((it = dwarf_ranges(&cu, it, &base, &lo, &hi)) > 0) {
				if (mi->n == cap) {
					cap = cap ? 2 * cap : 64;
					mi->r = snr_xrealloc(mi->r, cap * sizeof(*mi->r));
				}
				mi->r[mi->n++] = (struct cu_range){lo, hi, off + hsize};
			}
		}
		off = next;
	}
	snr_qsort(mi->r, mi->n, sizeof(*mi->r), cmp_range); /* none for a module with no compile-unit ranges */
	return mi;
}

/* The compile unit holding addr (a DWARF address), or false. */
static bool cu_of(const struct module_index *mi, uint64_t addr, Dwarf_Die *cu)
{
	size_t lo = 0, hi = mi->n;
	while (lo < hi) { /* first range starting above addr */
		size_t mid = (lo + hi) / 2;
		if (mi->r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t i = lo; i-- > 0;) /* ranges of different CUs may nest (rare) */
		if (addr < mi->r[i].hi)
			return dwarf_offdie(mi->dw, mi->r[i].die_off, cu) != NULL;
	return false;
}

static struct snr_place *lookup(struct snr_lines *l, uint64_t pc)
{
	Dwfl_Module *m = dwfl_addrmodule(l->dwfl, pc);
	if (!m)
		return NULL;
	const struct module_index *mi = module_of(l, m);
	Dwarf_Die cu_mem, *cu = &cu_mem;
	if (!mi->dw || !cu_of(mi, pc - mi->bias, cu))
		return NULL;
	Dwarf_Line *dl = dwarf_getsrc_die(cu, pc - mi->bias);
	int lineno = 0;
	const char *file = dl ? dwarf_linesrc(dl, NULL, NULL) : NULL;
	if (!file || dwarf_lineno(dl, &lineno))
		return NULL;
	struct snr_lines_frame fr[MAX_FRAMES];
	unsigned n = 0;
	fr[0] = (struct snr_lines_frame){.file = file, .line = (unsigned)(lineno > 0 ? lineno : 0)};
	/* dwarf_getscopes follows an inlined instance into its abstract
	 * definition; the chain of calls is the innermost scope's physical
	 * parents (dwarf_getscopes_die), as eu-addr2line -i reads it. */
	Dwarf_Die *scopes = NULL, inner;
	int nscopes = dwarf_getscopes(cu, pc - mi->bias, &scopes);
	if (nscopes > 0) {
		inner = scopes[0];
		free(scopes);
		scopes = NULL;
		nscopes = dwarf_getscopes_die(&inner, &scopes);
	}
	for (int i = 0; i < nscopes && n < MAX_FRAMES; i++) {
		if (!is_function_scope(&scopes[i]))
			continue;
		fr[n].function = dwarf_diename(&scopes[i]);
		n++;
		if (dwarf_tag(&scopes[i]) != DW_TAG_inlined_subroutine || n == MAX_FRAMES)
			break;
		fr[n] = (struct snr_lines_frame){.file = call_file(cu, &scopes[i]), .line = call_line(&scopes[i])};
	}
	free(scopes);
	if (n == 0) { /* a line without a scope (assembly): name it by its symbol */
		GElf_Sym sym;
		fr[0].function = dwfl_module_addrsym(m, pc, &sym, NULL);
		n = 1;
	}
	struct snr_place *p = snr_xcalloc(1, sizeof(*p) + n * sizeof(fr[0]));
	struct snr_lines_frame *frames = (struct snr_lines_frame *)(p + 1);
	memcpy(frames, fr, n * sizeof(fr[0]));
	p->frames = frames;
	p->nframes = n;
	unsigned at = 0;
	while (at < n && snr_lines_is_system_file(frames[at].file))
		at++;
	if (at == n)
		at = 0;
	p->file = frames[at].file;
	p->line = frames[at].line;
	p->function = frames[at].function;
	if (l->nplaces == l->capplaces) {
		l->capplaces = l->capplaces ? 2 * l->capplaces : 256;
		l->places = snr_xrealloc(l->places, l->capplaces * sizeof(*l->places));
	}
	l->places[l->nplaces++] = p;
	return p;
}

static size_t slot_of(const struct snr_lines *l, uint64_t pc)
{
	uint64_t h = pc * 0x9e3779b97f4a7c15ull;
	size_t i = (size_t)(h >> 20) & (l->nslots - 1);
	while (l->slots[i].used && l->slots[i].pc != pc)
		i = (i + 1) & (l->nslots - 1);
	return i;
}

const struct snr_place *snr_lines_find(struct snr_lines *l, uint64_t pc)
{
	if (!l || (!l->have_lines && !l->pack))
		return NULL;
	if (l->nslots && l->slots[slot_of(l, pc)].used)
		return l->slots[slot_of(l, pc)].place;
	if (2 * (l->nused + 1) > l->nslots) {
		struct cache_slot *old = l->slots;
		size_t nold = l->nslots;
		l->nslots = nold ? 2 * nold : 1024;
		l->slots = snr_xcalloc(l->nslots, sizeof(*l->slots));
		for (size_t i = 0; i < nold; i++)
			if (old[i].used)
				l->slots[slot_of(l, old[i].pc)] = old[i];
		free(old);
	}
	const struct snr_place *p = l->have_lines ? lookup(l, pc) : NULL;
	if (!p && l->pack) /* the ELF is gone or rebuilt: the lines the trace carries */
		p = snr_line_pack_find(l->pack, pc);
	struct cache_slot *s = &l->slots[slot_of(l, pc)];
	*s = (struct cache_slot){.pc = pc, .place = p, .used = true};
	l->nused++;
	return p;
}

static const char *display_file(const char *file)
{
	static char cwd[PATH_MAX + 1];
	static bool have_cwd;
	if (!file)
		return "?";
	if (!have_cwd) {
		if (getcwd(cwd, sizeof(cwd) - 1))
			strcat(cwd, "/");
		else
			cwd[0] = 0;
		have_cwd = true;
	}
	size_t n = strlen(cwd);
	if (n > 1 && !strncmp(file, cwd, n))
		return file + n;
	return file;
}

const char *snr_place_text(const struct snr_place *p, char *buf, size_t len)
{
	if (p->function)
		snprintf(buf, len, "%s:%u (%s)", display_file(p->file), p->line, p->function);
	else
		snprintf(buf, len, "%s:%u", display_file(p->file), p->line);
	return buf;
}

const char *snr_place_short(const struct snr_place *p, char *buf, size_t len)
{
	const char *base = p->file ? strrchr(p->file, '/') : NULL;
	base = base ? base + 1 : p->file ? p->file : "?";
	if (p->function)
		snprintf(buf, len, "%s:%u (%s)", base, p->line, p->function);
	else
		snprintf(buf, len, "%s:%u", base, p->line);
	return buf;
}

static json_t *frame_json(const char *file, unsigned line, const char *function)
{
	json_t *o = json_object();
	json_object_set_new(o, "file", json_string(file ? file : "?"));
	json_object_set_new(o, "line", json_integer(line));
	if (function)
		json_object_set_new(o, "function", json_string(function));
	return o;
}

json_t *snr_place_json(const struct snr_place *p)
{
	json_t *o = frame_json(p->file, p->line, p->function);
	if (p->nframes > 1) {
		json_t *a = json_array();
		for (unsigned i = 0; i < p->nframes; i++)
			json_array_append_new(a, frame_json(p->frames[i].file, p->frames[i].line, p->frames[i].function));
		json_object_set_new(o, "inlined", a);
	}
	return o;
}

static const char *elf_override;

void snr_lines_set_elf(const char *path)
{
	elf_override = path;
}

const char *snr_lines_elf(void)
{
	return elf_override;
}

/* Says msg on stderr unless this process said it already; with carried
 * lines (carried: the file they came from), a note that they answer. */
static void warn_once(const char *msg, const char *carried)
{
	static char **said;
	static size_t nsaid;
	for (size_t i = 0; i < nsaid; i++)
		if (!strcmp(said[i], msg))
			return;
	said = snr_xrealloc(said, (nsaid + 1) * sizeof(*said));
	said[nsaid++] = snr_xstrdup(msg);
	if (carried)
		fprintf(stderr, "snr: note: lines from %s: %s\n", carried, msg);
	else
		snr_warn("%s; answers name symbols, not source lines (--elf PROG gives the program)", msg);
}

static int add_found(struct snr_lines *l, const char *path, uint64_t bias, const char *build_id,
		     const char *near_path, bool quiet)
{
	char err[1024];
	if (access(path, R_OK) && near_path) { /* moved with the trace? */
		const char *base = strrchr(path, '/');
		const char *dir_end = strrchr(near_path, '/');
		if (base && dir_end) {
			char alt[PATH_MAX];
			snprintf(alt, sizeof(alt), "%.*s/%s", (int)(dir_end - near_path), near_path, base + 1);
			if (!access(alt, R_OK))
				path = alt;
		} else if (base && !access(base + 1, R_OK))
			path = base + 1;
	}
	if (snr_lines_add(l, path, bias, build_id, err, sizeof(err))) {
		if (!quiet)
			warn_once(err, l->pack ? (near_path ? near_path : "the trace") : NULL);
		return -1;
	}
	return 0;
}

static int count_module(Dwfl_Module *m, void **user, const char *name, Dwarf_Addr start, void *arg)
{
	(void)m, (void)user, (void)name, (void)start, (void)arg;
	return DWARF_CB_ABORT; /* one is enough */
}

struct snr_lines *snr_lines_open_meta(const char *meta_json, const char *near_path)
{
	return snr_lines_open_meta_pack(meta_json, near_path, NULL, false);
}

struct snr_lines *snr_lines_open_meta_pack(const char *meta_json, const char *near_path, struct snr_line_pack *pack,
					   bool quiet)
{
	json_t *m = meta_json ? json_loads(meta_json, 0, NULL) : NULL;
	json_t *objs = json_object_get(m, "objects");
	const char *elf = json_string_value(json_object_get(m, "elf"));
	struct snr_lines *l = NULL;
	if (!json_array_size(objs) && !elf && !elf_override && !pack)
		goto done;
	l = snr_lines_new();
	if (!l)
		goto done;
	l->pack = pack;
	pack = NULL;
	snr_line_pack_publish(l->pack);
	if (json_array_size(objs)) {
		size_t i;
		json_t *o;
		json_array_foreach(objs, i, o) {
			const char *path = json_string_value(json_object_get(o, "path"));
			if (i == 0 && elf_override)
				path = elf_override;
			if (!path)
				continue;
			add_found(l, path, (uint64_t)json_integer_value(json_object_get(o, "bias")),
				  json_string_value(json_object_get(o, "build_id")), near_path, quiet);
		}
	} else if (elf || elf_override) {
		add_found(l, elf_override ? elf_override : elf, 0, NULL, near_path, quiet);
	}
	if (!l->pack && !dwfl_getmodules(l->dwfl, count_module, NULL, 0)) { /* nothing added */
		snr_lines_free(l);
		l = NULL;
	}
done:
	snr_line_pack_free(pack);
	json_decref(m);
	return l;
}

const char *snr_lines_where(struct snr_lines *l, uint64_t pc, const char *sym, char *buf, size_t len)
{
	const struct snr_place *p = snr_lines_find(l, pc);
	if (p)
		return snr_place_text(p, buf, len);
	snprintf(buf, len, "%s", sym);
	return buf;
}

json_t *snr_lines_source_json(struct snr_lines *l, uint64_t pc, const char *sym)
{
	const struct snr_place *p = snr_lines_find(l, pc);
	if (p)
		return snr_place_json(p);
	json_t *o = json_object();
	json_object_set_new(o, "function", json_string(sym));
	return o;
}

size_t snr_lines_code(struct snr_lines *l, uint64_t pc, uint8_t *buf, size_t len)
{
	Dwfl_Module *m = l ? dwfl_addrmodule(l->dwfl, pc) : NULL;
	Dwarf_Addr bias;
	Elf *e = m ? dwfl_module_getelf(m, &bias) : NULL;
	if (!e)
		return l ? snr_line_pack_code(l->pack, pc, buf, len) : 0;
	uint64_t addr = pc - bias;
	Elf_Scn *scn = NULL;
	while ((scn = elf_nextscn(e, scn))) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_PROGBITS || !(sh.sh_flags & SHF_ALLOC) ||
		    addr < sh.sh_addr || addr >= sh.sh_addr + sh.sh_size)
			continue;
		Elf_Data *d = elf_getdata(scn, NULL);
		if (!d || !d->d_buf)
			return 0;
		size_t off = (size_t)(addr - sh.sh_addr), n = sh.sh_size - off < len ? sh.sh_size - off : len;
		if (off + n > d->d_size)
			return 0;
		memcpy(buf, (const uint8_t *)d->d_buf + off, n);
		return n;
	}
	return 0;
}
