/*
 * host_bpf.h: what the three .bpf.c programs share on the kernel side.
 *
 * Ring buffer wakeups: by default every bpf_ringbuf_submit that finds the
 * reader caught up wakes it, so a reader blocked in epoll is woken once
 * per event. On a loaded 2-CPU machine that was one wakeup of `snr host
 * record` per scheduler switch of the traced threads, each wakeup
 * preempting one of those threads and causing more switches (the serving
 * loop ran 12-95% slower traced). Records are submitted without a wakeup;
 * the reader drains the rings on its own timer (host_record.c), and only a
 * ring more than a quarter full wakes it early so nothing is dropped.
 */
#ifndef SNR_HOST_BPF_H
#define SNR_HOST_BPF_H

/*
 * x86-64's struct pt_regs (the registers saved at kernel entry) in its fixed
 * layout: the ptrace ABI's user_regs_struct has the same first 21 words, and
 * perf and libbpf's non-CO-RE PT_REGS_* macros rely on it too. Reading the
 * registers through this rather than through vmlinux.h's pt_regs gives the
 * loads no CO-RE relocation, and an object with none is loaded without libbpf
 * reading and parsing the kernel's BTF (5.5 MB, 126,700 types, once per
 * object: it kept no copy between them). oncpu, buckets and progress need
 * nothing else from it; offcpu still does (task_struct, sched_entity).
 */
struct snrh_pt_regs {
	unsigned long r15, r14, r13, r12, bp, bx, r11, r10, r9, r8, ax, cx, dx, si, di, orig_ax, ip, cs, flags, sp,
		ss;
};
#define SNRH_REGS(ctx) ((const struct snrh_pt_regs *)(ctx))

static __always_inline unsigned long long snrh_submit_flags(void *ringbuf, unsigned long long ring_bytes)
{
	return bpf_ringbuf_query(ringbuf, BPF_RB_AVAIL_DATA) >= ring_bytes / 4 ? BPF_RB_FORCE_WAKEUP
										 : BPF_RB_NO_WAKEUP;
}

/*
 * How far up each thread's stack a copy needs to reach: tid -> the address
 * just above the highest word the tracer's unwinder read from a copy that
 * unwound to the thread's outermost frame (plus a margin), learned per
 * thread in user space. A thread's outermost frames (start_thread, _start)
 * do not move, so copying from sp to there is all unwinding ever needs;
 * without it a copy runs to the top of the stack's mapping or max_bytes
 * (a pthread's stack has its TLS above it: 14 KiB copies where 3 did).
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);
	__type(value, u64);
} stack_reach SEC(".maps");

/* Entry 0 is 1 from before a command the tracer starts is released until
 * its exec (raw_tp sched_process_exec in offcpu.bpf.c clears it): until
 * then the traced pid is the tracer's own child, whose switches, samples
 * and system calls (reading the go pipe, copy-on-write faults, execve
 * itself) are not the command's, and whose stacks the command's maps
 * cannot name. */
struct {
	__uint(type, BPF_MAP_TYPE_ARRAY);
	__uint(max_entries, 1);
	__type(key, u32);
	__type(value, u32);
} exec_gate SEC(".maps");

static __always_inline bool snrh_before_exec(void)
{
	u32 k = 0, *w = bpf_map_lookup_elem(&exec_gate, &k);
	return w && *w;
}

/* tid -> the return addresses its pending uretprobes hid (host.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, 16384);
	__type(key, u32);
	__type(value, struct snrh_uret);
} uret_slots SEC(".maps");

/*
 * DWARF unwinding's raw material: the current thread's user registers and
 * the top of its user stack, into u (a per-CPU slot of an array map: the
 * BPF stack has 512 bytes). The registers are the ones saved at kernel
 * entry (task_pt_regs), which is what both a sample taken in the kernel and
 * a switch-out (sched_switch runs in the task switching out) need. The
 * stack is read page by page from sp up to max_bytes and stops at the first
 * page that cannot be read (the top of the stack's mapping, or a page not
 * resident: probe reads cannot fault pages in here), or at the thread's
 * learned reach (stack_reach). Returns the number of
 * bytes to send: the registers, the size word and the stack bytes.
 */
static __always_inline unsigned int snrh_copy_ustack(struct snrh_ustack *u, unsigned int max_bytes)
{
	struct task_struct *task = bpf_get_current_task_btf();
	const void *r = (const void *)bpf_task_pt_regs(task);
	struct snrh_pt_regs regs;
	if (bpf_probe_read_kernel(&regs, sizeof(regs), r)) {
		u->size = 0;
		return 0;
	}
	u->regs[0] = regs.ax;
	u->regs[1] = regs.dx;
	u->regs[2] = regs.cx;
	u->regs[3] = regs.bx;
	u->regs[4] = regs.si;
	u->regs[5] = regs.di;
	u->regs[6] = regs.bp;
	u->regs[7] = regs.sp;
	u->regs[8] = regs.r8;
	u->regs[9] = regs.r9;
	u->regs[10] = regs.r10;
	u->regs[11] = regs.r11;
	u->regs[12] = regs.r12;
	u->regs[13] = regs.r13;
	u->regs[14] = regs.r14;
	u->regs[15] = regs.r15;
	u->regs[16] = regs.ip;
	u->pad = 0;
	u64 sp = regs.sp, got = 0, limit = max_bytes;
	if (limit > SNRH_USTACK_MAX)
		limit = SNRH_USTACK_MAX;
	u32 tid = (u32)bpf_get_current_pid_tgid();
	u64 *reach = bpf_map_lookup_elem(&stack_reach, &tid);
	if (reach && *reach > sp && *reach - sp < limit)
		limit = *reach - sp;
	for (int i = 0; i < SNRH_USTACK_MAX / 4096 + 1; i++) {
		if (got >= limit)
			break;
		u64 chunk = 4096 - ((sp + got) & 4095), room = limit - got;
		if (chunk > room)
			chunk = room;
		/* Bounds the verifier can see right before the read. */
		barrier_var(chunk);
		if (chunk == 0 || chunk > SNRH_USTACK_SLACK)
			break;
		barrier_var(got);
		if (got > SNRH_USTACK_MAX)
			break;
		if (bpf_probe_read_user(&u->data[got], (u32)chunk, (const void *)(sp + got)))
			break;
		got += chunk;
	}
	u->size = (unsigned int)got;
	/* Return addresses a pending uretprobe replaced by its trampoline: put
	 * the originals back in the copy. */
	struct snrh_uret *ur = bpf_map_lookup_elem(&uret_slots, &tid);
	if (ur) {
		for (int i = 0; i < SNRH_URET_MAX; i++) {
			if (i >= ur->n)
				break;
			u64 slot = ur->slot[i], off = slot - sp;
			if (slot < sp || off + 8 > got)
				continue;
			barrier_var(off);
			if (off > SNRH_USTACK_MAX - 8)
				continue;
			__builtin_memcpy(&u->data[off], &ur->ra[i], 8);
		}
	}
	return (unsigned int)__builtin_offsetof(struct snrh_ustack, data) + (unsigned int)got;
}

/* A per-CPU scratch slot of `type` (an array map with one entry per
 * possible CPU, sized by user space before load: per-CPU maps limit values
 * to 32 KiB, a record with its stack copy is larger). */
#define SNRH_SCRATCH_MAP(name, value_type)                                                                        \
	struct {                                                                                            \
		__uint(type, BPF_MAP_TYPE_ARRAY);                                                           \
		__uint(max_entries, 1);                                                                     \
		__type(key, u32);                                                                           \
		__type(value, value_type);                                                                      \
	} name SEC(".maps")

static __always_inline void *snrh_scratch(void *map)
{
	u32 cpu = bpf_get_smp_processor_id();
	return bpf_map_lookup_elem(map, &cpu);
}

#endif
