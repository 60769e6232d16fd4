/*
 * pod_suggest.c: `snr analyze suggest POD [--verify]` on a pod: the pod
 * recording of `snr record --pod` (a trace set whose manifest says "pod"), or
 * the metrics set `snr replay POD -o MSET` wrote (docs/analyses.md, "suggest
 * on a pod").
 *
 * On a pod the chip that stalls is often not the one to change: a chip's
 * WAIT on a peer flag lasts until another chip's ta.dma.notify lands, and
 * what shortens it is that DMA issued earlier, on the chip that sends it.
 * The candidates are Algorithm 2's (suggest_alg2.c) on every chip's window,
 * on two kinds of stall:
 *
 * - a chip's own DMA its WAIT stalled on (the one-window Algorithm 2);
 * - a peer's DMA a chip's WAIT stalled on (the pod replay's peer events,
 *   analyzer/pod.h): the DMA is moved on the chip that issued it, with the
 *   waiting chip's stall as the stall to hide. A move cannot hide more than
 *   the DMA's backtail: where the stall exceeds it, the DMA moves as far as
 *   its dependencies allow (the estimate is then its backtail).
 *
 * Moves are grouped by place (chip, the DMA's pc, the pc it moves before).
 * --verify replays each group's move on the whole pod (replayer/pod.h,
 * snr_pod_replay_reordered): the moved chip's window in the moved order,
 * the others as recorded, on one fabric, so that a move on one chip changes
 * another's stall; every chip's pcs and end state are checked against the
 * recording, so a move that changes what any chip computes (the destination
 * on the peer overwritten while it still reads it, a register the moved
 * instructions clobber) is refused, naming what differs. Moves are ranked
 * by the pod's cycles saved, measured.
 */
#include "analyzer/pod_suggest.h"

#include <dirent.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <jansson.h>

#include "analyzer/deps.h"
#include "analyzer/pod.h"
#include "analyzer/suggest_alg2.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_pod.h"
#include "lib/snr_set.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "replayer/metrics.h"
#include "replayer/pod.h"

/* One candidate: Algorithm 2 on one DMA of chip `chip`, for its own WAIT's
 * stall or for a peer's (waiter, wait_pc). */
struct cand {
	unsigned chip;
	struct snr_deps_dma dma; /* a copy: its stall is the one to hide */
	struct suggestion s;
	bool remote;
	unsigned waiter;
	uint64_t wait_pc, wait_stall;
	size_t group;
};

/* A static move: the DMA at dma_pc of chip `chip` issued before before_pc. */
struct group {
	unsigned chip;
	uint64_t dma_pc, before_pc;
	size_t *members, n;
	uint64_t estimate;
	bool verified, ok;
	uint64_t cycles_after;
	int64_t saved;
	char reason[1200];
};

struct pod_plan {
	const char *dir;  /* the pod recording */
	struct pod pod;   /* its metrics set */
	struct snr_deps *d; /* per chip */
	struct cand *c;
	size_t nc, capc;
	struct group *g;
	size_t ng;
	uint64_t cycles;   /* the pod's, in the metrics set */
	uint64_t baseline; /* --verify: the pod replay's */
	bool verified;
	bool metrics_given; /* the input was a metrics set */
	bool baseline_known; /* the replay that wrote the metrics set gave the baseline (verified) */
};

/* ---- inputs --------------------------------------------------------------- */

static json_t *manifest(const char *dir)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, SNR_SET_MANIFEST);
	return json_load_file(path, 0, NULL);
}

bool snr_pod_suggest_is_pod(const char *path)
{
	if (!snr_is_set(path))
		return false;
	if (snr_pod_is(path))
		return true;
	json_t *m = manifest(path);
	bool pod = m && json_is_true(json_object_get(m, "pod"));
	json_decref(m);
	return pod;
}

/* Removes the metrics set this file wrote in a temporary folder. */
static void remove_tmp_set(const char *dir)
{
	DIR *dd = opendir(dir);
	if (dd) {
		struct dirent *e;
		char path[4600];
		while ((e = readdir(dd)))
			if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) {
				snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
				unlink(path);
			}
		closedir(dd);
	}
	rmdir(dir);
}

/* Each chip's metrics file of mset must come from chip k's trace of the pod
 * recording dir (the digest it records). 0, or -1 with err. */
static int same_traces(const struct pod *pod, const char *dir, char *err, size_t errlen)
{
	struct snr_pod rec;
	if (snr_pod_open(dir, &rec, err, errlen))
		return -1;
	int rc = 0;
	if (rec.chips != pod->nchips) {
		snr_fmt(err, errlen, "%s has %u chips, the pod recording %s %u", pod->dir, pod->nchips, dir, rec.chips);
		rc = -1;
	}
	for (unsigned k = 0; !rc && k < rec.chips; k++) {
		json_t *meta = json_loads(snr_metrics_meta_json(pod->chips[k].m), 0, NULL);
		json_t *bytes = json_object_get(meta, "trace_bytes");
		struct snr_trace_id want, got;
		bool has = json_is_integer(bytes) &&
			   snr_trace_id_parse(json_string_value(json_object_get(meta, "trace_digest")),
					      (uint64_t)json_integer_value(bytes), &want);
		json_decref(meta);
		if (!has) {
			snr_fmt(err, errlen,
				"%s: chip %u's metrics file records no digest of its trace (it was not written by snr "
				"replay POD -o): --verify needs the pod recording it was replayed from",
				pod->dir, k);
			rc = -1;
			break;
		}
		struct snr_trace *t = snr_trace_open(rec.chip[k].path, err, errlen);
		if (!t) {
			rc = -1;
			break;
		}
		snr_trace_id_of(t, &got);
		snr_trace_close(t);
		if (got.bytes != want.bytes || memcmp(&got, &want, sizeof(got))) {
			char a[64], b[64];
			snr_fmt(err, errlen,
				"%s: chip %u was replayed from a trace %s (%" PRIu64 " bytes), not %s (%s, %" PRIu64
				" bytes): name the pod recording it came from with --trace POD",
				pod->dir, k, snr_trace_id_text(&want, a, sizeof(a)), want.bytes, rec.chip[k].path,
				snr_trace_id_text(&got, b, sizeof(b)), got.bytes);
			rc = -1;
		}
	}
	snr_pod_free(&rec);
	return rc;
}

/* ---- the plan --------------------------------------------------------------- */

static struct cand *cand_new(struct pod_plan *p)
{
	if (p->nc == p->capc) {
		p->capc = p->capc ? 2 * p->capc : 16;
		p->c = snr_xrealloc(p->c, p->capc * sizeof(*p->c));
	}
	struct cand *c = &p->c[p->nc++];
	memset(c, 0, sizeof(*c));
	return c;
}

static const struct snr_deps_dma *dma_at(const struct snr_deps *d, int64_t issue_index)
{
	for (size_t k = 0; k < d->ndmas; k++)
		if (d->dmas[k].issue_index == issue_index)
			return &d->dmas[k];
	return NULL;
}

static uint64_t cand_dma_pc(const struct pod_plan *p, const struct cand *c)
{
	return snr_deps_insn_get(&p->d[c->chip], (uint64_t)c->dma.issue_index).pc;
}

static uint64_t cand_before_pc(const struct pod_plan *p, const struct cand *c)
{
	const struct snr_deps *d = &p->d[c->chip];
	return c->s.at < d->ninsn ? snr_deps_insn_get(d, c->s.at).pc : 0;
}

static int cmp_group_estimate(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (x->estimate != y->estimate)
		return x->estimate > y->estimate ? -1 : 1;
	if (x->chip != y->chip)
		return x->chip < y->chip ? -1 : 1;
	return x->dma_pc < y->dma_pc ? -1 : x->dma_pc > y->dma_pc;
}

static void plan_pod(struct pod_plan *p)
{
	unsigned n = p->pod.nchips;
	for (unsigned k = 0; k < n; k++) {
		const struct snr_deps *d = &p->d[k];
		/* its own stalls: the one-window Algorithm 2 */
		for (size_t i = 0; i < d->ndmas; i++) {
			const struct snr_deps_dma *m = &d->dmas[i];
			if (!m->stall_cycles || m->issue_index < 0)
				continue;
			struct cand *c = cand_new(p);
			c->chip = k;
			c->dma = *m;
			an_sg_evaluate(d, &c->dma, &c->s);
		}
	}
	/* the peers' stalls: each signal a WAIT stalled on, moved on the chip that sent it */
	for (unsigned w = 0; w < n; w++) {
		const struct pod_chip *pc = &p->pod.chips[w];
		for (size_t i = 0; i < pc->npeers; i++) {
			const struct snr_ev_peer *e = &pc->peers[i];
			if (!e->stall_cycles || e->issue_index < 0 || e->chip == w || e->chip >= n)
				continue;
			const struct snr_deps *d = &p->d[e->chip];
			const struct snr_deps_dma *m = dma_at(d, e->issue_index);
			if (!m)
				continue;
			struct cand *c = cand_new(p);
			c->chip = e->chip;
			c->remote = true;
			c->waiter = w;
			c->wait_pc = e->wait_pc;
			c->wait_stall = e->stall_cycles;
			c->dma = *m;
			/* the stall to hide is the waiter's; a move hides no more than
			 * the backtail, so past it the DMA goes as far as it can */
			uint64_t hide = e->stall_cycles;
			if (m->backtail_cycles && hide >= m->backtail_cycles)
				hide = m->backtail_cycles - 1;
			c->dma.stall_cycles = hide ? hide : 1;
			/* its destination is the waiter's memory: this chip's VMEM pages
			 * say nothing of it; the pod what-if's end state is the check */
			if (m->dst_chip != e->chip)
				c->dma.dst_space = TA1_SPACE_HBM;
			an_sg_evaluate(d, &c->dma, &c->s);
		}
	}
	/* group by place */
	p->g = snr_xcalloc(p->nc + 1, sizeof(*p->g));
	for (size_t i = 0; i < p->nc; i++) {
		struct cand *c = &p->c[i];
		if (!c->s.suggested)
			continue;
		uint64_t dpc = cand_dma_pc(p, c), bpc = cand_before_pc(p, c);
		struct group *g = NULL;
		for (size_t j = 0; j < p->ng && !g; j++)
			if (p->g[j].chip == c->chip && p->g[j].dma_pc == dpc && p->g[j].before_pc == bpc)
				g = &p->g[j];
		if (!g) {
			g = &p->g[p->ng++];
			g->chip = c->chip;
			g->dma_pc = dpc;
			g->before_pc = bpc;
			g->members = snr_xcalloc(p->nc, sizeof(*g->members));
		}
		/* an instance once (its own and a peer's stall may both name it): the larger estimate */
		size_t j = 0;
		while (j < g->n && p->c[g->members[j]].dma.issue_index != c->dma.issue_index)
			j++;
		if (j == g->n) {
			g->members[g->n++] = i;
			g->estimate += c->s.predicted;
		} else if (c->s.predicted > p->c[g->members[j]].s.predicted) {
			g->estimate += c->s.predicted - p->c[g->members[j]].s.predicted;
			g->members[j] = i;
		}
	}
	snr_qsort(p->g, p->ng, sizeof(*p->g), cmp_group_estimate);
	for (size_t j = 0; j < p->ng; j++)
		for (size_t k = 0; k < p->g[j].n; k++)
			p->c[p->g[j].members[k]].group = j;
}

/* ---- what-ifs on the pod ------------------------------------------------------------ */

struct moved {
	uint64_t at, index;
};

static int cmp_moved(const void *a, const void *b)
{
	const struct moved *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->at < y->at ? -1 : x->at > y->at;
}

static int cmp_moved_at(const void *a, const void *b)
{
	const struct moved *x = a, *y = b;
	if (x->at != y->at)
		return x->at < y->at ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

/* Group g's order of its chip's window: each instance's DMA and the operand
 * slice at or after its point, in their order, just before the point (an
 * instruction several instances move goes to the earliest point). */
static uint64_t *group_order(const struct pod_plan *p, const struct group *g, uint64_t n, uint8_t **moved_at)
{
	size_t cap = 0, m = 0;
	for (size_t j = 0; j < g->n; j++)
		cap += p->c[g->members[j]].dma.nslice + 1;
	struct moved *v = snr_xcalloc(cap + 1, sizeof(*v));
	for (size_t j = 0; j < g->n; j++) {
		const struct cand *c = &p->c[g->members[j]];
		for (size_t k = c->s.slice0; k <= c->dma.nslice; k++) {
			uint64_t q = k < c->dma.nslice ? c->dma.slice[k] : (uint64_t)c->dma.issue_index;
			if (q < n && q >= c->s.at)
				v[m++] = (struct moved){c->s.at, q};
		}
	}
	snr_qsort(v, m, sizeof(*v), cmp_moved);
	size_t u = 0;
	for (size_t k = 0; k < m; k++)
		if (!u || v[u - 1].index != v[k].index)
			v[u++] = v[k];
	uint8_t *is_moved = snr_xcalloc(n + 1, 1);
	for (size_t k = 0; k < u; k++)
		is_moved[v[k].index] = 1;
	snr_qsort(v, u, sizeof(*v), cmp_moved_at);
	uint64_t *order = snr_xmalloc((n ? n : 1) * sizeof(*order)), pos = 0;
	uint8_t *mv = snr_xcalloc(n + 1, 1);
	size_t mk = 0;
	for (uint64_t i = 0; i < n; i++) {
		for (; mk < u && v[mk].at == i; mk++) {
			mv[pos] = 1;
			order[pos++] = v[mk].index;
		}
		if (!is_moved[i])
			order[pos++] = i;
	}
	free(is_moved);
	free(v);
	*moved_at = mv;
	return order;
}

/* The first line of a pod replay's report, or the chip's own note. */
static void first_difference(const struct snr_pod_replay *r, char *buf, size_t len)
{
	const char *rep = r->report;
	for (unsigned k = 0; !rep[0] && k < r->chips; k++)
		if (!r->chip[k].r.ok && r->chip[k].r.report[0])
			rep = r->chip[k].r.report;
	size_t l = strcspn(rep, "\n");
	snr_fmt(buf, len, "%.*s", (int)(l < 1000 ? l : 1000), rep[0] ? rep : "the pod replay did not verify");
}

static int verify_pod(struct pod_plan *p, const struct snr_replay_opts *ro, unsigned verify_max, char *err,
		      size_t errlen)
{
	struct snr_pod_replay r;
	if (!p->baseline_known) {
		if (snr_pod_replay(p->dir, ro, &r, err, errlen)) {
			snr_pod_replay_free(&r);
			return -1;
		}
		if (!r.ok) {
			char why[1200];
			first_difference(&r, why, sizeof(why));
			snr_fmt(err, errlen, "%s: the pod's own replay does not verify, so no what-if can: %s", p->dir, why);
			snr_pod_replay_free(&r);
			return -1;
		}
		p->baseline = r.cycles;
		snr_pod_replay_free(&r);
	}
	p->verified = true;
	for (size_t j = 0; j < p->ng && j < verify_max; j++) {
		struct group *g = &p->g[j];
		uint64_t n = p->d[g->chip].ninsn;
		uint8_t *mv;
		uint64_t *order = group_order(p, g, n, &mv);
		struct snr_pod_reorder rr = {g->chip, order, mv, n};
		char werr[1024] = "";
		g->verified = true;
		if (snr_pod_replay_reordered(p->dir, ro, &rr, &r, werr, sizeof(werr))) {
			snr_fmt(g->reason, sizeof(g->reason), "the pod what-if could not run: %s", werr);
		} else {
			g->cycles_after = r.cycles;
			g->saved = (int64_t)p->baseline - (int64_t)r.cycles;
			g->ok = r.ok;
			if (!r.ok) {
				char why[1100];
				first_difference(&r, why, sizeof(why));
				snr_fmt(g->reason, sizeof(g->reason), "refused: the moved pod computes something else: %s", why);
			} else if (g->saved <= 0)
				snr_fmt(g->reason, sizeof(g->reason), "the pod what-if saves nothing (%" PRIu64 " -> %" PRIu64 " cycles)",
					p->baseline, r.cycles);
		}
		snr_pod_replay_free(&r);
		free(order);
		free(mv);
	}
	return 0;
}

static bool confirmed(const struct group *g) { return g->verified && g->ok && g->saved > 0; }

/* Confirmed first, by cycles saved; then the rest by estimate. */
static int cmp_rank(const void *a, const void *b)
{
	const struct group *x = a, *y = b;
	if (confirmed(x) != confirmed(y))
		return confirmed(x) ? -1 : 1;
	if (confirmed(x) && x->saved != y->saved)
		return x->saved > y->saved ? -1 : 1;
	return cmp_group_estimate(a, b);
}

/* ---- output ---------------------------------------------------------------------------- */

static const char *place(struct pod_plan *p, unsigned chip, uint64_t pc, char *buf, size_t len)
{
	char w[600];
	pod_where(&p->pod, chip, pc, w, sizeof(w));
	snr_fmt(buf, len, "%s pc 0x%" PRIx64, w, pc);
	return buf;
}

static void print_text(FILE *f, struct pod_plan *p, unsigned verify_max)
{
	fprintf(f, "suggest: pod %s, %u chips, %" PRIu64 " cycles; %zu stalls on a DMA (a chip's own or a peer's), %zu "
		   "moves\n",
		p->dir, p->pod.nchips, p->cycles, p->nc, p->ng);
	if (p->verified)
		fprintf(f, "pod what-if: each move replayed on the whole pod (its chip's window moved, the others as "
			   "recorded; every chip's pcs and end state checked): baseline %" PRIu64 " cycles\n",
			p->baseline);
	else
		fputs("estimates only (Algorithm 2's upper bounds): --verify measures each move with a pod what-if\n", f);
	if (!p->ng) {
		fputs("\nno move: no stalled DMA has a backtail to move it by (snr analyze deps on a chip's window says why)\n",
		      f);
		return;
	}
	fputc('\n', f);
	for (size_t j = 0; j < p->ng; j++) {
		struct group *g = &p->g[j];
		char a[800], b[800];
		fprintf(f, "%2zu. chip %u: move the DMA at %s up to before %s (%zu instance%s)\n", j + 1, g->chip,
			place(p, g->chip, g->dma_pc, a, sizeof(a)), place(p, g->chip, g->before_pc, b, sizeof(b)), g->n,
			g->n == 1 ? "" : "s");
		for (size_t k = 0; k < g->n; k++) {
			const struct cand *c = &p->c[g->members[k]];
			if (c->remote)
				fprintf(f, "    releases chip %u's wait at %s, which stalled %" PRIu64 " cycles on it\n", c->waiter,
					place(p, c->waiter, c->wait_pc, a, sizeof(a)), c->wait_stall);
			else
				fprintf(f, "    its own chip's wait stalled %" PRIu64 " cycles on it\n", c->dma.stall_cycles);
		}
		if (confirmed(g))
			fprintf(f, "    pod: %" PRIu64 " -> %" PRIu64 " cycles, saves %" PRId64 " (%.1f%%; pod what-if, end state "
				   "verified); estimate at most %" PRIu64 "\n",
				p->baseline, g->cycles_after, g->saved, 100.0 * (double)g->saved / (double)p->baseline,
				g->estimate);
		else if (g->verified)
			fprintf(f, "    not confirmed: %s; estimate was at most %" PRIu64 "\n", g->reason, g->estimate);
		else
			fprintf(f, "    estimate: at most %" PRIu64 " cycles (Algorithm 2; %s)\n", g->estimate,
				p->verified ? "beyond --verify-max" : "not verified");
	}
	(void)verify_max;
}

static json_t *place_json(struct pod_plan *p, unsigned chip, uint64_t pc)
{
	json_t *o = json_object();
	json_object_set_new(o, "pc", json_integer((json_int_t)pc));
	json_object_set_new(o, "source", pod_source_json(&p->pod, chip, pc));
	return o;
}

static json_t *plan_json(struct pod_plan *p, unsigned verify_max)
{
	json_t *root = json_object(), *moves = json_array();
	json_object_set_new(root, "analysis", json_string("suggest"));
	json_object_set_new(root, "pod", json_string(p->dir));
	/* the metrics set read: the user's, or none (a pod recording's replay, in a temporary folder) */
	json_object_set_new(root, "metrics", p->metrics_given ? json_string(p->pod.dir) : json_null());
	json_object_set_new(root, "chips", json_integer(p->pod.nchips));
	json_object_set_new(root, "cycles", json_integer((json_int_t)p->cycles));
	json_object_set_new(root, "verified", json_boolean(p->verified));
	json_object_set_new(root, "verify_max", p->verified ? json_integer(verify_max) : json_null());
	json_object_set_new(root, "cycles_before", p->verified ? json_integer((json_int_t)p->baseline) : json_null());
	for (size_t j = 0; j < p->ng; j++) {
		struct group *g = &p->g[j];
		const struct cand *c0 = &p->c[g->members[0]];
		json_t *m = json_object(), *rel = json_array(), *ops = json_array(), *ids = json_array();
		json_object_set_new(m, "chip", json_integer(g->chip));
		json_object_set_new(m, "dma", place_json(p, g->chip, g->dma_pc));
		json_object_set_new(m, "before", place_json(p, g->chip, g->before_pc));
		for (size_t k = c0->s.slice0; k < c0->dma.nslice; k++)
			json_array_append_new(ops, json_integer((json_int_t)snr_deps_insn_get(&p->d[g->chip], c0->dma.slice[k]).pc));
		json_object_set_new(m, "operand_pcs", ops);
		json_object_set_new(m, "instances", json_integer((json_int_t)g->n));
		for (size_t k = 0; k < g->n; k++) {
			const struct cand *c = &p->c[g->members[k]];
			json_array_append_new(ids, json_integer((json_int_t)c->dma.id));
			json_t *r = json_object();
			json_object_set_new(r, "chip", json_integer(c->remote ? c->waiter : c->chip));
			json_object_set_new(r, "wait", c->remote ? place_json(p, c->waiter, c->wait_pc) : json_null());
			json_object_set_new(r, "stall_cycles", json_integer((json_int_t)(c->remote ? c->wait_stall : c->dma.stall_cycles)));
			json_array_append_new(rel, r);
		}
		json_object_set_new(m, "dma_ids", ids);
		json_object_set_new(m, "releases", rel);
		json_object_set_new(m, "estimate_cycles", json_integer((json_int_t)g->estimate));
		json_object_set_new(m, "cycles_before", g->verified ? json_integer((json_int_t)p->baseline) : json_null());
		json_object_set_new(m, "cycles_after",
				    g->verified && g->cycles_after ? json_integer((json_int_t)g->cycles_after) : json_null());
		json_object_set_new(m, "realized_cycles", g->verified && g->cycles_after ? json_integer(g->saved) : json_null());
		json_object_set_new(m, "end_state_verified", g->verified ? json_boolean(g->ok) : json_null());
		json_object_set_new(m, "confirmed", g->verified ? json_boolean(confirmed(g)) : json_null());
		json_object_set_new(m, "reason", g->verified && !confirmed(g) ? json_string(g->reason) : json_null());
		json_array_append_new(moves, m);
	}
	json_object_set_new(root, "moves", moves);
	return root;
}

/* ---- the command ---------------------------------------------------------------------- */

static const char pod_suggest_usage[] =
	"usage: snr analyze suggest POD|MSET [--verify] [--verify-max N] [--json] [--max-chain K]\n"
	"                           [--config M.json] [--trace POD]\n"
	"\n"
	"On a pod (the trace set of snr record --pod, or the metrics set snr replay POD -o MSET\n"
	"wrote): Algorithm 2 on every chip's window, for each DMA a WAIT stalled on, the chip's own\n"
	"or a peer's (a ta.dma.notify another chip waited for): the DMA moves on the chip that\n"
	"issues it, whichever chip stalls. Each move names its chip, file:line, function and pc.\n"
	"\n"
	"  --verify        replay each move on the whole pod (the moved chip's window moved, the\n"
	"                  others as recorded, one fabric): the pod's cycles after it, measured, and\n"
	"                  every chip's pcs and end state checked; moves ranked by the pod's cycles\n"
	"                  saved. For a metrics set, the pod recording it was replayed from (checked\n"
	"                  against the digests it records)\n"
	"  --verify-max N  pod what-ifs for at most the N moves of largest estimate (default 16)\n"
	"  --json          machine-readable output (docs/analyses.md, \"suggest on a pod\")\n"
	"  --max-chain K   the lightweight threshold of the relaxed dependencies (default 16)\n"
	"  --config M.json (a pod recording) the machine config of its replays\n"
	"  --trace POD     (a metrics set, with --verify) the pod recording instead of the one it names\n";

int snr_analyze_pod_suggest(int argc, char **argv)
{
	static const struct option opts[] = {{"verify", no_argument, NULL, 'v'},
					     {"verify-max", required_argument, NULL, 'n'},
					     {"json", no_argument, NULL, 'j'},
					     {"max-chain", required_argument, NULL, 'k'},
					     {"config", required_argument, NULL, 'c'},
					     {"trace", required_argument, NULL, 't'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	bool verify = false, json = false;
	unsigned verify_max = SNR_SUGGEST_DEFAULT_VERIFY_MAX;
	struct snr_deps_opts o = {0};
	const char *config = NULL, *trace = NULL;
	int opt;
	optind = 1;
	int saved_opterr = opterr;
	opterr = 0; /* said here, naming the pod form */
	while ((opt = getopt_long(argc, argv, ":h", opts, NULL)) != -1) {
		switch (opt) {
		case 'v': verify = true; break;
		case 'n':
			if (snr_deps_parse_count(optarg, "suggest", "--verify-max", &verify_max))
				return 2;
			break;
		case 'j': json = true; break;
		case 'k':
			if (snr_deps_parse_count(optarg, "suggest", "--max-chain", &o.max_chain))
				return 2;
			break;
		case 'c': config = optarg; break;
		case 't': trace = optarg; break;
		case 'h': opterr = saved_opterr; fputs(pod_suggest_usage, stdout); return 0;
		case ':':
			snr_err("analyze suggest: %s needs a value", argv[optind - 1]);
			opterr = saved_opterr;
			return 2;
		default:
			snr_err("analyze suggest: on a pod, %s is not taken (snr analyze suggest POD --help)", argv[optind - 1]);
			opterr = saved_opterr;
			return 2;
		}
	}
	opterr = saved_opterr;
	if (optind != argc - 1) {
		fputs(pod_suggest_usage, stderr);
		return 2;
	}
	const char *in = argv[optind];
	bool is_rec = snr_pod_is(in);
	if (trace && (is_rec || !verify)) {
		snr_err("analyze suggest: --trace names the pod recording of a metrics set, with --verify; %s", is_rec
			? "the input is a pod recording itself" : "--verify is not given");
		return 2;
	}
	if (config && !is_rec) {
		snr_err("analyze suggest: --config is for a pod recording; %s's replay used the config it carries", in);
		return 2;
	}
	char err[4096] = "", tmp[4096] = "";
	int rc = 1, status = 1;
	struct pod_plan p;
	memset(&p, 0, sizeof(p));
	json_t *man = NULL;
	struct snr_replay_opts ro = {.config_path = config};
	/* the metrics set: the user's, or one the pod's replay writes in a temporary folder */
	const char *mset = in;
	if (is_rec) {
		p.dir = in;
		const char *td = getenv("TMPDIR");
		snprintf(tmp, sizeof(tmp), "%s/snr-pod-suggest-XXXXXX", td && *td ? td : "/tmp");
		if (!mkdtemp(tmp)) {
			snr_err("analyze suggest: cannot make a temporary folder %s: %s", tmp, strerror(errno));
			return 1;
		}
		char path[4200];
		snprintf(path, sizeof(path), "%s/pod.mset", tmp);
		struct snr_replay_opts mo = ro;
		mo.metrics_path = path;
		struct snr_pod_replay r;
		if (snr_pod_replay(in, &mo, &r, err, sizeof(err))) {
			snr_pod_replay_free(&r);
			goto out;
		}
		if (!r.ok) {
			char why[1200];
			first_difference(&r, why, sizeof(why));
			snr_fmt(err, sizeof(err), "%s: the pod's replay does not verify: %s", in, why);
			snr_pod_replay_free(&r);
			goto out;
		}
		p.baseline = r.cycles;
		p.baseline_known = true;
		snr_pod_replay_free(&r);
		mset = snr_xstrdup(path);
	}
	if (pod_load(&p.pod, mset, err, sizeof(err), &status)) {
		rc = status;
		goto out;
	}
	if (!is_rec) {
		p.metrics_given = true;
		man = manifest(in);
		p.dir = trace ? trace : json_string_value(json_object_get(man, "trace"));
		if (verify && !p.dir) {
			snr_fmt(err, sizeof(err),
				"%s names no pod recording (written by snr device --timing, not by snr replay POD -o): "
				"--verify replays the pod recording; name it with --trace POD",
				in);
			goto out;
		}
		if (verify && !snr_pod_is(p.dir)) {
			snr_fmt(err, sizeof(err), "%s (the pod recording %s names) is not a pod recording", p.dir,
				trace ? "--trace" : in);
			goto out;
		}
		if (verify && same_traces(&p.pod, p.dir, err, sizeof(err)))
			goto out;
		if (!p.dir)
			p.dir = in;
	}
	p.d = snr_xcalloc(p.pod.nchips, sizeof(*p.d));
	for (unsigned k = 0; k < p.pod.nchips; k++) {
		if (p.pod.chips[k].cycles > p.cycles)
			p.cycles = p.pod.chips[k].cycles;
		char derr[2048];
		if (snr_deps_run(&p.d[k], p.pod.chips[k].path, &o, derr, sizeof(derr))) {
			snr_fmt(err, sizeof(err), "chip %u: %s", k, derr);
			goto out;
		}
	}
	plan_pod(&p);
	if (verify && verify_pod(&p, &ro, verify_max, err, sizeof(err)))
		goto out;
	if (p.verified)
		snr_qsort(p.g, p.ng, sizeof(*p.g), cmp_rank);
	if (json) {
		json_t *j = plan_json(&p, verify_max);
		json_dumpf(j, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(j);
	} else
		print_text(stdout, &p, verify_max);
	rc = 0;
out:
	if (rc)
		snr_err("analyze suggest: %s", err);
	for (unsigned k = 0; p.d && k < p.pod.nchips; k++)
		snr_deps_free(&p.d[k]);
	free(p.d);
	for (size_t j = 0; j < p.ng; j++)
		free(p.g[j].members);
	free(p.g);
	free(p.c);
	pod_free(&p.pod);
	json_decref(man);
	if (mset != in)
		free((void *)mset);
	if (tmp[0]) {
		char path[4200];
		snprintf(path, sizeof(path), "%s/pod.mset", tmp);
		remove_tmp_set(path);
		rmdir(tmp);
	}
	return rc;
}
