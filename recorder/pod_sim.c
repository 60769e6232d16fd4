/*
 * pod_sim.c: `snr record --method sim` where a chip waits on a peer.
 *
 * The recorder simulates one chip (snr_sim_ta1 of chip C of N). A ta.wait
 * whose completions another chip signals inside the window cannot run in
 * that simulation: the completions are the peer's, and so are the bytes its
 * DMA writes into this chip's memory with them. Where the simulation stops
 * at such a wait, the recorder drops what it simulated since its last
 * checkpoint that matched the target (the target is still there) and
 * records the rest of the window by stepping the target, which waits for
 * the peer's signal in the device's pod mode (recorder/pod.c). So the
 * window is the trace stepping records: verified up to the checkpoint,
 * stepped from it.
 */
#include "recorder/pod_sim.h"

#include <stdio.h>
#include <string.h>

#include "lib/snr_lines.h"
#include "lib/snr_util.h"
#include "sim/grm_ta1.h"
#include "sim/snr_sim.h"

int sim_failed(struct rec *r, struct stride *sd, const struct snr_trace_step *step, struct snr_ranges *known,
	       struct snr_ranges *written, bool *reg_known, struct snr_record_summary *sum, struct code_cache *cc,
	       struct snr_trace_writer *w, char *err, size_t errlen)
{
	uint64_t i = step->index, pc = step->pc;
	if (r->sim != &snr_sim_ta1 || !ta1_grm_waits_on_peer(r->simst)) {
		snr_fmt(err, errlen, "instruction %llu at 0x%llx: the simulator failed: %s", (unsigned long long)i,
			(unsigned long long)pc, r->sim->error(r->simst));
		return -1;
	}
	/* the target has not run past sd->good (it moves at checkpoints and
	 * for what runs on it, each committed): what the simulation recorded
	 * since is dropped, the code this step emitted with it */
	if (step->code_len)
		stride_emitted(sd, pc);
	/* where in the source (--elf's line tables): the wait the user can move */
	char place[600] = "";
	if (r->o && r->o->elf_path) {
		struct snr_lines *l = snr_lines_new();
		char lerr[300], text[560];
		const struct snr_place *pl =
			snr_lines_add(l, r->o->elf_path, 0, NULL, lerr, sizeof(lerr)) ? NULL : snr_lines_find(l, pc);
		if (pl)
			snprintf(place, sizeof(place), ", %s", snr_place_text(pl, text, sizeof(text)));
		snr_lines_free(l);
	}
	snr_fmt(err, errlen,
		"instruction %llu at pc 0x%llx%s is a ta.wait for completions another chip signals inside the window, "
		"which the simulation of one chip does not hold",
		(unsigned long long)i, (unsigned long long)pc, place);
	if (verify_fall_back(r, sd, i, known, written, reg_known, sum, cc, w, err, errlen)) {
		size_t l = strlen(err);
		snr_fmt(err + l, errlen - l, " (the target cannot be put back: record this pod with --method step)");
		return -1;
	}
	return 0;
}
