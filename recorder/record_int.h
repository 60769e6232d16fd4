/*
 * record_int.h: the recorder's state, shared by recorder/record.c
 * (Algorithm 1) and recorder/verify.c (--method sim's checkpoints).
 */
#ifndef SNR_RECORD_INT_H
#define SNR_RECORD_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "isa/snr_isa.h"
#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"
#include "recorder/breakpoint.h"
#include "recorder/record.h"
#include "recorder/snr_debugger.h"

#define READABLE_HITS 256 /* struct rec's readable_hits */
#include "sim/snr_sim.h"

/* ---- the code cache: code bytes per pc, read once ---------------------------- */

struct code_entry {
	uint64_t pc;
	uint8_t len; /* bytes valid */
	uint8_t used;
	uint8_t bytes[16];
};

struct code_cache {
	struct code_entry *e;
	size_t cap, n;
};

void code_cache_grow(struct code_cache *c);
/* The slot of pc, a free one if it has none: inline, as it runs for every
 * instruction of a window (a call and the growth check were 2.4% of the
 * recorder's instructions on the serving window, callgrind). */
static inline struct code_entry *code_slot(struct code_cache *c, uint64_t pc)
{
	if (__builtin_expect(c->n * 2 >= c->cap, 0))
		code_cache_grow(c);
	size_t h = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 20) & (c->cap - 1);
	while (c->e[h].used && c->e[h].pc != pc)
		h = (h + 1) & (c->cap - 1);
	return &c->e[h];
}

/* A step of `index` at `pc` with nothing else yet, field by field: the
 * initializer `{.index = i, .pc = pc}` zeroed the whole struct with
 * `rep stos` every instruction, 10% of snr_record's own time (perf, the 10M
 * serving window). */
static inline void step_start(struct snr_trace_step *s, uint64_t index, uint64_t pc)
{
	s->index = index;
	s->pc = pc;
	s->code_len = 0;
	memset(s->code, 0, sizeof(s->code));
	s->nregs = s->nmem = s->npost_regs = s->npost_mem = 0;
	s->regs = s->post_regs = NULL;
	s->mem = s->post_mem = NULL;
	s->unread = s->call = false;
}

/* ---- the recorder ------------------------------------------------------------ */


#define POD_FLAG_LOG 256 /* sync flag changes a stride logs */

struct ta1_chip;

struct rec {
	const struct snr_record_opts *o;
	const struct snr_dbg_ops *dbg;
	struct snr_dbg *d;
	const struct snr_isa_ops *isa;
	bool x86; /* isa is x86-64 */
	void *isa_self;
	const struct snr_isa_reg *iregs;
	size_t niregs;
	const struct snr_dbg_reg *dregs;
	size_t ndregs;
	long *map; /* ISA register -> debugger register index, -1 if absent */
	uint8_t *regbuf;
	size_t regbuf_len;
	const uint8_t **regval; /* per ISA register, pointer into regbuf or NULL */
	int pc_reg;
	unsigned nchips;
	/* Cheap reads (snr_dbg_ops.read_regs_cheap): a register the window
	 * wrote since its last read is stale; the access query sees it as
	 * unknown (qval NULL). */
	bool *stale;
	bool *got; /* per debugger register */
	const uint8_t **qval;
	uint64_t requests; /* debugger calls on the target */
	uint64_t bytes_read; /* memory read by the recorder itself (stepping, and after a fallback) */
	/* --method sim: the simulator running ahead of the halted target */
	const struct snr_sim_ops *sim; /* NULL after a fallback to stepping */
	const struct snr_sim_ops *sim_made; /* what made simst */
	bool *sim_none; /* per ISA register: the simulator has no value for it (until loaded again) */
	/* the pc the last simulated step reported (its next_pc, the value of
	 * the simulator's pc register: sim/snr_sim.h), until the next register
	 * read takes it instead of asking the simulator (recorder/sim_regs.c) */
	uint64_t sim_next_pc;
	bool sim_pc_known;
	struct snr_sim *simst;
	/* the per-step read's plan (recorder/sim_regs.c), made for step_for:
	 * of the registers below 64 but the pc, those read from the GRM's
	 * chip by a direct call (step_direct) and the others (step_other) */
	struct snr_sim *step_for;
	struct ta1_chip *step_chip;
	uint64_t step_direct, step_other;
	bool step_pc_fast; /* the pc is an 8-byte register the debugger has */
	/* the ISA's registers as a bit set, in reg_words words (recorder/reg_known.h) */
	uint64_t reg_mask[SNR_ISA_MAX_REGS / 64];
	uint64_t capture_mask[SNR_ISA_MAX_REGS / 64]; /* reg_mask but the pc */
	unsigned reg_words;
	struct snr_ahead *ahead;
	/* pages the debugger could read, and could not ([vvar]), as probed in
	 * this window (reads_unreadable) */
	struct snr_ranges readable, unreadable;
	/* ranges that answered readable (from readable or the window's known
	 * memory) for a page, by page (recorder/readable_pages.c); hi 0: none */
	struct readable_hit {
		uint64_t lo, hi;
		uint32_t key;
	} readable_hits[READABLE_HITS];
	/* while set, a failure leaves the target halted (leave_halted), and
	 * this says why it is halted: before it was first continued, or after
	 * a timeout interrupted it */
	const char *halted_why;
	/* sim: the last divergence was the target blocking at a ta.wait the
	 * simulation passed (verify.c, for the fall-back's summary) */
	bool blocked;
	uint64_t blocked_pc;
	/* sim, a TA1 chip of a pod: its sync flag registers (bit k: ISA
	 * register k; 0 otherwise), and the simulation's changes of them since
	 * the last commit, by the window index after each
	 * (recorder/pod_sim.c, for a rollback to tell the peers' signals) */
	uint64_t flag_mask;
	bool flag_mask_known;
	int instret_reg;
	struct pod_flag_event {
		uint64_t index, value;
		unsigned flag;
	} flag_log[POD_FLAG_LOG];
	size_t nflag_log;
	bool flag_log_lost; /* more than POD_FLAG_LOG in a stride: a rollback keeps no signal */
};

/* The registers of a set (isa/snr_isa.h's regs_read and regs_written) below
 * `n` (the ISA's register count), in order: the per-step loops visit the
 * registers an instruction touches, not every register of the ISA.
 *	struct snr_regset_it it = snr_regset_iter(set, n);
 *	for (int k = snr_regset_it_next(&it); k >= 0; k = snr_regset_it_next(&it))
 * A word's bits are taken lowest first and cleared, and the words stop at the
 * ISA's last register (TA1's fit in one): finding the next register from an
 * index, masking its word and scanning all SNR_ISA_MAX_REGS / 64 words past
 * the last one, three loops a step, cost 56 million more of the 1,829 million
 * instructions of the 1M serving window's recording (callgrind). */
struct snr_regset_it {
	const uint64_t *set;
	uint64_t bits; /* the current word's registers not yet visited */
	unsigned w, words;
	size_t n;
};

static inline struct snr_regset_it snr_regset_iter(const uint64_t *set, size_t n)
{
	unsigned words = n >= SNR_ISA_MAX_REGS ? SNR_ISA_MAX_REGS / 64 : (unsigned)((n + 63) / 64);
	return (struct snr_regset_it){.set = set, .bits = words ? set[0] : 0, .w = 0, .words = words, .n = n};
}

static inline __attribute__((always_inline)) int snr_regset_it_next(struct snr_regset_it *it)
{
	while (!it->bits) {
		if (++it->w >= it->words)
			return -1;
		it->bits = it->set[it->w];
	}
	int k = (int)(it->w * 64 + (unsigned)__builtin_ctzll(it->bits));
	it->bits &= it->bits - 1;
	if ((size_t)k >= it->n) {
		it->bits = 0, it->w = it->words;
		return -1;
	}
	return k;
}

/* Reads every register: all current. */
int read_registers(struct rec *r, char *err, size_t errlen);

static inline uint64_t reg_u64(const struct rec *r, size_t i)
{
	uint64_t v = 0;
	/* a constant-size copy for the common 8 bytes or more (a variable one
	 * was `rep movsb`, whose store the load of v then waits for: about 2%
	 * of a TA1 recording's CPU per step) */
	if (r->regval[i] && r->iregs[i].size >= 8)
		memcpy(&v, r->regval[i], 8);
	else if (r->regval[i])
		memcpy(&v, r->regval[i], r->iregs[i].size);
	return v;
}

/* The ISA register named `name` (or aliased so), -1 if none. */
int reg_named(const struct rec *r, const char *name);

/* Runs instruction `index` at pc (its access a) on the target, and only
 * it; resume: the return address of a call the target runs as a unit, else
 * 0. st receives how the target stopped. recorder/step_insn.c */
int step_insn(struct rec *r, const struct snr_insn_access *a, uint64_t index, uint64_t pc, uint64_t resume,
	      struct snr_dbg_stop *st, char *err, size_t errlen);

#endif
