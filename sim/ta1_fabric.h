/*
 * ta1_fabric.h: the pod's DMA fabric (docs/ta1-timing.md, "The pod: ports and
 * links"), shared by the timing models of every chip of a pod.
 *
 * It holds what the chips' DMAs contend for: each chip's HBM, VMEM and core
 * memory ports and the inter-chip links of the configured topology
 * (all-to-all, ring, 2-D torus). A transfer crosses its source port, the
 * links of its route and its destination port; the active transfers share
 * each resource max-min fairly, so the bytes through a resource never exceed
 * its bandwidth times the time. Each chip's DMA engine keeps a FIFO per
 * (source memory, destination memory) and moves one transfer of it at a time.
 *
 * A single chip's model (ta1_timing_new) owns a fabric of its own, so a
 * window replayed alone sees only its own traffic. A pod's models share one
 * (ta1_timing_new_pod); their owner advances them in time order
 * (device/timed_run.c), so that a chip's DMA meets every other chip's that
 * overlaps it.
 */
#ifndef SNR_TA1_FABRIC_H
#define SNR_TA1_FABRIC_H

#include <stddef.h>
#include <stdint.h>

#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"

struct ta1_fabric;

/* A fabric for cfg->chips chips. NULL with err filled if the topology does
 * not fit them (a torus X extent that does not divide the chips). */
struct ta1_fabric *ta1_fabric_new(const struct snr_config *cfg, char *err, size_t errlen);
void ta1_fabric_free(struct ta1_fabric *f);

/* Resources: ports first (chip c: 3c core, 3c+1 VMEM, 3c+2 HBM), then links. */
size_t ta1_fabric_nresources(const struct ta1_fabric *f);

struct ta1_fabric_resource {
	char name[48];       /* "chip 2 HBM port", "link 0->1" */
	double bytes_per_cycle;
	double bytes;        /* moved through it so far */
	double busy_cycles;  /* time with at least one transfer on it */
	double contended_cycles; /* time with two or more */
};
void ta1_fabric_resource(const struct ta1_fabric *f, size_t i, struct ta1_fabric_resource *out);

/* The fabric's samples (snr_ev_fabric): every port and link that moved
 * bytes in a sampling period (TA1_FABRIC_SAMPLE_CYCLES) is reported, once the
 * period is over, to the tracker of the chip that owns it. Reports the
 * period in progress: the owner calls it once every chip drained. */
#define TA1_FABRIC_SAMPLE_CYCLES 1000
void ta1_fabric_flush_samples(struct ta1_fabric *f);

/* The inter-chip hops from chip a to chip b on the topology. */
unsigned ta1_fabric_hops(const struct ta1_fabric *f, unsigned a, unsigned b);

#endif

/* ---- the engine, for sim/ta1_timing.c ------------------------------------ */

#define TA1_FABRIC_NIL UINT32_MAX
#define TA1_FABRIC_NO_PEER UINT16_MAX

enum ta1_dma_state { TA1_DMA_IN_BASE, TA1_DMA_QUEUED, TA1_DMA_ACTIVE, TA1_DMA_DONE, TA1_DMA_FREE };

struct ta1_dma {
	uint64_t id;          /* chip c's k-th DMA (k from 0) on a pod of n chips: k * n + c + 1; one chip's own fabric: k + 1 */
	int64_t issue_index;  /* the ISSUE's instruction index on its chip, -1 before the window */
	uint64_t issue_cycle; /* the ISSUE's cycle (0 for a DMA from before the window) */
	uint64_t issue_pc;    /* the ISSUE's pc (0 for a DMA from before the window) */
	uint64_t base_end;    /* cycle its base latency (and hops) end and it joins its queue */
	uint64_t bytes;
	double remaining, rate; /* while ACTIVE: bytes left as of the engine time, bytes per cycle */
	uint64_t done_cycle;
	uint32_t queue;        /* its engine's FIFO, or NIL: nothing to transfer */
	uint32_t next;         /* base list, queue FIFO or free list */
	uint32_t src_port, dst_port; /* resources; dst_port NIL when both ends are one port */
	uint16_t owner;        /* the issuing chip */
	uint16_t flag;         /* the owner's flag its completion signals */
	uint16_t peer, peer_flag; /* ta.dma.notify: the chip and flag also signalled, else NO_PEER */
	uint16_t src_chip, dst_chip;
	uint8_t src_space, dst_space; /* TA1_SPACE_NONE: no transfer */
	uint8_t state, refs, has_regions;
	struct ta1_region src, dst;
};

struct ta1_timing_model;

/* The model of chip c, which the engine tells about c's DMAs (and about
 * peer signals to c). */
void ta1_fabric_attach(struct ta1_fabric *f, unsigned chip, struct ta1_timing_model *t);
struct ta1_timing_model *ta1_fabric_model(const struct ta1_fabric *f, unsigned chip);
const struct snr_config *ta1_fabric_config(const struct ta1_fabric *f);
unsigned ta1_fabric_nchips(const struct ta1_fabric *f);

/* A zeroed record (refs 1, no peer). Pointers into the records stay valid
 * only until the next ta1_fabric_dma_alloc. */
uint32_t ta1_fabric_dma_alloc(struct ta1_fabric *f);
struct ta1_dma *ta1_fabric_dma(struct ta1_fabric *f, uint32_t i);
/* The ports and route of a DMA from (src_space, src_chip) to (dst_space,
 * dst_chip) issued by d->owner; a DMA of no bytes or with a side in no
 * memory has no transfer. Then d->base_end is set from issue_cycle. */
void ta1_fabric_route(struct ta1_fabric *f, struct ta1_dma *d, uint8_t src_space, uint16_t src_chip,
		      uint8_t dst_space, uint16_t dst_chip, uint64_t base_start);
/* A fabric of one chip's model (ta1_timing_new): ids 1, 2, 3, ... whatever
 * the chip's number. */
void ta1_fabric_single(struct ta1_fabric *f);
/* Gives the DMA its id and starts its base latency (ISSUED is the caller's
 * to report). */
void ta1_fabric_submit(struct ta1_fabric *f, uint32_t i);
/* One WAIT consumed the record (its owner's, or the peer's signal). */
void ta1_fabric_release(struct ta1_fabric *f, uint32_t i);

/* Processes every event at or before `limit`, in time order. */
void ta1_fabric_run_until(struct ta1_fabric *f, double limit);
/* The next event's time (INFINITY: idle) and its first whole cycle. */
double ta1_fabric_next_event(const struct ta1_fabric *f);
uint64_t ta1_fabric_next_event_cycle(const struct ta1_fabric *f);

/* Callbacks into sim/ta1_timing.c. */
void ta1_timing_dma_started(struct ta1_timing_model *t, const struct ta1_dma *d);
void ta1_timing_dma_active(struct ta1_timing_model *t, const struct ta1_dma *d, uint64_t cycle);
void ta1_timing_dma_completed(struct ta1_timing_model *t, uint32_t i, const struct ta1_dma *d);
void ta1_timing_dma_signalled(struct ta1_timing_model *t, uint32_t i, const struct ta1_dma *d);
struct snr_ev_fabric;
void ta1_timing_fabric_sample(struct ta1_timing_model *t, const struct snr_ev_fabric *e);
