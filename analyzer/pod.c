/*
 * pod.c: `snr analyze pod MSET`, the analyses of a pod's metrics set
 * (docs/analyses.md, "A pod"):
 *
 * - the critical path: from the chip that finished last, back through the
 *   peer signal that ended its last wait to the ta.dma.notify on the chip
 *   that sent it, and on from there to cycle 0. Its steps are disjoint
 *   stretches of the pod's clock (a chip running, a signal in flight), so
 *   their cycles add up to the last chip's cycles; a running stretch names
 *   the line that took most of its cycles;
 * - each port and link: bytes, busy and contended cycles, in total and per
 *   sampling period (the fabric's samples, sim/ta1_fabric.h);
 * - per chip, Elk's breakdown of its cycles: preload only (its DMA engine
 *   busy while the core waits), execute only, overlapped, stall (the core
 *   waits and none of its DMAs moves).
 */
#include "analyzer/pod.h"

#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

/* ---- the critical path ---------------------------------------------------- */

enum step_kind { STEP_RUN, STEP_SIGNAL };

struct step {
	enum step_kind kind;
	unsigned chip;
	uint64_t start, end;
	uint64_t pc;              /* RUN: the top line's busiest pc; SIGNAL: the notify's */
	const struct snr_ev_peer *peer; /* SIGNAL: the signal; RUN: the wait it ended (NULL at the end) */
	unsigned waiter;          /* SIGNAL: the chip that waited */
	uint64_t line_cycles;     /* RUN: the top line's cycles in the stretch */
};

/* The signals that released each chip (those that stalled it), by arrival:
 * the walk asks each chip for ever earlier cycles, so a cursor per chip
 * moves back once over them (linear in the signals). */
struct released {
	const struct snr_ev_peer **v;
	size_t n, cursor;
};

static int cmp_done(const void *a, const void *b)
{
	const struct snr_ev_peer *x = *(const struct snr_ev_peer *const *)a, *y = *(const struct snr_ev_peer *const *)b;
	return x->done_cycle < y->done_cycle ? -1 : x->done_cycle > y->done_cycle;
}

static void released_init(struct released *r, const struct pod_chip *c)
{
	r->v = snr_xcalloc(c->npeers + 1, sizeof(*r->v));
	r->n = 0;
	for (size_t i = 0; i < c->npeers; i++) {
		const struct snr_ev_peer *e = &c->peers[i];
		if (e->stall_cycles && e->issue_cycle < e->done_cycle)
			r->v[r->n++] = e;
	}
	qsort(r->v, r->n, sizeof(*r->v), cmp_done);
	r->cursor = r->n;
}

/* The signal that released the chip last at or before cycle t: of the peer
 * waits that stalled, the latest to arrive. */
static const struct snr_ev_peer *last_signal(struct released *r, uint64_t t)
{
	while (r->cursor && r->v[r->cursor - 1]->done_cycle > t)
		r->cursor--;
	return r->cursor ? r->v[r->cursor - 1] : NULL;
}

/* Per running stretch: cycles per pc (an instruction's cycles run from its
 * issue to the next one's on its chip). */
struct pcmap {
	uint64_t *pc, *cycles;
	size_t n, cap; /* open addressing, cap a power of two */
};

static void pcmap_add(struct pcmap *m, uint64_t pc, uint64_t cycles)
{
	if (2 * (m->n + 1) > m->cap) {
		struct pcmap g = {NULL, NULL, 0, m->cap ? 2 * m->cap : 64};
		g.pc = snr_xcalloc(g.cap, sizeof(*g.pc));
		g.cycles = snr_xcalloc(g.cap, sizeof(*g.cycles));
		for (size_t i = 0; i < m->cap; i++)
			if (m->cycles[i])
				pcmap_add(&g, m->pc[i], m->cycles[i]);
		free(m->pc);
		free(m->cycles);
		*m = g;
	}
	size_t i = (size_t)(pc * 0x9e3779b97f4a7c15ull >> 20) & (m->cap - 1);
	while (m->cycles[i] && m->pc[i] != pc)
		i = (i + 1) & (m->cap - 1);
	if (!m->cycles[i])
		m->n++;
	m->pc[i] = pc;
	m->cycles[i] += cycles ? cycles : 0;
	if (!m->cycles[i]) /* a slot holds a pc once it has cycles */
		m->n--;
}

struct attrib {
	struct step *steps;
	size_t nsteps;
	unsigned chip;
	struct pcmap *maps; /* one per step */
	size_t k;           /* the first step not yet ended */
	bool have;
	uint64_t pc, issue;
};

static void attribute(struct attrib *a, uint64_t pc, uint64_t from, uint64_t to)
{
	/* the steps are disjoint stretches in time order and the instructions
	 * come in issue order: those that ended are passed for good */
	while (a->k < a->nsteps && a->steps[a->k].end <= from)
		a->k++;
	for (size_t k = a->k; k < a->nsteps && a->steps[k].start < to; k++) {
		struct step *s = &a->steps[k];
		if (s->kind != STEP_RUN || s->chip != a->chip || from >= s->end || to <= s->start)
			continue;
		uint64_t lo = from > s->start ? from : s->start, hi = to < s->end ? to : s->end;
		pcmap_add(&a->maps[k], pc, hi - lo);
	}
}

static void on_issue(void *u, const struct snr_ev_insn *e)
{
	struct attrib *a = u;
	if (a->have && e->issue > a->issue)
		attribute(a, a->pc, a->issue, e->issue);
	a->have = true;
	a->pc = e->pc;
	a->issue = e->issue;
}

struct byline {
	char *where;
	uint64_t pc, cycles;
};

static int cmp_byline(const void *a, const void *b)
{
	const struct byline *x = a, *y = b;
	int c = strcmp(x->where, y->where);
	return c ? c : x->pc < y->pc ? -1 : x->pc > y->pc;
}

/* Each running stretch's top line (by cycles, its pcs' summed) and, in it,
 * its busiest pc: one more read of the chips that have stretches. */
static int top_lines(struct pod *p, struct step *steps, size_t nsteps, char *err, size_t errlen)
{
	struct pcmap *maps = snr_xcalloc(nsteps, sizeof(*maps));
	int rc = 0;
	for (unsigned c = 0; c < p->nchips && !rc; c++) {
		bool any = false;
		for (size_t k = 0; k < nsteps; k++)
			any |= steps[k].kind == STEP_RUN && steps[k].chip == c;
		if (!any)
			continue;
		struct attrib a = {steps, nsteps, c, maps, 0, false, 0, 0};
		struct snr_tracker t = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = &a, .on_issue = on_issue};
		rc = snr_metrics_replay(p->chips[c].m, &t, err, errlen);
		if (!rc && a.have && p->chips[c].cycles > a.issue)
			attribute(&a, a.pc, a.issue, p->chips[c].cycles);
	}
	for (size_t k = 0; k < nsteps; k++) {
		struct pcmap *m = &maps[k];
		struct step *s = &steps[k];
		/* by line: the pcs' where-text (file:line (function)), summed: sorted
		 * by it, then one pass */
		struct byline *v = snr_xcalloc(m->n + 1, sizeof(*v));
		size_t nv = 0;
		for (size_t i = 0; i < m->cap; i++) {
			if (!m->cycles[i])
				continue;
			char buf[1024];
			v[nv++] = (struct byline){snr_xstrdup(pod_where(p, s->chip, m->pc[i], buf, sizeof(buf))), m->pc[i],
						  m->cycles[i]};
		}
		qsort(v, nv, sizeof(*v), cmp_byline);
		uint64_t best_cycles = 0;
		for (size_t i = 0, j; i < nv; i = j) {
			uint64_t line = 0, top = 0, top_pc = v[i].pc;
			for (j = i; j < nv && !strcmp(v[j].where, v[i].where); j++) {
				line += v[j].cycles;
				if (v[j].cycles > top || (v[j].cycles == top && v[j].pc < top_pc)) {
					top = v[j].cycles;
					top_pc = v[j].pc;
				}
			}
			if (line > best_cycles || (line == best_cycles && top_pc < s->pc)) {
				best_cycles = line;
				s->pc = top_pc;
			}
		}
		for (size_t i = 0; i < nv; i++)
			free(v[i].where);
		free(v);
		s->line_cycles = best_cycles;
		free(m->pc);
		free(m->cycles);
	}
	free(maps);
	return rc;
}

/* The walk back from the last chip to finish; steps in time order. */
static struct step *critical_path(struct pod *p, size_t *n, unsigned *last)
{
	unsigned c = 0;
	for (unsigned i = 1; i < p->nchips; i++)
		if (p->chips[i].cycles > p->chips[c].cycles)
			c = i;
	*last = c;
	size_t cap = 16, k = 0;
	struct step *s = snr_xcalloc(cap, sizeof(*s));
	struct released *rel = snr_xcalloc(p->nchips, sizeof(*rel));
	for (unsigned i = 0; i < p->nchips; i++)
		released_init(&rel[i], &p->chips[i]);
	uint64_t t = p->chips[c].cycles;
	const struct snr_ev_peer *ended = NULL; /* the wait the stretch after it ends at */
	for (;;) {
		if (k + 2 > cap) {
			cap *= 2;
			s = snr_xrealloc(s, cap * sizeof(*s));
		}
		const struct snr_ev_peer *e = last_signal(&rel[c], t);
		if (!e || e->chip >= p->nchips) {
			s[k++] = (struct step){.kind = STEP_RUN, .chip = c, .start = 0, .end = t, .peer = ended};
			break;
		}
		if (t > e->done_cycle)
			s[k++] = (struct step){.kind = STEP_RUN, .chip = c, .start = e->done_cycle, .end = t, .peer = ended};
		s[k++] = (struct step){.kind = STEP_SIGNAL,
				       .chip = e->chip,
				       .start = e->issue_cycle,
				       .end = e->done_cycle,
				       .pc = e->issue_pc,
				       .peer = e,
				       .waiter = c};
		t = e->issue_cycle; /* strictly earlier: the walk ends */
		c = e->chip;
		ended = NULL;
	}
	for (unsigned i = 0; i < p->nchips; i++)
		free(rel[i].v);
	free(rel);
	for (size_t i = 0; i < k / 2; i++) { /* time order */
		struct step x = s[i];
		s[i] = s[k - 1 - i];
		s[k - 1 - i] = x;
	}
	*n = k;
	return s;
}

static void step_what(struct pod *p, const struct step *s, char *buf, size_t len)
{
	char w[1024];
	if (s->kind == STEP_SIGNAL) {
		const struct snr_ev_peer *e = s->peer;
		snr_fmt(buf, len,
			"signal to chip %u: ta.dma.notify (DMA %llu, %llu bytes, flag %u) in flight, base latency and "
			"transfer; chip %u waited %llu cycles for it at pc 0x%llx %s",
			s->waiter, (unsigned long long)e->dma_id, (unsigned long long)e->bytes, e->flag, s->waiter,
			(unsigned long long)e->stall_cycles, (unsigned long long)e->wait_pc,
			pod_where(p, s->waiter, e->wait_pc, w, sizeof(w)));
	} else {
		snr_fmt(buf, len, "runs %s; its line with the most cycles (%llu of %llu)",
			s->start == 0 ? "from cycle 0" : "after the signal", (unsigned long long)s->line_cycles,
			(unsigned long long)(s->end - s->start));
	}
}

/* ---- Elk's breakdown ------------------------------------------------------- */

struct edge {
	uint64_t at;
	int8_t wait, dma; /* +1 opens, -1 closes */
};

static int cmp_edge(const void *a, const void *b)
{
	uint64_t x = ((const struct edge *)a)->at, y = ((const struct edge *)b)->at;
	return x < y ? -1 : x > y;
}

struct elk {
	uint64_t preload_only, execute_only, overlapped, stall;
};

/* Over [0, cycles): executing = the core not at a WAIT; preloading = its
 * DMA engine busy. */
static void elk_of(const struct pod_chip *c, struct elk *out)
{
	size_t n = 2 * (c->nwaits + c->ndma_busy), k = 0;
	struct edge *e = snr_xcalloc(n + 1, sizeof(*e));
	for (size_t i = 0; i < c->nwaits; i++) {
		e[k++] = (struct edge){c->waits[i].start, 1, 0};
		e[k++] = (struct edge){c->waits[i].end, -1, 0};
	}
	for (size_t i = 0; i < c->ndma_busy; i++) {
		e[k++] = (struct edge){c->dma_busy[i].start, 0, 1};
		e[k++] = (struct edge){c->dma_busy[i].end, 0, -1};
	}
	qsort(e, k, sizeof(*e), cmp_edge);
	memset(out, 0, sizeof(*out));
	long waiting = 0, moving = 0;
	uint64_t at = 0;
	for (size_t i = 0; i <= k; i++) {
		uint64_t next = i < k ? e[i].at : c->cycles;
		if (next > c->cycles)
			next = c->cycles;
		if (next > at) {
			uint64_t d = next - at;
			if (waiting > 0)
				*(moving > 0 ? &out->preload_only : &out->stall) += d;
			else
				*(moving > 0 ? &out->overlapped : &out->execute_only) += d;
			at = next;
		}
		if (i < k) {
			waiting += e[i].wait;
			moving += e[i].dma;
		}
	}
	free(e);
}

/* ---- output ---------------------------------------------------------------- */

static const char *res_name(const struct pod_resource *r, char *buf, size_t len)
{
	static const char *const port[] = {"core", "VMEM", "HBM"};
	if (r->kind == SNR_FABRIC_LINK)
		snr_fmt(buf, len, "link %u->%u", r->from, r->to);
	else
		snr_fmt(buf, len, "chip %u %s port", r->from, r->kind < 3 ? port[r->kind] : "?");
	return buf;
}

static json_t *pod_json(struct pod *p, const struct step *steps, size_t nsteps, unsigned last)
{
	json_t *root = json_object();
	json_object_set_new(root, "schema", json_string("snr.analyze.pod/1"));
	json_object_set_new(root, "set", json_string(p->dir));
	json_object_set_new(root, "chips_in_pod", json_integer(p->nchips));
	json_object_set_new(root, "last_chip", json_integer(last));
	json_object_set_new(root, "cycles", json_integer((json_int_t)p->chips[last].cycles));
	json_t *cp = json_array();
	for (size_t k = 0; k < nsteps; k++) {
		const struct step *s = &steps[k];
		char what[2048], w[1024];
		step_what(p, s, what, sizeof(what));
		json_t *o = json_object();
		json_object_set_new(o, "chip", json_integer(s->chip));
		json_object_set_new(o, "pc", json_integer((json_int_t)s->pc));
		json_object_set_new(o, "where", json_string(pod_where(p, s->chip, s->pc, w, sizeof(w))));
		json_object_set_new(o, "source", pod_source_json(p, s->chip, s->pc));
		json_object_set_new(o, "kind", json_string(s->kind == STEP_SIGNAL ? "signal" : "run"));
		json_object_set_new(o, "what", json_string(what));
		json_object_set_new(o, "cycles", json_integer((json_int_t)(s->end - s->start)));
		json_object_set_new(o, "start", json_integer((json_int_t)s->start));
		json_object_set_new(o, "end", json_integer((json_int_t)s->end));
		if (s->kind == STEP_RUN)
			json_object_set_new(o, "line_cycles", json_integer((json_int_t)s->line_cycles));
		else {
			const struct snr_ev_peer *e = s->peer;
			json_t *sig = json_object();
			json_object_set_new(sig, "dma_id", json_integer((json_int_t)e->dma_id));
			json_object_set_new(sig, "to_chip", json_integer(s->waiter));
			json_object_set_new(sig, "flag", json_integer(e->flag));
			json_object_set_new(sig, "bytes", json_integer((json_int_t)e->bytes));
			json_object_set_new(sig, "issue_index", json_integer(e->issue_index));
			json_object_set_new(sig, "wait_pc", json_integer((json_int_t)e->wait_pc));
			json_object_set_new(sig, "wait_where",
					    json_string(pod_where(p, s->waiter, e->wait_pc, w, sizeof(w))));
			json_object_set_new(sig, "wait_source", pod_source_json(p, s->waiter, e->wait_pc));
			json_object_set_new(sig, "wait_index", json_integer((json_int_t)e->wait_index));
			json_object_set_new(sig, "waited", json_integer((json_int_t)e->stall_cycles));
			json_object_set_new(o, "signal", sig);
		}
		json_array_append_new(cp, o);
	}
	json_object_set_new(root, "critical_path", cp);
	json_t *chips = json_array();
	for (unsigned c = 0; c < p->nchips; c++) {
		const struct pod_chip *pc = &p->chips[c];
		struct elk e;
		elk_of(pc, &e);
		json_t *o = json_object();
		json_object_set_new(o, "chip", json_integer(c));
		json_object_set_new(o, "cycles", json_integer((json_int_t)pc->cycles));
		json_object_set_new(o, "instructions", json_integer((json_int_t)pc->instructions));
		json_object_set_new(o, "peer_stall", json_integer((json_int_t)pc->stall_cycles[SNR_STALL_PEER]));
		json_object_set_new(o, "peer_signals", json_integer((json_int_t)pc->npeers));
		json_t *b = json_object();
		json_object_set_new(b, "preload_only", json_integer((json_int_t)e.preload_only));
		json_object_set_new(b, "execute_only", json_integer((json_int_t)e.execute_only));
		json_object_set_new(b, "overlapped", json_integer((json_int_t)e.overlapped));
		json_object_set_new(b, "stall", json_integer((json_int_t)e.stall));
		json_object_set_new(o, "elk", b);
		json_array_append_new(chips, o);
	}
	json_object_set_new(root, "chips", chips);
	json_t *res = json_array();
	for (size_t i = 0; i < p->nres; i++) {
		const struct pod_resource *r = &p->res[i];
		char name[64];
		json_t *o = json_object();
		json_object_set_new(o, "name", json_string(res_name(r, name, sizeof(name))));
		json_object_set_new(o, "resource", json_integer(r->resource));
		json_object_set_new(o, "kind", json_string(r->kind == SNR_FABRIC_LINK ? "link" : "port"));
		json_object_set_new(o, "from", json_integer(r->from));
		json_object_set_new(o, "to", json_integer(r->to));
		json_object_set_new(o, "bytes_per_cycle", json_integer((json_int_t)r->bytes_per_cycle));
		json_object_set_new(o, "bytes", json_real(r->bytes));
		json_object_set_new(o, "busy_cycles", json_real(r->busy));
		json_object_set_new(o, "contended_cycles", json_real(r->contended));
		json_t *ser = json_array();
		for (size_t k = 0; k < r->nsamples; k++) {
			const struct pod_sample *s = &r->samples[k];
			json_t *a = json_array();
			json_array_append_new(a, json_integer((json_int_t)s->start));
			json_array_append_new(a, json_integer((json_int_t)s->end));
			json_array_append_new(a, json_real(s->bytes));
			json_array_append_new(a, json_real(s->busy));
			json_array_append_new(a, json_real(s->contended));
			json_array_append_new(ser, a);
		}
		json_object_set_new(o, "series", ser);
		json_array_append_new(res, o);
	}
	json_object_set_new(root, "resources", res);
	return root;
}

static void pod_text(struct pod *p, const struct step *steps, size_t nsteps, unsigned last)
{
	printf("pod of %u chips (%s): chip %u finished last, at cycle %llu\n\n", p->nchips, p->dir, last,
	       (unsigned long long)p->chips[last].cycles);
	printf("critical path (each step a stretch of the pod's clock; they add up to chip %u's cycles):\n", last);
	printf("%5s %10s %10s %10s  %-18s %s\n", "chip", "start", "end", "cycles", "pc", "where / what");
	for (size_t k = 0; k < nsteps; k++) {
		const struct step *s = &steps[k];
		char what[2048], w[1024];
		step_what(p, s, what, sizeof(what));
		printf("%5u %10llu %10llu %10llu  0x%-16llx %s\n%56s%s\n", s->chip, (unsigned long long)s->start,
		       (unsigned long long)s->end, (unsigned long long)(s->end - s->start), (unsigned long long)s->pc,
		       pod_where(p, s->chip, s->pc, w, sizeof(w)), "", what);
	}
	printf("\nper chip, Elk's breakdown of its cycles (preload: its DMA engine busy; stall: waiting, none moving):\n");
	printf("%5s %12s %12s %12s %12s %12s %12s\n", "chip", "cycles", "preload-only", "execute-only", "overlapped",
	       "stall", "peer-stall");
	for (unsigned c = 0; c < p->nchips; c++) {
		struct elk e;
		elk_of(&p->chips[c], &e);
		printf("%5u %12llu %12llu %12llu %12llu %12llu %12llu\n", c, (unsigned long long)p->chips[c].cycles,
		       (unsigned long long)e.preload_only, (unsigned long long)e.execute_only,
		       (unsigned long long)e.overlapped, (unsigned long long)e.stall,
		       (unsigned long long)p->chips[c].stall_cycles[SNR_STALL_PEER]);
	}
	printf("\nports and links (sampled every period of the fabric; --json has the series):\n");
	printf("%-20s %8s %14s %12s %12s %8s %s\n", "port or link", "B/cycle", "bytes", "busy", "contended", "periods",
	       "busiest period (start: bytes)");
	for (size_t i = 0; i < p->nres; i++) {
		const struct pod_resource *r = &p->res[i];
		char name[64];
		size_t top = 0;
		for (size_t k = 1; k < r->nsamples; k++)
			if (r->samples[k].bytes > r->samples[top].bytes)
				top = k;
		/* rounded as snr device --timing --stats rounds them */
		printf("%-20s %8llu %14.0f %12.0f %12.0f %8zu", res_name(r, name, sizeof(name)),
		       (unsigned long long)r->bytes_per_cycle, r->bytes, fmax(0, ceil(r->busy - 1e-6)),
		       fmax(0, ceil(r->contended - 1e-6)), r->nsamples);
		if (r->nsamples)
			printf(" %llu: %.0f", (unsigned long long)r->samples[top].start, r->samples[top].bytes);
		putchar('\n');
	}
	if (!p->nres)
		printf("(no port or link moved bytes, or the set was written without fabric samples)\n");
}

json_t *an_pod_document(const char *dir, char *err, size_t errlen, int *status)
{
	struct pod p;
	if (pod_load(&p, dir, err, errlen, status)) {
		pod_free(&p);
		return NULL;
	}
	size_t nsteps;
	unsigned last;
	struct step *steps = critical_path(&p, &nsteps, &last);
	json_t *root = NULL;
	if (top_lines(&p, steps, nsteps, err, errlen))
		*status = 3;
	else
		root = pod_json(&p, steps, nsteps, last);
	free(steps);
	pod_free(&p);
	return root;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snr analyze pod MSET [--json]\n"
		   "\n"
		   "The analyses of a pod's metrics set (snr device --timing -o MSET, or a pod's\n"
		   "replay): the collective's critical path across chips (from the chip that\n"
		   "finished last back through the peer signals that ended its waits, each step\n"
		   "with its chip, pc and line); each port's and link's bytes, busy and contended\n"
		   "cycles over time; each chip's cycles split Elk's way (preload only, execute\n"
		   "only, overlapped, stall). docs/analyses.md, \"A pod\".\n"
		   "\n"
		   "exit status: 0, 2 on bad usage or an input that is not a pod's metrics set,\n"
		   "3 if the set is unfinished, misses a chip or a file is damaged.\n");
}

int snr_analyze_pod(int argc, char **argv)
{
	static const struct option opts[] = {
		{"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	bool json = false;
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'j': json = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		snr_err("analyze pod: %s", optind >= argc ? "give a pod's metrics set (snr device --timing -o MSET)"
							  : "give one pod's metrics set");
		return 2;
	}
	struct pod p;
	char err[2048];
	int status;
	if (pod_load(&p, argv[optind], err, sizeof(err), &status)) {
		snr_err("analyze pod: %s", err);
		pod_free(&p);
		return status;
	}
	size_t nsteps;
	unsigned last;
	struct step *steps = critical_path(&p, &nsteps, &last);
	if (top_lines(&p, steps, nsteps, err, sizeof(err))) {
		snr_err("analyze pod: %s", err);
		free(steps);
		pod_free(&p);
		return 3;
	}
	if (json) {
		json_t *root = pod_json(&p, steps, nsteps, last);
		json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(root);
	} else {
		pod_text(&p, steps, nsteps, last);
	}
	free(steps);
	pod_free(&p);
	return 0;
}
