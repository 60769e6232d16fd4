/*
 * cmd_record.c: `snr record`, the "Snap": stop a program at a breakpoint
 * through its debugger and record the next N instructions (recorder/record.c).
 */
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_lines.h"
#include "lib/snr_output.h"
#include "lib/snr_util.h"
#include "recorder/pod.h"
#include "recorder/record.h"
#include "recorder/run_device.h"
#include "snr_cli.h"

static const char record_usage[] =
	"usage: snr record (--run PROG.elf [--chips N] | --target tcp:HOST:PORT|unix:PATH | --pid PID\n"
	"                   | -- CMD ARGS...) --breakpoint FILE:LINE|SYM|0xADDR[+OFF] --count N -o T.snrt\n"
	"                  [--elf PROG] [--skip K] [--chip C] [--isa auto|ta1|x86-64|aarch64|PATH.so]\n"
	"                  [--timeout SECONDS] [--config M.json] [--kill] [--debugger PATH.so]\n"
	"                  [--method auto|sim|step] [--until-return] [--windows K [--every N]] [--force]\n"
	"                  [--pod]\n"
	"\n"
	"Stops the program at the breakpoint and records the next N instructions:\n"
	"the pc sequence, the code executed, and every register and memory byte an\n"
	"instruction reads before the window wrote it (Snap & Replay, Algorithm 1).\n"
	"\n"
	"targets:\n"
	"  --run PROG.elf                     a TA1 program: snr starts `snr device PROG.elf\n"
	"                                     --gdb ... --halt` itself (on a Unix socket in a\n"
	"                                     private folder), records, and stops the device\n"
	"                                     on every exit (--elf defaults to PROG.elf;\n"
	"                                     --chips N and --config go to the device too)\n"
	"  --target tcp:HOST:PORT|unix:PATH   a GDB remote stub: `snr device --gdb`,\n"
	"                                     gdbserver, qemu -g\n"
	"  --pid PID                          attach to a local process with ptrace\n"
	"  -- CMD ARGS...                     launch a local command under ptrace (a program\n"
	"                                     of another machine, such as a TA1 ELF, is refused:\n"
	"                                     use --run, or a stub with --target)\n"
	"\n"
	"options:\n"
	"  --breakpoint SPEC  where the window starts: FILE:LINE (the line's first statement,\n"
	"                     as gdb's break FILE:LINE; the address used is said), a function,\n"
	"                     an address, either +OFFSET (a data object is refused)\n"
	"  --count N          instructions to record (K, M suffixes allowed)\n"
	"  --until-return     end the window when the function the breakpoint is at the entry\n"
	"                     of returns to its caller (callees included); --count is then a\n"
	"                     ceiling (`snr profile` gives the instructions per call)\n"
	"  -o, --output FILE  the trace (.snrt); an existing FILE is replaced only with\n"
	"                     --force, and never if it is the ELF, the config or the program\n"
	"  --force            replace FILE if it exists (a trace set folder is never replaced)\n"
	"  --elf PROG         symbols from this ELF (default: the process's executable and\n"
	"                     its mapped objects, with their load bias)\n"
	"  --skip K           record from the (K+1)-th hit of the breakpoint (default 0)\n"
	"  --chip C           thread (TA1 chip) to record (default 0)\n"
	"  --chips N          with --run: chips in the device's pod (default: the config's)\n"
	"  --isa NAME         instruction set (default auto: from the target's architecture),\n"
	"                     or a vendor's ISA plugin (docs/recorder-plugins.md)\n"
	"  --debugger PATH.so a vendor's debugger backend; --target, --pid or -- CMD go to\n"
	"                     its open() as they are (docs/recorder-plugins.md)\n"
	"  --timeout SECONDS  give up if the breakpoint is not hit in time (default 60)\n"
	"  --config M.json    TA1 machine config stored in the trace (default: the target's,\n"
	"                     where it tells it, as snr device does, else the built-in one;\n"
	"                     refused if it differs from the target's)\n"
	"  --kill             end the program after recording (default: detach, it goes on;\n"
	"                     with --run the program is always ended, and the device with it)\n"
	"  --method M         sim: run the window in the ISA's simulator, reading registers,\n"
	"                     code and memory from the halted target on their first use,\n"
	"                     then run the target through the window and check it against\n"
	"                     the simulation (TA1 on snr device; x86-64, aarch64 and plain\n"
	"                     RV64 host code in unicorn); step:\n"
	"                     single-step the target, one round trip per instruction;\n"
	"                     auto (default): sim where the ISA has a simulator that\n"
	"                     records, else step (docs/recording.md)\n"
	"  --windows K        record K windows of the run into the trace set FILE (a folder:\n"
	"                     window-0.snrt ... and set.json): window k from the\n"
	"                     (skip + k*N + 1)-th hit of the breakpoint, each Algorithm 1's\n"
	"                     snapshot at its own start; between windows the program runs\n"
	"                     freely. replay, analyze, annotate and report take the set\n"
	"  --every N          hits of the breakpoint from one window's start to the next\n"
	"                     (default 1: every hit); hits inside a window count\n"
	"  --pod              every chip of a TA1 pod on snr device, into the trace set FILE\n"
	"                     (window-K.snrt is chip K's; set.json says \"pod\"): each chip's\n"
	"                     window starts at its own (skip+1)-th hit, once every chip hit;\n"
	"                     the chips are stepped in turns, none running unrecorded; a chip\n"
	"                     that cannot reach the breakpoint, or a pod-wide deadlock in the\n"
	"                     windows, fails the recording, named (--method sim: each chip\n"
	"                     simulated until a wait on a peer, then stepped; the same set;\n"
	"                     docs/recording.md, \"A pod\")\n"
	"  -h, --help         this text\n"
	"\n"
	"Before the target runs, --chip, the breakpoint's symbol, the ELF's architecture\n"
	"and code (at the breakpoint, and a sample) and the output path are checked against\n"
	"the target; a failure leaves it halted where it was, and says so (docs/recording.md).\n"
	"\n"
	"A progress line is drawn when stderr is a terminal; a summary ends the run.\n"
	"While recording, the trace is written step by step to FILE.partial; at the\n"
	"end it is compacted into FILE (replacing it only then). If snr is killed,\n"
	"FILE.partial is a truncated trace holding every instruction recorded.\n"
	"SIGINT or SIGTERM ends the window at the next instruction: FILE is written,\n"
	"marked interrupted, and snr exits 130 or 143.\n"
	"A set is written into FILE.partial, its manifest rewritten after each window,\n"
	"and renamed to FILE when the last window is written; a killed or failed\n"
	"recording leaves FILE.partial with every finished window, read as partial.\n"
	"\n"
	"Exit status: 0 recorded, 1 failed (the instructions recorded are kept in\n"
	"FILE.partial, read as truncated), 2 bad usage, 130/143 interrupted.\n";

static volatile int stop_signal, in_window;

/* `-- CMD`: a program built for another machine (a TA1 ELF is RISC-V) does
 * not run here under ptrace; execvp would hand it to /bin/sh, and the
 * recorder then look for the breakpoint in the shell. Said here instead,
 * with what to do. A script or a missing file goes on to ptrace as before. */
static int refuse_foreign_program(const char *cmd)
{
	char path[4096];
	if (strchr(cmd, '/')) {
		snprintf(path, sizeof(path), "%s", cmd);
	} else {
		const char *p = getenv("PATH");
		path[0] = 0;
		while (p && *p) {
			size_t n = strcspn(p, ":");
			snprintf(path, sizeof(path), "%.*s/%s", (int)n, p, cmd);
			if (!access(path, X_OK))
				break;
			path[0] = 0;
			p += n + (p[n] == ':');
		}
	}
	unsigned char h[20];
	FILE *f = path[0] ? fopen(path, "rb") : NULL;
	size_t got = f ? fread(h, 1, sizeof(h), f) : 0;
	if (f)
		fclose(f);
	if (got < sizeof(h) || memcmp(h, "\177ELF", 4) || h[5] != 1) /* little-endian ELFs only */
		return 0;
	unsigned machine = h[18] | (unsigned)h[19] << 8;
#if defined(__x86_64__)
	const unsigned host = 62; /* EM_X86_64 */
	const char *host_name = "x86-64";
#elif defined(__aarch64__)
	const unsigned host = 183; /* EM_AARCH64 */
	const char *host_name = "aarch64";
#else
	return 0;
#endif
	if (machine == host)
		return 0;
	if (machine == 243) /* EM_RISCV */
		snr_err("record: %s is a RISC-V ELF, which does not run on this %s machine under ptrace. A TA1 "
			"program (built by `snr cc`) runs on the device: `snr record --run %s --breakpoint ... "
			"--count N -o T.snrt` starts it and records; a RISC-V Linux program runs under qemu-riscv64 "
			"-g PORT, recorded with --target tcp:127.0.0.1:PORT",
			path, host_name, cmd);
	else
		snr_err("record: %s is an ELF for machine %u, which does not run on this %s machine under ptrace: "
			"run it under its debugger stub (an emulator's -g) and give --target",
			path, machine, host_name);
	return 1;
}

/* Before the window (connecting, waiting for the breakpoint) the signal
 * does what it always does; inside it, the window ends cleanly. */
static void on_stop(int sig)
{
	if (!in_window) {
		snr_run_device_kill_now(); /* --run: no device outlives snr */
		signal(sig, SIG_DFL);
		raise(sig);
		return;
	}
	stop_signal = sig;
}

/* The summary of one window (path: its trace). */
static void print_summary(const struct snr_record_opts *o, const struct snr_record_summary *s, const char *path)
{
	fprintf(stderr,
		"recorded %llu instructions in %.2f s (%.0f/s), ended by %s%s\n"
		"captured %llu registers and %llu bytes of memory; the window wrote %llu bytes (%llu by system calls)\n"
		"trace %s: %llu bytes (%.2f bytes per instruction)\n"
		"method %s: %llu debugger requests, %llu bytes fetched from the target\n",
		(unsigned long long)s->instructions, s->seconds, s->seconds > 0 ? (double)s->instructions / s->seconds : 0.0,
		!strcmp(s->end_reason, "count")	     ? "reaching --count"
		: !strcmp(s->end_reason, "returned") ? "the function's return"
						    : s->end_reason,
		!strcmp(s->end_reason, "exited")	       ? " (the program ended inside the window)"
		: !strcmp(s->end_reason, "interrupted") ? (s->signal == SIGINT ? " (SIGINT)" : " (SIGTERM)")
						       : "",
		(unsigned long long)s->regs_captured, (unsigned long long)s->bytes_captured,
		(unsigned long long)s->bytes_written, (unsigned long long)s->bytes_post, path, (unsigned long long)s->trace_bytes,
		s->instructions ? (double)s->trace_bytes / (double)s->instructions : 0.0, s->method,
		(unsigned long long)s->requests, (unsigned long long)s->bytes_fetched);
	if (*s->machine_config)
		fprintf(stderr, "%s\n", s->machine_config);
	if (!strcmp(s->method, "sim") && !s->fell_back)
		fprintf(stderr,
			"verified against the target: it ran the window itself to %llu checkpoints (%llu continues to a "
			"breakpoint, %llu single steps, %llu instructions it ran for the simulator); registers and "
			"written memory matched\n",
			(unsigned long long)s->checkpoints, (unsigned long long)s->target_conts,
			(unsigned long long)s->target_steps, (unsigned long long)s->target_instructions);
	if (s->fell_back) {
		char what[200];
		if (s->fallback_blocked)
			snprintf(what, sizeof(what),
				 "the target blocked at a ta.wait (pc 0x%llx) that the simulation had passed, on its way "
				 "to the checkpoint",
				 (unsigned long long)s->fallback_pc);
		else
			snprintf(what, sizeof(what), "the target did not match the simulation at the checkpoint");
		fprintf(stderr,
			"fallback: %s at instruction %llu (%s); "
			"it was put back at the checkpoint at instruction %llu, verified to there, and instructions "
			"%llu on were recorded by stepping\n",
			what, (unsigned long long)s->fallback_detected_at, s->fallback_reason,
			(unsigned long long)s->fallback_at, (unsigned long long)s->fallback_at);
	}
	if (s->unread)
		fprintf(stderr,
			"%llu load%s from memory the debugger cannot read (such as the vDSO's [vvar] time data) ran on "
			"the target; their results are in the trace as post registers (steps marked unread)\n",
			(unsigned long long)s->unread, s->unread == 1 ? "" : "s");
	if (s->vdso_calls)
		fprintf(stderr,
			"%llu call%s into the vDSO (clock_gettime, time, ...) ran on the target as one step each; their "
			"results are in the trace as post registers and memory (steps marked call)\n",
			(unsigned long long)s->vdso_calls, s->vdso_calls == 1 ? "" : "s");
	if (o->until_return && !strcmp(s->end_reason, "count"))
		fprintf(stderr, "note: the function had not returned after --count %llu instructions: the window ends "
				"there\n",
			(unsigned long long)o->count);
	if (s->unmodelled)
		fprintf(stderr,
			"warning: the ISA plugin could not model %llu instruction%s (first: instruction %llu at 0x%llx: "
			"%s); what they read may be missing from the trace, and a replay then fails there\n",
			(unsigned long long)s->unmodelled, s->unmodelled == 1 ? "" : "s",
			(unsigned long long)s->first_unmodelled_index, (unsigned long long)s->first_unmodelled_pc,
			s->first_unmodelled);
}

static void window_done(void *ctx, uint64_t k, const char *path, const struct snr_record_summary *s)
{
	const struct snr_record_opts *o = ctx;
	char final[4096];
	(void)path; /* inside FILE.partial until the set is complete */
	snprintf(final, sizeof(final), "%s/window-%llu.snrt", o->out_path, (unsigned long long)k);
	fprintf(stderr, "window %llu:\n", (unsigned long long)k);
	print_summary(o, s, final);
}

/* ", FILE:LINE (FUNCTION)" of pc in --elf's line tables, or nothing. */
static void fallback_place(const struct snr_record_opts *o, uint64_t pc, char *out, size_t len)
{
	out[0] = 0;
	if (!o->elf_path || !pc)
		return;
	struct snr_lines *l = snr_lines_new();
	char lerr[300], text[560];
	const struct snr_place *pl = snr_lines_add(l, o->elf_path, 0, NULL, lerr, sizeof(lerr)) ? NULL
												: snr_lines_find(l, pc);
	if (pl)
		snprintf(out, len, ", %s", snr_place_text(pl, text, sizeof(text)));
	snr_lines_free(l);
}

/* --pod: every chip into one trace set, a summary line per chip. */
static int record_pod(struct snr_record_opts *o)
{
	char err[8192];
	struct snr_pod_summary *ps = snr_xcalloc(1, sizeof(*ps));
	int rc = snr_record_pod(o, ps, err, sizeof(err));
	if (rc) {
		snr_err("record: --pod: %s", err);
		if (ps->set_path)
			snr_err("record: nothing of the pod is complete; what was written is in %s", ps->set_path);
		free(ps);
		return 1;
	}
	fprintf(stderr, "pod of %u chips recorded into the trace set %s:\n", ps->chips, ps->set_path);
	fprintf(stderr, "%-5s %12s %-10s %10s %12s\n", "chip", "instructions", "end", "registers", "bytes");
	for (unsigned k = 0; k < ps->chips; k++) {
		const struct snr_record_summary *s = &ps->chip[k];
		fprintf(stderr, "%-5u %12llu %-10s %10llu %12llu\n", k, (unsigned long long)s->instructions, s->end_reason,
			(unsigned long long)s->regs_captured, (unsigned long long)s->bytes_captured);
	}
	if (ps->chips && *ps->chip[0].machine_config) /* every chip's trace stores the same */
		fprintf(stderr, "%s\n", ps->chip[0].machine_config);
	/* --method sim: how far each chip's simulation went (docs/recording.md, "A pod") */
	for (unsigned k = 0; k < ps->chips; k++) {
		const struct snr_record_summary *s = &ps->chip[k];
		if (s->method && !strcmp(s->method, "sim") && s->fell_back) {
			char place[600] = "";
			fallback_place(o, s->fallback_pc, place, sizeof(place));
			if (s->fallback_blocked)
				fprintf(stderr,
					"chip %u: simulated, and stepped from instruction %llu on (verified to there): the "
					"device blocked at a ta.wait the simulation had passed (pc 0x%llx%s), on its way to "
					"the checkpoint at instruction %llu: %s\n",
					k, (unsigned long long)s->fallback_at, (unsigned long long)s->fallback_pc, place,
					(unsigned long long)s->fallback_detected_at, s->fallback_reason);
			else
				fprintf(stderr,
					"chip %u: simulated, and stepped from instruction %llu on (verified to there): the "
					"device did not match the simulation at the checkpoint at instruction %llu (pc "
					"0x%llx%s): %s\n",
					k, (unsigned long long)s->fallback_at, (unsigned long long)s->fallback_detected_at,
					(unsigned long long)s->fallback_pc, place, s->fallback_reason);
			if (s->peer_signals_kept)
				fprintf(stderr,
					"chip %u: %llu signal%s of peers that reached it after instruction %llu kept in its "
					"sync flags when it was put back there\n",
					k, (unsigned long long)s->peer_signals_kept, s->peer_signals_kept == 1 ? "" : "s",
					(unsigned long long)s->fallback_at);
		} else if (s->method && !strcmp(s->method, "sim"))
			fprintf(stderr, "chip %u: simulated, verified against the device at %llu checkpoints\n", k,
				(unsigned long long)s->checkpoints);
		if (s->method && !strcmp(s->method, "sim") && s->peer_waits)
			fprintf(stderr,
				"chip %u: simulated past %llu wait%s on a peer (the device ran each wait; %llu bytes the "
				"window knew had changed meanwhile and were reloaded)\n",
				k, (unsigned long long)s->peer_waits, s->peer_waits == 1 ? "" : "s",
				(unsigned long long)s->peer_bytes_changed);
	}
	free(ps);
	return 0;
}

int snr_cmd_record(int argc, char **argv)
{
	static const struct option opts[] = {
		{"target", required_argument, NULL, 't'}, {"pid", required_argument, NULL, 'p'},
		{"elf", required_argument, NULL, 'e'},    {"breakpoint", required_argument, NULL, 'b'},
		{"skip", required_argument, NULL, 'k'},   {"count", required_argument, NULL, 'n'},
		{"chip", required_argument, NULL, 'c'},   {"isa", required_argument, NULL, 'i'},
		{"output", required_argument, NULL, 'o'}, {"timeout", required_argument, NULL, 'T'},
		{"config", required_argument, NULL, 'C'}, {"kill", no_argument, NULL, 'K'},
		{"debugger", required_argument, NULL, 'D'}, {"method", required_argument, NULL, 'M'},
		{"until-return", no_argument, NULL, 'R'}, {"windows", required_argument, NULL, 'W'},
		{"every", required_argument, NULL, 'E'}, {"pod", no_argument, NULL, 'P'},
		{"run", required_argument, NULL, 'r'},    {"chips", required_argument, NULL, 'N'},
		{"help", no_argument, NULL, 'h'},         {NULL, 0, NULL, 0},
	};
	struct snr_record_opts o = {.isa = "auto", .timeout_s = 60};
	const char *pid = NULL, *debugger = NULL, *run = NULL, *chips = NULL;
	bool pod = false;
	uint64_t v;
	char pidtarget[64];
	int opt;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "+o:h", opts, NULL)) != -1) {
		switch (opt) {
		case 't': o.target = optarg; break;
		case 'p': pid = optarg; break;
		case 'e': o.elf_path = optarg; break;
		case 'b': o.breakpoint = optarg; break;
		case 'i': o.isa = optarg; break;
		case 'o': o.out_path = optarg; break;
		case 'C': o.config_path = optarg; break;
		case 'K': o.kill_after = true; break;
		case 'R': o.until_return = true; break;
		case 'P': pod = true; break;
		case 'D': debugger = optarg; break;
		case 'r': run = optarg; break;
		case 'N':
			if (!snr_parse_u64(optarg, &v, false) || v == 0 || v > 65536) {
				snr_err("record: --chips needs a count of chips, not '%s'", optarg);
				return 2;
			}
			chips = optarg;
			break;
		case 'M':
			if (strcmp(optarg, "auto") && strcmp(optarg, "sim") && strcmp(optarg, "step")) {
				snr_err("record: --method must be auto, sim or step, not '%s'", optarg);
				return 2;
			}
			o.method = optarg;
			break;
		case 'W':
			if (!snr_parse_u64(optarg, &o.windows, false) || o.windows == 0 || o.windows > 100000) {
				snr_err("record: --windows needs a count of windows (1..100000), not '%s'", optarg);
				return 2;
			}
			break;
		case 'E':
			if (!snr_parse_u64(optarg, &o.every, true) || o.every == 0) {
				snr_err("record: --every needs a positive count of breakpoint hits, not '%s'", optarg);
				return 2;
			}
			break;
		case 'k':
			if (!snr_parse_u64(optarg, &o.skip, true)) {
				snr_err("record: --skip needs a count, not '%s'", optarg);
				return 2;
			}
			break;
		case 'n':
			if (!snr_parse_u64(optarg, &o.count, true) || o.count == 0) {
				snr_err("record: --count needs a positive instruction count, not '%s'", optarg);
				return 2;
			}
			break;
		case 'c':
			if (!snr_parse_u64(optarg, &v, false) || v > 65535) {
				snr_err("record: --chip needs a chip number, not '%s'", optarg);
				return 2;
			}
			o.chip = (int)v;
			break;
		case 'T':
			if (!snr_parse_u64(optarg, &v, false) || v == 0 || v > 86400) {
				snr_err("record: --timeout needs seconds (1..86400), not '%s'", optarg);
				return 2;
			}
			o.timeout_s = (int)v;
			break;
		case 'h': fputs(record_usage, stdout); return 0;
		default: fputs(record_usage, stderr); return 2;
		}
	}
	int ntargets = !!run + !!o.target + !!pid + (optind < argc);
	if (ntargets != 1) {
		snr_err("record: give exactly one of --run, --target, --pid or -- CMD");
		fputs(record_usage, stderr);
		return 2;
	}
	if (!o.out_path || !o.breakpoint || !o.count) {
		snr_err("record: %s is required", !o.out_path ? "-o T.snrt" : !o.breakpoint ? "--breakpoint SPEC" : "--count N");
		return 2;
	}
	if (pod && (o.windows || o.chip)) {
		snr_err("record: --pod records every chip, one window each: not with %s", o.windows ? "--windows" : "--chip");
		return 2;
	}
	if (pod && !o.target && !run) {
		snr_err("record: --pod records a TA1 pod on snr device: give --target tcp:HOST:PORT or unix:PATH, or --run PROG.elf --chips N");
		return 2;
	}
	if (chips && !run) {
		snr_err("record: --chips goes with --run (a device started elsewhere has its own)");
		return 2;
	}
	if (run && debugger) {
		snr_err("record: --run starts snr device, which --debugger does not talk to");
		return 2;
	}
	if (o.every && !o.windows) {
		snr_err("record: --every needs --windows K");
		return 2;
	}
	char err[1024];
	if (debugger) {
		/* a vendor's backend: the target string is its own business */
		if (pid) {
			snprintf(pidtarget, sizeof(pidtarget), "pid:%s", pid);
			o.target = pidtarget;
		}
		if (!o.target)
			o.argv = argv + optind;
		o.dbg = snr_dbg_load(debugger, err, sizeof(err));
		if (!o.dbg) {
			snr_err("record: --debugger: %s", err);
			return 1;
		}
	} else if (o.target) {
		if (strncmp(o.target, "tcp:", 4) && strncmp(o.target, "unix:", 5)) {
			snr_err("record: --target must be tcp:HOST:PORT or unix:PATH, not '%s'", o.target);
			return 2;
		}
		o.dbg = &snr_dbg_rsp;
	} else if (pid) {
		if (!snr_parse_u64(pid, &v, false) || v == 0 || v > 0x7fffffff) {
			snr_err("record: --pid needs a process id, not '%s'", pid);
			return 2;
		}
		snprintf(pidtarget, sizeof(pidtarget), "pid:%llu", (unsigned long long)v);
		o.target = pidtarget;
		o.dbg = &snr_dbg_ptrace;
	} else if (!run) {
		o.argv = argv + optind;
		if (refuse_foreign_program(o.argv[0]))
			return 1;
		o.dbg = &snr_dbg_ptrace;
	} else {
		o.dbg = &snr_dbg_rsp;
		o.kill_after = true;
		if (!o.elf_path)
			o.elf_path = run;
	}
	/* the inputs the output is checked against (with the path, before the
	 * target runs): the ELF, the config, the program launched or attached */
	snr_output_input(o.elf_path);
	snr_output_input(o.config_path);
	if (o.argv)
		snr_output_input_program(o.argv[0]);
	if (pid && !debugger) {
		char exe[64];
		snprintf(exe, sizeof(exe), "/proc/%s/exe", pid);
		snr_output_input(exe);
	}
	if (pod && !debugger && !run)
		return record_pod(&o);
	o.progress = isatty(2);
	struct snr_record_summary s;
	/* SIGINT, SIGTERM: the window ends at the next step, the trace is
	 * finished and marked interrupted (no SA_RESTART: a wait for the
	 * target is cut short too, where the backend allows). */
	struct sigaction sa = {.sa_handler = on_stop}, old_int, old_term;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, &old_int);
	sigaction(SIGTERM, &sa, &old_term);
	o.stop = &stop_signal;
	o.window_done = window_done;
	o.window_ctx = &o;
	o.in_window = &in_window;
	char endpoint[4200];
	int rc;
	if (run) {
		struct snr_run_device_opts ro = {.program = run, .chips = chips, .config = o.config_path,
						 .timeout_s = o.timeout_s};
		rc = snr_run_device_start(&ro, endpoint, sizeof(endpoint), err, sizeof(err));
		if (rc == 0 && pod) {
			o.target = endpoint;
			rc = record_pod(&o);
			snr_run_device_stop(0);
			sigaction(SIGINT, &old_int, NULL);
			sigaction(SIGTERM, &old_term, NULL);
			return rc;
		}
		if (rc == 0) {
			o.target = endpoint;
			rc = snr_record(&o, &s, err, sizeof(err));
			/* the recorder killed the program (the device then ends by
			 * itself), or failed and left it halted: stopped either way */
			int dev = snr_run_device_stop(rc ? 0 : 10);
			if (rc) {
				/* what the recorder says about leaving the target halted
				 * for the next debugger no longer holds */
				char *halted = strstr(err, "; the target was not continued: snr left it halted");
				if (!halted)
					halted = strstr(err, "; the target was interrupted: snr left it halted");
				if (halted)
					*halted = 0;
				size_t l = strlen(err);
				snr_fmt(err + l, sizeof(err) - l, " (--run: the device was stopped)");
			} else if (dev != 3 && dev != 0) {
				snr_warn("record: --run: snr device ended with status %d after the recording", dev);
			}
		}
	} else {
		rc = snr_record(&o, &s, err, sizeof(err));
	}
	sigaction(SIGINT, &old_int, NULL);
	sigaction(SIGTERM, &old_term, NULL);
	if (rc) {
		snr_err("record: %s", err);
		return stop_signal ? 128 + stop_signal : 1;
	}
	if (o.windows) {
		fprintf(stderr, "trace set %s: %llu window%s\n", s.set_path ? s.set_path : o.out_path,
			(unsigned long long)s.windows, s.windows == 1 ? "" : "s");
		if (*s.machine_config)
			fprintf(stderr, "%s\n", s.machine_config);
	} else
		print_summary(&o, &s, o.out_path);
	return s.signal ? 128 + s.signal : 0;
}
