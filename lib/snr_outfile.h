/*
 * snr_outfile.h: how snr writes a file the user named, so that nothing the
 * user already has is lost and nothing partial takes its place.
 *
 * snr_outfile_open asks lib/snr_output.h whether the destination may be
 * written (never over an input; an existing file only with --force), then
 * creates a temporary file in the destination's folder (".NAME.PID.XXXXXX",
 * so the rename stays within one file system; PID the writer's, so that a
 * later write removes those a killed snr left, and SIGINT or SIGTERM remove
 * those still open);
 * snr_outfile_commit flushes it to disk and renames it over the destination
 * in one step; snr_outfile_discard removes it. A destination that exists
 * and is not a regular file (/dev/stdout, a FIFO, a terminal) is written
 * directly: there is nothing to rename over. "-" means standard output.
 *
 * Every output of snr goes through here: finished traces, metrics, reports,
 * JSON and Perfetto exports, folded stacks.
 */
#ifndef SNR_OUTFILE_H
#define SNR_OUTFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

struct snr_outfile {
	int fd;
	char *path; /* the destination */
	char *tmp;  /* the temporary file, NULL when written directly */
	FILE *fp;   /* from snr_outfile_stdio */
	char *fbuf; /* its buffer (64 KiB: glibc's own is 4 KiB, a write() each) */
};

/* 0, or -1 with err naming the file and the reason. */
int snr_outfile_open(struct snr_outfile *o, const char *path, char *err, size_t errlen);
/* As snr_outfile_open, for a part of an output already allowed (a report's
 * side files): an existing file is replaced without --force; an input
 * still never is. */
int snr_outfile_open_part(struct snr_outfile *o, const char *path, char *err, size_t errlen);
/* A stdio stream on the file (closed by commit or discard). */
FILE *snr_outfile_stdio(struct snr_outfile *o);
/* Flushes, closes and renames into place. On failure the destination is
 * untouched, the temporary file removed, and err says why. */
int snr_outfile_commit(struct snr_outfile *o, char *err, size_t errlen);
/* Closes and removes the temporary file; the destination is untouched. */
void snr_outfile_discard(struct snr_outfile *o);

/* The usual shape for a text output: open and a stdio stream in one
 * (NULL with err filled), and close: committed if ok and every write
 * succeeded, else discarded. 0, or -1 with err filled. */
FILE *snr_outfile_fopen(struct snr_outfile *o, const char *path, char *err, size_t errlen);
FILE *snr_outfile_fopen_part(struct snr_outfile *o, const char *path, char *err, size_t errlen);
int snr_outfile_close(struct snr_outfile *o, bool ok, char *err, size_t errlen);

/* Writes a whole text to path through the above (_part: as
 * snr_outfile_open_part, a file of an output already allowed, such as a
 * set's manifest rewritten after each window). */
int snr_outfile_write_text(const char *path, const char *text, size_t len, char *err, size_t errlen);
int snr_outfile_write_text_part(const char *path, const char *text, size_t len, char *err, size_t errlen);

#endif
