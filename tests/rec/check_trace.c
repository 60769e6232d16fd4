/*
 * check_trace.c: proves a TA1 trace minimal and complete from the trace
 * itself, by re-executing it on the device's semantics with the captures
 * applied only when the recorder said it read them:
 *
 *   complete: every register and byte an instruction reads (per the
 *             operand-access query on the re-executed state) was captured
 *             at or before that instruction, or written earlier in the window;
 *   minimal:  every captured register and byte is read by the instruction it
 *             is attached to, and was neither captured before nor written
 *             earlier in the window;
 *   faithful: the re-executed pc sequence is the recorded one.
 *
 * usage: check_trace T.snrt   (exit 0 and a summary line, or 1 and the first
 * violations)
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "lib/snr_ranges.h"
#include "lib/snr_trace.h"

static int violations;

#define VIOLATION(...)                                   \
	do {                                             \
		if (violations++ < 20) {                 \
			fprintf(stderr, "check_trace: "); \
			fprintf(stderr, __VA_ARGS__);    \
			fputc('\n', stderr);             \
		}                                        \
	} while (0)

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: check_trace T.snrt\n");
		return 2;
	}
	char err[600];
	struct snr_trace *t = snr_trace_open(argv[1], err, sizeof(err));
	if (!t) {
		fprintf(stderr, "check_trace: %s\n", err);
		return 1;
	}
	json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	if (strcmp(json_string_value(json_object_get(meta, "isa")), "ta1")) {
		fprintf(stderr, "check_trace: only TA1 traces\n");
		return 2;
	}
	struct snr_config cfg;
	snr_config_default(&cfg);
	json_t *cj = json_object_get(meta, "config");
	if (cj) {
		char *s = json_dumps(cj, JSON_COMPACT);
		if (snr_config_parse(&cfg, s, "trace", err, sizeof(err))) {
			fprintf(stderr, "check_trace: %s\n", err);
			return 1;
		}
		free(s);
	}
	unsigned chip = (unsigned)json_integer_value(json_object_get(meta, "chip"));
	json_int_t nchips = json_integer_value(json_object_get(meta, "chips"));
	cfg.chips = nchips > 0 ? (uint64_t)nchips : 1;
	struct ta1_machine *m = ta1_machine_new(&cfg, err, sizeof(err));
	if (!m) {
		fprintf(stderr, "check_trace: %s\n", err);
		return 1;
	}
	struct ta1_chip *c = ta1_machine_chip(m, chip);
	FILE *devnull = fopen("/dev/null", "w");
	ta1_machine_set_output(m, fileno(devnull), fileno(devnull));

	struct snr_ranges known = {0}; /* captured so far or written so far */
	bool reg_known[TA1_REG_COUNT] = {false};
	reg_known[0] = reg_known[TA1_REG_PC] = reg_known[TA1_REG_CHIPID] = reg_known[TA1_REG_NCHIPS] = true;
	struct snr_trace_step st;
	int n;
	uint64_t steps = 0, regs_checked = 0, bytes_checked = 0;
	bool first = true;
	struct snr_range *miss = NULL;
	size_t nmiss = 0, cap = 0;
	while ((n = snr_trace_next(t, &st)) == 1) {
		if (first) {
			ta1_chip_set_reg(c, TA1_REG_PC, st.pc);
			first = false;
		}
		uint64_t pc = ta1_chip_get_reg(c, TA1_REG_PC);
		if (pc != st.pc) {
			VIOLATION("instruction %llu: re-executed pc 0x%llx, recorded 0x%llx", (unsigned long long)st.index,
				  (unsigned long long)pc, (unsigned long long)st.pc);
			break;
		}
		if (st.code_len)
			ta1_chip_write_mem(c, st.pc, st.code, st.code_len);
		/* apply this step's captures, checking each is new */
		bool cap_reg[TA1_REG_COUNT] = {false};
		for (unsigned i = 0; i < st.nregs; i++) {
			unsigned r = st.regs[i].reg;
			uint64_t v;
			memcpy(&v, st.regs[i].val, 8);
			if (r >= TA1_REG_COUNT || reg_known[r])
				VIOLATION("instruction %llu: register %u captured although already known",
					  (unsigned long long)st.index, r);
			if (r < TA1_REG_COUNT) {
				cap_reg[r] = true;
				reg_known[r] = true;
				if (r != TA1_REG_CYCLE && r != TA1_REG_INSTRET)
					ta1_chip_set_reg(c, r, v);
			}
			regs_checked++;
		}
		struct snr_ranges cap_mem = {0};
		for (unsigned i = 0; i < st.nmem; i++) {
			const struct snr_trace_mem *mm = &st.mem[i];
			uint32_t key = snr_ranges_key(mm->space, mm->chip);
			nmiss = 0;
			snr_ranges_missing(&known, key, mm->addr, mm->addr + mm->len, &miss, &nmiss, &cap);
			if (nmiss != 1 || miss[0].lo != mm->addr || miss[0].hi != mm->addr + mm->len)
				VIOLATION("instruction %llu: captured [0x%llx, +%llu) overlaps bytes already known",
					  (unsigned long long)st.index, (unsigned long long)mm->addr,
					  (unsigned long long)mm->len);
			snr_ranges_add(&known, key, mm->addr, mm->addr + mm->len);
			snr_ranges_add(&cap_mem, key, mm->addr, mm->addr + mm->len);
			ta1_chip_write_mem(c, mm->addr, mm->data, mm->len);
			bytes_checked += mm->len;
		}
		/* what the instruction reads and writes, on the re-executed state */
		uint32_t w = 0;
		struct ta1_insn in;
		ta1_chip_read_mem(c, pc, &w, 4);
		ta1_decode(w, &in);
		struct ta1_query_ctx q;
		struct ta1_access a;
		ta1_chip_query_ctx(c, &q);
		ta1_access_query(&in, &q, &a);
		for (unsigned r = 1; r < TA1_REG_COUNT; r++) {
			bool reads = (a.regs_read >> r) & 1;
			if (reads && !reg_known[r] && r != TA1_REG_CYCLE && r != TA1_REG_INSTRET)
				VIOLATION("instruction %llu (pc 0x%llx): reads register %u that was neither captured nor "
					  "written",
					  (unsigned long long)st.index, (unsigned long long)pc, r);
			if (cap_reg[r] && !reads)
				VIOLATION("instruction %llu: register %u captured but not read by it",
					  (unsigned long long)st.index, r);
		}
		struct snr_ranges read_set = {0};
		for (unsigned i = 0; i < a.nregions; i++) {
			const struct ta1_region *g = &a.region[i];
			if (!g->rows)
				continue;
			uint64_t base = ta1_region_canonical(&q, g);
			uint32_t key = snr_ranges_key(g->space, g->chip);
			for (uint64_t row = 0; row < g->rows; row++) {
				uint64_t lo = base + (uint64_t)((int64_t)row * g->stride), hi = lo + g->row_bytes;
				if (g->write)
					continue;
				snr_ranges_add(&read_set, key, lo, hi);
				nmiss = 0;
				snr_ranges_missing(&known, key, lo, hi, &miss, &nmiss, &cap);
				if (nmiss)
					VIOLATION("instruction %llu (pc 0x%llx): reads [0x%llx, 0x%llx) neither captured nor "
						  "written",
						  (unsigned long long)st.index, (unsigned long long)pc,
						  (unsigned long long)miss[0].lo, (unsigned long long)miss[0].hi);
			}
		}
		/* every captured byte is read by this instruction */
		for (size_t l = 0; l < cap_mem.n; l++)
			for (size_t k = 0; k < cap_mem.lists[l].n; k++) {
				nmiss = 0;
				snr_ranges_missing(&read_set, cap_mem.lists[l].key, cap_mem.lists[l].r[k].lo,
						   cap_mem.lists[l].r[k].hi, &miss, &nmiss, &cap);
				if (nmiss)
					VIOLATION("instruction %llu: captured [0x%llx, 0x%llx) that it does not read",
						  (unsigned long long)st.index, (unsigned long long)miss[0].lo,
						  (unsigned long long)miss[0].hi);
			}
		snr_ranges_free(&cap_mem);
		snr_ranges_free(&read_set);
		/* execute; outputs become known */
		enum ta1_stop s = ta1_chip_step(c);
		for (unsigned i = 0; i < st.npost_regs; i++) {
			uint64_t v;
			memcpy(&v, st.post_regs[i].val, 8);
			ta1_chip_set_reg(c, st.post_regs[i].reg, v);
		}
		for (unsigned r = 1; r < TA1_REG_COUNT; r++)
			if ((a.regs_written >> r) & 1)
				reg_known[r] = true;
		for (unsigned i = 0; i < a.nregions; i++) {
			const struct ta1_region *g = &a.region[i];
			if (!g->write || !g->rows)
				continue;
			uint64_t base = ta1_region_canonical(&q, g);
			for (uint64_t row = 0; row < g->rows; row++) {
				uint64_t lo = base + (uint64_t)((int64_t)row * g->stride);
				snr_ranges_add(&known, snr_ranges_key(g->space, g->chip), lo, lo + g->row_bytes);
			}
		}
		steps++;
		if (s == TA1_STOP_FAULT) {
			VIOLATION("instruction %llu faults on re-execution: %s", (unsigned long long)st.index,
				  ta1_chip_fault(c));
			break;
		}
		if (s == TA1_STOP_EXIT)
			break;
	}
	if (n < 0) {
		fprintf(stderr, "check_trace: %s\n", snr_trace_error(t));
		return 1;
	}
	printf("check_trace: %llu instructions re-executed; %llu captured registers and %llu captured bytes each "
	       "read by their instruction and new; every input captured or produced in the window: %s\n",
	       (unsigned long long)steps, (unsigned long long)regs_checked, (unsigned long long)bytes_checked,
	       violations ? "NO" : "yes");
	free(miss);
	snr_ranges_free(&known);
	ta1_machine_free(m);
	fclose(devnull);
	json_decref(meta);
	snr_trace_close(t);
	return violations ? 1 : 0;
}
