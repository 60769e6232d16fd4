/*
 * ta1_machine.c: the TA1 device's interpreter, memories and program loader.
 *
 * Speed comes from a decode cache: every 4-byte slot of core memory has an
 * 8-byte predecoded entry (op, rd, rs1, rs2, imm), filled the first time the
 * slot executes (the cache is calloc'ed, so untouched parts cost no memory).
 * Stores below the highest decoded address invalidate the entries they
 * overwrite, so self-modifying code stays correct. Breakpoints are entries
 * whose op is BREAK: a run without breakpoints pays nothing for them.
 * Xta instructions are rare and heavy; they leave the fast path and go
 * through the operand-access query, so what the device does and what the
 * query reports cannot drift apart.
 *
 * Copies are deferred where the program would not see the difference. A
 * DMA of at least LAZY_MIN bytes from HBM into VMEM records its source and
 * destination (a lazy copy) instead of moving the bytes; ta.mxu.load copies
 * nothing either: the MXU refers to the bytes it loaded (mxu_ref), which for
 * a tile a lazy copy is filling are the copy's HBM source. Everything that
 * reads or writes memory other than scalar loads and stores (which reach
 * core memory only, never part of a lazy copy or a tile) goes through
 * before_access() first: a read of a lazy copy's destination, or a write to
 * its source or to part of its destination, performs the copy then (a write
 * over the whole destination just drops it); a write to the bytes an MXU
 * refers to copies them into the chip's own weight buffer first (mxu_own),
 * as does reading or writing that buffer by address. A serving loop that
 * streams weight tiles from HBM, loads each into the MXU and reuses the VMEM
 * buffer for the next tile then moves no tile bytes at all. The device
 * and the simulator both run this file, so they behave the same.
 *
 * A lazy copy belongs to the chip whose VMEM it fills, and an MXU's
 * reference to its chip: a vector or matrix instruction reaches its own
 * chip's VMEM and weight buffer only, so it checks its own chip's copies and
 * reference (before_access_chip) and touches no other chip's state; a DMA
 * or a debugger access, which may reach any chip's HBM, checks every chip's
 * (before_access). Chips whose next instructions are neither DMAs nor waits
 * may so run on threads at once (the pod replay, replayer/pod.c).
 */
#include "ta1_machine.h"

#include <errno.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "isa/ta1/ta1_xta.h"
#include "lib/snr_util.h"

#define EM_RISCV_ 243
#define EF_RISCV_RVC_ 0x1
#define MAX_BREAKPOINTS 64
#define LAZY_MAX 16          /* lazy copies pending at once (more are done at once) */
#define LAZY_MIN (4u << 10) /* smaller DMAs copy at once */
#define QUANTUM (1u << 16)

/* Cache ops: 0 is "not decoded yet" so that calloc'ed memory is a valid,
 * empty cache; a TA1 op is stored as op + 1. */
enum {
	CO_UNDECODED = 0,
	CO_BREAK = TA1_OP_COUNT + 1,
	CO_ILLEGAL = TA1_OP_COUNT + 2,
};
#define C(id) (TA1_OP_##id + 1)

struct dinsn {
	uint8_t op;
	uint8_t rd, rs1, rs2;
	int32_t imm;
};

struct ta1_chip {
	uint64_t x[32];
	uint64_t pc;
	uint64_t flags[TA1_NUM_FLAGS];
	uint64_t instret;
	uint64_t model_cycle; /* what the cycle CSR reads when model_clock is set */
	bool model_clock;
	struct ta1_machine *m;
	unsigned id;
	enum ta1_chip_state state;
	bool blocked; /* at a ta.wait whose flag has too few completions */
	int exit_code;
	uint8_t *core;
	uint8_t *vmem;
	uint8_t *hbm;
	float *mxu_w;
	const float *mxu_ref; /* the bytes the MXU's weights are (VMEM or HBM), or NULL: in mxu_w */
	/* DMAs from HBM into this chip's VMEM whose bytes are not moved yet: dst reads as src */
	struct lazy_copy {
		uint8_t *dst;
		const uint8_t *src;
		uint64_t len;
	} lazy[LAZY_MAX];
	unsigned nlazy;
	struct dinsn *cache;
	uint64_t code_hi; /* one past the highest decoded core offset */
	uint64_t bp[MAX_BREAKPOINTS];
	unsigned nbp;
	struct ta1_chip_stats stats;
	/* ta1_chip_step_known: the instruction at pc decoded and its access, as
	 * the caller computed them for this step (NULL otherwise) */
	const struct ta1_insn *known_in;
	const struct ta1_access *known_a;
	char fault[2048]; /* a pod-wide deadlock names every chip's wait */
};

struct ta1_machine {
	struct snr_config cfg;
	unsigned nchips;
	bool stats;
	int out_fd, err_fd;
	const struct snr_elf *elf;
	struct ta1_chip *chips;
	/* --test-dma: a write into one chip's memory at one instruction count */
	bool inject_armed;
	unsigned inject_chip;
	uint64_t inject_at, inject_addr, inject_len;
};

static uint8_t op_class[TA1_OP_COUNT + 3];
/* by TA1 op: an ALU, multiply, divide, load, store, branch or jump
 * instruction (one of the interpreter's cases that need no call) */
static bool op_simple[TA1_OP_COUNT + 1];

/* The tables above, filled once: machines are made on several threads at
 * once (a pod's chips recorded side by side, replays on threads). */
static pthread_once_t op_tables_once = PTHREAD_ONCE_INIT;

static void fill_op_tables(void)
{
	for (unsigned op = 0; op < TA1_OP_COUNT; op++)
		op_class[op + 1] = (uint8_t)ta1_insn_table[op].cls;
	for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
		enum ta1_class cls = ta1_insn_table[op].cls;
		op_simple[op] = cls == TA1_CLASS_ALU || cls == TA1_CLASS_MUL || cls == TA1_CLASS_DIV ||
				cls == TA1_CLASS_LOAD || cls == TA1_CLASS_STORE || cls == TA1_CLASS_BRANCH ||
				cls == TA1_CLASS_JUMP;
	}
}

static void *alloc_zeroed(uint64_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
		       -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

struct ta1_machine *ta1_machine_new(const struct snr_config *cfg, char *err, size_t errlen)
{
	struct ta1_machine *m = snr_xcalloc(1, sizeof(*m));
	m->cfg = *cfg;
	m->nchips = (unsigned)cfg->chips;
	m->out_fd = 1;
	m->err_fd = 2;
	m->chips = snr_xcalloc(m->nchips, sizeof(*m->chips));
	pthread_once(&op_tables_once, fill_op_tables);
	for (unsigned i = 0; i < m->nchips; i++) {
		struct ta1_chip *c = &m->chips[i];
		c->m = m;
		c->id = i;
		c->core = alloc_zeroed(cfg->core_memory_bytes);
		c->vmem = alloc_zeroed(cfg->vmem_bytes);
		c->hbm = alloc_zeroed(cfg->hbm_bytes);
		c->mxu_w = alloc_zeroed(TA1_MXUW_SIZE);
		c->cache = alloc_zeroed(cfg->core_memory_bytes / 4 * sizeof(struct dinsn));
		if (!c->core || !c->vmem || !c->hbm || !c->mxu_w || !c->cache) {
			snr_fmt(err, errlen, "cannot map memory for chip %u (HBM %llu bytes): %s", i,
				(unsigned long long)cfg->hbm_bytes, strerror(errno));
			ta1_machine_free(m);
			return NULL;
		}
	}
	return m;
}

void ta1_machine_free(struct ta1_machine *m)
{
	if (!m)
		return;
	for (unsigned i = 0; i < m->nchips; i++) {
		struct ta1_chip *c = &m->chips[i];
		if (c->core)
			munmap(c->core, m->cfg.core_memory_bytes);
		if (c->vmem)
			munmap(c->vmem, m->cfg.vmem_bytes);
		if (c->hbm)
			munmap(c->hbm, m->cfg.hbm_bytes);
		if (c->mxu_w)
			munmap(c->mxu_w, TA1_MXUW_SIZE);
		if (c->cache)
			munmap(c->cache, m->cfg.core_memory_bytes / 4 * sizeof(struct dinsn));
	}
	free(m->chips);
	free(m);
}

unsigned ta1_machine_nchips(const struct ta1_machine *m) { return m->nchips; }
struct ta1_chip *ta1_machine_chip(struct ta1_machine *m, unsigned i) { return i < m->nchips ? &m->chips[i] : NULL; }
const struct snr_config *ta1_machine_config(const struct ta1_machine *m) { return &m->cfg; }
void ta1_machine_set_stats(struct ta1_machine *m, bool on) { m->stats = on; }

void ta1_machine_inject_write(struct ta1_machine *m, unsigned chip, uint64_t at_instret, uint64_t addr, uint64_t len)
{
	m->inject_armed = chip < m->nchips && len > 0;
	m->inject_chip = chip;
	m->inject_at = at_instret;
	m->inject_addr = addr;
	m->inject_len = len;
}

/* The instructions chip c may run before the injected write is due (n if none is). */
static uint64_t inject_budget(const struct ta1_chip *c, uint64_t n)
{
	const struct ta1_machine *m = c->m;
	if (!m->inject_armed || c->id != m->inject_chip || c->instret >= m->inject_at)
		return n;
	return m->inject_at - c->instret < n ? m->inject_at - c->instret : n;
}

/* The write lands once chip c has retired inject_at instructions. */
static void inject_due(struct ta1_chip *c)
{
	struct ta1_machine *m = c->m;
	if (!m->inject_armed || c->id != m->inject_chip || c->instret != m->inject_at)
		return;
	m->inject_armed = false;
	for (uint64_t i = 0; i < m->inject_len; i++) {
		uint8_t b = (uint8_t)(0xa5 ^ i);
		ta1_chip_write_mem(c, m->inject_addr + i, &b, 1);
	}
}
void ta1_machine_set_output(struct ta1_machine *m, int out_fd, int err_fd) { m->out_fd = out_fd; m->err_fd = err_fd; }
enum ta1_chip_state ta1_chip_state(const struct ta1_chip *c) { return c->state; }
int ta1_chip_exit_code(const struct ta1_chip *c) { return c->exit_code; }
const char *ta1_chip_fault(const struct ta1_chip *c) { return c->fault; }
unsigned ta1_chip_id(const struct ta1_chip *c) { return c->id; }
const struct ta1_chip_stats *ta1_chip_stats(const struct ta1_chip *c) { return &c->stats; }

void ta1_chip_query_ctx(const struct ta1_chip *c, struct ta1_query_ctx *q)
{
	q->x = c->x;
	q->chip = c->id;
	q->nchips = c->m->nchips;
	q->core_size = c->m->cfg.core_memory_bytes;
	q->vmem_size = c->m->cfg.vmem_bytes;
	q->hbm_size = c->m->cfg.hbm_bytes;
}

/* The weights are copied into the chip's own buffer, and the bytes they
 * were loaded from are no longer referred to. */
static void mxu_own(struct ta1_chip *c)
{
	if (c->mxu_ref) {
		memcpy(c->mxu_w, c->mxu_ref, TA1_MXUW_SIZE);
		c->mxu_ref = NULL;
	}
}

static const float *mxu_weights(const struct ta1_chip *c) { return c->mxu_ref ? c->mxu_ref : c->mxu_w; }

static inline bool overlaps(const uint8_t *a, uint64_t alen, const uint8_t *b, uint64_t blen)
{
	return a < b + blen && b < a + alen;
}

/* Performs (or, done_by_write, drops) chip c's lazy copy i. */
static void lazy_finish(struct ta1_chip *c, unsigned i, bool done_by_write)
{
	struct lazy_copy *l = &c->lazy[i];
	if (!done_by_write)
		memcpy(l->dst, l->src, l->len);
	*l = c->lazy[--c->nlazy];
}

/* Called before the bytes [p, p+len) are read or written by anything but a
 * scalar load or store: chip c's lazy copies and MXU reference. */
static void before_access_slow(struct ta1_chip *c, const uint8_t *p, uint64_t len, bool write)
{
	for (unsigned i = 0; i < c->nlazy;) {
		const struct lazy_copy *l = &c->lazy[i];
		if (overlaps(p, len, l->dst, l->len))
			lazy_finish(c, i, write && p <= l->dst && p + len >= l->dst + l->len);
		else if (write && overlaps(p, len, l->src, l->len))
			lazy_finish(c, i, false);
		else
			i++;
	}
	if (write && c->mxu_ref && overlaps(p, len, (const uint8_t *)c->mxu_ref, TA1_MXUW_SIZE))
		mxu_own(c);
}

/* For an access to chip c's own VMEM or weight buffer (a vector or matrix
 * instruction): no other chip's copy or reference can involve those bytes. */
static inline void before_access_chip(struct ta1_chip *c, const void *p, uint64_t len, bool write)
{
	if (c->nlazy || (write && c->mxu_ref))
		before_access_slow(c, p, len, write);
}

/* For an access that may reach any chip's memory (a DMA, the debugger). */
static void before_access(struct ta1_machine *m, const void *p, uint64_t len, bool write)
{
	for (unsigned i = 0; i < m->nchips; i++)
		before_access_chip(&m->chips[i], p, len, write);
}

void ta1_machine_settle(struct ta1_machine *m)
{
	for (unsigned i = 0; i < m->nchips; i++) {
		struct ta1_chip *c = &m->chips[i];
		while (c->nlazy)
			lazy_finish(c, c->nlazy - 1, false);
		mxu_own(c);
	}
}

/* The MXU refers to the 64 KiB at p (its chip's VMEM): to a lazy copy's
 * source if one fills those bytes, else to p once it holds its bytes. */
static void mxu_refer(struct ta1_chip *c, const uint8_t *p)
{
	const uint8_t *at = NULL;
	for (unsigned i = 0; i < c->nlazy && !at; i++) {
		const struct lazy_copy *l = &c->lazy[i];
		if (p >= l->dst && p + TA1_MXUW_SIZE <= l->dst + l->len)
			at = l->src + (p - l->dst);
	}
	if (!at) {
		before_access_chip(c, p, TA1_MXUW_SIZE, false);
		at = p;
	}
	c->mxu_ref = (const float *)at;
}

/* Host pointer for [addr, addr+len) if it lies wholly in one memory (the
 * weight buffer by address: its own bytes, copied in first if referred). */
static uint8_t *mem_ptr(struct ta1_chip *c, uint64_t addr, uint64_t len)
{
	struct ta1_query_ctx q;
	unsigned owner;
	uint64_t off;
	ta1_chip_query_ctx(c, &q);
	switch (ta1_classify(&q, addr, len, &owner, &off)) {
	case TA1_SPACE_CORE:
		return c->core + off;
	case TA1_SPACE_VMEM:
		return c->vmem + off;
	case TA1_SPACE_MXUW:
		mxu_own(c);
		return (uint8_t *)c->mxu_w + off;
	case TA1_SPACE_HBM:
		return c->m->chips[owner].hbm + off;
	case TA1_SPACE_NONE:
		break;
	}
	return NULL;
}

static void invalidate(struct ta1_chip *c, uint64_t off, uint64_t len)
{
	if (off >= c->code_hi)
		return;
	for (uint64_t w = off >> 2; w <= (off + len - 1) >> 2; w++)
		if (c->cache[w].op != CO_BREAK)
			c->cache[w].op = CO_UNDECODED;
}

/* Host pointer for addr and the bytes from there to the end of its memory. */
static uint8_t *mem_span(struct ta1_chip *c, uint64_t addr, uint64_t *avail)
{
	struct ta1_query_ctx q;
	unsigned owner;
	uint64_t off, size;
	ta1_chip_query_ctx(c, &q);
	enum ta1_space sp = ta1_classify(&q, addr, 1, &owner, &off);
	switch (sp) {
	case TA1_SPACE_CORE: size = q.core_size; break;
	case TA1_SPACE_VMEM: size = q.vmem_size; break;
	case TA1_SPACE_MXUW: size = TA1_MXUW_SIZE; break;
	case TA1_SPACE_HBM: size = q.hbm_size; break;
	default: return NULL;
	}
	*avail = size - off;
	return mem_ptr(c, addr, 1);
}

static size_t chip_mem_io(struct ta1_chip *c, uint64_t addr, void *buf, const void *src, size_t len)
{
	size_t done = 0;
	while (done < len) {
		uint64_t avail;
		uint8_t *p = mem_span(c, addr + done, &avail);
		if (!p)
			break;
		size_t piece = len - done < avail ? len - done : (size_t)avail;
		before_access(c->m, p, piece, src != NULL);
		if (src) {
			memcpy(p, (const uint8_t *)src + done, piece);
			if (p >= c->core && p < c->core + c->m->cfg.core_memory_bytes)
				invalidate(c, (uint64_t)(p - c->core), piece);
		} else {
			memcpy((uint8_t *)buf + done, p, piece);
		}
		done += piece;
	}
	return done;
}

size_t ta1_chip_read_mem(struct ta1_chip *c, uint64_t addr, void *buf, size_t len)
{
	return chip_mem_io(c, addr, buf, NULL, len);
}

size_t ta1_chip_write_mem(struct ta1_chip *c, uint64_t addr, const void *buf, size_t len)
{
	return chip_mem_io(c, addr, NULL, buf, len);
}

uint64_t ta1_chip_get_reg(const struct ta1_chip *c, unsigned r)
{
	if (r < 32)
		return r ? c->x[r] : 0;
	if (r == TA1_REG_PC)
		return c->pc;
	if (r >= TA1_REG_FLAG0 && r < TA1_REG_FLAG0 + TA1_NUM_FLAGS)
		return c->flags[r - TA1_REG_FLAG0];
	switch (r) {
	case TA1_REG_CYCLE:
		return c->model_clock ? c->model_cycle : c->instret;
	case TA1_REG_INSTRET:
		return c->instret;
	case TA1_REG_CHIPID:
		return c->id;
	case TA1_REG_NCHIPS:
		return c->m->nchips;
	}
	return 0;
}

const uint8_t *ta1_chip_core(const struct ta1_chip *c, uint64_t *size)
{
	*size = c->m->cfg.core_memory_bytes;
	return c->core;
}

void ta1_chip_set_cycle(struct ta1_chip *c, uint64_t cycle)
{
	c->model_clock = true;
	c->model_cycle = cycle;
}

int ta1_chip_set_reg(struct ta1_chip *c, unsigned r, uint64_t v)
{
	if (r == 0)
		return v == 0 ? 0 : -1;
	if (r < 32) {
		c->x[r] = v;
		return 0;
	}
	if (r == TA1_REG_PC) {
		c->pc = v;
		return 0;
	}
	if (r >= TA1_REG_FLAG0 && r < TA1_REG_FLAG0 + TA1_NUM_FLAGS) {
		c->flags[r - TA1_REG_FLAG0] = v;
		return 0;
	}
	if (r == TA1_REG_CYCLE || r == TA1_REG_INSTRET) {
		c->instret = v;
		return 0;
	}
	return -1;
}

bool ta1_chip_has_breakpoint(const struct ta1_chip *c, uint64_t addr)
{
	for (unsigned i = 0; i < c->nbp; i++)
		if (c->bp[i] == addr)
			return true;
	return false;
}

int ta1_chip_set_breakpoint(struct ta1_chip *c, uint64_t addr)
{
	if (ta1_chip_has_breakpoint(c, addr))
		return 0;
	if (c->nbp == MAX_BREAKPOINTS)
		return -1;
	c->bp[c->nbp++] = addr;
	uint64_t off = addr - TA1_CORE_BASE;
	if (off < c->m->cfg.core_memory_bytes && !(addr & 3)) {
		c->cache[off >> 2].op = CO_BREAK;
		if (off + 4 > c->code_hi)
			c->code_hi = off + 4;
	}
	return 0;
}

int ta1_chip_clear_breakpoint(struct ta1_chip *c, uint64_t addr)
{
	for (unsigned i = 0; i < c->nbp; i++) {
		if (c->bp[i] != addr)
			continue;
		c->bp[i] = c->bp[--c->nbp];
		uint64_t off = addr - TA1_CORE_BASE;
		if (off < c->m->cfg.core_memory_bytes && !(addr & 3))
			c->cache[off >> 2].op = CO_UNDECODED;
		return 0;
	}
	return -1;
}

static enum ta1_stop fault(struct ta1_chip *c, uint64_t pc, const char *fmt, ...)
    SNR_PRINTF(3, 4);

static enum ta1_stop fault(struct ta1_chip *c, uint64_t pc, const char *fmt, ...)
{
	char what[256], dis[96] = "", sym[128] = "";
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(what, sizeof(what), fmt, ap);
	va_end(ap);
	uint32_t w;
	uint64_t off = pc - TA1_CORE_BASE;
	if (off < c->m->cfg.core_memory_bytes - 4 && !(pc & 3)) {
		struct ta1_insn in;
		memcpy(&w, c->core + off, 4);
		ta1_decode(w, &in);
		dis[0] = ':';
		dis[1] = ' ';
		ta1_disasm(&in, pc, dis + 2, sizeof(dis) - 2);
	}
	if (c->m->elf) {
		const struct snr_elf_symbol *s = snr_elf_lookup(c->m->elf, pc);
		if (s)
			snprintf(sym, sizeof(sym), " <%s+0x%llx>", s->name, (unsigned long long)(pc - s->addr));
	}
	snprintf(c->fault, sizeof(c->fault), "chip %u: %s at pc 0x%llx%s%s", c->id, what,
		 (unsigned long long)pc, sym, dis);
	c->pc = pc;
	c->state = TA1_CHIP_FAULTED;
	return TA1_STOP_FAULT;
}

static void decode_into(struct ta1_chip *c, uint64_t off)
{
	uint32_t w;
	struct ta1_insn in;
	struct dinsn *d = &c->cache[off >> 2];
	memcpy(&w, c->core + off, 4);
	if (ta1_decode(w, &in)) {
		d->op = (uint8_t)(in.op + 1);
		d->rd = in.rd;
		d->rs1 = in.rs1;
		d->rs2 = in.rs2;
		d->imm = (int32_t)in.imm;
	} else {
		d->op = CO_ILLEGAL;
	}
	if (off + 4 > c->code_hi)
		c->code_hi = off + 4;
}

static const char *space_name(enum ta1_space s)
{
	switch (s) {
	case TA1_SPACE_CORE: return "core memory";
	case TA1_SPACE_VMEM: return "VMEM";
	case TA1_SPACE_MXUW: return "the MXU weight buffer";
	case TA1_SPACE_HBM: return "HBM";
	case TA1_SPACE_NONE: break;
	}
	return "no memory";
}

static enum ta1_stop scalar_fault(struct ta1_chip *c, uint64_t pc, uint64_t addr, unsigned size, bool store)
{
	struct ta1_query_ctx q;
	unsigned owner;
	uint64_t off;
	ta1_chip_query_ctx(c, &q);
	enum ta1_space sp = ta1_classify(&q, addr, size, &owner, &off);
	if (sp == TA1_SPACE_NONE)
		return fault(c, pc, "scalar %s of %u bytes at 0x%llx outside every memory",
			     store ? "store" : "load", size, (unsigned long long)addr);
	if (sp == TA1_SPACE_MXUW)
		return fault(c, pc, "scalar %s of %u bytes at 0x%llx in %s (only ta.mxu.load writes it)",
			     store ? "store" : "load", size, (unsigned long long)addr, space_name(sp));
	return fault(c, pc, "scalar %s of %u bytes at 0x%llx in %s (only DMA moves data to and from %s)",
		     store ? "store" : "load", size, (unsigned long long)addr, space_name(sp), space_name(sp));
}

static enum ta1_stop do_ecall(struct ta1_chip *c, uint64_t pc)
{
	uint64_t nr = c->x[17];
	if (nr == 93) {
		c->exit_code = (int)(c->x[10] & 0xff);
		c->state = TA1_CHIP_EXITED;
		return TA1_STOP_EXIT;
	}
	if (nr == 64) {
		uint64_t fd = c->x[10], buf = c->x[11], len = c->x[12];
		if (len == 0) {
			c->x[10] = 0;
			return TA1_STOP_BUDGET;
		}
		uint64_t off = buf - TA1_CORE_BASE;
		if (off >= c->m->cfg.core_memory_bytes || len > c->m->cfg.core_memory_bytes - off)
			return fault(c, pc, "write(%llu, 0x%llx, %llu): buffer outside core memory",
				     (unsigned long long)fd, (unsigned long long)buf, (unsigned long long)len);
		if (fd != 1 && fd != 2) {
			c->x[10] = (uint64_t)-9; /* -EBADF */
			return TA1_STOP_BUDGET;
		}
		int host = fd == 1 ? c->m->out_fd : c->m->err_fd;
		size_t done = 0;
		while (done < len) {
			ssize_t w = write(host, c->core + off + done, len - done);
			if (w < 0 && errno == EINTR)
				continue;
			if (w <= 0)
				break;
			done += (size_t)w;
		}
		c->x[10] = done;
		return TA1_STOP_BUDGET;
	}
	c->x[10] = (uint64_t)-38; /* -ENOSYS */
	return TA1_STOP_BUDGET;
}

/* Executes the Xta instruction at pc (already known to be one). */
static enum ta1_stop do_xta(struct ta1_chip *c, uint64_t pc)
{
	struct ta1_insn in;
	struct ta1_access a;
	if (c->known_a) { /* the same decode and query on the same state, done by the caller */
		in = *c->known_in;
		a = *c->known_a;
	} else {
		struct ta1_query_ctx q;
		uint32_t w;
		memcpy(&w, c->core + (pc - TA1_CORE_BASE), 4);
		ta1_decode(w, &in);
		ta1_chip_query_ctx(c, &q);
		ta1_access_query(&in, &q, &a);
	}
	if (a.fault) {
		if (a.fault_region) {
			const struct ta1_region *r = &a.region[a.fault_region - 1];
			char where[64] = "";
			if (r->space != TA1_SPACE_NONE)
				snprintf(where, sizeof(where), ", in %s", space_name((enum ta1_space)r->space));
			return fault(c, pc, "%s: %s operand at 0x%llx (%llu bytes%s%s)", a.fault,
				     r->write ? "destination" : "source", (unsigned long long)r->addr,
				     (unsigned long long)r->row_bytes, r->rows > 1 ? " per row" : "", where);
		}
		if (in.op == TA1_OP_TA_DMA || in.op == TA1_OP_TA_DMA2D || in.op == TA1_OP_TA_WAIT ||
		    in.op == TA1_OP_TA_DMA_NOTIFY) {
			uint64_t flag = in.op == TA1_OP_TA_DMA ? c->x[in.rd]
					: in.op == TA1_OP_TA_DMA2D ? c->x[in.rs3] >> 48
					: in.op == TA1_OP_TA_DMA_NOTIFY ? c->x[in.rd] & 0xffffffffu
									: c->x[in.rs1];
			if (in.op == TA1_OP_TA_DMA_NOTIFY && flag < TA1_NUM_FLAGS)
				flag = c->x[in.rd] >> 32;
			if (flag >= TA1_NUM_FLAGS)
				return fault(c, pc, "DMA sync flag %llu out of range (TA1 has %u flags)",
					     (unsigned long long)flag, TA1_NUM_FLAGS);
		}
		return fault(c, pc, "%s", a.fault);
	}
	uint64_t *x = c->x;
	switch ((enum ta1_op)in.op) {
	case TA1_OP_TA_DMA:
	case TA1_OP_TA_DMA2D:
	case TA1_OP_TA_DMA_NOTIFY: {
		uint64_t flag = in.op == TA1_OP_TA_DMA ? x[in.rd]
				: in.op == TA1_OP_TA_DMA2D ? x[in.rs3] >> 48
							   : x[in.rd] & 0xffffffffu;
		if (a.nregions == 2) {
			const struct ta1_region *src = &a.region[0], *dst = &a.region[1];
			for (uint64_t r = 0; r < src->rows; r++) {
				uint8_t *s = mem_ptr(c, src->addr + (uint64_t)((int64_t)r * src->stride), src->row_bytes);
				uint8_t *d = mem_ptr(c, dst->addr + (uint64_t)((int64_t)r * dst->stride), dst->row_bytes);
				before_access(c->m, s, src->row_bytes, false);
				before_access(c->m, d, src->row_bytes, true);
				if (src->rows == 1 && src->row_bytes >= LAZY_MIN && src->space == TA1_SPACE_HBM &&
				    dst->space == TA1_SPACE_VMEM && c->nlazy < LAZY_MAX) /* the VMEM is c's */
					c->lazy[c->nlazy++] = (struct lazy_copy){d, s, src->row_bytes};
				else
					memmove(d, s, src->row_bytes);
			}
			if (dst->space == TA1_SPACE_CORE) {
				uint8_t *d0 = mem_ptr(c, dst->addr, 1);
				uint64_t lo = (uint64_t)(d0 - c->core);
				int64_t span = (int64_t)(dst->rows - 1) * dst->stride;
				if (span < 0)
					lo -= (uint64_t)-span;
				invalidate(c, lo, (uint64_t)(span < 0 ? -span : span) + dst->row_bytes);
			}
			c->stats.dma_bytes += src->row_bytes * src->rows;
		}
		c->flags[flag]++;
		/* The functional device completes a DMA at its issue: the peer
		 * (the chip owning the destination) is signalled at once too. */
		if (in.op == TA1_OP_TA_DMA_NOTIFY) {
			unsigned owner = a.nregions == 2 ? a.region[1].chip : c->id;
			c->m->chips[owner].flags[x[in.rd] >> 32]++;
		}
		break;
	}
	case TA1_OP_TA_WAIT: {
		uint64_t f = x[in.rs1], n = x[in.rs2];
		if (c->flags[f] < n) {
			/* Another chip may still signal the flag (ta.dma.notify): the
			 * chip blocks at the WAIT; ta1_machine_run faults on a deadlock. */
			if (c->m->nchips > 1) {
				c->blocked = true;
				return TA1_STOP_BLOCKED;
			}
			return fault(c, pc,
				     "ta.wait for %llu completions on flag %llu, but only %llu DMAs have signalled it: "
				     "the program would wait forever",
				     (unsigned long long)n, (unsigned long long)f, (unsigned long long)c->flags[f]);
		}
		c->blocked = false;
		c->flags[f] -= n;
		break;
	}
	case TA1_OP_TA_CHIPID:
		if (in.rd)
			x[in.rd] = c->id;
		break;
	case TA1_OP_TA_NCHIPS:
		if (in.rd)
			x[in.rd] = c->m->nchips;
		break;
	case TA1_OP_TA_VADD:
	case TA1_OP_TA_VMUL:
	case TA1_OP_TA_VMAX:
	case TA1_OP_TA_VSCALE:
	case TA1_OP_TA_VEXP: {
		uint64_t n = x[in.rd];
		if (!n)
			break;
		enum ta1_vop vop = in.op == TA1_OP_TA_VADD ? TA1_VOP_ADD
				   : in.op == TA1_OP_TA_VMUL ? TA1_VOP_MUL
				   : in.op == TA1_OP_TA_VMAX ? TA1_VOP_MAX
				   : in.op == TA1_OP_TA_VSCALE ? TA1_VOP_SCALE
							       : TA1_VOP_EXP;
		float s = 0.0f;
		uint32_t sbits = (uint32_t)x[in.rs3];
		memcpy(&s, &sbits, 4);
		const float *b = vop <= TA1_VOP_MAX ? (const float *)mem_ptr(c, x[in.rs3], n * 4) : NULL;
		float *d = (float *)mem_ptr(c, x[in.rs1], n * 4);
		const float *va = (const float *)mem_ptr(c, x[in.rs2], n * 4);
		before_access_chip(c, va, n * 4, false);
		if (b)
			before_access_chip(c, b, n * 4, false);
		before_access_chip(c, d, n * 4, true);
		ta1_vector_op(vop, d, va, b, s, n);
		break;
	}
	case TA1_OP_TA_VSUMROWS: {
		uint64_t rows = x[in.rs3], cols = x[in.rd];
		if (!rows)
			break;
		float tmp_row_sum;
		float *d = (float *)mem_ptr(c, x[in.rs1], rows * 4);
		if (cols)
			before_access_chip(c, mem_ptr(c, x[in.rs2], rows * cols * 4), rows * cols * 4, false);
		before_access_chip(c, d, rows * 4, true);
		if (!cols) { /* empty rows sum to zero */
			tmp_row_sum = 0.0f;
			for (uint64_t r = 0; r < rows; r++)
				d[r] = tmp_row_sum;
			break;
		}
		ta1_vsum_rows(d, (const float *)mem_ptr(c, x[in.rs2], rows * cols * 4), rows, cols);
		break;
	}
	case TA1_OP_TA_MXU_LOAD: /* refers to the bytes; copied only when they are about to change */
		mxu_refer(c, mem_ptr(c, x[in.rs1], TA1_MXUW_SIZE));
		break;
	case TA1_OP_TA_MXU_MM:
	case TA1_OP_TA_MXU_MMA: {
		uint64_t rows = x[in.rd], bytes = rows * TA1_MXU_DIM * 4;
		if (!rows)
			break;
		float *dst = (float *)mem_ptr(c, x[in.rs1], bytes);
		const float *lhs = (const float *)mem_ptr(c, x[in.rs2], bytes);
		before_access_chip(c, lhs, bytes, false);
		if (in.op == TA1_OP_TA_MXU_MMA)
			before_access_chip(c, dst, bytes, false);
		before_access_chip(c, dst, bytes, true);
		if ((uint8_t *)dst < (const uint8_t *)lhs + bytes && (const uint8_t *)lhs < (uint8_t *)dst + bytes) {
			/* overlapping operands: compute from a copy of lhs */
			float *copy = snr_xmalloc(bytes);
			memcpy(copy, lhs, bytes);
			ta1_mxu_matmul(dst, copy, mxu_weights(c), rows, in.op == TA1_OP_TA_MXU_MMA);
			free(copy);
		} else {
			ta1_mxu_matmul(dst, lhs, mxu_weights(c), rows, in.op == TA1_OP_TA_MXU_MMA);
		}
		break;
	}
	default:
		return fault(c, pc, "internal error: not an Xta instruction");
	}
	return TA1_STOP_BUDGET;
}

static inline int64_t sdiv64(int64_t a, int64_t b)
{
	if (b == 0)
		return -1;
	if (a == INT64_MIN && b == -1)
		return a;
	return a / b;
}
static inline int64_t srem64(int64_t a, int64_t b)
{
	if (b == 0)
		return a;
	if (a == INT64_MIN && b == -1)
		return 0;
	return a % b;
}
static inline int32_t sdiv32(int32_t a, int32_t b)
{
	if (b == 0)
		return -1;
	if (a == INT32_MIN && b == -1)
		return a;
	return a / b;
}
static inline int32_t srem32(int32_t a, int32_t b)
{
	if (b == 0)
		return a;
	if (a == INT32_MIN && b == -1)
		return 0;
	return a % b;
}
static inline uint64_t mulhu64(uint64_t a, uint64_t b) { return (uint64_t)(((unsigned __int128)a * b) >> 64); }
static inline int64_t mulh64(int64_t a, int64_t b) { return (int64_t)(((__int128)a * b) >> 64); }
static inline int64_t mulhsu64(int64_t a, uint64_t b) { return (int64_t)(((__int128)a * (unsigned __int128)b) >> 64); }
static inline uint64_t sx32(uint64_t v) { return (uint64_t)(int64_t)(int32_t)(uint32_t)v; }

/*
 * The interpreter. `n` caps the instructions; `stats`, `single` and `known`
 * are constants at each call site, so the compiler stamps out specialised
 * loops. `known`: one step of `given`, the caller's decode of the word at pc.
 */
static inline __attribute__((always_inline)) enum ta1_stop
run_loop(struct ta1_chip *c, uint64_t n, const bool stats, const bool single, const bool known,
	 const bool simple, const struct ta1_insn *given)
{
	uint64_t *const x = c->x;
	uint8_t *const core = c->core;
	struct dinsn *const cache = c->cache;
	const uint64_t core_size = c->m->cfg.core_memory_bytes;
	uint64_t pc = c->pc;
	uint64_t done = 0;
	enum ta1_stop stop = TA1_STOP_BUDGET;

#define LOAD(T, addr)                                                                      \
	({                                                                                 \
		uint64_t a_ = (addr), o_ = a_ - TA1_CORE_BASE;                             \
		if (__builtin_expect(o_ > core_size - sizeof(T), 0)) {                     \
			stop = scalar_fault(c, pc, a_, sizeof(T), false);                  \
			goto out;                                                          \
		}                                                                          \
		T v_;                                                                      \
		memcpy(&v_, core + o_, sizeof(T));                                         \
		v_;                                                                        \
	})
#define STORE(T, addr, val)                                                                \
	do {                                                                               \
		uint64_t a_ = (addr), o_ = a_ - TA1_CORE_BASE;                             \
		if (__builtin_expect(o_ > core_size - sizeof(T), 0)) {                     \
			stop = scalar_fault(c, pc, a_, sizeof(T), true);                   \
			goto out;                                                          \
		}                                                                          \
		T v_ = (T)(val);                                                           \
		memcpy(core + o_, &v_, sizeof(T));                                         \
		if (__builtin_expect(o_ < c->code_hi, 0))                                  \
			invalidate(c, o_, sizeof(T));                                      \
	} while (0)
#define RD x[d.rd]
#define RS1 x[d.rs1]
#define RS2 x[d.rs2]
#define IMM ((uint64_t)(int64_t)d.imm)
#define BRANCH(cond)                          \
	do {                                  \
		if (cond)                     \
			next = pc + IMM;      \
	} while (0)

	while (done < n) {
		uint64_t off = pc - TA1_CORE_BASE;
		struct dinsn d;
		if (known) { /* the caller decoded the word at pc, in core memory */
			d = (struct dinsn){(uint8_t)(given->op + 1), given->rd, given->rs1, given->rs2,
					   (int32_t)given->imm};
			goto decoded;
		}
		if (__builtin_expect(off >= core_size || (pc & 3), 0)) {
			stop = fault(c, pc, "instruction fetch from 0x%llx%s", (unsigned long long)pc,
				     (pc & 3) ? " (not 4-byte aligned)" : " outside core memory");
			goto out;
		}
		d = cache[off >> 2];
		if (single && d.op == CO_BREAK) { /* stepping ignores breakpoints */
			uint32_t w;
			struct ta1_insn in;
			memcpy(&w, core + off, 4);
			if (ta1_decode(w, &in)) {
				d.op = (uint8_t)(in.op + 1);
				d.rd = in.rd;
				d.rs1 = in.rs1;
				d.rs2 = in.rs2;
				d.imm = (int32_t)in.imm;
			} else {
				d.op = CO_ILLEGAL;
			}
		}
	decoded:;
		uint64_t next = pc + 4;
		switch (d.op) {
		case C(LUI): RD = IMM; break;
		case C(AUIPC): RD = pc + IMM; break;
		case C(JAL): RD = pc + 4; next = pc + IMM; break;
		case C(JALR): { uint64_t t = (RS1 + IMM) & ~1ull; RD = pc + 4; next = t; break; }
		case C(BEQ): BRANCH(RS1 == RS2); break;
		case C(BNE): BRANCH(RS1 != RS2); break;
		case C(BLT): BRANCH((int64_t)RS1 < (int64_t)RS2); break;
		case C(BGE): BRANCH((int64_t)RS1 >= (int64_t)RS2); break;
		case C(BLTU): BRANCH(RS1 < RS2); break;
		case C(BGEU): BRANCH(RS1 >= RS2); break;
		case C(LB): RD = (uint64_t)(int64_t)LOAD(int8_t, RS1 + IMM); break;
		case C(LH): RD = (uint64_t)(int64_t)LOAD(int16_t, RS1 + IMM); break;
		case C(LW): RD = (uint64_t)(int64_t)LOAD(int32_t, RS1 + IMM); break;
		case C(LD): RD = LOAD(uint64_t, RS1 + IMM); break;
		case C(LBU): RD = LOAD(uint8_t, RS1 + IMM); break;
		case C(LHU): RD = LOAD(uint16_t, RS1 + IMM); break;
		case C(LWU): RD = LOAD(uint32_t, RS1 + IMM); break;
		case C(SB): STORE(uint8_t, RS1 + IMM, RS2); break;
		case C(SH): STORE(uint16_t, RS1 + IMM, RS2); break;
		case C(SW): STORE(uint32_t, RS1 + IMM, RS2); break;
		case C(SD): STORE(uint64_t, RS1 + IMM, RS2); break;
		case C(ADDI): RD = RS1 + IMM; break;
		case C(SLTI): RD = (int64_t)RS1 < (int64_t)IMM; break;
		case C(SLTIU): RD = RS1 < IMM; break;
		case C(XORI): RD = RS1 ^ IMM; break;
		case C(ORI): RD = RS1 | IMM; break;
		case C(ANDI): RD = RS1 & IMM; break;
		case C(SLLI): RD = RS1 << d.imm; break;
		case C(SRLI): RD = RS1 >> d.imm; break;
		case C(SRAI): RD = (uint64_t)((int64_t)RS1 >> d.imm); break;
		case C(ADD): RD = RS1 + RS2; break;
		case C(SUB): RD = RS1 - RS2; break;
		case C(SLL): RD = RS1 << (RS2 & 63); break;
		case C(SLT): RD = (int64_t)RS1 < (int64_t)RS2; break;
		case C(SLTU): RD = RS1 < RS2; break;
		case C(XOR): RD = RS1 ^ RS2; break;
		case C(SRL): RD = RS1 >> (RS2 & 63); break;
		case C(SRA): RD = (uint64_t)((int64_t)RS1 >> (RS2 & 63)); break;
		case C(OR): RD = RS1 | RS2; break;
		case C(AND): RD = RS1 & RS2; break;
		case C(ADDIW): RD = sx32(RS1 + IMM); break;
		case C(SLLIW): RD = sx32((uint32_t)RS1 << d.imm); break;
		case C(SRLIW): RD = sx32((uint32_t)RS1 >> d.imm); break;
		case C(SRAIW): RD = (uint64_t)(int64_t)((int32_t)RS1 >> d.imm); break;
		case C(ADDW): RD = sx32(RS1 + RS2); break;
		case C(SUBW): RD = sx32(RS1 - RS2); break;
		case C(SLLW): RD = sx32((uint32_t)RS1 << (RS2 & 31)); break;
		case C(SRLW): RD = sx32((uint32_t)RS1 >> (RS2 & 31)); break;
		case C(SRAW): RD = (uint64_t)(int64_t)((int32_t)RS1 >> (RS2 & 31)); break;
		case C(FENCE): case C(FENCEI): break;
		case C(MUL): RD = RS1 * RS2; break;
		case C(MULH): RD = (uint64_t)mulh64((int64_t)RS1, (int64_t)RS2); break;
		case C(MULHSU): RD = (uint64_t)mulhsu64((int64_t)RS1, RS2); break;
		case C(MULHU): RD = mulhu64(RS1, RS2); break;
		case C(DIV): RD = (uint64_t)sdiv64((int64_t)RS1, (int64_t)RS2); break;
		case C(DIVU): RD = RS2 ? RS1 / RS2 : ~0ull; break;
		case C(REM): RD = (uint64_t)srem64((int64_t)RS1, (int64_t)RS2); break;
		case C(REMU): RD = RS2 ? RS1 % RS2 : RS1; break;
		case C(MULW): RD = sx32(RS1 * RS2); break;
		case C(DIVW): RD = (uint64_t)(int64_t)sdiv32((int32_t)RS1, (int32_t)RS2); break;
		case C(DIVUW): RD = sx32((uint32_t)RS2 ? (uint32_t)RS1 / (uint32_t)RS2 : ~0u); break;
		case C(REMW): RD = (uint64_t)(int64_t)srem32((int32_t)RS1, (int32_t)RS2); break;
		case C(REMUW): RD = sx32((uint32_t)RS2 ? (uint32_t)RS1 % (uint32_t)RS2 : (uint32_t)RS1); break;
		case C(CSRRW): case C(CSRRS): case C(CSRRC):
		case C(CSRRWI): case C(CSRRSI): case C(CSRRCI): {
			if (simple)
				__builtin_unreachable();
			unsigned csr = (unsigned)d.imm & 0xfff;
			bool writes = d.op == C(CSRRW) || d.op == C(CSRRWI) || d.rs1 != 0;
			if (csr != TA1_CSR_CYCLE && csr != TA1_CSR_TIME && csr != TA1_CSR_INSTRET) {
				stop = fault(c, pc, "CSR 0x%x is not implemented (TA1 has cycle, time, instret)", csr);
				goto out;
			}
			if (writes) {
				stop = fault(c, pc, "write to the read-only CSR 0x%x", csr);
				goto out;
			}
			/* CSRs are off the hot path: the model's clock costs nothing else. */
			RD = c->model_clock && csr != TA1_CSR_INSTRET ? c->model_cycle : c->instret + done;
			break;
		}
		case C(ECALL):
			if (simple)
				__builtin_unreachable();
			c->pc = pc;
			stop = do_ecall(c, pc);
			if (stop == TA1_STOP_EXIT) { /* exit retires */
				if (stats)
					c->stats.by_class[TA1_CLASS_SYSTEM]++;
				done++;
			}
			if (stop != TA1_STOP_BUDGET)
				goto out;
			break;
		case C(EBREAK):
			if (simple)
				__builtin_unreachable();
			stop = TA1_STOP_EBREAK;
			goto out;
		case C(TA_DMA): case C(TA_DMA2D): case C(TA_DMA_NOTIFY): case C(TA_WAIT): case C(TA_CHIPID):
		case C(TA_NCHIPS):
		case C(TA_VADD): case C(TA_VMUL): case C(TA_VMAX): case C(TA_VSCALE): case C(TA_VEXP):
		case C(TA_VSUMROWS): case C(TA_MXU_MM): case C(TA_MXU_MMA): case C(TA_MXU_LOAD):
			if (simple)
				__builtin_unreachable();
			c->pc = pc;
			stop = do_xta(c, pc);
			if (stop != TA1_STOP_BUDGET)
				goto out;
			break;
		case CO_UNDECODED: /* first execution of this word: decode, then run it */
			if (simple)
				__builtin_unreachable();
			decode_into(c, off);
			continue;
		case CO_BREAK:
			if (simple)
				__builtin_unreachable();
			stop = TA1_STOP_BREAKPOINT;
			goto out;
		case CO_ILLEGAL:
		default: {
			if (simple)
				__builtin_unreachable();
			uint32_t w;
			memcpy(&w, core + off, 4);
			stop = fault(c, pc, "illegal instruction 0x%08x", w);
			goto out;
		}
		}
		x[0] = 0;
		if (stats)
			c->stats.by_class[op_class[d.op]]++;
		pc = next;
		done++;
	}
out:
	if (c->state != TA1_CHIP_FAULTED)
		c->pc = pc;
	c->instret += done;
	x[0] = 0;
	c->stats.instret = c->instret;
	return stop;
#undef LOAD
#undef STORE
#undef RD
#undef RS1
#undef RS2
#undef IMM
#undef BRANCH
}

enum ta1_stop ta1_chip_step(struct ta1_chip *c)
{
	if (c->state != TA1_CHIP_RUNNING)
		return c->state == TA1_CHIP_EXITED ? TA1_STOP_EXIT : TA1_STOP_FAULT;
	c->blocked = false;
	enum ta1_stop s = c->m->stats ? run_loop(c, 1, true, true, false, false, NULL)
				      : run_loop(c, 1, false, true, false, false, NULL);
	if (__builtin_expect(c->m->inject_armed, 0))
		inject_due(c);
	return s;
}

/* ta1_chip_step_known of any instruction: CSR, system and Xta ones, and
 * every one when counting per class. */
static __attribute__((noinline)) enum ta1_stop step_known_any(struct ta1_chip *c, const struct ta1_insn *in,
							      const struct ta1_access *a)
{
	c->known_in = in;
	c->known_a = a;
	enum ta1_stop s = c->m->stats ? run_loop(c, 1, true, true, true, false, in)
				      : run_loop(c, 1, false, true, true, false, in);
	c->known_in = NULL;
	c->known_a = NULL;
	return s;
}

enum ta1_stop ta1_chip_step_known(struct ta1_chip *c, const struct ta1_insn *in, const struct ta1_access *a,
				  uint64_t *next_pc)
{
	if (c->state != TA1_CHIP_RUNNING)
		return c->state == TA1_CHIP_EXITED ? TA1_STOP_EXIT : TA1_STOP_FAULT;
	c->blocked = false;
	/* Most instructions are plain scalar ones: their step is the
	 * interpreter without the other cases, so it needs a small frame. */
	enum ta1_stop s = op_simple[in->op] && !c->m->stats ? run_loop(c, 1, false, true, true, true, in)
							     : step_known_any(c, in, a);
	if (__builtin_expect(c->m->inject_armed, 0))
		inject_due(c);
	*next_pc = c->pc;
	return s;
}

enum ta1_stop ta1_chip_run(struct ta1_chip *c, uint64_t n)
{
	if (c->state != TA1_CHIP_RUNNING)
		return c->state == TA1_CHIP_EXITED ? TA1_STOP_EXIT : TA1_STOP_FAULT;
	if (n == 0)
		return TA1_STOP_BUDGET;
	c->blocked = false;
	if (ta1_chip_has_breakpoint(c, c->pc)) {
		enum ta1_stop s = ta1_chip_step(c);
		if (s != TA1_STOP_BUDGET || n == 1)
			return s;
		n--;
	}
	/* stop at the injected write's instruction count, land it, go on */
	uint64_t first = inject_budget(c, n);
	if (first < n) {
		enum ta1_stop s = c->m->stats ? run_loop(c, first, true, false, false, false, NULL)
					      : run_loop(c, first, false, false, false, false, NULL);
		inject_due(c);
		if (s != TA1_STOP_BUDGET)
			return s;
		n -= first; /* from here a breakpoint at the pc stops the chip */
	}
	return c->m->stats ? run_loop(c, n, true, false, false, false, NULL)
			   : run_loop(c, n, false, false, false, false, NULL);
}

bool ta1_chip_blocked(const struct ta1_chip *c)
{
	return c->state == TA1_CHIP_RUNNING && c->blocked;
}

/* Chip c, marked blocked, still waits: the flag its ta.wait names has fewer
 * completions than it asks for. A peer's ta.dma.notify may have signalled it
 * since the chip last ran (a debugger resumes chips one at a time). */
static bool still_waits(const struct ta1_chip *c)
{
	uint32_t w;
	struct ta1_insn in;
	memcpy(&w, c->core + (c->pc - TA1_CORE_BASE), 4);
	ta1_decode(w, &in);
	if (in.op != TA1_OP_TA_WAIT)
		return false;
	uint64_t f = c->x[in.rs1], n = c->x[in.rs2];
	return f < TA1_NUM_FLAGS && c->flags[f] < n;
}

bool ta1_machine_deadlock(struct ta1_machine *m, unsigned *which)
{
	int first = -1;
	for (unsigned i = 0; i < m->nchips; i++) {
		const struct ta1_chip *c = &m->chips[i];
		if (c->state == TA1_CHIP_RUNNING && (!c->blocked || !still_waits(c)))
			return false;
		if (c->state == TA1_CHIP_RUNNING && first < 0)
			first = (int)i;
	}
	if (first < 0)
		return false;
	/* Every chip still running waits for a flag that only a running chip
	 * could signal: name each chip's wait. */
	char msg[sizeof(m->chips[0].fault)];
	size_t len = (size_t)snprintf(msg, sizeof(msg), "pod-wide deadlock: no chip can signal what the others wait for:");
	for (unsigned i = 0; i < m->nchips && len < sizeof(msg); i++) {
		const struct ta1_chip *c = &m->chips[i];
		if (c->state == TA1_CHIP_EXITED) {
			len += (size_t)snprintf(msg + len, sizeof(msg) - len, " chip %u exited;", i);
			continue;
		}
		uint32_t w;
		struct ta1_insn in;
		memcpy(&w, c->core + (c->pc - TA1_CORE_BASE), 4);
		ta1_decode(w, &in);
		uint64_t f = c->x[in.rs1], n = c->x[in.rs2];
		const struct snr_elf_symbol *sym = m->elf ? snr_elf_lookup(m->elf, c->pc) : NULL;
		char where[160] = "";
		if (sym)
			snprintf(where, sizeof(where), " <%s+0x%llx>", sym->name, (unsigned long long)(c->pc - sym->addr));
		len += (size_t)snprintf(msg + len, sizeof(msg) - len,
					" chip %u waits at pc 0x%llx%s for %llu completions on flag %llu (has %llu);", i,
					(unsigned long long)c->pc, where, (unsigned long long)n,
					(unsigned long long)f, (unsigned long long)(f < TA1_NUM_FLAGS ? c->flags[f] : 0));
	}
	if (len >= sizeof(msg))
		len = sizeof(msg) - 1;
	if (len && msg[len - 1] == ';')
		msg[len - 1] = '\0';
	struct ta1_chip *c = &m->chips[first];
	snprintf(c->fault, sizeof(c->fault), "%s", msg);
	c->state = TA1_CHIP_FAULTED;
	*which = (unsigned)first;
	return true;
}

enum ta1_stop ta1_machine_run(struct ta1_machine *m, uint64_t limit, unsigned *which)
{
	for (;;) {
		bool any = false, progress = false;
		for (unsigned i = 0; i < m->nchips; i++) {
			struct ta1_chip *c = &m->chips[i];
			if (c->state != TA1_CHIP_RUNNING)
				continue;
			uint64_t q = QUANTUM;
			if (limit) {
				if (c->instret >= limit) {
					*which = i;
					return TA1_STOP_BUDGET;
				}
				if (limit - c->instret < q)
					q = limit - c->instret;
			}
			uint64_t before = c->instret;
			enum ta1_stop s = ta1_chip_run(c, q);
			*which = i;
			if (s == TA1_STOP_FAULT || s == TA1_STOP_BREAKPOINT || s == TA1_STOP_EBREAK)
				return s;
			any = true;
			progress |= s != TA1_STOP_BLOCKED || c->instret != before;
		}
		if (!any)
			return TA1_STOP_EXIT;
		if (!progress && ta1_machine_deadlock(m, which))
			return TA1_STOP_FAULT;
	}
}

int ta1_machine_load(struct ta1_machine *m, const struct snr_elf *elf, char *err, size_t errlen)
{
	if (!elf->is64 || elf->machine != EM_RISCV_) {
		snr_fmt(err, errlen, "%s: not a 64-bit RISC-V ELF (build it with `snr cc`)", elf->path);
		return -1;
	}
	if (elf->flags & EF_RISCV_RVC_) {
		snr_fmt(err, errlen,
			"%s: built with compressed instructions (RVC), which TA1 does not have; "
			"build with -march=rv64im (`snr cc` does)",
			elf->path);
		return -1;
	}
	if (elf->nsegments == 0) {
		snr_fmt(err, errlen, "%s: no loadable segments", elf->path);
		return -1;
	}
	m->elf = elf;
	for (unsigned i = 0; i < m->nchips; i++) {
		struct ta1_chip *c = &m->chips[i];
		struct ta1_query_ctx q;
		ta1_chip_query_ctx(c, &q);
		for (size_t s = 0; s < elf->nsegments; s++) {
			const struct snr_elf_segment *seg = &elf->segments[s];
			unsigned owner;
			uint64_t off;
			enum ta1_space sp = ta1_classify(&q, seg->vaddr, seg->memsz, &owner, &off);
			if (sp != TA1_SPACE_CORE && !(sp == TA1_SPACE_HBM && seg->vaddr >= TA1_HBM_BASE &&
						      seg->vaddr < TA1_HBM_GLOBAL_BASE)) {
				snr_fmt(err, errlen,
					"%s: segment at 0x%llx (%llu bytes) is not inside core memory or this chip's HBM",
					elf->path, (unsigned long long)seg->vaddr, (unsigned long long)seg->memsz);
				return -1;
			}
			if (sp == TA1_SPACE_HBM && (seg->flags & 1 /* PF_X */)) {
				snr_fmt(err, errlen, "%s: executable segment at 0x%llx lies in HBM", elf->path,
					(unsigned long long)seg->vaddr);
				return -1;
			}
			uint8_t *dst = mem_ptr(c, seg->vaddr, seg->memsz);
			before_access(m, dst, seg->memsz, true);
			memcpy(dst, seg->data, seg->filesz);
			memset(dst + seg->filesz, 0, seg->memsz - seg->filesz);
		}
		memset(c->x, 0, sizeof(c->x));
		memset(c->flags, 0, sizeof(c->flags));
		c->pc = elf->entry;
		c->instret = 0;
		c->state = TA1_CHIP_RUNNING;
		c->code_hi = 0;
	}
	return 0;
}
