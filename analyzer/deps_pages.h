/*
 * deps_pages.h: the values each VMEM page held over a window (deps.c builds
 * them in its pass over the memory events; suggest's Algorithm 2 asks
 * whether a region is free over a span of cycles, suggest_alg2.c).
 *
 * A value is written at cycle lo by instruction `writer` (SNR_DEPS_LIVE_IN:
 * there before the window) and occupied until its last read (hi = that
 * cycle + 1), or, never read, until the next write or past the window's end.
 * The values are filed by page, each page's in cycle order, with the
 * running maximum of the page's ends (max_hi), in an unlinked temporary
 * file (lib/snr_spill.h): memory is the page table (per page its first
 * value), one entry (16 bytes) per 128 values (4 KiB of the file: a search
 * reads one block), a cache of 4,096 blocks read back, the spill's budget,
 * and while building one open value per page and the sorted runs' budget;
 * not the values.
 */
#ifndef SNR_ANALYZER_DEPS_PAGES_H
#define SNR_ANALYZER_DEPS_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/snr_spill.h"

#define SNR_DEPS_LIVE_IN UINT64_MAX

/* One value of a page: 32 bytes in the file */
struct snr_deps_occ {
	uint64_t lo, hi, writer;
	uint64_t max_hi; /* the largest hi of the page's values up to this one */
};

/* Values per block of the file (4 KiB) */
#define SNR_DEPS_PAGES_BLOCK 128
/* The blocks read back: SNR_DEPS_PAGES_SETS sets of SNR_DEPS_PAGES_WAYS,
 * the least recently used out (16 MiB: the serving loop's searches at 100M
 * instructions, a first fit over every page and each DMA's own pages, mostly
 * hit) */
#define SNR_DEPS_PAGES_SETS 1024
#define SNR_DEPS_PAGES_WAYS 4

struct snr_deps_pages {
	uint64_t npages, page_bytes;
	size_t *start;		 /* page p's values: [start[p], start[p + 1]) */
	struct snr_spill vals;	 /* struct snr_deps_occ, by page, each in cycle order */
	uint64_t (*blk)[2];	 /* per SNR_DEPS_PAGES_BLOCK values: the first one's lo and max_hi */
	/* building: the open value per page (UINT64_MAX: none), the closed ones by page */
	uint64_t *cur_w, *cur_writer, *cur_read;
	struct snr_sorted closed;
	bool built;
	/* the block cache: per slot its block + 1 (0: empty), when it was last
	 * used, its values */
	uint64_t *tag, *used, clock;
	size_t nsets; /* SNR_DEPS_PAGES_SETS, or fewer for fewer values */
	struct snr_deps_occ *cache;
};

void snr_deps_pages_init(struct snr_deps_pages *pg, uint64_t npages, uint64_t page_bytes);
/* A VMEM access of [off, off + bytes) from the start of VMEM at `cycle` by
 * instruction index (accesses come in cycle order). */
void snr_deps_pages_access(struct snr_deps_pages *pg, uint64_t off, uint64_t bytes, uint64_t cycle, bool write,
			   uint64_t index);
/* Closes the values still open (until end_cycle) and files them all; 0, or
 * -1 with err filled (a temporary file failed). */
int snr_deps_pages_finish(struct snr_deps_pages *pg, uint64_t end_cycle, char *err, size_t errlen);
void snr_deps_pages_free(struct snr_deps_pages *pg);

/* Value k (k < start[npages]); good until the next call. */
const struct snr_deps_occ *snr_deps_pages_at(struct snr_deps_pages *pg, size_t k);
/* Page p's first value that may still be held at cycle c (max_hi > c), or
 * start[p + 1] */
size_t snr_deps_pages_first_live(struct snr_deps_pages *pg, uint64_t p, uint64_t c);
/* Page p's first value written at or after cycle c (lo >= c), or start[p + 1] */
size_t snr_deps_pages_first_from(struct snr_deps_pages *pg, uint64_t p, uint64_t c);

#endif
