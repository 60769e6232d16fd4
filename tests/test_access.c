/*
 * test_access.c: the operand-access query (ta1_access_query) is exact with
 * respect to what the device does.
 *
 * For random instances of every opcode (scalar and Xta; ecall only as
 * write(1, ...)), on a 2-chip machine with random registers and memories:
 *
 *   S  = a snapshot: registers, flags, the counter, the executing chip's core
 *        memory, VMEM and MXU weights, and a window at the start of each
 *        chip's HBM (every address the generator makes lies in these windows,
 *        or in no memory at all);
 *   q  = the query on S;
 *   A  = S stepped once.
 *
 *   - q.fault is set exactly when A faults; a faulting step changes nothing;
 *   - (a) every register that changed is in q.regs_written (x1..x31, pc, the
 *     flags; the counter advances on every instruction and is implied);
 *   - (b) every byte that changed lies in a region q reports as written;
 *   - (c) S' = S with every register not in q.regs_read and every byte not in
 *     a read region randomised (but the instruction word itself, which the
 *     fetch reads); B = S' stepped once. The query on S' equals q, B faults
 *     iff A did, and every written register and written byte of B equals A's:
 *     the read set is complete. (a) and (b) are checked on B too.
 *
 * Then exact region shapes for a few instructions, 2-D DMA above all.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/check.h"
#include "tests/ta1_harness.h"

#define CORE_SZ (64u << 10)
#define VMEM_SZ (128u << 10)
#define HBM_SZ (1u << 20)
#define HBM_WIN (64u << 10)
#define NCHIPS 2
#define CASES_PER_OP 60

enum { W_CORE, W_VMEM, W_MXUW, W_HBM0, W_HBM1, W_COUNT };
static const uint64_t win_size[W_COUNT] = {CORE_SZ, VMEM_SZ, TA1_MXUW_SIZE, HBM_WIN, HBM_WIN};
static const char *const win_name[W_COUNT] = {"core", "VMEM", "MXU weights", "HBM chip 0", "HBM chip 1"};

struct snap {
	uint64_t x[32], pc, flags[TA1_NUM_FLAGS], instret;
	unsigned chip; /* the executing chip */
	uint8_t *mem[W_COUNT];
};

static int devnull = -1;

static void snap_init(struct snap *s)
{
	memset(s, 0, sizeof(*s));
	for (unsigned w = 0; w < W_COUNT; w++)
		s->mem[w] = malloc(win_size[w]);
}

static void snap_free(struct snap *s)
{
	for (unsigned w = 0; w < W_COUNT; w++)
		free(s->mem[w]);
}

static void snap_copy(struct snap *d, const struct snap *s)
{
	uint8_t *mem[W_COUNT];
	memcpy(mem, d->mem, sizeof(mem));
	*d = *s;
	memcpy(d->mem, mem, sizeof(mem));
	for (unsigned w = 0; w < W_COUNT; w++)
		memcpy(d->mem[w], s->mem[w], win_size[w]);
}

static uint64_t win_addr(unsigned w)
{
	switch (w) {
	case W_CORE:
		return TA1_CORE_BASE;
	case W_VMEM:
		return TA1_VMEM_BASE;
	case W_MXUW:
		return TA1_MXUW_BASE;
	case W_HBM0:
		return TA1_HBM_GLOBAL_BASE;
	default:
		return TA1_HBM_GLOBAL_BASE + (1ull << TA1_HBM_GLOBAL_SHIFT);
	}
}

/* A machine in state s: the executing chip's registers and memories. */
static struct ta1_machine *cached;

/* A machine whose chips can still run is reused (restoring overwrites all the
 * state a case can see); a faulted one is replaced. */
static struct ta1_machine *restore(const struct snap *s)
{
	struct ta1_machine *m = cached;
	for (unsigned i = 0; m && i < NCHIPS; i++)
		if (ta1_chip_state(ta1_machine_chip(m, i)) != TA1_CHIP_RUNNING) {
			ta1_machine_free(m);
			m = NULL;
		}
	if (!m) {
		m = h_machine(NCHIPS, CORE_SZ, VMEM_SZ, HBM_SZ);
		ta1_machine_set_output(m, devnull, devnull);
	}
	cached = m;
	struct ta1_chip *c = ta1_machine_chip(m, s->chip);
	for (unsigned r = 1; r < 32; r++)
		ta1_chip_set_reg(c, r, s->x[r]);
	ta1_chip_set_reg(c, TA1_REG_PC, s->pc);
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		ta1_chip_set_reg(c, TA1_REG_FLAG0 + f, s->flags[f]);
	ta1_chip_set_reg(c, TA1_REG_INSTRET, s->instret);
	for (unsigned w = 0; w < W_COUNT; w++)
		if (ta1_chip_write_mem(c, win_addr(w), s->mem[w], win_size[w]) != win_size[w]) {
			fprintf(stderr, "cannot restore %s\n", win_name[w]);
			exit(2);
		}
	return m;
}

static void capture(struct ta1_machine *m, unsigned chip, struct snap *s)
{
	struct ta1_chip *c = ta1_machine_chip(m, chip);
	s->chip = chip;
	for (unsigned r = 0; r < 32; r++)
		s->x[r] = ta1_chip_get_reg(c, r);
	s->pc = ta1_chip_get_reg(c, TA1_REG_PC);
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		s->flags[f] = ta1_chip_get_reg(c, TA1_REG_FLAG0 + f);
	s->instret = ta1_chip_get_reg(c, TA1_REG_INSTRET);
	for (unsigned w = 0; w < W_COUNT; w++)
		ta1_chip_read_mem(c, win_addr(w), s->mem[w], win_size[w]);
}

/* Value of register id r (x, pc, flags) in s. */
static uint64_t snap_reg(const struct snap *s, unsigned r)
{
	if (r < 32)
		return s->x[r];
	if (r == TA1_REG_PC)
		return s->pc;
	return s->flags[r - TA1_REG_FLAG0];
}

/* Marks, per window, the bytes of the regions with write == `write`. */
static unsigned mask_used[2]; /* per write flag: bit w = window w has marked bytes */

static void region_masks(const struct ta1_access *a, const struct ta1_query_ctx *q, int write,
			 uint8_t *mask[W_COUNT])
{
	mask_used[write] = 0;
	for (unsigned w = 0; w < W_COUNT; w++)
		memset(mask[w], 0, win_size[w]);
	for (unsigned i = 0; i < a->nregions; i++) {
		const struct ta1_region *r = &a->region[i];
		if (r->write != write || r->space == TA1_SPACE_NONE)
			continue;
		for (uint64_t row = 0; row < r->rows; row++) {
			uint64_t addr = r->addr + (uint64_t)((int64_t)row * r->stride), off;
			unsigned owner;
			enum ta1_space sp = ta1_classify(q, addr, r->row_bytes, &owner, &off);
			int w = sp == TA1_SPACE_CORE   ? W_CORE
				: sp == TA1_SPACE_VMEM ? W_VMEM
				: sp == TA1_SPACE_MXUW ? W_MXUW
				: sp == TA1_SPACE_HBM  ? (owner == 0 ? W_HBM0 : W_HBM1)
						       : -1;
			CHECK(w >= 0, "region %u row %llu at 0x%llx is in no memory", i,
			      (unsigned long long)row, (unsigned long long)addr);
			CHECK(sp == r->space && (sp != TA1_SPACE_HBM || owner == r->chip),
			      "region %u row %llu: space/chip differ from the region's", i,
			      (unsigned long long)row);
			if (w < 0 || off >= win_size[w])
				continue;
			uint64_t end = off + r->row_bytes < win_size[w] ? off + r->row_bytes : win_size[w];
			memset(mask[w] + off, 1, end - off);
			mask_used[write] |= 1u << w;
		}
	}
}

static char cur_desc[160];

/* (a) and (b): what changed between pre and post is inside q's write sets. */
static void check_writes(const struct snap *pre, const struct snap *post, const struct ta1_access *a,
			 uint8_t *const wmask[W_COUNT], int faulted, const char *run)
{
	for (unsigned r = 1; r < TA1_REG_FLAG0 + TA1_NUM_FLAGS; r++) {
		if (r == TA1_REG_PC && faulted)
			continue;
		if (snap_reg(pre, r) != snap_reg(post, r)) {
			CHECK(!faulted, "%s [%s]: register %u changed on a fault", cur_desc, run, r);
			CHECK(a->regs_written >> r & 1,
			      "%s [%s]: register %u changed (0x%llx -> 0x%llx) but is not in regs_written",
			      cur_desc, run, r, (unsigned long long)snap_reg(pre, r),
			      (unsigned long long)snap_reg(post, r));
		}
	}
	CHECK(post->pc == pre->pc || !faulted, "%s [%s]: pc moved on a fault", cur_desc, run);
	for (unsigned w = 0; w < W_COUNT; w++) {
		if (!memcmp(pre->mem[w], post->mem[w], win_size[w]))
			continue;
		for (uint64_t i = 0; i < win_size[w]; i++)
			if (pre->mem[w][i] != post->mem[w][i] && (faulted || !wmask[w][i])) {
				CHECK(0, "%s [%s]: %s byte 0x%llx changed outside every written region%s",
				      cur_desc, run, win_name[w], (unsigned long long)i,
				      faulted ? " (on a fault)" : "");
				break;
			}
	}
}

/* ---- random instructions ---------------------------------------------------- */

enum kind { K_CORE, K_VMEM, K_HBM, K_G0, K_G1, K_MXUW, K_BAD };

/* An address of `len` bytes in memory `k` (inside the test windows), aligned
 * to `align`; K_BAD gives one that lies (at least partly) in no memory. */
static uint64_t addr_of(enum kind k, uint64_t len, unsigned align)
{
	uint64_t base, size;
	switch (k) {
	case K_CORE:
		base = TA1_CORE_BASE;
		size = CORE_SZ;
		break;
	case K_VMEM:
		base = TA1_VMEM_BASE;
		size = VMEM_SZ;
		break;
	case K_HBM:
		base = TA1_HBM_BASE;
		size = HBM_WIN;
		break;
	case K_G0:
		base = TA1_HBM_GLOBAL_BASE;
		size = HBM_WIN;
		break;
	case K_G1:
		base = TA1_HBM_GLOBAL_BASE + (1ull << TA1_HBM_GLOBAL_SHIFT);
		size = HBM_WIN;
		break;
	case K_MXUW:
		base = TA1_MXUW_BASE;
		size = TA1_MXUW_SIZE;
		break;
	default:
		switch (h_below(6)) {
		case 0:
			return TA1_CORE_BASE + CORE_SZ - len / 2;
		case 1:
			return TA1_VMEM_BASE + VMEM_SZ - (len / 2 & ~3ull);
		case 2:
			return TA1_HBM_BASE + HBM_SZ - len / 2;
		case 3:
			return TA1_HBM_GLOBAL_BASE + (5ull << TA1_HBM_GLOBAL_SHIFT);
		case 4:
			return h_below(TA1_CORE_BASE);
		default:
			return h_rand() | (1ull << 63);
		}
	}
	if (len > size)
		return base + size;
	uint64_t off = h_below(size - len + 1);
	off -= off % align;
	return base + off;
}

static enum kind any_mem(void)
{
	unsigned r = (unsigned)h_below(40);
	if (r == 0)
		return K_MXUW;
	if (r == 1)
		return K_BAD;
	return (enum kind)(r % 5);
}

static uint64_t vec_addr(uint64_t len)
{
	unsigned r = (unsigned)h_below(40);
	if (r == 0)
		return addr_of(K_CORE, len, 4);
	if (r == 1)
		return addr_of(K_HBM, len, 4);
	if (r == 2)
		return addr_of(K_BAD, len, 4);
	if (r == 3)
		return addr_of(K_VMEM, len, 4) + 1 + h_below(3); /* misaligned */
	return addr_of(K_VMEM, len, 4);
}

static unsigned pick_reg(unsigned *used, unsigned nused)
{
	if (h_below(20) == 0)
		return 0;
	if (nused && h_below(10) == 0)
		return used[h_below(nused)];
	for (;;) {
		unsigned r = 1 + (unsigned)h_below(31);
		int clash = 0;
		for (unsigned i = 0; i < nused; i++)
			clash |= used[i] == r;
		if (!clash)
			return r;
	}
}

/* Builds a random instance of op in s (registers, pc) and returns it. */
static struct ta1_insn gen(enum ta1_op op, struct snap *s)
{
	const struct ta1_insn_info *ii = &ta1_insn_table[op];
	unsigned used[4], n = 0;
	struct ta1_insn in = {0};
	in.op = (uint16_t)op;
	for (; n < 4; n++)
		used[n] = pick_reg(used, n);
	in.rs1 = (uint8_t)used[0];
	in.rs2 = (uint8_t)used[1];
	in.rs3 = (uint8_t)used[2];
	in.rd = (uint8_t)used[3];
	switch (ii->format) {
	case TA1_FMT_I:
	case TA1_FMT_S:
		in.imm = (int64_t)h_below(4096) - 2048;
		break;
	case TA1_FMT_SH6:
		in.imm = (int64_t)h_below(64);
		break;
	case TA1_FMT_SH5:
		in.imm = (int64_t)h_below(32);
		break;
	case TA1_FMT_B:
		in.imm = ((int64_t)h_below(4096) - 2048) * 2;
		break;
	case TA1_FMT_U:
		in.imm = (int64_t)(int32_t)(uint32_t)(h_rand() & 0xfffff000u);
		break;
	case TA1_FMT_J:
		in.imm = ((int64_t)h_below(1 << 20) - (1 << 19)) * 2;
		break;
	case TA1_FMT_CSR:
	case TA1_FMT_CSRI: {
		static const unsigned csrs[] = {TA1_CSR_CYCLE, TA1_CSR_TIME, TA1_CSR_INSTRET};
		in.imm = h_below(8) ? csrs[h_below(3)] : (int64_t)h_below(4096);
		if (h_below(4))
			in.rs1 = 0;
		break;
	}
	default:
		break;
	}
	uint64_t *x = s->x;
#define SET(r, v)                                                                                            \
	do {                                                                                                 \
		if (r)                                                                                       \
			x[r] = (v);                                                                          \
	} while (0)
	switch (op) {
	case TA1_OP_LB:
	case TA1_OP_LH:
	case TA1_OP_LW:
	case TA1_OP_LD:
	case TA1_OP_LBU:
	case TA1_OP_LHU:
	case TA1_OP_LWU:
	case TA1_OP_SB:
	case TA1_OP_SH:
	case TA1_OP_SW:
	case TA1_OP_SD: {
		enum kind k = h_below(10) ? K_CORE : (enum kind)(1 + h_below(6));
		SET(in.rs1, addr_of(k, ii->mem_size, h_below(4) ? ii->mem_size : 1) - (uint64_t)in.imm);
		break;
	}
	case TA1_OP_ECALL: /* write(1, buf, len) */
		x[17] = 64;
		x[10] = 1;
		x[12] = h_below(64);
		x[11] = addr_of(h_below(10) ? K_CORE : K_BAD, x[12], 1);
		break;
	case TA1_OP_TA_DMA: {
		uint64_t bytes = h_below(8) ? h_below(2048) : 0;
		SET(in.rs3, bytes);
		SET(in.rs2, addr_of(any_mem(), bytes, 1));
		SET(in.rs1, addr_of(any_mem(), bytes, 1));
		SET(in.rd, h_below(20) ? h_below(TA1_NUM_FLAGS) : TA1_NUM_FLAGS + h_below(4));
		break;
	}
	case TA1_OP_TA_DMA2D: {
		uint64_t row = 1 + h_below(128), rows = h_below(12);
		int64_t ss = (int64_t)h_below(400) - 200, ds = (int64_t)h_below(400) - 200;
		uint64_t flag = h_below(20) ? h_below(TA1_NUM_FLAGS) : TA1_NUM_FLAGS + h_below(4);
		uint64_t ext = row + 200 * 12;
		/* place the start so that the strided extent stays in the window */
		SET(in.rs2, addr_of(any_mem(), ext, 1) + (ss < 0 ? 200 * 12 : 0));
		SET(in.rs1, addr_of(any_mem(), ext, 1) + (ds < 0 ? 200 * 12 : 0));
		SET(in.rs3, ta1_dma2d_shape(row, rows, flag));
		SET(in.rd, ta1_dma2d_strides(ds, ss));
		break;
	}
	case TA1_OP_TA_WAIT: {
		uint64_t f = h_below(20) ? h_below(TA1_NUM_FLAGS) : TA1_NUM_FLAGS + h_below(100);
		SET(in.rs1, f);
		SET(in.rs2, h_below(s->flags[f % TA1_NUM_FLAGS] + 2));
		break;
	}
	case TA1_OP_TA_VADD:
	case TA1_OP_TA_VMUL:
	case TA1_OP_TA_VMAX:
	case TA1_OP_TA_VSCALE:
	case TA1_OP_TA_VEXP: {
		uint64_t nel = h_below(10) ? h_below(2048) : 0;
		SET(in.rd, nel);
		SET(in.rs1, vec_addr(nel * 4));
		SET(in.rs2, vec_addr(nel * 4));
		SET(in.rs3, op == TA1_OP_TA_VSCALE ? (uint64_t)(uint32_t)h_rand() : vec_addr(nel * 4));
		break;
	}
	case TA1_OP_TA_VSUMROWS: {
		uint64_t rows = h_below(64), cols = h_below(64);
		SET(in.rs3, rows);
		SET(in.rd, cols);
		SET(in.rs2, vec_addr(rows * cols * 4));
		SET(in.rs1, vec_addr(rows * 4));
		break;
	}
	case TA1_OP_TA_MXU_LOAD:
		SET(in.rs1, vec_addr(TA1_MXUW_SIZE));
		break;
	case TA1_OP_TA_MXU_MM:
	case TA1_OP_TA_MXU_MMA: {
		uint64_t rows = h_below(24);
		SET(in.rd, rows);
		SET(in.rs1, vec_addr(rows * TA1_MXU_DIM * 4));
		SET(in.rs2,
		    h_below(8) ? vec_addr(rows * TA1_MXU_DIM * 4) : x[in.rs1]); /* sometimes dst == lhs */
		break;
	}
	default:
		break;
	}
#undef SET
	struct ta1_insn out;
	ta1_decode(ta1_encode(&in), &out); /* the fields the device will see */
	return out;
}

/* Where the instruction goes: an aligned slot in core memory. */
static uint64_t gen_pc(void)
{
	return TA1_CORE_BASE + (h_below(CORE_SZ / 4 - 1) * 4);
}

static uint64_t counter_read(const struct ta1_access *a)
{
	return (a->regs_read >> TA1_REG_CYCLE & 1) | (a->regs_read >> TA1_REG_INSTRET & 1);
}

static int same_access(const struct ta1_access *a, const struct ta1_access *b)
{
	if (a->regs_read != b->regs_read || a->regs_written != b->regs_written ||
	    a->nregions != b->nregions || (a->fault == NULL) != (b->fault == NULL))
		return 0;
	for (unsigned i = 0; i < a->nregions; i++)
		if (memcmp(&a->region[i], &b->region[i], sizeof(a->region[i])))
			return 0;
	return 1;
}

static unsigned faults_seen, cases_run;

static void one_case(enum ta1_op op, struct snap *S, struct snap *A, struct snap *S2, struct snap *B,
		     uint8_t *rmask[W_COUNT], uint8_t *wmask[W_COUNT], uint8_t *tmp)
{
	/* S: random state */
	S->chip = (unsigned)h_below(NCHIPS);
	for (unsigned r = 1; r < 32; r++)
		S->x[r] = h_below(4) ? h_rand() : h_below(64);
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		S->flags[f] = h_below(4);
	S->instret = h_rand() >> 8;
	for (unsigned w = 0; w < W_COUNT; w++)
		h_fill(S->mem[w], win_size[w]);
	struct ta1_insn in = gen(op, S);
	S->pc = gen_pc();
	uint32_t word = ta1_encode(&in);
	memcpy(S->mem[W_CORE] + (S->pc - TA1_CORE_BASE), &word, 4);

	char dis[96];
	ta1_disasm(&in, S->pc, dis, sizeof(dis));
	snprintf(cur_desc, sizeof(cur_desc), "%s (chip %u)", dis, S->chip);

	/* q and A */
	struct ta1_machine *m = restore(S);
	struct ta1_chip *c = ta1_machine_chip(m, S->chip);
	struct ta1_query_ctx q;
	struct ta1_access a;
	ta1_chip_query_ctx(c, &q);
	ta1_access_query(&in, &q, &a);
	enum ta1_stop st = ta1_chip_step(c);
	int faulted = st == TA1_STOP_FAULT;
	capture(m, S->chip, A);
	/* The one stop the query cannot foresee: ta.wait for more completions
	 * than its flag holds. On this pod of NCHIPS chips another chip could
	 * still signal it (ta.dma.notify), so the chip blocks at the wait and
	 * changes nothing (ta1_machine_run faults on a pod-wide deadlock). */
	int blocks = op == TA1_OP_TA_WAIT && !a.fault && S->flags[S->x[in.rs1]] < S->x[in.rs2];
	CHECK(faulted == (a.fault != NULL), "%s: query says %s, device %s%s", cur_desc,
	      a.fault ? a.fault : "no fault", faulted ? "faulted: " : "did not fault",
	      faulted ? ta1_chip_fault(c) : "");
	CHECK(op == TA1_OP_EBREAK ? st == TA1_STOP_EBREAK
	      : blocks		  ? st == TA1_STOP_BLOCKED && ta1_chip_blocked(c)
				  : (st == TA1_STOP_BUDGET || faulted),
	      "%s: unexpected stop %d", cur_desc, (int)st);
	faults_seen += faulted;
	cases_run++;
	region_masks(&a, &q, 1, wmask);
	region_masks(&a, &q, 0, rmask);
	check_writes(S, A, &a, wmask, faulted, "A");

	/* S': randomise everything q does not read */
	snap_copy(S2, S);
	for (unsigned r = 1; r < TA1_REG_FLAG0 + TA1_NUM_FLAGS; r++) {
		if (r == TA1_REG_PC || (a.regs_read >> r & 1))
			continue;
		if (r < 32)
			S2->x[r] = h_rand();
		else
			S2->flags[r - TA1_REG_FLAG0] = h_below(8);
	}
	if (!counter_read(&a))
		S2->instret = h_rand() >> 8;
	for (unsigned w = 0; w < W_COUNT; w++) {
		if (!(mask_used[0] >> w & 1)) {
			h_fill(S2->mem[w], win_size[w]);
			continue;
		}
		h_fill(tmp, win_size[w]);
		for (uint64_t i = 0; i < win_size[w]; i++)
			if (!rmask[w][i])
				S2->mem[w][i] = tmp[i];
	}
	memcpy(S2->mem[W_CORE] + (S2->pc - TA1_CORE_BASE), &word, 4); /* the fetch reads the code word */

	m = restore(S2);
	c = ta1_machine_chip(m, S2->chip);
	struct ta1_access a2;
	ta1_chip_query_ctx(c, &q);
	ta1_access_query(&in, &q, &a2);
	CHECK(same_access(&a, &a2), "%s: the query changed when only unread state changed", cur_desc);
	st = ta1_chip_step(c);
	int faulted2 = st == TA1_STOP_FAULT;
	capture(m, S2->chip, B);
	CHECK(faulted2 == faulted,
	      "%s: faulted %d with the original state, %d with unread state randomised (%s)", cur_desc,
	      faulted, faulted2, ta1_chip_fault(c));
	check_writes(S2, B, &a, wmask, faulted2, "B");
	if (faulted || faulted2)
		return;
	for (unsigned r = 1; r < TA1_REG_FLAG0 + TA1_NUM_FLAGS; r++)
		if ((a.regs_written >> r & 1) && snap_reg(A, r) != snap_reg(B, r))
			CHECK(0,
			      "%s: written register %u is 0x%llx, but 0x%llx with unread state randomised: "
			      "the read set "
			      "is incomplete",
			      cur_desc, r, (unsigned long long)snap_reg(A, r),
			      (unsigned long long)snap_reg(B, r));
	for (unsigned w = 0; w < W_COUNT; w++)
		for (uint64_t i = 0; (mask_used[1] >> w & 1) && i < win_size[w]; i++)
			if (wmask[w][i] && A->mem[w][i] != B->mem[w][i]) {
				CHECK(0,
				      "%s: written %s byte 0x%llx is %02x, but %02x with unread state "
				      "randomised: the "
				      "read set is incomplete",
				      cur_desc, win_name[w], (unsigned long long)i, A->mem[w][i],
				      B->mem[w][i]);
				break;
			}
}

static void test_random(void)
{
	struct snap S, A, S2, B;
	uint8_t *rmask[W_COUNT], *wmask[W_COUNT];
	uint8_t *tmp = malloc(VMEM_SZ);
	snap_init(&S);
	snap_init(&A);
	snap_init(&S2);
	snap_init(&B);
	for (unsigned w = 0; w < W_COUNT; w++) {
		rmask[w] = malloc(win_size[w]);
		wmask[w] = malloc(win_size[w]);
	}
	for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
		unsigned before = (unsigned)check_failures;
		for (unsigned k = 0; k < CASES_PER_OP; k++) {
			one_case((enum ta1_op)op, &S, &A, &S2, &B, rmask, wmask, tmp);
			if ((unsigned)check_failures > before + 5)
				break; /* one broken opcode should not drown the report */
		}
	}
	printf("test_access: %u random cases, %u of them faulting\n", cases_run, faults_seen);
	for (unsigned w = 0; w < W_COUNT; w++) {
		free(rmask[w]);
		free(wmask[w]);
	}
	snap_free(&S);
	snap_free(&A);
	snap_free(&S2);
	snap_free(&B);
	free(tmp);
}

/* ---- exact shapes ------------------------------------------------------------ */

static void expect_region(const struct ta1_access *a, unsigned i, int write, enum ta1_space sp, unsigned chip,
			  uint64_t addr, uint64_t row_bytes, uint64_t rows, int64_t stride, const char *what)
{
	CHECK(i < a->nregions, "%s: no region %u", what, i);
	if (i >= a->nregions)
		return;
	const struct ta1_region *r = &a->region[i];
	CHECK(r->write == write && r->space == sp && r->chip == chip && r->addr == addr &&
		  r->row_bytes == row_bytes && r->rows == rows && r->stride == stride,
	      "%s: region %u is {write %u space %u chip %u addr 0x%llx row_bytes %llu rows %llu stride %lld}",
	      what, i, r->write, r->space, r->chip, (unsigned long long)r->addr,
	      (unsigned long long)r->row_bytes, (unsigned long long)r->rows, (long long)r->stride);
}

static void test_shapes(void)
{
	uint64_t x[32] = {0};
	struct ta1_query_ctx q = {x, 0, 2, CORE_SZ, VMEM_SZ, HBM_SZ};
	struct ta1_access a;
	struct ta1_insn d2 = h_insn(TA1_OP_TA_DMA2D, 13, 10, 11, 12, 0);
	const uint64_t common =
	    (1ull << 10) | (1ull << 11) | (1ull << 12) | (1ull << 13) | (1ull << TA1_REG_PC);

	/* HBM of chip 1 (global) -> VMEM, 5 rows of 48 bytes, src stride +64, dst stride -96 */
	x[10] = TA1_VMEM_BASE + 0x1000;
	x[11] = TA1_HBM_GLOBAL_BASE + (1ull << 40) + 0x200;
	x[12] = ta1_dma2d_shape(48, 5, 3);
	x[13] = ta1_dma2d_strides(-96, 64);
	ta1_access_query(&d2, &q, &a);
	CHECK(!a.fault && a.nregions == 2, "dma2d: fault %s, %u regions", a.fault ? a.fault : "-",
	      a.nregions);
	expect_region(&a, 0, 0, TA1_SPACE_HBM, 1, x[11], 48, 5, 64, "dma2d src");
	expect_region(&a, 1, 1, TA1_SPACE_VMEM, 0, x[10], 48, 5, -96, "dma2d dst");
	CHECK(a.regs_read == (common | 1ull << (TA1_REG_FLAG0 + 3)), "dma2d regs_read 0x%llx",
	      (unsigned long long)a.regs_read);
	CHECK(a.regs_written == (1ull << TA1_REG_PC | 1ull << (TA1_REG_FLAG0 + 3)),
	      "dma2d regs_written 0x%llx", (unsigned long long)a.regs_written);

	/* local HBM with a negative source stride; the extent 0x100 - 3*0x80 .. lies below HBM: fault */
	x[11] = TA1_HBM_BASE + 0x100;
	x[12] = ta1_dma2d_shape(16, 4, 0);
	x[13] = ta1_dma2d_strides(16, -0x80);
	ta1_access_query(&d2, &q, &a);
	CHECK(a.fault && a.fault_region == 1, "dma2d running below HBM: fault %s region %u",
	      a.fault ? a.fault : "-", a.fault_region);
	/* the same but in range: 4 rows, first at +0x180, stride -0x80 */
	x[11] = TA1_HBM_BASE + 0x180;
	ta1_access_query(&d2, &q, &a);
	CHECK(!a.fault, "dma2d in range: %s", a.fault ? a.fault : "-");
	expect_region(&a, 0, 0, TA1_SPACE_HBM, 0, TA1_HBM_BASE + 0x180, 16, 4, -0x80, "dma2d negative src");
	expect_region(&a, 1, 1, TA1_SPACE_VMEM, 0, x[10], 16, 4, 16, "dma2d contiguous dst");
	/* zero rows: no regions, the flag is still counted */
	x[12] = ta1_dma2d_shape(16, 0, 9);
	ta1_access_query(&d2, &q, &a);
	CHECK(!a.fault && a.nregions == 0 && (a.regs_written >> (TA1_REG_FLAG0 + 9) & 1),
	      "dma2d with zero rows");
	/* chip 1 executing: its local HBM is chip 1's */
	q.chip = 1;
	x[12] = ta1_dma2d_shape(16, 2, 0);
	x[11] = TA1_HBM_BASE + 0x80;
	ta1_access_query(&d2, &q, &a);
	expect_region(&a, 0, 0, TA1_SPACE_HBM, 1, TA1_HBM_BASE + 0x80, 16, 2, -0x80,
		      "dma2d local HBM of chip 1");
	q.chip = 0;

	/* 1-D DMA: rows 1, stride 0 */
	struct ta1_insn d1 = h_insn(TA1_OP_TA_DMA, 13, 10, 11, 12, 0);
	x[10] = TA1_CORE_BASE + 0x100;
	x[11] = TA1_HBM_GLOBAL_BASE + 0x40;
	x[12] = 1000;
	x[13] = 15;
	ta1_access_query(&d1, &q, &a);
	expect_region(&a, 0, 0, TA1_SPACE_HBM, 0, x[11], 1000, 1, 0, "dma src");
	expect_region(&a, 1, 1, TA1_SPACE_CORE, 0, x[10], 1000, 1, 0, "dma dst");

	/* mxu.mma: lhs, weights, dst read, dst written */
	struct ta1_insn mma = h_insn(TA1_OP_TA_MXU_MMA, 13, 10, 11, 0, 0);
	x[10] = TA1_VMEM_BASE + 0x8000;
	x[11] = TA1_VMEM_BASE;
	x[13] = 3;
	ta1_access_query(&mma, &q, &a);
	CHECK(a.nregions == 4, "mma: %u regions", a.nregions);
	expect_region(&a, 0, 0, TA1_SPACE_VMEM, 0, x[11], 3 * 512, 1, 0, "mma lhs");
	expect_region(&a, 1, 0, TA1_SPACE_MXUW, 0, TA1_MXUW_BASE, TA1_MXUW_SIZE, 1, 0, "mma weights");
	expect_region(&a, 2, 0, TA1_SPACE_VMEM, 0, x[10], 3 * 512, 1, 0, "mma dst read");
	expect_region(&a, 3, 1, TA1_SPACE_VMEM, 0, x[10], 3 * 512, 1, 0, "mma dst");

	/* vsumrows: rows*cols in, rows out */
	struct ta1_insn vs = h_insn(TA1_OP_TA_VSUMROWS, 13, 10, 11, 12, 0);
	x[12] = 7;
	x[13] = 9;
	ta1_access_query(&vs, &q, &a);
	expect_region(&a, 0, 0, TA1_SPACE_VMEM, 0, x[11], 7 * 9 * 4, 1, 0, "vsumrows src");
	expect_region(&a, 1, 1, TA1_SPACE_VMEM, 0, x[10], 7 * 4, 1, 0, "vsumrows dst");

	/* wait: reads and writes its flag only */
	struct ta1_insn wt = h_insn(TA1_OP_TA_WAIT, 0, 10, 11, 0, 0);
	x[10] = 5;
	ta1_access_query(&wt, &q, &a);
	CHECK(a.nregions == 0 &&
		  a.regs_read ==
		      (1ull << 10 | 1ull << 11 | 1ull << TA1_REG_PC | 1ull << (TA1_REG_FLAG0 + 5)) &&
		  a.regs_written == (1ull << TA1_REG_PC | 1ull << (TA1_REG_FLAG0 + 5)),
	      "wait: read 0x%llx written 0x%llx", (unsigned long long)a.regs_read,
	      (unsigned long long)a.regs_written);
}

/* ta1_access_scalar_mem (the GRM's per-instruction shortcut for loads and
 * stores) gives what the query gives whenever it answers, and declines
 * exactly when the query finds the address outside core memory. */
static void test_scalar_mem_shortcut(void)
{
	uint64_t x[32];
	struct ta1_query_ctx q = {.x = x, .chip = 3, .nchips = 4, .core_size = 1 << 16, .vmem_size = 1 << 20,
				  .hbm_size = 1 << 20};
	static const enum ta1_op ops[] = {TA1_OP_LB, TA1_OP_LH,  TA1_OP_LW, TA1_OP_LD, TA1_OP_LBU, TA1_OP_LHU,
					  TA1_OP_LWU, TA1_OP_SB, TA1_OP_SH, TA1_OP_SW, TA1_OP_SD};
	static const uint64_t bases[] = {TA1_CORE_BASE, TA1_CORE_BASE + (1 << 16), TA1_VMEM_BASE, TA1_HBM_BASE,
					 0, UINT64_MAX - 8};
	unsigned answered = 0, declined = 0;
	for (unsigned k = 0; k < 200000; k++) {
		enum ta1_op op = ops[h_below(sizeof(ops) / sizeof(ops[0]))];
		h_fill(x, sizeof(x));
		x[0] = 0;
		struct ta1_insn in = h_insn(op, (unsigned)h_below(32), (unsigned)h_below(32), (unsigned)h_below(32), 0,
					    (int64_t)h_below(4096) - 2048);
		if (in.rs1 && h_below(4)) /* near an edge of some memory */
			x[in.rs1] = bases[h_below(sizeof(bases) / sizeof(bases[0]))] + h_below(32) - 16 - (uint64_t)in.imm;
		struct ta1_access want, got;
		ta1_access_query(&in, &q, &want);
		const struct ta1_insn_info *ii = &ta1_insn_table[op];
		memset(&got, 0xa5, sizeof(got));
		if (!ta1_access_scalar_mem(&in, &q, ii->cls == TA1_CLASS_STORE, ii->mem_size, want.regs_read,
					   want.regs_written, &got)) {
			declined++;
			CHECK(want.fault && want.region[0].space != TA1_SPACE_CORE,
			      "%s at 0x%llx: the shortcut declined an access in core memory", ii->mnemonic,
			      (unsigned long long)(x[in.rs1] + (uint64_t)in.imm));
			continue;
		}
		answered++;
		CHECK(!want.fault && got.fault == NULL && got.fault_region == 0 && got.nregions == want.nregions &&
			  got.regs_read == want.regs_read && got.regs_written == want.regs_written &&
			  got.region[0].space == want.region[0].space && got.region[0].write == want.region[0].write &&
			  got.region[0].chip == want.region[0].chip && got.region[0].addr == want.region[0].addr &&
			  got.region[0].row_bytes == want.region[0].row_bytes &&
			  got.region[0].rows == want.region[0].rows && got.region[0].stride == want.region[0].stride,
		      "%s at 0x%llx: the shortcut's access differs from the query's", ii->mnemonic,
		      (unsigned long long)(x[in.rs1] + (uint64_t)in.imm));
	}
	printf("test_access: scalar shortcut answered %u, declined %u (outside core memory)\n", answered, declined);
	CHECK(answered > 1000 && declined > 1000, "the shortcut's cases missed a side");
}

int main(void)
{
	devnull = open("/dev/null", O_WRONLY);
	test_shapes();
	test_scalar_mem_shortcut();
	test_random();
	ta1_machine_free(cached);
	close(devnull);
	return check_report("test_access");
}
