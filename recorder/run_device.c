/*
 * run_device.c: the device behind `snr record --run PROG.elf`. One command
 * does what a user otherwise does by hand: start `snr device PROG --gdb
 * ... --halt` in the background, find its endpoint, record, stop it. The
 * device listens on a Unix socket in a new private folder (mkdtemp, mode
 * 0700) rather than a TCP port: no port is picked, scraped or raced for,
 * and no other local user can reach the program through it. The device
 * renames its socket into place after listen() (device/rsp_server.c), so
 * the socket's appearance is the signal that it is ready.
 *
 * No device outlives the recorder: it runs in its own process group (a
 * terminal's Ctrl-C goes to the recorder alone, which ends its window
 * cleanly and needs the device for that), with PR_SET_PDEATHSIG SIGKILL
 * (the recorder killed by SIGKILL takes the device with it), and every exit
 * path of `snr record` stops it: snr_run_device_stop after the recording,
 * snr_run_device_kill_now from the SIGINT/SIGTERM handler before the
 * window.
 */
#include "recorder/run_device.h"

#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "lib/snr_util.h"

static volatile pid_t dev_pid;
static char dev_dir[96], dev_sock[104], dev_sock_tmp[140]; /* a socket path fits sun_path (108) */

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void remove_dir(void)
{
	if (!dev_dir[0])
		return;
	unlink(dev_sock);
	unlink(dev_sock_tmp);
	rmdir(dev_dir);
	dev_dir[0] = 0;
}

int snr_run_device_pid(void) { return (int)dev_pid; }

void snr_run_device_kill_now(void)
{
	if (dev_pid > 0)
		kill(dev_pid, SIGKILL);
	if (dev_dir[0]) {
		unlink(dev_sock);
		unlink(dev_sock_tmp);
		rmdir(dev_dir);
	}
}

/* Reaps the device if it ended; its status into *status. */
static bool device_ended(int *status)
{
	int ws;
	pid_t r = waitpid(dev_pid, &ws, WNOHANG);
	if (r != dev_pid)
		return false;
	*status = WIFEXITED(ws) ? WEXITSTATUS(ws) : 128 + WTERMSIG(ws);
	dev_pid = 0;
	return true;
}

int snr_run_device_start(const struct snr_run_device_opts *o, char *target, size_t targetlen, char *err,
			 size_t errlen)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	if (n <= 0) {
		snr_fmt(err, errlen, "--run: cannot find the snr executable (/proc/self/exe): %s", strerror(errno));
		return -1;
	}
	self[n] = 0;
	if (access(o->program, R_OK)) {
		snr_fmt(err, errlen, "--run %s: %s", o->program, strerror(errno));
		return -1;
	}
	const char *tmp = getenv("TMPDIR");
	snprintf(dev_dir, sizeof(dev_dir), "%s/snr-run.XXXXXX", tmp && *tmp && strlen(tmp) < 60 ? tmp : "/tmp");
	if (!mkdtemp(dev_dir)) {
		snr_fmt(err, errlen, "--run: a folder for the device's socket (%s): %s", dev_dir, strerror(errno));
		dev_dir[0] = 0;
		return -1;
	}
	snprintf(dev_sock, sizeof(dev_sock), "%s/gdb", dev_dir);
	char endpoint[120];
	snprintf(endpoint, sizeof(endpoint), "unix:%s", dev_sock);

	const char *args[64];
	size_t k = 0;
	args[k++] = self;
	args[k++] = "device";
	args[k++] = o->program;
	args[k++] = "--gdb";
	args[k++] = endpoint;
	args[k++] = "--halt";
	if (o->chips)
		args[k++] = "--chips", args[k++] = o->chips;
	if (o->config)
		args[k++] = "--config", args[k++] = o->config;
	for (size_t i = 0; o->extra_args && o->extra_args[i] && k < 63; i++)
		args[k++] = o->extra_args[i];
	args[k] = NULL;

	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		snr_fmt(err, errlen, "--run: fork: %s", strerror(errno));
		remove_dir();
		return -1;
	}
	if (pid == 0) {
		setpgid(0, 0);
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		if (getppid() != parent) /* the recorder died before prctl */
			_exit(127);
		signal(SIGINT, SIG_DFL);
		signal(SIGTERM, SIG_DFL);
		execv(self, (char *const *)args);
		fprintf(stderr, "snr: record: --run: cannot run %s: %s\n", self, strerror(errno));
		_exit(127);
	}
	setpgid(pid, pid); /* either side may win the race; both set it */
	/* the name the device binds before renaming (device/rsp_server.c) */
	snprintf(dev_sock_tmp, sizeof(dev_sock_tmp), "%s.%ld.tmp", dev_sock, (long)pid);
	dev_pid = pid;
	/* the device is ready when its socket appears; it may instead end
	 * (a program it cannot load: it says why on stderr) */
	double t0 = now_s();
	struct stat st;
	int status;
	while (lstat(dev_sock, &st) || !S_ISSOCK(st.st_mode)) {
		if (device_ended(&status)) {
			snr_fmt(err, errlen, "--run: snr device %s ended with status %d before it listened (its message "
					     "is above)",
				o->program, status);
			remove_dir();
			return -1;
		}
		if (now_s() - t0 > o->timeout_s) {
			snr_fmt(err, errlen, "--run: snr device %s did not listen on %s within %d s (--timeout)",
				o->program, endpoint, o->timeout_s);
			snr_run_device_stop(0);
			return -1;
		}
		usleep(10000);
	}
	snprintf(target, targetlen, "%s", endpoint);
	return 0;
}

int snr_run_device_stop(int grace_s)
{
	int status = -1;
	if (dev_pid <= 0) {
		remove_dir();
		return -1;
	}
	double t0 = now_s();
	while (!device_ended(&status) && now_s() - t0 < grace_s)
		usleep(10000);
	if (dev_pid > 0) {
		kill(dev_pid, SIGTERM);
		t0 = now_s();
		while (!device_ended(&status) && now_s() - t0 < 5)
			usleep(10000);
	}
	if (dev_pid > 0) {
		kill(dev_pid, SIGKILL);
		int ws;
		waitpid(dev_pid, &ws, 0);
		status = 128 + SIGKILL;
		dev_pid = 0;
	}
	remove_dir();
	return status;
}
