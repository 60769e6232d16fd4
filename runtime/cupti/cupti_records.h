/*
 * cupti_records.h: turning CUPTI activity records into host-trace device
 * records (lib/snr_host_trace.h), apart from CUPTI itself so that it
 * is tested with synthetic records on machines without a GPU.
 */
#ifndef SNR_CUPTI_RECORDS_H
#define SNR_CUPTI_RECORDS_H

#include <cupti.h>

#include "lib/snr_host_trace.h"

/* Names a runtime/driver API callback id (cuptiGetCallbackName in the
 * injected library; a stub in tests). */
typedef const char *(*snr_cupti_cbid_name_fn)(CUpti_CallbackDomain domain, uint32_t cbid);

/* Appends one record to t->device; returns 1 if kept, 0 if a kind we skip. */
int snr_cupti_consume(struct snrh_trace *t, const CUpti_Activity *rec, snr_cupti_cbid_name_fn name_of);

/* Every record of a completed CUPTI activity buffer (its first `valid`
 * bytes), read with cuptiActivityGetNextRecord and appended with
 * snr_cupti_consume; *kept and *skipped count them. What libsnr_cupti.so
 * does with each buffer CUPTI hands back. */
void snr_cupti_consume_buffer(struct snrh_trace *t, uint8_t *buffer, size_t valid, snr_cupti_cbid_name_fn name_of,
			      uint64_t *kept, uint64_t *skipped);

/* An affine map from CUPTI timestamps to CLOCK_MONOTONIC fitted from two
 * (cupti, monotonic) pairs; one pair gives an offset only. */
struct snr_cupti_clock {
	uint64_t cupti0, mono0, cupti1, mono1;
	int npairs;
};
uint64_t snr_cupti_to_mono(const struct snr_cupti_clock *c, uint64_t cupti_ts);
/* Rewrites t->device's timestamps with the map. */
void snr_cupti_apply_clock(struct snrh_trace *t, const struct snr_cupti_clock *c);

#endif
