/*
 * snr_tracker.h: the performance tracker's callback layer (version 3).
 *
 * A simulator's components report what happens, as it happens, through the
 * callbacks a tracker registered: instruction issue and retire, stalls with
 * their cause and the instruction responsible, each DMA's life (issue, start
 * of transfer, completion, the WAIT that consumed it), memory and register
 * reads and writes, and busy intervals per unit. Callbacks left NULL are
 * never called, and simulators test for them once per event kind when the
 * tracker is attached (snr_tracker_mask), so an unregistered event costs
 * nothing measurable (bench/tracker_overhead measures it).
 *
 * Cycles are the simulated core clock. `index` is the instruction's position
 * in the replayed window (0-based).
 */
#ifndef SNR_TRACKER_H
#define SNR_TRACKER_H

#include <stddef.h>
#include <stdint.h>

#define SNR_TRACKER_ABI_VERSION 3
/* Version 2 added on_insn, version 3 on_peer and on_fabric (a pod's events).
 * A simulator accepts a tracker of any version from 1 to the one it was built
 * with, and reads on_insn only when abi_version >= 2 and on_peer and
 * on_fabric only when it is >= 3 (snr_tracker_mask does); it copies a
 * tracker only as far as its version has fields (snr_tracker_size). */

enum snr_unit {
	SNR_UNIT_SCALAR,
	SNR_UNIT_VECTOR,
	SNR_UNIT_MXU,
	SNR_UNIT_DMA, /* DMA engine; per-link detail is in the DMA events */
	SNR_UNIT_COUNT,
};

enum snr_stall_cause {
	SNR_STALL_DMA_BASE,      /* WAIT while the DMA was still in its base latency */
	SNR_STALL_DMA_TRANSFER,  /* WAIT while the DMA was transferring */
	SNR_STALL_VMEM_HAZARD,   /* operand in VMEM still being written by an op in flight */
	SNR_STALL_UNIT_BUSY,     /* the vector unit or MXU was busy with an earlier op */
	SNR_STALL_REGISTER,      /* a source register not ready (scalar latency) */
	SNR_STALL_BRANCH,        /* taken branch refill */
	SNR_STALL_PEER,          /* WAIT for another chip's signal (ta.dma.notify) before that chip issued its DMA */
	SNR_STALL_COUNT,
};

struct snr_ev_insn {
	uint64_t index, pc;
	uint64_t issue, retire; /* cycles */
	uint8_t unit;           /* enum snr_unit that executes it */
	uint8_t cls;            /* enum snr_insn_class */
};

struct snr_ev_stall {
	uint64_t index;       /* the stalled instruction */
	uint64_t cycles;      /* how long */
	uint64_t start;       /* cycle the stall began */
	uint8_t cause;        /* enum snr_stall_cause */
	int64_t responsible;  /* index of the instruction responsible (for a DMA WAIT,
				 its DMA ISSUE), -1 if none in the window */
	uint64_t dma_id;      /* for DMA stalls: the DMA, else 0 */
};

enum snr_dma_phase {
	SNR_DMA_ISSUED,
	SNR_DMA_STARTED,   /* base latency over: transfer starts (may queue behind its link) */
	SNR_DMA_COMPLETED,
	SNR_DMA_WAITED,    /* consumed by a WAIT */
};

struct snr_ev_dma {
	uint64_t id;            /* 1-based, in issue order; DMAs issued before the window get ids too */
	uint8_t phase;          /* enum snr_dma_phase */
	int64_t issue_index;    /* instruction index of the ISSUE, -1 if before the window */
	int64_t wait_index;     /* for WAITED: the WAIT's index */
	uint64_t cycle;         /* when this phase happened */
	uint64_t bytes;
	uint16_t src_space, dst_space, src_chip, dst_chip; /* the link is (src, dst) */
	uint64_t src_addr, dst_addr;
	uint16_t flag;
	uint64_t base_cycles;     /* configured base latency */
	uint64_t transfer_cycles; /* for COMPLETED: time from start to completion, queueing included */
	/* For WAITED (the paper's Figure 4): the part of the WAIT's stall spent
	 * waiting for this DMA, split into its base latency and its transfer, and
	 * the slack (wait cycle - completion cycle) when the DMA had completed
	 * before the WAIT got to it. At most one of the stall and slack is non-zero. */
	uint64_t stall_base_cycles, stall_transfer_cycles, slack_cycles;
};

struct snr_ev_mem {
	uint64_t index;
	uint64_t cycle;
	uint8_t write;
	uint8_t space;
	uint16_t chip;
	uint64_t addr, bytes;
};

struct snr_ev_reg {
	uint64_t index;
	uint16_t reg;
	uint8_t write;
};

struct snr_ev_busy {
	uint8_t unit;
	uint64_t start, end; /* [start, end) cycles */
	uint64_t index;      /* the instruction that kept it busy */
};

/* Version 3. A WAIT on this chip consumed the signal of a DMA another chip
 * of the pod issued (ta.dma.notify): which chip's DMA ended the wait. Reported
 * on the waiting chip, after the WAIT's stalls. */
struct snr_ev_peer {
	uint64_t wait_index, wait_pc; /* the WAIT on this chip */
	uint64_t wait_start;          /* cycle the WAIT began waiting for this signal (its stall's start) */
	uint64_t stall_cycles;        /* of that stall, the part spent on this signal (PEER, base, transfer) */
	uint64_t dma_id;              /* the DMA (ids are pod-wide) */
	uint16_t chip;                /* the chip that issued it */
	uint16_t flag;                /* this chip's flag it signalled */
	int64_t issue_index;          /* its ta.dma.notify's index on that chip, -1 if before its window */
	uint64_t issue_pc;            /* and pc (0 if not known) */
	uint64_t issue_cycle;         /* the issue's cycle on the pod's clock */
	uint64_t done_cycle;          /* when its transfer completed and the signal arrived */
	uint64_t bytes;
};

enum snr_fabric_kind {
	SNR_FABRIC_CORE_PORT, /* a chip's core memory port */
	SNR_FABRIC_VMEM_PORT,
	SNR_FABRIC_HBM_PORT,
	SNR_FABRIC_LINK,      /* an inter-chip link, one way */
	SNR_FABRIC_KIND_COUNT,
};

/* Version 3. One port's or link's use over [start, end): a sample of the
 * pod's fabric, reported to the tracker of the chip that owns the resource
 * (a port's chip, a link's source chip), for every interval of the fabric's
 * sampling period in which the resource moved bytes. A resource's samples
 * add up to its totals (`snr device --timing --stats`). */
struct snr_ev_fabric {
	uint32_t resource;       /* the fabric's resource number (ports first: chip c 3c core, 3c+1 VMEM, 3c+2 HBM) */
	uint8_t kind;            /* enum snr_fabric_kind */
	uint16_t from, to;       /* a link's chips; a port's chip in both */
	uint64_t start, end;     /* cycles */
	uint64_t bytes_per_cycle; /* its bandwidth */
	double bytes;            /* moved through it in the interval */
	double busy_cycles;      /* time with at least one transfer on it */
	double contended_cycles; /* time with two or more */
};

struct snr_tracker {
	uint32_t abi_version; /* SNR_TRACKER_ABI_VERSION */
	void *user;
	void (*on_issue)(void *user, const struct snr_ev_insn *e);
	void (*on_retire)(void *user, const struct snr_ev_insn *e);
	void (*on_stall)(void *user, const struct snr_ev_stall *e);
	void (*on_dma)(void *user, const struct snr_ev_dma *e);
	void (*on_mem)(void *user, const struct snr_ev_mem *e);
	void (*on_reg)(void *user, const struct snr_ev_reg *e);
	void (*on_busy)(void *user, const struct snr_ev_busy *e);
	/* Version 2. One instruction's ISSUE, RETIRE and register events in one
	 * call: it stands for on_issue(e), on_retire(e), then on_reg for each of
	 * regs[0 .. nread) (reads, write 0) and regs[nread .. nread + nwrite)
	 * (writes), in that order, with no other event between them. A simulator
	 * may call it instead of those calls when SNR_TRACK_INSN is in the mask,
	 * and calls them otherwise; so a tracker that sets it sets on_issue,
	 * on_retire and on_reg too, doing the same (SNR_TRACK_INSN needs all four).
	 * It saves a tracker that handles an instruction's events together (the
	 * metrics writer's INSN record) three of about four calls per instruction. */
	void (*on_insn)(void *user, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread,
			unsigned nwrite);
	/* Version 3. */
	void (*on_peer)(void *user, const struct snr_ev_peer *e);
	void (*on_fabric)(void *user, const struct snr_ev_fabric *e);
};

/* How much of *t its version has: what a simulator copies. */
#define SNR_TRACKER_SIZE_V1 offsetof(struct snr_tracker, on_insn)
#define SNR_TRACKER_SIZE_V2 offsetof(struct snr_tracker, on_peer)
static inline size_t snr_tracker_size(const struct snr_tracker *t)
{
	return t->abi_version >= 3 ? sizeof(*t) : t->abi_version == 2 ? SNR_TRACKER_SIZE_V2 : SNR_TRACKER_SIZE_V1;
}

enum {
	SNR_TRACK_ISSUE = 1 << 0,
	SNR_TRACK_RETIRE = 1 << 1,
	SNR_TRACK_STALL = 1 << 2,
	SNR_TRACK_DMA = 1 << 3,
	SNR_TRACK_MEM = 1 << 4,
	SNR_TRACK_REG = 1 << 5,
	SNR_TRACK_BUSY = 1 << 6,
	SNR_TRACK_INSN = 1 << 7, /* on_insn (with on_issue, on_retire and on_reg) */
	SNR_TRACK_PEER = 1 << 8,
	SNR_TRACK_FABRIC = 1 << 9,
};

/* Which callbacks are registered, as SNR_TRACK_* bits. */
static inline unsigned snr_tracker_mask(const struct snr_tracker *t)
{
	if (!t)
		return 0;
	return (t->on_issue ? SNR_TRACK_ISSUE : 0) | (t->on_retire ? SNR_TRACK_RETIRE : 0) |
	       (t->on_stall ? SNR_TRACK_STALL : 0) | (t->on_dma ? SNR_TRACK_DMA : 0) |
	       (t->on_mem ? SNR_TRACK_MEM : 0) | (t->on_reg ? SNR_TRACK_REG : 0) | (t->on_busy ? SNR_TRACK_BUSY : 0) |
	       (t->abi_version >= 2 && t->on_insn && t->on_issue && t->on_retire && t->on_reg ? SNR_TRACK_INSN : 0) |
	       (t->abi_version >= 3 && t->on_peer ? SNR_TRACK_PEER : 0) |
	       (t->abi_version >= 3 && t->on_fabric ? SNR_TRACK_FABRIC : 0);
}

const char *snr_stall_cause_name(enum snr_stall_cause c);
const char *snr_unit_name(enum snr_unit u);

#endif
