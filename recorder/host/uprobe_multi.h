/*
 * uprobe_multi.h: the runtime API probes as one uprobe_multi link per
 * library and direction (Linux 6.6+), not one perf event per function.
 * Taking a perf-event uprobe down waits for an RCU grace period under the
 * kernel's event_mutex, one probe after another: 14 probes on libcudart
 * cost 0.7 to 0.9 s at the end of every `snr host record`. A uprobe_multi
 * link unregisters all its probes and waits once.
 */
#ifndef SNR_HOST_UPROBE_MULTI_H
#define SNR_HOST_UPROBE_MULTI_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether this kernel has uprobe_multi links (6.6 and later). */
bool snrh_uprobe_multi_supported(void);
/* The file offset of function SYM in the ELF file PATH (SYM or SYM@@VERSION
 * in .symtab, else .dynsym; the default version of a symbol defined in
 * several, a global definition before a weak one), as a uprobe takes it.
 * 0, or -1 with err filled. */
int snrh_func_offset(const char *path, const char *sym, uint64_t *off, char *err, size_t errlen);
/* One link putting PROG_FD (loaded for BPF_TRACE_UPROBE_MULTI) on the CNT
 * offsets of PATH, entries or (ret) returns, each with its cookie. The
 * link's fd, or -errno. */
int snrh_uprobe_multi_attach(int prog_fd, const char *path, const uint64_t *offsets, const uint64_t *cookies,
			     uint32_t cnt, bool ret);

/* enum bpf_attach_type's value, for headers older than 6.6 */
#define SNRH_BPF_TRACE_UPROBE_MULTI 48

#endif
