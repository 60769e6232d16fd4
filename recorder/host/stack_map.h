/*
 * stack_map.h: the kernel's stack-trace map that the off-CPU and on-CPU
 * programs share, and the stacks it could not keep.
 *
 * bpf_get_stackid stores a stack in the bucket its hash picks; a bucket
 * already holding another stack (-EEXIST) or a map out of free entries
 * (-ENOMEM) loses the new one, and the record then carries no stack. The
 * kernel always preallocates such a map (it refuses BPF_F_NO_PREALLOC for
 * it): 16,384 stacks of 127 frames are 16 MiB zeroed and threaded on a
 * free list at creation, which was a third of the recorder's fixed start
 * when each of the two programs had its own. One map serves both, sized by
 * --stack-map, and every stack lost is counted, so a report says how much
 * of what it shows has no stack rather than presenting the rest as whole.
 */
#ifndef SNR_HOST_STACK_MAP_H
#define SNR_HOST_STACK_MAP_H

#include <bpf/libbpf.h>
#include <jansson.h>
#include <stdbool.h>
#include <stdint.h>

#define SNRH_STACK_MAP_DEFAULT 16384
#define SNRH_STACK_MAP_MAX 65536

struct snrh_stack_loss {
	unsigned entries;    /* the map's size */
	uint64_t taken[2];   /* stacks asked for and stored: [0] kernel, [1] user (--unwind fp) */
	uint64_t lost[2];    /* asked for and not stored (bucket taken or map full) */
};

/* Sizes MAP (in the object loaded first) to ENTRIES and creates it, and has
 * OTHER (the same map in the second object) use it. 0, or -1 with errno. */
int snrh_stack_map_share(struct bpf_map *map, struct bpf_map *other, unsigned entries);

/* Counts one stack id a record carries: a stored stack (>= 0), a lost one
 * (-EEXIST, -ENOMEM), or none to take (-EFAULT: no user context; others). */
void snrh_stack_loss_note(struct snrh_stack_loss *l, int id, bool user);

/* META.stack_map: {"entries", "kernel": {"taken", "lost"}, "user": {...}}. */
json_t *snrh_stack_loss_json(const struct snrh_stack_loss *l);

#endif
