// SPDX-License-Identifier: GPL-2.0
/*
 * oncpu.bpf.c: on-CPU sampling. User space opens one cpu-clock perf event
 * per CPU at -F HZ and attaches this program to each; a sample of the traced
 * process becomes a timestamp, the thread, and its user and kernel stack ids.
 * Timestamps (not in-kernel counts) let user space put every sample in the
 * bucket of the API call it fell into. With dwarf_stacks the user stack is
 * not walked here: the sample carries the user registers and a copy of the
 * top of the user stack (host_bpf.h), and user space unwinds it.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "host.h"
#include "host_bpf.h"

#define RING_BYTES (16 << 20)

const volatile int target_tgid = 0;
const volatile bool dwarf_stacks = false;
const volatile unsigned int stack_bytes = 16384;

unsigned long long dropped_events = 0;

struct {
	__uint(type, BPF_MAP_TYPE_STACK_TRACE);
	__uint(max_entries, 16384);
	__uint(key_size, sizeof(u32));
	__uint(value_size, SNRH_MAX_STACK_DEPTH * sizeof(u64));
} stacks SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} events SEC(".maps");

struct dwarf_sample {
	struct snrh_sample_event h;
	struct snrh_ustack u;
};
SNRH_SCRATCH_MAP(scratch, struct dwarf_sample);

SEC("perf_event")
int do_sample(struct bpf_perf_event_data *ctx)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((int)(id >> 32) != target_tgid || snrh_before_exec())
		return 0;
	if (dwarf_stacks) {
		struct dwarf_sample *d = snrh_scratch(&scratch);
		if (!d)
			return 0;
		d->h.kind = SNRH_EV_SAMPLE_DWARF;
		d->h.tid = (u32)id;
		d->h.ts_ns = bpf_ktime_get_ns();
		d->h.ustack = -1;
		d->h.kstack = bpf_get_stackid(ctx, &stacks, 0);
		d->h.cpu = bpf_get_smp_processor_id();
		d->h.pad = 0;
		bpf_get_current_comm(d->h.comm, sizeof(d->h.comm));
		unsigned int len = sizeof(d->h) + snrh_copy_ustack(&d->u, stack_bytes);
		if (len > sizeof(*d))
			return 0;
		if (bpf_ringbuf_output(&events, d, len, snrh_submit_flags(&events, RING_BYTES)))
			__sync_fetch_and_add(&dropped_events, 1);
		return 0;
	}
	struct snrh_sample_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped_events, 1);
		return 0;
	}
	e->kind = SNRH_EV_SAMPLE;
	e->tid = (u32)id;
	e->ts_ns = bpf_ktime_get_ns();
	e->ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
	e->kstack = bpf_get_stackid(ctx, &stacks, 0);
	e->cpu = bpf_get_smp_processor_id();
	e->pad = 0;
	bpf_get_current_comm(e->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, snrh_submit_flags(&events, RING_BYTES));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
