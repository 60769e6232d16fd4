/*
 * ta1_decode_cache.h: the TA1 ISA plugin's decoded instructions, kept per pc
 * (isa/ta1/ta1_decode_cache.c), so that the access query the recorder asks
 * before every step (isa_ta1.c: ta1_access) decodes an instruction once per
 * pc, not once per step, and answers the instructions whose access does not
 * depend on register values without running the query at all.
 *
 * A slot holds the word it was decoded from and is checked against the code
 * bytes of every query: code the window overwrites is decoded again.
 */
#ifndef SNR_TA1_DECODE_CACHE_H
#define SNR_TA1_DECODE_CACHE_H

#include <stdbool.h>
#include <stdint.h>

#include "isa/ta1/ta1_isa.h"

/* What a slot knows of its instruction's access, beyond its decode. */
enum ta1_dc_kind {
	TA1_DC_EMPTY,
	/* ALU, multiply, divide, branch, jump without regions or fault: regs
	 * read and written are the whole answer, whatever the registers hold */
	TA1_DC_STATIC,
	/* a scalar load or store: one region in core memory from rs1 + imm
	 * (ta1_access_scalar_mem), else the query */
	TA1_DC_MEM,
	/* anything else: the query, from the slot's decode */
	TA1_DC_DYNAMIC,
};

struct ta1_dc_slot {
	uint64_t pc;
	uint32_t word;
	uint8_t kind;    /* enum ta1_dc_kind */
	uint8_t cls;     /* enum ta1_class */
	uint8_t mem_size;
	uint8_t illegal; /* the word decodes to no instruction */
	uint64_t regs_read, regs_written; /* STATIC and MEM: the query's, which do not vary */
	struct ta1_insn in;
};

struct ta1_decode_cache {
	struct ta1_dc_slot *slot; /* TA1_DC_SLOTS, direct-mapped by pc; NULL until the first lookup */
	uint64_t hits, misses;    /* lookups that found their word, and those that decoded */
};

/* Slots: a window's hot code is a few thousand instructions at most. */
#define TA1_DC_SLOTS 8192u

void ta1_decode_cache_free(struct ta1_decode_cache *c);

/* A miss: allocates the slots on first use, decodes `word` into pc's slot. */
const struct ta1_dc_slot *ta1_decode_cache_fill(struct ta1_decode_cache *c, uint64_t pc, uint32_t word,
						const struct ta1_query_ctx *q);

/* The slot for the instruction `word` at pc: found, or decoded into it
 * (a word that decodes to no instruction too, with illegal set). q gives
 * the memory sizes and chips; its x is not read. The hit is inline: it
 * runs for every instruction recorded. */
static inline const struct ta1_dc_slot *ta1_decode_cache_get(struct ta1_decode_cache *c, uint64_t pc, uint32_t word,
							     const struct ta1_query_ctx *q)
{
	if (__builtin_expect(c->slot != NULL, 1)) {
		const struct ta1_dc_slot *sl = &c->slot[(pc >> 2) & (TA1_DC_SLOTS - 1)];
		if (__builtin_expect(sl->kind != TA1_DC_EMPTY && sl->pc == pc && sl->word == word, 1)) {
			c->hits++;
			return sl;
		}
	}
	return ta1_decode_cache_fill(c, pc, word, q);
}

#endif
