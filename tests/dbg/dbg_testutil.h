/*
 * dbg_testutil.h: helpers the debugger tests and the step-rate benchmark
 * share: symbol addresses from nm, a free TCP port, starting a peer (qemu,
 * gdbserver, the program itself) with its stdout in a file, and connecting
 * to a stub that may not be listening yet.
 */
#ifndef SNR_DBG_TESTUTIL_H
#define SNR_DBG_TESTUTIL_H

#include <netinet/in.h>
#include <stdbool.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <fcntl.h>
#include <time.h>
#include <unistd.h>

#include "recorder/snr_debugger.h"

/* Address and size of the global (upper-case type) symbol sym, by running
 * `nm -S file`. Returns 0, or -1 if nm failed or the symbol is missing. */
static inline int dbgt_nm(const char *nm, const char *file, const char *sym, uint64_t *addr, uint64_t *size)
{
	char cmd[1024], line[512];
	snprintf(cmd, sizeof(cmd), "%s -S '%s' 2>/dev/null", nm, file);
	FILE *p = popen(cmd, "r");
	if (!p)
		return -1;
	int found = -1;
	while (fgets(line, sizeof(line), p)) {
		unsigned long long a, s;
		char type, name[256];
		if (sscanf(line, "%llx %llx %c %255s", &a, &s, &type, name) == 4 && type >= 'A' && type <= 'Z' &&
		    !strcmp(name, sym)) {
			*addr = a;
			*size = s;
			found = 0;
		}
	}
	pclose(p);
	return found;
}

/* A TCP port nothing listens on right now (the kernel's pick). */
static inline int dbgt_free_port(void)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t len = sizeof(sa);
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	close(fd);
	return ntohs(sa.sin_port);
}

/* Starts argv with stdout (and stderr) into outfile (or /dev/null). */
static inline pid_t dbgt_spawn(char *const argv[], const char *outfile)
{
	pid_t pid = fork();
	if (pid == 0) {
		int fd = open(outfile ? outfile : "/dev/null", O_WRONLY | O_CREAT | O_TRUNC, 0644);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		execvp(argv[0], argv);
		_exit(127);
	}
	return pid;
}

/* Waits up to ms for pid; returns its wait status, or -1 on timeout (the
 * process is then killed and reaped). */
static inline int dbgt_wait(pid_t pid, int ms)
{
	int status;
	for (int i = 0; i < ms; i++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return status;
		usleep(1000);
	}
	kill(pid, SIGKILL);
	waitpid(pid, &status, 0);
	return -1;
}

/* Opens target, retrying for up to ms while the stub starts listening. */
static inline struct snr_dbg *dbgt_connect(const struct snr_dbg_ops *ops, const char *target, int ms, char *err,
					   size_t errlen)
{
	struct snr_dbg *d = NULL;
	for (int i = 0; i < ms / 20 && !d; i++) {
		d = ops->open(target, NULL, err, errlen);
		if (!d && !strstr(err, "refused"))
			break;
		if (!d)
			usleep(20000);
	}
	return d;
}

/* Reads a whole small file into buf (NUL-terminated). */
static inline void dbgt_slurp(const char *path, char *buf, size_t len)
{
	buf[0] = 0;
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	size_t n = fread(buf, 1, len - 1, f);
	buf[n] = 0;
	fclose(f);
}

static inline uint64_t dbgt_le(const uint8_t *p, size_t n)
{
	uint64_t v = 0;
	for (size_t i = 0; i < n && i < 8; i++)
		v |= (uint64_t)p[i] << (8 * i);
	return v;
}

/* Register value by name, or ~0 if the backend has no such register. */
static inline uint64_t dbgt_reg(const struct snr_dbg_reg *regs, size_t n, const uint8_t *buf, const char *name)
{
	for (size_t i = 0; i < n; i++)
		if (!strcmp(regs[i].name, name))
			return dbgt_le(buf + regs[i].offset, regs[i].size);
	return ~0ull;
}

/* The value checksum() returns in x86_prog.c and rv_prog.c. */
static inline uint64_t dbgt_expected_checksum(void)
{
	uint64_t h = 1469598103934665603ull;
	for (int r = 0; r < 64; r++)
		for (int i = 0; i < 64; i++) {
			h ^= (uint64_t)i * (uint64_t)i + 7 + (uint64_t)r;
			h *= 1099511628211ull;
		}
	return h;
}

#endif
