/*
 * pod_suggest.h: `snr analyze suggest` on a pod (pod_suggest.c): Algorithm 2
 * on every chip's window, each move a DMA on the chip that issues it for a
 * stall on any chip, verified by a what-if of the whole pod.
 */
#ifndef SNR_ANALYZER_POD_SUGGEST_H
#define SNR_ANALYZER_POD_SUGGEST_H

#include <stdbool.h>

/* Whether path is a pod's recording (snr record --pod) or a pod's metrics
 * set (a set whose manifest says "pod"). */
bool snr_pod_suggest_is_pod(const char *path);

/* `snr analyze suggest POD|MSET ...` (argv[0] = "suggest"). */
int snr_analyze_pod_suggest(int argc, char **argv);

#endif
