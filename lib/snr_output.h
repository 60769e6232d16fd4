/*
 * snr_output.h: may snr write this output? One answer for every writer
 * (lib/snr_outfile.c asks it before creating anything, and again before the
 * rename that would replace the destination).
 *
 * Two rules:
 *  - an output never lands on one of the command's inputs: the same file
 *    (device and inode: ./t.snrt, dir/../dir/t.snrt, a hard link or a
 *    symbolic link to it), or, when the output does not exist yet, the same
 *    path once resolved. Refused even with --force, naming both.
 *  - an output never replaces an existing file unless the command was given
 *    --force (snr_output_keep_existing(false)). The snr binary keeps existing
 *    files by default; a library user that does not say keeps the old
 *    behaviour (replace), and the first rule only if it turns it on
 *    (snr_output_guard_inputs), as the snr binary does.
 *
 * Inputs are registered by the readers themselves (every trace, metrics
 * file and host trace through lib/snr_chunkfile.c, every ELF through
 * lib/snr_elf.c and lib/snr_lines.c, the machine config), so that the inputs a
 * command reads without being named (the ELF a trace names, the trace a
 * metrics file names) count too; a command registers the inputs it names
 * before it reads them, so that the check can be made before any work.
 */
#ifndef SNR_OUTPUT_H
#define SNR_OUTPUT_H

#include <stdbool.h>
#include <stddef.h>

/* true: no output lands on an input (the snr binary, always); false: the
 * library's default, for its other users (tests rewriting a file they
 * read). */
void snr_output_guard_inputs(bool on);

/* true: an existing regular file is not replaced (the snr binary without
 * --force); false: it is (--force, and the library's default). */
void snr_output_keep_existing(bool keep);
bool snr_output_keeps_existing(void);

/* path is an input of this process: no output may land on it. A path that
 * does not exist (yet) is remembered by its resolved name. */
void snr_output_input(const char *path);

/* The program a command line starts (argv[0]): found as execvp finds it
 * (a name without '/' through $PATH), then an input. */
void snr_output_input_program(const char *argv0);

/* 0 if path may be written now, else -1 with err naming the file (and the
 * input it is), and saying what to do. replace: the caller already holds
 * the right to replace path (a side file of an output that passed), so only
 * the input rule applies. Paths that exist and are not regular files
 * (/dev/stdout, a FIFO) and "-" are always allowed: nothing is replaced. */
int snr_output_check(const char *path, bool replace, char *err, size_t errlen);

/* The input that path is, or NULL (the same file, or the same resolved
 * path when path does not exist; NULL when inputs are not guarded). */
const char *snr_output_is_input(const char *path);

/* A command's check before any work: the files it was given and the other
 * inputs it names (NULL entries skipped) become inputs, then `out` is
 * checked. 0, or -1 after "snr: WHO: -o: ..." on stderr. */
int snr_output_preflight(const char *who, const char *out, char *const *files, int nfiles,
			 const char *const *named, size_t nnamed);

/* Forgets every input (tests). */
void snr_output_reset(void);

#endif
