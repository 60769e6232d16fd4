/*
 * snr_partial.h: what a reader does with a part presented as a whole.
 *
 * A trace cut short (a recorder killed: no END) or ended by SIGINT/SIGTERM
 * ("interrupted"), or a metrics file replayed from one, holds part of the
 * window that was asked for. Every reader of .snrt and .snrm (trace info
 * and dump, replay, check, every analysis, report, export) calls
 * snr_partial_check when it finds its input partial: unless the user gave
 * --allow-truncated the reader fails, saying how much the input holds, and
 * snr exits 3 (cli/snr.c asks snr_partial_refused); with it, a warning says
 * the same and the outputs carry "truncated": true (snr_partial_seen).
 */
#ifndef SNR_PARTIAL_H
#define SNR_PARTIAL_H

#include <stdbool.h>
#include <stddef.h>

#define SNR_EXIT_PARTIAL 3

void snr_partial_allow(bool allow);
bool snr_partial_allowed(void);
/* path holds `what` ("the first 4096 of 200000 instructions: the recorder
 * was killed"). 0 if partial input is allowed (a warning printed), else -1
 * with err filled. */
int snr_partial_check(const char *path, const char *what, char *err, size_t errlen);
/* path is cut short where no part of it can be used (a metrics file
 * without its summary): refused even with --allow-truncated, and snr exits 3
 * as for any cut-short input. Always -1, err filled. */
int snr_partial_unusable(const char *path, const char *what, char *err, size_t errlen);
bool snr_partial_seen(void);    /* a partial input was used */
bool snr_partial_refused(void); /* one was refused */
/* A number in an input contradicts its meaning or the chunks it summarizes
 * (a SUMMARY's "cycles": -1, an END counting steps the file lacks): the
 * reader refuses the file, naming the field, and snr exits 3 as for a
 * partial input it was not allowed to use. */
void snr_partial_damaged(void);

#endif
