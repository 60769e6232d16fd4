/*
 * snr_line_pack.h: the source lines a window ran, carried in its trace
 * (.snrt) and metrics file (.snrm) as a LINES chunk, so that both answer
 * in source lines after the program is rebuilt or its sources are moved
 * (docs/trace-format.md, "LINES").
 *
 * For every distinct pc the window executed the pack holds the pc's code
 * bytes and its inline chain as the program's line tables give it
 * (lib/snr_lines.c: file, line and function of each frame, innermost
 * first), and the text of the source files those places name (the
 * attributed frame's file, not toolchain or system files): each file up to
 * SNR_LINE_PACK_FILE_MAX bytes, all of them up to SNR_LINE_PACK_TEXT_MAX
 * (a file past either bound is left out; its rows stay).
 *
 * Readers (snr_lines_open_meta_pack) answer from it where the program's
 * ELF does not: the file is missing, or its build-id is not the recorded
 * one. The source text it carries is what an_annot_read_source and the
 * suggestions show when the file named is gone or no longer the text
 * recorded (snr_line_pack_fopen).
 */
#ifndef SNR_LINE_PACK_H
#define SNR_LINE_PACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "lib/snr_chunkfile.h"
#include "lib/snr_lines.h"

#define SNR_LINE_PACK_FORMAT 1
#define SNR_LINE_PACK_FILE_MAX (4u << 20)
#define SNR_LINE_PACK_TEXT_MAX (32u << 20)

struct snr_line_pack;

/* The pcs a writer saw, with their code bytes (the first step at each pc
 * gives them). */
struct snr_pc_set {
	struct snr_pc_code {
		uint64_t pc;
		uint8_t len, used;
		uint8_t code[16];
	} *slots;
	size_t nslots, n;
};
void snr_pc_set_add(struct snr_pc_set *s, uint64_t pc, const uint8_t *code, unsigned len);
void snr_pc_set_free(struct snr_pc_set *s);

/* The LINES payload (uncompressed) for the pcs of s, the program found
 * through meta_json's "objects" as readers find it. Returns 1 with out
 * filled, 0 when no pc has a line (nothing to carry: no chunk), quietly. */
int snr_line_pack_encode(const char *meta_json, const struct snr_pc_set *s, struct snr_buf *out);

/* Parses a LINES payload; NULL with err saying what is wrong. */
struct snr_line_pack *snr_line_pack_parse(const uint8_t *p, size_t n, char *err, size_t errlen);
void snr_line_pack_free(struct snr_line_pack *k);
/* The place of pc the pack holds, or NULL. Valid until snr_line_pack_free. */
const struct snr_place *snr_line_pack_find(const struct snr_line_pack *k, uint64_t pc);
/* The code bytes at pc (up to len), 0 when not held. */
size_t snr_line_pack_code(const struct snr_line_pack *k, uint64_t pc, uint8_t *buf, size_t len);
/* Its rows (pcs with a line) and source files. */
size_t snr_line_pack_rows(const struct snr_line_pack *k);
size_t snr_line_pack_files(const struct snr_line_pack *k);
/* Makes the pack's source texts known to snr_line_pack_fopen for the rest
 * of the process (the texts are copied). */
void snr_line_pack_publish(const struct snr_line_pack *k);

/* snr_lines_open_meta_pack with the trace's META and LINES chunk: the
 * readers of a trace (near_path: where it is, NULL: no note names it). */
struct snr_trace;
struct snr_lines *snr_lines_open_trace(const struct snr_trace *t, const char *near_path);

/* Opens the source file `file` names for reading: the file itself when it
 * exists and is a text a pack carries for it (or no pack carries one),
 * else the carried text (a note says so once per file), else NULL. */
FILE *snr_line_pack_fopen(const char *file);

#endif
