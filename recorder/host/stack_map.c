/*
 * stack_map.c: one stack-trace map for both programs, and its losses
 * counted (stack_map.h).
 */
#include "stack_map.h"

#include <errno.h>

#include "load_parallel.h"

int snrh_stack_map_share(struct bpf_map *map, struct bpf_map *other, unsigned entries)
{
	if (bpf_map__set_max_entries(map, entries) || bpf_map__set_max_entries(other, entries))
		return -1;
	return snrh_share_map(map, &other, 1);
}

void snrh_stack_loss_note(struct snrh_stack_loss *l, int id, bool user)
{
	if (id >= 0)
		l->taken[user]++;
	else if (id == -EEXIST || id == -ENOMEM)
		l->lost[user]++;
}

json_t *snrh_stack_loss_json(const struct snrh_stack_loss *l)
{
	return json_pack("{s:I, s:{s:I, s:I}, s:{s:I, s:I}}", "entries", (json_int_t)l->entries, "kernel", "taken",
			 (json_int_t)l->taken[0], "lost", (json_int_t)l->lost[0], "user", "taken",
			 (json_int_t)l->taken[1], "lost", (json_int_t)l->lost[1]);
}
