/*
 * collect.c: the one pass over a source's events that every analysis here
 * shares (analyses.h). It keeps per instruction only its pc (8 bytes), per
 * DMA one record merged from its four phase events (about 150 bytes), per
 * busy interval and per VMEM access one small record (32 and 24 bytes);
 * everything else is derived afterwards. The pcs, busy intervals and VMEM
 * accesses go to unlinked temporary files past a fixed memory budget
 * (lib/snr_spill.h: 4, 4 and 8 MiB; the VMEM accesses sorted by runs), so
 * the pass's memory is that budget plus the DMA records (68k DMAs, 10 MB,
 * at 10M instructions of the serving window), not 8+ bytes per instruction.
 */
#include <jansson.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_partial.h"
#include "lib/snr_util.h"

static void on_issue(void *user, const struct snr_ev_insn *e)
{
	struct an_data *d = user;
	snr_spill_set(d->pcs, e->index, &e->pc);
}

static int link_of(struct an_data *d, const struct snr_ev_dma *e)
{
	if (!e->bytes)
		return -1;
	for (int i = 0; i < d->nlinks; i++) {
		struct an_link *l = &d->links[i];
		if (l->src_space == e->src_space && l->src_chip == e->src_chip && l->dst_space == e->dst_space &&
		    l->dst_chip == e->dst_chip)
			return i;
	}
	if (d->nlinks == (int)(sizeof(d->links) / sizeof(d->links[0])))
		return -1;
	struct an_link *l = &d->links[d->nlinks];
	l->src_space = e->src_space;
	l->src_chip = e->src_chip;
	l->dst_space = e->dst_space;
	l->dst_chip = e->dst_chip;
	snprintf(l->name, sizeof(l->name), "%s%u->%s%u", an_space_name(e->src_space), e->src_chip,
		 an_space_name(e->dst_space), e->dst_chip);
	return d->nlinks++;
}

static void on_dma(void *user, const struct snr_ev_dma *e)
{
	struct an_data *d = user;
	if (!e->id)
		return;
	while (d->capdmas < e->id) {
		size_t old = d->capdmas;
		d->capdmas = d->capdmas ? d->capdmas * 2 : 64;
		d->dmas = snr_xrealloc(d->dmas, d->capdmas * sizeof(*d->dmas));
		for (size_t i = old; i < d->capdmas; i++) {
			memset(&d->dmas[i], 0, sizeof(d->dmas[i]));
			d->dmas[i].issue = d->dmas[i].start = d->dmas[i].complete = d->dmas[i].wait = AN_NONE;
			d->dmas[i].active = AN_NONE;
			d->dmas[i].wait_index = -1;
			d->dmas[i].issue_index = -1;
			d->dmas[i].link = -1;
			d->dmas[i].peer_owner = -1;
		}
	}
	if (e->id > d->ndmas)
		d->ndmas = e->id;
	struct an_dma *m = &d->dmas[e->id - 1];
	if (!m->id) {
		m->id = e->id;
		m->issue_index = e->issue_index;
		m->bytes = e->bytes;
		m->src_space = e->src_space;
		m->dst_space = e->dst_space;
		m->src_chip = e->src_chip;
		m->dst_chip = e->dst_chip;
		m->src_addr = e->src_addr;
		m->dst_addr = e->dst_addr;
		m->flag = e->flag;
		m->base_cycles = e->base_cycles;
		m->link = link_of(d, e);
	}
	switch (e->phase) {
	case SNR_DMA_ISSUED:
		m->issue = e->cycle;
		break;
	case SNR_DMA_STARTED:
		m->start = e->cycle;
		break;
	case SNR_DMA_COMPLETED:
		m->complete = e->cycle;
		m->transfer_cycles = e->transfer_cycles;
		break;
	case SNR_DMA_WAITED:
		m->wait = e->cycle;
		m->wait_index = e->wait_index;
		m->stall_base = e->stall_base_cycles;
		m->stall_transfer = e->stall_transfer_cycles;
		m->slack = e->slack_cycles;
		break;
	}
}

static bool is_ta1(struct an_data *d);

static void busy_push(struct an_data *d, uint8_t unit, uint64_t start, uint64_t end, uint64_t index)
{
	struct an_busy b;
	memset(&b, 0, sizeof(b)); /* the padding too: it goes to the file */
	b.start = start;
	b.end = end;
	b.index = index;
	b.unit = unit;
	snr_spill_push(d->busy, &b);
}

static void on_busy(void *user, const struct snr_ev_busy *e)
{
	struct an_data *d = user;
	/* Host code: the scalar column comes from each instruction's first cycle
	 * (on_retire below), the same cycles the unicorn engine reports as busy
	 * runs; taking both would count them twice. */
	if (e->unit == SNR_UNIT_SCALAR && !is_ta1(d))
		return;
	busy_push(d, e->unit, e->start, e->end, e->index);
}

static bool is_ta1(struct an_data *d)
{
	if (d->ta1 < 0) {
		json_t *meta = json_loads(d->src.meta_json ? d->src.meta_json : "{}", 0, NULL);
		const char *isa = json_string_value(json_object_get(meta, "isa"));
		d->ta1 = !isa || !strcmp(isa, "ta1");
		json_decref(meta);
	}
	return d->ta1 > 0;
}

static void add_busy(struct an_data *d, uint8_t unit, uint64_t start, uint64_t end, uint64_t index)
{
	if (end <= start)
		return;
	/* merge with the unit's last interval when they touch */
	for (size_t back = 0; back < SNR_SPILL_KEEP && back < d->busy->n; back++) {
		struct an_busy *b = snr_spill_last(d->busy, back);
		if (b->unit == unit) {
			if (b->end == start) {
				b->end = end;
				return;
			}
			break;
		}
	}
	busy_push(d, unit, start, end, index);
}

/* Host code: the instruction's first cycle is the core's, the rest (memory
 * latency beyond an L1 hit under unicorn's cache model) memory's. */
static void on_retire(void *user, const struct snr_ev_insn *e)
{
	struct an_data *d = user;
	if (is_ta1(d))
		return;
	uint64_t one = e->retire > e->issue ? e->issue + 1 : e->issue;
	add_busy(d, SNR_UNIT_SCALAR, e->issue, one, e->index);
	add_busy(d, AN_UNIT_MEMORY, one, e->retire, e->index);
}

static void on_mem(void *user, const struct snr_ev_mem *e)
{
	struct an_data *d = user;
	if (e->space != TA1_SPACE_VMEM || !e->bytes || e->addr < TA1_VMEM_BASE)
		return;
	struct an_vmev v;
	memset(&v, 0, sizeof(v));
	v.cycle = e->cycle;
	v.off = e->addr - TA1_VMEM_BASE;
	v.bytes = e->bytes > UINT32_MAX ? UINT32_MAX : (uint32_t)e->bytes;
	v.write = e->write;
	snr_sorted_push(d->vm, &v);
}

int an_cmp_vmev(const void *a, const void *b)
{
	const struct an_vmev *x = a, *y = b;
	if (x->cycle != y->cycle)
		return x->cycle < y->cycle ? -1 : 1;
	/* writes of a cycle before its reads: the timing model lets a consumer
	 * that waited on a write start in the cycle the write lands, and it reads
	 * the new value (docs/ta1-timing.md, VMEM_HAZARD) */
	return (int)y->write - (int)x->write;
}

int an_cmp_u64pair(const void *a, const void *b)
{
	const uint64_t *x = a, *y = b;
	if (x[0] != y[0])
		return x[0] < y[0] ? -1 : 1;
	return x[1] < y[1] ? -1 : x[1] > y[1];
}

/* A link moves one transfer at a time in FIFO order of STARTED (ties: id),
 * so a transfer becomes active at max(its start, the previous one's
 * completion on the same link) (docs/ta1-timing.md, Rule 3). */
static void derive_active(struct an_data *d)
{
	uint64_t(*order)[2] = snr_xcalloc(d->ndmas + 1, sizeof(*order));
	for (int l = 0; l < d->nlinks; l++) {
		size_t n = 0;
		for (size_t i = 0; i < d->ndmas; i++)
			if (d->dmas[i].id && d->dmas[i].link == l && d->dmas[i].start != AN_NONE) {
				order[n][0] = d->dmas[i].start;
				order[n][1] = i;
				n++;
			}
		snr_qsort(order, n, sizeof(*order), an_cmp_u64pair);
		uint64_t free_at = 0;
		for (size_t k = 0; k < n; k++) {
			struct an_dma *m = &d->dmas[order[k][1]];
			m->active = m->start > free_at ? m->start : free_at;
			if (m->complete != AN_NONE && m->active > m->complete)
				m->active = m->complete;
			if (m->complete != AN_NONE)
				free_at = m->complete;
		}
	}
	for (size_t i = 0; i < d->ndmas; i++)
		if (d->dmas[i].id && d->dmas[i].active == AN_NONE)
			d->dmas[i].active = d->dmas[i].start;
	free(order);
}

/* A WAIT here took another chip's signal: which chip issued the DMA (its
 * WAITED record came just before). */
static void on_peer(void *user, const struct snr_ev_peer *e)
{
	struct an_data *d = user;
	if (e->dma_id && e->dma_id <= d->ndmas && d->dmas[e->dma_id - 1].id == e->dma_id)
		d->dmas[e->dma_id - 1].peer_owner = e->chip;
}

void an_collect_tracker(struct an_data *d, unsigned want, struct snr_tracker *t)
{
	memset(t, 0, sizeof(*t));
	d->pcs = snr_xmalloc(sizeof(*d->pcs));
	snr_spill_init(d->pcs, sizeof(uint64_t), 4u << 20, "instruction pcs");
	d->busy = snr_xmalloc(sizeof(*d->busy));
	snr_spill_init(d->busy, sizeof(struct an_busy), 4u << 20, "busy intervals");
	d->vm = snr_xmalloc(sizeof(*d->vm));
	snr_sorted_init(d->vm, sizeof(struct an_vmev), an_cmp_vmev, 8u << 20, "VMEM accesses");
	t->abi_version = SNR_TRACKER_ABI_VERSION;
	t->user = d;
	d->ta1 = -1;
	if (want & AN_WANT_DMA) {
		t->on_issue = on_issue;
		t->on_dma = on_dma;
		t->on_peer = on_peer;
	}
	if (want & AN_WANT_BUSY) {
		t->on_busy = on_busy;
		t->on_retire = on_retire;
	}
	if (want & AN_WANT_VMEM)
		t->on_mem = on_mem;
}

void an_collect_finish(struct an_data *d)
{
	d->page_bytes = d->src.cfg.vmem_page_bytes ? d->src.cfg.vmem_page_bytes : 1024;
	d->vmem_pages = d->src.cfg.vmem_bytes / d->page_bytes;
	d->cycles = d->src.cycles;
	is_ta1(d);
	json_t *meta = json_loads(d->src.meta_json ? d->src.meta_json : "{}", 0, NULL);
	d->chip = (unsigned)json_integer_value(json_object_get(meta, "chip"));
	json_decref(meta);
	for (size_t i = 0; i < d->ndmas; i++) {
		struct an_dma *m = &d->dmas[i];
		if (m->complete != AN_NONE && m->complete > d->cycles)
			d->cycles = m->complete;
	}
	derive_active(d);
}

int an_load(struct an_data *d, const char *path, const char *config_path, unsigned want, char *err, size_t errlen)
{
	memset(d, 0, sizeof(*d));
	struct snr_tracker t;
	an_collect_tracker(d, want, &t);
	if (snr_source_run(&d->src, path, NULL, config_path, &t, err, errlen))
		return -1;
	an_collect_finish(d);
	const char *spill = an_spill_error(d);
	if (spill) {
		snr_fmt(err, errlen, "%s", spill);
		return -1;
	}
	return 0;
}

const char *an_spill_error(const struct an_data *d)
{
	if (d->pcs && snr_spill_failed(d->pcs))
		return d->pcs->err;
	if (d->busy && snr_spill_failed(d->busy))
		return d->busy->err;
	if (d->vm && snr_sorted_failed(d->vm))
		return snr_sorted_error(d->vm);
	return NULL;
}

void an_free(struct an_data *d)
{
	snr_source_close(&d->src);
	if (d->pcs)
		snr_spill_free(d->pcs);
	if (d->busy)
		snr_spill_free(d->busy);
	if (d->vm)
		snr_sorted_free(d->vm);
	free(d->pcs);
	free(d->busy);
	free(d->vm);
	free(d->dmas);
	memset(d, 0, sizeof(*d));
}

const char *an_space_name(unsigned space)
{
	switch (space) {
	case TA1_SPACE_CORE:
		return "core";
	case TA1_SPACE_VMEM:
		return "vmem";
	case TA1_SPACE_MXUW:
		return "mxuw";
	case TA1_SPACE_HBM:
		return "hbm";
	default:
		return "none";
	}
}

const char *an_insn_name(const struct an_data *d, int64_t index, char *buf, size_t len)
{
	if (index < 0 || (uint64_t)index >= d->pcs->n) {
		snprintf(buf, len, "(before the window)");
		return buf;
	}
	char sym[400];
	uint64_t pc = an_pc(d, (uint64_t)index);
	snr_source_where_short(&d->src, pc, sym, sizeof(sym));
	if (!strncmp(sym, "0x", 2))
		snprintf(buf, len, "#%lld 0x%llx", (long long)index, (unsigned long long)pc);
	else
		snprintf(buf, len, "#%lld 0x%llx %s", (long long)index, (unsigned long long)pc, sym);
	return buf;
}

uint64_t an_dma_stall(const struct an_dma *m)
{
	return m->stall_base + m->stall_transfer;
}

/* Figure 4: WAIT before the base latency ended (base+transfer stall), WAIT
 * during the transfer (transfer stall only), WAIT after completion (slack). */
const char *an_dma_case(const struct an_dma *m)
{
	if (m->wait == AN_NONE)
		return "not-waited";
	if (m->stall_base)
		return "base+transfer";
	if (m->stall_transfer)
		return "transfer";
	return "slack";
}

static const struct an_data *sort_ctx;
static int cmp_stall(const void *a, const void *b)
{
	const struct an_dma *x = &sort_ctx->dmas[*(const size_t *)a], *y = &sort_ctx->dmas[*(const size_t *)b];
	uint64_t sx = an_dma_stall(x), sy = an_dma_stall(y);
	if (sx != sy)
		return sx > sy ? -1 : 1;
	return x->id < y->id ? -1 : x->id > y->id;
}

size_t *an_dma_sorted(const struct an_data *d)
{
	size_t *idx = snr_xcalloc(d->ndmas + 1, sizeof(*idx));
	size_t n = 0;
	for (size_t i = 0; i < d->ndmas; i++)
		if (d->dmas[i].id)
			idx[n++] = i;
	sort_ctx = d;
	snr_qsort(idx, n, sizeof(*idx), cmp_stall);
	idx[n] = SIZE_MAX;
	return idx;
}

static json_t *cyc(uint64_t c)
{
	return c == AN_NONE ? json_null() : json_integer((json_int_t)c);
}

static json_t *insn_json(const struct an_data *d, int64_t index, uint64_t cycle)
{
	if (index < 0 && cycle == AN_NONE)
		return json_null();
	json_t *o = json_object();
	json_object_set_new(o, "index", json_integer(index));
	if (index >= 0 && (uint64_t)index < d->pcs->n) {
		char sym[400];
		uint64_t pc = an_pc(d, (uint64_t)index);
		json_object_set_new(o, "pc", json_integer((json_int_t)pc));
		json_object_set_new(o, "symbol", json_string(snr_source_symbolize(&d->src, pc, sym, sizeof(sym))));
		json_object_set_new(o, "source", snr_source_json(&d->src, pc));
	} else {
		json_object_set_new(o, "pc", json_null());
		json_object_set_new(o, "symbol", json_null());
		json_object_set_new(o, "source", json_null());
	}
	json_object_set_new(o, "cycle", cyc(cycle));
	return o;
}

json_t *an_source_json(const struct an_data *d)
{
	json_t *o = json_object();
	json_object_set_new(o, "path", json_string(d->src.path));
	json_object_set_new(o, "kind", json_string(d->src.is_trace ? "trace" : "metrics"));
	json_object_set_new(o, "instructions", json_integer((json_int_t)d->src.instructions));
	json_object_set_new(o, "cycles", json_integer((json_int_t)d->cycles));
	json_object_set_new(o, "clock_hz", json_integer((json_int_t)d->src.cfg.clock_hz));
	json_object_set_new(o, "chip", json_integer(d->chip));
	json_object_set_new(o, "truncated", json_boolean(snr_partial_seen()));
	return o;
}

json_t *an_dma_obj_json(const struct an_data *d, const struct an_dma *m)
{
	json_t *o = json_object();
	json_object_set_new(o, "id", json_integer((json_int_t)m->id));
	json_object_set_new(o, "link", json_string(m->link >= 0 ? d->links[m->link].name : ""));
	json_object_set_new(o, "src", json_pack("{s:s,s:i,s:I}", "space", an_space_name(m->src_space), "chip",
						  m->src_chip, "addr", (json_int_t)m->src_addr));
	json_object_set_new(o, "dst", json_pack("{s:s,s:i,s:I}", "space", an_space_name(m->dst_space), "chip",
						  m->dst_chip, "addr", (json_int_t)m->dst_addr));
	json_object_set_new(o, "bytes", json_integer((json_int_t)m->bytes));
	json_object_set_new(o, "flag", json_integer(m->flag));
	json_object_set_new(o, "issue", insn_json(d, m->issue_index, m->issue));
	json_object_set_new(o, "wait", m->wait == AN_NONE ? json_null() : insn_json(d, m->wait_index, m->wait));
	json_object_set_new(o, "start_cycle", cyc(m->start));
	json_object_set_new(o, "active_cycle", cyc(m->active));
	json_object_set_new(o, "complete_cycle", cyc(m->complete));
	json_object_set_new(o, "base_cycles", json_integer((json_int_t)m->base_cycles));
	json_object_set_new(o, "transfer_cycles", json_integer((json_int_t)m->transfer_cycles));
	json_object_set_new(o, "stall_base_cycles", json_integer((json_int_t)m->stall_base));
	json_object_set_new(o, "stall_transfer_cycles", json_integer((json_int_t)m->stall_transfer));
	json_object_set_new(o, "stall_cycles", json_integer((json_int_t)an_dma_stall(m)));
	json_object_set_new(o, "slack_cycles", json_integer((json_int_t)m->slack));
	json_object_set_new(o, "case", json_string(an_dma_case(m)));
	return o;
}

json_t *an_dma_doc_json(const struct an_data *d, const size_t *idx, json_t *arr)
{
	json_t *root = json_object();
	json_object_set_new(root, "schema", json_string("snr.analyze.dma/1"));
	json_object_set_new(root, "source", an_source_json(d));
	uint64_t tb = 0, tt = 0, ts = 0, bytes = 0, n = 0;
	for (size_t k = 0; idx[k] != SIZE_MAX; k++) {
		const struct an_dma *m = &d->dmas[idx[k]];
		tb += m->stall_base;
		tt += m->stall_transfer;
		ts += m->slack;
		bytes += m->bytes;
		n++;
	}
	json_object_set_new(root, "dmas", arr);
	json_object_set_new(root, "totals",
			    json_pack("{s:I,s:I,s:I,s:I,s:I,s:I}", "dmas", (json_int_t)n, "bytes", (json_int_t)bytes,
				      "stall_base_cycles", (json_int_t)tb, "stall_transfer_cycles", (json_int_t)tt,
				      "stall_cycles", (json_int_t)(tb + tt), "slack_cycles", (json_int_t)ts));
	return root;
}

json_t *an_dma_json(const struct an_data *d)
{
	size_t *idx = an_dma_sorted(d);
	json_t *arr = json_array();
	for (size_t k = 0; idx[k] != SIZE_MAX; k++)
		json_array_append_new(arr, an_dma_obj_json(d, &d->dmas[idx[k]]));
	json_t *root = an_dma_doc_json(d, idx, arr);
	free(idx);
	return root;
}

/* The dma document as json_dumpf(an_dma_json(d), f, JSON_INDENT(1)) writes
 * it, byte for byte, one DMA's object at a time: the document is dumped
 * with an empty array, and the DMAs go where its "[]" is, each dumped alone
 * and indented to its depth (2: jansson writes a newline inside a value only
 * as indentation, a string's own newlines are escaped). Memory: one DMA's
 * objects, not the whole document's (about 6 KB a DMA). 0, or -1 on a
 * failed write. */
int an_dma_json_write(const struct an_data *d, FILE *f)
{
	size_t *idx = an_dma_sorted(d);
	json_t *root = an_dma_doc_json(d, idx, json_array());
	char *text = json_dumps(root, JSON_INDENT(1));
	json_decref(root);
	const char *hole = text ? strstr(text, "\"dmas\": []") : NULL;
	if (!hole) {
		free(text);
		free(idx);
		return -1;
	}
	hole += strlen("\"dmas\": [");
	fwrite(text, 1, (size_t)(hole - text), f);
	for (size_t k = 0; idx[k] != SIZE_MAX; k++) {
		json_t *o = an_dma_obj_json(d, &d->dmas[idx[k]]);
		char *one = json_dumps(o, JSON_INDENT(1));
		json_decref(o);
		fputs(k ? ",\n  " : "\n  ", f);
		for (const char *c = one; c && *c; c++) {
			fputc(*c, f);
			if (*c == '\n')
				fputs("  ", f);
		}
		free(one);
	}
	if (idx[0] != SIZE_MAX)
		fputs("\n ", f);
	fputs(hole, f);
	free(text);
	free(idx);
	return ferror(f) ? -1 : 0;
}

int an_cli_load(int argc, char **argv, const char *name, const char *numopt, uint64_t *num, bool *json,
		unsigned want, void (*usage)(FILE *), struct an_data *d)
{
	struct option opts[] = {{numopt ? numopt : "config", required_argument, NULL, 'n'},
				{"config", required_argument, NULL, 'c'},
				{"json", no_argument, NULL, 'j'},
				{"help", no_argument, NULL, 'h'},
				{NULL, 0, NULL, 0}};
	const char *config = NULL;
	int opt;
	*json = false;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", numopt ? opts : opts + 1, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (!snr_parse_u64(optarg, num, true) || !*num) {
				snr_err("analyze %s: --%s needs a positive number of cycles, not '%s'", name, numopt,
					optarg);
				return 2;
			}
			break;
		case 'c':
			config = optarg;
			break;
		case 'j':
			*json = true;
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (optind + 1 != argc) {
		usage(stderr);
		return 2;
	}
	char err[1024];
	if (an_load(d, argv[optind], config, want, err, sizeof(err))) {
		snr_err("analyze %s: %s", name, err);
		an_free(d);
		return 1;
	}
	return -1;
}
