/*
 * host.h: the records the host tracer's BPF programs hand to user space
 * (the .bpf.c files here -> host_record.c), and nothing else. The kernel
 * side keeps only thread ids, timestamps (bpf_ktime_get_ns, CLOCK_MONOTONIC)
 * and stack ids; user space reads the stack maps and symbolizes.
 *
 *   offcpu.bpf.c   raw_tp sched_switch / sched_wakeup -> snrh_offcpu_event,
 *                  per-thread exact on/off-CPU totals (snrh_thread_totals)
 *   oncpu.bpf.c    perf_event (cpu-clock at -F HZ)    -> snrh_sample_event
 *   buckets.bpf.c  uprobe/uretprobe on runtime APIs,
 *                  raw_tp sys_enter/sys_exit for I/O  -> snrh_interval_event
 */
#ifndef SNR_HOST_H
#define SNR_HOST_H

#define SNRH_COMM_LEN 16
#define SNRH_MAX_STACK_DEPTH 127

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

/* Exact per-thread scheduler totals, kept in a hash map by tid. */
struct snrh_thread_totals {
	unsigned long long oncpu_ns;
	unsigned long long offcpu_ns[SNRH_NSTATES];
	unsigned long long last_in_ns; /* switch-in time while on CPU, 0 when off */
	unsigned long long switches;
	char comm[SNRH_COMM_LEN];
};

#endif
