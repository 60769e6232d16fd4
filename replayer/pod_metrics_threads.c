/*
 * pod_metrics_threads.c: see pod_metrics_threads.h.
 *
 * An event is kept as its kind (one byte), for on_insn its read and write
 * register counts (a byte each), the event's struct, then its registers.
 * Buffers are CHUNK_BYTES; a worker holds at most QUEUE_CHUNKS of them
 * before the simulation waits for it, so the events in flight stay under
 * (chips + W * QUEUE_CHUNKS) * CHUNK_BYTES (16 chips on one worker: 2 MiB)
 * however far the simulation runs ahead. 64 KiB buffers come from the heap,
 * not fresh mappings, and are reused: with 256 KiB and 64 of them queued the
 * replay of a 16-chip pod took 20 MiB more peak RSS than on one thread, with
 * these 3 MiB.
 */
#include "pod_metrics_threads.h"

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "lib/snr_util.h"

#define CHUNK_BYTES (64u << 10)
#define QUEUE_CHUNKS 16u
#define RECORD_MAX 1024u /* the largest event, with 255 + 255 registers */

enum kind { K_ISSUE, K_RETIRE, K_STALL, K_DMA, K_MEM, K_REG, K_BUSY, K_INSN, K_PEER, K_FABRIC };

struct chunk {
	struct chunk *next;
	unsigned chip;
	size_t used;
	uint8_t data[CHUNK_BYTES];
};

struct worker {
	pthread_t th;
	bool started;
	pthread_mutex_t mu;
	pthread_cond_t more, room;
	struct chunk *head, *tail, *spare; /* the queue, in order; chunks delivered, for reuse */
	unsigned queued;
	bool closing;
	long tid; /* the thread that delivered its chunks, 0 if none */
	const struct snr_tracker *const *consumers;
};

struct chip_buf {
	struct pod_metrics_threads *m;
	unsigned k;
	struct chunk *cur;
	struct snr_tracker tr;
};

struct pod_metrics_threads {
	unsigned chips, nworkers;
	struct worker *w;
	struct chip_buf *c;
	const struct snr_tracker *const *consumers;
};

/* ---- the workers: a chunk's events to its chip's tracker ------------------------------ */

static void deliver(const struct snr_tracker *t, const struct chunk *ch)
{
	const uint8_t *p = ch->data, *end = ch->data + ch->used;
	while (p < end) {
		uint8_t kind = *p++;
#define EV(K, type, cb)                                                                                        \
	case K: {                                                                                              \
		type e;                                                                                        \
		memcpy(&e, p, sizeof(e));                                                                      \
		p += sizeof(e);                                                                                \
		t->cb(t->user, &e);                                                                            \
		break;                                                                                         \
	}
		switch (kind) {
			EV(K_ISSUE, struct snr_ev_insn, on_issue)
			EV(K_RETIRE, struct snr_ev_insn, on_retire)
			EV(K_STALL, struct snr_ev_stall, on_stall)
			EV(K_DMA, struct snr_ev_dma, on_dma)
			EV(K_MEM, struct snr_ev_mem, on_mem)
			EV(K_REG, struct snr_ev_reg, on_reg)
			EV(K_BUSY, struct snr_ev_busy, on_busy)
			EV(K_PEER, struct snr_ev_peer, on_peer)
			EV(K_FABRIC, struct snr_ev_fabric, on_fabric)
		case K_INSN: {
			unsigned nread = p[0], nwrite = p[1];
			struct snr_ev_insn e;
			uint16_t regs[510];
			memcpy(&e, p + 2, sizeof(e));
			memcpy(regs, p + 2 + sizeof(e), (nread + nwrite) * sizeof(uint16_t));
			p += 2 + sizeof(e) + (nread + nwrite) * sizeof(uint16_t);
			t->on_insn(t->user, &e, regs, nread, nwrite);
			break;
		}
		default:
			abort(); /* only this file writes the chunks */
		}
#undef EV
	}
}

static void *worker_main(void *arg)
{
	struct worker *w = arg;
	pthread_mutex_lock(&w->mu);
	for (;;) {
		while (!w->head && !w->closing)
			pthread_cond_wait(&w->more, &w->mu);
		struct chunk *ch = w->head;
		if (!ch)
			break;
		w->head = ch->next;
		if (!w->head)
			w->tail = NULL;
		pthread_mutex_unlock(&w->mu);
		deliver(w->consumers[ch->chip], ch);
		w->tid = (long)syscall(SYS_gettid);
		pthread_mutex_lock(&w->mu);
		w->queued--;
		ch->next = w->spare;
		w->spare = ch;
		pthread_cond_signal(&w->room);
	}
	pthread_mutex_unlock(&w->mu);
	return NULL;
}

/* ---- the simulation's side: events into chunks ----------------------------------------- */

static struct chunk *fresh_chunk(struct worker *w, unsigned chip)
{
	struct chunk *ch = NULL;
	if (w->started) {
		pthread_mutex_lock(&w->mu);
		ch = w->spare;
		if (ch)
			w->spare = ch->next;
		pthread_mutex_unlock(&w->mu);
	}
	if (!ch)
		ch = snr_xmalloc(sizeof(*ch));
	ch->next = NULL;
	ch->chip = chip;
	ch->used = 0;
	return ch;
}

/* Chip b's chunk to its worker (waiting while the worker is QUEUE_CHUNKS
 * behind), and a fresh one in its place when `again`. */
static void hand_over(struct chip_buf *b, bool again)
{
	struct pod_metrics_threads *m = b->m;
	struct worker *w = &m->w[b->k % m->nworkers];
	struct chunk *ch = b->cur;
	b->cur = NULL;
	if (ch && ch->used) {
		if (!w->started) { /* no thread for it: delivered here, in order all the same */
			deliver(m->consumers[b->k], ch);
			free(ch);
		} else {
			pthread_mutex_lock(&w->mu);
			while (w->queued >= QUEUE_CHUNKS)
				pthread_cond_wait(&w->room, &w->mu);
			if (w->tail)
				w->tail->next = ch;
			else
				w->head = ch;
			w->tail = ch;
			w->queued++;
			pthread_cond_signal(&w->more);
			pthread_mutex_unlock(&w->mu);
		}
	} else {
		free(ch);
	}
	if (again)
		b->cur = fresh_chunk(w, b->k);
}

static uint8_t *room(struct chip_buf *b)
{
	if (b->cur->used + RECORD_MAX > CHUNK_BYTES)
		hand_over(b, true);
	return b->cur->data + b->cur->used;
}

#define KEEP(name, K, type)                                                                                    \
	static void keep_##name(void *u, const type *e)                                                        \
	{                                                                                                      \
		struct chip_buf *b = u;                                                                        \
		uint8_t *p = room(b);                                                                          \
		p[0] = K;                                                                                      \
		memcpy(p + 1, e, sizeof(*e));                                                                  \
		b->cur->used += 1 + sizeof(*e);                                                                \
	}
KEEP(issue, K_ISSUE, struct snr_ev_insn)
KEEP(retire, K_RETIRE, struct snr_ev_insn)
KEEP(stall, K_STALL, struct snr_ev_stall)
KEEP(dma, K_DMA, struct snr_ev_dma)
KEEP(mem, K_MEM, struct snr_ev_mem)
KEEP(reg, K_REG, struct snr_ev_reg)
KEEP(busy, K_BUSY, struct snr_ev_busy)
KEEP(peer, K_PEER, struct snr_ev_peer)
KEEP(fabric, K_FABRIC, struct snr_ev_fabric)
#undef KEEP

static void keep_insn(void *u, const struct snr_ev_insn *e, const uint16_t *regs, unsigned nread, unsigned nwrite)
{
	struct chip_buf *b = u;
	if (nread > 255 || nwrite > 255) { /* no TA1 instruction names so many: as separate events, same calls */
		keep_issue(u, e);
		keep_retire(u, e);
		for (unsigned i = 0; i < nread + nwrite; i++)
			keep_reg(u, &(struct snr_ev_reg){.index = e->index, .reg = regs[i], .write = i >= nread});
		return;
	}
	uint8_t *p = room(b);
	p[0] = K_INSN;
	p[1] = (uint8_t)nread;
	p[2] = (uint8_t)nwrite;
	memcpy(p + 3, e, sizeof(*e));
	memcpy(p + 3 + sizeof(*e), regs, (nread + nwrite) * sizeof(uint16_t));
	b->cur->used += 3 + sizeof(*e) + (nread + nwrite) * sizeof(uint16_t);
}

struct pod_metrics_threads *pod_metrics_threads_new(unsigned threads, unsigned chips,
						    const struct snr_tracker *const *consumers)
{
	if (threads < 2 || !chips)
		return NULL;
	struct pod_metrics_threads *m = snr_xcalloc(1, sizeof(*m));
	m->chips = chips;
	m->nworkers = threads - 1 < chips ? threads - 1 : chips;
	m->consumers = consumers;
	m->w = snr_xcalloc(m->nworkers, sizeof(*m->w));
	for (unsigned i = 0; i < m->nworkers; i++) {
		struct worker *w = &m->w[i];
		w->consumers = consumers;
		pthread_mutex_init(&w->mu, NULL);
		pthread_cond_init(&w->more, NULL);
		pthread_cond_init(&w->room, NULL);
		w->started = pthread_create(&w->th, NULL, worker_main, w) == 0;
	}
	m->c = snr_xcalloc(chips, sizeof(*m->c));
	for (unsigned k = 0; k < chips; k++) {
		struct chip_buf *b = &m->c[k];
		const struct snr_tracker *t = consumers[k];
		b->m = m;
		b->k = k;
		b->cur = fresh_chunk(&m->w[k % m->nworkers], k);
		b->tr = (struct snr_tracker){.abi_version = SNR_TRACKER_ABI_VERSION, .user = b};
		b->tr.on_issue = t->on_issue ? keep_issue : NULL;
		b->tr.on_retire = t->on_retire ? keep_retire : NULL;
		b->tr.on_stall = t->on_stall ? keep_stall : NULL;
		b->tr.on_dma = t->on_dma ? keep_dma : NULL;
		b->tr.on_mem = t->on_mem ? keep_mem : NULL;
		b->tr.on_reg = t->on_reg ? keep_reg : NULL;
		b->tr.on_busy = t->on_busy ? keep_busy : NULL;
		/* on_insn stands for on_issue, on_retire and on_reg: kept whole only where the tracker takes it */
		b->tr.on_insn = t->on_insn && t->on_issue && t->on_retire && t->on_reg ? keep_insn : NULL;
		b->tr.on_peer = t->on_peer ? keep_peer : NULL;
		b->tr.on_fabric = t->on_fabric ? keep_fabric : NULL;
	}
	return m;
}

const struct snr_tracker *pod_metrics_threads_tracker(struct pod_metrics_threads *m, unsigned k)
{
	return &m->c[k].tr;
}

unsigned pod_metrics_threads_end(struct pod_metrics_threads *m)
{
	if (!m)
		return 0;
	for (unsigned k = 0; k < m->chips; k++)
		hand_over(&m->c[k], false);
	unsigned distinct = 0;
	for (unsigned i = 0; i < m->nworkers; i++) {
		struct worker *w = &m->w[i];
		if (w->started) {
			pthread_mutex_lock(&w->mu);
			w->closing = true;
			pthread_cond_signal(&w->more);
			pthread_mutex_unlock(&w->mu);
			pthread_join(w->th, NULL);
		}
		bool seen = !w->tid;
		for (unsigned j = 0; j < i && !seen; j++)
			seen = m->w[j].tid == w->tid;
		distinct += !seen;
		while (w->spare) {
			struct chunk *ch = w->spare;
			w->spare = ch->next;
			free(ch);
		}
		pthread_mutex_destroy(&w->mu);
		pthread_cond_destroy(&w->more);
		pthread_cond_destroy(&w->room);
	}
	free(m->w);
	free(m->c);
	free(m);
	return distinct;
}
