/*
 * deps.h: the dynamic dependency graph of a replayed window (`snr analyze
 * deps`) and the suggestions built on it (`snr analyze suggest`, the paper's
 * Algorithm 2). docs/analyses.md, sections "deps" and "suggest", states the
 * rules, their thresholds and the --json schema.
 *
 * Conservative graph: every instruction depends on the last producer of each
 * of its inputs: registers (x registers, sync flags, counters) from the
 * tracker's register events, memory by byte range from its memory events
 * taken in cycle order (a DMA writes its destination at completion and reads
 * its source when its transfer starts, both under its ISSUE's index).
 *
 * Relaxed dependency of a DMA ISSUE: walk back from its address and size
 * registers through lightweight scalar instructions (ALU, MUL, DIV, loads);
 * every other producer, and the writer of any byte those loads or the DMA's
 * own source read, is an anchor; the DMA (with the slice of lightweight
 * instructions it needs) can move up to just after the last anchor (after
 * the WAIT of an anchoring DMA), or to the window's start. If more than
 * max_chain instructions would have to move with it (the slice at or after
 * that point), the transformation is not lightweight: the DMA then stays
 * behind its latest direct producer.
 */
#ifndef SNR_ANALYZER_DEPS_H
#define SNR_ANALYZER_DEPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "analyzer/analyses.h"
#include "analyzer/deps_pages.h"
#include "lib/snr_spill.h"
#include "analyzer/source.h"

#define SNR_DEPS_DEFAULT_MAX_CHAIN 16

enum snr_dep_kind { SNR_DEP_REG, SNR_DEP_MEM };

/* Instruction indices and cycles in the graph's records take 48 bits (a
 * window of up to 2^48 instructions and cycles; snr_deps_build refuses a
 * longer one). */
#define SNR_DEPS_MAX_INDEX ((UINT64_C(1) << 48) - 1)

/* 16 bytes per edge */
struct snr_dep_edge {
	uint64_t consumer : 48; /* instruction indices; producer < consumer in program order */
	uint64_t kind : 8;      /* enum snr_dep_kind */
	uint64_t space : 8;     /* MEM: enum ta1_space of the bytes */
	uint64_t producer : 48;
	uint64_t reg : 16; /* REG: ta1_reg_id */
};

/* 16 bytes per instruction of the window */
struct snr_deps_insn {
	uint64_t pc;
	uint64_t issue : 48;
	uint64_t cls : 8;
	uint64_t unit : 7;
	uint64_t seen : 1;
};

enum snr_anchor_kind {
	SNR_ANCHOR_WINDOW_START, /* nothing in the window holds it back */
	SNR_ANCHOR_DMA,          /* its (transitive) inputs were brought in by this DMA: after its WAIT */
	SNR_ANCHOR_INSN,         /* a producer that is not lightweight (vector op, store, csr, jump...) */
	SNR_ANCHOR_FLAG,         /* a WAIT on its own sync flag, which it must not satisfy early */
	SNR_ANCHOR_HEAVY,        /* the operand slice is longer than max_chain: its latest direct producer */
	SNR_ANCHOR_NO_WAIT,      /* its input DMA is never waited for in the window: it cannot move */
};

struct snr_deps_dma {
	uint64_t id;
	int64_t issue_index, wait_index;
	uint64_t bytes, issue_cycle, start_cycle, complete_cycle, wait_cycle;
	uint16_t src_space, dst_space, src_chip, dst_chip, flag;
	uint64_t src_addr, dst_addr;
	uint64_t stall_cycles; /* DMA_BASE + DMA_TRANSFER stalls attributed to it */
	bool completed, waited;
	/* relaxed dependency (only for DMAs issued in the window) */
	uint8_t anchor_kind;   /* enum snr_anchor_kind */
	int64_t anchor_index;  /* the anchoring instruction, -1 for the window start */
	uint64_t anchor_dma;   /* for SNR_ANCHOR_DMA: its id */
	uint64_t position;     /* it may issue just before this instruction index */
	uint64_t backtail_insns, backtail_cycles;
	/* the same with a sync flag of its own (the flag rule set aside): the
	 * position and backtail a second flag would give it */
	uint64_t position_other_flag, backtail_other_flag_cycles;
	uint64_t *slice;       /* lightweight instructions that compute its operands, ascending */
	size_t nslice;
	size_t slice_total;    /* the slice the walk took in, including any part a later anchor put before position */
};

struct an_annot_acc;
struct snr_deps_opts {
	const char *sim, *config_path;
	const char *trace_path; /* --trace: the trace a metrics file was replayed from (its what-ifs), or NULL */
	unsigned max_chain; /* 0: SNR_DEPS_DEFAULT_MAX_CHAIN */
	bool want_edges;    /* keep every edge (else only counts and what the DMAs need) */
	unsigned an_want;   /* also collect for analyses.h (AN_WANT_*) in the same pass; the DMA records
			       always, the pcs (an.pcs) only with AN_WANT_DMA */
	struct an_annot_acc *annot; /* also feed this accumulator (annotate.h) in the same pass, NULL: not */
};

/* One of the graph's edge lists, sorted by consumer, then producer (the
 * cmp order of deps.c), in an unlinked temporary file (lib/snr_spill.h);
 * in memory the consumer of every SNR_DEPS_EDGE_BLOCK-th edge, to find an
 * instruction's (one 4 KiB read). */
struct snr_deps_edge_list {
	struct snr_spill *s;
	uint64_t *block;
	size_t n, block_cap;
};

struct snr_deps {
	/* collect.c's pass, run with the graph's: the source (an.src), the DMA
	 * records the table below is made from, and what opts.an_want asked for */
	struct an_data an;
	bool ta1;                 /* the trace's ISA is TA1 (else register names come from its ISA plugin) */
	char (*reg_names)[16];    /* for another ISA: the plugin's register names */
	size_t nreg_names;
	unsigned max_chain;
	uint64_t ninsn;
	/* per instruction index, in an unlinked temporary file past 8 MiB
	 * (lib/snr_spill.h); read with snr_deps_insn_get */
	struct snr_spill *insn;
	/* the indices of the DMA ISSUE instructions (class TA1_CLASS_DMA_ISSUE),
	 * ascending: whether an edge's producer is one, without a lookup in insn */
	uint64_t *issue_at;
	size_t nissue_at, cap_issue_at;
	/* The edges in two lists, register and memory edges (each kept as it
	 * was made: the register edges as they come, the memory edges as their
	 * sorted runs merge; no list of all of them is written), read in
	 * cmp_edge order through snr_deps_edges_of and snr_deps_edge_next; and
	 * the former's answer buffer. nedges: both lists' edges. */
	struct snr_deps_edge_list reg_list, mem_list;
	struct snr_deps_edge_buf *edge_buf;
	size_t nedges;
	uint64_t nreg_edges, nmem_edges, ndma_mem_edges;
	struct snr_deps_dma *dmas; /* by id - 1 */
	size_t ndmas;
	/* VMEM pages: the values each page held (deps_pages.h), NULL once dropped */
	uint64_t page_bytes, npages;
	struct snr_deps_pages *pages;
	double seconds;
};

int snr_deps_run(struct snr_deps *d, const char *path, const struct snr_deps_opts *o, char *err, size_t errlen);
/* The same on events from elsewhere: feed fills src (as snr_source_run
 * does: path, cfg, meta_json, instructions, cycles, symbols) and delivers a
 * whole window's events to t, indices 0..n-1 in program order; 0 or -1 with
 * err filled. (suggest --rounds builds the graph of a reordered window from
 * the timing model this way.) */
typedef int (*snr_deps_feed_fn)(void *user, struct snr_source *src, const struct snr_tracker *t, char *err,
				size_t errlen);
int snr_deps_build(struct snr_deps *d, snr_deps_feed_fn feed, void *feed_user, const struct snr_deps_opts *o,
		   char *err, size_t errlen);
void snr_deps_free(struct snr_deps *d);
/* Frees what the graph keeps per instruction and per edge (insn, edges, the
 * VMEM page values), keeping the DMA table and the collection (an): for a
 * caller that is done with the graph itself (snr report, after the
 * suggestions). */
void snr_deps_drop_graph(struct snr_deps *d);
/* Instruction i < d->ninsn (a copy) */
static inline struct snr_deps_insn snr_deps_insn_get(const struct snr_deps *d, uint64_t i)
{
	return *(const struct snr_deps_insn *)snr_spill_at(d->insn, i);
}
/* The edges of instruction i, in order; good until the next call. */
const struct snr_dep_edge *snr_deps_edges_of(const struct snr_deps *d, uint64_t i, size_t *n);
/* Every edge in order (consumer, producer, kind, what), one at a time:
 * start with a zeroed iterator; *e gets a copy; false after the last. */
struct snr_deps_edge_iter {
	size_t r, m; /* the next in reg_list and in mem_list */
};
bool snr_deps_edge_next(const struct snr_deps *d, struct snr_deps_edge_iter *it, struct snr_dep_edge *e);
#define SNR_DEPS_EDGE_BLOCK 256
const char *snr_anchor_kind_name(enum snr_anchor_kind k);
/* "core", "vmem", "mxuw", "hbm" ("mem" for host code). */
const char *snr_deps_space_name(const struct snr_deps *d, unsigned s);
/* The DMA-centric Graphviz graph to path (deps_dot.c); 0, or -1 said on stderr. */
int snr_deps_write_dot(const char *path, const struct snr_deps *d);
/* s as a JSON string, quoted and escaped. */
void snr_deps_json_str(FILE *f, const char *s);

int snr_analyze_deps(int argc, char **argv);
int snr_analyze_suggest(int argc, char **argv);

#define SNR_SUGGEST_DEFAULT_VERIFY_MAX 16

/* Algorithm 2 on path, its report (text or --json) written to out; with
 * verify_max > 0 the moves with the verify_max largest predictions are
 * also run through the what-if (each what-if runs the whole window once).
 * Returns 0; 1 when the suggestions were written but --verify could not run
 * (err says why, the suggestions carry no verify results); -1 when nothing
 * could be computed. */
int snr_suggest_run(const char *path, const struct snr_deps_opts *o, unsigned verify_max, bool json, FILE *out,
		    char *err, size_t errlen);
/* What suggest does and prints. */
struct snr_suggest_opts {
	unsigned verify_max; /* 0: no what-if (estimates only) */
	unsigned rounds;     /* with verify_max: rounds of moves applied and Algorithm 2 run again (0, 1: one) */
	bool json, per_dma;  /* --json; --dmas (text: every stalled DMA's move) */
	bool brief;          /* with json, for snr report: each stalled DMA as its id, pc, symbol, source
				and stall cycles, whether it is suggested and why not (no dependencies,
				no move: the page takes only those) */
};
/* Algorithm 2 on d, grouped by static move, verified and iterated as so
 * says; returns as snr_suggest_run. */
int snr_suggest_report(struct snr_deps *d, const struct snr_deps_opts *o, const struct snr_suggest_opts *so,
		       FILE *out, char *err, size_t errlen);
/* The same on a graph already computed (snr report: one pass for all). */
int snr_suggest_write(struct snr_deps *d, const struct snr_deps_opts *o, unsigned verify_max, bool json, FILE *out,
		      char *err, size_t errlen);
/* A positive count for option opt of `snr analyze cmd`; 0, or -1 after a
 * message naming the option and the value. */
int snr_deps_parse_count(const char *arg, const char *cmd, const char *opt, unsigned *out);

#endif
