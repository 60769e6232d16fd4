#!/usr/bin/env bash
# TA_HBM_DATA globals are loaded into every chip's HBM; DMA moves them
# between HBM, VMEM and core memory, and to another chip's HBM.
. "$(dirname "$0")/lib.sh"
cc_ta1 hbm <<'C'
#include <stdio.h>
#include "ta1.h"
TA_HBM_DATA static const unsigned table[8] = {11, 22, 33, 44, 55, 66, 77, 88};
static unsigned got[8], back[8];
int main(void) {
	uint64_t me = ta_chip_id(), n = ta_num_chips();
	ta_dma(TA_VMEM_BASE, ta_addr(table), sizeof(table), 0);         /* HBM -> VMEM */
	ta_dma(ta_addr(got), TA_VMEM_BASE, sizeof(got), 0);             /* VMEM -> core */
	ta_wait(0, 2);
	/* core -> next chip's HBM (global address), then read it back from there */
	uint64_t peer = (me + 1) % n, slot = TA_HBM_BASE + 0x1000 + me * 64;
	got[0] += 1000 * (unsigned)me;
	ta_dma(ta_hbm_of(peer, slot - TA_HBM_BASE), ta_addr(got), sizeof(got), 1);
	ta_wait(1, 1);
	ta_dma(ta_addr(back), ta_hbm_of(peer, slot - TA_HBM_BASE), sizeof(back), 1);
	ta_wait(1, 1);
	unsigned s = 0;
	for (int i = 0; i < 8; i++) s += back[i];
	printf("chip %d sum %u\n", (int)me, s);
	return 0;
}
C
run "$SNR" device "$T/hbm.elf" --chips 2
expect_rc 0
expect_out "chip 0 sum 396"
expect_out "chip 1 sum 1396"
echo ok
