/*
 * detach.h: taking the uprobes down all at once. Closing a uprobe's perf
 * event waits for an RCU grace period in the kernel (uprobe_unregister_sync,
 * about 65 ms each here). Perf-event uprobes wait one after another under
 * the kernel's event_mutex whatever the threads; uprobe_multi links
 * (uprobe_multi.h) do not, and closed from one thread each their waits
 * overlap.
 */
#ifndef SNR_HOST_DETACH_H
#define SNR_HOST_DETACH_H

#include <bpf/libbpf.h>

struct snrh_detach;

/* Starts destroying links[0..nlinks) and closing the link fds
 * fds[0..nfds) concurrently, and clears them (NULL, -1); the work goes on
 * while the caller writes its output. NULL when there is nothing to do;
 * one that no thread could be started for is taken down here. */
struct snrh_detach *snrh_detach_start(struct bpf_link **links, int nlinks, int *fds, int nfds);
/* Waits until every link is gone, and frees d (NULL is fine). */
void snrh_detach_wait(struct snrh_detach *d);

#endif
