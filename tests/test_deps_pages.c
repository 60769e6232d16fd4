/*
 * test_deps_pages.c: analyzer/deps_pages's VMEM page values against a
 * plain model in memory. Random reads and writes of a few pages, in cycle
 * order, with every spill budget at 1 KiB (SNR_SPILL_MEM: the values are
 * read back from the temporary file): the values filed per page (start[]),
 * each value's lo, hi, writer and running maximum, and the two searches
 * (first_live, first_from) at random cycles against a scan of the model;
 * once with few values (a small block cache) and once with more values
 * than the 16 MiB block cache holds (blocks evicted and read again).
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/deps_pages.h"
#include "check.h"
#include "lib/snr_util.h"

static uint64_t rng = 88172645463325252ull;

struct mval {
	uint64_t lo, hi, writer;
};

struct mpage {
	struct mval *v;
	size_t n, cap;
	uint64_t w, writer, rd; /* the open value: written at w (UINT64_MAX: none), last read rd */
};

static void mclose(struct mpage *m, uint64_t hi)
{
	if (m->n == m->cap) {
		m->cap = m->cap ? 2 * m->cap : 64;
		m->v = snr_xrealloc(m->v, m->cap * sizeof(*m->v));
	}
	m->v[m->n++] = (struct mval){m->w, hi, m->writer};
}

static void run(unsigned npages, uint64_t naccess, unsigned nquery)
{
	const uint64_t pb = 1024;
	struct snr_deps_pages pg;
	snr_deps_pages_init(&pg, npages, pb);
	struct mpage *m = snr_xcalloc(npages, sizeof(*m));
	for (unsigned p = 0; p < npages; p++)
		m[p].w = m[p].rd = UINT64_MAX;
	uint64_t cycle = 0;
	for (uint64_t i = 0; i < naccess; i++) {
		cycle += check_rand(&rng) % 3; /* several accesses in one cycle too */
		uint64_t r = check_rand(&rng);
		bool write = r % 3 == 0;
		uint64_t off = (r >> 8) % (npages * pb), bytes = 1 + (r >> 32) % (2 * pb);
		if (off + bytes > npages * pb)
			bytes = npages * pb - off;
		snr_deps_pages_access(&pg, off, bytes, cycle, write, i);
		for (uint64_t p = off / pb; p <= (off + bytes - 1) / pb; p++) {
			struct mpage *q = &m[p];
			if (write) {
				if (q->w != UINT64_MAX)
					mclose(q, q->rd != UINT64_MAX ? q->rd + 1 : cycle);
				q->w = cycle;
				q->writer = i;
				q->rd = UINT64_MAX;
				continue;
			}
			if (q->w == UINT64_MAX)
				q->w = 0, q->writer = SNR_DEPS_LIVE_IN;
			if (q->rd == UINT64_MAX || cycle > q->rd)
				q->rd = cycle;
		}
	}
	for (unsigned p = 0; p < npages; p++)
		if (m[p].w != UINT64_MAX)
			mclose(&m[p], m[p].rd != UINT64_MAX ? m[p].rd + 1 : cycle + 1);
	char err[256] = "";
	CHECK(snr_deps_pages_finish(&pg, cycle + 1, err, sizeof(err)) == 0, "finish: %s", err);
	size_t bad = 0;
	for (unsigned p = 0; p < npages; p++) {
		CHECK(pg.start[p + 1] - pg.start[p] == m[p].n, "page %u: %zu values, the model %zu", p,
		      pg.start[p + 1] - pg.start[p], m[p].n);
		if (pg.start[p + 1] - pg.start[p] != m[p].n)
			continue;
		uint64_t run = 0;
		for (size_t j = 0; j < m[p].n; j++) {
			const struct snr_deps_occ *v = snr_deps_pages_at(&pg, pg.start[p] + j);
			run = m[p].v[j].hi > run ? m[p].v[j].hi : run;
			bad += v->lo != m[p].v[j].lo || v->hi != m[p].v[j].hi || v->writer != m[p].v[j].writer ||
			       v->max_hi != run;
		}
	}
	CHECK(bad == 0, "%zu values differ from the model", bad);
	size_t bad_live = 0, bad_from = 0;
	for (unsigned q = 0; q < nquery; q++) {
		unsigned p = (unsigned)(check_rand(&rng) % npages);
		uint64_t c = check_rand(&rng) % (cycle + 2);
		size_t live = m[p].n, from = m[p].n;
		uint64_t run = 0;
		for (size_t j = 0; j < m[p].n; j++) {
			run = m[p].v[j].hi > run ? m[p].v[j].hi : run;
			if (live == m[p].n && run > c)
				live = j;
			if (from == m[p].n && m[p].v[j].lo >= c)
				from = j;
		}
		bad_live += snr_deps_pages_first_live(&pg, p, c) != pg.start[p] + live;
		bad_from += snr_deps_pages_first_from(&pg, p, c) != pg.start[p] + from;
	}
	CHECK(bad_live == 0, "first_live: %zu of %u searches differ from the model", bad_live, nquery);
	CHECK(bad_from == 0, "first_from: %zu of %u searches differ from the model", bad_from, nquery);
	for (unsigned p = 0; p < npages; p++)
		free(m[p].v);
	free(m);
	snr_deps_pages_free(&pg);
}

int main(void)
{
	setenv("SNR_SPILL_MEM", "1024", 1);
	run(8, 20000, 20000);     /* about 7,000 values: a few blocks, a small cache */
	run(64, 1600000, 20000); /* about 550,000 values: more than the cache's 4,096 blocks */
	return check_report("test_deps_pages");
}
