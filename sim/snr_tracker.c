/*
 * snr_tracker.c: names of the tracker's enumerations, as the metrics
 * summary, the analyses and the exports print them.
 */
#include "snr_tracker.h"

const char *snr_stall_cause_name(enum snr_stall_cause c)
{
	static const char *const names[SNR_STALL_COUNT] = {
		"dma-base", "dma-transfer", "vmem-hazard", "unit-busy", "register", "branch",
	};
	return (unsigned)c < SNR_STALL_COUNT ? names[c] : "?";
}

const char *snr_unit_name(enum snr_unit u)
{
	static const char *const names[SNR_UNIT_COUNT] = {"scalar", "vector", "mxu", "dma"};
	return (unsigned)u < SNR_UNIT_COUNT ? names[u] : "?";
}
