/*
 * host.h: the records the host tracer's BPF programs hand to user space
 * (the .bpf.c files here -> host_record.c), and nothing else. The kernel
 * side keeps only thread ids, timestamps (bpf_ktime_get_ns, CLOCK_MONOTONIC)
 * and stack ids; user space reads the stack maps and symbolizes.
 *
 *   offcpu.bpf.c   raw_tp sched_switch / sched_waking -> snrh_offcpu_event,
 *                  per-thread exact on/off-CPU totals (snrh_thread_totals)
 *   oncpu.bpf.c    perf_event (cpu-clock at -F HZ)    -> snrh_sample_event
 *   buckets.bpf.c  uprobe/uretprobe on runtime APIs,
 *                  raw_tp sys_enter/sys_exit for I/O  -> snrh_interval_event
 *   progress.bpf.c uprobe on progress/latency marks    -> snrh_mark_event
 *
 * With DWARF unwinding (--unwind dwarf, the default) the user stack is not
 * walked in the kernel: a sample becomes an snrh_sample_event followed by
 * an snrh_ustack (the thread's user registers and a copy of the top of its
 * user stack), kind SNRH_EV_SAMPLE_DWARF; a switch-out emits an
 * SNRH_EV_SWITCH_STACK (snrh_switch_stack_event + snrh_ustack) whose tid
 * and timestamp match the start of the off-CPU interval it belongs to.
 * User space unwinds them with libdw (host_sym.c).
 */
#ifndef SNR_HOST_H
#define SNR_HOST_H

#define SNRH_COMM_LEN 16
#define SNRH_MAX_STACK_DEPTH 127 /* frames of a stack map entry (kernel stacks, --unwind fp) */
#define SNRH_MAX_UNWIND 512      /* frames a DWARF unwind goes up to */

/* Off-CPU states, from prev_state at switch-out. */
enum snrh_state {
	SNRH_STATE_R = 0, /* preempted while runnable */
	SNRH_STATE_S = 1, /* interruptible sleep (futex, nanosleep, poll) */
	SNRH_STATE_D = 2, /* uninterruptible (disk I/O, some locks) */
	SNRH_STATE_OTHER = 3,
	SNRH_NSTATES = 4,
};

enum snrh_event_kind {
	SNRH_EV_OFFCPU = 1,
	SNRH_EV_SAMPLE = 2,
	SNRH_EV_INTERVAL = 3,
	SNRH_EV_SAMPLE_DWARF = 4, /* snrh_sample_event, then snrh_ustack */
	SNRH_EV_SWITCH_STACK = 5, /* snrh_switch_stack_event, then snrh_ustack */
	SNRH_EV_MARK = 6,         /* snrh_mark_event */
};

/* User registers in DWARF's x86-64 numbering: rax rdx rcx rbx rsi rdi rbp
 * rsp r8..r15, then the return address column (rip). */
#define SNRH_UREGS 17
#define SNRH_UREG_SP 7
#define SNRH_UREG_IP 16
/* The most user stack one record can carry (--stack-bytes), and the slack
 * the BPF side needs after it for a page-sized read at a variable offset. */
#define SNRH_USTACK_MAX 65536
#define SNRH_USTACK_SLACK 4096

struct snrh_ustack {
	unsigned long long regs[SNRH_UREGS];
	unsigned int size; /* bytes copied from regs[SNRH_UREG_SP] upwards */
	unsigned int pad;
	unsigned char data[SNRH_USTACK_MAX + SNRH_USTACK_SLACK]; /* only `size` of them are sent */
};

/* The return addresses a uretprobe replaced with its trampoline, per
 * thread, innermost last: the probed API calls' entries push (stack slot,
 * original return address), their returns pop; a stack copy that holds a
 * slot gets the original back, so unwinding passes through the probed call
 * to its caller (BPF map uret_slots, shared by the three programs). */
#define SNRH_URET_MAX 8
struct snrh_uret {
	unsigned long long slot[SNRH_URET_MAX];
	unsigned long long ra[SNRH_URET_MAX];
	unsigned int n;
	unsigned int pad;
};

struct snrh_switch_stack_event {
	unsigned int kind;
	unsigned int tid;
	unsigned long long ts_ns; /* = the off-CPU interval's start_ns */
};

/* A probe id with this bit set is a system call (number in the low bits),
 * not a uprobe; such intervals belong to H:IO. */
#define SNRH_PROBE_SYSCALL 0x80000000u

struct snrh_offcpu_event {
	unsigned int kind;
	unsigned int tid;
	unsigned int waker_tid; /* 0 = unknown (preempted, or woken before we saw it) */
	unsigned int state;
	unsigned long long start_ns, end_ns;
	int ustack, kstack; /* stack map ids, negative = none */
	char comm[SNRH_COMM_LEN];
};

struct snrh_sample_event {
	unsigned int kind;
	unsigned int tid;
	unsigned long long ts_ns;
	int ustack, kstack;
	unsigned int cpu;
	unsigned int pad;
	char comm[SNRH_COMM_LEN];
};

struct snrh_interval_event {
	unsigned int kind;
	unsigned int tid;
	unsigned long long start_ns, end_ns;
	unsigned int probe; /* uprobe index, or SNRH_PROBE_SYSCALL | nr */
	unsigned int pad;
};

/* One call of a marked function (--progress, --latency): point is the
 * mark's index (the uprobe's cookie), arg the call's first argument. */
struct snrh_mark_event {
	unsigned int kind;
	unsigned int tid;
	unsigned long long ts_ns;
	unsigned int point;
	unsigned int pad;
	unsigned long long arg;
};

/* Exact per-thread scheduler totals, kept in a hash map by tid. */
struct snrh_thread_totals {
	unsigned long long oncpu_ns;
	unsigned long long offcpu_ns[SNRH_NSTATES];
	unsigned long long last_in_ns; /* switch-in time while on CPU, 0 when off */
	unsigned long long switches;
	char comm[SNRH_COMM_LEN];
};

#endif
