/*
 * host_lines.h: host stacks' user frames placed in source lines
 * (analyzer/host_lines.c).
 */
#ifndef SNR_HOST_LINES_H
#define SNR_HOST_LINES_H

#include <stddef.h>
#include <stdint.h>

#include "lib/snr_host_trace.h"

struct snr_lines;

/* The line tables of the objects the trace's MAPS name (each at its load
 * bias, checked by build-id; a missing or rebuilt file is skipped, its
 * frames keep their symbols). NULL when no object could be added. */
struct snr_lines *snrh_lines_open(const struct snrh_trace *t);

/* " file:line" of a user frame (addr; a return address when caller_frame,
 * placed at addr - 1, the call), or "" when no line table has it. */
const char *snrh_frame_line(struct snr_lines *l, uint64_t addr, int caller_frame, char *buf, size_t len);

#endif
