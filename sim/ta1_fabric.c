/*
 * ta1_fabric.c: the pod's DMA fabric: ports, links, routes and the
 * event-driven fluid engine that moves every chip's DMAs over them
 * (docs/ta1-timing.md, Rule 3 and "The pod: ports and links").
 *
 * Resources. Each chip has three ports: core memory (dma.core_bytes_per_cycle),
 * VMEM (dma.vmem_bytes_per_cycle) and HBM (dma.hbm_bytes_per_cycle). The
 * links join chips by ici.topology, each one way at dma.ici_bytes_per_cycle:
 *
 *   all-to-all  a link a->b for every a != b (one hop)
 *   ring        i->i+1 and i->i-1 (mod n); the shorter way round, clockwise
 *               on a tie
 *   torus       X x Y (chip = y*X + x), links to x+-1 and y+-1 with
 *               wrap-around; X first, then Y, each the shorter way (+ on a tie)
 *
 * A transfer from memory (s, a) to memory (d, b) crosses port (s, a), the
 * links of the route a->b, and port (d, b); a resource counts once per
 * transfer (an HBM->HBM copy on one chip uses its HBM port once).
 *
 * Sharing: max-min fair (progressive filling). All rates rise together;
 * when a resource is full, the transfers through it keep the rate they have
 * and the others rise on. A resource's bytes therefore never exceed its
 * bandwidth times the time, and no bandwidth is left idle while a transfer
 * through it could use more, which an equal split per resource (the earlier
 * rule) did: a transfer held to 50 B/cycle by a link kept half of an HBM port
 * it could not use. Elk's sequential service would serialize transfers on a
 * port; TA1's DMA engines interleave them, which fair sharing models.
 *
 * Each issuing chip's engine keeps a FIFO per (source memory, destination
 * memory) and moves one transfer of each at a time, as before.
 */
#include "sim/ta1_fabric.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"
#include "sim/snr_tracker.h"

#define NIL TA1_FABRIC_NIL
#define PORTS_PER_CHIP 3

struct resource {
	double bw;
	unsigned nactive;
	double bytes, busy, contended;
	/* the sampling period in progress (ta1_fabric_flush_samples) */
	double s_bytes, s_busy, s_contended;
	bool sampled; /* in the fabric's `sampled` list */
	/* progressive filling's scratch */
	double cap;
	unsigned left;
	uint32_t from, to; /* a link's chips; ports: UINT32_MAX */
};

struct queue {
	uint16_t owner;
	uint32_t src_port, dst_port;
	uint32_t head, tail; /* FIFO of DMAs waiting */
	uint32_t active;     /* the transfer it moves, or NIL */
};

struct route {
	uint32_t off, len; /* into routes_links; len UINT32_MAX: not computed yet */
};

struct ta1_fabric {
	struct snr_config cfg;
	unsigned nchips, torus_x, torus_y;
	struct ta1_timing_model **models;

	struct resource *res;
	uint32_t nres;
	uint32_t *link_of; /* nchips x nchips: the link a->b, or NIL */
	struct route *routes;
	uint32_t *route_links;
	size_t nroute_links, cap_route_links;

	struct ta1_dma *dmas;
	uint32_t ndmas, cap_dmas, free_head;
	uint32_t base_head, base_tail; /* by (base_end, id) */
	struct queue *queues;
	uint32_t nqueues, cap_queues;
	uint32_t *active;
	uint32_t nactive, cap_active;
	uint32_t *used; /* resources with nactive > 0 */
	uint32_t nused, cap_used;
	uint32_t *fix; /* recompute_rates' scratch */
	uint32_t cap_fix;
	double et;
	uint64_t period;     /* the sampling period in progress: [period, period + TA1_FABRIC_SAMPLE_CYCLES) */
	uint32_t *sampled;   /* resources with a share of it */
	uint32_t nsampled;
	double next_event;
	uint64_t next_event_cycle;
	uint64_t *issued;    /* per chip: DMAs submitted so far (its ids) */
	unsigned id_stride;  /* ids of chip c: c + 1, c + 1 + stride, ...; 1: one chip's own fabric */
	bool warned;
};

static double snap(double x)
{
	double r = nearbyint(x);
	return fabs(x - r) <= 1e-6 + 1e-12 * fabs(x) ? r : x;
}

static uint64_t cycle_of(double x)
{
	return (uint64_t)ceil(snap(x));
}

static void set_next_event(struct ta1_fabric *f, double n)
{
	f->next_event = n;
	f->next_event_cycle = isfinite(n) && n < 1.8e19 ? (uint64_t)ceil(n) : UINT64_MAX;
}

/* ---- topology ------------------------------------------------------------ */

static void add_link(struct ta1_fabric *f, unsigned a, unsigned b)
{
	if (a == b || f->link_of[a * f->nchips + b] != NIL)
		return;
	f->link_of[a * f->nchips + b] = f->nres;
	f->res[f->nres++] = (struct resource){.bw = (double)f->cfg.dma_ici_bytes_per_cycle, .from = a, .to = b};
}

struct ta1_fabric *ta1_fabric_new(const struct snr_config *cfg, char *err, size_t errlen)
{
	unsigned n = (unsigned)cfg->chips, x = n, y = 1;
	if (cfg->ici_topology == SNR_TOPOLOGY_TORUS) {
		if (cfg->ici_torus_x) {
			if (cfg->ici_torus_x > n || n % cfg->ici_torus_x) {
				snr_fmt(err, errlen, "ici.torus_x (%llu) must divide the pod's %u chips",
					(unsigned long long)cfg->ici_torus_x, n);
				return NULL;
			}
			x = (unsigned)cfg->ici_torus_x;
		} else {
			for (x = 1; (x + 1) * (x + 1) <= n; x++)
				;
			while (n % x)
				x--;
		}
		y = n / x;
	}
	struct ta1_fabric *f = snr_xcalloc(1, sizeof(*f));
	f->cfg = *cfg;
	f->nchips = n;
	f->torus_x = x;
	f->torus_y = y;
	f->models = snr_xcalloc(n, sizeof(*f->models));
	size_t maxlinks = cfg->ici_topology == SNR_TOPOLOGY_ALL_TO_ALL ? (size_t)n * (n - 1) : 4 * (size_t)n;
	f->res = snr_xcalloc(PORTS_PER_CHIP * n + maxlinks + 1, sizeof(*f->res));
	f->sampled = snr_xcalloc(PORTS_PER_CHIP * n + maxlinks + 1, sizeof(*f->sampled));
	for (unsigned c = 0; c < n; c++) {
		f->res[f->nres++] = (struct resource){.bw = (double)cfg->dma_core_bytes_per_cycle, .from = UINT32_MAX};
		f->res[f->nres++] = (struct resource){.bw = (double)cfg->dma_vmem_bytes_per_cycle, .from = UINT32_MAX};
		f->res[f->nres++] = (struct resource){.bw = (double)cfg->dma_hbm_bytes_per_cycle, .from = UINT32_MAX};
	}
	f->link_of = snr_xmalloc((size_t)n * n * sizeof(*f->link_of));
	memset(f->link_of, 0xff, (size_t)n * n * sizeof(*f->link_of));
	for (unsigned a = 0; a < n; a++) {
		switch (cfg->ici_topology) {
		case SNR_TOPOLOGY_RING:
			add_link(f, a, (a + 1) % n);
			add_link(f, a, (a + n - 1) % n);
			break;
		case SNR_TOPOLOGY_TORUS: {
			unsigned ax = a % x, ay = a / x;
			add_link(f, a, ay * x + (ax + 1) % x);
			add_link(f, a, ay * x + (ax + x - 1) % x);
			add_link(f, a, ((ay + 1) % y) * x + ax);
			add_link(f, a, ((ay + y - 1) % y) * x + ax);
			break;
		}
		default:
			for (unsigned b = 0; b < n; b++)
				add_link(f, a, b);
		}
	}
	f->routes = snr_xmalloc((size_t)n * n * sizeof(*f->routes));
	for (size_t i = 0; i < (size_t)n * n; i++)
		f->routes[i].len = UINT32_MAX;
	f->free_head = f->base_head = f->base_tail = NIL;
	set_next_event(f, INFINITY);
	f->issued = snr_xcalloc(n, sizeof(*f->issued));
	f->id_stride = n;
	return f;
}

void ta1_fabric_free(struct ta1_fabric *f)
{
	if (!f)
		return;
	free(f->models);
	free(f->issued);
	free(f->res);
	free(f->link_of);
	free(f->routes);
	free(f->route_links);
	free(f->dmas);
	free(f->queues);
	free(f->active);
	free(f->used);
	free(f->fix);
	free(f->sampled);
	free(f);
}

void ta1_fabric_attach(struct ta1_fabric *f, unsigned chip, struct ta1_timing_model *t)
{
	if (chip < f->nchips)
		f->models[chip] = t;
}

struct ta1_timing_model *ta1_fabric_model(const struct ta1_fabric *f, unsigned chip)
{
	return chip < f->nchips ? f->models[chip] : NULL;
}

const struct snr_config *ta1_fabric_config(const struct ta1_fabric *f)
{
	return &f->cfg;
}

unsigned ta1_fabric_nchips(const struct ta1_fabric *f)
{
	return f->nchips;
}

/* One step along a ring of n from a toward b, the shorter way (+ on a tie):
 * +1, -1 or 0 when there. */
static int ring_step(unsigned a, unsigned b, unsigned n)
{
	if (a == b)
		return 0;
	unsigned fwd = (b + n - a) % n;
	return fwd <= n - fwd ? 1 : -1;
}

static const struct route *route_of(struct ta1_fabric *f, unsigned a, unsigned b)
{
	struct route *r = &f->routes[(size_t)a * f->nchips + b];
	if (r->len != UINT32_MAX)
		return r;
	r->off = (uint32_t)f->nroute_links;
	r->len = 0;
	unsigned at = a, n = f->nchips, x = f->torus_x, y = f->torus_y;
	while (at != b) {
		unsigned next;
		switch (f->cfg.ici_topology) {
		case SNR_TOPOLOGY_RING:
			next = (unsigned)((at + n + (unsigned)ring_step(at, b, n)) % n);
			break;
		case SNR_TOPOLOGY_TORUS: {
			unsigned ax = at % x, ay = at / x, bx = b % x, by = b / x;
			if (ax != bx)
				next = ay * x + (unsigned)((ax + x + (unsigned)ring_step(ax, bx, x)) % x);
			else
				next = ((unsigned)((ay + y + (unsigned)ring_step(ay, by, y)) % y)) * x + ax;
			break;
		}
		default:
			next = b;
		}
		if (f->nroute_links == f->cap_route_links) {
			f->cap_route_links = f->cap_route_links ? 2 * f->cap_route_links : 64;
			f->route_links = snr_xrealloc(f->route_links, f->cap_route_links * sizeof(*f->route_links));
		}
		f->route_links[f->nroute_links++] = f->link_of[at * n + next];
		r->len++;
		at = next;
	}
	return r;
}

unsigned ta1_fabric_hops(const struct ta1_fabric *f, unsigned a, unsigned b)
{
	if (a >= f->nchips || b >= f->nchips)
		return 0;
	return route_of((struct ta1_fabric *)f, a, b)->len;
}

size_t ta1_fabric_nresources(const struct ta1_fabric *f)
{
	return f->nres;
}

void ta1_fabric_resource(const struct ta1_fabric *f, size_t i, struct ta1_fabric_resource *out)
{
	memset(out, 0, sizeof(*out));
	if (i >= f->nres)
		return;
	const struct resource *r = &f->res[i];
	static const char *const port[PORTS_PER_CHIP] = {"core", "VMEM", "HBM"};
	if (r->from == UINT32_MAX)
		snprintf(out->name, sizeof(out->name), "chip %zu %s port", i / PORTS_PER_CHIP, port[i % PORTS_PER_CHIP]);
	else
		snprintf(out->name, sizeof(out->name), "link %u->%u", r->from, r->to);
	out->bytes_per_cycle = r->bw;
	out->bytes = r->bytes;
	out->busy_cycles = r->busy;
	out->contended_cycles = r->contended;
}

/* ---- records and queues -------------------------------------------------- */

uint32_t ta1_fabric_dma_alloc(struct ta1_fabric *f)
{
	uint32_t i = f->free_head;
	if (i != NIL) {
		f->free_head = f->dmas[i].next;
	} else {
		if (f->ndmas == f->cap_dmas) {
			f->cap_dmas = f->cap_dmas ? 2 * f->cap_dmas : 16;
			f->dmas = snr_xrealloc(f->dmas, f->cap_dmas * sizeof(*f->dmas));
		}
		i = f->ndmas++;
	}
	memset(&f->dmas[i], 0, sizeof(f->dmas[i]));
	f->dmas[i].next = NIL;
	f->dmas[i].queue = NIL;
	f->dmas[i].src_port = f->dmas[i].dst_port = NIL;
	f->dmas[i].peer = TA1_FABRIC_NO_PEER;
	f->dmas[i].src_space = f->dmas[i].dst_space = TA1_SPACE_NONE;
	f->dmas[i].refs = 1;
	return i;
}

struct ta1_dma *ta1_fabric_dma(struct ta1_fabric *f, uint32_t i)
{
	return &f->dmas[i];
}

void ta1_fabric_release(struct ta1_fabric *f, uint32_t i)
{
	struct ta1_dma *d = &f->dmas[i];
	if (d->refs && --d->refs)
		return;
	d->state = TA1_DMA_FREE;
	d->next = f->free_head;
	f->free_head = i;
}

static uint32_t port_of(const struct ta1_fabric *f, uint8_t space, uint16_t chip)
{
	unsigned k = space == TA1_SPACE_CORE ? 0 : space == TA1_SPACE_HBM ? 2 : 1;
	return (chip < f->nchips ? chip : 0) * PORTS_PER_CHIP + k;
}

static uint32_t queue_id(struct ta1_fabric *f, uint16_t owner, uint32_t src, uint32_t dst)
{
	for (uint32_t i = 0; i < f->nqueues; i++)
		if (f->queues[i].owner == owner && f->queues[i].src_port == src && f->queues[i].dst_port == dst)
			return i;
	if (f->nqueues == f->cap_queues) {
		f->cap_queues = f->cap_queues ? 2 * f->cap_queues : 8;
		f->queues = snr_xrealloc(f->queues, f->cap_queues * sizeof(*f->queues));
	}
	f->queues[f->nqueues] =
	    (struct queue){.owner = owner, .src_port = src, .dst_port = dst, .head = NIL, .tail = NIL, .active = NIL};
	return f->nqueues++;
}

void ta1_fabric_route(struct ta1_fabric *f, struct ta1_dma *d, uint8_t src_space, uint16_t src_chip,
		      uint8_t dst_space, uint16_t dst_chip, uint64_t base_start)
{
	d->src_space = src_space;
	d->dst_space = dst_space;
	d->src_chip = src_space == TA1_SPACE_NONE ? d->owner : src_chip;
	d->dst_chip = dst_space == TA1_SPACE_NONE ? d->owner : dst_chip;
	d->queue = NIL;
	d->src_port = d->dst_port = NIL;
	uint64_t hops = 0;
	if (d->bytes && src_space != TA1_SPACE_NONE && dst_space != TA1_SPACE_NONE && src_chip < f->nchips &&
	    dst_chip < f->nchips) {
		uint32_t s = port_of(f, src_space, src_chip), k = port_of(f, dst_space, dst_chip);
		d->src_port = s;
		d->dst_port = k == s ? NIL : k;
		d->queue = queue_id(f, d->owner, s, k);
		hops = route_of(f, src_chip, dst_chip)->len;
	} else {
		if (d->bytes && src_space != TA1_SPACE_NONE && dst_space != TA1_SPACE_NONE && !f->warned) {
			/* a caller that sized the fabric by a config without the pod's chips */
			snr_err("timing model: a DMA between chips %u and %u of a pod the model knows as %u chips is "
				"not timed (its bytes are not counted on any port or link)",
				src_chip, dst_chip, f->nchips);
			f->warned = true;
		}
		d->src_space = d->dst_space = TA1_SPACE_NONE;
	}
	d->base_end = base_start + f->cfg.dma_base_latency_cycles + hops * f->cfg.ici_hop_latency_cycles;
}

/* The resources a transfer crosses: its ports and its route's links. */
static unsigned resources_of(struct ta1_fabric *f, const struct ta1_dma *d, uint32_t *out, unsigned cap)
{
	unsigned n = 0;
	out[n++] = d->src_port;
	const struct route *r = route_of(f, d->src_chip, d->dst_chip);
	for (uint32_t k = 0; k < r->len && n < cap - 1; k++)
		out[n++] = f->route_links[r->off + k];
	if (d->dst_port != NIL)
		out[n++] = d->dst_port;
	return n;
}

#define MAX_CROSSED 520 /* two ports and the longest route (a ring of 256 chips: 128 hops; a torus fewer) */

/* Max-min fair rates of the active transfers (progressive filling): the
 * transfers through the resource with the least share per remaining
 * transfer get that share, leave, and the rest rise on. */
static void recompute_rates(struct ta1_fabric *f)
{
	uint32_t crossed[MAX_CROSSED];
	for (uint32_t u = 0; u < f->nused; u++) {
		struct resource *r = &f->res[f->used[u]];
		r->cap = r->bw;
		r->left = r->nactive;
	}
	for (uint32_t k = 0; k < f->nactive; k++)
		f->dmas[f->active[k]].rate = -1;
	if (f->cap_fix < f->nactive) {
		f->cap_fix = f->cap_active;
		f->fix = snr_xrealloc(f->fix, f->cap_fix * sizeof(*f->fix));
	}
	uint32_t unfixed = f->nactive;
	while (unfixed) {
		double best = INFINITY;
		for (uint32_t u = 0; u < f->nused; u++) {
			const struct resource *r = &f->res[f->used[u]];
			if (r->left && r->cap / r->left < best)
				best = r->cap / r->left;
		}
		uint32_t nfix = 0;
		for (uint32_t k = 0; k < f->nactive; k++) {
			const struct ta1_dma *d = &f->dmas[f->active[k]];
			if (d->rate >= 0)
				continue;
			unsigned n = resources_of(f, d, crossed, MAX_CROSSED);
			for (unsigned j = 0; j < n; j++) {
				const struct resource *r = &f->res[crossed[j]];
				if (r->left && r->cap / r->left <= best) {
					f->fix[nfix++] = f->active[k];
					break;
				}
			}
		}
		if (!nfix)
			break;
		for (uint32_t k = 0; k < nfix; k++) {
			struct ta1_dma *d = &f->dmas[f->fix[k]];
			d->rate = best > 0 ? best : 0;
			unsigned n = resources_of(f, d, crossed, MAX_CROSSED);
			for (unsigned j = 0; j < n; j++) {
				struct resource *r = &f->res[crossed[j]];
				r->cap = r->cap > best ? r->cap - best : 0;
				r->left--;
			}
		}
		unfixed -= nfix;
	}
}

static void use_resources(struct ta1_fabric *f, const struct ta1_dma *d, int delta)
{
	uint32_t crossed[MAX_CROSSED];
	unsigned n = resources_of(f, d, crossed, MAX_CROSSED);
	for (unsigned j = 0; j < n; j++) {
		struct resource *r = &f->res[crossed[j]];
		if (delta > 0) {
			if (r->nactive++ == 0) {
				if (f->nused == f->cap_used) {
					f->cap_used = f->cap_used ? 2 * f->cap_used : 16;
					f->used = snr_xrealloc(f->used, f->cap_used * sizeof(*f->used));
				}
				f->used[f->nused++] = crossed[j];
			}
		} else if (--r->nactive == 0) {
			for (uint32_t u = 0; u < f->nused; u++)
				if (f->used[u] == crossed[j]) {
					memmove(&f->used[u], &f->used[u + 1], (f->nused - u - 1) * sizeof(*f->used));
					f->nused--;
					break;
				}
		}
	}
}

static void recompute_next_event(struct ta1_fabric *f)
{
	double n = f->base_head != NIL ? (double)f->dmas[f->base_head].base_end : INFINITY;
	for (uint32_t k = 0; k < f->nactive; k++) {
		const struct ta1_dma *d = &f->dmas[f->active[k]];
		double e = d->rate > 0 ? snap(f->et + d->remaining / d->rate) : INFINITY;
		if (e < n)
			n = e;
	}
	set_next_event(f, n);
}

/* The completion's signals: the owner's flag, and the peer's for ta.dma.notify. */
static void signal_done(struct ta1_fabric *f, uint32_t i)
{
	struct ta1_dma *d = &f->dmas[i];
	d->state = TA1_DMA_DONE;
	d->refs = 1;
	struct ta1_timing_model *peer =
	    d->peer != TA1_FABRIC_NO_PEER && d->peer < f->nchips ? f->models[d->peer] : NULL;
	if (peer)
		d->refs = 2;
	if (f->models[d->owner])
		ta1_timing_dma_completed(f->models[d->owner], i, d);
	else
		ta1_fabric_release(f, i);
	if (peer)
		ta1_timing_dma_signalled(peer, i, &f->dmas[i]);
}

static void complete_transfer(struct ta1_fabric *f, uint32_t i, double now)
{
	struct ta1_dma *d = &f->dmas[i];
	d->done_cycle = cycle_of(now);
	d->remaining = 0;
	f->queues[d->queue].active = NIL;
	use_resources(f, d, -1);
	for (uint32_t k = 0; k < f->nactive; k++)
		if (f->active[k] == i) {
			f->active[k] = f->active[--f->nactive];
			break;
		}
	signal_done(f, i);
}

static void activate(struct ta1_fabric *f, uint32_t i, double now)
{
	struct ta1_dma *d = &f->dmas[i];
	d->state = TA1_DMA_ACTIVE;
	d->remaining = (double)d->bytes;
	f->queues[d->queue].active = i;
	use_resources(f, d, +1);
	if (f->nactive == f->cap_active) {
		f->cap_active = f->cap_active ? 2 * f->cap_active : 8;
		f->active = snr_xrealloc(f->active, f->cap_active * sizeof(*f->active));
	}
	f->active[f->nactive++] = i;
	if (f->models[d->owner])
		ta1_timing_dma_active(f->models[d->owner], d, cycle_of(now));
}

static int cmp_by_id(const void *a, const void *b, void *dmas)
{
	const struct ta1_dma *d = dmas;
	uint64_t x = d[*(const uint32_t *)a].id, y = d[*(const uint32_t *)b].id;
	return x < y ? -1 : x > y;
}

/* ---- samples ------------------------------------------------------------- */

/* Reports the period in progress's share of every resource that had one, to
 * the model of the chip that owns it, and starts the next. */
void ta1_fabric_flush_samples(struct ta1_fabric *f)
{
	for (uint32_t k = 0; k < f->nsampled; k++) {
		uint32_t i = f->sampled[k];
		struct resource *r = &f->res[i];
		bool port = r->from == UINT32_MAX;
		unsigned owner = port ? i / PORTS_PER_CHIP : r->from;
		struct snr_ev_fabric e = {
		    .resource = i,
		    .kind = (uint8_t)(port ? i % PORTS_PER_CHIP : SNR_FABRIC_LINK),
		    .from = (uint16_t)owner,
		    .to = (uint16_t)(port ? owner : r->to),
		    .start = f->period,
		    .end = f->period + TA1_FABRIC_SAMPLE_CYCLES,
		    .bytes_per_cycle = (uint64_t)r->bw,
		    .bytes = r->s_bytes,
		    .busy_cycles = r->s_busy,
		    .contended_cycles = r->s_contended,
		};
		if (f->models[owner] && e.bytes > 0)
			ta1_timing_fabric_sample(f->models[owner], &e);
		r->s_bytes = r->s_busy = r->s_contended = 0;
		r->sampled = false;
	}
	f->nsampled = 0;
	f->period += TA1_FABRIC_SAMPLE_CYCLES;
}

/* The active transfers' share of [from, to), inside one sampling period. */
static void sample(struct ta1_fabric *f, double from, double to)
{
	double dt = to - from;
	uint32_t crossed[MAX_CROSSED];
	for (uint32_t k = 0; k < f->nactive; k++) {
		const struct ta1_dma *d = &f->dmas[f->active[k]];
		unsigned n = resources_of(f, d, crossed, MAX_CROSSED);
		for (unsigned j = 0; j < n; j++)
			f->res[crossed[j]].s_bytes += d->rate * dt;
	}
	for (uint32_t u = 0; u < f->nused; u++) {
		struct resource *r = &f->res[f->used[u]];
		r->s_busy += dt;
		if (r->nactive > 1)
			r->s_contended += dt;
		if (!r->sampled) {
			r->sampled = true;
			f->sampled[f->nsampled++] = f->used[u];
		}
	}
}

/* [et, now) into the sampling periods it spans; an idle stretch skips them. */
static void sample_until(struct ta1_fabric *f, double now)
{
	double at = f->et;
	while (at < now) {
		double end = (double)(f->period + TA1_FABRIC_SAMPLE_CYCLES);
		if (!f->nused) { /* nothing moves: on to now's period */
			if (now < end)
				return;
			if (f->nsampled)
				ta1_fabric_flush_samples(f);
			uint64_t p = (uint64_t)(now / TA1_FABRIC_SAMPLE_CYCLES) * TA1_FABRIC_SAMPLE_CYCLES;
			if (p > f->period)
				f->period = p;
			return;
		}
		double to = now < end ? now : end;
		sample(f, at, to);
		if (to < end)
			return;
		ta1_fabric_flush_samples(f);
		at = to;
	}
}

/* Moves every active transfer's bytes on to `now` and counts the resources'
 * bytes and busy and contended time. */
static void advance(struct ta1_fabric *f, double now)
{
	double dt = now - f->et;
	if (dt > 0) {
		sample_until(f, now);
		uint32_t crossed[MAX_CROSSED];
		for (uint32_t k = 0; k < f->nactive; k++) {
			struct ta1_dma *d = &f->dmas[f->active[k]];
			d->remaining -= d->rate * dt;
			unsigned n = resources_of(f, d, crossed, MAX_CROSSED);
			for (unsigned j = 0; j < n; j++)
				f->res[crossed[j]].bytes += d->rate * dt;
		}
		for (uint32_t u = 0; u < f->nused; u++) {
			struct resource *r = &f->res[f->used[u]];
			r->busy += dt;
			if (r->nactive > 1)
				r->contended += dt;
		}
	}
	f->et = now;
}

void ta1_fabric_run_until(struct ta1_fabric *f, double limit)
{
	while (f->next_event <= limit && isfinite(f->next_event)) {
		double now = f->next_event;
		advance(f, now);

		/* Transfers that end now, in id order (ties are rare). */
		uint32_t ended[64], nended = 0;
		for (uint32_t k = 0; k < f->nactive && nended < 64; k++) {
			const struct ta1_dma *d = &f->dmas[f->active[k]];
			if (d->rate > 0 && snap(now + d->remaining / d->rate) <= now)
				ended[nended++] = f->active[k];
		}
		if (nended == 0 && f->nactive &&
		    (f->base_head == NIL || (double)f->dmas[f->base_head].base_end > now)) {
			/* Rounding kept the transfer that defined this event alive: end it. */
			uint32_t best = NIL;
			for (uint32_t k = 0; k < f->nactive; k++) {
				const struct ta1_dma *d = &f->dmas[f->active[k]];
				if (d->rate <= 0)
					continue;
				if (best == NIL || d->remaining / d->rate < f->dmas[best].remaining / f->dmas[best].rate)
					best = f->active[k];
			}
			if (best != NIL)
				ended[nended++] = best;
		}
		qsort_r(ended, nended, sizeof(ended[0]), cmp_by_id, f->dmas);
		for (uint32_t k = 0; k < nended; k++)
			complete_transfer(f, ended[k], now);

		/* Base latencies that end now: the DMA joins its queue. */
		while (f->base_head != NIL && (double)f->dmas[f->base_head].base_end <= now) {
			uint32_t i = f->base_head;
			struct ta1_dma *d = &f->dmas[i];
			f->base_head = d->next;
			if (f->base_head == NIL)
				f->base_tail = NIL;
			d->next = NIL;
			if (f->models[d->owner])
				ta1_timing_dma_started(f->models[d->owner], d);
			if (d->queue == NIL) {
				d->done_cycle = d->base_end;
				signal_done(f, i);
				continue;
			}
			struct queue *q = &f->queues[d->queue];
			d->state = TA1_DMA_QUEUED;
			if (q->tail == NIL)
				q->head = i;
			else
				f->dmas[q->tail].next = i;
			q->tail = i;
		}

		/* Idle queues start their head. */
		for (uint32_t k = 0; k < f->nqueues; k++) {
			struct queue *q = &f->queues[k];
			if (q->active != NIL || q->head == NIL)
				continue;
			uint32_t i = q->head;
			q->head = f->dmas[i].next;
			if (q->head == NIL)
				q->tail = NIL;
			f->dmas[i].next = NIL;
			activate(f, i, now);
		}
		recompute_rates(f);
		recompute_next_event(f);
	}
}

void ta1_fabric_single(struct ta1_fabric *f)
{
	f->id_stride = 1;
}

/* The base list's order: (base_end, id). */
static bool base_before(const struct ta1_dma *a, const struct ta1_dma *b)
{
	return a->base_end < b->base_end || (a->base_end == b->base_end && a->id < b->id);
}

void ta1_fabric_submit(struct ta1_fabric *f, uint32_t i)
{
	struct ta1_dma *d = &f->dmas[i];
	unsigned owner = d->owner < f->nchips ? d->owner : 0;
	/* The id is a function of the chip's own issues: whatever order a pod's
	 * chips reach the fabric in (the device's scheduler, or the replay's
	 * chips on threads), the same DMA gets the same id. */
	d->id = f->issued[owner]++ * f->id_stride + (f->id_stride > 1 ? owner : 0) + 1;
	d->state = TA1_DMA_IN_BASE;
	/* Insert by (base_end, id): at the tail but for a late one (a pre-window
	 * DMA, another chip's earlier issue, a longer route). */
	if (f->base_tail == NIL) {
		f->base_head = f->base_tail = i;
	} else if (!base_before(d, &f->dmas[f->base_tail])) {
		f->dmas[f->base_tail].next = i;
		f->base_tail = i;
	} else {
		uint32_t *pp = &f->base_head;
		while (*pp != NIL && !base_before(d, &f->dmas[*pp]))
			pp = &f->dmas[*pp].next;
		d->next = *pp;
		*pp = i;
	}
	if ((double)d->base_end < f->next_event)
		set_next_event(f, (double)d->base_end);
}

double ta1_fabric_next_event(const struct ta1_fabric *f)
{
	return f->next_event;
}

uint64_t ta1_fabric_next_event_cycle(const struct ta1_fabric *f)
{
	return f->next_event_cycle;
}
