/*
 * cmd_device.c: `snr device`, running a TA1 program from reset on N chips,
 * or serving it to a debugger over GDB's remote serial protocol. With
 * --timing every chip runs instruction by instruction under its own TA1
 * timing model (sim/ta1_timing.h), whose clock the cycle CSR then reads.
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/rsp_server.h"
#include "device/ta1_machine.h"
#include "lib/snr_config.h"
#include "lib/snr_elf.h"
#include "lib/snr_util.h"
#include "device/timed_metrics.h"
#include "device/timed_run.h"
#include "sim/ta1_timing.h"
#include "snr_cli.h"

static const char device_usage[] =
	"usage: snr device PROG.elf [--chips N] [--config M.json] [--gdb tcp:HOST:PORT|unix:PATH]\n"
	"                  [--halt] [--stats] [--limit N] [--timing [-o MSET]] [--test-dma CHIP,INSTRET,ADDR,LEN]\n"
	"\n"
	"Runs a TA1 program (built with `snr cc`) from reset on every chip of the\n"
	"pod, passes its writes to stdout and exits with chip 0's exit code.\n"
	"\n"
	"options:\n"
	"  --chips N          chips in the pod (default: the config's, 1)\n"
	"  --config M.json    machine config (docs/machine-config.md)\n"
	"  --gdb ENDPOINT     serve GDB's remote serial protocol on tcp:HOST:PORT or\n"
	"                     unix:PATH (port 0: any free one, printed on stderr);\n"
	"                     one thread per chip; when a debugger drops, the next\n"
	"                     one is accepted. tcp::PORT listens on 127.0.0.1 only;\n"
	"                     another host or 0.0.0.0 must be named, and is warned\n"
	"                     about (the protocol has no authentication). A debugger\n"
	"                     that reads no reply for 10 s is dropped. One debugger\n"
	"                     at a time: a second one gets an error reply to its\n"
	"                     first packet (gdb shows it) and is hung up on, and a\n"
	"                     line on stderr says so\n"
	"  --halt             with --gdb: wait halted at the entry point until the\n"
	"                     debugger continues (default: run, stop when it connects)\n"
	"  --stats            print instruction counts per chip and class on stderr\n"
	"  --limit N          stop with an error after N instructions on any chip\n"
	"  --test-dma CHIP,INSTRET,ADDR,LEN\n"
	"                     for testing recorders: once chip CHIP has retired\n"
	"                     INSTRET instructions, LEN bytes at ADDR in its memory\n"
	"                     become 0xa5 ^ offset, as a DMA from another chip\n"
	"                     landing there would (which cannot happen while a\n"
	"                     debugger holds the other chips stopped)\n"
	"  --timing           run under the TA1 timing model (docs/ta1-timing.md):\n"
	"                     the cycle CSR reads modelled cycles; with --stats,\n"
	"                     cycles, IPC, stalls by cause and DMAs per chip\n"
	"  -o MSET            with --timing: write the run's events as a metrics set,\n"
	"                     one .snrm per chip and a manifest naming the chips\n"
	"                     (docs/metrics-format.md, \"A pod's metrics set\"), for\n"
	"                     snr analyze pod, report and export; an existing MSET\n"
	"                     is never replaced; a run that fails writes none\n"
	"  --dump-config      print the machine config in effect as JSON and exit\n"
	"  -h, --help         this text\n"
	"\n"
	"exit status: the program's (chip 0), 1 if it could not be loaded,\n"
	"2 on bad usage, 3 if a chip faulted, the limit was reached or the debugger\n"
	"killed the program.\n";

static void print_stats(struct ta1_machine *m)
{
	fprintf(stderr, "%-5s %14s", "chip", "instructions");
	for (unsigned k = 0; k < TA1_CLASS_COUNT; k++)
		fprintf(stderr, " %10s", ta1_class_name((enum ta1_class)k));
	fprintf(stderr, " %12s\n", "dma-bytes");
	for (unsigned i = 0; i < ta1_machine_nchips(m); i++) {
		const struct ta1_chip_stats *s = ta1_chip_stats(ta1_machine_chip(m, i));
		fprintf(stderr, "%-5u %14llu", i, (unsigned long long)s->instret);
		for (unsigned k = 0; k < TA1_CLASS_COUNT; k++)
			fprintf(stderr, " %10llu", (unsigned long long)s->by_class[k]);
		fprintf(stderr, " %12llu\n", (unsigned long long)s->dma_bytes);
	}
}


static void print_timing(struct ta1_timing_model **models, unsigned nchips)
{
	fprintf(stderr, "%-5s %12s %12s %6s", "chip", "cycles", "instructions", "IPC");
	for (unsigned k = 0; k < SNR_STALL_COUNT; k++)
		fprintf(stderr, " %12s", snr_stall_cause_name((enum snr_stall_cause)k));
	fprintf(stderr, " %8s %12s", "dmas", "dma-bytes");
	for (unsigned u = 0; u < SNR_UNIT_COUNT; u++)
		fprintf(stderr, " %8s-busy", snr_unit_name((enum snr_unit)u));
	fputc('\n', stderr);
	for (unsigned i = 0; i < nchips; i++) {
		struct ta1_timing_totals tot;
		ta1_timing_totals(models[i], &tot);
		fprintf(stderr, "%-5u %12llu %12llu %6.3f", i, (unsigned long long)tot.cycles,
			(unsigned long long)tot.instructions,
			tot.cycles ? (double)tot.instructions / (double)tot.cycles : 0.0);
		for (unsigned k = 0; k < SNR_STALL_COUNT; k++)
			fprintf(stderr, " %12llu", (unsigned long long)tot.stall_cycles[k]);
		fprintf(stderr, " %8llu %12llu", (unsigned long long)tot.dma_count, (unsigned long long)tot.dma_bytes);
		for (unsigned u = 0; u < SNR_UNIT_COUNT; u++)
			fprintf(stderr, " %13llu", (unsigned long long)tot.busy_cycles[u]);
		fputc('\n', stderr);
	}
}

/* Every port and link that moved bytes: its bytes, the time it was busy and
 * contended (two or more transfers), and its average rate while busy, which
 * never exceeds its bandwidth. */
static void print_fabric(const struct ta1_fabric *f)
{
	fprintf(stderr, "%-20s %12s %14s %12s %12s %10s\n", "port or link", "B/cycle", "bytes", "busy",
		"contended", "B/busy");
	for (size_t i = 0; i < ta1_fabric_nresources(f); i++) {
		struct ta1_fabric_resource r;
		ta1_fabric_resource(f, i, &r);
		if (r.bytes <= 0)
			continue;
		fprintf(stderr, "%-20s %12.0f %14.0f %12.0f %12.0f %10.2f\n", r.name, r.bytes_per_cycle, r.bytes,
			fmax(0, ceil(r.busy_cycles - 1e-6)), fmax(0, ceil(r.contended_cycles - 1e-6)),
			r.busy_cycles > 0 ? r.bytes / r.busy_cycles : 0.0);
	}
}

/* --test-dma CHIP,INSTRET,ADDR,LEN: four numbers; -1 if not. */
static int parse_test_dma(const char *spec, uint64_t v[4])
{
	char buf[128];
	snprintf(buf, sizeof(buf), "%s", spec);
	char *save = NULL, *tok = strtok_r(buf, ",", &save);
	for (int k = 0; k < 4; k++, tok = strtok_r(NULL, ",", &save))
		if (!tok || !snr_parse_u64(tok, &v[k], false))
			return -1;
	return tok ? -1 : 0;
}

int snr_cmd_device(int argc, char **argv)
{
	static const struct option opts[] = {
		{"chips", required_argument, NULL, 'n'}, {"config", required_argument, NULL, 'c'},
		{"gdb", required_argument, NULL, 'g'},   {"halt", no_argument, NULL, 'H'},
		{"stats", no_argument, NULL, 's'},       {"limit", required_argument, NULL, 'l'},
		{"dump-config", no_argument, NULL, 'd'}, {"help", no_argument, NULL, 'h'},
		{"timing", no_argument, NULL, 't'},      {"test-dma", required_argument, NULL, 'D'},
		{"output", required_argument, NULL, 'o'},
		{NULL, 0, NULL, 0},
	};
	const char *config_path = NULL, *gdb = NULL;
	uint64_t chips = 0, limit = 0;
	int halt = 0, stats = 0, dump = 0, timing = 0, opt;
	const char *test_dma = NULL, *out = NULL;
	optind = 1;
	while ((opt = getopt_long(argc, argv, "ho:", opts, NULL)) != -1) {
		switch (opt) {
		case 'n':
			if (!snr_parse_u64(optarg, &chips, false) || chips < 1 || chips > TA1_MAX_CHIPS) {
				snr_err("device: --chips must be 1..%d, not '%s'", TA1_MAX_CHIPS, optarg);
				return 2;
			}
			break;
		case 'c': config_path = optarg; break;
		case 'g': gdb = optarg; break;
		case 'H': halt = 1; break;
		case 's': stats = 1; break;
		case 'd': dump = 1; break;
		case 't': timing = 1; break;
		case 'D': test_dma = optarg; break;
		case 'o': out = optarg; break;
		case 'l':
			if (!snr_parse_u64(optarg, &limit, true) || limit == 0) {
				snr_err("device: --limit needs a positive instruction count, not '%s'", optarg);
				return 2;
			}
			break;
		case 'h': fputs(device_usage, stdout); return 0;
		default: fputs(device_usage, stderr); return 2;
		}
	}
	struct snr_config cfg;
	char err[512];
	snr_config_default(&cfg);
	if (config_path && snr_config_load(&cfg, config_path, err, sizeof(err))) {
		snr_err("device: %s", err);
		return 1;
	}
	if (chips)
		cfg.chips = chips;
	if (dump) {
		char *js = snr_config_to_json(&cfg);
		puts(js);
		free(js);
		return 0;
	}
	if (optind != argc - 1) {
		snr_err("device: %s", optind >= argc ? "no program given" : "more than one program given");
		fputs(device_usage, stderr);
		return 2;
	}
	if (halt && !gdb) {
		snr_err("device: --halt needs --gdb (there is no one to continue the program)");
		return 2;
	}
	if (timing && gdb) {
		snr_err("device: --timing and --gdb cannot be combined (the model runs the whole program)");
		return 2;
	}
	if (out && !timing) {
		snr_err("device: -o %s needs --timing (the metrics are the timing model's events)", out);
		return 2;
	}
	struct snr_elf *elf = snr_elf_open(argv[optind], err, sizeof(err));
	if (!elf) {
		snr_err("device: %s", err);
		return 1;
	}
	struct ta1_machine *m = ta1_machine_new(&cfg, err, sizeof(err));
	if (!m || ta1_machine_load(m, elf, err, sizeof(err))) {
		snr_err("device: %s", err);
		ta1_machine_free(m);
		snr_elf_free(elf);
		return 1;
	}
	ta1_machine_set_stats(m, stats);
	if (test_dma) {
		uint64_t v[4];
		if (parse_test_dma(test_dma, v) || v[0] >= ta1_machine_nchips(m) || v[3] == 0 || v[3] > 1u << 20) {
			snr_err("device: --test-dma wants CHIP,INSTRET,ADDR,LEN (a chip of the pod, 1 byte to 1 MiB), "
				"not '%s'", test_dma);
			ta1_machine_free(m);
			snr_elf_free(elf);
			return 2;
		}
		ta1_machine_inject_write(m, (unsigned)v[0], v[1], v[2], v[3]);
	}
	int status;
	bool failed = false;
	unsigned nchips = ta1_machine_nchips(m);
	struct ta1_timing_model **models = NULL;
	struct ta1_fabric *fabric = NULL;
	struct ta1_timed_metrics *mset = NULL;
	if (out && !(mset = ta1_timed_metrics_new(out, &cfg, elf, err, sizeof(err)))) {
		snr_err("device: %s", err);
		ta1_machine_free(m);
		snr_elf_free(elf);
		return 1;
	}
	if (timing && !(models = ta1_timed_models_new(&cfg, mset ? ta1_timed_metrics_trackers(mset) : NULL, &fabric,
						       err, sizeof(err)))) {
		snr_err("device: %s", err);
		if (mset)
			ta1_timed_metrics_abandon(mset, "error");
		ta1_machine_free(m);
		snr_elf_free(elf);
		return 1;
	}
	if (gdb) {
		char from[4200];
		if (config_path)
			snprintf(from, sizeof(from), "--config %s", config_path);
		status = rsp_serve_machine(m, elf, gdb, halt, config_path ? from : NULL);
	} else {
		unsigned which = 0;
		enum ta1_stop s = timing ? ta1_timed_run(m, models, limit, &which, NULL, NULL) : ta1_machine_run(m, limit, &which);
		struct ta1_chip *c = ta1_machine_chip(m, which);
		switch (s) {
		case TA1_STOP_EXIT:
			status = ta1_chip_exit_code(ta1_machine_chip(m, 0));
			break;
		case TA1_STOP_FAULT:
			snr_err("device: %s", ta1_chip_fault(c));
			status = 3;
			failed = true;
			break;
		case TA1_STOP_EBREAK:
			snr_err("device: chip %u: ebreak at pc 0x%llx with no debugger attached", which,
				(unsigned long long)ta1_chip_get_reg(c, TA1_REG_PC));
			status = 3;
			failed = true;
			break;
		case TA1_STOP_BUDGET:
		case TA1_STOP_BREAKPOINT:
		default:
			snr_err("device: chip %u reached --limit %llu instructions at pc 0x%llx", which,
				(unsigned long long)limit, (unsigned long long)ta1_chip_get_reg(c, TA1_REG_PC));
			status = 3;
			failed = true;
			break;
		}
	}
	if (stats)
		print_stats(m);
	if (timing) {
		for (unsigned i = 0; i < nchips; i++)
			ta1_timing_drain(models[i]);
		ta1_fabric_flush_samples(fabric);
		if (mset && failed) {
			snr_err("device: no metrics set written (%s): the run did not finish", out);
			ta1_timed_metrics_abandon(mset, "error");
		} else if (mset && ta1_timed_metrics_finish(mset, models, "exit", err, sizeof(err))) {
			snr_err("device: %s", err);
			status = 1;
		}
		if (stats) {
			print_timing(models, nchips);
			print_fabric(fabric);
		}
		ta1_timed_models_free(models, nchips, fabric);
	}
	ta1_machine_free(m);
	snr_elf_free(elf);
	return status;
}
