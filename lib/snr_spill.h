/*
 * snr_spill.h: arrays of fixed-size records that move to an unlinked
 * temporary file (in $TMPDIR, else /tmp) once they outgrow a memory budget,
 * so that what an analysis keeps per instruction or per event costs disk
 * (the page cache), not the process's memory, while the window grows.
 *
 * snr_spill: an array read back in order or at any index (a cache of
 * SNR_SPILL_SLOTS blocks of 4 KiB, SNR_SPILL_WAYS-way set associative, the
 * least recently used out: lookups that stay near a few places, as a
 * dependency walk's do, or a sweep that comes back to a few far blocks, as
 * deps' pairs of pcs do, mostly hit). Memory: the budget
 * given at init (the records not yet written) plus the 256 KiB cache,
 * whatever the length. The last SNR_SPILL_KEEP
 * records always stay in memory and writable (snr_spill_last), for a
 * producer that merges a record with the one before it.
 *
 * snr_sorted: records sorted by a comparison, by runs: a run is sorted in
 * memory (the budget, and as much again while it is sorted), then written
 * to the file; reading merges the runs (one 64 KiB buffer each). The sort
 * is stable and the merge takes the earlier run's record first, so records
 * that compare equal come back in the order they were pushed.
 *
 * SNR_SPILL_MEM=BYTES in the environment replaces every budget (tests take
 * the file's path on small windows with it).
 *
 * Errors (a full disk, no temporary folder) are sticky: the first is kept
 * in err, later reads give zeroed records, and the caller checks
 * snr_spill_failed()/snr_sorted_failed() before it trusts a result.
 */
#ifndef SNR_LIB_SPILL_H
#define SNR_LIB_SPILL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNR_SPILL_KEEP 4
#define SNR_SPILL_SLOTS 64
#define SNR_SPILL_WAYS 4

struct snr_spill {
	size_t rec;	      /* bytes per record */
	uint64_t n;	      /* records */
	unsigned char *tail;  /* records [tail_first, n), in memory */
	uint64_t tail_first;  /* records before it are in the file */
	size_t tail_cap;      /* in records */
	int fd;		      /* the temporary file, -1 until the first write */
	unsigned char *cache;  /* SNR_SPILL_SLOTS blocks read back: block b in one of the SNR_SPILL_WAYS
				  slots of set b % (SNR_SPILL_SLOTS / SNR_SPILL_WAYS) */
	uint64_t *cache_block; /* per slot: its block's number + 1, 0: empty */
	size_t *cache_len;     /* per slot: records read (a block may end at the file's end) */
	uint64_t *cache_used;  /* per slot: when it was last looked up (cache_clock), for eviction */
	uint64_t cache_clock;
	size_t cache_cap;      /* records per block */
	const unsigned char *hot; /* the block read last, in the cache: records [hot_first, hot_first + hot_n) */
	uint64_t hot_first;
	size_t hot_n;
	const char *what; /* names the data in an error */
	char err[512];	  /* the first error, "" if none */
};

void snr_spill_init(struct snr_spill *s, size_t rec, size_t mem_bytes, const char *what);
void snr_spill_free(struct snr_spill *s);
void snr_spill_push(struct snr_spill *s, const void *r);
/* n records at r, as n pushes. */
void snr_spill_push_n(struct snr_spill *s, const void *r, size_t n);
/* Room for *room (at least 1) records at the end, written in place; the
 * first k of them are kept by snr_spill_extend(s, k) (a producer that
 * writes records in bulk, with no copy). */
void *snr_spill_reserve(struct snr_spill *s, size_t *room);
void snr_spill_extend(struct snr_spill *s, size_t k);
/* Records [first, first + n) (first + n <= n records) into out: one read of
 * the file for the part in it, not one per block (zeros if it fails). */
void snr_spill_get_n(struct snr_spill *s, uint64_t first, size_t n, void *out);
/* Record i (zero records appended up to it when i >= n). */
void snr_spill_set(struct snr_spill *s, uint64_t i, const void *r);
/* Record i < n; the pointer is good until the next call on s. The tail and
 * the block read last are found here, without a call or a division (a
 * sequential reader's next record mostly is in one of them). */
const void *snr_spill_at_slow(struct snr_spill *s, uint64_t i);
static inline const void *snr_spill_at(struct snr_spill *s, uint64_t i)
{
	if (i >= s->tail_first)
		return s->tail + (size_t)(i - s->tail_first) * s->rec;
	if (i - s->hot_first < s->hot_n)
		return s->hot + (size_t)(i - s->hot_first) * s->rec;
	return snr_spill_at_slow(s, i);
}
/* Record n-1-back (back < SNR_SPILL_KEEP, back < n), writable. */
void *snr_spill_last(struct snr_spill *s, size_t back);
static inline bool snr_spill_failed(const struct snr_spill *s)
{
	return s->err[0] != 0;
}

/* An unlinked temporary file in $TMPDIR (else /tmp) named after what; its
 * descriptor, or -1 with err filled (naming the folder). */
int snr_tmpfile_fd(const char *what, char *err, size_t errlen);

struct snr_sorted_run; /* snr_spill.c */

struct snr_sorted {
	size_t rec;
	int (*cmp)(const void *, const void *);
	long key_off;       /* >= 0: cmp orders by the uint64_t at this offset alone (a radix sort) */
	unsigned char *buf; /* the run being filled */
	size_t nbuf, cap;
	struct snr_spill runs; /* the written runs, one after another */
	uint64_t *run_first;   /* each run's first record in runs, and a last entry: runs.n */
	size_t nruns;
	bool finished;
	/* reading */
	struct snr_sorted_run *cur; /* one per run */
	size_t *heap, nheap;	    /* runs by their current record */
	size_t pos;		    /* next record of buf when nruns == 0 */
	uint64_t n;		    /* records pushed */
};

void snr_sorted_init(struct snr_sorted *s, size_t rec, int (*cmp)(const void *, const void *),
		     size_t mem_bytes, const char *what);
/* The same for a cmp that orders by one uint64_t of the record alone (at
 * key_off, ascending; equal keys compare equal): runs are sorted by a
 * stable radix sort on it, to the same order. */
void snr_sorted_init_key(struct snr_sorted *s, size_t rec, int (*cmp)(const void *, const void *), size_t key_off,
			 size_t mem_bytes, const char *what);
void snr_sorted_free(struct snr_sorted *s);
void snr_sorted_push(struct snr_sorted *s, const void *r);
/* Starts (or restarts) reading in order; pushing after it is not allowed. */
void snr_sorted_rewind(struct snr_sorted *s);
/* The next record in order, or NULL at the end; good until the next call. */
const void *snr_sorted_next(struct snr_sorted *s);
static inline bool snr_sorted_failed(const struct snr_sorted *s)
{
	return snr_spill_failed(&s->runs);
}
static inline const char *snr_sorted_error(const struct snr_sorted *s)
{
	return s->runs.err;
}

#endif
