/*
 * callgraph.h: the calls a replayed window made, for the inclusive figures
 * of `snr annotate` (annotate.h): which line's call is active at each
 * instruction, so that a callee's cycles and stalls are charged to the
 * line that called it as well as to its own lines.
 *
 * A call is an instruction of flow AN_FLOW_CALL (pcinfo.h); its frame
 * stays open until a return whose target is the frame's return address
 * (the call's pc + its length); a return to an older frame's address closes
 * the younger ones too (a callee that never returned normally). A return
 * whose target no open frame has is ignored while frames are open; with
 * none open, it leaves a function the window started inside: a frame that
 * was open before the window (an "outer" frame). Two passes find these:
 * an_cg_scan over the window's pcs collects the outer frames' return
 * addresses (outermost first); the caller gives each a line (the one of the
 * instruction before the return address, or a line of its own when that is
 * not known) and an_cg_step then walks the window with those frames open
 * from its start.
 *
 * Inclusive cycles of a line: the cycles of every instruction executed
 * while the line is on the stack (a call from it open) or executing, each
 * cycle once per line however many times the line is on the stack
 * (recursion). Kept as intervals of a running cycle count: a line's figure
 * grows by the count's advance between its first frame's opening and its
 * last frame's closing, and by its own instructions' cycles while it has no
 * frame open. The same per (caller line, callee function) edge.
 */
#ifndef SNR_ANALYZER_CALLGRAPH_H
#define SNR_ANALYZER_CALLGRAPH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "analyzer/pcinfo.h"
#include "sim/snr_tracker.h"

/* A line's inclusive figures (index: the caller's line numbering). */
struct an_cg_incl {
	uint64_t cycles;
	uint64_t stall[SNR_STALL_COUNT];
};

/* A caller line calling a function: calls counted in the window (0 for an
 * outer frame, whose call came before it), cycles and stalls while one of
 * its calls was open (once per cycle under recursion). */
struct an_cg_edge {
	size_t caller;      /* line index */
	const char *callee; /* the callee's function (the caller's string) */
	uint64_t calls, cycles;
	uint64_t stall[SNR_STALL_COUNT];
};

struct an_cg;

struct an_cg *an_cg_new(void);
void an_cg_free(struct an_cg *g);

/* Pass 1, each instruction in order: its pc, flow, length and the next
 * instruction's pc (has_next false for the window's last). */
void an_cg_scan(struct an_cg *g, uint64_t pc, enum an_flow flow, unsigned len, bool has_next, uint64_t next_pc);
/* The outer frames pass 1 found, outermost first: the return address each
 * returned to, and the function that returned (the pc of its return). */
size_t an_cg_outer(const struct an_cg *g, const uint64_t **ret_to, const uint64_t **ret_pc);

/* Pass 2: nlines lines; outer_line[k] and outer_callee[k] for the k-th
 * outer frame (the caller's line and the function it was in). */
void an_cg_start(struct an_cg *g, size_t nlines, const size_t *outer_line, const char *const *outer_callee);
/* Each instruction in order: its line, cycles and stalls by cause, flow;
 * for a call the callee's function (the next instruction's; NULL: the
 * window ends at the call). */
void an_cg_step(struct an_cg *g, size_t line, uint64_t cycles, const uint64_t *stall, uint64_t pc, enum an_flow flow,
		unsigned len, bool has_next, uint64_t next_pc, const char *callee);
/* Closes the frames still open (a window that ends inside calls) and gives
 * the figures: incl[nlines] (the caller's, owned by g) and the edges. */
const struct an_cg_incl *an_cg_finish(struct an_cg *g, const struct an_cg_edge **edges, size_t *nedges);

#endif
