/*
 * cmd_annotate.c: `snr annotate T.snrt|M.snrm`: where the window's cycles
 * went in the user's source (analyzer/annotate.h does the accounting).
 * Text: the totals as the replay gives them, the hottest lines, then each
 * function's source with executions, cycles, share, a heat mark and the
 * stall cycles of every cause in the margin (under --asm each line's
 * instructions beneath it). --json: annotate.h's document. --compare B:
 * per line and cause, A before and B after, paired by function and statement
 * text (analyzer/linematch.c).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/annotate.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"
#include "snr_cli.h"

static void usage(FILE *f)
{
	fprintf(f,
		"usage: snr annotate T.snrt|M.snrm [--function F] [--asm] [--source-dir DIR] [--top N]\n"
		"                    [--sort inclusive|self] [--compare B.snrt|B.snrm] [--config M.json]\n"
		"                    [--elf PROG] [--json]\n"
		"\n"
		"Where the replayed window spent its cycles, per source line of the program\n"
		"(DWARF line tables: build with `snr cc -g`; without them, per function and pc).\n"
		"An instruction's cycles run from its issue to the next one's, with the stall\n"
		"that delayed its issue counted as its own, so that the figures add up to the\n"
		"replay's cycles exactly; stall cycles are split by cause (dma-base,\n"
		"dma-transfer, vmem-hazard, unit-busy, register, branch). Code inlined from\n"
		"ta1.h is counted at the user's line that called the intrinsic.\n"
		"\n"
		"A line's inclusive cycles add those of the functions it calls (a call, jal/jalr\n"
		"with rd = ra, until its return; once per cycle under recursion), so that a line\n"
		"whose time goes to a callee (libgcc's __divsf3 for a float division on RV64IM)\n"
		"ranks by it; the calls table gives each calling line's callees with their calls\n"
		"and cycles. A window that starts inside a callee charges the line that called it\n"
		"(or \"" AN_CALLER_OUTSIDE "\").\n"
		"\n"
		"  --function F      only function F's lines\n"
		"  --asm             each line's instructions (pc, disassembly, figures) beneath it\n"
		"  --source-dir DIR  where the sources are when not at the paths the ELF names\n"
		"  --top N           the N hottest lines in the summary (default 10; 0: all)\n"
		"  --sort KEY        rank the hottest lines by inclusive cycles (the default) or\n"
		"                    by self cycles (their own instructions' only)\n"
		"  --compare B       per line and cause: this window (before) and B (after), lines\n"
		"                    matched by function and statement text (as diff does), so that\n"
		"                    an edit that moves lines keeps them paired\n"
		"  --config M.json   the machine config for a trace's replay (default: the recorded)\n"
		"  --elf PROG        the program's ELF (default: the one the trace recorded)\n"
		"  --json            the figures as JSON (docs/analyses.md, \"annotate\")\n");
}

struct opts {
	const char *path, *function, *source_dir, *compare, *config;
	bool asm_, json, by_self;
	uint64_t top;
};

static const char *const short_cause[SNR_STALL_COUNT] = {"dma-base", "dma-xfer", "vmem-haz", "unit-bsy", "register",
							  "branch", "peer"};

static const char *display_path(const char *file)
{
	static char cwd[4096];
	static size_t n = (size_t)-1;
	if (n == (size_t)-1) {
		n = getcwd(cwd, sizeof(cwd) - 2) ? strlen(cwd) : 0;
		if (n)
			cwd[n++] = '/', cwd[n] = 0;
	}
	return file && n > 1 && !strncmp(file, cwd, n) ? file + n : file;
}

static void heat(char *buf, double share)
{
	int k = (int)(share * 10 + 0.5);
	if (k > 10)
		k = 10;
	memset(buf, '#', (size_t)k);
	buf[k] = 0;
}

static void where(const struct an_annot_row *r, bool pc_row, char *buf, size_t len)
{
	if (r->file)
		snprintf(buf, len, "%s:%u (%s)", display_path(r->file), r->line, r->function ? r->function : "?");
	else if (!strcmp(r->function, AN_CALLER_OUTSIDE))
		snprintf(buf, len, "%s", r->function);
	else if (pc_row)
		snprintf(buf, len, "%s (no line table) 0x%llx", r->function, (unsigned long long)r->pc);
	else
		snprintf(buf, len, "%s (no line table)", r->function);
}

/* pc_row: no inclusive figures (they are a line's) */
static void figures(const struct an_annot *a, const struct an_annot_row *r, bool pc_row)
{
	double share = a->total_cycles ? (double)r->cycles / (double)a->total_cycles : 0;
	char h[16];
	heat(h, share);
	printf("%9llu %6.1f%% %-10s", (unsigned long long)r->cycles, 100 * share, h);
	if (pc_row)
		printf(" %9s %6s ", "", "");
	else
		printf(" %9llu %6.1f%%", (unsigned long long)r->inclusive_cycles,
		       a->total_cycles ? 100.0 * (double)r->inclusive_cycles / (double)a->total_cycles : 0.0);
	printf(" %7llu", (unsigned long long)r->executions);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		printf(" %8llu", (unsigned long long)r->stall[c]);
}

static void figures_header(const char *last)
{
	printf("%9s %7s %-10s %9s %7s %7s", "cycles", "share", "heat", "inclusive", "share", "execs");
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		printf(" %8s", short_cause[c]);
	printf("  %s\n", last);
}

static bool wanted(const struct opts *o, const struct an_annot_row *r)
{
	return !o->function || (r->function && !strcmp(o->function, r->function));
}

static void print_pcs(const struct an_annot *a, const struct an_annot_row *l)
{
	for (size_t k = 0; k < l->npcs; k++) {
		const struct an_annot_row *p = &a->pcs[l->first_pc + k];
		figures(a, p, true);
		printf("  %10s  0x%llx  %s\n", "", (unsigned long long)p->pc, p->disasm);
	}
}

/* One function's listing: its lines in source order (lines[] sorted so),
 * with the text of the file from its first annotated line - 2 to its last. */
static void print_function(const struct opts *o, const struct an_annot *a, const struct an_annot_row *const *ls,
			   size_t nls)
{
	const struct an_annot_row *first = ls[0];
	if (!first->file) {
		printf("\n%s (no line table: per instruction)\n", first->function);
		figures_header("pc  disassembly");
		for (size_t i = 0; i < nls; i++)
			print_pcs(a, ls[i]);
		return;
	}
	printf("\n%s: %s\n", display_path(first->file), first->function ? first->function : "?");
	size_t nsrc;
	char **src = an_annot_read_source(first->file, o->source_dir, &nsrc);
	if (!src)
		printf("(source not found at %s; --source-dir DIR says where it is)\n", first->file);
	figures_header("line  source");
	unsigned lo = first->line > 2 ? first->line - 2 : 1, hi = ls[nls - 1]->line;
	size_t k = 0;
	for (unsigned ln = src ? lo : 0; src && ln <= hi && ln <= nsrc; ln++) {
		const char *text = src[ln - 1];
		while (k < nls && ls[k]->line < ln) /* a line past the file's end (a stale source) */
			k++;
		if (k < nls && ls[k]->line == ln) {
			figures(a, ls[k], false);
			printf("  %5u  %s\n", ln, text);
			if (o->asm_)
				print_pcs(a, ls[k]);
			k++;
		} else {
			printf("%*s  %5u  %s\n", 9 + 8 + 11 + 10 + 8 + 8 + 9 * SNR_STALL_COUNT, "", ln, text);
		}
	}
	for (size_t i = src ? k : 0; i < nls; i++) { /* not in the file (or no file) */
		figures(a, ls[i], false);
		printf("  %5u  %s\n", ls[i]->line, src ? "(past the end of the source file)" : "");
		if (o->asm_)
			print_pcs(a, ls[i]);
	}
	for (size_t i = 0; i < nsrc; i++)
		free(src[i]);
	free(src);
}

static int cmp_str_eq(const char *x, const char *y)
{
	if (!x || !y)
		return x != y;
	return strcmp(x, y);
}

static int cmp_line_source(const void *pa, const void *pb)
{
	const struct an_annot_row *x = *(const struct an_annot_row *const *)pa, *y = *(const struct an_annot_row *const *)pb;
	if (!x->file != !y->file)
		return x->file ? -1 : 1;
	int c = x->file ? strcmp(x->file, y->file) : 0;
	if (!c)
		c = strcmp(x->function ? x->function : "", y->function ? y->function : "");
	if (!c)
		c = x->line < y->line ? -1 : x->line > y->line;
	return c;
}

static int cmp_inclusive(const void *pa, const void *pb)
{
	const struct an_annot_row *x = *(const struct an_annot_row *const *)pa, *y = *(const struct an_annot_row *const *)pb;
	if (x->inclusive_cycles != y->inclusive_cycles)
		return x->inclusive_cycles > y->inclusive_cycles ? -1 : 1;
	if (x->cycles != y->cycles)
		return x->cycles > y->cycles ? -1 : 1;
	return x < y ? -1 : x > y; /* a->lines' order (hottest, then source order) */
}

/* The call view: caller line -> callee, most cycles first. */
static void print_calls(const struct opts *o, const struct an_annot *a)
{
	uint64_t shown = 0;
	for (size_t i = 0; i < a->ncalls && (!o->top || shown < o->top); i++) {
		const struct an_annot_call *c = &a->calls[i];
		if (o->function && (!c->function || strcmp(o->function, c->function)))
			continue;
		if (!shown)
			printf("\ncalls: caller line -> callee (cycles while its calls were open, with the callee's callees)\n"
			       "%9s %7s %7s  %s\n", "cycles", "share", "calls", "caller -> callee");
		struct an_annot_row r = {.file = c->file, .line = c->line, .function = c->function};
		char w[600];
		where(&r, false, w, sizeof(w));
		printf("%9llu %6.1f%% %7llu  %s -> %s%s\n", (unsigned long long)c->cycles,
		       a->total_cycles ? 100.0 * (double)c->cycles / (double)a->total_cycles : 0.0,
		       (unsigned long long)c->calls, w, c->callee, c->calls ? "" : "  (called before the window)");
		shown++;
	}
}

/* title: what the figures are of (the input's path); listing: each
 * function's source after the hottest lines */
static void print_text(const struct opts *o, const struct an_annot *a, const char *title, bool listing)
{
	printf("%s: %llu cycles, %llu instructions (a replay: exact cycles, not samples)\n", title,
	       (unsigned long long)a->total_cycles, (unsigned long long)a->instructions);
	uint64_t stalls = 0;
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		stalls += a->stall[c];
	printf("stall cycles %llu:", (unsigned long long)stalls);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		printf("%s %s %llu", c ? "," : "", snr_stall_cause_name((enum snr_stall_cause)c),
		       (unsigned long long)a->stall[c]);
	printf("\ndrain: %llu cycles after the last instruction's issue (work in flight), in no line\n",
	       (unsigned long long)a->drain_cycles);
	if (!a->have_lines)
		printf("no source lines: the program's ELF has no line table (build with `snr cc -g`) or was not "
		       "found (--elf PROG)\n");
	printf("\nhottest lines%s, by %s cycles%s\n", o->function ? " of the function" : "",
	       o->by_self ? "self" : "inclusive", o->by_self ? "" : " (with their callees')");
	figures_header("line");
	const struct an_annot_row **hot = snr_xcalloc(a->nlines ? a->nlines : 1, sizeof(*hot));
	for (size_t i = 0; i < a->nlines; i++)
		hot[i] = &a->lines[i];
	if (!o->by_self && a->nlines)
		snr_qsort(hot, a->nlines, sizeof(*hot), cmp_inclusive);
	uint64_t shown = 0;
	for (size_t i = 0; i < a->nlines && (!o->top || shown < o->top); i++) {
		const struct an_annot_row *l = hot[i];
		if (!wanted(o, l))
			continue;
		char w[600];
		where(l, false, w, sizeof(w));
		figures(a, l, false);
		printf("  %s\n", w);
		shown++;
	}
	free(hot);
	print_calls(o, a);
	if (!listing)
		return;
	/* the listing: functions in source order */
	const struct an_annot_row **ls = snr_xcalloc(a->nlines ? a->nlines : 1, sizeof(*ls));
	size_t n = 0;
	for (size_t i = 0; i < a->nlines; i++)
		if (wanted(o, &a->lines[i]))
			ls[n++] = &a->lines[i];
	snr_qsort(ls, n, sizeof(*ls), cmp_line_source);
	/* functions (runs of ls), hottest first */
	struct run { size_t at, n; uint64_t cycles; } *runs = snr_xcalloc(n ? n : 1, sizeof(*runs));
	size_t nruns = 0;
	for (size_t i = 0; i < n;) {
		size_t j = i + 1;
		while (j < n && !cmp_str_eq(ls[i]->file, ls[j]->file) && !strcmp(ls[i]->function, ls[j]->function))
			j++;
		runs[nruns] = (struct run){i, j - i, 0};
		for (size_t k = i; k < j; k++)
			runs[nruns].cycles += ls[k]->cycles;
		nruns++;
		i = j;
	}
	for (size_t i = 1; i < nruns; i++) /* insertion sort, stable: few functions */
		for (size_t k = i; k > 0 && runs[k].cycles > runs[k - 1].cycles; k--) {
			struct run t = runs[k];
			runs[k] = runs[k - 1];
			runs[k - 1] = t;
		}
	for (size_t i = 0; i < nruns; i++)
		print_function(o, a, ls + runs[i].at, runs[i].n);
	free(runs);
	free(ls);
}

/* ---- --compare ----------------------------------------------------------------- */

static void print_compare(const struct opts *o, const struct an_annot *a, const struct an_annot *b,
			  const struct an_annot_pair *p, size_t n)
{
	printf("before %s: %llu cycles; after %s: %llu cycles (%+lld)\n", o->path, (unsigned long long)a->total_cycles,
	       o->compare, (unsigned long long)b->total_cycles,
	       (long long)b->total_cycles - (long long)a->total_cycles);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		printf("  %-13s %9llu -> %9llu  (%+lld)\n", snr_stall_cause_name((enum snr_stall_cause)c),
		       (unsigned long long)a->stall[c], (unsigned long long)b->stall[c],
		       (long long)b->stall[c] - (long long)a->stall[c]);
	printf("\nlines by the change in their cycles (before -> after; per cause where either is non-zero), matched\n"
	       "by function and statement text (a line moved by an edit: file:BEFORE -> AFTER)\n");
	uint64_t shown = 0;
	for (size_t i = 0; i < n && (!o->top || shown < o->top); i++) {
		const struct an_annot_row *r = p[i].before ? p[i].before : p[i].after;
		if (!wanted(o, r))
			continue;
		char w[1400];
		where(r, false, w, sizeof(w));
		if (p[i].before && p[i].after && p[i].after->file &&
		    (p[i].after->line != r->line || strcmp(p[i].after->file, r->file))) { /* moved by an edit */
			char bw[300], aw[300];
			snprintf(bw, sizeof(bw), "%s:%u", display_path(r->file), r->line);
			snprintf(aw, sizeof(aw), "%s:%u", display_path(p[i].after->file), p[i].after->line);
			const char *fb = strrchr(r->file, '/'), *fa = strrchr(p[i].after->file, '/');
			bool same_file = !strcmp(fb ? fb : r->file, fa ? fa : p[i].after->file); /* by base name */
			snprintf(w, sizeof(w), "%s -> %s (%s)", bw, same_file ? strrchr(aw, ':') + 1 : aw, r->function);
		}
		printf("%9llu -> %9llu  %+9lld  %s%s\n", (unsigned long long)(p[i].before ? p[i].before->cycles : 0),
		       (unsigned long long)(p[i].after ? p[i].after->cycles : 0), (long long)p[i].delta, w,
		       !p[i].before ? "  (only after)" : !p[i].after ? "  (only before)" : "");
		for (int c = 0; c < SNR_STALL_COUNT; c++) {
			uint64_t x = p[i].before ? p[i].before->stall[c] : 0, y = p[i].after ? p[i].after->stall[c] : 0;
			if (x || y)
				printf("%26s  %-13s %llu -> %llu\n", "", snr_stall_cause_name((enum snr_stall_cause)c),
				       (unsigned long long)x, (unsigned long long)y);
		}
		shown++;
	}
}

static int load(const struct opts *o, const char *path, struct an_annot *a, struct snr_source *src)
{
	char err[2048];
	if (an_annotate_load(a, src, path, o->config, err, sizeof(err))) {
		snr_err("annotate: %s", err);
		snr_source_close(src);
		return -1;
	}
	return 0;
}

/* The program a window ran (its trace's META: the ELF given to the
 * recorder, or the first object mapped), "" if not named. */
static char *program_of(const struct snr_source *src)
{
	json_t *m = json_loads(src->meta_json ? src->meta_json : "{}", 0, NULL);
	const char *elf = json_string_value(json_object_get(m, "elf"));
	if (!elf)
		elf = json_string_value(json_object_get(json_array_get(json_object_get(m, "objects"), 0), "path"));
	char *p = snr_xstrdup(elf ? elf : "");
	json_decref(m);
	return p;
}

/* Several windows: each one's totals and hottest lines, then every window
 * added up per pc and line (the same program: a set's windows). */
static int annotate_windows(const struct opts *o, int nargs, char **args)
{
	struct snr_inputs in;
	char err[1024];
	if (snr_inputs_expand(args, nargs, &in, err, sizeof(err))) {
		snr_err("annotate: %s", err);
		return 1;
	}
	struct an_annot *a = snr_xcalloc(in.n, sizeof(*a)), together = {0};
	struct snr_source *src = snr_xcalloc(in.n, sizeof(*src));
	json_t *wins = json_array();
	size_t loaded = 0;
	int rc = 0;
	for (; loaded < in.n; loaded++) {
		size_t i = loaded;
		if (load(o, in.v[i].path, &a[i], &src[i])) {
			rc = 1;
			break;
		}
		char *prog = program_of(&src[i]), *prog0 = program_of(&src[0]);
		if (strcmp(prog, prog0))
			snr_warn("annotate: window %zu (%s) is of another program (%s) than window 0 (%s): its pcs are "
				 "added to the same pcs of window 0's program", i, in.v[i].path, prog, prog0);
		free(prog);
		free(prog0);
		an_annot_merge(&together, &a[i]);
		if (o->json) {
			json_t *w = snr_input_json(&in, i);
			json_object_set_new(w, "result", an_annot_json(&a[i], &src[i], o->function));
			json_array_append_new(wins, w);
		} else {
			char title[4200];
			snprintf(title, sizeof(title), "== window %zu: %s #%llu (%s)", i, in.v[i].group,
				 (unsigned long long)in.v[i].set_window, in.v[i].path);
			print_text(o, &a[i], title, false);
			printf("\n");
		}
	}
	if (!rc) {
		char title[200];
		snprintf(title, sizeof(title), "== together: %zu windows", in.n);
		if (o->json) {
			json_t *root = json_object();
			json_object_set_new(root, "schema", json_string("snr.annotate.windows/1"));
			json_object_set_new(root, "windows", wins);
			json_object_set_new(root, "together", an_annot_json(&together, &src[0], o->function));
			json_dumpf(root, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
			putchar('\n');
			json_decref(root);
			wins = NULL;
		} else {
			print_text(o, &together, title, true);
		}
	}
	json_decref(wins);
	an_annot_free(&together);
	for (size_t i = 0; i < loaded; i++) {
		an_annot_free(&a[i]);
		snr_source_close(&src[i]);
	}
	free(a);
	free(src);
	snr_inputs_free(&in);
	return rc;
}

int snr_cmd_annotate(int argc, char **argv)
{
	static const struct option longopts[] = {
		{"function", required_argument, NULL, 'f'}, {"asm", no_argument, NULL, 'a'},
		{"source-dir", required_argument, NULL, 's'}, {"top", required_argument, NULL, 't'},
		{"compare", required_argument, NULL, 'c'}, {"config", required_argument, NULL, 'C'},
		{"json", no_argument, NULL, 'j'}, {"sort", required_argument, NULL, 'S'},
		{"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};
	struct opts o = {.top = 10};
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (opt) {
		case 'f': o.function = optarg; break;
		case 'a': o.asm_ = true; break;
		case 's': o.source_dir = optarg; break;
		case 't':
			if (!snr_parse_u64(optarg, &o.top, false)) {
				snr_err("annotate: --top needs a number of lines, not '%s'", optarg);
				return 2;
			}
			break;
		case 'c': o.compare = optarg; break;
		case 'C': o.config = optarg; break;
		case 'j': o.json = true; break;
		case 'S':
			if (strcmp(optarg, "self") && strcmp(optarg, "inclusive")) {
				snr_err("annotate: --sort takes inclusive or self, not '%s'", optarg);
				return 2;
			}
			o.by_self = !strcmp(optarg, "self");
			break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (optind >= argc) {
		snr_err("annotate: give a trace or metrics file (or a set, or several files)");
		usage(stderr);
		return 2;
	}
	if (optind + 1 != argc || snr_is_set(argv[optind])) {
		if (o.compare) {
			snr_err("annotate: --compare takes one window on each side; several windows are added up together");
			return 2;
		}
		return annotate_windows(&o, argc - optind, argv + optind);
	}
	o.path = argv[optind];
	struct an_annot a, b;
	struct snr_source sa, sb;
	if (load(&o, o.path, &a, &sa))
		return 1;
	if (o.function) {
		bool found = false;
		for (size_t i = 0; i < a.nlines && !found; i++)
			found = !strcmp(a.lines[i].function, o.function);
		if (!found) {
			snr_err("annotate: no function '%s' ran in %s's window", o.function, o.path);
			an_annot_free(&a);
			snr_source_close(&sa);
			return 1;
		}
	}
	int rc = 0;
	if (o.compare) {
		if (load(&o, o.compare, &b, &sb)) {
			rc = 1;
		} else {
			size_t n;
			struct an_annot_pair *p = an_annot_pair_lines(&a, &b, o.source_dir, &n);
			if (o.json) {
				json_t *j = an_annot_compare_json(&a, &b, p, n, o.path, o.compare);
				json_dumpf(j, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
				putchar('\n');
				json_decref(j);
			} else {
				print_compare(&o, &a, &b, p, n);
			}
			free(p);
			an_annot_free(&b);
			snr_source_close(&sb);
		}
	} else if (o.json) {
		json_t *j = an_annot_json(&a, &sa, o.function);
		json_dumpf(j, stdout, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
		putchar('\n');
		json_decref(j);
	} else {
		print_text(&o, &a, sa.path, true);
	}
	an_annot_free(&a);
	snr_source_close(&sa);
	return rc;
}
