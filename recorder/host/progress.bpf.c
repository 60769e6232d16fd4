// SPDX-License-Identifier: GPL-2.0
/*
 * progress.bpf.c: progress points and request begin/end marks
 * (`snr host record --progress SYM`, `--latency BEGIN:END`). One uprobe
 * program is attached to every marked function with the mark's index as
 * the BPF cookie; each call becomes one snrh_mark_event (thread, time, the
 * call's first argument). What a mark means (a unit of work, a request's
 * begin or end) is user space's business (progress.c).
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "host.h"
#include "host_bpf.h"

#define RING_BYTES (1 << 20)

const volatile int target_tgid = 0;

unsigned long long dropped_events = 0;

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} events SEC(".maps");

SEC("uprobe")
int BPF_KPROBE(mark)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((int)(id >> 32) != target_tgid)
		return 0;
	struct snrh_mark_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped_events, 1);
		return 0;
	}
	e->kind = SNRH_EV_MARK;
	e->tid = (u32)id;
	e->ts_ns = bpf_ktime_get_ns();
	e->point = (u32)bpf_get_attach_cookie(ctx);
	e->pad = 0;
	e->arg = SNRH_REGS(ctx)->di /* the first argument */;
	bpf_ringbuf_submit(e, snrh_submit_flags(&events, RING_BYTES));
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
