/*
 * trace_edit.c: test helper that makes the mistakes a faulty recorder could
 * make, in a valid trace (fresh checksums, no digest): it copies IN to OUT
 * with one change to the captures of instruction STEP:
 *
 *   drop-reg STEP          the first register captured there is left out
 *   add-reg STEP NAME      register NAME is captured there too (its value
 *                          from the instruction's other captures, or zeros)
 *   add-mem STEP ADDR LEN  LEN bytes at ADDR are captured there too (zeros)
 *
 * usage: trace_edit IN OUT EDIT ARGS...
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_trace.h"

static int usage(void)
{
	fprintf(stderr, "usage: trace_edit IN OUT drop-reg STEP | add-reg STEP NAME | add-mem STEP ADDR LEN\n");
	return 2;
}

int main(int argc, char **argv)
{
	if (argc < 5)
		return usage();
	const char *edit = argv[3];
	uint64_t at = strtoull(argv[4], NULL, 0);
	if (!strcmp(edit, "drop-reg") ? argc != 5 : !strcmp(edit, "add-reg") ? argc != 6
			: !strcmp(edit, "add-mem") ? argc != 7 : 1)
		return usage();
	char err[600];
	struct snr_trace *t = snr_trace_open(argv[1], err, sizeof(err));
	if (!t) {
		fprintf(stderr, "trace_edit: %s\n", err);
		return 1;
	}
	int add_reg = -1;
	if (!strcmp(edit, "add-reg")) {
		for (size_t r = 0; r < snr_trace_nregs(t); r++)
			if (!strcmp(snr_trace_regs(t)[r].name, argv[5]))
				add_reg = (int)r;
		if (add_reg < 0) {
			fprintf(stderr, "trace_edit: no register %s in %s\n", argv[5], argv[1]);
			return 1;
		}
	}
	struct snr_trace_writer *w = snr_trace_create(argv[2], snr_trace_meta_json(t), err, sizeof(err));
	if (!w) {
		fprintf(stderr, "trace_edit: %s\n", err);
		return 1;
	}
	static uint8_t zeros[1 << 16];
	struct snr_trace_regval regs[256];
	struct snr_trace_mem mem[256];
	struct snr_trace_step st;
	bool done = false;
	int n;
	while ((n = snr_trace_next(t, &st)) == 1) {
		if (st.index == at) {
			if (!strcmp(edit, "drop-reg")) {
				if (!st.nregs) {
					fprintf(stderr, "trace_edit: instruction %llu captures no register\n",
						(unsigned long long)at);
					return 1;
				}
				st.regs++;
				st.nregs--;
			} else if (!strcmp(edit, "add-reg") && st.nregs < 255) {
				memcpy(regs, st.regs, st.nregs * sizeof(*regs));
				regs[st.nregs++] = (struct snr_trace_regval){(uint16_t)add_reg, zeros};
				st.regs = regs;
			} else if (!strcmp(edit, "add-mem") && st.nmem < 255) {
				uint64_t len = strtoull(argv[6], NULL, 0);
				if (len == 0 || len > sizeof(zeros))
					return usage();
				memcpy(mem, st.mem, st.nmem * sizeof(*mem));
				mem[st.nmem++] = (struct snr_trace_mem){0, 0, strtoull(argv[5], NULL, 0), len, zeros};
				st.mem = mem;
			}
			done = true;
		}
		if (snr_trace_add_step(w, &st)) {
			fprintf(stderr, "trace_edit: %s\n", snr_trace_writer_error(w));
			return 1;
		}
	}
	if (n < 0 || !done) {
		fprintf(stderr, "trace_edit: %s\n", n < 0 ? snr_trace_error(t) : "no such instruction");
		return 1;
	}
	if (snr_trace_finish(w, "{}")) {
		fprintf(stderr, "trace_edit: cannot finish %s\n", argv[2]);
		return 1;
	}
	snr_trace_close(t);
	return 0;
}
