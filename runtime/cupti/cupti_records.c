/*
 * cupti_records.c: see cupti_records.h. Kernel, memcpy and memset records
 * are device work (G:COMP / G:XFER); runtime and driver API records are host
 * intervals on the calling thread; synchronization records are host waits
 * (H:WAIT_DEV). Correlation ids tie a launch to its kernel.
 */
#include "cupti_records.h"

#include <stdio.h>

static const char *copy_kind(uint8_t k)
{
	switch (k) {
	case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return "memcpy HtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return "memcpy DtoH";
	case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return "memcpy DtoD";
	case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP: return "memcpy PtoP";
	default: return "memcpy";
	}
}

int snr_cupti_consume(struct snrh_trace *t, const CUpti_Activity *rec, snr_cupti_cbid_name_fn name_of)
{
	struct snrh_device_rec d = {0};
	char buf[64];
	switch (rec->kind) {
	case CUPTI_ACTIVITY_KIND_KERNEL:
	case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
		const CUpti_ActivityKernel10 *k = (const void *)rec;
		d = (struct snrh_device_rec){SNRH_DEV_KERNEL, k->deviceId, k->streamId, k->correlationId, 0,
					     k->start, k->end, 0, snrh_intern(t, k->name ? k->name : "kernel")};
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMCPY: {
		const CUpti_ActivityMemcpy6 *m = (const void *)rec;
		d = (struct snrh_device_rec){SNRH_DEV_MEMCPY, m->deviceId, m->streamId, m->correlationId, 0,
					     m->start, m->end, m->bytes, snrh_intern(t, copy_kind(m->copyKind))};
		break;
	}
	case CUPTI_ACTIVITY_KIND_MEMSET: {
		const CUpti_ActivityMemset4 *m = (const void *)rec;
		d = (struct snrh_device_rec){SNRH_DEV_MEMSET, m->deviceId, m->streamId, m->correlationId, 0,
					     m->start, m->end, m->bytes, snrh_intern(t, "memset")};
		break;
	}
	case CUPTI_ACTIVITY_KIND_RUNTIME:
	case CUPTI_ACTIVITY_KIND_DRIVER: {
		const CUpti_ActivityAPI *a = (const void *)rec;
		int runtime = rec->kind == CUPTI_ACTIVITY_KIND_RUNTIME;
		const char *name = name_of ? name_of(runtime ? CUPTI_CB_DOMAIN_RUNTIME_API : CUPTI_CB_DOMAIN_DRIVER_API,
						     a->cbid)
					   : NULL;
		if (!name) {
			snprintf(buf, sizeof(buf), "%s cbid %u", runtime ? "runtime" : "driver", a->cbid);
			name = buf;
		}
		d = (struct snrh_device_rec){runtime ? SNRH_DEV_RUNTIME_API : SNRH_DEV_DRIVER_API, 0, 0, a->correlationId,
					     a->threadId, a->start, a->end, 0, snrh_intern(t, name)};
		break;
	}
	case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION: {
		const CUpti_ActivitySynchronization2 *s = (const void *)rec;
		static const char *const types[] = {"sync", "cudaEventSynchronize", "cudaStreamWaitEvent",
						    "cudaStreamSynchronize", "cudaDeviceSynchronize"};
		d = (struct snrh_device_rec){SNRH_DEV_SYNC, 0, s->streamId, s->correlationId, 0, s->start, s->end, 0,
					     snrh_intern(t, (unsigned)s->type < 5 ? types[s->type] : "sync")};
		break;
	}
	default:
		return 0;
	}
	SNRH_PUSH(t->device, d);
	return 1;
}

void snr_cupti_consume_buffer(struct snrh_trace *t, uint8_t *buffer, size_t valid, snr_cupti_cbid_name_fn name_of,
			      uint64_t *kept, uint64_t *skipped)
{
	CUpti_Activity *rec = NULL;
	while (cuptiActivityGetNextRecord(buffer, valid, &rec) == CUPTI_SUCCESS) {
		if (snr_cupti_consume(t, rec, name_of))
			(*kept)++;
		else
			(*skipped)++;
	}
}

uint64_t snr_cupti_to_mono(const struct snr_cupti_clock *c, uint64_t ts)
{
	if (c->npairs == 0)
		return ts;
	if (c->npairs == 1 || c->cupti1 == c->cupti0)
		return ts + (c->mono0 - c->cupti0);
	double slope = (double)(int64_t)(c->mono1 - c->mono0) / (double)(int64_t)(c->cupti1 - c->cupti0);
	return c->mono0 + (uint64_t)(int64_t)((double)(int64_t)(ts - c->cupti0) * slope);
}

void snr_cupti_apply_clock(struct snrh_trace *t, const struct snr_cupti_clock *c)
{
	for (size_t i = 0; i < t->device.n; i++) {
		t->device.v[i].start = snr_cupti_to_mono(c, t->device.v[i].start);
		t->device.v[i].end = snr_cupti_to_mono(c, t->device.v[i].end);
	}
}
