/*
 * snr.c: the snr command. One binary with git-style subcommands over the
 * shared library; this file only dispatches and prints the overview.
 */
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "analyzer/annotate.h"
#include "lib/snr_lines.h"
#include "lib/snr_output.h"
#include "lib/snr_partial.h"
#include "snr_cli.h"

#ifndef SNR_VERSION
#define SNR_VERSION "unknown"
#endif

struct command {
	const char *name;
	int (*run)(int argc, char **argv);
	const char *summary;
};

static const struct command commands[] = {
	{"cc", snr_cmd_cc, "build a TA1 program with the RISC-V cross compiler"},
	{"device", snr_cmd_device, "run a TA1 program on the device (optionally serving GDB's protocol)"},
	{"profile", snr_cmd_profile, "per-function cycles, FLOPs, HBM bytes and roofline under the timing model"},
	{"record", snr_cmd_record, "stop a program at a breakpoint and record the next N instructions"},
	{"trace", snr_cmd_trace, "inspect a trace: info, dump, verify; finish a recording's journal"},
	{"replay", snr_cmd_replay, "replay a trace in a simulator, verify it, write metrics"},
	{"check", snr_cmd_check, "replay stored traces against their golden summaries (regression)"},
	{"sweep", snr_cmd_sweep, "replay windows over a grid of machine configs, locally or on Slurm"},
	{"analyze", snr_cmd_analyze, "analyze a trace or metrics file: dma, vmem, util, deps, suggest"},
	{"annotate", snr_cmd_annotate, "cycles and stall causes per source line and instruction of a window"},
	{"report", snr_cmd_report, "write one self-contained HTML report of a trace or metrics file"},
	{"export", snr_cmd_export, "export events: perfetto (Chrome trace-event JSON)"},
	{"host", snr_cmd_host, "host side: on/off-CPU (eBPF), runtime API buckets, GPU activity (CUPTI), progress points, causal profile"},
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: snr COMMAND [ARGS...]\n"
		"\n"
		"snr records accelerator programs through a step debugger and replays\n"
		"them in a simulator (Snap & Replay). TA1 is its reference accelerator.\n"
		"\n"
		"commands:\n");
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		fprintf(f, "  %-10s %s\n", commands[i].name, commands[i].summary);
	fprintf(f,
		"\n"
		"`snr COMMAND --help` describes one command. `snr --version` prints the version.\n"
		"Every command that reads a trace or metrics file (trace, replay, analyze, annotate,\n"
		"report, export) takes --elf PROG: the program whose DWARF line tables place pcs in\n"
		"the source, instead of the ELF the trace recorded (docs/analyses.md, \"Source lines\").\n"
		"\n"
		"A trace cut short (its recorder killed) or interrupted (SIGINT/SIGTERM), and a\n"
		"metrics file replayed from one, hold part of a window: trace, replay, check,\n"
		"analyze, annotate, report and export refuse them with exit status 3, saying how much\n"
		"they hold, unless given --allow-truncated (JSON outputs then say\n"
		"\"truncated\": true). A metrics file cut short (its summary or metadata missing)\n"
		"exits 3 as well, --allow-truncated or not: no part of it can be used.\n"
		"\n"
		"No output replaces an existing file unless the command is given --force (record,\n"
		"replay, report, export, host, analyze deps --dot), and no output is ever written\n"
		"over one of the command's inputs (the trace, the metrics file, the ELF, the\n"
		"config, or a file they name), --force or not. A killed snr leaves no temporary\n"
		"file behind on SIGINT or SIGTERM; after SIGKILL, the next write of the same\n"
		"output removes it.\n");
}

int snr_wants_help(int argc, char **argv)
{
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			return 0;
		if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help"))
			return 1;
	}
	return 0;
}

/* `--elf PROG` on every command that reads a trace or metrics file: the
 * program whose line tables place pcs in the source (lib/snr_lines.h),
 * instead of the one the trace recorded. Taken out of argv here so that
 * every reader accepts it alike. Returns -1 to go on, else an exit status. */
static int take_elf_option(const char *cmd, int *argc, char **argv)
{
	static const char *const readers[] = {"trace", "replay", "analyze", "annotate", "report", "export"};
	bool reader = false;
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		reader |= !strcmp(cmd, readers[i]);
	if (!reader)
		return -1;
	for (int i = 2; i < *argc; i++) {
		if (!strcmp(argv[i], "--"))
			break;
		const char *val = NULL;
		int take = 0;
		if (!strcmp(argv[i], "--elf")) {
			if (i + 1 >= *argc) {
				fprintf(stderr, "snr: %s: --elf needs the program's ELF path\n", cmd);
				return 2;
			}
			val = argv[i + 1];
			take = 2;
		} else if (!strncmp(argv[i], "--elf=", 6)) {
			val = argv[i] + 6;
			take = 1;
		}
		if (!take)
			continue;
		snr_lines_set_elf(val);
		memmove(&argv[i], &argv[i + take], (size_t)(*argc - i - take + 1) * sizeof(*argv));
		*argc -= take;
		i--;
	}
	return -1;
}

/* The commands that read traces and metrics files (lib/snr_partial.h). */
static bool reads_snr_files(const char *cmd)
{
	static const char *const readers[] = {"trace", "replay", "check", "analyze", "annotate", "report", "export"};
	for (size_t i = 0; i < sizeof(readers) / sizeof(readers[0]); i++)
		if (!strcmp(cmd, readers[i]))
			return true;
	return false;
}

/* --allow-truncated, anywhere before "--", sets the policy and leaves argv. */
static int take_allow_truncated(int argc, char **argv)
{
	int out = 0;
	bool rest = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			rest = true;
		if (!rest && !strcmp(argv[i], "--allow-truncated")) {
			snr_partial_allow(true);
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	return out;
}

/* The commands that write files the user names (lib/snr_output.h). */
static bool writes_outputs(const char *cmd)
{
	static const char *const writers[] = {"record", "replay", "analyze", "report", "export", "host", "trace"};
	for (size_t i = 0; i < sizeof(writers) / sizeof(writers[0]); i++)
		if (!strcmp(cmd, writers[i]))
			return true;
	return false;
}

/* --force, anywhere before "--": outputs may replace existing files
 * (never an input). Taken out of argv. */
static int take_force(int argc, char **argv, bool *force)
{
	int out = 0;
	bool rest = false;
	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--"))
			rest = true;
		if (!rest && !strcmp(argv[i], "--force")) {
			*force = true;
			continue;
		}
		argv[out++] = argv[i];
	}
	argv[out] = NULL;
	return out;
}

int main(int argc, char **argv)
{
	if (argc < 2) {
		usage(stderr);
		return 2;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
		if (argc > 2 && strcmp(cmd, "help") == 0) {
			for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
				if (!strcmp(argv[2], commands[i].name)) {
					char *av[] = {argv[2], "--help", NULL};
					return commands[i].run(2, av);
				}
		}
		usage(stdout);
		return 0;
	}
	if (!strcmp(cmd, "--version")) {
		printf("snr %s\n", SNR_VERSION);
		return 0;
	}
	int rc = take_elf_option(cmd, &argc, argv);
	if (rc >= 0)
		return rc;
	for (size_t i = 0; i < sizeof(commands) / sizeof(commands[0]); i++)
		if (!strcmp(cmd, commands[i].name)) {
			if (reads_snr_files(cmd))
				argc = take_allow_truncated(argc, argv);
			bool force = false;
			if (writes_outputs(cmd))
				argc = take_force(argc, argv, &force);
			snr_output_keep_existing(!force);
			snr_output_guard_inputs(true);
			int rc = commands[i].run(argc - 1, argv + 1);
			return rc && snr_partial_refused() ? SNR_EXIT_PARTIAL : rc;
		}
	fprintf(stderr, "snr: unknown command '%s'\n\n", cmd);
	usage(stderr);
	return 2;
}
