/*
 * host_sym.c: see host_sym.h. One Dwfl per recording: modules are reported
 * from /proc/PID/maps when it changes (libdwfl keeps a module's ELF, symbol
 * table and CFI across re-reports of the same range), the thread-state
 * callbacks are attached once and read whichever stack copy is being
 * unwound (s->cur).
 */
#include "host_sym.h"

#include <elfutils/libdwfl.h>
#include <dwarf.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <time.h>
#include <unistd.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_util.h"

/* A pc outside every module re-reads the maps (a library loaded since the
 * last read), at most this often. */
#define REFRESH_MIN_NS 2000000ull

struct sym {
	uint64_t addr, size;
	char *name;
};

struct mapping {
	uint64_t start, end, offset;
	char *path;
};

/* A module's PLT: the sections of stubs and the GOT slot -> symbol table. */
struct plt_reloc {
	uint64_t got;
	char *name; /* "SYMBOL@plt" */
};

struct plt_info {
	Dwfl_Module *mod;
	struct {
		uint64_t addr, size;
		const uint8_t *bytes;
	} secs[3];
	int nsecs;
	struct plt_reloc *relocs;
	size_t nrelocs;
};

struct snrh_symbolizer {
	int pid;
	Dwfl *dwfl;
	Dwfl_Callbacks callbacks;
	char *debuginfo_path;
	bool attached;
	char *maps_text;      /* the last /proc/PID/maps reported */
	struct mapping *maps; /* executable, file-backed */
	size_t nmaps;
	/* the vDSO image (the tracer's own) */
	uint8_t *vdso;
	size_t vdso_size;
	/* unwinding */
	const struct snrh_ustack *cur;
	uint32_t cur_tid;
	uint64_t read_top; /* above the highest word read from cur */
	bool ran_out;	   /* a read past the end of cur */
	uint64_t ran_out_at; /* the lowest such read */
	struct plt_info *plts;
	size_t nplts;
	/* kernel */
	struct sym *ksyms;
	size_t nksyms;
	int kloaded;
	uint64_t refreshed_ns; /* when the maps were last read */
	char name[512];	       /* the last user symbol, without its version suffix */
};

static int sym_cmp(const void *a, const void *b)
{
	const struct sym *x = a, *y = b;
	return x->addr < y->addr ? -1 : x->addr > y->addr;
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

/* Opens a module's ELF: files by path (libdwfl's own), [vdso] from a copy
 * of the tracer's own vDSO. The module's userdata is the symbolizer. */
static int find_elf(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base, char **file_name,
		    Elf **elfp)
{
	if (!strcmp(name, "[vdso]")) {
		struct snrh_symbolizer *s = *userdata;
		*file_name = NULL;
		*elfp = s && s->vdso ? elf_memory((char *)s->vdso, s->vdso_size) : NULL;
		return -1;
	}
	return dwfl_linux_proc_find_elf(mod, userdata, name, base, file_name, elfp);
}

static void load_own_vdso(struct snrh_symbolizer *s)
{
	FILE *fp = fopen("/proc/self/maps", "r");
	char line[512];
	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned long long a, b;
		if (strstr(line, "[vdso]") && sscanf(line, "%llx-%llx", &a, &b) == 2 &&
		    a == (unsigned long long)getauxval(AT_SYSINFO_EHDR)) {
			s->vdso_size = (size_t)(b - a);
			s->vdso = snr_xmalloc(s->vdso_size);
			memcpy(s->vdso, (const void *)(uintptr_t)a, s->vdso_size);
		}
	}
	if (fp)
		fclose(fp);
}

struct snrh_symbolizer *snrh_sym_new(int pid)
{
	elf_version(EV_CURRENT);
	struct snrh_symbolizer *s = snr_xcalloc(1, sizeof(*s));
	s->pid = pid;
	s->callbacks.find_elf = find_elf;
	s->callbacks.find_debuginfo = dwfl_standard_find_debuginfo;
	s->callbacks.section_address = dwfl_offline_section_address;
	s->callbacks.debuginfo_path = &s->debuginfo_path;
	s->dwfl = dwfl_begin(&s->callbacks);
	if (!s->dwfl) {
		free(s);
		return NULL;
	}
	load_own_vdso(s);
	return s;
}

static void free_syms(struct sym *v, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(v[i].name);
	free(v);
}

static void free_maps(struct mapping *m, size_t n)
{
	for (size_t i = 0; i < n; i++)
		free(m[i].path);
	free(m);
}

void snrh_sym_free(struct snrh_symbolizer *s)
{
	if (!s)
		return;
	dwfl_end(s->dwfl);
	for (size_t i = 0; i < s->nplts; i++) {
		for (size_t k = 0; k < s->plts[i].nrelocs; k++)
			free(s->plts[i].relocs[k].name);
		free(s->plts[i].relocs);
	}
	free(s->plts);
	free_maps(s->maps, s->nmaps);
	free(s->maps_text);
	free(s->vdso);
	free_syms(s->ksyms, s->nksyms);
	free(s);
}

static void report_one(struct snrh_symbolizer *s, const char *name, uint64_t lo, uint64_t hi)
{
	Dwfl_Module *m = dwfl_report_module(s->dwfl, name, lo, hi);
	void **userdata = NULL;
	if (m && dwfl_module_info(m, &userdata, NULL, NULL, NULL, NULL, NULL, NULL) && userdata)
		*userdata = s;
}

/* Reports the modules of a maps text to libdw, each file from its lowest
 * to its highest mapping (the first maps offset 0, which gives libdwfl the
 * load bias), and [vdso]; keeps the executable file mappings for the
 * trace's MAPS chunk. */
static void report_modules(struct snrh_symbolizer *s, const char *text)
{
	dwfl_report_begin(s->dwfl);
	free_maps(s->maps, s->nmaps);
	s->maps = NULL;
	s->nmaps = 0;
	char cur[4096] = "", line[4200];
	uint64_t lo = 0, hi = 0;
	FILE *fp = fmemopen((void *)text, strlen(text), "r");
	while (fp && fgets(line, sizeof(line), fp)) {
		unsigned long long a, b, off;
		char perms[8];
		int pos = 0;
		if (sscanf(line, "%llx-%llx %7s %llx %*s %*s%n", &a, &b, perms, &off, &pos) < 4 || !pos)
			continue;
		char *file = line + pos;
		while (*file == ' ')
			file++;
		file[strcspn(file, "\n")] = 0;
		if (cur[0] && strcmp(cur, file)) {
			report_one(s, cur, lo, hi);
			cur[0] = 0;
		}
		if (file[0] != '/' && strcmp(file, "[vdso]"))
			continue;
		if (!cur[0]) {
			snprintf(cur, sizeof(cur), "%s", file);
			lo = a;
		}
		hi = b;
		if (perms[2] == 'x') {
			s->maps = snr_xrealloc(s->maps, (s->nmaps + 1) * sizeof(*s->maps));
			s->maps[s->nmaps++] = (struct mapping){a, b, off, snr_xstrdup(file)};
		}
	}
	if (fp)
		fclose(fp);
	if (cur[0])
		report_one(s, cur, lo, hi);
	dwfl_report_end(s->dwfl, NULL, NULL);
}

static uint64_t mono_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* Re-reads the maps; true if they changed. */
static bool refresh_maps(struct snrh_symbolizer *s)
{
	char path[64];
	snprintf(path, sizeof(path), "/proc/%d/maps", s->pid);
	FILE *fp = fopen(path, "r");
	s->refreshed_ns = mono_ns();
	if (!fp)
		return false;
	struct snr_buf b = {0};
	char chunk[8192];
	size_t got;
	while ((got = fread(chunk, 1, sizeof(chunk), fp)) > 0)
		snr_buf_put(&b, chunk, got);
	fclose(fp);
	if (!b.len) { /* the process is gone: keep what we had */
		free(b.p);
		return false;
	}
	snr_buf_u8(&b, 0);
	if (s->maps_text && !strcmp(s->maps_text, (char *)b.p)) {
		free(b.p);
		return false;
	}
	free(s->maps_text);
	s->maps_text = (char *)b.p;
	report_modules(s, s->maps_text);
	return true;
}

int snrh_sym_snapshot(struct snrh_symbolizer *s)
{
	refresh_maps(s);
	return (int)s->nmaps;
}

bool snrh_sym_cover(struct snrh_symbolizer *s, const uint64_t *pcs, int n)
{
	for (int i = 0; i < n; i++)
		if (!dwfl_addrmodule(s->dwfl, i ? pcs[i] - 1 : pcs[i]))
			return mono_ns() - s->refreshed_ns >= REFRESH_MIN_NS && refresh_maps(s);
	return false;
}

/* ---- PLT entries ---- */

static int reloc_cmp(const void *a, const void *b)
{
	const struct plt_reloc *x = a, *y = b;
	return x->got < y->got ? -1 : x->got > y->got;
}

/* The module's PLT sections and its jump-slot and GLOB_DAT relocations,
 * loaded at first use. */
static struct plt_info *plt_of(struct snrh_symbolizer *s, Dwfl_Module *mod)
{
	for (size_t i = 0; i < s->nplts; i++)
		if (s->plts[i].mod == mod)
			return &s->plts[i];
	s->plts = snr_xrealloc(s->plts, (s->nplts + 1) * sizeof(*s->plts));
	struct plt_info *p = &s->plts[s->nplts++];
	memset(p, 0, sizeof(*p));
	p->mod = mod;
	Dwarf_Addr bias;
	Elf *e = dwfl_module_getelf(mod, &bias);
	size_t shstrndx;
	if (!e || elf_getshdrstrndx(e, &shstrndx))
		return p;
	size_t cap = 0;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		GElf_Shdr sh;
		if (!gelf_getshdr(scn, &sh))
			continue;
		const char *name = elf_strptr(e, shstrndx, sh.sh_name);
		if (name &&
		    (!strcmp(name, ".plt") || !strcmp(name, ".plt.sec") || !strcmp(name, ".plt.got")) &&
		    p->nsecs < 3) {
			Elf_Data *d = elf_getdata(scn, NULL);
			if (d && d->d_buf && d->d_size == sh.sh_size)
				p->secs[p->nsecs++] = (typeof(p->secs[0])){sh.sh_addr, sh.sh_size, d->d_buf};
		}
		if (sh.sh_type != SHT_RELA)
			continue;
		Elf_Scn *symscn = elf_getscn(e, sh.sh_link);
		GElf_Shdr symsh;
		Elf_Data *rd = elf_getdata(scn, NULL), *sd = symscn ? elf_getdata(symscn, NULL) : NULL;
		if (!rd || !sd || !gelf_getshdr(symscn, &symsh) || !sh.sh_entsize)
			continue;
		for (size_t k = 0; k < sh.sh_size / sh.sh_entsize; k++) {
			GElf_Rela r;
			GElf_Sym sy;
			if (!gelf_getrela(rd, (int)k, &r) || !GELF_R_SYM(r.r_info) ||
			    !gelf_getsym(sd, (int)GELF_R_SYM(r.r_info), &sy))
				continue;
			const char *sn = elf_strptr(e, symsh.sh_link, sy.st_name);
			if (!sn || !*sn)
				continue;
			if (p->nrelocs == cap) {
				cap = cap ? cap * 2 : 64;
				p->relocs = snr_xrealloc(p->relocs, cap * sizeof(*p->relocs));
			}
			size_t n = strlen(sn) + 5;
			char *full = snr_xmalloc(n);
			snprintf(full, n, "%s@plt", sn);
			p->relocs[p->nrelocs++] = (struct plt_reloc){r.r_offset, full};
		}
	}
	snr_qsort(p->relocs, p->nrelocs, sizeof(*p->relocs), reloc_cmp);
	return p;
}

/* "SYMBOL@plt" for an address (module-relative) in a PLT stub: the stub's
 * `jmp *disp(%rip)` names the GOT slot, whose relocation names the symbol.
 * "[plt]" for a stub without one (the lazy-binding PLT0). NULL outside. */
static const char *plt_name(struct snrh_symbolizer *s, Dwfl_Module *mod, uint64_t vaddr, uint64_t *offset)
{
	struct plt_info *p = plt_of(s, mod);
	for (int i = 0; i < p->nsecs; i++) {
		if (vaddr < p->secs[i].addr || vaddr >= p->secs[i].addr + p->secs[i].size)
			continue;
		uint64_t entry = p->secs[i].addr + ((vaddr - p->secs[i].addr) & ~15ull);
		const uint8_t *b = p->secs[i].bytes + (entry - p->secs[i].addr);
		size_t room = p->secs[i].addr + p->secs[i].size - entry;
		*offset = vaddr - entry;
		for (size_t k = 0; k + 6 <= room && k + 6 <= 16; k++) {
			if (b[k] != 0xff || b[k + 1] != 0x25)
				continue;
			int32_t disp;
			memcpy(&disp, b + k + 2, 4);
			uint64_t got = entry + k + 6 + (uint64_t)(int64_t)disp;
			size_t lo = 0, hi = p->nrelocs;
			while (lo < hi) {
				size_t mid = (lo + hi) / 2;
				if (p->relocs[mid].got < got)
					lo = mid + 1;
				else
					hi = mid;
			}
			if (lo < p->nrelocs && p->relocs[lo].got == got)
				return p->relocs[lo].name;
			break;
		}
		return "[plt]";
	}
	return NULL;
}

int snrh_sym_user(struct snrh_symbolizer *s, uint64_t addr, bool return_address, const char **sym,
		  const char **module, uint64_t *offset)
{
	*sym = NULL;
	*module = NULL;
	*offset = 0;
	uint64_t look = return_address && addr ? addr - 1 : addr;
	Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, look);
	if (!mod)
		return -1;
	Dwarf_Addr start = 0, bias = 0;
	*module = dwfl_module_info(mod, NULL, &start, NULL, NULL, NULL, NULL, NULL);
	*offset = addr - start;
	if (dwfl_module_getelf(mod, &bias)) {
		const char *plt = plt_name(s, mod, look - bias, offset);
		if (plt) {
			*sym = plt;
			*offset += addr - look;
			return 0;
		}
	}
	GElf_Off off = 0;
	GElf_Sym es;
	const char *name = dwfl_module_addrinfo(mod, look, &off, &es, NULL, NULL, NULL);
	if (!name || !*name)
		return -1;
	/* .dynsym names carry their version (clock_gettime@@GLIBC_2.17). */
	snprintf(s->name, sizeof(s->name), "%.*s", (int)strcspn(name, "@"), name);
	*sym = s->name;
	*offset = off + (addr - look);
	return 0;
}

/* ---- DWARF unwinding ---- */

static pid_t next_thread(Dwfl *dwfl, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	struct snrh_symbolizer *s = dwfl_arg;
	if (*thread_argp)
		return 0;
	*thread_argp = s;
	return (pid_t)s->cur_tid;
}

static bool get_thread(Dwfl *dwfl, pid_t tid, void *dwfl_arg, void **thread_argp)
{
	(void)dwfl;
	(void)tid;
	*thread_argp = dwfl_arg;
	return true;
}

/* Memory is the stack copy and nothing else (as perf's --call-graph dwarf). */
static bool memory_read(Dwfl *dwfl, Dwarf_Addr addr, Dwarf_Word *result, void *dwfl_arg)
{
	(void)dwfl;
	struct snrh_symbolizer *s = dwfl_arg;
	const struct snrh_ustack *u = s->cur;
	uint64_t sp = u->regs[SNRH_UREG_SP];
	if (addr < sp)
		return false;
	if (addr - sp > u->size || u->size - (addr - sp) < sizeof(*result)) {
		if (!s->ran_out || addr < s->ran_out_at)
			s->ran_out_at = addr;
		s->ran_out = true;
		return false;
	}
	memcpy(result, u->data + (addr - sp), sizeof(*result));
	if (addr + sizeof(*result) > s->read_top)
		s->read_top = addr + sizeof(*result);
	return true;
}

static bool set_initial_registers(Dwfl_Thread *thread, void *thread_arg)
{
	const struct snrh_symbolizer *s = thread_arg;
	Dwarf_Word regs[SNRH_UREGS];
	for (int i = 0; i < SNRH_UREGS; i++)
		regs[i] = s->cur->regs[i];
	dwfl_thread_state_register_pc(thread, regs[SNRH_UREG_IP]);
	return dwfl_thread_state_registers(thread, 0, SNRH_UREGS, regs);
}

static const Dwfl_Thread_Callbacks thread_callbacks = {
    .next_thread = next_thread,
    .get_thread = get_thread,
    .memory_read = memory_read,
    .set_initial_registers = set_initial_registers,
};

struct unwind_out {
	uint64_t *pcs;
	int n, max;
};

static int frame_cb(Dwfl_Frame *state, void *arg)
{
	struct unwind_out *o = arg;
	Dwarf_Addr pc;
	bool activation;
	if (!dwfl_frame_pc(state, &pc, &activation) || !pc)
		return DWARF_CB_ABORT;
	o->pcs[o->n++] = pc;
	return o->n < o->max ? DWARF_CB_OK : DWARF_CB_ABORT;
}

int snrh_sym_unwind(struct snrh_symbolizer *s, uint32_t tid, const struct snrh_ustack *u, uint64_t *pcs,
		    int max, struct snrh_unwind_end *end)
{
	*end = (struct snrh_unwind_end){0, 0};
	if (max <= 0)
		return 0;
	/* Attached once: the process's machine comes from its first module
	 * whose ELF opens, which fails while the kernel is still setting up the
	 * exec'd image (no module yet); try again with the next stack. */
	if (!s->attached && dwfl_attach_state(s->dwfl, NULL, s->pid, &thread_callbacks, s))
		s->attached = true;
	if (!s->attached) {
		uint64_t ip = u->regs[SNRH_UREG_IP];
		snrh_sym_cover(s, &ip, 1);
		if (dwfl_attach_state(s->dwfl, NULL, s->pid, &thread_callbacks, s))
			s->attached = true;
	}
	if (!s->attached) {
		pcs[0] = u->regs[SNRH_UREG_IP];
		return 1;
	}
	s->cur = u;
	s->cur_tid = tid;
	s->read_top = 0;
	s->ran_out = false;
	struct unwind_out o = {pcs, 0, max};
	int rc = dwfl_getthread_frames(s->dwfl, (pid_t)tid, frame_cb, &o);
	if (snrh_sym_cover(s, pcs, o.n)) { /* a module was missing: its CFI too */
		o.n = 0;
		s->read_top = 0;
		s->ran_out = false;
		rc = dwfl_getthread_frames(s->dwfl, (pid_t)tid, frame_cb, &o);
	}
	/* 0: the outermost frame has no caller (its CFI says so), the whole
	 * stack was unwound. */
	end->outermost = rc == 0 && !s->ran_out ? s->read_top : 0;
	end->ran_out = s->ran_out ? s->ran_out_at : 0;
	s->cur = NULL;
	if (!o.n)
		pcs[o.n++] = u->regs[SNRH_UREG_IP];
	return o.n;
}

/* ---- kernel ---- */

void snrh_sym_load_kernel(struct snrh_symbolizer *s)
{
	if (s->kloaded)
		return;
	s->kloaded = 1;
	FILE *fp = fopen("/proc/kallsyms", "r");
	if (!fp)
		return;
	size_t cap = 0;
	char line[512];
	/* "ADDR TYPE NAME [MODULE]": parsed by hand, as sscanf was most of the
	 * time spent on its ~200,000 lines. */
	while (fgets(line, sizeof(line), fp)) {
		char *p;
		unsigned long long a = strtoull(line, &p, 16);
		if (!a || p[0] != ' ' || !p[1] || p[2] != ' ')
			continue;
		char type = p[1];
		if (type != 't' && type != 'T' && type != 'w' && type != 'W')
			continue;
		char *name = p + 3;
		name[strcspn(name, " \t\n")] = '\0';
		if (!*name)
			continue;
		if (s->nksyms == cap) {
			cap = cap ? cap * 2 : 65536;
			s->ksyms = snr_xrealloc(s->ksyms, cap * sizeof(*s->ksyms));
		}
		s->ksyms[s->nksyms++] = (struct sym){a, 0, snr_xstrdup(name)};
	}
	fclose(fp);
	snr_qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), sym_cmp);
	for (size_t i = 0; i + 1 < s->nksyms; i++)
		s->ksyms[i].size = s->ksyms[i + 1].addr - s->ksyms[i].addr;
}

void snrh_sym_add_kernel(struct snrh_symbolizer *s, size_t n, const uint64_t *addr, const uint64_t *size,
			 const char *const *name)
{
	snrh_sym_load_kernel(s);
	if (!n)
		return;
	s->ksyms = snr_xrealloc(s->ksyms, (s->nksyms + n) * sizeof(*s->ksyms));
	for (size_t i = 0; i < n; i++)
		s->ksyms[s->nksyms++] = (struct sym){addr[i], size[i], snr_xstrdup(name[i])};
	snr_qsort(s->ksyms, s->nksyms, sizeof(*s->ksyms), sym_cmp);
	for (size_t i = 0; i + 1 < s->nksyms; i++)
		if (s->ksyms[i].addr + s->ksyms[i].size > s->ksyms[i + 1].addr)
			s->ksyms[i].size = s->ksyms[i + 1].addr - s->ksyms[i].addr;
}

int snrh_sym_kernel(struct snrh_symbolizer *s, uint64_t addr, const char **sym, uint64_t *offset)
{
	snrh_sym_load_kernel(s);
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
		char build_id[80] = "";
		Dwfl_Module *mod = dwfl_addrmodule(s->dwfl, m->start);
		const unsigned char *bits;
		GElf_Addr vaddr;
		int n = mod ? dwfl_module_build_id(mod, &bits, &vaddr) : -1;
		for (int k = 0; k < n && k < 39; k++)
			sprintf(build_id + 2 * k, "%02x", bits[k]);
		json_array_append_new(a, json_pack("{s:I, s:I, s:I, s:s, s:s}", "start", (json_int_t)m->start,
						   "end", (json_int_t)m->end, "offset", (json_int_t)m->offset,
						   "path", m->path, "build_id", build_id));
	}
	return a;
}
