// SPDX-License-Identifier: GPL-2.0
/*
 * buckets.bpf.c: the intervals that put host time in gPerf's buckets.
 *
 * uprobe/uretprobe pairs on runtime APIs (cudaLaunchKernel -> H:CTRL,
 * cudaStreamSynchronize or ta1rt_wait -> H:WAIT_DEV, ...): user space
 * attaches the same two programs to every probed function with the probe's
 * index as the BPF cookie. Only the outermost probed call of a thread is
 * kept (cudaMemcpy calling a probed sync does not split). File and network
 * system calls (H:IO) come from raw_tp sys_enter/sys_exit. Each finished
 * call becomes one snrh_interval_event; which bucket a probe means is user
 * space's business.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "host.h"
#include "host_bpf.h"

#define RING_BYTES (4 << 20)

const volatile int target_tgid = 0;
const volatile bool trace_io_syscalls = true;

unsigned long long dropped_events = 0;

struct open_call {
	unsigned long long start;
	unsigned int probe;
	unsigned int depth;
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct open_call);
} open_calls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct open_call);
} open_syscalls SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, RING_BYTES);
} events SEC(".maps");

static __always_inline void emit(u32 tid, u64 start, u64 end, u32 probe)
{
	struct snrh_interval_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped_events, 1);
		return;
	}
	e->kind = SNRH_EV_INTERVAL;
	e->tid = tid;
	e->start_ns = start;
	e->end_ns = end;
	e->probe = probe;
	e->pad = 0;
	bpf_ringbuf_submit(e, snrh_submit_flags(&events, RING_BYTES));
}

SEC("uprobe")
int BPF_KPROBE(api_enter)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((int)(id >> 32) != target_tgid)
		return 0;
	u32 tid = (u32)id;
	/* This runs before the kernel swaps the return address at sp for the
	 * uretprobe trampoline: keep the original for stack copies. */
	u64 slot = SNRH_REGS(ctx)->sp, ra = 0;
	if (!bpf_probe_read_user(&ra, sizeof(ra), (const void *)slot)) {
		struct snrh_uret *ur = bpf_map_lookup_elem(&uret_slots, &tid);
		if (!ur) {
			struct snrh_uret zero = {};
			bpf_map_update_elem(&uret_slots, &tid, &zero, BPF_NOEXIST);
			ur = bpf_map_lookup_elem(&uret_slots, &tid);
		}
		if (ur) {
			u32 n = ur->n;
			barrier_var(n);
			if (n < SNRH_URET_MAX) {
				ur->slot[n] = slot;
				ur->ra[n] = ra;
				ur->n = n + 1;
			}
		}
	}
	struct open_call *o = bpf_map_lookup_elem(&open_calls, &tid);
	if (o) {
		o->depth++;
		return 0;
	}
	struct open_call c = {.start = bpf_ktime_get_ns(), .probe = (u32)bpf_get_attach_cookie(ctx), .depth = 1};
	bpf_map_update_elem(&open_calls, &tid, &c, BPF_ANY);
	return 0;
}

SEC("uretprobe")
int BPF_KRETPROBE(api_exit)
{
	u64 id = bpf_get_current_pid_tgid();
	if ((int)(id >> 32) != target_tgid)
		return 0;
	u32 tid = (u32)id;
	struct snrh_uret *ur = bpf_map_lookup_elem(&uret_slots, &tid);
	if (ur && ur->n > 0) {
		/* returned: its slot and any deeper ones (left by a longjmp) are gone */
		u64 sp = SNRH_REGS(ctx)->sp;
		u32 n = ur->n;
		for (int i = 0; i < SNRH_URET_MAX && n > 0; i++) {
			u32 k = n - 1;
			barrier_var(k);
			if (k >= SNRH_URET_MAX || ur->slot[k] >= sp)
				break;
			n = k;
		}
		ur->n = n;
		if (!n)
			bpf_map_delete_elem(&uret_slots, &tid);
	}
	struct open_call *o = bpf_map_lookup_elem(&open_calls, &tid);
	if (!o)
		return 0;
	if (--o->depth > 0)
		return 0;
	emit(tid, o->start, bpf_ktime_get_ns(), o->probe);
	bpf_map_delete_elem(&open_calls, &tid);
	return 0;
}

/* x86-64 numbers of the system calls that count as H:IO. */
static __always_inline bool is_io_syscall(long nr)
{
	switch (nr) {
	case 0: case 1:               /* read write */
	case 17: case 18:             /* pread64 pwrite64 */
	case 19: case 20:             /* readv writev */
	case 40:                      /* sendfile */
	case 44: case 45:             /* sendto recvfrom */
	case 46: case 47:             /* sendmsg recvmsg */
	case 74: case 75:             /* fsync fdatasync */
	case 257:                     /* openat */
	case 295: case 296:           /* preadv pwritev */
	case 426:                     /* io_uring_enter */
		return true;
	}
	return false;
}

SEC("raw_tp/sys_enter")
int BPF_PROG(sys_enter, struct pt_regs *regs, long nr)
{
	if (!trace_io_syscalls)
		return 0;
	u64 id = bpf_get_current_pid_tgid();
	if ((int)(id >> 32) != target_tgid || !is_io_syscall(nr) || snrh_before_exec())
		return 0;
	u32 tid = (u32)id;
	struct open_call c = {.start = bpf_ktime_get_ns(), .probe = SNRH_PROBE_SYSCALL | (u32)nr, .depth = 1};
	bpf_map_update_elem(&open_syscalls, &tid, &c, BPF_ANY);
	return 0;
}

SEC("raw_tp/sys_exit")
int BPF_PROG(sys_exit, struct pt_regs *regs, long ret)
{
	if (!trace_io_syscalls)
		return 0;
	u64 id = bpf_get_current_pid_tgid();
	if ((int)(id >> 32) != target_tgid)
		return 0;
	u32 tid = (u32)id;
	struct open_call *o = bpf_map_lookup_elem(&open_syscalls, &tid);
	if (!o)
		return 0;
	emit(tid, o->start, bpf_ktime_get_ns(), o->probe);
	bpf_map_delete_elem(&open_syscalls, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
