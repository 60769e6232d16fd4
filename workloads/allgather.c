/*
 * allgather.c: All-Gather across the chips of a pod (the paper's §5.2.1
 * case). Every chip gathers the shard of each peer from the peer's HBM into
 * its own VMEM over the inter-chip links.
 *
 * To find a peer's shard, a chip first runs a setup phase: for each peer, a
 * small DMA fetches the peer's address table from its HBM, and two more
 * small DMAs that use the table fetch the shard's descriptor and its ready
 * word. With 4 chips that is 9 small DMAs in 3 dependent groups. The setup
 * DMAs are tiny, so each costs about the DMA base latency: base-latency
 * stall dominates the setup.
 *
 *   default         the groups one peer after another (3 x 2 dependent steps)
 *   -DEARLY_TABLE   each peer's table DMA issued before the previous peer's
 *                   group is waited for: the move `snr analyze suggest`
 *                   proposes on the default's window (half of -DPARALLEL)
 *   -DPARALLEL      the three table DMAs together, then the six that use them
 *   -DPINNED        addresses known at build time: no setup DMAs at all
 *
 * Prints the cycles of setup and of the whole gather (ta_cycles(), modelled
 * under `snr device --timing`) and a checksum of the gathered data.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef SHARD_BYTES
#define SHARD_BYTES (768 * 1024)
#endif
#define MAX_CHIPS 8

struct table {
	uint64_t shard;      /* HBM offset of the shard */
	uint64_t descriptor; /* HBM offset of its descriptor */
	uint64_t ready;      /* HBM offset of its ready word */
	uint64_t pad[5];
};

TA_HBM_DATA static const uint8_t shard[SHARD_BYTES] = {1, 2, 3, 4, 5, 6, 7, 8};
TA_HBM_DATA static const uint64_t descriptor[8] = {SHARD_BYTES, 0x5eed};
TA_HBM_DATA static const uint64_t ready[8] = {1};
/* Offsets relative to TA_HBM_BASE, fixed at link time; the device loads
 * this into every chip's HBM, so a peer's table is valid from reset. */
TA_HBM_DATA static const struct table table = {
	.shard = (uintptr_t)shard - TA_HBM_BASE,
	.descriptor = (uintptr_t)descriptor - TA_HBM_BASE,
	.ready = (uintptr_t)ready - TA_HBM_BASE,
};

static struct table tables[MAX_CHIPS];
static uint64_t descs[MAX_CHIPS][8], readies[MAX_CHIPS][8];

static uint64_t off(const void *p) { return ta_addr(p) - TA_HBM_BASE; }

enum { F_TABLE = 1, F_META = 2, F_DATA = 3 };

static void use_table(uint64_t peer)
{
	/* two DMAs that need the peer's table */
	ta_dma(ta_addr(descs[peer]), ta_hbm_of(peer, tables[peer].descriptor), 64, F_META);
	ta_dma(ta_addr(readies[peer]), ta_hbm_of(peer, tables[peer].ready), 64, F_META);
}

__attribute__((noinline)) void setup(uint64_t me, uint64_t n)
{
#if defined(PINNED)
	for (uint64_t p = 0; p < n; p++) {
		tables[p].shard = off(shard);
		descs[p][0] = SHARD_BYTES;
		readies[p][0] = 1;
	}
	(void)me;
#elif defined(EARLY_TABLE)
	uint64_t p = me == 0 ? 1 : 0;
	if (p < n)
		ta_dma(ta_addr(&tables[p]), ta_hbm_of(p, off(&table)), sizeof(struct table), F_TABLE);
	while (p < n) {
		uint64_t q = p + 1 == me ? p + 2 : p + 1; /* the next peer */
		ta_wait(F_TABLE, 1);
		use_table(p);
		if (q < n) /* its table DMA in flight while this peer's group completes */
			ta_dma(ta_addr(&tables[q]), ta_hbm_of(q, off(&table)), sizeof(struct table), F_TABLE);
		ta_wait(F_META, 2);
		p = q;
	}
#elif defined(PARALLEL)
	for (uint64_t p = 0; p < n; p++)
		if (p != me)
			ta_dma(ta_addr(&tables[p]), ta_hbm_of(p, off(&table)), sizeof(struct table), F_TABLE);
	ta_wait(F_TABLE, n - 1);
	for (uint64_t p = 0; p < n; p++)
		if (p != me)
			use_table(p);
	ta_wait(F_META, 2 * (n - 1));
#else
	for (uint64_t p = 0; p < n; p++) {
		if (p == me)
			continue;
		ta_dma(ta_addr(&tables[p]), ta_hbm_of(p, off(&table)), sizeof(struct table), F_TABLE);
		ta_wait(F_TABLE, 1);
		use_table(p);
		ta_wait(F_META, 2);
	}
#endif
}

__attribute__((noinline)) void gather(uint64_t me, uint64_t n)
{
	for (uint64_t p = 0; p < n; p++)
		if (p != me && readies[p][0])
			ta_dma(TA_VMEM_BASE + p * SHARD_BYTES, ta_hbm_of(p, tables[p].shard), descs[p][0], F_DATA);
	ta_dma(TA_VMEM_BASE + me * SHARD_BYTES, ta_addr(shard), SHARD_BYTES, F_DATA);
	ta_wait(F_DATA, n);
}

int main(void)
{
	uint64_t me = ta_chip_id(), n = ta_num_chips();
	if (n > MAX_CHIPS || (uint64_t)SHARD_BYTES * n > TA_VMEM_SIZE) {
		printf("allgather: %llu chips do not fit\n", (unsigned long long)n);
		return 1;
	}
	uint64_t t0 = ta_cycles();
	setup(me, n);
	uint64_t t1 = ta_cycles();
	gather(me, n);
	uint64_t t2 = ta_cycles();

	/* checksum of the first 64 bytes of every gathered shard */
	static uint8_t head[MAX_CHIPS][64];
	for (uint64_t p = 0; p < n; p++)
		ta_dma(ta_addr(head[p]), TA_VMEM_BASE + p * SHARD_BYTES, 64, 0);
	ta_wait(0, n);
	uint32_t h = 2166136261u;
	for (uint64_t p = 0; p < n; p++)
		for (int i = 0; i < 64; i++)
			h = (h ^ head[p][i]) * 16777619u;
	if (me == 0)
		printf("allgather%s: %llu chips, %u-byte shards, setup %llu cycles, total %llu cycles, checksum %08x\n",
#if defined(PINNED)
		       " (pinned)",
#elif defined(EARLY_TABLE)
		       " (early table DMAs)",
#elif defined(PARALLEL)
		       " (parallel setup)",
#else
		       "",
#endif
		       (unsigned long long)n, SHARD_BYTES, (unsigned long long)(t1 - t0),
		       (unsigned long long)(t2 - t0), (unsigned)h);
	return 0;
}
