/*
 * test_outfile.c: lib/snr_output.h's rules and lib/snr_outfile.h's
 * temporaries. An output is refused on an input (same file by any name,
 * --force or not) and on an existing file without --force; a process killed
 * by SIGTERM or SIGINT while writing leaves no temporary; one killed by
 * SIGKILL leaves one, which the next write of the same output removes (and
 * only that: a live writer's temporary and other files stay).
 */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "lib/snr_outfile.h"
#include "lib/snr_output.h"

static char dir[] = "/tmp/snr-test-outfile-XXXXXX";

static void put(const char *name, const char *text)
{
	char p[4200];
	snprintf(p, sizeof(p), "%s/%s", dir, name);
	FILE *f = fopen(p, "w");
	if (f) {
		fputs(text, f);
		fclose(f);
	}
}

static char *path_of(const char *name)
{
	static char p[4][4200];
	static int k;
	k = (k + 1) % 4;
	snprintf(p[k], sizeof(p[k]), "%s/%s", dir, name);
	return p[k];
}

/* the dir's entries that begin with prefix */
static int count_prefix(const char *prefix)
{
	DIR *d = opendir(dir);
	int n = 0;
	struct dirent *e;
	while (d && (e = readdir(d)))
		n += !strncmp(e->d_name, prefix, strlen(prefix));
	if (d)
		closedir(d);
	return n;
}

static void test_inputs(void)
{
	char err[1024];
	put("t.snrt", "input");
	mkdir(path_of("sub"), 0755);
	snr_output_reset();
	snr_output_keep_existing(false);
	snr_output_guard_inputs(false); /* the library's default: no rule on inputs */
	snr_output_input(path_of("t.snrt"));
	CHECK(snr_output_check(path_of("t.snrt"), false, err, sizeof(err)) == 0, "unguarded: %s", err);
	snr_output_guard_inputs(true);
	CHECK(link(path_of("t.snrt"), path_of("hard.snrt")) == 0, "link");
	CHECK(symlink("t.snrt", path_of("sym.snrt")) == 0, "symlink");
	const char *same[] = {"t.snrt", "./t.snrt", "sub/../t.snrt", "hard.snrt", "sym.snrt"};
	for (size_t i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		err[0] = 0;
		CHECK(snr_output_check(path_of(same[i]), false, err, sizeof(err)) == -1, "%s: allowed", same[i]);
		CHECK(strstr(err, "refused even with --force") && strstr(err, same[i]), "%s: %s", same[i], err);
		CHECK(snr_output_check(path_of(same[i]), true, err, sizeof(err)) == -1, "%s: allowed as a part",
		      same[i]);
		struct snr_outfile o;
		CHECK(snr_outfile_open(&o, path_of(same[i]), err, sizeof(err)) == -1, "%s: opened", same[i]);
	}
	/* an input that does not exist (yet) is matched by where it resolves */
	snr_output_input(path_of("later.elf"));
	CHECK(snr_output_check(path_of("sub/../later.elf"), false, err, sizeof(err)) == -1, "later.elf: allowed");
	CHECK(snr_output_check(path_of("other.snrm"), false, err, sizeof(err)) == 0, "other.snrm: %s", err);

	/* an input read and removed (a recording's journal) frees its inode for
	 * a new file: that file is not the input. (The inode kept here by a
	 * second link stands for the reuse, which cannot be forced.) */
	put("journal.partial", "journal");
	CHECK(link(path_of("journal.partial"), path_of("new.json")) == 0, "link");
	snr_output_input(path_of("journal.partial"));
	unlink(path_of("journal.partial"));
	CHECK(snr_output_check(path_of("new.json"), false, err, sizeof(err)) == 0,
	      "new.json (the removed input's inode): %s", err);

	/* an input read after the output was opened: the rename is refused */
	put("late.snrt", "late input");
	struct snr_outfile o;
	CHECK(snr_outfile_open(&o, path_of("late.snrt"), err, sizeof(err)) == 0, "late.snrt: %s", err);
	if (o.fd >= 0) {
		CHECK(write(o.fd, "output", 6) == 6, "write");
		snr_output_input(path_of("late.snrt"));
		CHECK(snr_outfile_commit(&o, err, sizeof(err)) == -1, "late.snrt replaced");
		CHECK(strstr(err, "is the input"), "%s", err);
	}
	FILE *f = fopen(path_of("late.snrt"), "r");
	char buf[32] = "";
	CHECK(f && fgets(buf, sizeof(buf), f) && !strcmp(buf, "late input"), "late.snrt holds '%s'", buf);
	if (f)
		fclose(f);
	CHECK(count_prefix(".late.snrt.") == 0, "the refused output's temporary stayed");
}

static void test_existing(void)
{
	char err[1024];
	snr_output_reset();
	put("m.snrm", "old");
	snr_output_keep_existing(true);
	CHECK(snr_output_check(path_of("m.snrm"), false, err, sizeof(err)) == -1, "m.snrm replaced without --force");
	CHECK(strstr(err, "m.snrm exists") && strstr(err, "--force"), "%s", err);
	CHECK(snr_output_check(path_of("m.snrm"), true, err, sizeof(err)) == 0, "a part refused: %s", err);
	CHECK(snr_output_check(path_of("new.snrm"), false, err, sizeof(err)) == 0, "new.snrm: %s", err);
	CHECK(snr_output_check("/dev/null", false, err, sizeof(err)) == 0, "/dev/null: %s", err);
	CHECK(snr_output_check("-", false, err, sizeof(err)) == 0, "-: %s", err);
	CHECK(snr_outfile_write_text(path_of("m.snrm"), "new", 3, err, sizeof(err)) == -1, "written over m.snrm");
	snr_output_keep_existing(false);
	CHECK(snr_outfile_write_text(path_of("m.snrm"), "new", 3, err, sizeof(err)) == 0, "--force: %s", err);
}

/* A child opens PATH's temporary, says so through the pipe, and waits for
 * sig. Returns how it ended (waitpid's status), -1 if it never opened. */
static int killed_writer(const char *path, int sig, pid_t *child_pid)
{
	int p[2];
	if (pipe(p))
		return -1;
	pid_t pid = fork();
	if (pid == 0) {
		close(p[0]);
		char err[1024];
		struct snr_outfile o;
		if (snr_outfile_open(&o, path, err, sizeof(err)))
			_exit(2);
		if (write(o.fd, "partial", 7) != 7 || write(p[1], "o", 1) != 1)
			_exit(2);
		for (;;)
			pause();
	}
	close(p[1]);
	char c;
	int status = -1;
	if (read(p[0], &c, 1) == 1) {
		kill(pid, sig);
		waitpid(pid, &status, 0);
	} else {
		waitpid(pid, NULL, 0);
	}
	close(p[0]);
	*child_pid = pid;
	return status;
}

static void test_signals(void)
{
	snr_output_reset();
	snr_output_keep_existing(false);
	pid_t pid;
	int sigs[] = {SIGTERM, SIGINT};
	for (size_t i = 0; i < 2; i++) {
		int st = killed_writer(path_of("o.html"), sigs[i], &pid);
		CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == sigs[i], "signal %d: status %d", sigs[i], st);
		CHECK(count_prefix(".o.html.") == 0, "signal %d left a temporary", sigs[i]);
		CHECK(access(path_of("o.html"), F_OK) != 0, "signal %d: o.html written", sigs[i]);
	}
	/* SIGKILL: the temporary stays, named with the dead pid ... */
	int st = killed_writer(path_of("o.snrm"), SIGKILL, &pid);
	CHECK(st != -1 && WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "SIGKILL: status %d", st);
	char prefix[64];
	snprintf(prefix, sizeof(prefix), ".o.snrm.%ld.", (long)pid);
	CHECK(count_prefix(prefix) == 1, "SIGKILL left no %s* (the test expects one)", prefix);
	/* ... with another, of a live process (this one's parent), an old-style one, and another output's */
	char live[64];
	snprintf(live, sizeof(live), ".o.snrm.%ld.abcdef", (long)getppid());
	put(live, "live");
	put(".o.snrm.Z8JuAO", "old style");
	put(".p.snrm.99999999.abcdef", "another output's");
	char err[1024];
	CHECK(snr_outfile_write_text(path_of("o.snrm"), "whole", 5, err, sizeof(err)) == 0, "%s", err);
	CHECK(count_prefix(prefix) == 0, "the next write left the dead writer's temporary");
	CHECK(count_prefix(live) == 1, "the next write removed a live writer's temporary");
	CHECK(count_prefix(".o.snrm.Z8JuAO") == 1, "an old-style temporary (no pid) was removed");
	CHECK(count_prefix(".p.snrm.") == 1, "another output's temporary was removed");
	unlink(path_of(live));
	unlink(path_of(".o.snrm.Z8JuAO"));
	unlink(path_of(".p.snrm.99999999.abcdef"));
}

int main(void)
{
	/* the default actions, where snr_outfile's handler goes (a test runner
	 * may start this with SIGINT ignored) */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	if (!mkdtemp(dir)) {
		perror("mkdtemp");
		return 1;
	}
	test_inputs();
	test_existing();
	test_signals();
	char cmd[4300];
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd))
		fprintf(stderr, "could not remove %s\n", dir);
	snr_output_reset();
	return check_report("test_outfile");
}
