/*
 * annotate.h: where a replayed window spent its cycles, per pc and per
 * source line, split by stall cause: the data behind `snr annotate` and
 * the report's source page (a C API: build it from a trace or metrics
 * file, or chain its tracker into a pass that collects other events).
 *
 * Cycles. Every cycle of the window belongs to exactly one instruction or
 * to the drain: the cycles of instruction i are the cycles from its issue
 * to the next instruction's issue, with the stall cycles the timing model
 * reports *before* an instruction issues (a WAIT's DMA stall, a VMEM
 * hazard, a busy unit, a register, a branch refill) counted as that
 * instruction's, so that a stall is charged to the instruction (and the
 * line) that waited. In symbols, with S(i) the stall cycles reported for
 * instruction i:
 *
 *     cycles(i) = issue(i+1) - issue(i) - S(i+1) + S(i)     (i < n-1)
 *     cycles(n-1) = 1 + S(n-1)
 *     drain = total - sum(cycles)   (the window finishing work in flight:
 *                                    DMAs, vector and MXU ops)
 *
 * (cycles(0) also gets issue(0) - S(0): cycles before the first issue no
 * stall explains; 0 under the TA1 model.) The sum of every pc's cycles plus
 * the drain is the replay's cycle count exactly, and each cause's stall
 * cycles summed over pcs is the replay's figure for that cause exactly (the
 * same tracker events). For host code (unicorn) an instruction's memory
 * latency follows its issue, so it is that instruction's by the same rule.
 *
 * Inclusive cycles. A line's cycles including its callees': the cycles
 * of every instruction executed while a call from the line is open (from
 * the call, a jal/jalr with rd = ra on TA1, to the return to it), each
 * cycle once per line under recursion, plus its own (analyzer/callgraph.h).
 * A window that starts inside a callee charges the callee's cycles up to
 * its return to the line of the instruction before the return address
 * (a row of no own cycles when that line did not run in the window, or
 * "(caller outside the window)" when it has no line or symbol); one that
 * ends inside a call charges the call's line up to the end. Stall causes
 * the same way. Self cycles still add up to the window's; inclusive ones
 * overlap (a caller's include its callee lines').
 *
 * Lines. A pc's line is its place (lib/snr_lines.h: the user's line for
 * code inlined from ta1.h); pcs without a line are grouped by function
 * (their symbol without the offset), with file NULL.
 */
#ifndef SNR_ANALYZER_ANNOTATE_H
#define SNR_ANALYZER_ANNOTATE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/source.h"
#include "sim/snr_tracker.h"

/* One pc or one source line. */
struct an_annot_row {
	uint64_t pc;          /* a pc row: the pc; a line row: its lowest pc */
	const char *file;     /* NULL: no line table for it */
	unsigned line;
	const char *function; /* the place's function, or the symbol's name */
	const struct snr_place *place; /* pc rows with a line: the place (inline chain) */
	uint64_t executions;  /* a line row: executions of its most executed pc */
	uint64_t cycles;
	uint64_t stall[SNR_STALL_COUNT];
	uint64_t stall_total;
	uint64_t inclusive_cycles;    /* line rows: with their callees' (above) */
	uint64_t inclusive_stall[SNR_STALL_COUNT];
	char *disasm;         /* pc rows: the disassembly ("?" if no code bytes) */
	size_t first_pc, npcs; /* line rows: its pcs are pcs[first_pc .. first_pc + npcs) */
};

/* A line's calls of one function: calls made in the window (0: a call made
 * before it, the window starting inside the callee), and the cycles and
 * stalls while one of them was open. */
struct an_annot_call {
	const char *file; /* the calling line, as in an_annot_row */
	unsigned line;
	const char *function;
	const char *callee;
	uint64_t calls, cycles;
	uint64_t stall[SNR_STALL_COUNT];
};

/* The name of the line row that stands for callers before the window that
 * have no line or symbol. */
#define AN_CALLER_OUTSIDE "(caller outside the window)"

struct an_annot {
	uint64_t total_cycles, drain_cycles, instructions;
	uint64_t stall[SNR_STALL_COUNT]; /* per cause over the window */
	struct an_annot_row *pcs;        /* grouped by line (the lines' order in source), by pc within */
	size_t npcs;
	struct an_annot_row *lines;      /* hottest (most cycles) first */
	size_t nlines;
	bool have_lines;                 /* some pc has a source line */
	struct an_annot_call *calls;     /* most cycles first */
	size_t ncalls;
	char **strings;                  /* owned names (symbols of pcs without a line) */
	size_t nstrings;
};

/* The whole pass: opens path (.snrt replayed, .snrm read; source.h), fills
 * a and src (the caller closes src after using a: a's strings point into
 * its line tables). config_path as for `snr replay` (NULL: the recorded). */
int an_annotate_load(struct an_annot *a, struct snr_source *src, const char *path, const char *config_path,
		     char *err, size_t errlen);

/* The pass in parts, for a pass that collects other events too:
 * an_annot_tracker makes *out a tracker that feeds the accumulator and then
 * forwards every event to next (NULL: none); run the source with *out;
 * an_annot_finish turns what was accumulated into a (and frees acc). The
 * accumulator keeps 16 bytes per instruction and 24 per stall event in
 * temporary files beyond fixed budgets (annotate.c). */
struct an_annot_acc;
struct an_annot_acc *an_annot_acc_new(void);
void an_annot_tracker(struct an_annot_acc *acc, const struct snr_tracker *next, struct snr_tracker *out);
/* 0, or -1 with err filled (a temporary file failed; a is then empty) */
int an_annot_finish(struct an_annot_acc *acc, const struct snr_source *src, struct an_annot *a, char *err,
		    size_t errlen);
void an_annot_free(struct an_annot *a);
/* Adds another window's figures into `into` (start from a zeroed one):
 * totals, and per pc (windows of one program: a pc is the same instruction
 * in each) and per line. `into` keeps pointing into add's source's line
 * tables: close that source only after freeing `into`. */
void an_annot_merge(struct an_annot *into, const struct an_annot *add);

/* The --json document of `snr annotate` (docs/analyses.md); function:
 * only that function's lines and pcs (NULL: all). */
json_t *an_annot_json(const struct an_annot *a, const struct snr_source *src, const char *function);

/* The lines of the source file (tabs as spaces; NULL if not found), *n set
 * to their count; the caller frees each and the array. A file not at the
 * path the line table names is looked for under source_dir (NULL: not),
 * by that path, then by its base name. */
char **an_annot_read_source(const char *file, const char *source_dir, size_t *n);

/* Two windows' lines matched as a diff tool matches two versions of a file
 * (analyzer/linematch.c): per function, by the statement's text (the
 * source line, whitespace-normalized; a longest common subsequence over
 * the function's lines in order), then the lines left between two matched
 * ones by their order there (an edited statement with its new version);
 * by file:line where a side's source is not found, by function for code
 * without a line table. before/after NULL when a side lacks the line;
 * delta: after's cycles - before's. */
struct an_annot_pair {
	const struct an_annot_row *before, *after;
	int64_t delta;
};
/* The pairs of a's and b's lines, largest change first (n set; the caller
 * frees); source_dir as for an_annot_read_source. */
struct an_annot_pair *an_annot_pair_lines(const struct an_annot *a, const struct an_annot *b, const char *source_dir,
					  size_t *n);
/* `snr annotate A --compare B --json`'s document (docs/analyses.md); pa, pb:
 * the windows' names. */
json_t *an_annot_compare_json(const struct an_annot *a, const struct an_annot *b, const struct an_annot_pair *p,
			      size_t n, const char *pa, const char *pb);

int snr_cmd_annotate(int argc, char **argv);

#endif
