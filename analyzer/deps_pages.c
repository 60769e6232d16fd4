/*
 * deps_pages.c: the values each VMEM page held (see deps_pages.h). Values
 * close in the order of the accesses (cycle order); they go to a sorted
 * spill keyed by page alone (a stable sort: each page's keep that order),
 * and are read back once into the file of values with each page's running
 * maximum of the ends and the block index. One pass over the accesses, no
 * list of all the values in memory.
 */
#include "analyzer/deps_pages.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

struct closed_val {
	uint64_t page, lo, hi, writer;
};

static int cmp_page(const void *a, const void *b)
{
	const struct closed_val *x = a, *y = b;
	return x->page < y->page ? -1 : x->page > y->page;
}

void snr_deps_pages_init(struct snr_deps_pages *pg, uint64_t npages, uint64_t page_bytes)
{
	memset(pg, 0, sizeof(*pg));
	pg->npages = npages;
	pg->page_bytes = page_bytes;
	size_t n = npages ? npages : 1;
	pg->cur_w = snr_xmalloc(n * sizeof(uint64_t));
	pg->cur_writer = snr_xmalloc(n * sizeof(uint64_t));
	pg->cur_read = snr_xmalloc(n * sizeof(uint64_t));
	for (uint64_t p = 0; p < npages; p++)
		pg->cur_w[p] = pg->cur_read[p] = UINT64_MAX;
	pg->start = snr_xcalloc(npages + 1, sizeof(*pg->start));
	snr_sorted_init_key(&pg->closed, sizeof(struct closed_val), cmp_page, offsetof(struct closed_val, page),
			    2u << 20, "VMEM page values");
	snr_spill_init(&pg->vals, sizeof(struct snr_deps_occ), 1u << 20, "VMEM page values");
}

static void close_val(struct snr_deps_pages *pg, uint64_t p, uint64_t hi)
{
	struct closed_val v = {p, pg->cur_w[p], hi, pg->cur_writer[p]};
	snr_sorted_push(&pg->closed, &v);
	pg->start[p + 1]++;
}

/* One access of page p at `cycle` */
static void page_access(struct snr_deps_pages *pg, uint64_t p, uint64_t cycle, bool write, uint64_t index)
{
	if (write) {
		if (pg->cur_w[p] != UINT64_MAX)
			close_val(pg, p, pg->cur_read[p] != UINT64_MAX ? pg->cur_read[p] + 1 : cycle);
		pg->cur_w[p] = cycle;
		pg->cur_writer[p] = index;
		pg->cur_read[p] = UINT64_MAX;
		return;
	}
	if (pg->cur_w[p] == UINT64_MAX) { /* live-in: there from the start */
		pg->cur_w[p] = 0;
		pg->cur_writer[p] = SNR_DEPS_LIVE_IN;
	}
	if (pg->cur_read[p] == UINT64_MAX || cycle > pg->cur_read[p])
		pg->cur_read[p] = cycle;
}

void snr_deps_pages_access(struct snr_deps_pages *pg, uint64_t off, uint64_t bytes, uint64_t cycle, bool write,
			   uint64_t index)
{
	if (!pg->npages || !bytes)
		return;
	uint64_t p0 = off / pg->page_bytes, p1 = (off + bytes - 1) / pg->page_bytes;
	for (uint64_t p = p0; p <= p1 && p < pg->npages; p++)
		page_access(pg, p, cycle, write, index);
}

int snr_deps_pages_finish(struct snr_deps_pages *pg, uint64_t end_cycle, char *err, size_t errlen)
{
	for (uint64_t p = 0; p < pg->npages; p++)
		if (pg->cur_w[p] != UINT64_MAX)
			close_val(pg, p, pg->cur_read[p] != UINT64_MAX ? pg->cur_read[p] + 1 : end_cycle);
	free(pg->cur_w);
	free(pg->cur_writer);
	free(pg->cur_read);
	pg->cur_w = pg->cur_writer = pg->cur_read = NULL;
	for (uint64_t p = 0; p < pg->npages; p++)
		pg->start[p + 1] += pg->start[p];
	size_t n = pg->start[pg->npages], nblk = (n + SNR_DEPS_PAGES_BLOCK - 1) / SNR_DEPS_PAGES_BLOCK;
	pg->blk = snr_xcalloc(nblk ? nblk : 1, sizeof(*pg->blk));
	snr_sorted_rewind(&pg->closed);
	uint64_t page = UINT64_MAX, run = 0;
	for (const struct closed_val *v; (v = snr_sorted_next(&pg->closed));) {
		if (v->page != page)
			page = v->page, run = 0;
		if (v->hi > run)
			run = v->hi;
		struct snr_deps_occ o = {v->lo, v->hi, v->writer, run};
		if (pg->vals.n % SNR_DEPS_PAGES_BLOCK == 0) {
			pg->blk[pg->vals.n / SNR_DEPS_PAGES_BLOCK][0] = o.lo;
			pg->blk[pg->vals.n / SNR_DEPS_PAGES_BLOCK][1] = o.max_hi;
		}
		snr_spill_push(&pg->vals, &o);
	}
	const char *fail = snr_sorted_failed(&pg->closed) ? snr_sorted_error(&pg->closed)
			   : snr_spill_failed(&pg->vals)  ? pg->vals.err
							  : NULL;
	snr_sorted_free(&pg->closed);
	pg->built = true;
	pg->nsets = (nblk + SNR_DEPS_PAGES_WAYS - 1) / SNR_DEPS_PAGES_WAYS; /* no more than the values */
	if (pg->nsets > SNR_DEPS_PAGES_SETS)
		pg->nsets = SNR_DEPS_PAGES_SETS;
	if (!pg->nsets)
		pg->nsets = 1;
	size_t slots = pg->nsets * SNR_DEPS_PAGES_WAYS;
	pg->tag = snr_xcalloc(slots, sizeof(*pg->tag));
	pg->used = snr_xcalloc(slots, sizeof(*pg->used));
	pg->cache = snr_xmalloc(slots * SNR_DEPS_PAGES_BLOCK * sizeof(*pg->cache));
	if (fail) {
		snr_fmt(err, errlen, "%s", fail);
		return -1;
	}
	return 0;
}

void snr_deps_pages_free(struct snr_deps_pages *pg)
{
	if (!pg->start)
		return; /* never initialized */
	free(pg->cur_w);
	free(pg->cur_writer);
	free(pg->cur_read);
	if (!pg->built)
		snr_sorted_free(&pg->closed);
	snr_spill_free(&pg->vals);
	free(pg->start);
	free(pg->blk);
	free(pg->tag);
	free(pg->used);
	free(pg->cache);
	memset(pg, 0, sizeof(*pg));
}

/* Value k, through the block cache */
const struct snr_deps_occ *snr_deps_pages_at(struct snr_deps_pages *pg, size_t k)
{
	const size_t B = SNR_DEPS_PAGES_BLOCK;
	uint64_t blk = k / B;
	size_t set = (size_t)(blk % pg->nsets) * SNR_DEPS_PAGES_WAYS, slot = set;
	for (size_t w = set; w < set + SNR_DEPS_PAGES_WAYS; w++) {
		if (pg->tag[w] == blk + 1) {
			slot = w;
			goto hit;
		}
		if (pg->used[w] < pg->used[slot])
			slot = w;
	}
	uint64_t first = blk * B, n = pg->vals.n - first;
	snr_spill_get_n(&pg->vals, first, n < B ? (size_t)n : B, pg->cache + slot * B);
	pg->tag[slot] = blk + 1;
hit:
	pg->used[slot] = ++pg->clock;
	return pg->cache + slot * B + k % B;
}

/* The first k in [a, end) whose value's field (0: lo, 1: max_hi) is past c
 * (lo >= c; max_hi > c), or end: both grow within a page. The block index
 * narrows it to one block of the file, searched there. */
static size_t first_where(struct snr_deps_pages *pg, size_t a, size_t end, int field, uint64_t c)
{
#define PAST(x) (field ? (x) > c : (x) >= c)
	const size_t B = SNR_DEPS_PAGES_BLOCK;
	size_t b0 = (a + B - 1) / B, b1 = end ? (end - 1) / B + 1 : 0;
	if (b1 < b0)
		b1 = b0;
	size_t lo = b0, hi = b1; /* the first block starting in [a, end) whose first value is past c */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (PAST(pg->blk[mid][field]))
			hi = mid;
		else
			lo = mid + 1;
	}
	size_t k0 = lo > b0 ? (lo - 1) * B : a, k1 = lo < b1 ? lo * B : end;
	while (k0 < k1) {
		size_t mid = k0 + (k1 - k0) / 2;
		const struct snr_deps_occ *v = snr_deps_pages_at(pg, mid);
		if (PAST(field ? v->max_hi : v->lo))
			k1 = mid;
		else
			k0 = mid + 1;
	}
	return k0;
#undef PAST
}

size_t snr_deps_pages_first_live(struct snr_deps_pages *pg, uint64_t p, uint64_t c)
{
	return first_where(pg, pg->start[p], pg->start[p + 1], 1, c);
}

size_t snr_deps_pages_first_from(struct snr_deps_pages *pg, uint64_t p, uint64_t c)
{
	return first_where(pg, pg->start[p], pg->start[p + 1], 0, c);
}
