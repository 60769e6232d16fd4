/* k chips (PULLERS, default 1) pull 1 MiB each from chip 0's HBM port; chip 0
 * and the chips past k do nothing: the port's contention in known answers
 * (tests/cli/pod_analyze.sh, pod_fabric_samples.sh). */
#include "ta1.h"
#ifndef PULLERS
#define PULLERS 1
#endif
TA_HBM_DATA static unsigned char src[1 << 20];
int main(void)
{
	uint64_t me = ta_chip_id();
	if (me == 0 || me > PULLERS)
		return 0;
	ta_dma(TA_VMEM_BASE, ta_hbm_of(0, (uint64_t)(uintptr_t)src - TA_HBM_BASE), sizeof(src), 0);
	ta_wait(0, 1);
	return 0;
}
