/*
 * snr_tracker.c: names of the tracker's enums, for reports and metrics files.
 */
#include "sim/snr_tracker.h"

const char *snr_stall_cause_name(enum snr_stall_cause c)
{
	switch (c) {
	case SNR_STALL_DMA_BASE:
		return "dma-base";
	case SNR_STALL_DMA_TRANSFER:
		return "dma-transfer";
	case SNR_STALL_VMEM_HAZARD:
		return "vmem-hazard";
	case SNR_STALL_UNIT_BUSY:
		return "unit-busy";
	case SNR_STALL_REGISTER:
		return "register";
	case SNR_STALL_BRANCH:
		return "branch";
	case SNR_STALL_PEER:
		return "peer";
	case SNR_STALL_COUNT:
		break;
	}
	return "?";
}

const char *snr_unit_name(enum snr_unit u)
{
	switch (u) {
	case SNR_UNIT_SCALAR:
		return "scalar";
	case SNR_UNIT_VECTOR:
		return "vector";
	case SNR_UNIT_MXU:
		return "mxu";
	case SNR_UNIT_DMA:
		return "dma";
	case SNR_UNIT_COUNT:
		break;
	}
	return "?";
}
