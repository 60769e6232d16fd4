/*
 * cmd_profile.c: `snr profile`, the coarse step before recording (paper 001
 * §4.4): run a whole program under the TA1 timing model and attribute the
 * core's time, the FLOPs issued and the HBM traffic to functions, with a
 * roofline verdict per function. This is how a user picks a breakpoint.
 *
 * Definitions (docs/profile.md):
 *   self cycles      model cycles between issuing an instruction of the
 *                    function and issuing the next instruction (stalls included)
 *   total cycles     from a call into the function to its return (a shadow
 *                    stack over jal/jalr with rd = ra and the returns jalr zero, 0(ra))
 *   calls            calls into the function's entry
 *   FLOPs            issued by the function itself: element-wise vector ops n,
 *                    vexp n, vsum_rows rows*cols, MXU matmul 2*rows*128*128
 *                    (+ rows*128 when accumulating)
 *   HBM bytes        DMA bytes read from or written to any chip's HBM
 *   intensity        FLOPs / HBM bytes; the ridge point is the MXU's peak
 *                    (2*128*128*rows_per_cycle FLOP/cycle) over HBM bandwidth
 *   attained         compute-bound: (FLOPs / total cycles) / peak;
 *                    memory-bound: (HBM bytes / total cycles) / bandwidth
 */
#include <getopt.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/timed_run.h"
#include "lib/snr_config.h"
#include "lib/snr_elf.h"
#include "lib/snr_util.h"
#include "snr_cli.h"

static const char profile_usage[] =
	"usage: snr profile PROG.elf [--chips N] [--config M.json] [--top K] [--json]\n"
	"\n"
	"Runs the program under the TA1 timing model and prints, per function: calls,\n"
	"total and self cycles and their share, FLOPs, HBM bytes, arithmetic intensity,\n"
	"whether it is compute- or memory-bound on the roofline and the fraction of that\n"
	"bound it attains (definitions in docs/profile.md). Pick a breakpoint from it\n"
	"for `snr record`.\n"
	"\n"
	"options:\n"
	"  --chips N        chips in the pod; figures are summed over chips\n"
	"  --config M.json  machine config\n"
	"  --top K          rows to print (default 20; 0 = all)\n"
	"  --json           the table as JSON\n"
	"  -h, --help       this text\n";

struct fn {
	uint64_t calls, self, total, flops, hbm_bytes;
};

struct frame {
	size_t fn;
	uint64_t start;
};

struct prof {
	const struct snr_elf *elf;
	struct fn *fns; /* one per ELF symbol, plus one for "(no symbol)" */
	size_t nfns;
	struct frame *stack[TA1_MAX_CHIPS];
	size_t depth[TA1_MAX_CHIPS], cap[TA1_MAX_CHIPS];
};

static size_t fn_of(struct prof *p, uint64_t pc)
{
	const struct snr_elf_symbol *s = snr_elf_lookup(p->elf, pc);
	return s ? (size_t)(s - p->elf->symbols) : p->nfns - 1;
}

static uint64_t flops_of(const struct ta1_insn *in, const uint64_t *x)
{
	switch ((enum ta1_op)in->op) {
	case TA1_OP_TA_VADD: case TA1_OP_TA_VMUL: case TA1_OP_TA_VMAX: case TA1_OP_TA_VSCALE: case TA1_OP_TA_VEXP:
		return x[in->rd];
	case TA1_OP_TA_VSUMROWS:
		return x[in->rs3] * x[in->rd];
	case TA1_OP_TA_MXU_MM:
		return 2 * x[in->rd] * TA1_MXU_DIM * TA1_MXU_DIM;
	case TA1_OP_TA_MXU_MMA:
		return 2 * x[in->rd] * TA1_MXU_DIM * TA1_MXU_DIM + x[in->rd] * TA1_MXU_DIM;
	default:
		return 0;
	}
}

static void on_step(void *user, const struct ta1_step_info *s)
{
	struct prof *p = user;
	size_t f = fn_of(p, s->pc);
	uint64_t dt = s->cycle_after - s->cycle_before;
	p->fns[f].self += dt;
	const struct ta1_insn *in = s->insn;
	p->fns[f].flops += flops_of(in, s->x);
	for (unsigned i = 0; i < s->access->nregions; i++) {
		const struct ta1_region *r = &s->access->region[i];
		if (ta1_insn_table[in->op].cls == TA1_CLASS_DMA_ISSUE && r->space == TA1_SPACE_HBM)
			p->fns[f].hbm_bytes += r->row_bytes * r->rows;
	}
	/* calls and returns */
	unsigned c = s->chip;
	bool call = (in->op == TA1_OP_JAL || in->op == TA1_OP_JALR) && in->rd == 1;
	bool ret = in->op == TA1_OP_JALR && in->rd == 0 && in->rs1 == 1 && in->imm == 0;
	if (call) {
		size_t callee = fn_of(p, s->next_pc);
		p->fns[callee].calls++;
		if (p->depth[c] == p->cap[c]) {
			p->cap[c] = p->cap[c] ? p->cap[c] * 2 : 64;
			p->stack[c] = snr_xrealloc(p->stack[c], p->cap[c] * sizeof(struct frame));
		}
		p->stack[c][p->depth[c]++] = (struct frame){callee, s->cycle_after};
	} else if (ret && p->depth[c]) {
		struct frame fr = p->stack[c][--p->depth[c]];
		p->fns[fr.fn].total += s->cycle_after - fr.start;
	}
}

int snr_cmd_profile(int argc, char **argv)
{
	static const struct option opts[] = {
		{"chips", required_argument, NULL, 'n'}, {"config", required_argument, NULL, 'c'},
		{"top", required_argument, NULL, 't'},   {"json", no_argument, NULL, 'j'},
		{"help", no_argument, NULL, 'h'},        {NULL, 0, NULL, 0},
	};
	const char *config_path = NULL;
	uint64_t chips = 0, top = 20;
	int as_json = 0, opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (!snr_parse_u64(optarg, &chips, false) || chips < 1 || chips > TA1_MAX_CHIPS) {
				snr_err("profile: --chips must be 1..%d", TA1_MAX_CHIPS);
				return 2;
			}
			break;
		case 'c': config_path = optarg; break;
		case 't':
			if (!snr_parse_u64(optarg, &top, false)) {
				snr_err("profile: --top needs a count");
				return 2;
			}
			break;
		case 'j': as_json = 1; break;
		case 'h': fputs(profile_usage, stdout); return 0;
		default: fputs(profile_usage, stderr); return 2;
		}
	}
	if (optind != argc - 1) {
		snr_err("profile: give exactly one program");
		fputs(profile_usage, stderr);
		return 2;
	}
	char err[512];
	struct snr_config cfg;
	snr_config_default(&cfg);
	if (config_path && snr_config_load(&cfg, config_path, err, sizeof(err))) {
		snr_err("profile: %s", err);
		return 1;
	}
	if (chips)
		cfg.chips = chips;
	struct snr_elf *elf = snr_elf_open(argv[optind], err, sizeof(err));
	if (!elf) {
		snr_err("profile: %s", err);
		return 1;
	}
	struct ta1_machine *m = ta1_machine_new(&cfg, err, sizeof(err));
	if (!m || ta1_machine_load(m, elf, err, sizeof(err))) {
		snr_err("profile: %s", err);
		ta1_machine_free(m);
		snr_elf_free(elf);
		return 1;
	}
	ta1_machine_set_output(m, 2, 2); /* the program's own output stays off the table */
	unsigned n = ta1_machine_nchips(m);
	struct ta1_timing_model **models = snr_xcalloc(n, sizeof(*models));
	for (unsigned i = 0; i < n; i++)
		models[i] = ta1_timing_new(&cfg, NULL, i);
	struct prof p = {.elf = elf, .nfns = elf->nsymbols + 1};
	p.fns = snr_xcalloc(p.nfns, sizeof(*p.fns));
	unsigned which = 0;
	enum ta1_stop st = ta1_timed_run(m, models, 0, &which, on_step, &p);
	int rc = 0;
	if (st == TA1_STOP_FAULT) {
		snr_err("profile: %s", ta1_chip_fault(ta1_machine_chip(m, which)));
		rc = 3;
	}
	uint64_t total = 0;
	for (unsigned i = 0; i < n; i++)
		total += ta1_timing_drain(models[i]);
	/* main-like roots (never returned from) take the whole run */
	for (unsigned c = 0; c < n; c++)
		for (size_t d = 0; d < p.depth[c]; d++)
			p.fns[p.stack[c][d].fn].total += ta1_timing_now(models[c]) - p.stack[c][d].start;
	double peak_flops = 2.0 * TA1_MXU_DIM * TA1_MXU_DIM * (double)cfg.mxu_rows_per_cycle;
	double bw = (double)cfg.dma_hbm_bytes_per_cycle, ridge = peak_flops / bw;
	size_t *order = snr_xcalloc(p.nfns, sizeof(*order));
	size_t nrows = 0;
	for (size_t i = 0; i < p.nfns; i++)
		if (p.fns[i].self || p.fns[i].total)
			order[nrows++] = i;
	for (size_t i = 1; i < nrows; i++) /* by total, then self, descending */
		for (size_t j = i; j > 0; j--) {
			struct fn *a = &p.fns[order[j - 1]], *b = &p.fns[order[j]];
			uint64_t ka = a->total > a->self ? a->total : a->self, kb = b->total > b->self ? b->total : b->self;
			if (ka >= kb)
				break;
			size_t t = order[j];
			order[j] = order[j - 1];
			order[j - 1] = t;
		}
	if (top && nrows > top)
		nrows = (size_t)top;
	json_t *rows = json_array();
	if (!as_json)
		printf("%-24s %6s %10s %6s %10s %12s %11s %8s %-7s %8s\n", "function", "calls", "total-cyc", "share",
		       "self-cyc", "FLOPs", "HBM-bytes", "FLOP/B", "bound", "attained");
	for (size_t k = 0; k < nrows; k++) {
		size_t i = order[k];
		const struct fn *f = &p.fns[i];
		const char *name = i < elf->nsymbols ? elf->symbols[i].name : "(no symbol)";
		uint64_t cyc = f->total > f->self ? f->total : f->self;
		double ai = f->hbm_bytes ? (double)f->flops / (double)f->hbm_bytes : (f->flops ? 1e300 : 0);
		bool compute = f->flops && ai >= ridge;
		double attained = 0;
		if (cyc && (f->flops || f->hbm_bytes))
			attained = compute ? ((double)f->flops / (double)cyc) / peak_flops
					   : ((double)f->hbm_bytes / (double)cyc) / bw;
		const char *bound = !f->flops && !f->hbm_bytes ? "-" : compute ? "compute" : "memory";
		if (as_json) {
			json_t *r = json_object();
			json_object_set_new(r, "function", json_string(name));
			json_object_set_new(r, "calls", json_integer((json_int_t)f->calls));
			json_object_set_new(r, "total_cycles", json_integer((json_int_t)f->total));
			json_object_set_new(r, "self_cycles", json_integer((json_int_t)f->self));
			json_object_set_new(r, "share", json_real(total ? (double)cyc / (double)total : 0));
			json_object_set_new(r, "flops", json_integer((json_int_t)f->flops));
			json_object_set_new(r, "hbm_bytes", json_integer((json_int_t)f->hbm_bytes));
			json_object_set_new(r, "intensity", f->hbm_bytes ? json_real(ai) : json_null());
			json_object_set_new(r, "bound", json_string(bound));
			json_object_set_new(r, "attained", json_real(attained));
			json_array_append_new(rows, r);
		} else {
			char ai_s[16];
			if (f->hbm_bytes)
				snprintf(ai_s, sizeof(ai_s), "%.2f", ai);
			else
				snprintf(ai_s, sizeof(ai_s), "%s", f->flops ? "inf" : "-");
			printf("%-24.24s %6llu %10llu %5.1f%% %10llu %12llu %11llu %8s %-7s %7.1f%%\n", name,
			       (unsigned long long)f->calls, (unsigned long long)f->total,
			       total ? 100.0 * (double)cyc / (double)total : 0.0, (unsigned long long)f->self,
			       (unsigned long long)f->flops, (unsigned long long)f->hbm_bytes, ai_s, bound, 100.0 * attained);
		}
	}
	if (as_json) {
		json_t *o = json_object();
		json_object_set_new(o, "program", json_string(argv[optind]));
		json_object_set_new(o, "chips", json_integer(n));
		json_object_set_new(o, "cycles", json_integer((json_int_t)total));
		json_object_set_new(o, "peak_flops_per_cycle", json_real(peak_flops));
		json_object_set_new(o, "hbm_bytes_per_cycle", json_real(bw));
		json_object_set_new(o, "ridge_flops_per_byte", json_real(ridge));
		json_object_set_new(o, "functions", rows);
		char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(o);
	} else {
		json_decref(rows);
		printf("\n%llu cycles on %u chip%s; roofline: MXU %.0f FLOP/cycle, HBM %.0f B/cycle, ridge %.1f FLOP/B\n",
		       (unsigned long long)total, n, n == 1 ? "" : "s", peak_flops, bw, ridge);
	}
	for (unsigned i = 0; i < n; i++) {
		ta1_timing_free(models[i]);
		free(p.stack[i]);
	}
	free(models);
	free(order);
	free(p.fns);
	ta1_machine_free(m);
	snr_elf_free(elf);
	return rc;
}
