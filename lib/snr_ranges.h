/*
 * snr_ranges.h: sets of byte ranges, keyed by (space, chip), for the
 * recorder's "written in the window" and "already known" sets and the
 * replayer's "captured" map. Ranges are kept sorted and coalesced; adding
 * and querying are O(log n + ranges touched).
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

struct snr_ranges {
	struct snr_range_list *lists;
	size_t n;
};

static inline uint32_t snr_ranges_key(unsigned space, unsigned chip) { return (uint32_t)space << 16 | (chip & 0xffff); }

void snr_ranges_free(struct snr_ranges *s);
/* dst (freed first) becomes a copy of src. */
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

#endif
