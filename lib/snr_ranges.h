/*
 * snr_ranges.h: sets of byte ranges, keyed by (space, chip), for the
 * recorder's "written in the window" and "already known" sets and the
 * replayer's "captured" map. Ranges are kept sorted and coalesced; adding
 * and querying are O(log n + ranges touched).
 *
 * A set can keep an undo log (snr_ranges_log_start): every add that
 * changes the set records the ranges it replaced, and snr_ranges_log_undo
 * replays them backwards to the set as it was at the last
 * snr_ranges_log_commit. Committing costs nothing and undoing costs what
 * changed since, where a copy of the whole set would cost its size each
 * time (the recorder commits at every instruction its target runs).
 */
#ifndef SNR_RANGES_H
#define SNR_RANGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snr_range {
	uint64_t lo, hi; /* [lo, hi) */
};

struct snr_range_list {
	uint32_t key; /* space << 16 | chip */
	struct snr_range *r;
	size_t n, cap;
};

struct snr_ranges_log;

struct snr_ranges {
	struct snr_range_list *lists;
	size_t n;
	struct snr_ranges_log *log; /* NULL: no undo log kept */
};

static inline uint32_t snr_ranges_key(unsigned space, unsigned chip) { return (uint32_t)space << 16 | (chip & 0xffff); }

/* Frees the set and its undo log. */
void snr_ranges_free(struct snr_ranges *s);
/* dst (freed first) becomes a copy of src, without its undo log. */
void snr_ranges_copy(struct snr_ranges *dst, const struct snr_ranges *src);
void snr_ranges_add(struct snr_ranges *s, uint32_t key, uint64_t lo, uint64_t hi);
/* The parts of [lo, hi) not in the set, in order, appended to *out (grown
 * with realloc; *nout counts them). */
void snr_ranges_missing(const struct snr_ranges *s, uint32_t key, uint64_t lo, uint64_t hi, struct snr_range **out,
			size_t *nout, size_t *cap);
/* The range of the set that contains addr: true and *out set, or false. */
bool snr_ranges_find(const struct snr_ranges *s, uint32_t key, uint64_t addr, struct snr_range *out);
/* Total bytes in the set. */
uint64_t snr_ranges_bytes(const struct snr_ranges *s);
const struct snr_range_list *snr_ranges_get(const struct snr_ranges *s, uint32_t key);

/* The set as it is now becomes what snr_ranges_log_undo returns to; the
 * undo log is started if it was not kept. O(1). */
void snr_ranges_log_commit(struct snr_ranges *s);
/* Back to the set at the last commit (nothing if no log is kept); the
 * log stays kept, empty. O(ranges changed since). */
void snr_ranges_log_undo(struct snr_ranges *s);
/* Stops keeping the undo log and frees it. */
void snr_ranges_log_stop(struct snr_ranges *s);
/* Entries in the undo log (for tests and benchmarks). */
size_t snr_ranges_log_len(const struct snr_ranges *s);

#endif
