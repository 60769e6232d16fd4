/*
 * readable_pages.c: the probe of the pages an instruction reads for the
 * debugger's unreadable ones (recorder/readable_pages.h), out of record.c.
 *
 * It runs for every instruction of a window, for each page it reads. A page
 * found readable, or in the window's known memory, is remembered with the
 * range that answered (r->readable_hits, direct-mapped by page): the next
 * read inside that range needs none of the three range searches (unreadable,
 * readable, known): reads_unreadable was 137 million of the 1,738 million
 * instructions of the 1M serving window's recording, 95 million with the
 * table, of which 32 million are the fetches it makes (callgrind). The answer cannot change while it is
 * remembered: a readable page stays so for the window, and a page goes into
 * r->unreadable only when neither readable nor known; known only grows but
 * for a stride undone, which forgets every answer (readable_pages_forget), as
 * does a page found unreadable (known memory may lie in it).
 */
#include "recorder/readable_pages.h"

#include <string.h>

#include "lib/snr_util.h"
#include "recorder/record_sim.h"

/* by 64-byte line, not page: known memory comes in ranges of a few bytes
 * (a stack slot, a variable), several to a page */
static size_t hit_slot(uint32_t key, uint64_t at)
{
	return (size_t)((at >> 6) ^ key) & (READABLE_HITS - 1);
}

void readable_pages_forget(struct rec *r) { memset(r->readable_hits, 0, sizeof(r->readable_hits)); }

void readable_pages_reset(struct rec *r)
{
	snr_ranges_free(&r->readable);
	snr_ranges_free(&r->unreadable);
	readable_pages_forget(r);
}

int reads_unreadable_mem(struct rec *r, const struct snr_insn_access *a, const struct snr_ranges *known,
			 uint64_t index, uint64_t pc, bool *unread, uint64_t *at_out, char *err, size_t errlen)
{
	*unread = false;
	uint64_t where = 0;
	for (unsigned m = 0; m < a->nmem && !*unread; m++) {
		const struct snr_mem_region *g = &a->mem[m];
		if (g->write)
			continue;
		uint32_t key = snr_ranges_key(g->space, g->chip);
		for (uint64_t row = 0; row < g->rows && !*unread; row++) {
			uint64_t lo = g->addr + (uint64_t)((int64_t)row * g->stride), hi = lo + g->row_bytes;
			for (uint64_t page = lo & ~(uint64_t)4095; page < hi && !*unread; page += 4096) {
				uint64_t at = page > lo ? page : lo;
				struct snr_range in;
				where = at;
				struct readable_hit *h = &r->readable_hits[hit_slot(key, at)];
				if (h->key == key && h->lo <= at && at < h->hi)
					continue;
				if (snr_ranges_find(&r->unreadable, key, at, &in)) {
					*unread = true;
					break;
				}
				if (snr_ranges_find(&r->readable, key, at, &in) || snr_ranges_find(known, key, at, &in)) {
					*h = (struct readable_hit){.lo = in.lo, .hi = in.hi, .key = key};
					continue;
				}
				uint8_t byte;
				char ferr[300];
				r->requests += !r->sim;
				bool bad = r->sim ? snr_ahead_fetch(r->ahead, at, &byte, 1, ferr, sizeof(ferr)) != 0
						  : r->dbg->read_mem(r->d, at, &byte, 1) != 0;
				snr_ranges_add(bad ? &r->unreadable : &r->readable, key, page, page + 4096);
				if (bad) /* a remembered range of known memory may lie in that page */
					readable_pages_forget(r);
				*unread = bad;
			}
		}
	}
	*at_out = where;
	for (unsigned m = 0; m < a->nmem && *unread; m++)
		if (a->mem[m].write) {
			snr_fmt(err, errlen,
				"instruction %llu at 0x%llx reads memory the debugger cannot read (at 0x%llx) and writes "
				"memory: the bytes it stores cannot be recorded",
				(unsigned long long)index, (unsigned long long)pc, (unsigned long long)where);
			return -1;
		}
	return 0;
}

