// SPDX-License-Identifier: GPL-2.0
/*
 * offcpu.bpf.c: when the traced process's threads leave and regain a CPU.
 *
 * At sched_switch the outgoing thread (current) gets a start record: the
 * time, prev_state, and its user and kernel stack ids (taken here, where the
 * blocked stack is current). When it is switched back in, the interval
 * [switch-out, switch-in) is emitted if it lasted at least min_offcpu_ns,
 * with the thread that woke it (sched_waking). Every interval, short or
 * long, goes into the exact per-thread totals.
 *
 * A switch-in can go unseen: on the 6.18 kernel this was written on, about
 * one in a few thousand switch-ins of a traced thread never reached the
 * program (no recursion miss counted; its switch-out and the next one were
 * seen), which lost a whole 200 ms sleep in 1 run of ~25. A switch-out that
 * finds its thread's start record still there knows one was missed, and
 * when: the thread has run for (sum_exec_runtime now - at the last
 * switch-out) since, so it came back that long before now. That interval
 * is closed then, as if the switch-in had been seen (without its waker),
 * and counted in repaired_switch_ins. Raw tracepoints, not
 * tp_btf: BTF-typed programs do not load on every kernel we run on, and raw
 * tracepoints need no tracefs mount.
 */
#include "vmlinux.h"
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

#include "host.h"
#include "host_bpf.h"

#define RING_BYTES (32 << 20)

const volatile int target_tgid = 0;
const volatile unsigned long long min_offcpu_ns = 0;
const volatile bool dwarf_stacks = false;
const volatile unsigned int stack_bytes = 16384;

unsigned long long dropped_events = 0;
unsigned long long repaired_switch_ins = 0;

struct start_rec {
	unsigned long long ts;
	unsigned long long runtime; /* the thread's sum_exec_runtime at switch-out */
	unsigned int state;
	int ustack, kstack;
	char comm[SNRH_COMM_LEN];
};

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct start_rec);
} starts SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, u32);
} wakers SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 65536);
	__type(key, u32);
	__type(value, struct snrh_thread_totals);
} totals SEC(".maps");

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

struct switch_stack {
	struct snrh_switch_stack_event h;
	struct snrh_ustack u;
};
SNRH_SCRATCH_MAP(scratch, struct switch_stack);

/* DWARF unwinding: the switching-out thread's registers and stack top, sent
 * now (its interval is sent at switch-in, with the same tid and start). */
static __always_inline void emit_switch_stack(u32 tid, u64 now)
{
	struct switch_stack *d = snrh_scratch(&scratch);
	if (!d)
		return;
	d->h.kind = SNRH_EV_SWITCH_STACK;
	d->h.tid = tid;
	d->h.ts_ns = now;
	unsigned int len = sizeof(d->h) + snrh_copy_ustack(&d->u, stack_bytes);
	if (len > sizeof(*d))
		return;
	if (bpf_ringbuf_output(&events, d, len, snrh_submit_flags(&events, RING_BYTES)))
		__sync_fetch_and_add(&dropped_events, 1);
}

static __always_inline unsigned int classify_state(unsigned int prev_state)
{
	if (prev_state == 0)
		return SNRH_STATE_R;
	if (prev_state & 0x2) /* TASK_UNINTERRUPTIBLE (also TASK_IDLE) */
		return SNRH_STATE_D;
	if (prev_state & 0x1) /* TASK_INTERRUPTIBLE */
		return SNRH_STATE_S;
	return SNRH_STATE_OTHER;
}

static __always_inline struct snrh_thread_totals *totals_for(u32 tid)
{
	struct snrh_thread_totals *t = bpf_map_lookup_elem(&totals, &tid);
	if (t)
		return t;
	struct snrh_thread_totals zero = {};
	bpf_map_update_elem(&totals, &tid, &zero, BPF_NOEXIST);
	return bpf_map_lookup_elem(&totals, &tid);
}

SEC("raw_tp/sched_process_exec")
int BPF_PROG(handle_exec, struct task_struct *p)
{
	if ((int)(bpf_get_current_pid_tgid() >> 32) != target_tgid)
		return 0;
	u32 k = 0, open = 0;
	bpf_map_update_elem(&exec_gate, &k, &open, BPF_ANY);
	return 0;
}

/* The waker is current at sched_waking, which try_to_wake_up fires in the
 * waker's context. sched_wakeup is not: a wake-up queued to the wakee's CPU
 * (the remote wake list) fires it there from the IPI, where current is
 * whatever that CPU ran (the idle task, another process). On a 2-CPU guest
 * that was 60-70% of the token loop's wake-ups (tests/host/host_causal.sh),
 * which then read as ended by no thread of the process. */
SEC("raw_tp/sched_waking")
int BPF_PROG(handle_wakeup, struct task_struct *p)
{
	if (BPF_CORE_READ(p, tgid) != target_tgid || snrh_before_exec())
		return 0;
	u32 wakee = BPF_CORE_READ(p, pid);
	u32 waker = (u32)bpf_get_current_pid_tgid();
	bpf_map_update_elem(&wakers, &wakee, &waker, BPF_ANY);
	return 0;
}

/* Closes tid's off-CPU interval rec at `end`: per-thread totals, and an
 * event when it is long enough. The caller deletes rec. */
static __always_inline void end_interval(u32 tid, struct start_rec *rec, u64 end, u32 waker,
					 struct snrh_thread_totals *t)
{
	u64 delta = end - rec->ts;
	if (t && rec->state < SNRH_NSTATES)
		t->offcpu_ns[rec->state & 3] += delta;
	if (delta < min_offcpu_ns)
		return;
	struct snrh_offcpu_event *e = bpf_ringbuf_reserve(&events, sizeof(*e), 0);
	if (!e) {
		__sync_fetch_and_add(&dropped_events, 1);
		return;
	}
	e->kind = SNRH_EV_OFFCPU;
	e->tid = tid;
	e->waker_tid = waker;
	e->state = rec->state;
	e->start_ns = rec->ts;
	e->end_ns = end;
	e->ustack = rec->ustack;
	e->kstack = rec->kstack;
	__builtin_memcpy(e->comm, rec->comm, sizeof(e->comm));
	bpf_ringbuf_submit(e, snrh_submit_flags(&events, RING_BYTES));
}

SEC("raw_tp/sched_switch")
int BPF_PROG(handle_switch, bool preempt, struct task_struct *prev, struct task_struct *next,
	     unsigned int prev_state)
{
	/* Every switch on the machine comes here: decide with two reads
	 * whether it concerns the traced process before anything else. */
	bool out = BPF_CORE_READ(prev, tgid) == target_tgid, in = BPF_CORE_READ(next, tgid) == target_tgid;
	if ((!out && !in) || snrh_before_exec())
		return 0;
	u64 now = bpf_ktime_get_ns();

	if (out) {
		u32 tid = BPF_CORE_READ(prev, pid);
		u64 runtime = BPF_CORE_READ(prev, se.sum_exec_runtime);
		struct snrh_thread_totals *t = totals_for(tid);
		struct start_rec *stale = bpf_map_lookup_elem(&starts, &tid);
		if (stale) {
			/* Its last switch-in was not seen (see the top). */
			u64 ran = runtime - stale->runtime;
			u64 back = ran < now - stale->ts ? now - ran : stale->ts;
			end_interval(tid, stale, back, 0, t);
			if (t)
				t->last_in_ns = back;
			__sync_fetch_and_add(&repaired_switch_ins, 1);
		}
		struct start_rec rec = {};
		rec.ts = now;
		rec.runtime = runtime;
		rec.state = classify_state(prev_state);
		if (dwarf_stacks) {
			rec.ustack = -1;
			emit_switch_stack(tid, now);
		} else {
			rec.ustack = bpf_get_stackid(ctx, &stacks, BPF_F_USER_STACK);
		}
		rec.kstack = bpf_get_stackid(ctx, &stacks, 0);
		bpf_get_current_comm(rec.comm, sizeof(rec.comm));
		bpf_map_update_elem(&starts, &tid, &rec, BPF_ANY);
		if (t) {
			if (t->last_in_ns)
				t->oncpu_ns += now - t->last_in_ns;
			t->last_in_ns = 0;
			t->switches++;
			__builtin_memcpy(t->comm, rec.comm, sizeof(t->comm));
		}
	}

	if (!in)
		return 0;
	u32 tid = BPF_CORE_READ(next, pid);
	struct snrh_thread_totals *t = totals_for(tid);
	if (t)
		t->last_in_ns = now;
	struct start_rec *rec = bpf_map_lookup_elem(&starts, &tid);
	if (!rec)
		return 0;
	u32 waker = 0, *w = bpf_map_lookup_elem(&wakers, &tid);
	if (w) {
		waker = *w;
		bpf_map_delete_elem(&wakers, &tid);
	}
	end_interval(tid, rec, now, waker, t);
	bpf_map_delete_elem(&starts, &tid);
	return 0;
}

char LICENSE[] SEC("license") = "GPL";
