/*
 * snr_lines.h: where a pc is in the user's source. The program's ELF
 * objects (a TA1 program at bias 0; a host program and its shared libraries
 * at the load biases the trace recorded) are read with elfutils' libdwfl:
 * the DWARF line table gives the pc's file and line, the scopes
 * (DW_TAG_subprogram, DW_TAG_inlined_subroutine) give the function and the
 * chain of inlined calls. Separate debug files are found the standard way
 * (/usr/lib/debug, .gnu_debuglink, build-id).
 *
 * Attribution. Code inlined from a toolchain or system header (the TA1
 * intrinsics in ta1.h are static inline functions; libc's inline helpers)
 * is attributed to the line of the user's file that called it: the place
 * of a pc is the innermost frame of its inline chain whose file is not a
 * system file (snr_lines_is_system_file: a path under /usr/, /lib/, /opt/,
 * or a file named ta1.h, wherever that header was installed). The chain
 * itself is kept beside the place, innermost first, so nothing is lost: a
 * stall at `ta_wait(F_W0, 1);` in attn.c:97 reads "attn.c:97 (attn)" with
 * the chain [ta1.h:66 (ta_wait), attn.c:97 (attn)]. When every frame is a
 * system file (a libc function), the place is the innermost frame.
 *
 * Lookups are cached per pc (an analysis asks for millions of pcs, of a
 * few thousand distinct ones). A program built without -g has no line
 * table: snr_lines_find returns NULL and callers print symbols as before.
 */
#ifndef SNR_LINES_H
#define SNR_LINES_H

#include <jansson.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snr_lines;

/* One frame of an inline chain. Strings are owned by the snr_lines. */
struct snr_lines_frame {
	const char *file;     /* as the DWARF line table names it (usually absolute) */
	unsigned line;        /* 0: the compiler gave no line */
	const char *function; /* NULL if no scope names one */
};

struct snr_place {
	const char *file; /* the attributed frame's (see above) */
	unsigned line;
	const char *function;
	/* The whole chain, innermost first: frames[0] is the pc's own line
	 * (inside ta1.h for an intrinsic), the last is the function the code
	 * was compiled into. nframes == 1: the pc is not in inlined code. */
	const struct snr_lines_frame *frames;
	unsigned nframes;
};

struct snr_lines *snr_lines_new(void);
void snr_lines_free(struct snr_lines *l);

/* Adds the ELF object at path, loaded at bias (0 for a TA1 program or a
 * non-PIE executable). expected_build_id (lowercase hex, NULL or "" when the
 * trace did not know it) must equal the file's, else -1 with err saying
 * both ids and nothing added. -1 too when the file cannot be read as an ELF.
 * An object without DWARF is added (0) and answers no lines. */
int snr_lines_add(struct snr_lines *l, const char *path, uint64_t bias, const char *expected_build_id, char *err,
		  size_t errlen);
/* The libdwfl session holding the added objects (lib/snr_line_sites.c
 * walks their line tables). */
struct Dwfl *snr_lines_dwfl(struct snr_lines *l);
/* Whether any added object has a line table. */
bool snr_lines_have_lines(const struct snr_lines *l);

/* The place of pc, or NULL when no added object has a line for it. The
 * pointer stays valid until snr_lines_free. Not thread-safe (the cache). */
const struct snr_place *snr_lines_find(struct snr_lines *l, uint64_t pc);

/* "attn.c:97 (attn)": the file relative to the current directory when it
 * is below it. */
const char *snr_place_text(const struct snr_place *p, char *buf, size_t len);
/* "attn.c:97 (attn)" with the file's base name only: for narrow tables and
 * timeline labels. */
const char *snr_place_short(const struct snr_place *p, char *buf, size_t len);
/* {"file", "line", "function"[, "inlined": [{"file","line","function"}, ...]]}
 * ("inlined": the whole chain, innermost first, present only when the pc is
 * in inlined code). A new reference. */
json_t *snr_place_json(const struct snr_place *p);

/* The ELF's GNU build-id as lowercase hex into hex (at least 41 bytes for
 * SHA-1 ids; 129 for any). Returns 0, or -1 when the file has none or
 * cannot be read. */
int snr_elf_build_id(const char *path, char *hex, size_t len);

/* A toolchain or system file (see the attribution rule above). */
bool snr_lines_is_system_file(const char *path);

#endif

/* ---- finding the program from a trace's META ----------------------------
 * A trace's META names the program: "objects": [{"path", "build_id",
 * "bias"}, ...] (the recorder writes one per ELF object it symbolized, the
 * program first), or only "elf" (older traces). A metrics file keeps the
 * trace's META. snr_lines_set_elf sets the process-wide `--elf PROG`
 * override: PROG replaces the first object's path (its recorded build-id
 * and bias still apply). A file not found where recorded is looked for
 * beside the trace (near_path's folder). */
void snr_lines_set_elf(const char *path);
const char *snr_lines_elf(void);
/* Opens the line tables of the objects meta_json names. Returns NULL when
 * no object could be added (one without DWARF is added: it gives code
 * bytes, no lines); a missing, unreadable or mismatched object is said
 * on stderr, once per process and object, and skipped (answers fall back to
 * symbols). */
struct snr_lines *snr_lines_open_meta(const char *meta_json, const char *near_path);
/* The same with the lines a trace or metrics file carries (its LINES chunk,
 * lib/snr_line_pack.h; NULL: none), taken over by the result (freed with
 * it, or at once when NULL is returned): they answer every pc the program's
 * objects do not (an object missing or rebuilt is then said as a note
 * naming near_path, not a warning), and their source texts are published
 * for snr_line_pack_fopen. quiet: nothing is said (the recorder). */
struct snr_line_pack;
struct snr_lines *snr_lines_open_meta_pack(const char *meta_json, const char *near_path, struct snr_line_pack *pack,
					   bool quiet);

/* Up to len bytes of the program's code at pc (for disassembly where the
 * trace is not at hand); 0 when no added object holds pc. */
size_t snr_lines_code(struct snr_lines *l, uint64_t pc, uint8_t *buf, size_t len);

/* "attn.c:97 (attn)" when l has a line for pc, else sym (the caller's
 * symbol text, e.g. "attn+0x1c"). */
const char *snr_lines_where(struct snr_lines *l, uint64_t pc, const char *sym, char *buf, size_t len);
/* The "source" object beside a pc in JSON: snr_place_json, or
 * {"function": sym} when there is no line. A new reference. */
json_t *snr_lines_source_json(struct snr_lines *l, uint64_t pc, const char *sym);
