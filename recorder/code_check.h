/*
 * code_check.h: before a window is recorded, is the ELF the program the
 * target runs? (recorder/code_check.c)
 */
#ifndef SNR_CODE_CHECK_H
#define SNR_CODE_CHECK_H

#include "recorder/record_int.h"

/* The code at the breakpoint bp, in whichever object holds it, and a
 * sample of the first object's code, against the target's memory: 0 the
 * same, -1 with err naming the first difference or the failed read. */
int check_code(struct rec *r, uint64_t bp, const struct loaded_obj *objs, size_t nobjs, char *err, size_t errlen);

#endif
