/*
 * readable_pages.h: which pages an instruction reads the debugger cannot
 * read ([vvar]), probed once per page and window (recorder/readable_pages.c).
 */
#ifndef SNR_READABLE_PAGES_H
#define SNR_READABLE_PAGES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/snr_ranges.h"
#include "recorder/record_int.h"

/*
 * Does the instruction read memory the debugger cannot read? Linux maps the
 * vDSO's data pages ([vvar], [vvar_vclock]) into every process, and the
 * vDSO's clock_gettime(), gettimeofday() and time() load the clock from
 * there, but ptrace and /proc/PID/mem (so gdbserver too) answer EIO for
 * them. Such an instruction is run on the target and its outputs are taken
 * as post registers, as rdtsc's are; its step is marked unread (its inputs
 * there are not in the trace). Found by reading one byte of each page the
 * instruction reads for the first time in the window: the answer is kept
 * per page in r->readable and r->unreadable, so a page costs one read per
 * window (with --method sim none: the probe is the page's fetch into the
 * cache, which the capture then reads from). `known` is the memory the
 * window's trace holds already (not probed). *unread says whether it does,
 * *at_out where. -1 with err for an instruction that also writes memory: its
 * stores' values would come from bytes no replay has.
 */
int reads_unreadable_mem(struct rec *r, const struct snr_insn_access *a, const struct snr_ranges *known,
			 uint64_t index, uint64_t pc, bool *unread, uint64_t *at_out, char *err, size_t errlen);

/* It runs for every instruction of a window, and most touch no memory: those
 * return here, without the call (its frame and nine arguments were 36
 * million of the 1,482 million instructions of the 1M serving window's
 * recording, callgrind). */
static inline int reads_unreadable(struct rec *r, const struct snr_insn_access *a, const struct snr_ranges *known,
				   uint64_t index, uint64_t pc, bool *unread, uint64_t *at_out, char *err,
				   size_t errlen)
{
	if (!a->nmem) {
		*unread = false;
		*at_out = 0;
		return 0;
	}
	return reads_unreadable_mem(r, a, known, index, pc, unread, at_out, err, errlen);
}

/* `known` lost ranges (a stride undone): the answers remembered from it go. */
void readable_pages_forget(struct rec *r);

/* A new window: r->readable, r->unreadable and the remembered answers go. */
void readable_pages_reset(struct rec *r);

#endif
