/*
 * perfetto.c: `snr export perfetto FILES... -o trace.json`, the Chrome
 * trace-event JSON format that ui.perfetto.dev and chrome://tracing open.
 * One process per input file; in it one thread (track) per unit (scalar,
 * vector, MXU, DMA engine), one for the core's DMA ISSUE and WAIT
 * instructions, and per DMA link as many lanes as its overlapping DMAs need
 * (base latencies overlap: they are not accumulative). A DMA on a lane is
 * one complete ("X") slice with its phases nested inside it: base latency,
 * transfer (queueing included, as the model counts it), the WAIT's stall
 * on it (base or transfer, nested in that phase), and slack. Flow events
 * (s -> f) join each ISSUE to its WAIT. Counters (C) give VMEM occupancy and
 * the largest contiguous free region at the vmem analysis's samples.
 * Timestamps are microseconds: cycle * 1e6 / clock_hz.
 *
 * Host traces (.snrh, `snr host record`, told apart by their magic) go on
 * the same timeline: their threads, calls, libta1rt launches and CUPTI
 * records (analyzer/host_events.c) on CLOCK_MONOTONIC, and each
 * replayed window shifted onto that clock: it starts where the host trace's
 * matching ta1rt_launch call starts (--launch N, or the only launch), else
 * where the host trace starts; cycles still become time through the
 * config's clock_hz. docs/host.md explains the choice.
 */
#include <getopt.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "analyzer/pcinfo.h"
#include "lib/snr_outfile.h"
#include "lib/snr_partial.h"
#include "lib/snr_util.h"
#include "analyzer/host_events.h"
#include "lib/snr_host_trace.h"

enum { TID_SCALAR = 1, TID_VECTOR, TID_MXU, TID_DMA, TID_DMAOPS, TID_LINK0 = 100, LANES = 32 };

struct out {
	FILE *f;
	bool first;
	int64_t base_ns; /* where cycle 0 of the replayed window lies on the output's clock */
};

/* A cycle's time on the output's clock, in whole nanoseconds. Every
 * timestamp and every slice end is rounded once, here, and a slice's dur is
 * end - start of two such values: a slice that ends where another starts (in
 * cycles) ends exactly there in the output too. Rounding ts and dur each on
 * their own, as microseconds with six decimals after adding the host trace's
 * start (1e9 us and more), let a slice end up to 1.5 ns after the start of
 * the next or past its parent's end, depending on the launch time's
 * fraction: the host + device export's nesting broke in about one run in
 * four. */
static int64_t t_ns(const struct out *o, const struct an_data *d, uint64_t cycle)
{
	return o->base_ns + llround(an_us(d, cycle) * 1e3);
}

/* ns as trace-event microseconds, exactly ("1234.567"). */
static const char *us_text(char buf[32], int64_t ns)
{
	snprintf(buf, 32, "%s%lld.%03lld", ns < 0 ? "-" : "", (long long)(ns < 0 ? -ns : ns) / 1000,
		 (long long)(ns < 0 ? -ns : ns) % 1000);
	return buf;
}

static const char *ts_us(char buf[32], const struct out *o, const struct an_data *d, uint64_t cycle)
{
	return us_text(buf, t_ns(o, d, cycle));
}

static void ev_begin(struct out *o)
{
	fputs(o->first ? "\n" : ",\n", o->f);
	o->first = false;
}

static void name_meta(struct out *o, const char *what, int pid, int tid, const char *name, int sort)
{
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"M\",\"name\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":0,\"args\":{\"name\":", what, pid, tid);
	json_t *s = json_string(name);
	json_dumpf(s, o->f, JSON_ENCODE_ANY);
	json_decref(s);
	fputs("}}", o->f);
	ev_begin(o);
	fprintf(o->f, "{\"ph\":\"M\",\"name\":\"%s_sort_index\",\"pid\":%d,\"tid\":%d,\"ts\":0,\"args\":{\"sort_index\":%d}}",
		!strcmp(what, "process_name") ? "process" : "thread", pid, tid, sort);
}

static void slice(struct out *o, const struct an_data *d, int pid, int tid, const char *name, const char *cat,
		  uint64_t start, uint64_t end, const char *args)
{
	if (end < start)
		end = start;
	ev_begin(o);
	char ts[32], dur[32];
	int64_t ts_ns = t_ns(o, d, start);
	fprintf(o->f, "{\"ph\":\"X\",\"name\":\"%s\",\"cat\":\"%s\",\"pid\":%d,\"tid\":%d,\"ts\":%s,\"dur\":%s%s%s%s}",
		name, cat, pid, tid, us_text(ts, ts_ns), us_text(dur, t_ns(o, d, end) - ts_ns), args ? ",\"args\":{" : "",
		args ? args : "", args ? "}" : "");
}

/* s as the inside of a JSON string (no quotes) into buf. */
static const char *json_inner(const char *s, char *buf, size_t len)
{
	json_t *j = json_string(s ? s : "");
	char *q = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	size_t n = q ? strlen(q) : 0;
	snprintf(buf, len, "%.*s", n >= 2 ? (int)(n - 2) : 0, n >= 2 ? q + 1 : "");
	free(q);
	json_decref(j);
	return buf;
}

/* What ran at instruction index: a slice name ("prefix" + "ta.mxu.mm
 * attn.c:37 (attn)", the mnemonic and the place of the user's line, or the
 * symbol without line tables) and its args (pc, disassembly, the "source"
 * object), both escaped for the trace-event JSON. */
static void insn_label(struct an_pcinfo *info, const struct an_data *d, int64_t index, const char *prefix,
		       bool mnemonic, char *name, size_t nlen, char *args, size_t alen)
{
	if (index < 0 || (uint64_t)index >= d->npcs) {
		json_inner(prefix, name, nlen);
		args[0] = 0;
		return;
	}
	uint64_t pc = d->pcs[index];
	char mn[64] = "", raw[600];
	if (mnemonic)
		an_pcinfo_mnemonic(info, pc, mn, sizeof(mn));
	snprintf(raw, sizeof(raw), "%s%s%s%s", prefix, mn, mn[0] ? " " : "", an_pcinfo_where(info, pc));
	json_inner(raw, name, nlen);
	snprintf(args, alen, "\"index\":%lld,%s", (long long)index, an_pcinfo_args(info, pc));
}

static int export_one(struct out *o, const struct an_data *d, int pid, const char *label)
{
	struct an_pcinfo *info = an_pcinfo_new(&d->src);
	char lname[1024], largs[2048];
	char tbuf[32];
	name_meta(o, "process_name", pid, 0, label, pid);
	static const char *unit_names[] = {"scalar", "vector", "mxu", "dma engine"};
	for (int u = 0; u < 4; u++)
		name_meta(o, "thread_name", pid, TID_SCALAR + u, unit_names[u], TID_SCALAR + u);
	name_meta(o, "thread_name", pid, TID_DMAOPS, "core: DMA ISSUE / WAIT", TID_DMAOPS);
	for (size_t i = 0; i < d->nbusy; i++) {
		const struct an_busy *b = &d->busy[i];
		int tid = b->unit < 4 ? TID_SCALAR + b->unit : TID_DMA;
		if (b->index != UINT64_MAX && b->index < d->npcs) {
			insn_label(info, d, (int64_t)b->index, "", true, lname, sizeof(lname), largs, sizeof(largs));
			slice(o, d, pid, tid, lname, "unit", b->start, b->end, largs);
		} else {
			slice(o, d, pid, tid, b->unit < 4 ? unit_names[b->unit] : "busy", "unit", b->start, b->end,
			      "\"index\":-1");
		}
	}
	/* lanes per link: greedy, by issue order */
	uint64_t(*lane_free)[LANES] = snr_xcalloc((size_t)(d->nlinks + 1), sizeof(*lane_free));
	int *lanes_used = snr_xcalloc((size_t)(d->nlinks + 1), sizeof(int));
	for (size_t i = 0; i < d->ndmas; i++) {
		const struct an_dma *m = &d->dmas[i];
		if (!m->id)
			continue;
		int l = m->link >= 0 ? m->link : d->nlinks; /* 0-byte DMAs: a lane group of their own */
		uint64_t s = m->issue == AN_NONE ? 0 : m->issue + 1;
		uint64_t c = m->complete != AN_NONE ? m->complete : (m->start != AN_NONE ? m->start : s);
		uint64_t e = m->wait != AN_NONE && m->wait > c ? m->wait : c;
		int lane = 0;
		while (lane < LANES - 1 && lane_free[l][lane] > s)
			lane++;
		lane_free[l][lane] = e;
		if (lane + 1 > lanes_used[l])
			lanes_used[l] = lane + 1;
		int tid = TID_LINK0 + l * LANES + lane;
		char prefix[48], args[3072];
		snprintf(prefix, sizeof(prefix), "dma#%llu ", (unsigned long long)m->id);
		insn_label(info, d, m->issue_index, prefix, false, lname, sizeof(lname), largs, sizeof(largs));
		if (m->issue_index < 0) /* issued before the window */
			snprintf(lname, sizeof(lname), "dma#%llu", (unsigned long long)m->id);
		snprintf(args, sizeof(args),
			 "\"id\":%llu,\"bytes\":%llu,\"flag\":%u,\"case\":\"%s\",\"stall_base_cycles\":%llu,"
			 "\"stall_transfer_cycles\":%llu,\"slack_cycles\":%llu,\"issue_index\":%lld,\"wait_index\":%lld%s%s",
			 (unsigned long long)m->id, (unsigned long long)m->bytes, m->flag, an_dma_case(m),
			 (unsigned long long)m->stall_base, (unsigned long long)m->stall_transfer,
			 (unsigned long long)m->slack, (long long)m->issue_index, (long long)m->wait_index,
			 m->issue_index >= 0 ? ",\"issue\":{" : "", "");
		if (m->issue_index >= 0)
			snprintf(args + strlen(args), sizeof(args) - strlen(args), "%s}", largs);
		slice(o, d, pid, tid, lname, "dma", s, e, args);
		uint64_t st = m->start != AN_NONE ? m->start : c;
		slice(o, d, pid, tid, "base latency", "dma.base", s, st, NULL);
		if (c > st)
			slice(o, d, pid, tid, "transfer", "dma.transfer", st, c, NULL);
		if (m->stall_base)
			slice(o, d, pid, tid, "stall: base latency", "dma.stall", c - m->stall_transfer - m->stall_base,
			      c - m->stall_transfer, NULL);
		if (m->stall_transfer)
			slice(o, d, pid, tid, "stall: transfer", "dma.stall", c - m->stall_transfer, c, NULL);
		if (m->slack && m->wait != AN_NONE)
			slice(o, d, pid, tid, "slack", "dma.slack", c, m->wait, NULL);
	}
	for (int l = 0; l <= d->nlinks; l++)
		for (int lane = 0; lane < lanes_used[l]; lane++) {
			char name[64];
			snprintf(name, sizeof(name), "link %s #%d", l < d->nlinks ? d->links[l].name : "(no bytes)", lane);
			name_meta(o, "thread_name", pid, TID_LINK0 + l * LANES + lane, name, TID_LINK0 + l * LANES + lane);
		}
	free(lane_free);
	free(lanes_used);
	/* ISSUE and WAIT slices on the core, joined by flows */
	for (size_t i = 0; i < d->ndmas; i++) {
		const struct an_dma *m = &d->dmas[i];
		if (!m->id || m->issue_index < 0 || m->issue == AN_NONE)
			continue;
		char prefix[48];
		snprintf(prefix, sizeof(prefix), "ISSUE dma#%llu ", (unsigned long long)m->id);
		insn_label(info, d, m->issue_index, prefix, false, lname, sizeof(lname), largs, sizeof(largs));
		slice(o, d, pid, TID_DMAOPS, lname, "dma.issue", m->issue, m->issue + 1, largs);
	}
	/* The DMAs one WAIT consumed, grouped by sorting (wait index, dma):
	 * the WAIT's slice is drawn once, with the first of them, from the
	 * earliest arrival (a stalled DMA's complete - stall) to the WAIT's end */
	uint64_t(*by_wait)[2] = snr_xcalloc(d->ndmas + 1, sizeof(*by_wait));
	uint64_t *arrive_of = snr_xcalloc(d->ndmas + 1, sizeof(*arrive_of));
	bool *first_of = snr_xcalloc(d->ndmas + 1, sizeof(*first_of));
	size_t nw = 0;
	for (size_t i = 0; i < d->ndmas; i++)
		if (d->dmas[i].id && d->dmas[i].wait != AN_NONE) {
			by_wait[nw][0] = (uint64_t)d->dmas[i].wait_index;
			by_wait[nw++][1] = i;
		}
	qsort(by_wait, nw, sizeof(*by_wait), an_cmp_u64pair);
	for (size_t a = 0, b; a < nw; a = b) {
		uint64_t arrive = UINT64_MAX;
		for (b = a; b < nw && by_wait[b][0] == by_wait[a][0]; b++) {
			const struct an_dma *n = &d->dmas[by_wait[b][1]];
			uint64_t st = an_dma_stall(n);
			if (st && n->complete != AN_NONE && n->complete - st < arrive)
				arrive = n->complete - st;
		}
		first_of[by_wait[a][1]] = true; /* the lowest dma of the group */
		for (size_t k = a; k < b; k++) {
			uint64_t w = d->dmas[by_wait[k][1]].wait;
			arrive_of[by_wait[k][1]] = arrive < w ? arrive : w;
		}
	}
	free(by_wait);
	for (size_t i = 0; i < d->ndmas; i++) {
		const struct an_dma *m = &d->dmas[i];
		if (!m->id || m->wait == AN_NONE)
			continue;
		uint64_t arrive = arrive_of[i];
		if (first_of[i]) {
			char prefix[48];
			snprintf(prefix, sizeof(prefix), "WAIT flag %u ", m->flag);
			insn_label(info, d, m->wait_index, prefix, false, lname, sizeof(lname), largs, sizeof(largs));
			slice(o, d, pid, TID_DMAOPS, lname, "dma.wait", arrive, m->wait + 1, largs);
		}
		if (m->issue_index >= 0 && m->issue != AN_NONE) {
			unsigned long long id = ((unsigned long long)pid << 32) | m->id;
			ev_begin(o);
			fprintf(o->f,
				"{\"ph\":\"s\",\"name\":\"dma#%llu\",\"cat\":\"dma.flow\",\"id\":%llu,\"pid\":%d,\"tid\":%d,"
				"\"ts\":%s}",
				(unsigned long long)m->id, id, pid, TID_DMAOPS, ts_us(tbuf, o, d, m->issue));
			ev_begin(o);
			fprintf(o->f,
				"{\"ph\":\"f\",\"bp\":\"e\",\"name\":\"dma#%llu\",\"cat\":\"dma.flow\",\"id\":%llu,\"pid\":%d,"
				"\"tid\":%d,\"ts\":%s}",
				(unsigned long long)m->id, id, pid, TID_DMAOPS, ts_us(tbuf, o, d, m->wait));
		}
	}
	free(arrive_of);
	free(first_of);
	/* VMEM counters */
	struct an_vmem v;
	an_vmem_compute(d, 0, &v);
	for (size_t s = 0; s < v.nsamples; s++) {
		uint64_t occ = (uint64_t)v.used[s] + v.unused[s];
		ev_begin(o);
		fprintf(o->f,
			"{\"ph\":\"C\",\"name\":\"VMEM occupied (KiB)\",\"pid\":%d,\"tid\":0,\"ts\":%s,"
			"\"args\":{\"used\":%llu,\"unused\":%llu}}",
			pid, ts_us(tbuf, o, d, v.t[s]), (unsigned long long)(v.used[s] * v.page_bytes / 1024),
			(unsigned long long)(v.unused[s] * v.page_bytes / 1024));
		(void)occ;
		ev_begin(o);
		fprintf(o->f,
			"{\"ph\":\"C\",\"name\":\"VMEM largest free region (KiB)\",\"pid\":%d,\"tid\":0,\"ts\":%s,"
			"\"args\":{\"largest_free\":%llu}}",
			pid, ts_us(tbuf, o, d, v.t[s]), (unsigned long long)(v.largest[s] * v.page_bytes / 1024));
	}
	an_vmem_free(&v);
	an_pcinfo_free(info);
	return 0;
}

static void usage(FILE *f)
{
	fprintf(f, "usage: snr export perfetto [H.snrh [CUPTI.snrh...]] [T.snrt|M.snrm...] -o trace.json\n"
		   "                           [--config M.json] [--launch N]\n"
		   "\n"
		   "Chrome trace-event JSON (open it in ui.perfetto.dev): a track per unit, per DMA link\n"
		   "lanes with base latency, transfer, stall and slack phases, flows from each DMA ISSUE\n"
		   "to its WAIT, counters for VMEM occupancy and the largest free region. Slices are\n"
		   "named by what ran and where (\"ta.mxu.mm attn.c:37 (attn)\", from the program's line\n"
		   "tables; --elf PROG), with the pc, disassembly and \"source\" object in their args.\n"
		   "One process per input file. docs/analyses.md.\n"
		   "\n"
		   "With host traces (snr host record; CUPTI files merge into them) everything is on\n"
		   "the host's clock (CLOCK_MONOTONIC, microseconds): each host thread's on/off-CPU\n"
		   "slices with stacks in args, its probed calls by bucket, libta1rt launches and\n"
		   "CUPTI records as device tracks. A replayed window (T.snrt or M.snrm) starts at\n"
		   "the host trace's ta1rt_launch number N (--launch N; by default the only launch\n"
		   "if there is exactly one), else at the start of the host trace; its cycles become\n"
		   "time through the config's clock_hz. docs/host.md.\n");
}

/* A host trace (.snrh) by its magic; anything else goes to an_load. */
static bool is_host_trace(const char *path)
{
	char magic[8] = {0};
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	size_t got = fread(magic, 1, sizeof(magic), f);
	fclose(f);
	return got == sizeof(magic) && !memcmp(magic, SNRH_MAGIC, sizeof(magic));
}

static void put_json(struct out *o, json_t *events)
{
	size_t i;
	json_t *e;
	json_array_foreach(events, i, e)
	{
		ev_begin(o);
		json_dumpf(e, o->f, SNRH_EV_JSON_FLAGS);
	}
}

int snr_cmd_export(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		usage(argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (strcmp(argv[1], "perfetto")) {
		snr_err("export: unknown format '%s' (perfetto)", argv[1]);
		return 2;
	}
	static const struct option opts[] = {{"output", required_argument, NULL, 'o'},
					     {"config", required_argument, NULL, 'c'},
					     {"launch", required_argument, NULL, 'l'},
					     {"help", no_argument, NULL, 'h'},
					     {NULL, 0, NULL, 0}};
	const char *out_path = NULL, *config = NULL;
	uint64_t launch = 0;
	int opt;
	optind = 1;
	argc--;
	argv++;
	while ((opt = getopt_long(argc, argv, "o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 'o':
			out_path = optarg;
			break;
		case 'c':
			config = optarg;
			break;
		case 'l':
			if (!snr_parse_u64(optarg, &launch, false) || !launch) {
				snr_err("export: --launch wants a launch number from 1, not '%s'", optarg);
				return 2;
			}
			break;
		case 'h':
			usage(stdout);
			return 0;
		default:
			usage(stderr);
			return 2;
		}
	}
	if (!out_path || optind >= argc) {
		usage(stderr);
		return 2;
	}

	/* Host traces first: they fix the clock the replayed windows go on. */
	struct snrh_trace host;
	snrh_trace_init(&host);
	json_object_clear(host.meta);
	int nhost = 0, ndev = 0, rc = 0;
	char err[1024];
	for (int i = optind; i < argc; i++) {
		if (!is_host_trace(argv[i])) {
			ndev++;
			continue;
		}
		/* A host trace cut short (its recorder killed) is refused as a
		 * partial .snrt is, unless --allow-truncated. */
		bool cut = false;
		char why[sizeof(err)] = "";
		if (snrh_trace_read_partial(&host, argv[i], &cut, why, sizeof(why))) {
			snr_fmt(err, sizeof(err), "%s", why);
			cut = false;
		}
		size_t plen = strlen(argv[i]);
		const char *what = !strncmp(why, argv[i], plen) && !strncmp(why + plen, ": ", 2) ? why + plen + 2 : why;
		if ((!cut && why[0]) || (cut && snr_partial_check(argv[i], what, err, sizeof(err)))) {
			snr_err("export: %s", err);
			snrh_trace_free(&host);
			return 1;
		}
		nhost++;
	}
	int64_t base_ns = 0;
	char placed[160] = "";
	if (launch && !nhost) {
		snr_err("export: --launch %llu places a replayed window at a launch of a host trace, but no .snrh is given",
			(unsigned long long)launch);
		snrh_trace_free(&host);
		return 2;
	}
	if (nhost) {
		struct snrh_launch *ln = NULL;
		size_t nln = snrh_ta1_launches(&host, &ln);
		if (launch > nln) {
			snr_err("export: --launch %llu, but the host trace has %zu ta1rt_launch call%s",
				(unsigned long long)launch, nln, nln == 1 ? "" : "s");
			free(ln);
			snrh_trace_free(&host);
			return 2;
		}
		if (!launch && nln == 1)
			launch = 1;
		if (launch) {
			base_ns = (int64_t)ln[launch - 1].start;
			snprintf(placed, sizeof(placed), " (at ta1rt_launch #%llu)", (unsigned long long)launch);
		} else {
			base_ns = (int64_t)json_integer_value(json_object_get(host.meta, "t_start_ns"));
			snprintf(placed, sizeof(placed), " (at the host trace's start)");
			if (nln > 1 && ndev)
				fprintf(stderr,
					"snr export: the host trace has %zu ta1rt_launch calls; the replayed window starts at "
					"the trace's start (choose a launch with --launch N)\n",
					nln);
		}
		free(ln);
	}

	struct snr_outfile of;
	char oerr[600];
	FILE *f = snr_outfile_fopen(&of, out_path, oerr, sizeof(oerr));
	if (!f) {
		snr_err("export: %s", oerr);
		snrh_trace_free(&host);
		return 1;
	}
	struct out o = {.f = f, .first = true, .base_ns = base_ns};
	fputs("{\"displayTimeUnit\":\"ns\",\"traceEvents\":[", f);
	if (nhost) {
		json_t *events = json_array();
		snrh_trace_events(&host, events);
		put_json(&o, events);
		json_decref(events);
	}
	snrh_trace_free(&host);
	int pid = 0;
	for (int i = optind; i < argc && !rc; i++) {
		if (is_host_trace(argv[i]))
			continue;
		struct an_data d;
		if (an_load(&d, argv[i], config, AN_WANT_ALL, err, sizeof(err))) {
			snr_err("export: %s", err);
			rc = 1;
		} else {
			char label[4200];
			snprintf(label, sizeof(label), "%s%s", d.src.path, placed);
			rc = export_one(&o, &d, ++pid, label);
		}
		an_free(&d);
	}
	fputs("\n]}\n", f);
	if (snr_outfile_close(&of, !rc, oerr, sizeof(oerr))) {
		if (!rc)
			snr_err("export: %s", oerr);
		return 1;
	}
	return 0;
}
