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
 *   stall cycles     the timing model's stalls (by cause) of the instructions
 *                    run from a call to its return (the callees' included)
 *   bound            what those measured cycles were spent on, the largest of:
 *                    dma (WAITs on DMAs), hazard (VMEM hazards), mxu and
 *                    vector (waiting for a busy unit), scalar (the rest:
 *                    issuing, register and branch stalls)
 *   instructions per call  min / median / max over the calls (the median of
 *                    a reservoir of 4096 calls when there are more)
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
	"instructions per call (min/median/max: a --count for `snr record`), total and\n"
	"self cycles and their share, the share of its cycles stalled on DMAs, what bounds\n"
	"it from its measured cycles (dma, mxu, vector, scalar, hazard), FLOPs, HBM bytes,\n"
	"arithmetic intensity, the roofline's verdict (compute or memory) and the fraction\n"
	"of it attained (definitions in docs/profile.md). Pick a breakpoint from it for\n"
	"`snr record`.\n"
	"\n"
	"options:\n"
	"  --chips N        chips in the pod; figures are summed over chips\n"
	"  --config M.json  machine config\n"
	"  --top K          rows to print (default 20; 0 = all)\n"
	"  --json           the table as JSON (docs/profile.md)\n"
	"  -h, --help       this text\n";

/* Where a function's cycles went: the model's stall causes, with unit-busy
 * stalls split by the unit waited for. */
enum spent {
	SPENT_DMA_BASE,
	SPENT_DMA_TRANSFER,
	SPENT_VMEM_HAZARD,
	SPENT_MXU_BUSY,
	SPENT_VECTOR_BUSY,
	SPENT_REGISTER,
	SPENT_BRANCH,
	SPENT_PEER,
	SPENT_REPORTED, /* the model's causes above; below, how the VMEM hazards split */
	SPENT_HAZARD_MXU = SPENT_REPORTED, /* VMEM hazards on an MXU op's result */
	SPENT_HAZARD_VECTOR,              /* on a vector op's result */
	SPENT_COUNT,
};
static const char *const spent_name[SPENT_REPORTED] = {"dma_base", "dma_transfer", "vmem_hazard", "mxu_busy",
						       "vector_busy", "register", "branch", "peer"};

#define CALL_SAMPLE 4096
#define UNIT_RING 4096 /* instructions-per-call values kept per function */

struct fn {
	uint64_t calls, self, total, flops, hbm_bytes;
	uint64_t stall[SPENT_COUNT]; /* from calls to returns, callees included */
	uint64_t returns, insn_min, insn_max;
	uint64_t *insn_sample; /* a reservoir of instructions per call */
	size_t nsample;
};

struct frame {
	size_t fn;
	uint64_t start, insns0;
	uint64_t stall0[SPENT_COUNT];
};

struct prof {
	const struct snr_elf *elf;
	struct fn *fns; /* one per ELF symbol, plus one for "(no symbol)" */
	size_t nfns;
	struct frame *stack[TA1_MAX_CHIPS];
	size_t depth[TA1_MAX_CHIPS], cap[TA1_MAX_CHIPS];
	/* per chip: the stalls the model reported for the instruction being
	 * accounted (on_stall runs before the step hook), and running totals */
	uint64_t pending[TA1_MAX_CHIPS][SNR_STALL_COUNT];
	uint64_t stall_sum[TA1_MAX_CHIPS][SPENT_COUNT];
	uint64_t insns[TA1_MAX_CHIPS];
	/* the class of each chip's last UNIT_RING instructions, for the unit a
	 * VMEM hazard waited for (the op in flight that writes the region) */
	uint8_t unit_ring[TA1_MAX_CHIPS][UNIT_RING];
	uint64_t hazard_on[TA1_MAX_CHIPS][3]; /* pending: MXU, vector, unknown */
	uint64_t rng;
};

struct chip_tracker {
	struct prof *p;
	unsigned chip;
};

static void on_stall(void *user, const struct snr_ev_stall *e)
{
	const struct chip_tracker *ct = user;
	struct prof *p = ct->p;
	unsigned c = ct->chip;
	if (e->cause < SNR_STALL_COUNT)
		p->pending[c][e->cause] += e->cycles;
	if (e->cause == SNR_STALL_VMEM_HAZARD) {
		/* the stalled instruction is the hook's next one, insns[c] */
		uint64_t back = e->responsible >= 0 && (uint64_t)e->responsible <= e->index
					? e->index - (uint64_t)e->responsible
					: UINT64_MAX;
		unsigned who = 2;
		if (back && back <= p->insns[c] && back < UNIT_RING) {
			uint8_t cls = p->unit_ring[c][(p->insns[c] - back) % UNIT_RING];
			who = cls == TA1_CLASS_MATRIX ? 0 : cls == TA1_CLASS_VECTOR ? 1 : 2;
		}
		p->hazard_on[c][who] += e->cycles;
	}
}

static void sample_call(struct prof *p, struct fn *f, uint64_t n)
{
	if (!f->returns || n < f->insn_min)
		f->insn_min = n;
	if (n > f->insn_max)
		f->insn_max = n;
	f->returns++;
	if (!f->insn_sample)
		f->insn_sample = snr_xcalloc(CALL_SAMPLE, sizeof(*f->insn_sample));
	if (f->nsample < CALL_SAMPLE) {
		f->insn_sample[f->nsample++] = n;
		return;
	}
	p->rng = p->rng * 6364136223846793005ull + 1442695040888963407ull; /* deterministic reservoir */
	uint64_t j = (p->rng >> 17) % f->returns;
	if (j < CALL_SAMPLE)
		f->insn_sample[j] = n;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

static uint64_t median_of(struct fn *f)
{
	if (!f->nsample)
		return 0;
	snr_qsort(f->insn_sample, f->nsample, sizeof(*f->insn_sample), cmp_u64);
	return f->insn_sample[f->nsample / 2];
}

/* The bound from a function's measured cycles: what the largest part of
 * them was spent on. */
static const char *bound_of(const struct fn *f, uint64_t cyc, double *dma_share)
{
	/* a VMEM hazard on an MXU or vector op's result waits for that unit */
	uint64_t dma = f->stall[SPENT_DMA_BASE] + f->stall[SPENT_DMA_TRANSFER];
	uint64_t on_mxu = f->stall[SPENT_HAZARD_MXU], on_vec = f->stall[SPENT_HAZARD_VECTOR];
	uint64_t hazard = f->stall[SPENT_VMEM_HAZARD] - on_mxu - on_vec;
	uint64_t part[6] = {dma, f->stall[SPENT_MXU_BUSY] + on_mxu, f->stall[SPENT_VECTOR_BUSY] + on_vec, 0, hazard,
			    f->stall[SPENT_PEER]};
	uint64_t other = part[0] + part[1] + part[2] + part[4] + part[5];
	part[3] = cyc > other ? cyc - other : 0;
	static const char *const names[6] = {"dma", "mxu", "vector", "scalar", "hazard", "peer"};
	*dma_share = cyc ? (double)dma / (double)cyc : 0;
	if (!cyc)
		return "-";
	unsigned best = 0;
	for (unsigned k = 1; k < 6; k++)
		if (part[k] > part[best])
			best = k;
	return names[best];
}

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
	unsigned c = s->chip;
	uint64_t *pend = p->pending[c], *sum = p->stall_sum[c];
	sum[SPENT_DMA_BASE] += pend[SNR_STALL_DMA_BASE];
	sum[SPENT_DMA_TRANSFER] += pend[SNR_STALL_DMA_TRANSFER];
	sum[SPENT_VMEM_HAZARD] += pend[SNR_STALL_VMEM_HAZARD];
	sum[SPENT_HAZARD_MXU] += p->hazard_on[c][0];
	sum[SPENT_HAZARD_VECTOR] += p->hazard_on[c][1];
	memset(p->hazard_on[c], 0, sizeof(p->hazard_on[c]));
	p->unit_ring[c][p->insns[c] % UNIT_RING] = (uint8_t)ta1_insn_table[in->op].cls;
	sum[ta1_insn_table[in->op].cls == TA1_CLASS_MATRIX ? SPENT_MXU_BUSY : SPENT_VECTOR_BUSY] +=
		pend[SNR_STALL_UNIT_BUSY];
	sum[SPENT_REGISTER] += pend[SNR_STALL_REGISTER];
	sum[SPENT_BRANCH] += pend[SNR_STALL_BRANCH];
	sum[SPENT_PEER] += pend[SNR_STALL_PEER];
	memset(pend, 0, sizeof(p->pending[c]));
	p->insns[c]++;
	p->fns[f].flops += flops_of(in, s->x);
	for (unsigned i = 0; i < s->access->nregions; i++) {
		const struct ta1_region *r = &s->access->region[i];
		if (ta1_insn_table[in->op].cls == TA1_CLASS_DMA_ISSUE && r->space == TA1_SPACE_HBM)
			p->fns[f].hbm_bytes += r->row_bytes * r->rows;
	}
	/* calls and returns */
	bool call = (in->op == TA1_OP_JAL || in->op == TA1_OP_JALR) && in->rd == 1;
	bool ret = in->op == TA1_OP_JALR && in->rd == 0 && in->rs1 == 1 && in->imm == 0;
	if (call) {
		size_t callee = fn_of(p, s->next_pc);
		p->fns[callee].calls++;
		if (p->depth[c] == p->cap[c]) {
			p->cap[c] = p->cap[c] ? p->cap[c] * 2 : 64;
			p->stack[c] = snr_xrealloc(p->stack[c], p->cap[c] * sizeof(struct frame));
		}
		struct frame *fr = &p->stack[c][p->depth[c]++];
		fr->fn = callee;
		fr->start = s->cycle_after;
		fr->insns0 = p->insns[c];
		memcpy(fr->stall0, sum, sizeof(fr->stall0));
	} else if (ret && p->depth[c]) {
		struct frame fr = p->stack[c][--p->depth[c]];
		struct fn *fn = &p->fns[fr.fn];
		fn->total += s->cycle_after - fr.start;
		for (unsigned k = 0; k < SPENT_COUNT; k++)
			fn->stall[k] += sum[k] - fr.stall0[k];
		sample_call(p, fn, p->insns[c] - fr.insns0);
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
	struct prof p = {.elf = elf, .nfns = elf->nsymbols + 1, .rng = 1};
	p.fns = snr_xcalloc(p.nfns, sizeof(*p.fns));
	struct chip_tracker *cts = snr_xcalloc(n, sizeof(*cts));
	struct snr_tracker *trs = snr_xcalloc(n, sizeof(*trs));
	for (unsigned i = 0; i < n; i++) {
		cts[i] = (struct chip_tracker){&p, i};
		trs[i] = (struct snr_tracker){.abi_version = SNR_TRACKER_ABI_VERSION, .user = &cts[i], .on_stall = on_stall};
	}
	struct ta1_fabric *fabric = NULL;
	struct ta1_timing_model **models = ta1_timed_models_new(&cfg, trs, &fabric, err, sizeof(err));
	if (!models) {
		snr_err("profile: %s", err);
		free(cts);
		free(trs);
		free(p.fns);
		ta1_machine_free(m);
		snr_elf_free(elf);
		return 1;
	}
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
		for (size_t d = 0; d < p.depth[c]; d++) {
			struct fn *fn = &p.fns[p.stack[c][d].fn];
			fn->total += ta1_timing_now(models[c]) - p.stack[c][d].start;
			for (unsigned k = 0; k < SPENT_COUNT; k++)
				fn->stall[k] += p.stall_sum[c][k] - p.stack[c][d].stall0[k];
		}
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
		printf("%-24s %6s %20s %10s %6s %10s %5s %-6s %12s %11s %8s %-8s %8s\n", "function", "calls",
		       "insns/call min/med/max", "total-cyc", "share", "self-cyc", "dma%", "bound", "FLOPs", "HBM-bytes",
		       "FLOP/B", "roofline", "attained");
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
		const char *roofline = !f->flops && !f->hbm_bytes ? "-" : compute ? "compute" : "memory";
		double dma_share;
		const char *bound = bound_of(f, f->total, &dma_share);
		uint64_t median = median_of(&p.fns[i]);
		if (as_json) {
			json_t *r = json_object();
			json_object_set_new(r, "name", json_string(name));
			json_object_set_new(r, "function", json_string(name));
			json_object_set_new(r, "calls", json_integer((json_int_t)f->calls));
			if (f->returns) {
				json_t *ipc = json_object();
				json_object_set_new(ipc, "min", json_integer((json_int_t)f->insn_min));
				json_object_set_new(ipc, "median", json_integer((json_int_t)median));
				json_object_set_new(ipc, "max", json_integer((json_int_t)f->insn_max));
				json_object_set_new(ipc, "returns", json_integer((json_int_t)f->returns));
				json_object_set_new(r, "instructions_per_call", ipc);
			} else
				json_object_set_new(r, "instructions_per_call", json_null());
			json_object_set_new(r, "cycles", json_integer((json_int_t)f->total));
			json_t *st = json_object();
			for (unsigned k = 0; k < SPENT_REPORTED; k++)
				json_object_set_new(st, spent_name[k], json_integer((json_int_t)f->stall[k]));
			json_object_set_new(r, "stall_cycles", st);
			json_t *hz = json_object();
			json_object_set_new(hz, "mxu", json_integer((json_int_t)f->stall[SPENT_HAZARD_MXU]));
			json_object_set_new(hz, "vector", json_integer((json_int_t)f->stall[SPENT_HAZARD_VECTOR]));
			json_object_set_new(r, "vmem_hazard_waiting_for", hz);
			json_object_set_new(r, "total_cycles", json_integer((json_int_t)f->total));
			json_object_set_new(r, "self_cycles", json_integer((json_int_t)f->self));
			json_object_set_new(r, "share", json_real(total ? (double)cyc / (double)total : 0));
			json_object_set_new(r, "flops", json_integer((json_int_t)f->flops));
			json_object_set_new(r, "hbm_bytes", json_integer((json_int_t)f->hbm_bytes));
			json_object_set_new(r, "intensity", f->hbm_bytes ? json_real(ai) : json_null());
			json_object_set_new(r, "bound", json_string(bound));
			json_object_set_new(r, "dma_stall_share", json_real(dma_share));
			json_object_set_new(r, "roofline", json_string(roofline));
			json_object_set_new(r, "attained", json_real(attained));
			json_array_append_new(rows, r);
		} else {
			char ai_s[16];
			if (f->hbm_bytes)
				snprintf(ai_s, sizeof(ai_s), "%.2f", ai);
			else
				snprintf(ai_s, sizeof(ai_s), "%s", f->flops ? "inf" : "-");
			char ipc_s[48];
			if (f->returns)
				snprintf(ipc_s, sizeof(ipc_s), "%llu/%llu/%llu", (unsigned long long)f->insn_min,
					 (unsigned long long)median, (unsigned long long)f->insn_max);
			else
				snprintf(ipc_s, sizeof(ipc_s), "-");
			printf("%-24.24s %6llu %20s %10llu %5.1f%% %10llu %4.0f%% %-6s %12llu %11llu %8s %-8s %7.1f%%\n",
			       name, (unsigned long long)f->calls, ipc_s, (unsigned long long)f->total,
			       total ? 100.0 * (double)cyc / (double)total : 0.0, (unsigned long long)f->self,
			       100.0 * dma_share, bound, (unsigned long long)f->flops, (unsigned long long)f->hbm_bytes, ai_s,
			       roofline, 100.0 * attained);
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
	for (unsigned i = 0; i < n; i++)
		free(p.stack[i]);
	ta1_timed_models_free(models, n, fabric);
	free(cts);
	free(trs);
	free(order);
	for (size_t i = 0; i < p.nfns; i++)
		free(p.fns[i].insn_sample);
	free(p.fns);
	ta1_machine_free(m);
	snr_elf_free(elf);
	return rc;
}
