/*
 * whatif.c: the what-if runs of `snr analyze suggest --verify` (suggest.c).
 *
 * A replay of the trace through a thin wrapper around the TA1 GRM records,
 * per instruction, the decoded instruction, the operand access and the
 * source values the timing model reads. The what-if feeds that stream to a
 * fresh timing model (sim/ta1_timing.c) in the original order (which must
 * give the replay's cycles) or with some instructions taken earlier. The
 * stream goes to an unlinked temporary file (per execution: a static
 * instruction's number, its register values and memory regions) and is read
 * back in order for each what-if, the moved instructions (only those) held
 * in memory: its cost in memory is the static table, not the window.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/whatif.h"
#include "lib/snr_spill.h"
#include "lib/snr_util.h"
#include "sim/snr_sim.h"

/* ---- the instruction stream, captured from a replay ---------------------- */

static struct capture *cap_now; /* the capture in progress (one at a time) */

struct cap_sim {
	struct snr_sim *inner;
};

static const struct snr_sim_ops *inner_ops = &snr_sim_ta1;

static struct snr_sim *cap_create(const char *cfg_json, unsigned chip, unsigned nchips, char *err, size_t errlen)
{
	snr_config_default(&cap_now->cfg);
	if (cfg_json && snr_config_parse(&cap_now->cfg, cfg_json, "the machine config", err, errlen))
		return NULL;
	cap_now->cfg.chips = nchips; /* the pod's links reach every chip the window names */
	cap_now->chip = chip;
	cap_now->nchips = nchips;
	struct cap_sim *c = snr_xcalloc(1, sizeof(*c));
	c->inner = inner_ops->create(cfg_json, chip, nchips, err, errlen);
	if (!c->inner) {
		free(c);
		return NULL;
	}
	return (struct snr_sim *)c;
}

#define INNER(s) (((struct cap_sim *)(s))->inner)
static void cap_destroy(struct snr_sim *s)
{
	if (!s)
		return;
	inner_ops->destroy(INNER(s));
	free(s);
}
static const char *cap_error(struct snr_sim *s) { return inner_ops->error(INNER(s)); }
static int cap_attach(struct snr_sim *s, const struct snr_tracker *t) { return inner_ops->attach_tracker(INNER(s), t); }
static int cap_set_reg(struct snr_sim *s, unsigned r, const uint8_t *v, unsigned n)
{
	return inner_ops->set_reg(INNER(s), r, v, n);
}
static int cap_get_reg(struct snr_sim *s, unsigned r, uint8_t *v, unsigned n)
{
	return inner_ops->get_reg(INNER(s), r, v, n);
}
static int cap_load_mem(struct snr_sim *s, uint8_t sp, uint16_t ch, uint64_t a, const void *d, uint64_t l)
{
	return inner_ops->load_mem(INNER(s), sp, ch, a, d, l);
}
static int cap_read_mem(struct snr_sim *s, uint8_t sp, uint16_t ch, uint64_t a, void *d, uint64_t l)
{
	return inner_ops->read_mem(INNER(s), sp, ch, a, d, l);
}
static int cap_load_code(struct snr_sim *s, uint64_t pc, const uint8_t *code, unsigned len)
{
	return inner_ops->load_code(INNER(s), pc, code, len);
}
static uint64_t cap_finish(struct snr_sim *s) { return inner_ops->finish(INNER(s)); }

static uint64_t reg_or_zero(struct snr_sim *in, unsigned r)
{
	uint64_t v = 0;
	if (inner_ops->get_reg(in, r, (uint8_t *)&v, 8))
		return 0; /* never captured nor written: the instruction cannot read it */
	return v;
}

static uint64_t cap_hash(uint64_t pc, uint64_t next_pc, uint32_t raw, uint64_t rr, uint64_t rw)
{
	uint64_t h = pc * 0x9e3779b97f4a7c15ull ^ next_pc * 0xc2b2ae3d27d4eb4full ^ raw ^ rr * 31 ^ rw * 131;
	return h ^ (h >> 29);
}

/* The static table's entry for one execution (added when new). */
static uint32_t cap_static_of(struct capture *c, uint64_t pc, uint64_t next_pc, const struct ta1_insn *in,
			      uint64_t rr, uint64_t rw)
{
	if (2 * (c->nst + 1) > c->hashcap) {
		size_t cap = c->hashcap ? 2 * c->hashcap : 1024;
		free(c->hash);
		c->hash = snr_xcalloc(cap, sizeof(*c->hash));
		c->hashcap = cap;
		for (size_t k = 0; k < c->nst; k++) {
			const struct cap_static *x = &c->st[k];
			size_t h = cap_hash(x->pc, x->next_pc, x->in.raw, x->regs_read, x->regs_written) & (cap - 1);
			while (c->hash[h])
				h = (h + 1) & (cap - 1);
			c->hash[h] = (uint32_t)k + 1;
		}
	}
	size_t h = cap_hash(pc, next_pc, in->raw, rr, rw) & (c->hashcap - 1);
	for (; c->hash[h]; h = (h + 1) & (c->hashcap - 1)) {
		const struct cap_static *x = &c->st[c->hash[h] - 1];
		if (x->pc == pc && x->next_pc == next_pc && x->in.raw == in->raw && x->regs_read == rr &&
		    x->regs_written == rw)
			return c->hash[h] - 1;
	}
	if (c->nst == c->capst) {
		c->capst = c->capst ? 2 * c->capst : 256;
		c->st = snr_xrealloc(c->st, c->capst * sizeof(*c->st));
	}
	struct cap_static *x = &c->st[c->nst];
	memset(x, 0, sizeof(*x));
	x->pc = pc;
	x->next_pc = next_pc;
	x->in = *in;
	x->regs_read = rr;
	x->regs_written = rw;
	const uint8_t fields[4] = {in->rd, in->rs1, in->rs2, in->rs3};
	for (uint8_t k = 0; k < 4; k++)
		if (fields[k])
			x->field[x->nvals++] = k;
	c->hash[h] = (uint32_t)c->nst + 1;
	return (uint32_t)c->nst++;
}

/* Appends one execution to the stream (r->xv and r->region as the
 * static entry and r->nregions say). */
void an_wi_append(struct capture *c, const struct cap_rec *r)
{
	uint8_t buf[CAP_REC_MAX];
	size_t len = 0;
	memcpy(buf, &r->sidx, 4);
	buf[4] = r->nregions;
	len = 5;
	const struct cap_static *x = &c->st[r->sidx];
	for (unsigned k = 0; k < x->nvals; k++, len += 8)
		memcpy(buf + len, &r->xv[x->field[k]], 8);
	memcpy(buf + len, r->region, r->nregions * sizeof(*r->region));
	len += r->nregions * sizeof(*r->region);
	if (!c->io_failed && fwrite(buf, 1, len, c->f) != len) {
		c->io_failed = true;
		snr_fmt(c->io_err, sizeof(c->io_err), "writing the what-if stream's temporary file: %s",
			strerror(errno));
	}
	c->bytes += len;
	c->n++;
}

/* A fresh, empty stream in a temporary file in $TMPDIR (else /tmp),
 * unlinked at once; 0, or -1 with err filled. */
int an_wi_open(struct capture *c, char *err, size_t errlen)
{
	int fd = snr_tmpfile_fd("what-if stream", err, errlen);
	if (fd < 0)
		return -1;
	c->f = fdopen(fd, "w+b");
	if (!c->f) {
		snr_fmt(err, errlen, "cannot open the what-if stream's temporary file: %s", strerror(errno));
		close(fd);
		return -1;
	}
	c->fbuf = snr_setvbuf(c->f, CAP_BUF);
	return 0;
}

static int cap_step(struct snr_sim *s, uint64_t index, struct snr_sim_step *out)
{
	struct capture *c = cap_now;
	struct snr_sim *in = INNER(s);
	if (!c->seeded) {
		for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
			c->pre_window[f] = (unsigned)reg_or_zero(in, TA1_REG_FLAG0 + f);
		c->seeded = true;
	}
	uint64_t pc = reg_or_zero(in, TA1_REG_PC);
	uint32_t w = 0;
	inner_ops->read_mem(in, TA1_SPACE_CORE, (uint16_t)c->chip, pc, &w, 4);
	struct ta1_insn dec;
	ta1_decode(w, &dec);
	/* The query and the timing model read only the instruction's own
	 * register fields: fetch those, not all 32. */
	uint64_t x[32] = {0};
	const uint8_t fields[4] = {dec.rd, dec.rs1, dec.rs2, dec.rs3};
	for (unsigned k = 0; k < 4; k++)
		if (fields[k] && fields[k] < 32)
			x[fields[k]] = reg_or_zero(in, fields[k]);
	int rc = inner_ops->step(in, index, out);
	if (rc)
		return rc;
	struct ta1_query_ctx q = {.x = x,
				  .chip = c->chip,
				  .nchips = c->nchips,
				  .core_size = c->cfg.core_memory_bytes,
				  .vmem_size = c->cfg.vmem_bytes,
				  .hbm_size = c->cfg.hbm_bytes};
	struct ta1_access a;
	ta1_access_query(&dec, &q, &a);
	struct cap_rec r;
	r.sidx = cap_static_of(c, pc, out->next_pc, &dec, a.regs_read, a.regs_written);
	r.xv[0] = x[dec.rd];
	r.xv[1] = x[dec.rs1];
	r.xv[2] = x[dec.rs2];
	r.xv[3] = x[dec.rs3];
	r.nregions = (uint8_t)a.nregions;
	memcpy(r.region, a.region, a.nregions * sizeof(*a.region));
	an_wi_append(c, &r);
	return 0;
}

static const struct snr_sim_ops cap_ops = {
	.abi_version = SNR_SIM_ABI_VERSION,
	.name = "ta1",
	.isa = "ta1",
	.create = cap_create,
	.destroy = cap_destroy,
	.error = cap_error,
	.attach_tracker = cap_attach,
	.set_reg = cap_set_reg,
	.get_reg = cap_get_reg,
	.load_mem = cap_load_mem,
	.read_mem = cap_read_mem,
	.load_code = cap_load_code,
	.step = cap_step,
	.finish = cap_finish,
};

void an_wi_capture_free(struct capture *c)
{
	if (c->f)
		fclose(c->f);
	free(c->fbuf);
	free(c->st);
	free(c->hash);
	memset(c, 0, sizeof(*c));
}

int an_wi_capture_trace(struct capture *c, const struct snr_replay_opts *base, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	if (an_wi_open(c, err, errlen))
		return -1;
	cap_now = c;
	struct snr_replay_opts o = *base;
	o.sim_ops = &cap_ops;
	struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
	int rc = snr_replay(&o, r, err, errlen);
	if (!rc && !r->ok) {
		snr_fmt(err, errlen, "%s: the what-if capture replay diverged", o.trace_path);
		rc = -1;
	}
	if (!rc && (c->io_failed || fflush(c->f))) {
		snr_fmt(err, errlen, "%s", c->io_failed ? c->io_err : "flushing the what-if stream's temporary file");
		rc = -1;
	}
	free(r);
	cap_now = NULL;
	return rc;
}

/* Reads the stream from its start, one execution at a time. */
struct cap_reader {
	struct capture *c;
	uint8_t *buf;
	size_t len, pos;
	uint64_t k;   /* executions read */
	uint64_t off; /* the file's bytes read (pread, past the stream's stdio buffer) */
	int rerr;     /* errno of a failed read, 0 if none */
};

static void cap_read_begin(struct capture *c, struct cap_reader *rd)
{
	memset(rd, 0, sizeof(*rd));
	rd->c = c;
	rd->buf = snr_xmalloc(CAP_BUF);
	if (!c->io_failed && (fflush(c->f) || fseek(c->f, 0, SEEK_SET))) {
		c->io_failed = true;
		snr_fmt(c->io_err, sizeof(c->io_err), "rewinding the what-if stream's temporary file: %s",
			strerror(errno));
	}
}

static void cap_read_fail(struct cap_reader *rd, const char *what)
{
	if (rd->c->io_failed)
		return;
	rd->c->io_failed = true;
	snr_fmt(rd->c->io_err, sizeof(rd->c->io_err),
		"reading the what-if stream's temporary file back: %s at execution %" PRIu64 " of %" PRIu64, what,
		rd->k, rd->c->n);
}

/* The next execution into r; false at the end or on a failure (io_failed). */
static inline bool cap_read_next(struct cap_reader *rd, struct cap_rec *r)
{
	struct capture *c = rd->c;
	if (c->io_failed || rd->k == c->n)
		return false;
	if (rd->len - rd->pos < CAP_REC_MAX) {
		memmove(rd->buf, rd->buf + rd->pos, rd->len - rd->pos);
		rd->len -= rd->pos;
		rd->pos = 0;
		/* straight from the file: fread would copy it through the
		 * stream's own 1 MiB buffer first */
		while (rd->len < CAP_BUF && rd->off < c->bytes && !rd->rerr) {
			ssize_t got = pread(fileno(c->f), rd->buf + rd->len, CAP_BUF - rd->len, (off_t)rd->off);
			if (got <= 0) {
				rd->rerr = got < 0 ? errno : EIO;
				break;
			}
			rd->len += (size_t)got;
			rd->off += (uint64_t)got;
		}
	}
	const uint8_t *p = rd->buf + rd->pos, *end = rd->buf + rd->len;
	if (end - p < 5) {
		cap_read_fail(rd, rd->rerr ? strerror(rd->rerr) : "the file ends early");
		return false;
	}
	memcpy(&r->sidx, p, 4);
	r->nregions = p[4];
	r->flag_renamed = false; /* what-if only: set by a rename after the read */
	r->flag_from = r->flag_to = 0;
	p += 5;
	if (r->sidx >= c->nst || r->nregions > TA1_MAX_REGIONS) {
		cap_read_fail(rd, "a record out of range");
		return false;
	}
	const struct cap_static *x = &c->st[r->sidx];
	size_t need = x->nvals * 8u + r->nregions * sizeof(*r->region);
	if ((size_t)(end - p) < need) {
		cap_read_fail(rd, "the file ends early");
		return false;
	}
	memset(r->xv, 0, sizeof(r->xv));
	for (unsigned k = 0; k < x->nvals; k++, p += 8)
		memcpy(&r->xv[x->field[k]], p, 8);
	for (unsigned k = 0; k < r->nregions; k++, p += sizeof(*r->region)) /* at most 4: inline */
		memcpy(&r->region[k], p, sizeof(*r->region));
	rd->pos = (size_t)(p - rd->buf);
	rd->k++;
	return true;
}

static void cap_read_end(struct cap_reader *rd)
{
	free(rd->buf);
}


int an_wi_cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

int an_wi_cmp_slotted(const void *a, const void *b)
{
	const struct slotted *x = a, *y = b;
	if (x->slot != y->slot)
		return x->slot < y->slot ? -1 : 1;
	return x->index < y->index ? -1 : x->index > y->index;
}

int an_wi_cmp_slotted_index(const void *a, const void *b)
{
	const struct slotted *x = a, *y = b;
	if (x->index != y->index)
		return x->index < y->index ? -1 : 1;
	return x->slot < y->slot ? -1 : x->slot > y->slot;
}

/* How far ahead of its slot a moved execution may lie for an_wi_walk to take
 * it from its read-ahead (in executions; 200 bytes each): farther, and the
 * moved executions are read in a pass of their own first. */
#define CAP_AHEAD_MAX 65536

/* Each execution of the stream with the moved instructions (nmoved, in
 * an_wi_cmp_slotted order) taken out of their place and put just before their
 * slot: fn gets it with its original index and its position in the new
 * order. One pass over the stream: it reads ahead of the execution it is at
 * as far as a moved execution lies after its slot (a move takes an
 * instruction earlier, a few hundred executions on the serving loop), and
 * keeps a moved execution it passes until its slot when that comes later;
 * past CAP_AHEAD_MAX a first pass keeps the moved executions (only those).
 * Several such orders (walkers) can share the pass (cap_walk_many): each
 * gets every execution it needs from the one read. */

struct walker {
	const struct slotted *moved;
	size_t nmoved;
	cap_emit_fn fn;
	void *user;
	/* by index: the moved executions as the stream meets them */
	struct slotted *byindex;
	/* by place in moved: every moved execution (kept), else only those the
	 * stream passes before their slot is emitted, in a hash on place + 1 */
	struct cap_rec *recs;
	size_t *late, nlate, caplate;
	uint64_t ahead;       /* the farthest a moved execution lies after its slot's execution */
	bool kept;            /* recs holds every moved execution (the first pass) */
	size_t mk, skip;
	uint64_t pos;
};

static void walker_begin(struct capture *c, struct walker *w)
{
	w->byindex = NULL;
	w->recs = NULL;
	w->late = NULL;
	w->nlate = w->caplate = 0;
	w->ahead = 0;
	w->kept = false;
	w->mk = w->skip = 0;
	w->pos = 0;
	size_t nmoved = w->nmoved;
	const struct slotted *moved = w->moved;
	if (!nmoved)
		return;
	w->byindex = snr_xmalloc(nmoved * sizeof(*w->byindex));
	for (size_t k = 0; k < nmoved; k++) {
		w->byindex[k] = (struct slotted){k, moved[k].index}; /* slot: its place in moved */
		if (moved[k].index + 1 > moved[k].slot && moved[k].index + 1 - moved[k].slot > w->ahead)
			w->ahead = moved[k].index + 1 - moved[k].slot;
	}
	snr_qsort(w->byindex, nmoved, sizeof(*w->byindex), an_wi_cmp_slotted_index);
	if (w->ahead > CAP_AHEAD_MAX) {
		struct cap_reader rd;
		struct cap_rec r;
		w->recs = snr_xcalloc(nmoved, sizeof(*w->recs));
		cap_read_begin(c, &rd);
		for (size_t j = 0; j < nmoved && cap_read_next(&rd, &r);)
			for (; j < nmoved && w->byindex[j].index == rd.k - 1; j++)
				w->recs[w->byindex[j].slot] = r;
		cap_read_end(&rd);
		w->kept = true;
		w->ahead = 0;
	}
}

/* The slot of place in w->late's hash (its own, or the empty one it goes to) */
static size_t late_slot(const struct walker *w, size_t place)
{
	size_t h = (size_t)((place * 0x9e3779b97f4a7c15ull) >> 17) & (w->caplate - 1);
	while (w->late[h] && w->late[h] != place + 1)
		h = (h + 1) & (w->caplate - 1);
	return h;
}

/* Moved execution `place`, passed before its slot: kept until then */
static void late_put(struct walker *w, size_t place, const struct cap_rec *r)
{
	if (2 * (w->nlate + 1) > w->caplate) {
		size_t old = w->caplate, *ol = w->late;
		struct cap_rec *orecs = w->recs;
		w->caplate = old ? 2 * old : 64;
		w->late = snr_xcalloc(w->caplate, sizeof(*w->late));
		w->recs = snr_xmalloc(w->caplate * sizeof(*w->recs));
		for (size_t k = 0; k < old; k++)
			if (ol[k]) {
				size_t h = late_slot(w, ol[k] - 1);
				w->late[h] = ol[k];
				w->recs[h] = orecs[k];
			}
		free(ol);
		free(orecs);
	}
	size_t h = late_slot(w, place);
	w->nlate += !w->late[h];
	w->late[h] = place + 1;
	w->recs[h] = *r;
}

/* Moved execution `place` from what the walker kept */
static const struct cap_rec *late_get(const struct walker *w, size_t place)
{
	static const struct cap_rec none;
	if (w->kept)
		return &w->recs[place];
	if (!w->caplate)
		return &none;
	size_t h = late_slot(w, place);
	return w->late[h] ? &w->recs[h] : &none;
}

static void walker_end(struct walker *w)
{
	for (; w->mk < w->nmoved; w->mk++)
		w->fn(w->user, late_get(w, w->mk), w->moved[w->mk].index, w->pos++);
	free(w->recs);
	free(w->late);
	free(w->byindex);
	w->recs = NULL;
	w->late = NULL;
	w->nlate = w->caplate = 0;
}

static void cap_walk_many(struct capture *c, struct walker *ws, size_t nw)
{
	uint64_t ahead = 0;
	for (size_t i = 0; i < nw; i++) {
		walker_begin(c, &ws[i]);
		ahead = ws[i].ahead > ahead ? ws[i].ahead : ahead;
	}
	/* ring[i % nring]: execution i, for i in [k, got) */
	size_t nring = (size_t)ahead + 1;
	struct cap_rec *ring = snr_xmalloc(nring * sizeof(*ring));
	static const struct cap_rec none; /* for a stream that failed to read (io_failed says so) */
	struct cap_reader rd;
	uint64_t got = 0;
	bool more = true;
	cap_read_begin(c, &rd);
	for (uint64_t k = 0;; k++) {
		while (more && got < k + nring) {
			if (cap_read_next(&rd, &ring[got % nring]))
				got++;
			else
				more = false;
		}
		if (k >= got)
			break;
		const struct cap_rec *r = &ring[k % nring];
		for (size_t i = 0; i < nw; i++) {
			struct walker *w = &ws[i];
			while (w->mk < w->nmoved && w->moved[w->mk].slot <= k + 1) {
				uint64_t q = w->moved[w->mk].index;
				const struct cap_rec *x = w->kept || q < k ? late_get(w, w->mk) : q < got ? &ring[q % nring] : &none;
				w->fn(w->user, x, q, w->pos++);
				w->mk++;
			}
			if (w->skip < w->nmoved && w->byindex[w->skip].index == k) {
				for (; w->skip < w->nmoved && w->byindex[w->skip].index == k; w->skip++)
					if (!w->kept && w->byindex[w->skip].slot >= w->mk)
						late_put(w, w->byindex[w->skip].slot, r); /* for its slot, later */
				continue;
			}
			w->fn(w->user, r, k, w->pos++);
		}
	}
	cap_read_end(&rd);
	for (size_t i = 0; i < nw; i++)
		walker_end(&ws[i]);
	free(ring);
}

void an_wi_walk(struct capture *c, const struct slotted *moved, size_t nmoved, cap_emit_fn fn, void *user)
{
	struct walker w = {.moved = moved, .nmoved = nmoved, .fn = fn, .user = user};
	cap_walk_many(c, &w, 1);
}

struct timing_emit {
	const struct capture *c;
	struct ta1_timing_model *t;
	struct capture *out; /* an_wi_reorder: the stream appended to, not a model */
	bool renumber;
	uint64_t x[32];
	struct ta1_access a;
	struct an_wi_order *o;
	struct an_renamer rn;
	struct an_checker ck;
};

static void order_begin(struct timing_emit *e, struct an_wi_order *o)
{
	e->o = o;
	an_rename_begin(&e->rn, e->c, o->rn, o->nrn);
	uint64_t *idx = snr_xmalloc((o->nmoved ? o->nmoved : 1) * sizeof(*idx));
	for (size_t k = 0; k < o->nmoved; k++)
		idx[k] = o->moved[k].index;
	snr_qsort(idx, o->nmoved, sizeof(*idx), an_wi_cmp_u64);
	an_check_begin(&e->ck, e->c, idx, o->nmoved);
	free(idx);
}

static void order_end(struct timing_emit *e)
{
	struct an_wi_order *o = e->o;
	o->conflict = e->ck.first;
	o->in_flight = e->ck.in_flight;
	if (e->rn.clash) /* the renamed buffer's region, taken before the data's last read: that first */
		o->conflict = (struct an_conflict){
			e->rn.clash_partial ? AN_CONFLICT_PARTIAL : AN_CONFLICT_RENAMED, e->rn.clash_dma,
			e->rn.clash_partial ? e->rn.clash_reader : e->rn.clash_index, 0, 0, e->rn.clash_reader};
	an_rename_end(&e->rn);
	an_check_end(&e->ck);
}

/* x and a are reused: only the captured registers and regions are set (and
 * x cleared again after), which is all the model reads */
static void timing_emit(void *user, const struct cap_rec *r0, uint64_t index, uint64_t pos)
{
	struct timing_emit *e = user;
	struct cap_rec rr;
	const struct cap_rec *r = r0;
	if (e->o) {
		rr = *r0;
		if (e->o->nrn)
			an_rename_apply(&e->rn, &rr, index, an_check_moved(&e->ck, index));
		an_check_exec(&e->ck, &rr, index);
		r = &rr;
	}
	if (e->out) {
		an_wi_append(e->out, r);
		return;
	}
	const struct cap_static *s = &e->c->st[r->sidx];
	uint64_t *x = e->x;
	x[s->in.rs3] = r->xv[3];
	x[s->in.rs2] = r->xv[2];
	x[s->in.rs1] = r->xv[1];
	x[s->in.rd] = r->xv[0];
	x[0] = 0;
	e->a.regs_read = s->regs_read;
	e->a.regs_written = s->regs_written;
	e->a.nregions = r->nregions;
	for (unsigned k = 0; k < r->nregions; k++) /* at most 4: inline, not a call */
		e->a.region[k] = r->region[k];
	ta1_timing_insn(e->t, e->renumber ? pos : index, s->pc, &s->in, &e->a, x, s->next_pc);
	x[s->in.rs3] = x[s->in.rs2] = x[s->in.rs1] = x[s->in.rd] = 0;
}

static struct ta1_timing_model *model_new(struct capture *c, const struct snr_tracker *tracker)
{
	struct ta1_timing_model *t = ta1_timing_new(&c->cfg, tracker, c->chip);
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		for (unsigned k = 0; k < c->pre_window[f]; k++)
			ta1_timing_pre_window_dma(t, f, 0, TA1_SPACE_HBM, TA1_SPACE_VMEM);
	return t;
}

uint64_t an_wi_run_order(struct capture *c, struct an_wi_order *o, const struct snr_tracker *tracker, bool renumber,
			 struct ta1_timing_totals *totals)
{
	struct timing_emit e = {.c = c, .renumber = renumber};
	e.t = model_new(c, tracker);
	if (o)
		order_begin(&e, o);
	an_wi_walk(c, o ? o->moved : NULL, o ? o->nmoved : 0, timing_emit, &e);
	if (o)
		order_end(&e);
	uint64_t cycles = ta1_timing_drain(e.t);
	if (totals)
		ta1_timing_totals(e.t, totals);
	ta1_timing_free(e.t);
	return cycles;
}

/* Runs the stream, with the moved instructions moved (NULL, 0: as
 * captured), through a fresh timing model, reporting to tracker (NULL:
 * none) with each instruction's original index, or its position in the new
 * order when renumber is set (a reordered window of its own, for the next
 * round's graph). totals (NULL: not wanted) gets the model's totals. */
uint64_t an_wi_run(struct capture *c, const struct slotted *moved, size_t nmoved,
			    const struct snr_tracker *tracker, bool renumber, struct ta1_timing_totals *totals)
{
	struct an_wi_order o = {.moved = moved, .nmoved = nmoved};
	return an_wi_run_order(c, nmoved ? &o : NULL, tracker, renumber, totals);
}

void an_wi_run_many(struct capture *c, struct an_wi_order *o, size_t n, uint64_t *cycles,
		    struct ta1_timing_totals *totals)
{
	struct timing_emit *e = snr_xcalloc(n, sizeof(*e));
	struct walker *w = snr_xcalloc(n, sizeof(*w));
	for (size_t k = 0; k < n; k++) {
		e[k].c = c;
		e[k].t = model_new(c, NULL);
		order_begin(&e[k], &o[k]);
		w[k] = (struct walker){.moved = o[k].moved, .nmoved = o[k].nmoved, .fn = timing_emit, .user = &e[k]};
	}
	cap_walk_many(c, w, n);
	for (size_t k = 0; k < n; k++) {
		order_end(&e[k]);
		cycles[k] = ta1_timing_drain(e[k].t);
		if (totals && !k)
			ta1_timing_totals(e[k].t, totals);
		ta1_timing_free(e[k].t);
	}
	free(w);
	free(e);
}

void an_wi_reorder(struct capture *c, struct an_wi_order *o, struct capture *out)
{
	struct timing_emit e = {.c = c, .out = out};
	order_begin(&e, o);
	an_wi_walk(c, o->moved, o->nmoved, timing_emit, &e);
	order_end(&e);
}

/* The window with the moved instructions moved, as a stream of its own (its
 * static table a copy of c's); 0, or -1 with err filled. */
int an_wi_capture_reordered(struct capture *c, struct an_wi_order *o, struct capture *out, char *err, size_t errlen)
{
	memset(out, 0, sizeof(*out));
	if (an_wi_open(out, err, errlen))
		return -1;
	out->st = snr_xmemdup(c->st, (c->nst ? c->nst : 1) * sizeof(*c->st));
	out->nst = out->capst = c->nst;
	out->hash = snr_xmemdup(c->hash, (c->hashcap ? c->hashcap : 1) * sizeof(*c->hash));
	out->hashcap = c->hashcap;
	memcpy(out->pre_window, c->pre_window, sizeof(out->pre_window));
	out->seeded = c->seeded;
	out->cfg = c->cfg;
	out->chip = c->chip;
	out->nchips = c->nchips;
	an_wi_reorder(c, o, out);
	if (c->io_failed || out->io_failed) {
		snr_fmt(err, errlen, "%s", c->io_failed ? c->io_err : out->io_err);
		return -1;
	}
	return 0;
}
