/*
 * cmd_cc.c: `snr cc`, building TA1 programs with Debian's stock
 * riscv64-unknown-elf-gcc and picolibc: RV64IM (Zicsr implied by ISA spec
 * 2.2), medany code model, TA1's crt0, link script and runtime glue, -O2
 * unless the user names an optimisation level. Extra arguments go to gcc.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "lib/snr_util.h"
#include "snr_cli.h"

#define PICOLIBC_SPECS "/usr/lib/picolibc/riscv64-unknown-elf/picolibc.specs"

static const char cc_usage[] =
	"usage: snr cc PROG.c [FILES...] -o PROG.elf [GCC-OPTIONS...]\n"
	"\n"
	"Builds a TA1 program: C or assembly sources, linked with TA1's crt0,\n"
	"link script (isa/ta1/ta1.ld) and runtime (stdout, exit, sbrk), against\n"
	"picolibc. isa/ta1/ta1.h (the Xta intrinsics) is on the include path.\n"
	"Defaults: -march=rv64im -misa-spec=2.2 -mabi=lp64 -mcmodel=medany -O2; the ELF carries a GNU\n"
	"build-id (readers tell the recorded program from a rebuilt one by it).\n"
	"\n"
	"options:\n"
	"  -o FILE      output ELF (required)\n"
	"  --verbose    print the compiler command before running it\n"
	"  -h, --help   this text\n"
	"Any other option is passed to the compiler (e.g. -O0, -g, -DN=4).\n"
	"\n"
	"environment:\n"
	"  SNR_CROSS_CC  the compiler to run (default riscv64-unknown-elf-gcc)\n"
	"  SNR_TA1_DIR   where ta1.h, crt0.S, ta1.ld and ta1rt.c are\n"
	"\n"
	"needs Debian's gcc-riscv64-unknown-elf and picolibc-riscv64-unknown-elf.\n";

static int is_dir_with_toolchain(const char *dir)
{
	char p[PATH_MAX];
	snprintf(p, sizeof(p), "%s/ta1.ld", dir);
	return access(p, R_OK) == 0;
}

static const char *find_ta1_dir(void)
{
	const char *env = getenv("SNR_TA1_DIR");
	if (env && *env)
		return env;
#ifdef SNR_TA1_DATADIR
	if (is_dir_with_toolchain(SNR_TA1_DATADIR))
		return SNR_TA1_DATADIR;
#endif
#ifdef SNR_TA1_SRCDIR
	if (is_dir_with_toolchain(SNR_TA1_SRCDIR))
		return SNR_TA1_SRCDIR;
#endif
	return NULL;
}

static int in_path(const char *prog)
{
	if (strchr(prog, '/'))
		return access(prog, X_OK) == 0;
	const char *path = getenv("PATH");
	if (!path)
		return 0;
	char *copy = snr_xstrdup(path), *save = NULL;
	int found = 0;
	for (char *d = strtok_r(copy, ":", &save); d && !found; d = strtok_r(NULL, ":", &save)) {
		char p[PATH_MAX];
		snprintf(p, sizeof(p), "%s/%s", *d ? d : ".", prog);
		found = access(p, X_OK) == 0;
	}
	free(copy);
	return found;
}

int snr_cmd_cc(int argc, char **argv)
{
	if (snr_wants_help(argc, argv)) {
		fputs(cc_usage, stdout);
		return 0;
	}
	const char *cc = getenv("SNR_CROSS_CC");
	if (!cc || !*cc)
		cc = "riscv64-unknown-elf-gcc";
	int verbose = 0, have_out = 0, have_opt = 0, have_src = 0;
	for (int i = 1; i < argc; i++) {
		if (!strcmp(argv[i], "-o")) {
			if (i + 1 >= argc) {
				snr_err("cc: -o needs a file name");
				return 2;
			}
			have_out = 1;
			i++;
		} else if (!strncmp(argv[i], "-O", 2)) {
			have_opt = 1;
		} else if (!strcmp(argv[i], "--verbose")) {
			verbose = 1;
		} else if (argv[i][0] != '-') {
			have_src = 1;
		}
	}
	if (!have_src || !have_out) {
		snr_err("cc: %s", !have_src ? "no source files" : "no output file (-o PROG.elf)");
		fputs(cc_usage, stderr);
		return 2;
	}
	if (!in_path(cc)) {
		snr_err("cc: %s not found: install Debian's gcc-riscv64-unknown-elf and "
			"picolibc-riscv64-unknown-elf (apt-get install gcc-riscv64-unknown-elf "
			"picolibc-riscv64-unknown-elf)",
			cc);
		return 1;
	}
	if (access(PICOLIBC_SPECS, R_OK) != 0) {
		snr_err("cc: %s not found: install Debian's picolibc-riscv64-unknown-elf", PICOLIBC_SPECS);
		return 1;
	}
	const char *dir = find_ta1_dir();
	if (!dir) {
		snr_err("cc: cannot find TA1's toolchain files (ta1.ld, crt0.S, ta1rt.c); set SNR_TA1_DIR");
		return 1;
	}
	static char ld[PATH_MAX], crt0[PATH_MAX], rt[PATH_MAX], inc[PATH_MAX + 2];
	snprintf(ld, sizeof(ld), "-T%s/ta1.ld", dir);
	snprintf(crt0, sizeof(crt0), "%s/crt0.S", dir);
	snprintf(rt, sizeof(rt), "%s/ta1rt.c", dir);
	snprintf(inc, sizeof(inc), "-I%s", dir);
	const char *pre[] = {cc, "-march=rv64im", "-misa-spec=2.2", "-mabi=lp64", "-mcmodel=medany",
			     "--specs=picolibc.specs", "-nostartfiles", "-Wl,--no-warn-rwx-segments", "-Wl,--build-id",
			     "-ffunction-sections", ld, inc, crt0, rt};
	size_t npre = sizeof(pre) / sizeof(pre[0]);
	char **av = snr_xcalloc(npre + (size_t)argc + 2, sizeof(char *));
	size_t n = 0;
	for (size_t i = 0; i < npre; i++)
		av[n++] = (char *)pre[i];
	if (!have_opt)
		av[n++] = "-O2";
	for (int i = 1; i < argc; i++)
		if (strcmp(argv[i], "--verbose"))
			av[n++] = argv[i];
	av[n] = NULL;
	if (verbose) {
		for (size_t i = 0; i < n; i++)
			fprintf(stderr, "%s%s", i ? " " : "", av[i]);
		fputc('\n', stderr);
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snr_err("cc: fork: %s", strerror(errno));
		free(av);
		return 1;
	}
	if (pid == 0) {
		execvp(av[0], av);
		fprintf(stderr, "snr: cc: cannot run %s: %s\n", av[0], strerror(errno));
		_exit(127);
	}
	int st;
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
		;
	free(av);
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
		return 0;
	snr_err("cc: the compiler failed");
	return 1;
}
