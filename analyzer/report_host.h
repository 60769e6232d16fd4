/*
 * report_host.h: the host page of `snr report` (see report_host.c).
 */
#ifndef SNR_ANALYZER_REPORT_HOST_H
#define SNR_ANALYZER_REPORT_HOST_H

#include <stdbool.h>

/* path names a host trace: it ends in .snrh or begins with its magic
 * (a missing or unreadable .snrh is one, for its reader to say why). */
bool an_is_host_trace(const char *path);
/* Writes the host page of the host trace paths[0] (paths[1..n-1], CUPTI's
 * files, merged into it) to out (never over an input, an existing file
 * only with --force). The exit status: 0, 2 for a file among them that is
 * not a host trace, or 1 with the error said (a file that cannot be read
 * as one, one cut short without --allow-truncated: snr exits 3). */
int an_report_host(int n, char **paths, const char *out);

#endif
