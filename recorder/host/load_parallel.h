/*
 * load_parallel.h: the recorder's BPF objects loaded side by side. Each
 * load parses the kernel's BTF (libbpf keeps no copy between objects),
 * creates its maps and has the verifier check its programs: done one after
 * another this was most of the start of `snr host record`; in threads, on a
 * machine with a CPU to spare, it takes about as long as the longest.
 */
#ifndef SNR_HOST_LOAD_PARALLEL_H
#define SNR_HOST_LOAD_PARALLEL_H

#include <bpf/libbpf.h>

/* Loads the N skeletons (bpf_object__load_skeleton), one thread each.
 * Maps they share must have been given one fd beforehand
 * (bpf_map__reuse_fd). 0, or -1 with errno set from the first that failed
 * (in the order given). */
int snrh_load_parallel(struct bpf_object_skeleton **skels, int n);

/* Creates map M as its definition says and has M and each of OTHERS[0..n)
 * (the same map in other objects) use it. 0, or -1 with errno set. */
int snrh_share_map(struct bpf_map *m, struct bpf_map **others, int n);

#endif
