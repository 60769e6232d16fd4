/*
 * trace_drop_page.c: test helper that makes a trace miss one captured page,
 * the way a recorder that forgot a first read would: it copies IN to OUT
 * without the captured bytes inside the page of the first captured memory
 * range below the stack (a data page: the matmul's or the copy's arrays),
 * keeping the rest. The digest keeps its registers; its memory blocks go
 * (their bytes are not in the file to re-hash). Prints the dropped page.
 *
 * usage: trace_drop_page IN OUT
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_trace.h"

#define PAGE 4096ull

int main(int argc, char **argv)
{
	if (argc != 3) {
		fprintf(stderr, "usage: trace_drop_page IN OUT\n");
		return 2;
	}
	char err[600];
	struct snr_trace *t = snr_trace_open(argv[1], err, sizeof(err));
	if (!t) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	struct snr_trace_step st;
	uint64_t page = 0;
	int n;
	while (!page && (n = snr_trace_next(t, &st)) == 1)
		for (unsigned i = 0; i < st.nmem && !page; i++)
			if (st.mem[i].addr < 0x7f0000000000ull) /* not the stack */
				page = st.mem[i].addr & ~(PAGE - 1);
	if (!page) {
		fprintf(stderr, "%s: no data page captured\n", argv[1]);
		return 1;
	}
	struct snr_trace_writer *w = snr_trace_create(argv[2], snr_trace_meta_json(t), err, sizeof(err));
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
	struct snr_trace_mem keep[512];
	while ((n = snr_trace_next(t, &st)) == 1) {
		unsigned nk = 0;
		for (unsigned i = 0; i < st.nmem && nk + 2 <= 512; i++) {
			struct snr_trace_mem m = st.mem[i];
			uint64_t lo = m.addr, hi = m.addr + m.len;
			if (hi <= page || lo >= page + PAGE) {
				keep[nk++] = m;
				continue;
			}
			if (lo < page) /* the part before the page */
				keep[nk++] = (struct snr_trace_mem){m.space, m.chip, lo, page - lo, m.data};
			if (hi > page + PAGE)
				keep[nk++] = (struct snr_trace_mem){m.space, m.chip, page + PAGE, hi - page - PAGE,
								    m.data + (page + PAGE - lo)};
		}
		st.nmem = nk;
		st.mem = keep;
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
		fprintf(stderr, "writing %s failed\n", argv[2]);
		return 1;
	}
	printf("0x%llx\n", (unsigned long long)page);
	snr_trace_close(t);
	free(sa);
	free(sz);
	free(sn);
	return 0;
}
