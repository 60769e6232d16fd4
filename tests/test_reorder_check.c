/*
 * test_reorder_check.c: the what-if's check that a moved window computes
 * what the original did (analyzer/reorder_check.c) and its buffer renaming
 * (analyzer/rename.c), on hand-made executions in a changed order: each
 * planted dependence is found with its kind and the two instructions, and
 * the orders that keep every dependence pass.
 */
#include <string.h>

#include "analyzer/rename.h"
#include "analyzer/reorder_check.h"
#include "analyzer/whatif.h"
#include "check.h"

#define V 0x20000000ull
#define FLAG(f) (1ull << (TA1_REG_FLAG0 + (f)))

/* static instructions: 0 a DMA on flag 1 (reads x10), 1 a vector op, 2 an
 * add writing x10, 3 a WAIT on flag 1, 4 an add reading x11, 5 a DMA on flag 2;
 * decoded as DMAs and WAITs (the in-flight accounting): 6 a ta.dma on flag 1,
 * 7 a ta.dma on flag 2, 8 a ta.wait on flag 2 */
static struct cap_static st[] = {
	{.regs_read = 1ull << 10, .regs_written = FLAG(1)},
	{.regs_read = 0, .regs_written = 0},
	{.regs_read = 1ull << 12, .regs_written = 1ull << 10},
	{.regs_read = FLAG(1), .regs_written = FLAG(1)},
	{.regs_read = 1ull << 11, .regs_written = 1ull << 13},
	{.regs_read = 0, .regs_written = FLAG(2)},
	{.in = {.op = TA1_OP_TA_DMA}, .regs_read = 0, .regs_written = FLAG(1)},
	{.in = {.op = TA1_OP_TA_DMA}, .regs_read = 0, .regs_written = FLAG(2)},
	{.in = {.op = TA1_OP_TA_WAIT}, .regs_read = FLAG(2), .regs_written = FLAG(2)},
};
static unsigned pre_window2; /* completions on flag 2 from before the window */


static struct ta1_region vm(uint64_t addr, uint64_t bytes, int write)
{
	return (struct ta1_region){.space = TA1_SPACE_VMEM, .write = (uint8_t)write, .addr = addr, .row_bytes = bytes,
				   .rows = 1};
}

static struct cap_rec mk(uint32_t sidx, unsigned n, const struct ta1_region *g)
{
	struct cap_rec r = {.sidx = sidx, .nregions = (uint8_t)n};
	for (unsigned k = 0; k < n; k++)
		r.region[k] = g[k];
	return r;
}

/* Feeds recs in the order `order` (original indices), moved ones listed;
 * renames applied; returns the conflict (renames' clash first, as whatif.c). */
static struct an_conflict run(const struct cap_rec *recs, const uint64_t *order, size_t n, const uint64_t *moved,
			      size_t nmoved, const struct an_rename *rn, size_t nrn, struct cap_rec *out)
{
	struct capture c;
	memset(&c, 0, sizeof(c));
	c.st = st;
	c.nst = sizeof(st) / sizeof(st[0]);
	c.pre_window[2] = pre_window2;
	struct an_checker k;
	struct an_renamer r;
	an_check_begin(&k, &c, moved, nmoved);
	an_rename_begin(&r, &c, rn, nrn);
	for (size_t j = 0; j < n; j++) {
		struct cap_rec x = recs[order[j]];
		an_rename_apply(&r, &x, order[j], an_check_moved(&k, order[j]));
		an_check_exec(&k, &x, order[j]);
		if (out)
			out[order[j]] = x;
	}
	struct an_conflict cf = k.first;
	if (r.clash)
		cf = (struct an_conflict){r.clash_partial ? AN_CONFLICT_PARTIAL : AN_CONFLICT_RENAMED, r.clash_dma,
					  r.clash_index, 0, 0, r.clash_reader};
	an_rename_end(&r);
	an_check_end(&k);
	return cf;
}

int main(void)
{
	/* 0: vector op reads the old tile at V; 1: the DMA of the next tile into
	 * V (src HBM); 2: a vector op reads the new tile */
	struct ta1_region g0[] = {vm(V, 4096, 0), vm(V + 0x10000, 4096, 1)};
	struct ta1_region g1[] = {{.space = TA1_SPACE_HBM, .addr = 0x1000, .row_bytes = 4096, .rows = 1}, vm(V, 4096, 1)};
	struct ta1_region g2[] = {vm(V, 4096, 0), vm(V + 0x20000, 4096, 1)};
	struct cap_rec recs[3] = {mk(1, 2, g0), mk(0, 2, g1), mk(1, 2, g2)};
	uint64_t orig[] = {0, 1, 2}, early[] = {1, 0, 2}, moved[] = {1};

	/* the original order: nothing moved, nothing broken */
	struct an_conflict cf = run(recs, orig, 3, NULL, 0, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_NONE, "the original order: kind %d", cf.kind);
	/* the DMA moved before the read of its own buffer: a WAR */
	cf = run(recs, early, 3, moved, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_WRITES_READ && cf.moved == 1 && cf.other == 0 && cf.addr == V,
	      "the DMA moved over a read of its buffer: kind %d moved %llu other %llu addr 0x%llx", cf.kind,
	      (unsigned long long)cf.moved, (unsigned long long)cf.other, (unsigned long long)cf.addr);
	/* renamed to a free region: safe, and the reader of the new tile reads there */
	struct an_rename rn = {1, V, V + 4096, V + 0x40000, 0, -1, -1};
	struct cap_rec out[3];
	cf = run(recs, early, 3, moved, 1, &rn, 1, out);
	CHECK(cf.kind == AN_CONFLICT_NONE, "renamed: kind %d", cf.kind);
	CHECK(out[1].region[1].addr == V + 0x40000, "the DMA writes the second buffer: 0x%llx",
	      (unsigned long long)out[1].region[1].addr);
	CHECK(out[2].region[0].addr == V + 0x40000, "its reader reads there: 0x%llx",
	      (unsigned long long)out[2].region[0].addr);
	CHECK(out[0].region[0].addr == V, "the earlier tile's reader still reads the first buffer");
	/* renamed onto a region another instruction writes before the new
	 * tile's last read (the row-sum buffer case): refused */
	struct ta1_region g2b[] = {vm(V + 0x40000, 256, 1)}; /* the row sums, written into the second buffer */
	struct cap_rec recs4[4] = {mk(1, 2, g0), mk(0, 2, g1), mk(1, 1, g2b), mk(1, 2, g2)};
	uint64_t early4[] = {1, 0, 2, 3};
	cf = run(recs4, early4, 4, moved, 1, &rn, 1, NULL);
	CHECK(cf.kind == AN_CONFLICT_RENAMED && cf.moved == 1 && cf.other == 2 && cf.addr == 3,
	      "the second buffer taken before the last read: kind %d moved %llu other %llu reader %llu", cf.kind,
	      (unsigned long long)cf.moved, (unsigned long long)cf.other, (unsigned long long)cf.addr);
	/* written after the last read: fine */
	struct cap_rec recs4b[4] = {mk(1, 2, g0), mk(0, 2, g1), mk(1, 2, g2), mk(1, 1, g2b)};
	cf = run(recs4b, early4, 4, moved, 1, &rn, 1, NULL);
	CHECK(cf.kind == AN_CONFLICT_NONE, "the second buffer taken after the last read: kind %d", cf.kind);

	/* registers: the DMA reads x10, which instruction 0 (an add) computes */
	struct cap_rec rr[3] = {mk(2, 0, NULL), mk(0, 0, NULL), mk(1, 0, NULL)};
	cf = run(rr, early, 3, moved, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_REGISTER && cf.addr == 10, "a register input passed: kind %d x%llu", cf.kind,
	      (unsigned long long)cf.addr);
	/* ... unless the add moves with it (its slice) */
	uint64_t both[] = {0, 1};
	uint64_t early_both[] = {0, 1, 2};
	cf = run(rr, early_both, 3, both, 2, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_NONE, "moved with its slice: kind %d", cf.kind);
	/* flags: a DMA on flag 1 moved over a WAIT on flag 1 */
	struct cap_rec rf[2] = {mk(3, 0, NULL), mk(0, 0, NULL)};
	uint64_t fe[] = {1, 0};
	cf = run(rf, fe, 2, moved, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_FLAG && cf.addr == 1, "a WAIT on its flag passed: kind %d flag %llu", cf.kind,
	      (unsigned long long)cf.addr);
	/* a DMA on flag 2 moved over it: fine */
	struct cap_rec rf2[2] = {mk(3, 0, NULL), mk(5, 0, NULL)};
	cf = run(rf2, fe, 2, moved, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_NONE, "a WAIT on another flag passed: kind %d", cf.kind);
	/* a read that moves over a write of its input */
	struct ta1_region w0[] = {vm(V + 100, 8, 1)}, r1[] = {vm(V, 4096, 0)};
	struct cap_rec rw[2] = {mk(1, 1, w0), mk(1, 1, r1)};
	cf = run(rw, fe, 2, moved, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_READS_WRITTEN && cf.addr == V + 100, "a read moved over its input's write: %d",
	      cf.kind);

	/* a DMA's source is read until the WAIT that consumes it: 0 sends V out
	 * (flag 2), 1 a vector op elsewhere, 2 the WAIT for it, 3 a DMA refills V
	 * (flag 1). Moved above the WAIT, the refill overwrites V in flight. */
	struct ta1_region s0[] = {vm(V, 256, 0), {.space = TA1_SPACE_HBM, .write = 1, .addr = 0x8000, .row_bytes = 256, .rows = 1}};
	struct ta1_region s1[] = {vm(V + 0x10000, 256, 0)};
	struct ta1_region s3[] = {{.space = TA1_SPACE_HBM, .addr = 0x9000, .row_bytes = 256, .rows = 1}, vm(V + 64, 64, 1)};
	struct cap_rec rs[4] = {mk(7, 2, s0), mk(1, 1, s1), mk(8, 0, NULL), mk(6, 2, s3)};
	rs[0].xv[0] = 2;
	rs[2].xv[1] = 2;
	rs[2].xv[2] = 1;
	rs[3].xv[0] = 1;
	uint64_t so[] = {0, 1, 2, 3}, sm[] = {0, 3, 1, 2}, smv[] = {3};
	cf = run(rs, so, 4, NULL, 0, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_NONE, "the send and its refill in order: kind %d", cf.kind);
	cf = run(rs, sm, 4, smv, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_IN_FLIGHT && cf.moved == 3 && cf.other == 0 && cf.addr == V + 64,
	      "the refill moved above the send's WAIT: kind %d moved %llu other %llu addr 0x%llx", cf.kind,
	      (unsigned long long)cf.moved, (unsigned long long)cf.other, (unsigned long long)cf.addr);
	/* that WAIT consumes a DMA from before the window instead: the send is
	 * still in flight after it, the original wrote V during it too */
	pre_window2 = 1;
	cf = run(rs, sm, 4, smv, 1, NULL, 0, NULL);
	pre_window2 = 0;
	CHECK(cf.kind == AN_CONFLICT_NONE, "the WAIT consumes an earlier DMA: kind %d", cf.kind);
	/* the refill into another buffer: fine */
	rs[3].region[1].addr = V + 0x20000;
	cf = run(rs, sm, 4, smv, 1, NULL, 0, NULL);
	CHECK(cf.kind == AN_CONFLICT_NONE, "the refill writes elsewhere: kind %d", cf.kind);
	return check_report("test_reorder_check");
}
