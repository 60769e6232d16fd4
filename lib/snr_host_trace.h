/*
 * snr_host_trace.h: the host trace (.snrh), in memory and on disk.
 *
 * One file holds what `snr host record` saw of a process (scheduler
 * intervals, on-CPU samples, API and I/O intervals, symbolized stacks) and
 * what libsnr_cupti.so saw of the GPU (kernels, copies, runtime calls). It
 * reuses snr's chunk container (lib/snr_chunkfile.h), magic "SNRHOST\0",
 * version 2; every chunk is zstd-compressed, integers are LEB128 varints.
 * The recorder writes the file as it goes: META and PROBES first, then at
 * each drain of the ring buffers the strings, stacks and events that are
 * new (so STRINGS, STACKS and the event chunks repeat, each adding to what
 * came before: string and stack indices count across all chunks of the
 * file), and at the end DEVICE, THREADS, MAPS, the final META and END. A
 * version 2 file without END is truncated (the recorder was killed, or the
 * file was cut): everything before the cut is readable. Version 1 files
 * (written whole, no END) are still read.
 *
 *   type  chunk      payload
 *   1     META       JSON object: source, pid, command, hz, clock, t_start_ns,
 *                    t_end_ns, dropped counts, cupti clock pairs
 *   2     PROBES     JSON array of {id, lib, symbol, bucket}
 *   3     STRINGS    n, then n x (len, bytes)            (symbol and file names)
 *   4     STACKS     n, then n x (kernel?, nframes, nframes x (addr, sym, module, offset))
 *   5     THREADS    n, then n x (tid, comm string, oncpu_ns, offcpu_ns[4], switches)
 *   6     OFFCPU     n, then n x (tid, waker, state, start, dur, ustack+1, kstack+1)
 *   7     SAMPLES    n, then n x (tid, cpu, ts, ustack+1, kstack+1)
 *   8     INTERVALS  n, then n x (tid, probe, start, dur)
 *   9     MAPS       JSON array of {start, end, offset, path, build_id}
 *   10    DEVICE     n, then n x (kind, device, stream, corr, tid, start, dur, bytes, name)
 *   11    END        empty: the recording finished and everything is here
 *   12    MARKS      n, then n x (tid, mark, ts, arg)    (calls of --progress and
 *                    --latency functions; META.marks names each mark, META.progress
 *                    says which marks make which progress point)
 *
 * Times are nanoseconds on CLOCK_MONOTONIC (bpf_ktime_get_ns); CUPTI's are
 * put on the same clock (META.cupti says how). Stacks are leaf first; sym and
 * module index STRINGS; a stack index of 0 in the events means "none".
 */
#ifndef SNR_HOST_TRACE_H
#define SNR_HOST_TRACE_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_util.h"

#define SNRH_MAGIC "SNRHOST"
#define SNRH_VERSION 2

enum snrh_chunk_type {
	SNRH_CHUNK_META = 1,
	SNRH_CHUNK_PROBES,
	SNRH_CHUNK_STRINGS,
	SNRH_CHUNK_STACKS,
	SNRH_CHUNK_THREADS,
	SNRH_CHUNK_OFFCPU,
	SNRH_CHUNK_SAMPLES,
	SNRH_CHUNK_INTERVALS,
	SNRH_CHUNK_MAPS,
	SNRH_CHUNK_DEVICE,
	SNRH_CHUNK_END,
	SNRH_CHUNK_MARKS,
	SNRH_CHUNK_MAX = SNRH_CHUNK_MARKS,
};

struct snrh_thread {
	uint32_t tid;
	uint32_t comm; /* string */
	uint64_t oncpu_ns, offcpu_ns[4], switches;
};

struct snrh_offcpu {
	uint32_t tid, waker, state;
	uint64_t start, end;
	int32_t ustack, kstack; /* index into stacks, -1 = none */
};

struct snrh_sample {
	uint32_t tid, cpu;
	uint64_t ts;
	int32_t ustack, kstack;
};

struct snrh_interval {
	uint32_t tid, probe;
	uint64_t start, end;
};

/* One call of a marked function: a unit of work (--progress) or a
 * request's begin or end (--latency); mark indexes META.marks. */
struct snrh_mark {
	uint32_t tid, mark;
	uint64_t ts, arg;
};

struct snrh_probe {
	uint32_t id;
	char *lib, *symbol, *bucket;
};

struct snrh_frame {
	uint64_t addr;
	uint32_t sym, module; /* strings ("[unknown]" when not found) */
	uint64_t offset;      /* addr - symbol start */
};

struct snrh_stack {
	int kernel;
	uint32_t nframes;
	struct snrh_frame *frames; /* leaf first */
};

/* GPU (or other device) activity, from CUPTI. Runtime/driver API records
 * are host intervals: tid is the calling thread. */
enum snrh_device_kind {
	SNRH_DEV_KERNEL = 1,
	SNRH_DEV_MEMCPY,
	SNRH_DEV_MEMSET,
	SNRH_DEV_RUNTIME_API,
	SNRH_DEV_DRIVER_API,
	SNRH_DEV_SYNC,
};

struct snrh_device_rec {
	uint32_t kind, device, stream, corr, tid;
	uint64_t start, end, bytes;
	uint32_t name; /* string: kernel name, API name, copy kind */
};

#define SNRH_VEC(T) struct { T *v; size_t n, cap; }

struct snrh_trace {
	json_t *meta;   /* owned object */
	json_t *maps;   /* owned array */
	SNRH_VEC(char *) strings;
	SNRH_VEC(struct snrh_stack) stacks;
	SNRH_VEC(struct snrh_thread) threads;
	SNRH_VEC(struct snrh_offcpu) offcpu;
	SNRH_VEC(struct snrh_sample) samples;
	SNRH_VEC(struct snrh_interval) intervals;
	SNRH_VEC(struct snrh_probe) probes;
	SNRH_VEC(struct snrh_device_rec) device;
	SNRH_VEC(struct snrh_mark) marks;
	/* string interning (writer side) */
	uint32_t *hash;
	size_t hash_cap;
};

#define SNRH_PUSH(vec, item)                                                                       \
	do {                                                                                       \
		if ((vec).n == (vec).cap) {                                                        \
			(vec).cap = (vec).cap ? (vec).cap * 2 : 64;                                \
			(vec).v = snr_xrealloc((vec).v, (vec).cap * sizeof(*(vec).v));             \
		}                                                                                  \
		(vec).v[(vec).n++] = (item);                                                       \
	} while (0)

void snrh_trace_init(struct snrh_trace *t);
void snrh_trace_free(struct snrh_trace *t);
/* The index of s in the string table, adding it if new. */
uint32_t snrh_intern(struct snrh_trace *t, const char *s);
static inline const char *snrh_str(const struct snrh_trace *t, uint32_t i)
{
	return i < t->strings.n ? t->strings.v[i] : "?";
}

/* Writing a trace as it grows: open writes META and PROBES; each flush
 * appends what t gained since the last (strings, stacks, off-CPU
 * intervals, samples, API intervals) and reaches the file with it (write
 * calls, no buffering: a killed recorder leaves everything flushed); close
 * adds DEVICE, THREADS, MAPS, t's META as it is then, and END. t's vectors
 * only grow between calls. Errors name the file. */
struct snrh_writer {
	struct snr_chunk_writer cw;
	struct snr_buf buf;
	size_t strings, stacks, offcpu, samples, intervals, device, marks; /* written so far */
};
int snrh_writer_open(struct snrh_writer *w, const struct snrh_trace *t, const char *path, char *err, size_t errlen);
int snrh_writer_flush(struct snrh_writer *w, const struct snrh_trace *t, char *err, size_t errlen);
int snrh_writer_close(struct snrh_writer *w, const struct snrh_trace *t, char *err, size_t errlen);
/* Closes the file without END (it reads as truncated). */
void snrh_writer_abandon(struct snrh_writer *w);

/* The whole trace at once (open + close). */
int snrh_trace_write(const struct snrh_trace *t, const char *path, char *err, size_t errlen);
/* Reads path as snrh_trace_read does, except that a truncated file (cut
 * short, or a version 2 file without END) is not an error: what it holds is
 * read, *truncated is set and err says why. */
int snrh_trace_read_partial(struct snrh_trace *t, const char *path, bool *truncated, char *err, size_t errlen);
/* Reads path and appends its contents to t (strings, stacks and probe ids
 * renumbered), so a CUPTI file merges into an eBPF one. The first file's
 * META is kept (the last META chunk of it); later files' go under
 * meta["merged"]. A truncated file is an error. */
int snrh_trace_read(struct snrh_trace *t, const char *path, char *err, size_t errlen);

/* For a truncated trace (no THREADS chunk): per-thread rows rebuilt from
 * the events, off-CPU by state from the intervals (exact with
 * --min-block 0), on-CPU as samples x 1/HZ; META.t_end_ns becomes the
 * last event's time if missing, and META.threads_rebuilt is set. Does
 * nothing when t has threads. Returns the number of threads. */
int snrh_trace_rebuild_threads(struct snrh_trace *t);

/* Human name of a system call number counted as I/O ("read"), or NULL. */
const char *snrh_syscall_name(uint32_t nr);
/* The I/O system call a kernel stack is inside ("fsync", from its
 * __x64_sys_fsync frame), or NULL: H:IO without tracing system calls. */
const char *snrh_stack_io_syscall(const struct snrh_trace *t, int32_t kstack);
/* The sleep system call a kernel stack is inside ("nanosleep",
 * "clock_nanosleep": usleep, sleep and nanosleep in libc), or NULL: an
 * off-CPU interval there outside a probed call is H:SLEEP. */
const char *snrh_stack_sleep_syscall(const struct snrh_trace *t, int32_t kstack);
/* Name of a probe id: "ta1rt_wait", "sys:read". */
const char *snrh_probe_name(const struct snrh_trace *t, uint32_t probe, char *buf, size_t len);
/* The bucket of a probe id: the probe's own, "H:IO" for system calls. */
const char *snrh_probe_bucket(const struct snrh_trace *t, uint32_t probe);

#endif
