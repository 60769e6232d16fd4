/*
 * host_record.h: `snr host record`, the eBPF host tracer's loader, and the
 * report over what it writes.
 */
#ifndef SNR_HOST_RECORD_H
#define SNR_HOST_RECORD_H

#include <stdbool.h>

struct snrh_uprobe_spec {
	char *lib, *symbol, *bucket;
	bool optional; /* a preset: skipped quietly when the library is absent */
};

struct snrh_record_opts {
	int pid;             /* -p, or 0 */
	char **cmd;          /* -- CMD ARGS..., NULL-terminated, or NULL */
	double duration_s;   /* 0 = until the process exits or SIGINT/SIGTERM */
	unsigned hz;         /* on-CPU sampling frequency */
	unsigned min_offcpu_us;
	bool io_syscalls;
	bool presets;
	struct snrh_uprobe_spec *uprobes;
	unsigned nuprobes;
	const char *output;
	bool quiet;
	bool unwind_fp;       /* --unwind fp: frame pointers, walked in the kernel */
	unsigned stack_bytes; /* --unwind dwarf: user stack copied per sample and switch */
	unsigned stack_map;   /* --stack-map: entries of the kernel stack map (stack_map.h) */
	bool cupti; /* -- CMD: inject libsnr_cupti.so (CUDA_INJECTION64_PATH) and merge its records */
	const char *const *progress; /* --progress SYM (progress.h) */
	unsigned nprogress;
	const char *const *latency; /* --latency BEGIN:END[:arg] */
	unsigned nlatency;
};

/* Returns 0, or 1 with a message printed. */
int snrh_record(const struct snrh_record_opts *o);

#endif
