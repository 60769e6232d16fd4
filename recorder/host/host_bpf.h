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

static __always_inline unsigned long long snrh_submit_flags(void *ringbuf, unsigned long long ring_bytes)
{
	return bpf_ringbuf_query(ringbuf, BPF_RB_AVAIL_DATA) >= ring_bytes / 4 ? BPF_RB_FORCE_WAKEUP
										 : BPF_RB_NO_WAKEUP;
}

#endif
