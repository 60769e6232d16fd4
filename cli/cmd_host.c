/*
 * cmd_host.c: `snr host`, the host side of a run: on/off-CPU time with eBPF,
 * runtime API buckets with uprobes, GPU activity with CUPTI, one timeline.
 *   snr host record (-p PID | -- CMD ARGS...) [-d S] [-F HZ] [--uprobe LIB:SYM:BUCKET]... -o H.snrh
 *   snr host report H.snrh [MORE.snrh...] [--folded PREFIX] [--top N] [--trace-events OUT.json]
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_output.h"
#include "lib/snr_partial.h"
#include "lib/snr_util.h"
#include "analyzer/host_report.h"
#include "lib/snr_host_trace.h"
#include "snr_cli.h"
#ifdef SNR_HAVE_HOST_BPF
#include "recorder/host/host_record.h"
#include "recorder/host/progress.h"
#include "recorder/host/stack_map.h"
#endif

static const char host_usage[] =
	"usage: snr host record (-p PID | -- CMD ARGS...) [OPTIONS] -o H.snrh\n"
	"       snr host report H.snrh [CUPTI.snrh...] [--folded PREFIX] [--top N] [--trace-events OUT.json]\n"
	"       snr host causal H.snrh [--speedup PCT] [--json] [--html OUT.html]\n"
	"\n"
	"The host side of a run: record traces one process with eBPF (on/off-CPU time,\n"
	"runtime API buckets, GPU activity through CUPTI); report summarizes a host\n"
	"trace; causal predicts what speeding up each function or bucket would do to\n"
	"the progress points recorded. `snr host record --help`, `snr host report\n"
	"--help` and `snr host causal --help` describe each.\n"
	"docs/host.md.\n";

static const char host_record_usage[] =
	"usage: snr host record (-p PID | -- CMD ARGS...) [-d SECONDS] [-F HZ] [--min-block US]\n"
	"                       [--unwind dwarf|fp] [--stack-bytes N] [--stack-map N]\n"
	"                       [--uprobe LIB:SYMBOL:BUCKET]...\n"
	"                       [--no-presets] [--io-calls] [--no-cupti] [--quiet]\n"
	"                       [--progress SYM]... [--latency BEGIN:END[:arg]]... -o H.snrh [--force]\n"
	"\n"
	"Traces one process with eBPF (as root): every scheduler switch of its\n"
	"threads (off-CPU intervals with state, user+kernel stack and waker), on-CPU\n"
	"samples at HZ (default 99), uprobes on runtime APIs that put time in gPerf's\n"
	"buckets (H:CTRL, H:WAIT_DEV; H:APP is the rest). H:IO is time whose kernel\n"
	"stack is in a file or network system call; --io-calls also traces each such\n"
	"call (exact in-call times and counts, but every system call on the machine\n"
	"then takes the kernel's slow path while recording).\n"
	"User stacks are unwound with DWARF CFI (.eh_frame, .debug_frame) by default:\n"
	"each sample and switch copies the user registers and the top --stack-bytes of\n"
	"the user stack (default 16384, at most 65536) and libdw unwinds them, so code\n"
	"without frame pointers (libc, -O2 builds) keeps its callers; --unwind fp walks\n"
	"frame pointers in the kernel instead (cheaper, loses frameless callers).\n"
	"Kernel stacks (and --unwind fp's user stacks) go into one kernel stack map\n"
	"of --stack-map stacks (default 16384, at most 65536; 1 KiB each, allocated\n"
	"when recording starts); a stack whose slot is taken by another, or that finds\n"
	"the map full, is lost and counted, and `snr host report` says how many.\n"
	"Presets cover libcudart (cudaLaunchKernel, cudaMemcpy[Async], cudaGraphLaunch\n"
	"-> H:CTRL; cuda{Stream,Device,Event}Synchronize -> H:WAIT_DEV) and libta1rt\n"
	"(ta1rt_open/load/launch -> H:CTRL, ta1rt_wait -> H:WAIT_DEV; on its device\n"
	"thread ta1rt_device_upload -> G:XFER, ta1rt_device_run -> G:COMP, the device\n"
	"work `snr host report` splits into on/off-device time) when the process\n"
	"uses them. It stops when the process exits, after -d, or on SIGINT/SIGTERM\n"
	"(which it passes on to a CMD it started); every probe is detached on exit.\n"
	"A CMD it starts gets libsnr_cupti.so as CUDA_INJECTION64_PATH (when built and\n"
	"not already set; --no-cupti: never), so a CUDA program's GPU activity lands in\n"
	"the same trace when it exits normally.\n"
	"\n"
	"Progress points (docs/host.md, \"Progress points\"): --progress SYM puts a uprobe\n"
	"on the program's function SYM, each call one unit of work (a token); --latency\n"
	"BEGIN:END pairs each call of BEGIN with the next call of END on the same\n"
	"thread (BEGIN:END:arg: with the END whose first argument equals BEGIN's), one\n"
	"request each. Several of each are allowed; `snr host report` shows their\n"
	"rate and latency, `snr host causal` what speeding up each function would do.\n"
	"\n"
	"It writes H.snrh as it goes, so a recorder killed (even by SIGKILL) leaves\n"
	"everything up to its last drain (every 50 ms), read as truncated. A command\n"
	"it started dies with it. -o is required; an existing H.snrh is replaced only\n"
	"with --force, and never the program CMD runs.\n"
	"\n"
	"examples:\n"
	"  sudo snr host record -o serve.snrh -- ./ta1_serve prog.elf 20\n"
	"  sudo snr host record -p 1234 -d 10 -F 199 --uprobe libfoo:foo_wait:H:WAIT_DEV -o h.snrh\n"
	"  sudo snr host record --progress emit_token --latency req_begin:req_end -o t.snrh -- ./serve\n";

static const char host_report_usage[] =
	"usage: snr host report H.snrh [CUPTI.snrh...] [--folded PREFIX] [--top N] [--trace-events OUT.json]\n"
	"                       [--json] [--allow-truncated] [--force]\n"
	"\n"
	"Prints per-thread on/off-CPU time by state and by bucket, the calls, and the\n"
	"top N off-CPU stacks (default 10) of host traces from `snr host record`. Extra\n"
	"files (from libsnr_cupti.so, CUDA_INJECTION64_PATH) merge on the same clock.\n"
	"On/off-device, per device: the recorded window split into compute only,\n"
	"transfer only, both, queued (submitted, not started, nothing running) and\n"
	"idle, the device-active ratio (on-device = compute U transfer, over the\n"
	"window), device work by name, and each host wait (H:WAIT_DEV) linked to the\n"
	"work whose completion ended it (CUPTI kernels/copies/memsets; libta1rt's\n"
	"uploads and runs).\n"
	"\n"
	"options:\n"
	"  --folded PREFIX       write PREFIX.oncpu.folded and PREFIX.offcpu.folded (weights\n"
	"                        in microseconds) for flamegraph.pl or speedscope\n"
	"  --trace-events OUT    write Chrome/Perfetto trace-event JSON\n"
	"  --top N               the off-CPU stacks listed\n"
	"  --json                JSON instead of text: threads, their buckets and\n"
	"                        on/off-device (with\n"
	"                        every host wait and the work that ended it), in ns, and\n"
	"                        the progress points (count, rate, latency or inter-arrival\n"
	"                        p50/p90/p99, and over 10 slices of the run)\n"
	"  --allow-truncated     a trace cut short (its recorder killed): exit 0, not 3\n"
	"  --force               replace outputs that exist (never an input trace)\n"
	"\n"
	"A trace whose recorder was killed is read up to its last drain: the report says\n"
	"it is truncated (\"truncated\": true in --trace-events JSON) and exits 3 unless\n"
	"--allow-truncated.\n"
	"\n"
	"example:\n"
	"  snr host report serve.snrh --folded serve && flamegraph.pl serve.offcpu.folded > off.svg\n";

/* --trace-events OUT and --folded's two files: 0 if all may be written. */
static int host_report_check_outputs(const struct snrh_report_opts *ro)
{
	char err[1024], path[4200];
	const char *opt[3] = {"--trace-events", "--folded", "--folded"};
	for (int k = 0; k < 3; k++) {
		if (k == 0 && !ro->trace_events)
			continue;
		if (k > 0 && !ro->folded_prefix)
			continue;
		if (k == 0)
			snprintf(path, sizeof(path), "%s", ro->trace_events);
		else
			snprintf(path, sizeof(path), "%s.%s.folded", ro->folded_prefix, k == 1 ? "oncpu" : "offcpu");
		if (snr_output_check(path, false, err, sizeof(err))) {
			snr_err("host report: %s: %s", opt[k], err);
			return -1;
		}
	}
	return 0;
}

static int host_report_main(int argc, char **argv)
{
	static const struct option opts[] = {{"folded", required_argument, NULL, 'f'},
					     {"top", required_argument, NULL, 't'},
					     {"trace-events", required_argument, NULL, 'j'},
					     {"allow-truncated", no_argument, NULL, 'a'},
					     {"json", no_argument, NULL, 'J'},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	struct snrh_report_opts ro = {.top = 10};
	bool allow_truncated = false;
	int c;
	uint64_t v;
	optind = 1;
	while ((c = getopt_long(argc, argv, "h", opts, NULL)) != -1) {
		switch (c) {
		case 'f': ro.folded_prefix = optarg; break;
		case 'j': ro.trace_events = optarg; break;
		case 'a': allow_truncated = true; break;
		case 'J': ro.json = 1; break;
		case 't':
			if (!snr_parse_u64(optarg, &v, false)) {
				snr_err("host report: --top wants a number, not '%s'", optarg);
				return 2;
			}
			ro.top = (unsigned)v;
			break;
		case 'h': fputs(host_report_usage, stdout); return 0;
		default: fputs(host_report_usage, stderr); return 2;
		}
	}
	if (optind >= argc) {
		snr_err("host report: give a host trace (snr host report H.snrh)");
		fputs(host_report_usage, stderr);
		return 2;
	}
	/* the outputs checked against every input before any is read */
	for (int i = optind; i < argc; i++)
		snr_output_input(argv[i]);
	if (host_report_check_outputs(&ro))
		return 1;
	struct snrh_trace t;
	snrh_trace_init(&t);
	json_object_clear(t.meta);
	char err[700], why[700] = "";
	for (int i = optind; i < argc; i++) {
		bool truncated;
		if (snrh_trace_read_partial(&t, argv[i], &truncated, err, sizeof(err))) {
			snr_err("%s", err);
			snrh_trace_free(&t);
			return 1;
		}
		if (truncated && !why[0])
			snprintf(why, sizeof(why), "%s", err);
	}
	if (why[0]) {
		snrh_trace_rebuild_threads(&t);
		ro.truncated = why;
	}
	int rc = snrh_report(&t, &ro, stdout) ? 1 : 0;
	snrh_trace_free(&t);
	if (!rc && why[0] && !allow_truncated) {
		snr_err("host report: %s; the report above covers what was written before (--allow-truncated: exit 0)",
			why);
		rc = SNR_EXIT_PARTIAL;
	}
	return rc;
}

#ifdef SNR_HAVE_HOST_BPF
static int parse_uprobe(const char *arg, struct snrh_uprobe_spec *u)
{
	/* LIB:SYMBOL:BUCKET, where BUCKET itself has a colon (H:CTRL). */
	const char *c1 = strchr(arg, ':');
	const char *c2 = c1 ? strchr(c1 + 1, ':') : NULL;
	if (!c1 || !c2 || c1 == arg || c2 == c1 + 1 || !c2[1])
		return -1;
	u->lib = strndup(arg, (size_t)(c1 - arg));
	u->symbol = strndup(c1 + 1, (size_t)(c2 - c1 - 1));
	u->bucket = snr_xstrdup(c2 + 1);
	u->optional = false;
	return 0;
}

static int host_record_main(int argc, char **argv)
{
	static const struct option opts[] = {{"pid", required_argument, NULL, 'p'},
					     {"duration", required_argument, NULL, 'd'},
					     {"freq", required_argument, NULL, 'F'},
					     {"output", required_argument, NULL, 'o'},
					     {"uprobe", required_argument, NULL, 'u'},
					     {"min-block", required_argument, NULL, 'm'},
					     {"no-presets", no_argument, NULL, 'P'},
					     {"io-calls", no_argument, NULL, 'I'},
					     {"no-cupti", no_argument, NULL, 'C'},
					     {"unwind", required_argument, NULL, 'U'},
					     {"stack-bytes", required_argument, NULL, 'S'},
					     {"stack-map", required_argument, NULL, 'K'},
					     {"quiet", no_argument, NULL, 'q'},
					     {"progress", required_argument, NULL, 'g'},
					     {"latency", required_argument, NULL, 'l'},
					     {"help", no_argument, NULL, 'h'},
					     {0}};
	const char **progress = snr_xcalloc((size_t)argc + 1, sizeof(*progress));
	const char **latency = snr_xcalloc((size_t)argc + 1, sizeof(*latency));
	struct snrh_record_opts o = {
		.hz = 99, .io_syscalls = false, .presets = true, .cupti = true, .stack_bytes = 16384,
		.stack_map = SNRH_STACK_MAP_DEFAULT};
	int c, rc = 2;
	uint64_t v;
	char *end;
	optind = 1;
	while ((c = getopt_long(argc, argv, "+p:d:F:o:qh", opts, NULL)) != -1) {
		switch (c) {
		case 'p':
			if (!snr_parse_u64(optarg, &v, false) || !v || v > 0x7fffffff) {
				snr_err("host record: -p wants a process id, not '%s'", optarg);
				goto out;
			}
			o.pid = (int)v;
			break;
		case 'd':
			o.duration_s = strtod(optarg, &end);
			if (*end || o.duration_s <= 0) {
				snr_err("host record: -d wants seconds > 0, not '%s'", optarg);
				goto out;
			}
			break;
		case 'F':
			if (!snr_parse_u64(optarg, &v, false) || v > 100000) {
				snr_err("host record: -F wants a frequency in Hz (0 = no sampling), not '%s'", optarg);
				goto out;
			}
			o.hz = (unsigned)v;
			break;
		case 'm':
			if (!snr_parse_u64(optarg, &v, false)) {
				snr_err("host record: --min-block wants microseconds, not '%s'", optarg);
				goto out;
			}
			o.min_offcpu_us = (unsigned)v;
			break;
		case 'o': o.output = optarg; break;
		case 'u':
			o.uprobes = snr_xrealloc(o.uprobes, (o.nuprobes + 1) * sizeof(*o.uprobes));
			if (parse_uprobe(optarg, &o.uprobes[o.nuprobes])) {
				snr_err("host record: --uprobe wants LIB:SYMBOL:BUCKET (e.g. libcudart:cudaMalloc:H:CTRL), "
					"not '%s'",
					optarg);
				goto out;
			}
			o.nuprobes++;
			break;
		case 'U':
			if (strcmp(optarg, "dwarf") && strcmp(optarg, "fp")) {
				snr_err("host record: --unwind wants dwarf or fp, not '%s'", optarg);
				goto out;
			}
			o.unwind_fp = !strcmp(optarg, "fp");
			break;
		case 'S':
			if (!snr_parse_u64(optarg, &v, false) || v < 256 || v > 65536) {
				snr_err("host record: --stack-bytes wants bytes from 256 to 65536, not '%s'", optarg);
				goto out;
			}
			o.stack_bytes = (unsigned)v;
			break;
		case 'K':
			if (!snr_parse_u64(optarg, &v, false) || v < 1 || v > SNRH_STACK_MAP_MAX) {
				snr_err("host record: --stack-map wants a number of stacks from 1 to %d, not '%s'",
					SNRH_STACK_MAP_MAX, optarg);
				goto out;
			}
			o.stack_map = (unsigned)v;
			break;
		case 'P': o.presets = false; break;
		case 'I': o.io_syscalls = true; break;
		case 'C': o.cupti = false; break;
		case 'q': o.quiet = true; break;
		case 'g': progress[o.nprogress++] = optarg; break;
		case 'l': latency[o.nlatency++] = optarg; break;
		case 'h': fputs(host_record_usage, stdout); rc = 0; goto out;
		default: fputs(host_record_usage, stderr); goto out;
		}
	}
	if (optind < argc)
		o.cmd = argv + optind;
	if (!o.pid == !o.cmd) {
		snr_err("host record: give one of -p PID or -- CMD ARGS...");
		goto out;
	}
	if (!o.output) {
		snr_err("host record: -o H.snrh is required");
		goto out;
	}
	char err[1024];
	o.progress = progress;
	o.latency = latency;
	if (snrh_progress_check(progress, o.nprogress, latency, o.nlatency, err, sizeof(err))) {
		snr_err("host record: %s", err);
		goto out;
	}
	if (o.cmd)
		snr_output_input_program(o.cmd[0]);
	if (snr_output_check(o.output, false, err, sizeof(err))) {
		snr_err("host record: -o: %s", err);
		rc = 1;
		goto out;
	}
	rc = snrh_record(&o);
out:
	for (unsigned i = 0; i < o.nuprobes; i++) {
		free(o.uprobes[i].lib);
		free(o.uprobes[i].symbol);
		free(o.uprobes[i].bucket);
	}
	free(o.uprobes);
	free(progress);
	free(latency);
	return rc;
}
#endif

int snr_cmd_host(int argc, char **argv)
{
	if (argc < 2 || !strcmp(argv[1], "-h") || !strcmp(argv[1], "--help")) {
		if (argc < 2)
			snr_err("host: give a subcommand: record, report or causal");
		fputs(host_usage, argc < 2 ? stderr : stdout);
		return argc < 2 ? 2 : 0;
	}
	if (!strcmp(argv[1], "report"))
		return host_report_main(argc - 1, argv + 1);
	if (!strcmp(argv[1], "causal"))
		return snr_cmd_host_causal(argc - 1, argv + 1);
	if (!strcmp(argv[1], "record")) {
		if (snr_wants_help(argc - 1, argv + 1)) {
			fputs(host_record_usage, stdout);
			return 0;
		}
#ifdef SNR_HAVE_HOST_BPF
		return host_record_main(argc - 1, argv + 1);
#else
		snr_err("host record: this snr was built without eBPF (needs clang, bpftool and libbpf-dev at "
			"build time: scripts/install-deps, then meson setup --wipe)");
		return 1;
#endif
	}
	snr_err("host: unknown subcommand '%s' (record, report, causal)", argv[1]);
	return 2;
}
