/*
 * crc_check.h: the target's CRCs of ranges the simulation holds the bytes
 * of, asked together (recorder/crc_check.c).
 */
#ifndef SNR_CRC_CHECK_H
#define SNR_CRC_CHECK_H

#include <stdbool.h>
#include <stddef.h>

#include "lib/snr_trace.h"
#include "recorder/record_int.h"

/* For each of the n ranges with same[k] set: whether the target's GDB
 * CRC-32 of m[k].addr .. + m[k].len (crc_mem) is that of m[k].data; same[k]
 * is cleared where it differs or the target cannot tell (the caller reads
 * those). Over snr device's rsp connection the requests go out together,
 * one round trip; elsewhere one at a time. 0, or -1 (err names `what`). */
int crc_check(struct rec *r, const struct snr_trace_mem *m, size_t n, bool *same, const char *what, char *err,
	      size_t errlen);

#endif
