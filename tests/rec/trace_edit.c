/*
 * trace_edit.c: test helper that damages a host trace the way a faulty
 * recorder would, keeping the file valid (the digest keeps its registers;
 * its memory blocks go, their bytes not being in the file to re-hash):
 *
 *   drop-page IN OUT [ADDR]  leaves out the captured bytes inside one page:
 *                            ADDR's, or that of the first captured range
 *                            below 0x7f0000000000 (x86-64's stack); prints
 *                            the page
 *   drop-reg IN OUT NAME     leaves out the capture of register NAME; prints
 *                            the index of the instruction it was attached to
 *   recapture IN OUT         captures the first captured memory range again
 *                            at the next instruction (a capture that is not
 *                            minimal); prints its address
 *   add-reg IN OUT STEP NAME captures register NAME (as zeros) at
 *                            instruction STEP too
 *   add-mem IN OUT STEP ADDR LEN  captures LEN bytes at ADDR (zeros) at
 *                            instruction STEP too
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_trace.h"

#define PAGE 4096ull
#define MAXV 512

static int usage(void)
{
	fprintf(stderr, "usage: trace_edit drop-page IN OUT [ADDR] | drop-reg IN OUT NAME | recapture IN OUT |\n"
			"                  add-reg IN OUT STEP NAME | add-mem IN OUT STEP ADDR LEN\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return usage();
	const char *mode = argv[1], *in = argv[2], *out = argv[3];
	bool drop_page = !strcmp(mode, "drop-page"), drop_reg = !strcmp(mode, "drop-reg"),
	     recapture = !strcmp(mode, "recapture"), add_reg = !strcmp(mode, "add-reg"),
	     add_mem = !strcmp(mode, "add-mem");
	if ((drop_page && argc > 5) || (drop_reg && argc != 5) || (recapture && argc != 4) || (add_reg && argc != 6) ||
	    (add_mem && argc != 7) || !(drop_page || drop_reg || recapture || add_reg || add_mem))
		return usage();
	static uint8_t zeros[1 << 16];
	uint64_t at = add_reg || add_mem ? strtoull(argv[4], NULL, 0) : 0;
	struct snr_trace_mem extra_mem = {0};
	if (add_mem) {
		extra_mem.addr = strtoull(argv[5], NULL, 0);
		extra_mem.len = strtoull(argv[6], NULL, 0);
		extra_mem.data = zeros;
		if (extra_mem.len == 0 || extra_mem.len > sizeof(zeros))
			return usage();
	}
	char err[600];
	struct snr_trace *t = snr_trace_open(in, err, sizeof(err));
	if (!t) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct snr_trace_step st;
	int n;
	uint64_t page = 0, found = 0;
	bool have = false;
	struct snr_trace_mem first = {0};
	uint8_t *first_data = NULL;
	int reg = -1;
	if (drop_page && argc == 5) {
		page = strtoull(argv[4], NULL, 0) & ~(PAGE - 1);
		have = true;
	}
	if (drop_reg || add_reg) {
		const char *name = argv[drop_reg ? 4 : 5];
		for (size_t i = 0; i < snr_trace_nregs(t); i++)
			if (!strcmp(snr_trace_regs(t)[i].name, name))
				reg = (int)i;
		if (reg < 0) {
			fprintf(stderr, "%s: no register %s in the trace's register table\n", in, name);
			return 1;
		}
	}
	if (add_reg || add_mem) {
		found = at;
		have = true; /* checked when the step comes by */
	}
	while (!have && (n = snr_trace_next(t, &st)) == 1) {
		for (unsigned i = 0; i < st.nmem && !have && drop_page; i++)
			if (st.mem[i].addr < 0x7f0000000000ull) { /* not x86-64's stack */
				page = st.mem[i].addr & ~(PAGE - 1);
				have = true;
			}
		for (unsigned i = 0; i < st.nregs && !have && drop_reg; i++)
			if (st.regs[i].reg == reg) {
				found = st.index;
				have = true;
			}
		if (recapture && st.nmem) {
			first = st.mem[0];
			first_data = malloc(first.len);
			memcpy(first_data, first.data, first.len);
			first.data = first_data;
			found = st.index + 1;
			have = true;
		}
	}
	if (!have) {
		fprintf(stderr, "%s: %s\n", in,
			drop_page ? "no data page captured" : drop_reg ? "the register is never captured" :
			"no memory captured");
		return 1;
	}
	struct snr_trace_writer *w = snr_trace_create(out, snr_trace_meta_json(t), err, sizeof(err));
	if (!w) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	size_t ns = snr_trace_nsymbols(t);
	uint64_t *sa = calloc(ns + 1, 8), *sz = calloc(ns + 1, 8);
	const char **sn = calloc(ns + 1, sizeof(char *));
	for (size_t i = 0; i < ns; i++)
		snr_trace_symbol(t, i, &sa[i], &sz[i], &sn[i]);
	snr_trace_write_symbols(w, ns, sa, sz, sn);
	snr_trace_rewind(t);
	struct snr_trace_mem keep[MAXV];
	struct snr_trace_regval keep_regs[MAXV];
	while ((n = snr_trace_next(t, &st)) == 1) {
		unsigned nk = 0;
		for (unsigned i = 0; i < st.nmem && nk + 3 <= MAXV; i++) {
			struct snr_trace_mem m = st.mem[i];
			uint64_t lo = m.addr, hi = m.addr + m.len;
			if (!drop_page || hi <= page || lo >= page + PAGE) {
				keep[nk++] = m;
				continue;
			}
			if (lo < page) /* the part before the page */
				keep[nk++] = (struct snr_trace_mem){m.space, m.chip, lo, page - lo, m.data};
			if (hi > page + PAGE)
				keep[nk++] = (struct snr_trace_mem){m.space, m.chip, page + PAGE, hi - page - PAGE,
								    m.data + (page + PAGE - lo)};
		}
		if (recapture && st.index == found)
			keep[nk++] = first;
		if (add_mem && st.index == at)
			keep[nk++] = extra_mem;
		unsigned nr = 0;
		for (unsigned i = 0; i < st.nregs && nr < MAXV; i++)
			if (!drop_reg || st.regs[i].reg != reg)
				keep_regs[nr++] = st.regs[i];
		if (add_reg && st.index == at && nr < MAXV)
			keep_regs[nr++] = (struct snr_trace_regval){(uint16_t)reg, zeros};
		st.nmem = nk;
		st.mem = keep;
		st.nregs = nr;
		st.regs = keep_regs;
		if (snr_trace_add_step(w, &st)) {
			fprintf(stderr, "%s\n", snr_trace_writer_error(w));
			return 1;
		}
	}
	const uint8_t *const *regs = NULL;
	size_t nb;
	const struct snr_trace_mem *blocks;
	const uint64_t *hashes;
	if (snr_trace_digest(t, &regs, &nb, &blocks, &hashes))
		snr_trace_write_digest(w, regs, 0, NULL);
	const char *end = snr_trace_end_json(t);
	if (snr_trace_finish(w, end ? end : "{}")) {
		fprintf(stderr, "writing %s failed\n", out);
		return 1;
	}
	if (drop_page)
		printf("0x%llx\n", (unsigned long long)page);
	else if (drop_reg || add_reg || add_mem)
		printf("%llu\n", (unsigned long long)found);
	else
		printf("0x%llx\n", (unsigned long long)first.addr);
	snr_trace_close(t);
	free(first_data);
	free(sa);
	free(sz);
	free(sn);
	return 0;
}
