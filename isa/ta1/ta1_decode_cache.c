/*
 * ta1_decode_cache.c: decoded TA1 instructions per pc for the ISA plugin's
 * access query (isa/ta1/ta1_decode_cache.h).
 *
 * The recorder asks the access query before every instruction it records;
 * decoding the word each time, and running the whole query for an ALU
 * instruction whose answer never changes, was about a fifth of a 10M
 * recording's CPU (ta1_access, ta1_access_query and ta1_decode in a perf
 * profile: docs/recording.md, "Rates"). A slot is classified as sim/grm_ta1.c
 * classifies its own decode cache's: an ALU, multiply, divide, branch or jump
 * instruction whose query names no region and no fault is STATIC (its
 * registers read and written depend on its fields only); a scalar load or
 * store is MEM (ta1_access_scalar_mem gives the query's answer for an
 * address in core memory); the rest are queried from the slot's decode.
 */
#include "isa/ta1/ta1_decode_cache.h"

#include <stdlib.h>

#include "lib/snr_util.h"

void ta1_decode_cache_free(struct ta1_decode_cache *c)
{
	free(c->slot);
	c->slot = NULL;
}

const struct ta1_dc_slot *ta1_decode_cache_fill(struct ta1_decode_cache *c, uint64_t pc, uint32_t word,
						const struct ta1_query_ctx *q)
{
	if (!c->slot)
		c->slot = snr_xcalloc(TA1_DC_SLOTS, sizeof(*c->slot));
	struct ta1_dc_slot *sl = &c->slot[(pc >> 2) & (TA1_DC_SLOTS - 1)];
	c->misses++;
	*sl = (struct ta1_dc_slot){.pc = pc, .word = word, .kind = TA1_DC_DYNAMIC};
	if (!ta1_decode(word, &sl->in)) {
		sl->illegal = 1;
		return sl;
	}
	unsigned cls = ta1_insn_table[sl->in.op].cls;
	sl->cls = (uint8_t)cls;
	sl->mem_size = ta1_insn_table[sl->in.op].mem_size;
	/* the registers read and written of these classes come from the
	 * instruction's format alone; register values only place regions, so
	 * the query runs here with all of them 0 (q's x is not read) */
	uint64_t zero[32] = {0};
	struct ta1_query_ctx z = *q;
	z.x = zero;
	struct ta1_access a;
	ta1_access_query(&sl->in, &z, &a);
	bool fixed = (cls == TA1_CLASS_ALU || cls == TA1_CLASS_MUL || cls == TA1_CLASS_DIV ||
		      cls == TA1_CLASS_BRANCH || cls == TA1_CLASS_JUMP) &&
		     a.nregions == 0 && !a.fault;
	if (fixed || cls == TA1_CLASS_LOAD || cls == TA1_CLASS_STORE) {
		sl->kind = fixed ? TA1_DC_STATIC : TA1_DC_MEM;
		sl->regs_read = a.regs_read;
		sl->regs_written = a.regs_written;
	}
	return sl;
}
