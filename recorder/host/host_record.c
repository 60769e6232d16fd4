/*
 * host_record.c: the loader of `snr host record`, libbpf-tools style:
 * open the three skeletons (offcpu, oncpu, buckets) -> set their rodata
 * (target tgid, off-CPU threshold) -> load -> attach (raw tracepoints, one
 * cpu-clock perf event per CPU, a uprobe/uretprobe pair per runtime API,
 * as uprobe_multi links per library on Linux 6.6+) ->
 * poll the ring buffers until the process exits, -d runs out, or SIGINT /
 * SIGTERM -> read the stack maps and per-thread totals -> symbolize ->
 * write the .snrh. Every exit path goes through one cleanup label that
 * destroys the skeletons and closes the perf events, so no probe outlives
 * the command.
 *
 * A command it starts also gets libsnr_cupti.so as CUDA_INJECTION64_PATH
 * (when built, and unless the caller set that variable) with
 * SNR_CUPTI_OUTPUT pointing at a scratch file: a CUDA program's driver
 * loads the library, which writes its activity records there at exit, and
 * they are merged into the host trace. Other programs never read the
 * variables.
 */
#include "host_record.h"

#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <linux/perf_event.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/ptrace.h>
#include <sys/stat.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "buckets.skel.h"
#include "detach.h"
#include "host.h"
#include "host_sym.h"
#include "lib/snr_host_trace.h"
#include "lib/snr_chunkfile.h"
#include "lib/snr_util.h"
#include "load_parallel.h"
#include "offcpu.skel.h"
#include "oncpu.skel.h"
#include "phases.h"
#include "progress.h"
#include "stack_map.h"
#include "uprobe_multi.h"

#define POLL_MS 50      /* how often the rings are drained (and the process checked) */
#define SNAPSHOT_MS 200 /* how often /proc/PID/maps is re-read */

static volatile sig_atomic_t stop_signal;

static void on_signal(int sig) { stop_signal = sig; }
/* SIGCHLD only interrupts the poll, so that a stopped command is let go at
 * once. */
static void on_child(int sig) { (void)sig; }

static int libbpf_quiet(enum libbpf_print_level level, const char *fmt, va_list ap)
{
	if (level == LIBBPF_DEBUG || getenv("SNR_HOST_QUIET_LIBBPF"))
		return 0;
	return vfprintf(stderr, fmt, ap);
}

static uint64_t mono_ns(clockid_t clk)
{
	struct timespec ts;
	clock_gettime(clk, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

/* What the ring buffer callback needs to turn records into trace entries
 * as they are drained: stacks are symbolized (and DWARF stacks unwound)
 * while the process's maps are current. */
struct pending_stack {
	uint32_t tid;
	uint64_t ts;
	int32_t stack; /* trace stack, -1 = none */
};

struct rec_state {
	struct snrh_trace *t;
	struct snrh_symbolizer *sym;
	struct stack_remap *remap;
	int stack_fd[2];   /* the kernel stack map (one, shared): as read for [0] offcpu, [1] oncpu */
	struct snrh_stack_loss stack_loss; /* stack ids taken and lost (stack_map.h) */
	SNRH_VEC(struct pending_stack) switch_stacks; /* DWARF stacks of switched-out threads, one per tid */
	/* user stacks by their pcs: open addressing over trace stack + 1 */
	int32_t *ustack_hash;
	size_t ustack_hash_cap, nustacks;
	uint64_t *pcs;
	/* what the stack copies cost */
	uint64_t ustack_copies, ustack_bytes, ustack_frames, ustack_empty;
	/* threads whose stack reach is set in the stack_reach map (host_bpf.h):
	 * open addressing over tids, tid 0 = empty */
	int reach_fd;
	uint64_t stack_bytes; /* --stack-bytes */
	struct reach {
		uint32_t tid;
		uint64_t reach;
	} *reach_tids;
	uint64_t reach_learned, reach_dropped;
};

#define REACH_SLOTS 32768 /* twice the maps' entries */
#define REACH_MARGIN 256  /* bytes copied above the highest word an unwind read */

/* The slot of tid in st->reach_tids: its own, or the empty one it would take. */
static struct reach *reach_slot(struct rec_state *st, uint32_t tid)
{
	for (uint32_t i = (tid * 2654435761u) % REACH_SLOTS;; i = (i + 1) % REACH_SLOTS)
		if (st->reach_tids[i].tid == tid || !st->reach_tids[i].tid)
			return &st->reach_tids[i];
}

/* After an unwind of tid's copy: a thread unwound to its outermost frame
 * for the first time gets its reach set, so later copies stop there; one
 * whose unwind needed a word above its reach loses it (full copies again)
 * and may learn it anew. A copy cut short by --stack-bytes is not the
 * reach's doing. */
static void learn_reach(struct rec_state *st, uint32_t tid, uint64_t sp, const struct snrh_unwind_end *end)
{
	if (!st->reach_tids)
		return;
	struct reach *slot = reach_slot(st, tid);
	/* Only when the reach cut this copy and the word missed lies above it
	 * within what a full copy holds (a read far above, from a bogus CFA,
	 * fails on a full copy too). */
	bool cut = slot->tid == tid && slot->reach > sp && slot->reach - sp < st->stack_bytes;
	if (cut && end->ran_out && end->ran_out + 8 > slot->reach && end->ran_out < sp + st->stack_bytes) {
		bpf_map_delete_elem(st->reach_fd, &tid);
		/* backward-shift deletion keeps the probe chains whole */
		uint32_t i = (uint32_t)(slot - st->reach_tids);
		slot->tid = 0;
		for (uint32_t j = (i + 1) % REACH_SLOTS; st->reach_tids[j].tid; j = (j + 1) % REACH_SLOTS) {
			struct reach r = st->reach_tids[j];
			st->reach_tids[j].tid = 0;
			*reach_slot(st, r.tid) = r;
		}
		st->reach_dropped++;
	} else if (slot->tid != tid && end->outermost && st->reach_learned - st->reach_dropped < REACH_SLOTS / 2) {
		uint64_t reach = end->outermost + REACH_MARGIN;
		if (bpf_map_update_elem(st->reach_fd, &tid, &reach, BPF_ANY) == 0) {
			*slot = (struct reach){tid, reach};
			st->reach_learned++;
		}
	}
}

static uint64_t hash_pcs(const uint64_t *pcs, int n)
{
	uint64_t h = 1469598103934665603ull ^ (uint64_t)n;
	for (int i = 0; i < n; i++)
		h = (h ^ pcs[i]) * 1099511628211ull;
	return h;
}

static int same_stack(const struct snrh_stack *s, const uint64_t *pcs, int n)
{
	if (s->kernel || s->nframes != (uint32_t)n)
		return 0;
	for (int i = 0; i < n; i++)
		if (s->frames[i].addr != pcs[i])
			return 0;
	return 1;
}

/* The trace stack for a user stack's pcs (leaf first; the first exact,
 * the rest return addresses), symbolized the first time it is seen. */
static int32_t intern_user_stack(struct rec_state *st, const uint64_t *pcs, int n)
{
	if (n <= 0)
		return -1;
	if (st->nustacks * 2 >= st->ustack_hash_cap) {
		size_t cap = st->ustack_hash_cap ? st->ustack_hash_cap * 2 : 1024;
		int32_t *h = snr_xcalloc(cap, sizeof(*h));
		for (size_t i = 0; i < st->ustack_hash_cap; i++) {
			if (!st->ustack_hash[i])
				continue;
			const struct snrh_stack *s = &st->t->stacks.v[st->ustack_hash[i] - 1];
			uint64_t a[SNRH_MAX_UNWIND];
			for (uint32_t f = 0; f < s->nframes; f++)
				a[f] = s->frames[f].addr;
			size_t j = hash_pcs(a, (int)s->nframes) & (cap - 1);
			while (h[j])
				j = (j + 1) & (cap - 1);
			h[j] = st->ustack_hash[i];
		}
		free(st->ustack_hash);
		st->ustack_hash = h;
		st->ustack_hash_cap = cap;
	}
	size_t j = hash_pcs(pcs, n) & (st->ustack_hash_cap - 1);
	while (st->ustack_hash[j]) {
		if (same_stack(&st->t->stacks.v[st->ustack_hash[j] - 1], pcs, n))
			return st->ustack_hash[j] - 1;
		j = (j + 1) & (st->ustack_hash_cap - 1);
	}
	snrh_sym_cover(st->sym, pcs, n);
	struct snrh_stack s = {0, 0, snr_xcalloc((size_t)n, sizeof(struct snrh_frame))};
	for (int i = 0; i < n; i++) {
		const char *name = NULL, *module = NULL;
		uint64_t off = 0;
		snrh_sym_user(st->sym, pcs[i], i > 0, &name, &module, &off);
		s.frames[s.nframes++] = (struct snrh_frame){pcs[i], name ? snrh_intern(st->t, name) : 0,
							    module ? snrh_intern(st->t, module) : 0, off};
	}
	SNRH_PUSH(st->t->stacks, s);
	/* A stack with a frame outside every module is not kept for reuse: the
	 * next one with the same pcs is named again once the maps have it. */
	bool named = true;
	for (uint32_t f = 0; f < s.nframes; f++)
		named &= s.frames[f].module != 0;
	if (named) {
		st->ustack_hash[j] = (int32_t)st->t->stacks.n;
		st->nustacks++;
	}
	return (int32_t)st->t->stacks.n - 1;
}

/* Unwinds a DWARF record's stack copy (size bytes of record at u). */
static int32_t unwind_stack(struct rec_state *st, uint32_t tid, const struct snrh_ustack *u, size_t have)
{
	size_t head = offsetof(struct snrh_ustack, data);
	if (have < head || u->size > have - head)
		return -1;
	st->ustack_copies++;
	st->ustack_bytes += u->size;
	if (!u->size)
		st->ustack_empty++;
	struct snrh_unwind_end end;
	int n = snrh_sym_unwind(st->sym, tid, u, st->pcs, SNRH_MAX_UNWIND, &end);
	st->ustack_frames += (uint64_t)n;
	learn_reach(st, tid, u->regs[SNRH_UREG_SP], &end);
	return intern_user_stack(st, st->pcs, n);
}

static int32_t take_switch_stack(struct rec_state *st, uint32_t tid, uint64_t ts)
{
	for (size_t i = 0; i < st->switch_stacks.n; i++)
		if (st->switch_stacks.v[i].tid == tid) {
			int32_t idx = st->switch_stacks.v[i].ts == ts ? st->switch_stacks.v[i].stack : -1;
			st->switch_stacks.v[i] = st->switch_stacks.v[--st->switch_stacks.n];
			return idx;
		}
	return -1;
}

static void put_switch_stack(struct rec_state *st, uint32_t tid, uint64_t ts, int32_t stack)
{
	for (size_t i = 0; i < st->switch_stacks.n; i++)
		if (st->switch_stacks.v[i].tid == tid) {
			st->switch_stacks.v[i] = (struct pending_stack){tid, ts, stack};
			return;
		}
	SNRH_PUSH(st->switch_stacks, ((struct pending_stack){tid, ts, stack}));
}

static int32_t remap_stack(struct rec_state *st, int source, int id, int kernel);

/* A kernel stack inside execve: the user registers and stack are still the
 * image being replaced (the tracer's own child before it becomes the
 * command), which the command's maps cannot name. */
static bool in_execve(const struct rec_state *st, int32_t kstack)
{
	if (kstack < 0)
		return false;
	const struct snrh_stack *k = &st->t->stacks.v[kstack];
	for (uint32_t f = 0; f < k->nframes; f++) {
		const char *name = snrh_str(st->t, k->frames[f].sym);
		if (!strcmp(name, "__x64_sys_execve") || !strcmp(name, "__x64_sys_execveat"))
			return true;
	}
	return false;
}

static int handle_event(void *ctx, void *data, size_t size)
{
	struct rec_state *st = ctx;
	unsigned kind = *(unsigned *)data;
	if (kind == SNRH_EV_OFFCPU && size >= sizeof(struct snrh_offcpu_event)) {
		const struct snrh_offcpu_event *e = data;
		/* ustack -1: --unwind dwarf, the stack came as its own record
		 * (the kernel's error codes are other negatives) */
		int32_t ustack = e->ustack != -1 ? remap_stack(st, 0, e->ustack, 0) : take_switch_stack(st, e->tid, e->start_ns);
		int32_t kstack = remap_stack(st, 0, e->kstack, 1);
		struct snrh_offcpu o = {e->tid, e->waker_tid, e->state, e->start_ns, e->end_ns,
					in_execve(st, kstack) ? -1 : ustack, kstack};
		SNRH_PUSH(st->t->offcpu, o);
	} else if ((kind == SNRH_EV_SAMPLE || kind == SNRH_EV_SAMPLE_DWARF) && size >= sizeof(struct snrh_sample_event)) {
		const struct snrh_sample_event *e = data;
		int32_t ustack = kind == SNRH_EV_SAMPLE ? remap_stack(st, 1, e->ustack, 0)
							: unwind_stack(st, e->tid, (const void *)(e + 1), size - sizeof(*e));
		int32_t kstack = remap_stack(st, 1, e->kstack, 1);
		struct snrh_sample s = {e->tid, e->cpu, e->ts_ns, in_execve(st, kstack) ? -1 : ustack, kstack};
		SNRH_PUSH(st->t->samples, s);
	} else if (kind == SNRH_EV_SWITCH_STACK && size >= sizeof(struct snrh_switch_stack_event)) {
		const struct snrh_switch_stack_event *e = data;
		put_switch_stack(st, e->tid, e->ts_ns, unwind_stack(st, e->tid, (const void *)(e + 1), size - sizeof(*e)));
	} else if (kind == SNRH_EV_INTERVAL && size >= sizeof(struct snrh_interval_event)) {
		const struct snrh_interval_event *e = data;
		struct snrh_interval iv = {e->tid, e->probe, e->start_ns, e->end_ns};
		SNRH_PUSH(st->t->intervals, iv);
	} else if (kind == SNRH_EV_MARK) {
		snrh_progress_event(st->t, data, size);
	}
	return 0;
}

/* ---- finding the library a --uprobe names ---- */

static int is_file(const char *p)
{
	struct stat sb;
	return stat(p, &sb) == 0 && S_ISREG(sb.st_mode);
}

static int name_matches(const char *path, const char *lib)
{
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	size_t n = strlen(lib);
	return !strncmp(base, lib, n) && (base[n] == '.' || base[n] == '-' || base[n] == 0);
}

/* `ldd EXE`, started early (ldd_begin) and read when first needed
 * (ldd_output): the shell and the loader it runs take 0.1-0.3 s, spent
 * while the BPF objects load rather than after. */
static struct {
	char *exe, *out;
	FILE *p;
} ldd;

static void ldd_end(void)
{
	if (ldd.p)
		pclose(ldd.p);
	free(ldd.exe);
	free(ldd.out);
	memset(&ldd, 0, sizeof(ldd));
}

static void ldd_begin(const char *exe)
{
	if (ldd.exe && !strcmp(ldd.exe, exe))
		return;
	ldd_end();
	char cmd[4200];
	snprintf(cmd, sizeof(cmd), "ldd '%s' 2>/dev/null", exe);
	ldd.p = popen(cmd, "re");
	ldd.exe = snr_xstrdup(exe);
}

static const char *ldd_output(const char *exe)
{
	ldd_begin(exe);
	if (!ldd.out) {
		struct snr_buf b = {0};
		char chunk[4096];
		size_t got;
		while (ldd.p && (got = fread(chunk, 1, sizeof(chunk), ldd.p)) > 0)
			snr_buf_put(&b, chunk, got);
		if (ldd.p)
			pclose(ldd.p);
		ldd.p = NULL;
		snr_buf_u8(&b, 0);
		ldd.out = (char *)b.p;
	}
	return ldd.out;
}

/* "libcudart" or "libcudart.so.13" or a path -> a file, searching the
 * process's maps, ldd of its executable, then the usual directories. */
static char *resolve_library(const char *lib, int pid, const char *exe)
{
	if (strchr(lib, '/'))
		return is_file(lib) ? realpath(lib, NULL) : NULL;
	char line[4096];
	if (pid > 0) {
		snprintf(line, sizeof(line), "/proc/%d/maps", pid);
		FILE *fp = fopen(line, "r");
		while (fp && fgets(line, sizeof(line), fp)) {
			char *p = strchr(line, '/');
			if (!p)
				continue;
			p[strcspn(p, "\n")] = 0;
			if (name_matches(p, lib)) {
				fclose(fp);
				return snr_xstrdup(p);
			}
		}
		if (fp)
			fclose(fp);
	}
	if (exe && is_file(exe)) {
		if (name_matches(exe, lib))
			return realpath(exe, NULL);
		const char *ldd_out = ldd_output(exe);
		FILE *fp = fmemopen((void *)ldd_out, strlen(ldd_out) + 1, "r");
		char *found = NULL;
		while (fp && fgets(line, sizeof(line), fp)) {
			char name[1024], path[2048];
			if (!found && sscanf(line, " %1023s => %2047s", name, path) == 2 && path[0] == '/' &&
			    name_matches(name, lib))
				found = snr_xstrdup(path);
		}
		if (fp)
			fclose(fp);
		if (found)
			return found;
	}
	const char *dirs[] = {getenv("LD_LIBRARY_PATH"), "/usr/local/cuda/lib64", "/usr/lib/x86_64-linux-gnu",
			      "/lib/x86_64-linux-gnu", "/usr/local/lib", "/usr/lib"};
	for (size_t d = 0; d < sizeof(dirs) / sizeof(dirs[0]); d++) {
		if (!dirs[d])
			continue;
		char *copy = snr_xstrdup(dirs[d]), *save = NULL;
		for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
			const char *suffixes[] = {".so", ""};
			for (int k = 0; k < 2; k++) {
				snprintf(line, sizeof(line), "%s/%s%s", dir, lib, suffixes[k]);
				if (is_file(line) && strstr(line, ".so")) {
					free(copy);
					return realpath(line, NULL);
				}
			}
		}
		free(copy);
	}
	return NULL;
}

/* The executable of argv[0], searching PATH like execvp. */
static char *find_exe(const char *argv0)
{
	if (strchr(argv0, '/'))
		return snr_xstrdup(argv0);
	const char *path = getenv("PATH");
	char *copy = snr_xstrdup(path ? path : "/usr/bin:/bin"), *save = NULL, buf[4096];
	for (char *dir = strtok_r(copy, ":", &save); dir; dir = strtok_r(NULL, ":", &save)) {
		snprintf(buf, sizeof(buf), "%s/%s", dir, argv0);
		if (access(buf, X_OK) == 0) {
			free(copy);
			return snr_xstrdup(buf);
		}
	}
	free(copy);
	return NULL;
}

/* libsnr_cupti.so: $SNR_CUPTI_LIB, else the build tree's, else the
 * installed one (paths from meson); NULL when none exists. */
static char *find_cupti_lib(bool *bad_env)
{
	const char *env = getenv("SNR_CUPTI_LIB");
	*bad_env = false;
	if (env) {
		if (is_file(env))
			return realpath(env, NULL);
		*bad_env = true;
		return NULL;
	}
#ifdef SNR_CUPTI_LIB_BUILD
	if (is_file(SNR_CUPTI_LIB_BUILD))
		return snr_xstrdup(SNR_CUPTI_LIB_BUILD);
#endif
#ifdef SNR_CUPTI_LIB_INSTALL
	if (is_file(SNR_CUPTI_LIB_INSTALL))
		return snr_xstrdup(SNR_CUPTI_LIB_INSTALL);
#endif
	return NULL;
}

static const struct snrh_uprobe_spec presets[] = {
	{"libcudart", "cudaLaunchKernel", "H:CTRL", true},
	{"libcudart", "cudaGraphLaunch", "H:CTRL", true},
	{"libcudart", "cudaMemcpy", "H:CTRL", true},
	{"libcudart", "cudaMemcpyAsync", "H:CTRL", true},
	{"libcudart", "cudaStreamSynchronize", "H:WAIT_DEV", true},
	{"libcudart", "cudaDeviceSynchronize", "H:WAIT_DEV", true},
	{"libcudart", "cudaEventSynchronize", "H:WAIT_DEV", true},
	{"libta1rt", "ta1rt_open", "H:CTRL", true},
	{"libta1rt", "ta1rt_load", "H:CTRL", true},
	{"libta1rt", "ta1rt_launch", "H:CTRL", true},
	{"libta1rt", "ta1rt_wait", "H:WAIT_DEV", true},
	/* the device thread's work: on/off-device (analyzer/host_device.c) */
	{"libta1rt", "ta1rt_device_upload", "G:XFER", true},
	{"libta1rt", "ta1rt_device_run", "G:COMP", true},
};

/* Whether hash maps may be created without preallocation for tracing
 * programs: from Linux 6.1 (bpf_mem_alloc) they allocate safely in any
 * context; older verifiers refuse non-preallocated hash maps in tracepoint
 * and perf_event programs. */
static bool hash_maps_lazy(void)
{
	struct utsname u;
	unsigned major = 0, minor = 0;
	if (uname(&u) || sscanf(u.release, "%u.%u", &major, &minor) != 2)
		return false;
	return major > 6 || (major == 6 && minor >= 1);
}

/* ---- stacks ---- */

struct stack_remap {
	int32_t idx[2][SNRH_STACK_MAP_MAX]; /* [source][kernel id] -> trace stack + 1 */
};

/* A stack map id (frame-pointer user stacks, kernel stacks) -> a trace
 * stack, read from the map and symbolized the first time. */
static int32_t remap_stack(struct rec_state *st, int source, int id, int kernel)
{
	snrh_stack_loss_note(&st->stack_loss, id, !kernel);
	if (id < 0 || id >= SNRH_STACK_MAP_MAX)
		return -1;
	if (st->remap->idx[source][id])
		return st->remap->idx[source][id] - 1;
	uint64_t ips[SNRH_MAX_STACK_DEPTH] = {0};
	uint32_t key = (uint32_t)id;
	if (bpf_map_lookup_elem(st->stack_fd[source], &key, ips))
		return -1;
	int n = 0;
	while (n < SNRH_MAX_STACK_DEPTH && ips[n])
		n++;
	int32_t idx;
	if (!kernel) {
		idx = intern_user_stack(st, ips, n);
	} else {
		struct snrh_stack s = {1, 0, snr_xcalloc(SNRH_MAX_STACK_DEPTH, sizeof(struct snrh_frame))};
		for (int i = 0; i < n; i++) {
			const char *name = NULL;
			uint64_t off = 0;
			snrh_sym_kernel(st->sym, ips[i], &name, &off);
			/* The tracer's own frames (bpf_prog_*, bpf_trace_run4, and
			 * __traceiter_* when a tracepoint has several probes) sit on top. */
			if (!s.nframes && name &&
			    (!strncmp(name, "bpf_", 4) || !strncmp(name, "__bpf_", 6) || !strncmp(name, "__traceiter_", 12)))
				continue;
			s.frames[s.nframes++] = (struct snrh_frame){ips[i], name ? snrh_intern(st->t, name) : 0,
								    snrh_intern(st->t, "[kernel]"), off};
		}
		SNRH_PUSH(st->t->stacks, s);
		idx = (int32_t)st->t->stacks.n - 1;
	}
	st->remap->idx[source][id] = idx + 1;
	return idx;
}

/* The tracer's own BPF programs in the kernel's symbol table: kallsyms was
 * read beside their loads, so it may not list them, and a kernel stack's
 * top frames (the running program) would take the name of whatever symbol
 * lies below their JIT images. Each function's image is added as
 * bpf_prog_NAME, which the stack filter drops as the tracer's own. */
static void add_bpf_ksyms(struct snrh_symbolizer *sym, struct bpf_object *const *objs, unsigned nobjs)
{
	size_t n = 0, cap = 0;
	uint64_t *addr = NULL, *size = NULL;
	char **names = NULL;
	for (unsigned o = 0; o < nobjs; o++) {
		struct bpf_program *prog;
		bpf_object__for_each_program(prog, objs[o]) {
			int fd = bpf_program__fd(prog);
			struct bpf_prog_info info;
			uint32_t len = sizeof(info);
			memset(&info, 0, sizeof(info));
			if (fd < 0 || bpf_obj_get_info_by_fd(fd, &info, &len) || !info.nr_jited_ksyms)
				continue;
			uint32_t k = info.nr_jited_ksyms;
			uint64_t *ks = snr_xcalloc(k, sizeof(*ks));
			uint32_t *lens = snr_xcalloc(k, sizeof(*lens));
			memset(&info, 0, sizeof(info));
			info.nr_jited_ksyms = k;
			info.jited_ksyms = (uint64_t)(uintptr_t)ks;
			info.nr_jited_func_lens = k;
			info.jited_func_lens = (uint64_t)(uintptr_t)lens;
			len = sizeof(info);
			if (!bpf_obj_get_info_by_fd(fd, &info, &len))
				for (uint32_t i = 0; i < k && i < info.nr_jited_ksyms; i++) {
					if (n == cap) {
						cap = cap ? cap * 2 : 16;
						addr = snr_xrealloc(addr, cap * sizeof(*addr));
						size = snr_xrealloc(size, cap * sizeof(*size));
						names = snr_xrealloc(names, cap * sizeof(*names));
					}
					char name[160];
					snprintf(name, sizeof(name), "bpf_prog_%s", bpf_program__name(prog));
					addr[n] = ks[i];
					size[n] = lens[i];
					names[n++] = snr_xstrdup(name);
				}
			free(ks);
			free(lens);
		}
	}
	snrh_sym_add_kernel(sym, n, addr, size, (const char *const *)names);
	for (size_t i = 0; i < n; i++)
		free(names[i]);
	free(names);
	free(addr);
	free(size);
}

static int open_perf_events(int hz, int **fds_out, int *nfds_out)
{
	int ncpu = libbpf_num_possible_cpus();
	if (ncpu <= 0)
		return -1;
	int *fds = snr_xcalloc((size_t)ncpu, sizeof(int));
	int n = 0;
	for (int cpu = 0; cpu < ncpu; cpu++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.size = sizeof(attr),
			.config = PERF_COUNT_SW_CPU_CLOCK,
			/* A fixed period, not a frequency: every sample then stands for
			 * exactly 1/HZ s of CPU time (in frequency mode the kernel
			 * retunes the period as it goes, and samples x 1/HZ drifts
			 * from the thread's exact on-CPU time). */
			.sample_period = 1000000000ull / (unsigned long long)hz,
		};
		int fd = (int)syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
		if (fd < 0) {
			if (errno == ENODEV) /* offline CPU */
				continue;
			for (int i = 0; i < n; i++)
				close(fds[i]);
			free(fds);
			return -1;
		}
		fds[n++] = fd;
	}
	*fds_out = fds;
	*nfds_out = n;
	return 0;
}

/* The kernel's symbol table (0.03-0.04 s of system time to read, 0.1 s
 * and more of wall time on a busy machine) is read in a thread while the
 * BPF objects load. */
static void *load_kernel_syms(void *sym)
{
	snrh_sym_load_kernel(sym);
	return NULL;
}

static void fail(const char *fmt, ...) SNR_PRINTF(1, 2);
static void fail(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	fprintf(stderr, "snr host record: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

/* Reaps the command or deals with its ptrace stops (the tracer seizes a
 * command it starts, with only PTRACE_O_TRACEEXIT: a process that exits
 * between two reads of its maps would leave its libraries unnamed and its
 * stacks not unwound). At the exit stop its memory still exists: the maps
 * are read and it is let go.
 * A signal-delivery stop passes the signal on; a group stop is listened
 * through. flags: WNOHANG or 0. Returns true once it has exited (status
 * set). */
static bool reap_command(struct rec_state *st, struct ring_buffer *rb, pid_t child, int *status, int flags)
{
	for (;;) {
		int s;
		pid_t r = waitpid(child, &s, flags | __WALL);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != child)
			return r < 0; /* gone (ECHILD) counts as exited */
		if (WIFEXITED(s) || WIFSIGNALED(s)) {
			*status = s;
			return true;
		}
		if (!WIFSTOPPED(s))
			continue;
		int event = (unsigned)s >> 16;
		if (event == PTRACE_EVENT_EXIT) {
			/* Held only while its maps are read: unwinding and naming
			 * need the modules, not the process. */
			snrh_sym_snapshot(st->sym);
			ptrace(PTRACE_DETACH, child, 0, 0);
			ring_buffer__consume(rb);
		} else if (event == PTRACE_EVENT_STOP) {
			ptrace(PTRACE_LISTEN, child, 0, 0);
		} else {
			ptrace(PTRACE_CONT, child, 0, WSTOPSIG(s));
		}
	}
}

int snrh_record(const struct snrh_record_opts *o)
{
	struct offcpu_bpf *off_skel = NULL;
	struct oncpu_bpf *on_skel = NULL;
	struct buckets_bpf *bk_skel = NULL;
	struct snrh_progress *progress = NULL;
	struct ring_buffer *rb = NULL;
	struct bpf_link **links = NULL, **perf_links = NULL;
	struct snrh_detach *detach = NULL;
	int *perf_fds = NULL, nperf = 0, nlinks = 0, *link_fds = NULL, nlink_fds = 0;
	bool multi = snrh_uprobe_multi_supported();
	struct rec_state st;
	struct snrh_trace trace;
	struct snrh_writer writer;
	bool writer_open = false;
	char err[700], errbuf[700];
	char *exe = NULL, *cupti_lib = NULL, cupti_out[64] = "";
	int rc = 1, pid = o->pid, child = 0, go_pipe[2] = {-1, -1}, exec_pipe[2] = {-1, -1}, child_status = -1;
	struct sigaction sa_old_int, sa_old_term, sa_old_chld;
	bool signals_set = false, ksyms_started = false;
	pthread_t ksyms_thread;
	struct snrh_phases ph;
	snrh_phases_init(&ph);
	memset(&st, 0, sizeof(st));
	snrh_trace_init(&trace);
	st.t = &trace;

	if (geteuid() != 0) {
		fail("needs root (CAP_BPF and CAP_PERFMON) to load eBPF programs: run it with sudo");
		goto cleanup;
	}
	if (access("/sys/kernel/btf/vmlinux", R_OK) != 0) {
		fail("this kernel has no BTF (/sys/kernel/btf/vmlinux): the CO-RE programs cannot be relocated; "
		     "use a kernel built with CONFIG_DEBUG_INFO_BTF=y");
		goto cleanup;
	}
	if (o->pid > 0 && kill(o->pid, 0) != 0) {
		fail("no process %d", o->pid);
		goto cleanup;
	}
	libbpf_set_print(libbpf_quiet);

	if (o->cmd) {
		exe = find_exe(o->cmd[0]);
		if (!exe) {
			fail("%s: command not found", o->cmd[0]);
			goto cleanup;
		}
		if (o->cupti && getenv("CUDA_INJECTION64_PATH")) {
			if (!o->quiet)
				fprintf(stderr, "snr host record: CUDA_INJECTION64_PATH is set (%s): left as it is, no CUPTI "
						"records merged\n",
					getenv("CUDA_INJECTION64_PATH"));
		} else if (o->cupti) {
			bool bad_env;
			cupti_lib = find_cupti_lib(&bad_env);
			if (bad_env) {
				fail("SNR_CUPTI_LIB=%s: no such file (the path of libsnr_cupti.so)", getenv("SNR_CUPTI_LIB"));
				goto cleanup;
			}
			if (cupti_lib) {
				snprintf(cupti_out, sizeof(cupti_out), "/tmp/snr-cupti-XXXXXX.snrh");
				int fd = mkstemps(cupti_out, 5);
				if (fd < 0) {
					fail("cannot create a scratch file in /tmp for CUPTI records: %s", strerror(errno));
					cupti_out[0] = 0;
					goto cleanup;
				}
				close(fd);
			}
		}
		if (pipe(go_pipe) || pipe2(exec_pipe, O_CLOEXEC)) {
			fail("pipe: %s", strerror(errno));
			goto cleanup;
		}
		pid_t parent = getpid();
		child = fork();
		if (child < 0) {
			fail("fork: %s", strerror(errno));
			goto cleanup;
		}
		if (child == 0) {
			/* Die with the tracer (a SIGKILLed tracer cannot pass a signal on);
			 * wait until every probe is attached, then become the command.
			 * exec closes exec_pipe, which tells the tracer it happened. */
			char go;
			prctl(PR_SET_PDEATHSIG, SIGKILL);
			if (getppid() != parent)
				_exit(127);
			close(go_pipe[1]);
			close(exec_pipe[0]);
			if (read(go_pipe[0], &go, 1) != 1)
				_exit(127);
			close(go_pipe[0]);
			if (cupti_lib) {
				setenv("CUDA_INJECTION64_PATH", cupti_lib, 1);
				setenv("SNR_CUPTI_OUTPUT", cupti_out, 1);
			}
			execvp(o->cmd[0], o->cmd);
			fprintf(stderr, "snr host record: %s: %s\n", o->cmd[0], strerror(errno));
			_exit(127);
		}
		close(go_pipe[0]);
		go_pipe[0] = -1;
		close(exec_pipe[1]);
		exec_pipe[1] = -1;
		fcntl(go_pipe[1], F_SETFD, FD_CLOEXEC); /* not ldd's */
		pid = child;
		bool by_name = o->presets; /* a library named, not a path: ldd may find it */
		for (unsigned i = 0; i < o->nuprobes; i++)
			by_name |= !strchr(o->uprobes[i].lib, '/');
		if (by_name && is_file(exe))
			ldd_begin(exe);
		/* Stopped at its exit (see reap_command); not being able to (a
		 * ptrace_scope of 3) only loses that last read of the maps. */
		if (ptrace(PTRACE_SEIZE, child, 0, PTRACE_O_TRACEEXIT | PTRACE_O_EXITKILL) != 0 && !o->quiet)
			fprintf(stderr, "snr host record: cannot stop the command at its exit (ptrace: %s): a process "
					"that exits within %d ms of loading a library leaves it unnamed\n",
				strerror(errno), POLL_MS);
	} else {
		char p[64];
		snprintf(p, sizeof(p), "/proc/%d/exe", pid);
		exe = realpath(p, NULL);
	}

	st.sym = snrh_sym_new(pid);
	if (!st.sym) {
		fail("cannot set up libdw for symbols and unwinding: %s", dwfl_errmsg(-1));
		goto cleanup;
	}
	ksyms_started = pthread_create(&ksyms_thread, NULL, load_kernel_syms, st.sym) == 0;
	snrh_phase(&ph, "fork");
	/* open */
	off_skel = offcpu_bpf__open();
	on_skel = oncpu_bpf__open();
	bk_skel = buckets_bpf__open();
	if (!off_skel || !on_skel || !bk_skel) {
		fail("cannot open the BPF programs: %s", strerror(errno));
		goto cleanup;
	}
	/* configure */
	off_skel->rodata->target_tgid = pid;
	off_skel->rodata->min_offcpu_ns = (unsigned long long)o->min_offcpu_us * 1000ull;
	on_skel->rodata->target_tgid = pid;
	off_skel->rodata->dwarf_stacks = on_skel->rodata->dwarf_stacks = !o->unwind_fp;
	off_skel->rodata->stack_bytes = on_skel->rodata->stack_bytes = o->stack_bytes;
	{
		int ncpu = libbpf_num_possible_cpus();
		if (ncpu <= 0 || bpf_map__set_max_entries(off_skel->maps.scratch, (unsigned)ncpu) ||
		    bpf_map__set_max_entries(on_skel->maps.scratch, (unsigned)ncpu)) {
			fail("cannot size the stack copy buffers for %d CPUs", ncpu);
			goto cleanup;
		}
	}
	bk_skel->rodata->target_tgid = pid;
	bk_skel->rodata->trace_io_syscalls = o->io_syscalls;
	if (hash_maps_lazy()) {
		/* per-thread hash maps allocate their entries as threads appear
		 * rather than all 65,536 at load: preallocating them was the
		 * largest part of the fixed start (bench/host_startup.sh) */
		struct bpf_map *lazy[] = {off_skel->maps.starts, off_skel->maps.wakers, off_skel->maps.totals,
					  off_skel->maps.stack_reach, off_skel->maps.uret_slots, bk_skel->maps.open_calls,
					  bk_skel->maps.open_syscalls};
		for (size_t i = 0; i < sizeof(lazy) / sizeof(lazy[0]); i++)
			bpf_map__set_map_flags(lazy[i], bpf_map__map_flags(lazy[i]) | BPF_F_NO_PREALLOC);
	}
	snrh_phase(&ph, "open");
	if (multi) {
		bpf_program__set_expected_attach_type(bk_skel->progs.api_enter,
						      (enum bpf_attach_type)SNRH_BPF_TRACE_UPROBE_MULTI);
		bpf_program__set_expected_attach_type(bk_skel->progs.api_exit,
						      (enum bpf_attach_type)SNRH_BPF_TRACE_UPROBE_MULTI);
	}
	/* load: the maps the three share (host_bpf.h) are created first, as
	 * offcpu defines them; then the three load side by side */
	{
		struct bpf_map *reach[] = {on_skel->maps.stack_reach, bk_skel->maps.stack_reach};
		struct bpf_map *uret[] = {on_skel->maps.uret_slots, bk_skel->maps.uret_slots};
		struct bpf_map *gate[] = {on_skel->maps.exec_gate, bk_skel->maps.exec_gate};
		struct bpf_object_skeleton *skels[] = {off_skel->skeleton, on_skel->skeleton, bk_skel->skeleton};
		if (snrh_stack_map_share(off_skel->maps.stacks, on_skel->maps.stacks, o->stack_map) ||
		    snrh_share_map(off_skel->maps.stack_reach, reach, 2) ||
		    snrh_share_map(off_skel->maps.uret_slots, uret, 2) ||
		    snrh_share_map(off_skel->maps.exec_gate, gate, 2)) {
			fail("cannot create the maps the BPF programs share: %s", strerror(errno));
			goto cleanup;
		}
		if (snrh_load_parallel(skels, 3)) {
			fail("cannot load the BPF programs (%s); the kernel log (dmesg) or SNR_HOST_QUIET_LIBBPF unset "
			     "shows the verifier's reason",
			     strerror(errno));
			goto cleanup;
		}
	}
	snrh_phase(&ph, "load");
	if (snrh_progress_load(o->progress, o->nprogress, o->latency, o->nlatency, pid, &progress, err, sizeof(err)) ||
	    snrh_progress_attach(progress, exe, &trace, err, sizeof(err))) {
		fail("%s", err);
		goto cleanup;
	}
	/* a command not yet exec'd is still the tracer's child (host_bpf.h) */
	if (child) {
		uint32_t k = 0, closed = 1;
		bpf_map_update_elem(bpf_map__fd(off_skel->maps.exec_gate), &k, &closed, BPF_ANY);
	}
	snrh_phase(&ph, "progress");
	/* attach: scheduler and I/O system calls */
	if (offcpu_bpf__attach(off_skel)) {
		fail("cannot attach to sched_switch/sched_waking: %s", strerror(errno));
		goto cleanup;
	}
	if (o->io_syscalls) {
		bk_skel->links.sys_enter = bpf_program__attach(bk_skel->progs.sys_enter);
		bk_skel->links.sys_exit = bpf_program__attach(bk_skel->progs.sys_exit);
		if (!bk_skel->links.sys_enter || !bk_skel->links.sys_exit) {
			fail("cannot attach to sys_enter/sys_exit: %s", strerror(errno));
			goto cleanup;
		}
	}
	/* attach: on-CPU sampling */
	if (o->hz) {
		if (open_perf_events((int)o->hz, &perf_fds, &nperf)) {
			fail("perf_event_open(cpu-clock, %u Hz): %s", o->hz, strerror(errno));
			goto cleanup;
		}
		perf_links = snr_xcalloc((size_t)nperf + 1, sizeof(*perf_links));
		for (int i = 0; i < nperf; i++) {
			perf_links[i] = bpf_program__attach_perf_event(on_skel->progs.do_sample, perf_fds[i]);
			if (!perf_links[i]) {
				fail("cannot attach the sampler to a perf event: %s", strerror(errno));
				goto cleanup;
			}
		}
	}
	snrh_phase(&ph, "attach sched/perf");
	/* attach: runtime API uprobes, presets first, then --uprobe; on Linux
	 * 6.6+ one uprobe_multi link per library for the entries and one for
	 * the returns (uprobe_multi.h) */
	{
		unsigned npre = o->presets ? sizeof(presets) / sizeof(presets[0]) : 0;
		unsigned total = npre + o->nuprobes;
		links = snr_xcalloc(2 * (size_t)total + 1, sizeof(*links));
		link_fds = snr_xcalloc(2 * (size_t)total + 1, sizeof(*link_fds));
		uint64_t *offsets = snr_xcalloc((size_t)total + 1, sizeof(*offsets));
		uint64_t *cookies = snr_xcalloc((size_t)total + 1, sizeof(*cookies));
		uint64_t *found = snr_xcalloc((size_t)total + 1, sizeof(*found)); /* by trace probe */
		for (unsigned i = 0; i < total; i++) {
			const struct snrh_uprobe_spec *u = i < npre ? &presets[i] : &o->uprobes[i - npre];
			char *path = resolve_library(u->lib, o->cmd ? 0 : pid, exe);
			if (!path) {
				if (u->optional)
					continue;
				fail("--uprobe %s:%s: cannot find library '%s' (give a path)", u->lib, u->symbol, u->lib);
				free(offsets);
				free(cookies);
				free(found);
				goto cleanup;
			}
			uint32_t id = (uint32_t)trace.probes.n;
			if (multi) {
				uint64_t off;
				if (snrh_func_offset(path, u->symbol, &off, err, sizeof(err))) {
					free(path);
					if (u->optional)
						continue;
					fail("--uprobe %s:%s: cannot attach: %s", u->lib, u->symbol, err);
					free(offsets);
					free(cookies);
					free(found);
					goto cleanup;
				}
				found[trace.probes.n] = off;
				struct snrh_probe p = {id, path, snr_xstrdup(u->symbol), snr_xstrdup(u->bucket)};
				SNRH_PUSH(trace.probes, p);
				continue;
			}
			for (int ret = 0; ret < 2; ret++) {
				LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = u->symbol, .retprobe = ret != 0,
					    .bpf_cookie = id);
				struct bpf_link *l = bpf_program__attach_uprobe_opts(
					ret ? bk_skel->progs.api_exit : bk_skel->progs.api_enter, -1, path, 0, &uo);
				if (!l) {
					int e = errno;
					if (u->optional && ret == 0)
						break;
					fail("--uprobe %s:%s: cannot attach in %s: %s", u->lib, u->symbol, path,
					     strerror(e));
					free(path);
					goto cleanup;
				}
				links[nlinks++] = l;
				if (ret == 1) {
					struct snrh_probe p = {id, snr_xstrdup(path), snr_xstrdup(u->symbol),
							       snr_xstrdup(u->bucket)};
					SNRH_PUSH(trace.probes, p);
				}
			}
			free(path);
		}
		/* the probes of one library, in the order found, share its links */
		for (size_t i = 0; multi && i < trace.probes.n; i++) {
			const char *path = trace.probes.v[i].lib;
			bool done = false;
			for (size_t j = 0; j < i && !done; j++)
				done = !strcmp(trace.probes.v[j].lib, path);
			if (done)
				continue;
			uint32_t cnt = 0;
			for (size_t j = i; j < trace.probes.n; j++)
				if (!strcmp(trace.probes.v[j].lib, path)) {
					offsets[cnt] = found[j];
					cookies[cnt++] = trace.probes.v[j].id;
				}
			for (int ret = 0; ret < 2; ret++) {
				int fd = snrh_uprobe_multi_attach(
					bpf_program__fd(ret ? bk_skel->progs.api_exit : bk_skel->progs.api_enter), path,
					offsets, cookies, cnt, ret != 0);
				if (fd < 0) {
					fail("cannot attach the %u runtime API %s in %s (uprobe_multi): %s", cnt,
					     ret ? "uretprobes" : "uprobes", path, strerror(-fd));
					free(offsets);
					free(cookies);
					free(found);
					goto cleanup;
				}
				link_fds[nlink_fds++] = fd;
			}
		}
		free(offsets);
		free(cookies);
		free(found);
	}
	snrh_phase(&ph, "attach uprobes");
	rb = ring_buffer__new(bpf_map__fd(off_skel->maps.events), handle_event, &st, NULL);
	if (!rb || ring_buffer__add(rb, bpf_map__fd(on_skel->maps.events), handle_event, &st) ||
	    ring_buffer__add(rb, bpf_map__fd(bk_skel->maps.events), handle_event, &st) ||
	    (progress && ring_buffer__add(rb, snrh_progress_ring_fd(progress), handle_event, &st))) {
		fail("cannot set up the ring buffers: %s", strerror(errno));
		goto cleanup;
	}

	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_signal;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &sa_old_int);
	sigaction(SIGTERM, &sa, &sa_old_term);
	sa.sa_handler = on_child;
	sigaction(SIGCHLD, &sa, &sa_old_chld);
	signals_set = true;

	/* Kernel stacks are named as they are drained: the kernel's symbol
	 * table is read before the command starts, not beside it. */
	snrh_phase(&ph, "ring buffers");
	if (ksyms_started)
		pthread_join(ksyms_thread, NULL);
	ksyms_started = false;
	snrh_sym_load_kernel(st.sym); /* when no thread could do it */
	struct bpf_object *own[] = {off_skel->obj, on_skel->obj, bk_skel->obj};
	add_bpf_ksyms(st.sym, own, 3);
	snrh_phase(&ph, "kallsyms");
	st.remap = snr_xcalloc(1, sizeof(*st.remap));
	st.stack_fd[0] = bpf_map__fd(off_skel->maps.stacks);
	st.stack_fd[1] = bpf_map__fd(on_skel->maps.stacks);
	st.stack_loss.entries = o->stack_map;
	st.reach_fd = bpf_map__fd(off_skel->maps.stack_reach);
	st.stack_bytes = o->stack_bytes;
	if (!o->unwind_fp)
		st.reach_tids = snr_xcalloc(REACH_SLOTS, sizeof(*st.reach_tids));
	st.pcs = snr_xcalloc(SNRH_MAX_UNWIND, sizeof(*st.pcs));
	uint64_t t_start = mono_ns(CLOCK_MONOTONIC), cpu_start = mono_ns(CLOCK_PROCESS_CPUTIME_ID);
	struct utsname un;
	uname(&un);
	json_t *cmdline = json_array();
	for (char **a = o->cmd; a && *a; a++)
		json_array_append_new(cmdline, json_string(*a));
	json_object_set_new(trace.meta, "source", json_string("ebpf"));
	json_object_set_new(trace.meta, "pid", json_integer(pid));
	json_object_set_new(trace.meta, "exe", json_string(exe ? exe : ""));
	json_object_set_new(trace.meta, "command", cmdline);
	json_object_set_new(trace.meta, "kernel", json_string(un.release));
	json_object_set_new(trace.meta, "hz", json_integer(o->hz));
	json_object_set_new(trace.meta, "unwind", json_string(o->unwind_fp ? "fp" : "dwarf"));
	json_object_set_new(trace.meta, "min_offcpu_us", json_integer(o->min_offcpu_us));
	json_object_set_new(trace.meta, "clock", json_string("CLOCK_MONOTONIC"));
	json_object_set_new(trace.meta, "t_start_ns", json_integer((json_int_t)t_start));
	json_object_set_new(trace.meta, "realtime_minus_monotonic_ns",
			    json_integer((json_int_t)(mono_ns(CLOCK_REALTIME) - mono_ns(CLOCK_MONOTONIC))));
	/* The file is written as the recording goes: a killed recorder leaves
	 * everything up to its last drain, read back as truncated. */
	if (snrh_writer_open(&writer, &trace, o->output, err, sizeof(err))) {
		fail("%s", err);
		goto cleanup;
	}
	writer_open = true;
	snrh_phase(&ph, "output open");
	if (child) {
		if (write(go_pipe[1], "g", 1) != 1) {
			fail("cannot start the command: %s", strerror(errno));
			goto cleanup;
		}
		close(go_pipe[1]);
		go_pipe[1] = -1;
		/* Symbols need the command's maps, not the pre-exec copy of ours. */
		char dummy;
		while (read(exec_pipe[0], &dummy, 1) < 0 && errno == EINTR)
			;
	}
	snrh_phase(&ph, "exec");
	snrh_sym_snapshot(st.sym);
	if (!o->quiet)
		fprintf(stderr, "snr host record: tracing pid %d (%u uprobes, %d CPUs sampled at %u Hz); Ctrl-C stops\n",
			pid, (unsigned)trace.probes.n, nperf, o->hz);

	/* poll: the programs submit without waking us (host_bpf.h), so drain the
	 * rings every POLL_MS, or earlier when one is a quarter full. */
	uint64_t deadline = o->duration_s > 0 ? t_start + (uint64_t)(o->duration_s * 1e9) : 0;
	uint64_t next_snapshot = 0;
	int polls = 0;
	for (;;) {
		int err = ring_buffer__poll(rb, POLL_MS);
		if (err >= 0)
			err = ring_buffer__consume(rb);
		polls++;
		if (err < 0 && err != -EINTR) {
			fail("polling the ring buffers: %s", strerror(-err));
			break;
		}
		if (snrh_writer_flush(&writer, &trace, errbuf, sizeof(errbuf))) {
			fail("%s", errbuf);
			goto cleanup;
		}
		if (stop_signal)
			break;
		uint64_t now = mono_ns(CLOCK_MONOTONIC);
		if (deadline && now >= deadline)
			break;
		/* The maps go with the process: keep a fresh copy while it lives. */
		if (now >= next_snapshot) {
			snrh_sym_snapshot(st.sym);
			/* Every poll in the first second: the loader maps the libraries
			 * just after exec, and a short-lived process's maps must be read
			 * before it exits. */
			next_snapshot = now + (now - t_start < 1000000000ull ? POLL_MS : SNAPSHOT_MS) * 1000000ull;
		}
		if (child) {
			if (reap_command(&st, rb, child, &child_status, WNOHANG)) {
				child = 0;
				break;
			}
		} else if (kill(pid, 0) != 0) {
			break;
		}
	}
	uint64_t t_end = mono_ns(CLOCK_MONOTONIC), cpu_tracing = mono_ns(CLOCK_PROCESS_CPUTIME_ID) - cpu_start;
	snrh_phase(&ph, "tracing");
	ring_buffer__consume(rb);
	if (child) {
		/* Pass SIGINT/SIGTERM on (SIGTERM when -d ran out); a command that
		 * ignores it (started in the background with SIGINT ignored) gets
		 * SIGKILL after two seconds. */
		kill(child, stop_signal ? stop_signal : SIGTERM);
		bool gone = false;
		for (int i = 0; i < 200 && !(gone = reap_command(&st, rb, child, &child_status, WNOHANG)); i++)
			usleep(10000);
		if (!gone) {
			kill(child, SIGKILL);
			reap_command(&st, rb, child, &child_status, 0);
		}
		child = 0;
	}

	snrh_phase(&ph, "final drain");
	/* the uprobes are taken down while the rest is read and written */
	detach = snrh_detach_start(links, nlinks, link_fds, nlink_fds);
	nlinks = nlink_fds = 0;
	/* per-thread totals */
	{
		int fd = bpf_map__fd(off_skel->maps.totals);
		uint32_t key, next, *prev = NULL;
		while (bpf_map_get_next_key(fd, prev, &next) == 0) {
			struct snrh_thread_totals tt;
			if (bpf_map_lookup_elem(fd, &next, &tt) == 0) {
				char comm[SNRH_COMM_LEN + 1] = {0};
				memcpy(comm, tt.comm, SNRH_COMM_LEN);
				struct snrh_thread th = {next, snrh_intern(&trace, comm[0] ? comm : "?"), tt.oncpu_ns,
							 {tt.offcpu_ns[0], tt.offcpu_ns[1], tt.offcpu_ns[2], tt.offcpu_ns[3]},
							 tt.switches};
				if (tt.last_in_ns && tt.last_in_ns < t_end)
					th.oncpu_ns += t_end - tt.last_in_ns;
				SNRH_PUSH(trace.threads, th);
			}
			key = next;
			prev = &key;
		}
	}
	json_decref(trace.maps);
	trace.maps = snrh_sym_maps_json(st.sym);

	if (!o->unwind_fp)
		json_object_set_new(
			trace.meta, "stack_copies",
			json_pack("{s:I, s:I, s:I, s:I, s:I, s:I, s:I}", "max_bytes", (json_int_t)o->stack_bytes,
				  "copies", (json_int_t)st.ustack_copies, "bytes", (json_int_t)st.ustack_bytes, "frames",
				  (json_int_t)st.ustack_frames, "empty", (json_int_t)st.ustack_empty, "reach_learned",
				  (json_int_t)st.reach_learned, "reach_dropped", (json_int_t)st.reach_dropped));
	json_object_set_new(trace.meta, "t_end_ns", json_integer((json_int_t)t_end));
	json_object_set_new(trace.meta, "stack_map", snrh_stack_loss_json(&st.stack_loss));
	json_object_set_new(trace.meta, "dropped",
			    json_pack("{s:I, s:I, s:I}", "offcpu", (json_int_t)off_skel->bss->dropped_events, "oncpu",
				      (json_int_t)on_skel->bss->dropped_events, "buckets",
				      (json_int_t)bk_skel->bss->dropped_events));
	if (progress)
		json_object_set_new(trace.meta, "dropped_marks", json_integer((json_int_t)snrh_progress_dropped(progress)));
	json_object_set_new(trace.meta, "repaired_switch_ins", json_integer((json_int_t)off_skel->bss->repaired_switch_ins));
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	json_object_set_new(trace.meta, "tracer",
			    json_pack("{s:f, s:f, s:f, s:I}", "user_s", (double)ru.ru_utime.tv_sec + ru.ru_utime.tv_usec / 1e6,
				      "sys_s", (double)ru.ru_stime.tv_sec + ru.ru_stime.tv_usec / 1e6, "cpu_while_tracing_s",
				      (double)cpu_tracing / 1e9, "polls", (json_int_t)polls));
	json_object_set_new(trace.meta, "cupti_injection", cupti_lib ? json_string(cupti_lib) : json_null());
	/* The injected library wrote its file at the command's exit (not when
	 * the command was killed: atexit handlers do not run then). */
	struct stat cupti_st;
	if (cupti_out[0] && stat(cupti_out, &cupti_st) == 0 && cupti_st.st_size > 0 &&
	    snrh_trace_read(&trace, cupti_out, err, sizeof(err)))
		fprintf(stderr, "snr host record: the CUPTI records are unreadable (%s); the host trace is written "
				"without them\n",
			err);
	if (child_status >= 0)
		json_object_set_new(trace.meta, "exit_status",
				    json_integer(WIFEXITED(child_status) ? WEXITSTATUS(child_status)
									  : 128 + WTERMSIG(child_status)));
	snrh_phase(&ph, "totals/maps");
	writer_open = false;
	if (snrh_writer_close(&writer, &trace, err, sizeof(err))) {
		fail("%s", err);
		goto cleanup;
	}
	snrh_phase(&ph, "write");
	if (!o->quiet)
		fprintf(stderr,
			"snr host record: %.3f s, %zu threads, %zu off-CPU intervals, %zu samples, %zu API/I-O "
			"intervals, %zu CUPTI records -> %s (tracer: %.3f s CPU while tracing, %.3f s in all, %d polls)\n",
			(double)(t_end - t_start) / 1e9, trace.threads.n, trace.offcpu.n, trace.samples.n,
			trace.intervals.n, trace.device.n, o->output, (double)cpu_tracing / 1e9,
			(double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) / 1e6,
			polls);
	rc = 0;

cleanup:
	if (writer_open) /* failed while recording: what was written stays, read as truncated */
		snrh_writer_abandon(&writer);
	if (child > 0) { /* failed before the command ran: it is waiting on the pipe */
		kill(child, SIGKILL);
		waitpid(child, NULL, 0);
	}
	if (go_pipe[0] >= 0)
		close(go_pipe[0]);
	if (go_pipe[1] >= 0)
		close(go_pipe[1]);
	if (exec_pipe[0] >= 0)
		close(exec_pipe[0]);
	if (exec_pipe[1] >= 0)
		close(exec_pipe[1]);
	ring_buffer__free(rb);
	snrh_phase(&ph, "cleanup");
	if (!detach)
		detach = snrh_detach_start(links, nlinks, link_fds, nlink_fds);
	for (int i = 0; perf_links && i < nperf; i++)
		bpf_link__destroy(perf_links[i]);
	for (int i = 0; i < nperf; i++)
		close(perf_fds[i]);
	free(links);
	free(link_fds);
	free(perf_links);
	free(perf_fds);
	snrh_progress_free(progress);
	buckets_bpf__destroy(bk_skel);
	oncpu_bpf__destroy(on_skel);
	offcpu_bpf__destroy(off_skel);
	snrh_phase(&ph, "detach others");
	snrh_detach_wait(detach);
	snrh_phase(&ph, "detach uprobes");
	if (signals_set) {
		sigaction(SIGINT, &sa_old_int, NULL);
		sigaction(SIGTERM, &sa_old_term, NULL);
		sigaction(SIGCHLD, &sa_old_chld, NULL);
	}
	if (ksyms_started)
		pthread_join(ksyms_thread, NULL);
	snrh_sym_free(st.sym);
	free(st.remap);
	free(st.switch_stacks.v);
	free(st.ustack_hash);
	free(st.pcs);
	free(st.reach_tids);
	ldd_end();
	free(exe);
	free(cupti_lib);
	if (cupti_out[0])
		unlink(cupti_out);
	snrh_trace_free(&trace);
	snrh_phase(&ph, "free");
	snrh_phases_print(&ph, stderr);
	return rc;
}
