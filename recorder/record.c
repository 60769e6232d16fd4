/*
 * record.c: Algorithm 1 of Snap & Replay.
 *
 *   R <- {}, M <- {}
 *   for N steps:
 *     ask the ISA plugin for the instruction's inputs and outputs
 *     save every input register not in R and every input byte not in M
 *     add the outputs to R and M
 *     single-step
 *
 * R and M here hold everything already known inside the window: what the
 * window wrote and what was captured, so no byte or register is captured
 * twice and none that the window produced is captured at all. Memory is
 * tracked per byte range (lib/snr_ranges.c), which covers a wide read of
 * memory that an earlier instruction only partly wrote: just the unwritten
 * parts are read from the target.
 *
 * Costs per step: one step round trip plus one register read (free when the
 * stop reply expedites every register), and memory reads only for first-use
 * inputs. Code bytes are read once per pc.
 */
#include "record.h"

#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "recorder/machine_config.h"
#include "lib/snr_elf.h"
#include "lib/snr_lines.h"
#include "lib/snr_ranges.h"
#include "lib/snr_set.h"
#include "lib/snr_trace.h"
#include "lib/snr_plugin.h"
#include "lib/snr_util.h"
#include "recorder/breakpoint.h"
#include "recorder/record_int.h"
#include "recorder/record_sim.h"
#include "recorder/readable_pages.h"
#include "recorder/reg_known.h"
#include "recorder/sim_regs.h"
#include "recorder/code_check.h"
#include "recorder/vdso.h"
#include "recorder/pod_sim.h"
#include "recorder/verify.h"
#include "sim/grm_ta1.h"
#include "sim/snr_sim.h"

/* --method sim: the target catches up with the simulation at least this
 * often (instructions): a stride is kept out of the trace until the target
 * has run it and matched, so this bounds the steps held in memory and the
 * instructions stepped again after a mismatch */
#define SIM_STRIDE (1u << 16)

#ifndef SNR_VERSION
#define SNR_VERSION "unknown"
#endif

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}


/* ---- the code cache -------------------------------------------------------- */

void code_cache_grow(struct code_cache *c)
{
	size_t old = c->cap;
	struct code_entry *oe = c->e;
	c->cap = c->cap ? c->cap * 2 : 4096;
	c->e = snr_xcalloc(c->cap, sizeof(*c->e));
	c->n = 0;
	for (size_t i = 0; i < old; i++)
		if (oe[i].used) {
			*code_slot(c, oe[i].pc) = oe[i];
			c->n++;
		}
	free(oe);
}

/* Reads up to max bytes of code at pc, fewer where memory ends. */
static int read_code(const struct snr_dbg_ops *dbg, struct snr_dbg *d, uint64_t pc, unsigned max, uint8_t *out)
{
	if (dbg->read_mem(d, pc, out, max) == 0)
		return (int)max;
	/* Variable-length ISAs: the maximum may run into an unmapped page. */
	unsigned n = 0;
	while (n < max && dbg->read_mem(d, pc + n, out + n, 1) == 0)
		n++;
	return n ? (int)n : -1;
}

/* ---- progress ------------------------------------------------------------------ */

static void progress(uint64_t done, uint64_t total, double t0, uint64_t requests, uint64_t fetched, bool final)
{
	double el = now_s() - t0, rate = el > 0 ? (double)done / el : 0;
	double eta = rate > 0 ? (double)(total - done) / rate : 0;
	int width = 30, fill = total ? (int)((double)width * (double)done / (double)total) : 0;
	char bar[64];
	for (int i = 0; i < width; i++)
		bar[i] = i < fill ? '#' : '.';
	bar[width] = 0;
	fprintf(stderr, "\r[%s] %llu/%llu instructions, %.0f/s, ETA %.0fs, %llu requests, %llu KiB fetched   %s", bar,
		(unsigned long long)done, (unsigned long long)total, rate, eta, (unsigned long long)requests,
		(unsigned long long)(fetched >> 10), final ? "\n" : "");
	fflush(stderr);
}

/* ---- the recorder ------------------------------------------------------------ */

const struct snr_isa_ops *snr_isa_load(const char *path, char *err, size_t errlen)
{
	void *h;
	const struct snr_isa_ops *isa = snr_plugin_open(path, "snr_isa_plugin", "ISA", "isa/snr_isa.h",
							SNR_ISA_ABI_MIN_VERSION, SNR_ISA_ABI_VERSION, &h, err, errlen);
	if (!isa)
		return NULL;
	const char *missing = !isa->name ? "name" : !isa->gdb_arch ? "gdb_arch" : !isa->create ? "create"
		: !isa->destroy ? "destroy" : !isa->registers ? "registers" : !isa->access ? "access"
		: !isa->disasm ? "disasm" : !isa->max_insn_bytes || isa->max_insn_bytes > 16 ? "max_insn_bytes" : NULL;
	if (missing) {
		snr_fmt(err, errlen, "%s: snr_isa_plugin.%s is %s", path, missing,
			strcmp(missing, "max_insn_bytes") ? "NULL; every member but syscall_writes is required"
							  : "not 1 to 16");
		dlclose(h);
		return NULL;
	}
	return isa;
}

const struct snr_dbg_ops *snr_dbg_load(const char *path, char *err, size_t errlen)
{
	void *h;
	const struct snr_dbg_ops *dbg = snr_plugin_open(path, "snr_dbg_plugin", "debugger", "recorder/snr_debugger.h",
							SNR_DBG_ABI_MIN_VERSION, SNR_DBG_ABI_VERSION, &h, err, errlen);
	if (!dbg)
		return NULL;
	const char *missing = !dbg->name ? "name" : !dbg->open ? "open" : !dbg->close ? "close"
		: !dbg->error ? "error" : !dbg->arch ? "arch" : !dbg->nthreads ? "nthreads"
		: !dbg->select_thread ? "select_thread" : !dbg->pid ? "pid" : !dbg->registers ? "registers"
		: !dbg->read_regs ? "read_regs" : !dbg->read_mem ? "read_mem" : !dbg->set_breakpoint ? "set_breakpoint"
		: !dbg->clear_breakpoint ? "clear_breakpoint" : !dbg->cont ? "cont" : !dbg->step ? "step"
		: !dbg->detach ? "detach" : !dbg->kill ? "kill" : NULL;
	if (missing) {
		snr_fmt(err, errlen, "%s: snr_dbg_plugin.%s is NULL; every member but read_regs_cheap is required", path,
			missing);
		dlclose(h);
		return NULL;
	}
	return dbg;
}

/* Reads every register: all current. */
int read_registers(struct rec *r, char *err, size_t errlen)
{
	r->requests++;
	if (r->dbg->read_regs(r->d, r->regbuf)) {
		snr_fmt(err, errlen, "reading registers: %s", r->dbg->error(r->d));
		return -1;
	}
	for (size_t k = 0; k < r->niregs; k++) {
		r->stale[k] = false;
		r->qval[k] = r->regval[k];
	}
	return 0;
}

/*
 * Reads the registers for the next step's query. Algorithm 1 needs a
 * register's value for two things: to capture it at its first read, which
 * comes before any write, so the value read at the window's start is still
 * current; and for the query's address arithmetic (base and index
 * registers, which every stub sends in its cheapest reply). So with a
 * backend that has read_regs_cheap only the cheap registers are read per
 * step, and a register the window wrote and that read did not refresh is
 * stale: the query gets no value for it. A query that needed one (it reads
 * it and reports a fault) is asked again after a full read.
 */
static int read_step_registers(struct rec *r, char *err, size_t errlen)
{
	if (r->dbg->abi_version < 2 || !r->dbg->read_regs_cheap)
		return read_registers(r, err, errlen);
	r->requests++;
	if (r->dbg->read_regs_cheap(r->d, r->regbuf, r->got)) {
		snr_fmt(err, errlen, "reading registers: %s", r->dbg->error(r->d));
		return -1;
	}
	for (size_t k = 0; k < r->niregs; k++) {
		if (r->map[k] >= 0 && r->got[r->map[k]])
			r->stale[k] = false;
		r->qval[k] = r->stale[k] ? NULL : r->regval[k];
	}
	if (r->stale[r->pc_reg]) /* a backend whose cheapest read lacks the pc */
		return read_registers(r, err, errlen);
	return 0;
}

/* Has every register the debugger has been read since the window last wrote it? */
static bool registers_current(const struct rec *r)
{
	for (size_t k = 0; k < r->niregs; k++)
		if (r->map[k] >= 0 && r->stale[k])
			return false;
	return true;
}

/* The query faulted reading a register it got no value for. */
static bool needs_stale(const struct rec *r, const struct snr_insn_access *a)
{
	if (!a->fault)
		return false;
	for (size_t k = 0; k < r->niregs; k++)
		if (r->stale[k] && snr_regset_has(a->regs_read, (unsigned)k))
			return true;
	return false;
}

/* ---- memory the debugger cannot read -------------------------------------------- */

/* ---- stepping ------------------------------------------------------------------ */

/* The ISA register named `name` (or aliased so), -1 if none. */
int reg_named(const struct rec *r, const char *name)
{
	for (size_t i = 0; i < r->niregs; i++)
		if (!strcmp(r->iregs[i].name, name) || (r->iregs[i].alt_name && !strcmp(r->iregs[i].alt_name, name)))
			return r->regval[i] ? (int)i : -1;
	return -1;
}

/* --until-return: where the function stopped at its entry returns to, and
 * its caller's stack pointer. The return address is in a link register
 * (ra on RISC-V and TA1, x30 on aarch64) or on top of the stack (x86-64's
 * call pushed it). The window ends at the first instruction at that
 * address with the stack pointer back at or above its entry value (deeper
 * recursion returns there with a lower one). */
struct return_point {
	int sp_reg;
	uint64_t pc, sp;
};

static int return_point_at_entry(struct rec *r, struct return_point *rp, char *err, size_t errlen)
{
	int link = reg_named(r, "ra") >= 0 ? reg_named(r, "ra") : reg_named(r, "x30");
	rp->sp_reg = reg_named(r, "sp") >= 0 ? reg_named(r, "sp") : reg_named(r, "rsp");
	if (rp->sp_reg < 0) {
		snr_fmt(err, errlen, "--until-return: the %s ISA names no stack pointer (sp, rsp)", r->isa->name);
		return -1;
	}
	rp->sp = reg_u64(r, (size_t)rp->sp_reg);
	if (link >= 0) {
		rp->pc = reg_u64(r, (size_t)link);
		return 0;
	}
	if (!strcmp(r->iregs[rp->sp_reg].name, "rsp")) {
		uint8_t b[8];
		if (r->dbg->read_mem(r->d, rp->sp, b, 8)) {
			snr_fmt(err, errlen, "--until-return: reading the return address at rsp 0x%llx: %s",
				(unsigned long long)rp->sp, r->dbg->error(r->d));
			return -1;
		}
		memcpy(&rp->pc, b, 8);
		return 0;
	}
	snr_fmt(err, errlen, "--until-return: the %s ISA names no link register (ra, x30) and is not x86-64",
		r->isa->name);
	return -1;
}

static int map_registers(struct rec *r, char *err, size_t errlen)
{
	r->iregs = r->isa->registers(r->isa_self, &r->niregs);
	r->dregs = r->dbg->registers(r->d, &r->ndregs);
	if (!r->dregs || !r->ndregs) {
		snr_fmt(err, errlen, "the debugger reports no registers");
		return -1;
	}
	const struct snr_dbg_reg *last = &r->dregs[r->ndregs - 1];
	r->regbuf_len = last->offset + last->size;
	for (size_t i = 0; i < r->ndregs; i++)
		if (r->dregs[i].offset + r->dregs[i].size > r->regbuf_len)
			r->regbuf_len = r->dregs[i].offset + r->dregs[i].size;
	r->regbuf = snr_xcalloc(1, r->regbuf_len);
	r->map = snr_xcalloc(r->niregs, sizeof(*r->map));
	r->regval = snr_xcalloc(r->niregs, sizeof(*r->regval));
	r->qval = snr_xcalloc(r->niregs, sizeof(*r->qval));
	r->stale = snr_xcalloc(r->niregs, sizeof(*r->stale));
	r->got = snr_xcalloc(r->ndregs, sizeof(*r->got));
	r->pc_reg = -1;
	char missing[512] = "";
	for (size_t i = 0; i < r->niregs; i++) {
		const struct snr_isa_reg *ir = &r->iregs[i];
		r->map[i] = -1;
		for (size_t k = 0; k < r->ndregs && r->map[i] < 0; k++)
			if (!strcmp(r->dregs[k].name, ir->name) || (ir->alt_name && !strcmp(r->dregs[k].name, ir->alt_name)))
				r->map[i] = (long)k;
		if (ir->pc)
			r->pc_reg = (int)i;
		if (r->map[i] < 0) {
			if (!ir->optional && strlen(missing) + strlen(ir->name) + 3 < sizeof(missing))
				snprintf(missing + strlen(missing), sizeof(missing) - strlen(missing), "%s%s",
					 missing[0] ? ", " : "", ir->name);
			continue;
		}
		const struct snr_dbg_reg *dr = &r->dregs[r->map[i]];
		if (dr->size < ir->size) {
			snr_fmt(err, errlen, "register %s is %u bytes at the debugger, %u in the %s ISA", ir->name,
				dr->size, ir->size, r->isa->name);
			return -1;
		}
		r->regval[i] = r->regbuf + dr->offset;
	}
	if (missing[0]) {
		snr_fmt(err, errlen, "the debugger lacks registers the %s ISA needs: %s", r->isa->name, missing);
		return -1;
	}
	if (r->pc_reg < 0) {
		snr_fmt(err, errlen, "the %s ISA names no program counter", r->isa->name);
		return -1;
	}
	return 0;
}

/* "objects": the ELF objects the trace was symbolized from, with their
 * absolute paths, build-ids and load biases, so that readers find the
 * program's line tables (lib/snr_lines.h). */
static json_t *objects_json(const struct loaded_obj *objs, size_t nobjs)
{
	json_t *a = json_array();
	for (size_t i = 0; i < nobjs; i++) {
		json_t *e = json_object();
		char abs[PATH_MAX], id[129];
		json_object_set_new(e, "path", json_string(realpath(objs[i].elf->path, abs) ? abs : objs[i].elf->path));
		if (!snr_elf_build_id(objs[i].elf->path, id, sizeof(id)))
			json_object_set_new(e, "build_id", json_string(id));
		json_object_set_new(e, "bias", json_integer((json_int_t)objs[i].bias));
		json_array_append_new(a, e);
	}
	return a;
}

static char *meta_json(struct rec *r, uint64_t bp_addr, uint64_t skip, const char *config_json,
		       const struct loaded_obj *objs, size_t nobjs)
{
	const struct snr_record_opts *o = r->o;
	json_t *m = json_object();
	json_object_set_new(m, "format", json_string("snr trace"));
	json_object_set_new(m, "isa", json_string(r->isa->name));
	json_object_set_new(m, "recorder", json_string("snr " SNR_VERSION));
	json_object_set_new(m, "debugger", json_string(r->dbg->name));
	json_object_set_new(m, "method", json_string(r->sim ? "sim" : "step"));
	if (o->target)
		json_object_set_new(m, "target", json_string(o->target));
	if (o->argv && o->argv[0]) {
		json_t *a = json_array();
		for (char *const *p = o->argv; *p; p++)
			json_array_append_new(a, json_string(*p));
		json_object_set_new(m, "command", a);
	}
	if (o->elf_path)
		json_object_set_new(m, "elf", json_string(o->elf_path));
	if (nobjs)
		json_object_set_new(m, "objects", objects_json(objs, nobjs));
	json_object_set_new(m, "breakpoint", json_string(o->breakpoint));
	json_object_set_new(m, "breakpoint_address", json_integer((json_int_t)bp_addr));
	json_object_set_new(m, "skip", json_integer((json_int_t)skip));
	json_object_set_new(m, "count", json_integer((json_int_t)o->count));
	json_object_set_new(m, "chip", json_integer(o->chip));
	json_object_set_new(m, "chips", json_integer(r->nchips));
	json_object_set_new(m, "pid", json_integer(r->dbg->pid(r->d)));
	time_t now = time(NULL);
	char ts[64];
	strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
	json_object_set_new(m, "created", json_string(ts));
	if (config_json) {
		json_t *c = json_loads(config_json, 0, NULL);
		if (c)
			json_object_set_new(m, "config", c);
	}
	json_t *regs = json_array();
	for (size_t i = 0; i < r->niregs; i++) {
		json_t *e = json_object();
		json_object_set_new(e, "name", json_string(r->iregs[i].name));
		json_object_set_new(e, "size", json_integer(r->iregs[i].size));
		if (r->iregs[i].pc)
			json_object_set_new(e, "pc", json_true());
		if (r->map[i] < 0)
			json_object_set_new(e, "unavailable", json_true());
		json_array_append_new(regs, e);
	}
	json_object_set_new(m, "registers", regs);
	char *s = json_dumps(m, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(m);
	return s;
}

/* A vDSO symbol with a __vdso_ name at its address (time and __vdso_time):
 * the trace names the function by the latter. */
static bool vdso_alias(const struct snr_elf *vdso, const struct snr_elf_symbol *s)
{
	if (!strncmp(s->name, "__vdso_", 7))
		return false;
	for (size_t j = 0; j < vdso->nsymbols; j++)
		if (vdso->symbols[j].addr == s->addr && !strncmp(vdso->symbols[j].name, "__vdso_", 7))
			return true;
	return false;
}

static int write_trace_symbols(struct snr_trace_writer *w, struct loaded_obj *objs, size_t nobjs,
			       const struct snr_elf *vdso, uint64_t vdso_bias)
{
	struct loaded_obj *all = snr_xcalloc(nobjs + 1, sizeof(*all));
	if (nobjs)
		memcpy(all, objs, nobjs * sizeof(*objs));
	if (vdso) /* the vDSO's functions, which name its calls in the trace */
		all[nobjs++] = (struct loaded_obj){(struct snr_elf *)vdso, vdso_bias};
	objs = all;
	size_t n = 0;
	for (size_t i = 0; i < nobjs; i++)
		n += objs[i].elf->nsymbols;
	uint64_t *addr = snr_xcalloc(n ? n : 1, sizeof(*addr)), *size = snr_xcalloc(n ? n : 1, sizeof(*size));
	const char **name = snr_xcalloc(n ? n : 1, sizeof(*name));
	size_t k = 0;
	for (size_t i = 0; i < nobjs; i++)
		for (size_t j = 0; j < objs[i].elf->nsymbols; j++) {
			const struct snr_elf_symbol *s = &objs[i].elf->symbols[j];
			if (objs[i].elf == vdso && vdso_alias(vdso, s))
				continue;
			addr[k] = s->addr + objs[i].bias;
			size[k] = s->size;
			name[k] = s->name;
			k++;
		}
	/* sort by address (objects may interleave) */
	for (size_t i = 1; i < k; i++) {
		uint64_t a = addr[i], sz = size[i];
		const char *nm = name[i];
		size_t j = i;
		if (addr[j - 1] <= a)
			continue;
		/* binary insertion */
		size_t lo = 0, hi = i;
		while (lo < hi) {
			size_t mid = (lo + hi) / 2;
			if (addr[mid] <= a)
				lo = mid + 1;
			else
				hi = mid;
		}
		memmove(&addr[lo + 1], &addr[lo], (i - lo) * sizeof(*addr));
		memmove(&size[lo + 1], &size[lo], (i - lo) * sizeof(*size));
		memmove(&name[lo + 1], &name[lo], (i - lo) * sizeof(*name));
		addr[lo] = a;
		size[lo] = sz;
		name[lo] = nm;
		(void)j;
	}
	int rc = snr_trace_write_symbols(w, k, addr, size, name);
	free(all);
	free(addr);
	free(size);
	free(name);
	return rc;
}

/* ---- --method sim -------------------------------------------------------------- */

/* The simulator that runs an ISA's windows ahead of the target; NULL: the
 * ISA is recorded by stepping only. A ta1 target without TA1's own
 * registers is a plain RV64 process (qemu-riscv64): see plain_rv64(). */
static const struct snr_sim_ops *simulator_for(const struct snr_isa_ops *isa)
{
	/* the in-tree plugins only: a vendor's may decode differently */
	if (isa == snr_isa_find("ta1"))
		return &snr_sim_ta1;
	if (isa == snr_isa_find("x86-64"))
		return &snr_sim_unicorn;
	if (isa == snr_isa_find("aarch64"))
		return &snr_sim_unicorn_aarch64;
	return NULL;
}

/* A plain RV64 target (qemu-riscv64) lacks TA1's own registers (flags,
 * counters, chip id), and its memory is a Linux process's, not a TA1
 * chip's, which the GRM cannot hold: unicorn's RV64 runs its windows. */
static bool plain_rv64(const struct rec *r)
{
	for (size_t k = 0; k < r->niregs; k++)
		if (r->map[k] < 0)
			return true;
	return false;
}

/* unicorn (QEMU's TCG) translates code ahead of the instruction it runs,
 * into the next page too, so the code page of a pc and the page after it
 * are loaded whole on the pc's first use, but for the bytes the window
 * wrote (the simulator holds those). A page that cannot be read whole is
 * left to load_code's exact bytes. */
static int sim_load_code_page(struct rec *r, struct snr_ranges *loaded, const struct snr_ranges *written,
			      uint64_t addr, char *err, size_t errlen)
{
	uint64_t page = addr & ~4095ull;
	struct snr_range got;
	if (snr_ranges_find(loaded, 0, page, &got))
		return 0;
	snr_ranges_add(loaded, 0, page, page + 4096);
	uint8_t bytes[4096];
	char e[256];
	if (snr_ahead_fetch(r->ahead, page, bytes, sizeof(bytes), e, sizeof(e)))
		return 0;
	struct snr_range *parts = NULL;
	size_t nparts = 0, cap = 0;
	snr_ranges_missing(written, 0, page, page + 4096, &parts, &nparts, &cap);
	int rc = 0;
	for (size_t q = 0; q < nparts && !rc; q++)
		if (r->sim->load_mem(r->simst, 0, 0, parts[q].lo, bytes + (parts[q].lo - page), parts[q].hi - parts[q].lo)) {
			snr_fmt(err, errlen, "loading the code page at 0x%llx into the simulator: %s",
				(unsigned long long)page, r->sim->error(r->simst));
			rc = -1;
		}
	free(parts);
	return rc;
}

/* x86-64 rep/repne string instructions: hardware single-steps them an
 * iteration (or, with fast strings, several) at a time, unicorn one, so
 * with --method sim they run on the target and the trace keeps the
 * target's steps, as stepping records them. */
static bool x86_rep_string(const uint8_t *code, unsigned len)
{
	bool rep = false;
	unsigned i = 0;
	for (; i < len; i++) {
		uint8_t b = code[i];
		if (b == 0xf2 || b == 0xf3)
			rep = true;
		else if (!(b == 0x66 || b == 0x67 || b == 0xf0 || b == 0x2e || b == 0x36 || b == 0x3e || b == 0x26 ||
			   b == 0x64 || b == 0x65 || (b >= 0x40 && b <= 0x4f)))
			break;
	}
	return rep && i < len && code[i] >= 0xa4 && code[i] <= 0xaf && code[i] != 0xa8 && code[i] != 0xa9;
}

/* The target's registers (regbuf, read in full) into the simulator. */
static int sim_load_registers(struct rec *r, char *err, size_t errlen)
{
	if (r->sim_none)
		memset(r->sim_none, 0, r->niregs * sizeof(*r->sim_none));
	r->step_for = NULL; /* sim_read_step's plan, again: a new simulator may have the last one's address */
	for (size_t k = 0; k < r->niregs; k++)
		if (r->regval[k] && r->sim->set_reg(r->simst, (unsigned)k, r->regval[k], r->iregs[k].size)) {
			snr_fmt(err, errlen, "loading register %s into the simulator: %s", r->iregs[k].name,
				r->sim->error(r->simst));
			return -1;
		}
	return 0;
}

/* Code bytes at pc from the target through the page cache, fewer where memory ends. */
static int fetch_code(struct rec *r, uint64_t pc, unsigned max, uint8_t *out)
{
	char e[256];
	if (snr_ahead_fetch(r->ahead, pc, out, max, e, sizeof(e)) == 0)
		return (int)max;
	unsigned n = 0;
	while (n < max && snr_ahead_fetch(r->ahead, pc + n, out + n, 1, e, sizeof(e)) == 0)
		n++;
	return n ? (int)n : -1;
}

static const char *stop_text(const struct snr_dbg_stop *s, char *buf, size_t len)
{
	switch (s->kind) {
	case SNR_DBG_STOP_TRAP: snprintf(buf, len, "stopped at 0x%llx", (unsigned long long)s->pc); break;
	case SNR_DBG_STOP_SIGNAL: snr_signal_text(buf, len, s->code, s->pc, true); break;
	case SNR_DBG_STOP_EXITED: snprintf(buf, len, "exited with status %d", s->code); break;
	case SNR_DBG_STOP_KILLED: snr_signal_text(buf, len, s->code, 0, false); break;
	case SNR_DBG_STOP_TIMEOUT: snprintf(buf, len, "timed out"); break;
	}
	return buf;
}

static uint64_t total_requests(struct rec *r)
{
	return r->requests + (r->ahead ? snr_ahead_stats(r->ahead)->requests : 0);
}

static uint64_t total_fetched(struct rec *r, const struct snr_record_summary *sum)
{
	return r->ahead ? snr_ahead_stats(r->ahead)->bytes_fetched + r->bytes_read : sum->bytes_captured + sum->bytes_post;
}

/* Runs the target to the n-th next hit of the breakpoint bp by the
 * recorded chip (n >= 1; hits by other chips do not count). at_bp: the
 * target is stopped at bp now (a window ended there), which is stepped off
 * first, as between hits. done: the hits before these, for messages. The
 * breakpoint is set while the target runs and cleared after. */
static int run_to_hit(struct rec *r, uint64_t bp, uint64_t n, bool at_bp, uint64_t done, char *err, size_t errlen)
{
	const struct snr_record_opts *o = r->o;
	const struct snr_dbg_ops *dbg = r->dbg;
	struct snr_dbg_stop st;
	char msg[512];
	if (at_bp && (dbg->select_thread(r->d, o->chip) || dbg->step(r->d, &st))) {
		snr_fmt(err, errlen, "stepping off breakpoint %s: %s", o->breakpoint, dbg->error(r->d));
		return -1;
	}
	if (at_bp && st.kind != SNR_DBG_STOP_TRAP) {
		snr_fmt(err, errlen, "the program %s while stepping off breakpoint %s (after hit %llu)",
			stop_text(&st, msg, sizeof(msg)), o->breakpoint, (unsigned long long)done);
		return -1;
	}
	if (dbg->select_thread(r->d, o->chip) || dbg->set_breakpoint(r->d, bp)) {
		snr_fmt(err, errlen, "setting a breakpoint at 0x%llx: %s", (unsigned long long)bp, dbg->error(r->d));
		return -1;
	}
	for (uint64_t hit = 0; hit < n; hit++) {
		/* A hit to go past: step off the breakpoint before continuing, as
		 * GDB does. QEMU's stub does not: continued at a breakpoint, it
		 * reports the same hit again, so --skip counted it twice. */
		if (hit > 0 && (dbg->select_thread(r->d, o->chip) || dbg->clear_breakpoint(r->d, bp) ||
				dbg->step(r->d, &st) || dbg->set_breakpoint(r->d, bp))) {
			snr_fmt(err, errlen, "stepping off breakpoint %s after hit %llu: %s", o->breakpoint,
				(unsigned long long)(done + hit), dbg->error(r->d));
			return -1;
		}
		if (hit > 0 && st.kind != SNR_DBG_STOP_TRAP) {
			snr_fmt(err, errlen, "the program %s while stepping off breakpoint %s (hit %llu of %llu)",
				stop_text(&st, msg, sizeof(msg)), o->breakpoint, (unsigned long long)(done + hit),
				(unsigned long long)(done + n));
			return -1;
		}
		for (;;) {
			r->halted_why = NULL;
			if (dbg->cont(r->d, o->timeout_s > 0 ? o->timeout_s * 1000 : 0, &st)) {
				snr_fmt(err, errlen, "continuing to the breakpoint: %s", dbg->error(r->d));
				return -1;
			}
			if (st.kind == SNR_DBG_STOP_TIMEOUT) {
				snr_fmt(err, errlen, "breakpoint %s (0x%llx) not hit within %d s%s", o->breakpoint,
					(unsigned long long)bp, o->timeout_s, done + hit ? " after an earlier hit" : "");
				r->halted_why = "the target was interrupted";
				return -1;
			}
			if (st.kind != SNR_DBG_STOP_TRAP) {
				snr_fmt(err, errlen, "the program %s before reaching breakpoint %s (hit %llu of %llu)",
					stop_text(&st, msg, sizeof(msg)), o->breakpoint, (unsigned long long)(done + hit),
					(unsigned long long)(done + n));
				return -1;
			}
			/* Another chip may stop at the same breakpoint first. */
			if (st.thread < 0 || st.thread == o->chip)
				break;
		}
	}
	if (dbg->clear_breakpoint(r->d, bp) || dbg->select_thread(r->d, o->chip)) {
		snr_fmt(err, errlen, "clearing the breakpoint: %s", dbg->error(r->d));
		return -1;
	}
	return 0;
}

/* ---- checks before the target runs ---------------------------------------
 *
 * Everything that can be known while the target is halted where the
 * recorder found it is checked before it is continued: the ISA and
 * registers, --chip against the target's threads, the breakpoint's symbol,
 * the ELF's architecture against the target's, the ELF's code against the
 * target's memory, and the output path. A failure leaves the target halted
 * there (leave_halted), and the message says where. */

/* The target's architecture name and an ELF's agree: the same GDB name,
 * or a target that says only "riscv". */
static bool same_arch(const char *target, const char *elf)
{
	return !strcmp(target, elf) || (!strcmp(target, "riscv") && !strncmp(elf, "riscv:", 6));
}

static int check_elf_arch(const struct rec *r, const char *target_arch, const struct loaded_obj *objs,
			  size_t nobjs, char *err, size_t errlen)
{
	const char *want = target_arch ? target_arch : r->isa->gdb_arch;
	for (size_t i = 0; i < nobjs && want; i++) {
		const char *have = snr_elf_gdb_arch(objs[i].elf);
		if (have && !same_arch(want, have)) {
			snr_fmt(err, errlen, "%s is built for %s (ELF machine %u), but the target %s %s%s",
				objs[i].elf->path, have, objs[i].elf->machine, target_arch ? "reports" : "runs", want,
				target_arch ? "" : " (--isa; the target names no architecture)");
			return -1;
		}
	}
	return 0;
}

/* The selected thread's pc, read by the debugger's own register names. */
static int halted_pc(struct rec *r, uint64_t *pc)
{
	size_t n = 0;
	const struct snr_dbg_reg *regs = r->dbg->registers(r->d, &n);
	long at = -1;
	size_t len = 0;
	for (size_t i = 0; regs && i < n; i++) {
		if (at < 0 && (!strcmp(regs[i].name, "pc") || !strcmp(regs[i].name, "rip")) && regs[i].size <= 8)
			at = (long)i;
		if (regs[i].offset + regs[i].size > len)
			len = regs[i].offset + regs[i].size;
	}
	if (at < 0)
		return -1;
	uint8_t *buf = snr_xcalloc(1, len);
	int rc = r->dbg->read_regs(r->d, buf);
	*pc = 0;
	if (rc == 0)
		memcpy(pc, buf + regs[at].offset, regs[at].size);
	free(buf);
	return rc;
}

/* A check failed while the target was halted (before it was continued, or
 * after a timeout interrupted it): leave it there, for the next debugger,
 * and append to err where that is and what the backend did. */
static void leave_halted(struct rec *r, const char *why, char *err, size_t errlen)
{
	char at[64] = "", how[400];
	uint64_t pc;
	if (halted_pc(r, &pc) == 0)
		snr_fmt(at, sizeof(at), " at pc 0x%llx", (unsigned long long)pc);
	size_t l = strlen(err);
	if (r->dbg->abi_version >= 5 && r->dbg->close_stopped) {
		if (r->dbg->close_stopped(r->d, how, sizeof(how)) == 0)
			snr_fmt(err + l, errlen - l, "; %s: snr left it halted%s and %s", why, at, how);
		else
			snr_fmt(err + l, errlen - l, "; %s%s, but %s", why, at, how);
	} else {
		r->dbg->close(r->d);
		snr_fmt(err + l, errlen - l,
			"; %s%s, but the debugger backend %s cannot leave a program stopped (ABI version 5's "
			"close_stopped): it was detached",
			why, at, r->dbg->name);
	}
	r->d = NULL;
}

int snr_record(const struct snr_record_opts *o, struct snr_record_summary *sum, char *err, size_t errlen)
{
	struct rec r = {.o = o, .dbg = o->dbg, .halted_why = "the target was not continued"};
	struct loaded_obj *objs = NULL;
	size_t nobjs = 0;
	struct snr_trace_writer *w = NULL;
	struct snr_ranges known = {0}, written = {0}, code_pages = {0};
	struct code_cache cc = {0};
	struct snr_range *miss = NULL;
	size_t miss_cap = 0;
	uint32_t *miss_key = NULL;
	size_t miss_key_cap = 0;
	uint8_t *membuf = NULL;
	size_t membuf_cap = 0;
	char *meta = NULL, *config_json = NULL, said[640] = "";
	uint64_t reg_known[REG_WORDS]; /* Algorithm 1's R: recorder/reg_known.h */
	uint8_t *capbuf = NULL, *postbuf = NULL, *prevbuf = NULL, *pmembuf = NULL;
	size_t pmembuf_cap = 0;
	const uint8_t **prevval = NULL;
	struct snr_trace_regval *rv = NULL, *prv = NULL;
	struct snr_trace_mem pmv[SNR_ISA_MAX_MEM];
	struct snr_trace_mem *mv = NULL;
	size_t mv_cap = 0;
	struct stride sd = {0};
	struct vdso vd = {0};
	int rc = -1;
	char msg[512];
	double t0 = now_s();
	struct snr_set_writer *set = NULL;
	const char *set_end = NULL;
	uint64_t nwin = o->windows ? o->windows : 1, every = o->every ? o->every : 1;
	bool target_there = false;
	uint64_t hit_now = o->skip + 1, hits_in = 0, end_pc = 0; /* the window's start hit; hits after it */
	/* the indices of the window's instructions at the breakpoint after its
	 * first: a fallback to stepping runs some again, and counts them once */
	uint64_t *hit_at = NULL;
	size_t nhit_at = 0, hit_cap = 0;

	memset(sum, 0, sizeof(*sum));
	sum->end_reason = "error";
	if (o->dbg->abi_version < SNR_DBG_ABI_MIN_VERSION || o->dbg->abi_version > SNR_DBG_ABI_VERSION) {
		snr_fmt(err, errlen, "debugger backend %s has ABI version %u, snr loads versions %d to %d", o->dbg->name,
			o->dbg->abi_version, SNR_DBG_ABI_MIN_VERSION, SNR_DBG_ABI_VERSION);
		return -1;
	}
	/* a vendor's ISA plugin: refused before anything is connected */
	const struct snr_isa_ops *isa_plugin = NULL;
	if (o->isa && strchr(o->isa, '/') && !(isa_plugin = snr_isa_load(o->isa, err, errlen)))
		return -1;
	r.d = o->dbg->open(o->target, o->argv, err, errlen);
	if (!r.d)
		return -1;

	/* ISA */
	const char *arch = o->dbg->arch(r.d);
	if (!o->isa || !strcmp(o->isa, "auto")) {
		r.isa = arch ? snr_isa_for_gdb_arch(arch) : NULL;
		if (!r.isa) {
			snr_fmt(err, errlen, "cannot tell the ISA: the target reports architecture %s; name it with --isa",
				arch ? arch : "(none)");
			goto out;
		}
	} else if (strchr(o->isa, '/')) {
		r.isa = isa_plugin;
	} else {
		r.isa = snr_isa_find(o->isa);
		if (!r.isa) {
			snr_fmt(err, errlen, "unknown ISA '%s' (ta1, x86-64, aarch64, or a path to a plugin .so)", o->isa);
			goto out;
		}
	}
	if (r.isa->abi_version < SNR_ISA_ABI_MIN_VERSION || r.isa->abi_version > SNR_ISA_ABI_VERSION) {
		snr_fmt(err, errlen, "ISA plugin %s has ABI version %u, snr loads versions %d to %d", r.isa->name,
			r.isa->abi_version, SNR_ISA_ABI_MIN_VERSION, SNR_ISA_ABI_VERSION);
		goto out;
	}
	if (!strcmp(r.isa->name, "ta1")) {
		char *told = NULL;
		int bad = snr_rec_target_config(o, r.d, &told, err, errlen) ||
			  snr_rec_machine_config(o->config_path, told, &config_json, said, sizeof(said), err, errlen);
		free(told);
		if (bad)
			goto out;
	} else if (o->config_path) {
		snr_fmt(err, errlen,
			"--config %s: the machine config is stored in TA1 traces; this target is %s (a cache model's "
			"config goes to snr replay --config)",
			o->config_path, r.isa->name);
		goto out;
	}
	r.x86 = !strcmp(r.isa->name, "x86-64"); /* asked per step: not a strcmp each */
	r.isa_self = r.isa->create(config_json, err, errlen);
	if (!r.isa_self)
		goto out;
	int nth = o->dbg->nthreads(r.d);
	r.nchips = nth > 0 ? (unsigned)nth : 1;
	if (o->chip < 0 || (unsigned)o->chip >= r.nchips) {
		snr_fmt(err, errlen, "--chip %d: the target has %u thread%s", o->chip, r.nchips, r.nchips == 1 ? "" : "s");
		goto out;
	}
	if (map_registers(&r, err, errlen))
		goto out;

	/* Breakpoint */
	struct snr_bp_spec bs;
	uint64_t bp;
	if (snr_breakpoint_parse(o->breakpoint, &bs, err, errlen))
		goto out;
	if (snr_rec_load_symbols(o->elf_path, o->dbg->pid(r.d), &objs, &nobjs, err, errlen))
		goto out;
	if (check_elf_arch(&r, arch, objs, nobjs, err, errlen))
		goto out;
	if (snr_breakpoint_resolve(o->breakpoint, &bs, objs, nobjs, &bp, err, errlen))
		goto out;
	if (o->until_return) {
		/* the return address is known at a function's entry only */
		const struct snr_elf_symbol *s = NULL;
		for (size_t i = 0; i < nobjs && !s; i++)
			if ((s = snr_elf_lookup(objs[i].elf, bp - objs[i].bias)) && s->addr + objs[i].bias != bp)
				s = NULL;
		if (!s) {
			snr_fmt(err, errlen,
				"--until-return: the breakpoint %s (0x%llx) is not a function's entry; give SYM, not SYM+OFF",
				o->breakpoint, (unsigned long long)bp);
			goto out;
		}
	}
	if (check_code(&r, bp, objs, nobjs, err, errlen))
		goto out;
	if (o->windows) {
		json_t *info = json_object();
		json_object_set_new(info, "windows_requested", json_integer((json_int_t)o->windows));
		json_object_set_new(info, "breakpoint", json_string(o->breakpoint));
		json_object_set_new(info, "breakpoint_address", json_integer((json_int_t)bp));
		json_object_set_new(info, "skip", json_integer((json_int_t)o->skip));
		json_object_set_new(info, "every", json_integer((json_int_t)every));
		json_object_set_new(info, "count", json_integer((json_int_t)o->count));
		if (o->until_return)
			json_object_set_new(info, "until_return", json_true());
		set = snr_set_create(o->out_path, "trace", info, err, errlen);
	}
	if (o->windows ? !set : snr_trace_check_path(o->out_path, err, errlen) != 0)
		goto out;
	struct snr_dbg_stop st;
	if (run_to_hit(&r, bp, o->skip + 1, false, 0, err, errlen))
		goto out;

	/* A launched program stopped at its first instruction had only itself
	 * and the dynamic loader mapped; at the breakpoint its libraries are
	 * there too, so the trace's symbols are read again from /proc. */
	if (!o->elf_path && o->dbg->pid(r.d) > 0) {
		struct loaded_obj *again = NULL;
		size_t nagain = 0;
		if (snr_rec_load_symbols(o->elf_path, o->dbg->pid(r.d), &again, &nagain, msg, sizeof(msg)) == 0 && nagain >= nobjs) {
			snr_rec_free_symbols(objs, nobjs);
			objs = again;
			nobjs = nagain;
		} else {
			snr_rec_free_symbols(again, nagain);
		}
	}
	/* --method: sim where the ISA has a simulator (auto), or stepping */
	const char *method = o->method && *o->method ? o->method : "auto";
	if (strcmp(method, "auto") && strcmp(method, "sim") && strcmp(method, "step")) {
		snr_fmt(err, errlen, "--method %s: expected auto, sim or step", method);
		goto out;
	}
	if (strcmp(method, "step")) {
		r.sim = simulator_for(r.isa);
		if (!r.sim && !strcmp(method, "sim")) {
			snr_fmt(err, errlen, "--method sim: no simulator records %s windows yet; use --method step",
				r.isa->name);
			goto out;
		}
		if (r.sim == &snr_sim_ta1 && plain_rv64(&r))
			r.sim = &snr_sim_unicorn_rv64;
	}
	vdso_find(&r, &vd);
	/* Each window is Algorithm 1's snapshot at its own start: nothing of
	 * an earlier window's bookkeeping carries over, and the simulator
	 * starts empty; between windows the target runs freely. */
	for (uint64_t win = 0; win < nwin; win++) {
	if (win > 0) {
		int64_t more = (int64_t)every - (int64_t)hits_in;
		if (more < 0 || (more == 0 && end_pc != bp)) {
			snr_fmt(err, errlen,
				"window %llu passed breakpoint %s %llu times after its start, beyond --every %llu: the next "
				"window would start inside it; raise --every or lower --count",
				(unsigned long long)win - 1, o->breakpoint, (unsigned long long)hits_in,
				(unsigned long long)every);
			goto out;
		}
		if (more > 0 && run_to_hit(&r, bp, (uint64_t)more, end_pc == bp, hit_now + hits_in, err, errlen))
			goto out;
		hit_now += every;
		snr_ranges_free(&known);
		snr_ranges_free(&written);
		snr_ranges_free(&code_pages);
		readable_pages_reset(&r);
		free(cc.e);
		cc = (struct code_cache){0};
		free(meta);
		meta = NULL;
		t0 = now_s();
		r.requests = 0;
		memset(sum, 0, sizeof(*sum));
		sum->end_reason = "error";
		sum->windows = win;
	}
	const char *out_path = set ? snr_set_window_path(set, win) : o->out_path;
	hits_in = 0;
	nhit_at = 0;
	if (!r.sim && r.sim_made) /* the window before fell back to stepping */
		r.sim = r.sim_made;
	if (r.sim) {
		if (r.simst)
			r.sim_made->destroy(r.simst);
		snr_ahead_free(r.ahead);
		r.ahead = NULL;
		r.sim_made = r.sim;
		r.simst = r.sim->create(config_json, (unsigned)o->chip, r.nchips, err, errlen);
		if (!r.simst)
			goto out;
		if (r.sim == &snr_sim_ta1)
			ta1_grm_set_functional_only(r.simst, true);
		r.ahead = snr_ahead_new(r.dbg, r.d);
	}
	sum->method = r.sim ? "sim" : "step";
	snr_fmt(sum->machine_config, sizeof(sum->machine_config), "%s", said);
	meta = meta_json(&r, bp, hit_now - 1, config_json, objs, nobjs);
	w = snr_trace_create(out_path, meta, err, errlen);
	stride_free(&sd);
	sd = (struct stride){.can_restore = r.sim && r.dbg->abi_version >= 4 && r.dbg->write_regs && r.dbg->write_mem};
	/* --method sim: the simulation's steps reach the journal in one write
	 * per checkpoint, before the target runs them (one write per step cost
	 * about a fifth of an x86-64 recording's CPU) */
	if (w && r.sim)
		snr_trace_writer_hold(w, true);
	if (!w)
		goto out;
	if ((nobjs || vd.elf) && write_trace_symbols(w, objs, nobjs, vd.elf, vd.bias)) {
		snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
		goto out;
	}

	reg_known_reset(&r, reg_known);
	if (!rv) {
	rv = snr_xcalloc(r.niregs, sizeof(*rv));
	prv = snr_xcalloc(r.niregs, sizeof(*prv));
	capbuf = snr_xcalloc(r.niregs, 256); /* captured register bytes of this step */
	postbuf = snr_xcalloc(r.niregs, 256); /* its post-step register bytes */
	prevbuf = snr_xcalloc(1, r.regbuf_len); /* the registers before a system call */
	prevval = snr_xcalloc(r.niregs, sizeof(*prevval));
	for (size_t k = 0; k < r.niregs; k++)
		prevval[k] = r.regval[k] ? prevbuf + (r.regval[k] - r.regbuf) : NULL;
	}
	double last_draw = 0;
	sum->end_reason = "count";
	struct return_point ret = {.sp_reg = -1};
	uint64_t i, start = 0; /* start: where the loop begins, again after a fallback to stepping */
	/* --method sim: the registers the last simulated instruction wrote */
	uint64_t last_written[SNR_ISA_MAX_REGS / 64];
	bool have_last_written = false;
	/* the access query's registers, set once: qval's pointers change, not qval */
	struct snr_isa_regs iv = {.val = r.qval, .chip = (unsigned)o->chip, .nchips = r.nchips};
	if (o->in_window)
		*o->in_window = 1;
window:
	while (nhit_at && hit_at[nhit_at - 1] >= start)
		nhit_at--;
	for (i = start; i < o->count; i++) {
		if (o->stop && *o->stop) {
			sum->end_reason = "interrupted";
			sum->signal = *o->stop;
			break;
		}
		if (r.sim && i > 0) {
			sim_read_step(&r, have_last_written ? last_written : NULL);
		} else {
			if ((i == start ? read_registers : read_step_registers)(&r, err, errlen))
				goto out;
			if (r.sim && (sim_load_registers(&r, err, errlen) ||
				      stride_commit(&r, &sd, i, &known, &written, reg_known, sum, w, err, errlen)))
				goto out;
		}
		uint64_t pc = reg_u64(&r, (size_t)r.pc_reg);
		if (i > 0 && pc == bp) { /* the breakpoint's hits a free run would have counted */
			if (nhit_at == hit_cap)
				hit_at = snr_xrealloc(hit_at, (hit_cap = hit_cap ? 2 * hit_cap : 16) * sizeof(*hit_at));
			hit_at[nhit_at++] = i;
		}
		if (o->until_return && i == 0 && return_point_at_entry(&r, &ret, err, errlen))
			goto out;
		if (o->until_return && i > 0 && pc == ret.pc) {
			if (r.stale[ret.sp_reg] && r.sim)
				sim_read_registers(&r, true, NULL);
			else if (r.stale[ret.sp_reg] && read_registers(&r, err, errlen))
				goto out;
			if (reg_u64(&r, (size_t)ret.sp_reg) >= ret.sp) {
				sum->end_reason = "returned";
				break;
			}
		}
		if (r.sim) {
			snr_ahead_log_pc(r.ahead, i, pc);
			/* a checkpoint every stride (or, without breakpoint hit
			 * counts, at the next loop exit, within 16): the log stays
			 * bounded */
			if (snr_ahead_stride_due(r.ahead, SIM_STRIDE)) {
				int c = verify_or_fall_back(&r, &sd, i, &known, &written, reg_known, sum, &cc, w, err, errlen);
				if (c < 0)
					goto out;
				if (c > 0) { /* from the last good checkpoint by stepping */
					start = sd.good;
					goto window;
				}
			}
		}
		struct snr_trace_step step;
		step_start(&step, i, pc);
		struct code_entry *ce = code_slot(&cc, pc);
		if (!ce->used) {
			r.requests++;
			int n = r.sim ? fetch_code(&r, pc, r.isa->max_insn_bytes, ce->bytes)
				      : read_code(r.dbg, r.d, pc, r.isa->max_insn_bytes, ce->bytes);
			if (n < 0) {
				snr_fmt(err, errlen, "instruction %llu: cannot read code at 0x%llx: %s",
					(unsigned long long)i, (unsigned long long)pc, r.dbg->error(r.d));
				goto out;
			}
			ce->used = 1;
			ce->pc = pc;
			ce->len = (uint8_t)n;
			cc.n++;
			if (r.sim && r.sim != &snr_sim_ta1 &&
			    (sim_load_code_page(&r, &code_pages, &written, pc, err, errlen) ||
			     sim_load_code_page(&r, &code_pages, &written, (pc | 4095) + 1, err, errlen)))
				goto out;
			if (r.sim && r.sim->load_code(r.simst, pc, ce->bytes, ce->len)) {
				snr_fmt(err, errlen, "instruction %llu: loading code at 0x%llx into the simulator: %s",
					(unsigned long long)i, (unsigned long long)pc, r.sim->error(r.simst));
				goto out;
			}
		}
		struct snr_insn_access acc;
		r.isa->access(r.isa_self, ce->bytes, ce->len, pc, &iv, &acc);
		if (needs_stale(&r, &acc)) {
			if (r.sim && i > 0)
				sim_read_registers(&r, true, NULL);
			else if (read_registers(&r, err, errlen))
				goto out;
			r.isa->access(r.isa_self, ce->bytes, ce->len, pc, &iv, &acc);
		}
		/* a call into the vDSO: the target runs it whole */
		const struct vdso_fn *vcall = i > 0 ? vdso_entry(&vd, pc) : NULL;
		if (vcall) {
			vdso_call_access(&r, vcall, &acc);
			step.call = true;
			sum->vdso_calls++;
		}
		if (acc.fault && sum->unmodelled++ == 0) {
			sum->first_unmodelled_index = i;
			sum->first_unmodelled_pc = pc;
			snprintf(sum->first_unmodelled, sizeof(sum->first_unmodelled), "%s", acc.fault);
		}
		if (!acc.length || acc.length > ce->len)
			acc.length = ce->len;
		/* memory the debugger cannot read ([vvar]): the target runs it and
		 * its outputs are recorded after it, as a counter read's are */
		bool unread = false;
		uint64_t unread_at = 0;
		if (!acc.fault && reads_unreadable(&r, &acc, &known, i, pc, &unread, &unread_at, err, errlen))
			goto out;
		if (unread) {
			acc.record_outputs = true;
			step.unread = true;
			sum->unread++;
		}
		/* --method sim: what the simulator cannot compute (system calls,
		 * counters, an access the ISA plugin could not model) runs on the
		 * target, which is brought here first and checked */
		bool on_target = !r.sim || acc.record_outputs || acc.cls == SNR_CLASS_SYSTEM || acc.fault ||
				 (r.x86 && x86_rep_string(ce->bytes, ce->len)) || pod_writes_peer(&r, &acc);
		if (r.sim && on_target) {
			int c = verify_or_fall_back(&r, &sd, i, &known, &written, reg_known, sum, &cc, w, err, errlen);
			if (c < 0)
				goto out;
			if (c > 0) { /* from the last good checkpoint by stepping */
				start = sd.good;
				goto window;
			}
		}
		if (ce->len && !(ce->used & 2)) { /* code goes into the trace once per pc */
			step.code_len = (uint8_t)acc.length;
			memcpy(step.code, ce->bytes, acc.length);
			ce->used |= 2;
		}
		/* inputs: registers */
		step.nregs = reg_known_capture(&r, reg_known, acc.regs_read, capbuf, rv);
		sum->regs_captured += step.nregs;
		step.regs = rv;
		/* inputs: memory not known yet */
		size_t nmiss = 0;
		size_t need = 0;
		for (unsigned m = 0; m < acc.nmem; m++) {
			const struct snr_mem_region *g = &acc.mem[m];
			if (g->write || unread)
				continue;
			uint32_t key = snr_ranges_key(g->space, g->chip);
			for (uint64_t row = 0; row < g->rows; row++) {
				uint64_t a = g->addr + (uint64_t)((int64_t)row * g->stride);
				size_t before = nmiss;
				snr_ranges_missing(&known, key, a, a + g->row_bytes, &miss, &nmiss, &miss_cap);
				if (nmiss > miss_key_cap) {
					miss_key_cap = miss_cap;
					miss_key = snr_xrealloc(miss_key, miss_key_cap * sizeof(*miss_key));
				}
				for (size_t q = before; q < nmiss; q++)
					miss_key[q] = key;
				/* a later row may overlap this one: mark now */
				for (size_t q = before; q < nmiss; q++)
					snr_ranges_add(&known, key, miss[q].lo, miss[q].hi);
			}
		}
		for (size_t q = 0; q < nmiss; q++)
			need += miss[q].hi - miss[q].lo;
		if (need > membuf_cap) {
			membuf_cap = need;
			membuf = snr_xrealloc(membuf, membuf_cap);
		}
		if (nmiss > mv_cap) {
			mv_cap = nmiss;
			mv = snr_xrealloc(mv, mv_cap * sizeof(*mv));
		}
		size_t at = 0;
		for (size_t q = 0; q < nmiss; q++) {
			uint64_t len = miss[q].hi - miss[q].lo;
			char ferr[300];
			r.requests += !r.sim;
			r.bytes_read += r.sim ? 0 : len;
			if (r.sim ? snr_ahead_fetch(r.ahead, miss[q].lo, membuf + at, len, ferr, sizeof(ferr))
				  : r.dbg->read_mem(r.d, miss[q].lo, membuf + at, len)) {
				if (!r.sim)
					snprintf(ferr, sizeof(ferr), "%s", r.dbg->error(r.d));
				snr_fmt(err, errlen, "instruction %llu at 0x%llx: reading its input at 0x%llx (%llu bytes): %s",
					(unsigned long long)i, (unsigned long long)pc, (unsigned long long)miss[q].lo,
					(unsigned long long)len, ferr);
				goto out;
			}
			if (r.sim && r.sim->load_mem(r.simst, (uint8_t)(miss_key[q] >> 16), (uint16_t)(miss_key[q] & 0xffff),
						     miss[q].lo, membuf + at, len)) {
				snr_fmt(err, errlen, "instruction %llu: loading %llu bytes at 0x%llx into the simulator: %s",
					(unsigned long long)i, (unsigned long long)len, (unsigned long long)miss[q].lo,
					r.sim->error(r.simst));
				goto out;
			}
			mv[q] = (struct snr_trace_mem){(uint8_t)(miss_key[q] >> 16), (uint16_t)(miss_key[q] & 0xffff),
						       miss[q].lo, len, membuf + at};
			at += len;
			sum->bytes_captured += len;
		}
		step.nmem = (unsigned)nmiss;
		step.mem = mv;
		/* outputs */
		reg_known_wrote(&r, reg_known, acc.regs_written);
		for (unsigned m = 0; m < acc.nmem; m++) {
			const struct snr_mem_region *g = &acc.mem[m];
			if (!g->write)
				continue;
			uint32_t key = snr_ranges_key(g->space, g->chip);
			for (uint64_t row = 0; row < g->rows; row++) {
				uint64_t a = g->addr + (uint64_t)((int64_t)row * g->stride);
				snr_ranges_add(&known, key, a, a + g->row_bytes);
				snr_ranges_add(&written, key, a, a + g->row_bytes);
				if (r.sim && !on_target)
					stride_wrote(&r, &sd, key, a, a + g->row_bytes);
			}
		}
		/* step */
		if (acc.record_outputs && snr_isa_has_syscall_writes(r.isa))
			memcpy(prevbuf, r.regbuf, r.regbuf_len);
		if (!on_target) {
			struct snr_sim_step ss;
			if (r.sim->step(r.simst, i, &ss)) { /* a wait on a peer's signal: recorder/pod_sim.c */
				int c = sim_failed(&r, &sd, &step, &acc, &known, &written, reg_known, sum, &cc, w, &st, err,
						   errlen);
				if (c < 0)
					goto out;
				if (c > 0) {
					start = sd.good;
					goto window;
				}
				on_target = true; /* the target ran it (st): on as after a system instruction */
			} else {
				st = (struct snr_dbg_stop){.kind = SNR_DBG_STOP_TRAP, .thread = o->chip, .pc = ss.next_pc};
				sim_stepped(&r, &ss, acc.regs_written, last_written);
				have_last_written = true;
			}
		} else {
			uint64_t resume = 0;
			if ((vcall && vdso_return_address(&r, i, pc, &resume, err, errlen)) ||
			    step_insn(&r, &acc, i, pc, resume, &st, err, errlen))
				goto out;
		}
		if (unread && st.kind == SNR_DBG_STOP_SIGNAL) {
			/* not a page only the debugger cannot read: the target could not either */
			snr_fmt(err, errlen,
				"instruction %llu at 0x%llx: reading its input at 0x%llx: the debugger cannot read it, and the "
				"target stopped there on signal %d",
				(unsigned long long)i, (unsigned long long)pc, (unsigned long long)unread_at, st.code);
			goto out;
		}
		/* System calls and counters: a simulator cannot recompute their
		 * results, so their register outputs are recorded after the step. */
		if (acc.record_outputs && st.kind == SNR_DBG_STOP_TRAP) {
			if (read_step_registers(&r, err, errlen))
				goto out;
			bool all = true; /* the outputs came with the cheap read */
			for (size_t k = 0; k < r.niregs; k++)
				if (snr_regset_has(acc.regs_written, (unsigned)k) && r.map[k] >= 0 && r.stale[k])
					all = false;
			if (!all && read_registers(&r, err, errlen))
				goto out;
			unsigned np = 0;
			for (size_t k = 0; k < r.niregs; k++)
				if (snr_regset_has(acc.regs_written, (unsigned)k) && r.regval[k] &&
				    (step.call || (int)k != r.pc_reg)) {
					memcpy(postbuf + k * 256, r.regval[k], r.iregs[k].size);
					prv[np].reg = (uint16_t)k;
					prv[np].val = postbuf + k * 256;
					np++;
				}
			step.npost_regs = np;
			step.post_regs = prv;
			/* and the memory it wrote, where the ISA knows the call */
			if (snr_isa_has_syscall_writes(r.isa)) {
				struct snr_isa_regs before = {.val = prevval, .chip = (unsigned)o->chip, .nchips = r.nchips};
				struct snr_isa_regs after = {.val = r.regval, .chip = (unsigned)o->chip, .nchips = r.nchips};
				struct snr_mem_region wr[SNR_ISA_MAX_MEM];
				unsigned nw = vcall ? vdso_call_writes(&r, vcall, prevval, r.regval, wr, SNR_ISA_MAX_MEM)
						    : r.isa->syscall_writes(r.isa_self, ce->bytes, ce->len, pc, &before,
									    &after, wr, SNR_ISA_MAX_MEM);
				size_t need = 0;
				for (unsigned q = 0; q < nw; q++)
					need += wr[q].row_bytes;
				if (need > pmembuf_cap)
					pmembuf = snr_xrealloc(pmembuf, pmembuf_cap = need);
				unsigned nm = 0;
				size_t at = 0;
				for (unsigned q = 0; q < nw; q++) {
					uint64_t len = wr[q].row_bytes;
					if (r.dbg->read_mem(r.d, wr[q].addr, pmembuf + at, len)) {
						snr_fmt(err, errlen,
							"instruction %llu at 0x%llx: reading the %llu bytes the system call "
							"wrote at 0x%llx: %s",
							(unsigned long long)i, (unsigned long long)pc, (unsigned long long)len,
							(unsigned long long)wr[q].addr, r.dbg->error(r.d));
						goto out;
					}
					uint32_t key = snr_ranges_key(wr[q].space, wr[q].chip);
					pmv[nm++] = (struct snr_trace_mem){wr[q].space, wr[q].chip, wr[q].addr, len,
									   pmembuf + at};
					snr_ranges_add(&known, key, wr[q].addr, wr[q].addr + len);
					snr_ranges_add(&written, key, wr[q].addr, wr[q].addr + len);
					at += len;
					sum->bytes_post += len;
				}
				step.npost_mem = nm;
				step.post_mem = pmv;
			}
		}
		if (r.sim && on_target) {
			sum->target_instructions++;
			snr_ahead_target_stepped(r.ahead);
			/* the registers, unless the outputs' read above left them all current */
			bool current = acc.record_outputs && st.kind == SNR_DBG_STOP_TRAP && registers_current(&r);
			if ((st.kind == SNR_DBG_STOP_TRAP || st.kind == SNR_DBG_STOP_SIGNAL) &&
			    ((!current && read_registers(&r, err, errlen)) || sim_load_registers(&r, err, errlen)))
				goto out;
			memset(last_written, 0, sizeof(last_written)); /* regbuf is the target's, as the simulator's */
			have_last_written = true;
			/* and the memory it wrote, from the target: what a system
			 * call wrote was read as post memory above */
			for (unsigned q = 0; q < step.npost_mem; q++)
				if (r.sim->load_mem(r.simst, step.post_mem[q].space, step.post_mem[q].chip,
						    step.post_mem[q].addr, step.post_mem[q].data, step.post_mem[q].len)) {
					snr_fmt(err, errlen, "instruction %llu: loading what the system call wrote at 0x%llx into "
						"the simulator: %s", (unsigned long long)i,
						(unsigned long long)step.post_mem[q].addr, r.sim->error(r.simst));
					goto out;
				}
			for (unsigned m = 0; m < acc.nmem && st.kind == SNR_DBG_STOP_TRAP; m++) {
				const struct snr_mem_region *g = &acc.mem[m];
				for (uint64_t row = 0; g->write && row < g->rows; row++) {
					uint64_t a = g->addr + (uint64_t)((int64_t)row * g->stride);
					uint8_t *tmp = snr_xmalloc(g->row_bytes ? g->row_bytes : 1);
					r.requests++;
					int bad = r.dbg->read_mem(r.d, a, tmp, g->row_bytes) ||
						  r.sim->load_mem(r.simst, g->space, g->chip, a, tmp, g->row_bytes);
					free(tmp);
					if (bad) {
						snr_fmt(err, errlen, "instruction %llu at 0x%llx: loading the %llu bytes it wrote at "
							"0x%llx into the simulator failed", (unsigned long long)i,
							(unsigned long long)pc, (unsigned long long)g->row_bytes,
							(unsigned long long)a);
						goto out;
					}
				}
			}
		}
		if (snr_trace_add_step(w, &step)) {
			snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
			goto out;
		}
		if (r.sim && step.code_len)
			stride_emitted(&sd, pc);
		sum->instructions = i + 1;
		/* a step the target ran: the target and the simulation agree after it */
		if (r.sim && on_target && st.kind == SNR_DBG_STOP_TRAP &&
		    stride_commit(&r, &sd, i + 1, &known, &written, reg_known, sum, w, err, errlen))
			goto out;
		if (st.kind == SNR_DBG_STOP_EXITED || st.kind == SNR_DBG_STOP_KILLED) {
			sum->end_reason = st.kind == SNR_DBG_STOP_EXITED ? "exited" : "killed";
			sum->exit_code = st.code;
			break;
		}
		if (st.kind == SNR_DBG_STOP_SIGNAL) {
			sum->end_reason = "fault";
			sum->exit_code = st.code;
			break;
		}
		if (o->progress && (i & 255) == 0 && now_s() - last_draw > 0.2) {
			progress(i + 1, o->count, t0, total_requests(&r), total_fetched(&r, sum), false);
			last_draw = now_s();
		}
	}
	/* --method sim: the target runs the window for real to its end, and
	 * its registers and written memory must be the simulation's */
	bool sim_end = r.sim && (!strcmp(sum->end_reason, "count") || !strcmp(sum->end_reason, "returned") ||
				 !strcmp(sum->end_reason, "fault") || !strcmp(sum->end_reason, "interrupted"));
	if (sim_end) {
		snr_ahead_log_pc(r.ahead, sum->instructions, st.pc);
		int c = verify_or_fall_back(&r, &sd, sum->instructions, &known, &written, reg_known, sum, &cc, w, err,
					    errlen);
		if (c < 0)
			goto out;
		if (c > 0) { /* from the last good checkpoint by stepping */
			start = sd.good;
			goto window;
		}
	}
	if (o->progress)
		progress(sum->instructions, o->count, t0, total_requests(&r), total_fetched(&r, sum), true);
	/* digest: final registers and the written memory, if the target is still there */
	target_there = !strcmp(sum->end_reason, "count") || !strcmp(sum->end_reason, "returned") ||
			    !strcmp(sum->end_reason, "fault") || !strcmp(sum->end_reason, "interrupted");
	if (target_there) {
		if (read_registers(&r, err, errlen))
			goto out;
		end_pc = reg_u64(&r, (size_t)r.pc_reg);
		hits_in = nhit_at + (end_pc == bp);
		size_t nregions = 0;
		for (size_t l = 0; l < written.n; l++)
			nregions += written.lists[l].n;
		struct snr_trace_mem *dm = snr_xcalloc(nregions ? nregions : 1, sizeof(*dm));
		uint8_t **bufs = snr_xcalloc(nregions ? nregions : 1, sizeof(*bufs));
		size_t k = 0;
		int bad = 0;
		for (size_t l = 0; l < written.n && !bad; l++) {
			const struct snr_range_list *lst = &written.lists[l];
			for (size_t q = 0; q < lst->n && !bad; q++) {
				uint64_t len = lst->r[q].hi - lst->r[q].lo;
				bufs[k] = snr_xmalloc(len);
				if (sim_end) {
					bad = verify_written(&r, lst->key, lst->r[q].lo, len, bufs[k], sum->instructions,
							     "the end state", err, errlen);
				} else if (r.requests++, r.dbg->read_mem(r.d, lst->r[q].lo, bufs[k], len)) {
					snr_fmt(err, errlen, "reading the end state at 0x%llx: %s",
						(unsigned long long)lst->r[q].lo, r.dbg->error(r.d));
					bad = 1;
				}
				dm[k] = (struct snr_trace_mem){(uint8_t)(lst->key >> 16), (uint16_t)(lst->key & 0xffff),
							       lst->r[q].lo, len, bufs[k]};
				k++;
			}
		}
		const uint8_t **final = snr_xcalloc(r.niregs, sizeof(*final));
		for (size_t q = 0; q < r.niregs; q++)
			final[q] = r.regval[q];
		int drc = bad ? -1 : snr_trace_write_digest(w, final, k, dm);
		for (size_t q = 0; q < k; q++)
			free(bufs[q]);
		free(bufs);
		free(dm);
		free(final);
		if (drc) {
			if (!bad)
				snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
			goto out;
		}
	}
	sum->bytes_written = snr_ranges_bytes(&written);
	sum->seconds = now_s() - t0;
	sum->requests = total_requests(&r);
	sum->bytes_fetched = total_fetched(&r, sum);
	if (r.ahead) {
		const struct snr_ahead_stats *as = snr_ahead_stats(r.ahead);
		sum->checkpoints = as->checkpoints;
		sum->target_steps = as->target_steps;
		sum->target_conts = as->target_conts;
	}
	{
		json_t *e = json_object();
		json_object_set_new(e, "instructions", json_integer((json_int_t)sum->instructions));
		json_object_set_new(e, "reason", json_string(sum->end_reason));
		if (sum->signal)
			json_object_set_new(e, "signal", json_integer(sum->signal));
		else if (strcmp(sum->end_reason, "count") && strcmp(sum->end_reason, "returned"))
			json_object_set_new(e, "code", json_integer(sum->exit_code));
		json_object_set_new(e, "registers_captured", json_integer((json_int_t)sum->regs_captured));
		json_object_set_new(e, "bytes_captured", json_integer((json_int_t)sum->bytes_captured));
		json_object_set_new(e, "bytes_written", json_integer((json_int_t)sum->bytes_written));
		json_object_set_new(e, "bytes_by_system_calls", json_integer((json_int_t)sum->bytes_post));
		if (sum->unread)
			json_object_set_new(e, "unread_loads", json_integer((json_int_t)sum->unread));
		if (sum->vdso_calls)
			json_object_set_new(e, "vdso_calls", json_integer((json_int_t)sum->vdso_calls));
		json_object_set_new(e, "seconds", json_real(sum->seconds));
		json_object_set_new(e, "method", json_string(sum->method));
		json_object_set_new(e, "debugger_requests", json_integer((json_int_t)sum->requests));
		json_object_set_new(e, "bytes_fetched", json_integer((json_int_t)sum->bytes_fetched));
		if (r.ahead) {
			json_t *v = json_object();
			json_object_set_new(v, "checkpoints", json_integer((json_int_t)sum->checkpoints));
			json_object_set_new(v, "verified_to", json_integer((json_int_t)(sum->fell_back ? sum->fallback_at
										 : sim_end ? sum->instructions
											   : snr_ahead_target_index(r.ahead))));
			json_object_set_new(v, "target_steps", json_integer((json_int_t)sum->target_steps));
			json_object_set_new(v, "target_continues", json_integer((json_int_t)sum->target_conts));
			json_object_set_new(v, "target_instructions", json_integer((json_int_t)sum->target_instructions));
			if (sum->fell_back) {
				char fb[600];
				snprintf(fb, sizeof(fb),
					 "instructions %llu on recorded by stepping from the checkpoint there; the mismatch was "
					 "found at the checkpoint at instruction %llu: %s",
					 (unsigned long long)sum->fallback_at, (unsigned long long)sum->fallback_detected_at,
					 sum->fallback_reason);
				json_object_set_new(v, "fallback", json_string(fb));
				json_object_set_new(v, "fallback_at", json_integer((json_int_t)sum->fallback_at));
				json_object_set_new(v, "fallback_detected_at",
						    json_integer((json_int_t)sum->fallback_detected_at));
			} else {
				json_object_set_new(v, "fallback", json_null());
			}
			json_object_set_new(e, "verification", v);
		}
		char *ej = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(e);
		int frc = snr_trace_finish(w, ej);
		w = NULL;
		free(ej);
		if (frc) {
			snr_fmt(err, errlen, "writing %s failed", out_path);
			goto out;
		}
		struct stat sb;
		if (stat(out_path, &sb) == 0)
			sum->trace_bytes = (uint64_t)sb.st_size;
	}
	if (set) {
		json_t *e = json_object();
		json_object_set_new(e, "hit", json_integer((json_int_t)hit_now));
		json_object_set_new(e, "instructions", json_integer((json_int_t)sum->instructions));
		json_object_set_new(e, "end", json_string(sum->end_reason));
		if (snr_set_add(set, win, e, err, errlen))
			goto out;
		sum->windows = win + 1;
		if (o->window_done)
			o->window_done(o->window_ctx, win, out_path, sum);
		if (sum->signal || (win + 1 < nwin && !target_there)) {
			set_end = sum->signal ? "interrupted" : sum->end_reason;
			break;
		}
	}
	}
	if (set) {
		if (set_end) {
			sum->set_path = snr_set_writer_dir(set);
			snr_fmt(err, errlen, "the window%s ended by %s after %llu of %llu windows; the set %s is incomplete "
				"(its readers need --allow-truncated)", sum->windows == 1 ? "" : "s", set_end,
				(unsigned long long)sum->windows, (unsigned long long)nwin, snr_set_writer_dir(set));
			snr_warn("record: %s", err);
			snr_set_abandon(set, set_end);
			set = NULL;
			if (!sum->signal)
				goto out;
		} else {
			sum->set_path = o->out_path;
			int src = snr_set_finish(set, "complete", err, errlen);
			set = NULL;
			if (src)
				goto out;
		}
	}
	if (target_there) {
		if (o->kill_after)
			r.dbg->kill(r.d);
		else
			r.dbg->detach(r.d);
	}
	rc = 0;
out:
	free(hit_at);
	if (set) {
		char werr[200];
		snr_fmt(werr, sizeof(werr), "the recorder failed in window %llu", (unsigned long long)sum->windows);
		if (sum->windows) {
			size_t l = strlen(err);
			snr_fmt(err + l, errlen - l, "; the %llu finished window%s in %s", (unsigned long long)sum->windows,
				sum->windows == 1 ? " is" : "s are", snr_set_writer_dir(set));
		}
		snr_set_abandon(set, werr);
	}
	free(capbuf);
	free(postbuf);
	free(prevbuf);
	free(prevval);
	free(pmembuf);
	stride_free(&sd);
	if (w) {
		if (sum->instructions) {
			size_t l = strlen(err);
			snr_fmt(err + l, errlen - l, "; the %llu instructions recorded are in %s",
				(unsigned long long)sum->instructions, snr_trace_writer_journal(w));
		}
		snr_trace_abandon(w);
	}
	if (r.d && rc && r.halted_why)
		leave_halted(&r, r.halted_why, err, errlen);
	if (r.d)
		r.dbg->close(r.d);
	if (r.isa && r.isa_self)
		r.isa->destroy(r.isa_self);
	snr_rec_free_symbols(objs, nobjs);
	snr_ranges_free(&known);
	snr_ranges_free(&written);
	snr_ranges_free(&code_pages);
	readable_pages_reset(&r);
	vdso_free(&vd);
	free(cc.e);
	free(miss);
	free(miss_key);
	free(membuf);
	free(meta);
	free(config_json);
	free(rv);
	free(prv);
	free(mv);
	free(r.regbuf);
	free(r.map);
	free(r.regval);
	free(r.qval);
	free(r.stale);
	free(r.sim_none);
	free(r.got);
	if (r.simst)
		r.sim_made->destroy(r.simst);
	snr_ahead_free(r.ahead);
	return rc;
}
