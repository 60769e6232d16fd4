/*
 * rsp_server.c: `snr device --gdb`, serving a TA1 machine to GDB over TCP
 * or a Unix socket, one debugger at a time (a second one is refused with an
 * error reply it shows, and a line on stderr: refuse_second).
 *
 * The protocol lives in rsp_session.c; this file moves bytes and decides
 * when the machine runs:
 *
 *   - No debugger, not halted (the start without --halt, or after a detach
 *     or a dropped connection without --halt): the program runs, in rounds
 *     of one quantum per chip, and the listening socket is polled between
 *     rounds. A debugger that connects finds every chip stopped.
 *   - No debugger, halted (--halt): the server blocks in accept().
 *   - A debugger whose target is running (after c, s or vCont): one round
 *     at a time, with a poll of the connection between rounds, so 0x03
 *     stops the machine within one round (65536 instructions per chip).
 *   - A debugger whose target is stopped: the server blocks in poll().
 *
 * A dropped connection (EOF or an error on the socket) is not the end: the
 * breakpoints the debugger set are removed, the machine goes back to the
 * state it started in (running, or halted with --halt) and the server
 * accepts the next debugger. The server ends, with the status cmd_device.c
 * documents, when the program ends with no debugger attached (every chip
 * exited: chip 0's code; a fault or an ebreak: 3), when a debugger kills it
 * (k: 3, or the program's code if it had ended), or when the connection
 * goes away after the program has ended.
 */
#include "rsp_server.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <arpa/inet.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "device/rsp_packet.h"
#include "device/rsp_session.h"
#include "lib/snr_util.h"
#include "lib/snr_wait.h"

#define QUANTUM 65536
#define LISTEN_BACKLOG 8
/* A debugger that stops reading its replies is dropped after this long. */
#define SEND_TIMEOUT_S 10
#define STATUS_UNFINISHED 3

/* Opens the listening socket for endpoint; prints where it listens (with the
 * port the system picked for tcp:HOST:0). Returns the fd or -1. */
static int listen_on(const char *endpoint, char **unix_path)
{
	int fd = -1;
	char *host = NULL;
	struct addrinfo *res = NULL;
	*unix_path = NULL;
	if (!strncmp(endpoint, "unix:", 5)) {
		const char *path = endpoint + 5;
		struct sockaddr_un sa = {.sun_family = AF_UNIX};
		struct stat st;
		if (!*path || strlen(path) >= sizeof(sa.sun_path)) {
			snr_err("device: --gdb %s: the socket path must be 1..%zu bytes", endpoint,
				sizeof(sa.sun_path) - 1);
			goto fail;
		}
		if (!lstat(path, &st)) {
			if (!S_ISSOCK(st.st_mode)) {
				snr_err("device: --gdb %s: %s exists and is not a socket", endpoint, path);
				goto fail;
			}
			unlink(path); /* a stale socket from an earlier run */
		}
		/* Bound and listening under a temporary name, then renamed into
		 * place: a client that waits for the file to appear never finds
		 * it before listen() (connection refused). A path too long for
		 * the suffix is bound in place. */
		char tmp[sizeof(sa.sun_path)];
		int n = snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
		bool renamed = n > 0 && (size_t)n < sizeof(tmp);
		const char *bound = renamed ? tmp : path;
		if (renamed)
			unlink(tmp);
		memcpy(sa.sun_path, bound, strlen(bound) + 1);
		fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) || listen(fd, LISTEN_BACKLOG) ||
		    (renamed && rename(tmp, path))) {
			snr_err("device: --gdb %s: %s", endpoint, strerror(errno));
			if (renamed)
				unlink(tmp);
			goto fail;
		}
		*unix_path = snr_xstrdup(path);
		fprintf(stderr, "snr: device: waiting for gdb on unix:%s\n", path);
		return fd;
	}
	if (strncmp(endpoint, "tcp:", 4)) {
		snr_err("device: --gdb %s: expected tcp:HOST:PORT or unix:PATH", endpoint);
		goto fail;
	}
	host = snr_xstrdup(endpoint + 4);
	char *colon = strrchr(host, ':');
	uint64_t port;
	if (!colon || !snr_parse_u64(colon + 1, &port, false) || port > 65535) {
		snr_err("device: --gdb %s: expected tcp:HOST:PORT with a port 0..65535", endpoint);
		goto fail;
	}
	*colon = 0;
	char *name = host;
	if (name[0] == '[' && colon > name && colon[-1] == ']') { /* [::1] */
		colon[-1] = 0;
		name++;
	}
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				 .ai_flags = AI_PASSIVE | AI_NUMERICSERV};
	char portstr[8];
	snprintf(portstr, sizeof(portstr), "%u", (unsigned)port);
	/* tcp::PORT: loopback only; another machine is reached only when its
	 * interface (or 0.0.0.0) is named */
	int gai = getaddrinfo(*name ? name : "127.0.0.1", portstr, &hints, &res);
	if (gai) {
		snr_err("device: --gdb %s: %s", endpoint, gai_strerror(gai));
		goto fail;
	}
	fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
	int one = 1;
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, res->ai_addr, res->ai_addrlen) || listen(fd, LISTEN_BACKLOG)) {
		snr_err("device: --gdb %s: %s", endpoint, strerror(errno));
		goto fail;
	}
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char hbuf[NI_MAXHOST] = "?", sbuf[NI_MAXSERV] = "?";
	if (!getsockname(fd, (struct sockaddr *)&ss, &sl))
		getnameinfo((struct sockaddr *)&ss, sl, hbuf, sizeof(hbuf), sbuf, sizeof(sbuf),
			    NI_NUMERICHOST | NI_NUMERICSERV);
	fprintf(stderr, "snr: device: waiting for gdb on tcp:%s:%s\n", hbuf, sbuf);
	bool loopback = (ss.ss_family == AF_INET &&
			 (ntohl(((struct sockaddr_in *)&ss)->sin_addr.s_addr) >> 24) == 127) ||
			(ss.ss_family == AF_INET6 && IN6_IS_ADDR_LOOPBACK(&((struct sockaddr_in6 *)&ss)->sin6_addr));
	if (!loopback)
		snr_warn("device: --gdb %s listens beyond this machine: GDB's protocol has no authentication, and "
			 "whoever connects can read and change the program (give tcp:127.0.0.1:PORT or unix:PATH to "
			 "keep it local)",
			 endpoint);
	freeaddrinfo(res);
	free(host);
	return fd;
fail:
	if (fd >= 0)
		close(fd);
	if (res)
		freeaddrinfo(res);
	free(host);
	return -1;
}

static void refuse_second(int lfd, const char *current);

static long ms_since(const struct timespec *t0)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (t.tv_sec - t0->tv_sec) * 1000 + (t.tv_nsec - t0->tv_nsec) / 1000000;
}

/* Sends the session's queued output. Returns -1 if the connection is gone.
 * A debugger that reads nothing for SEND_TIMEOUT_S is dropped; while the
 * server waits for it, a second debugger that connects is refused at once
 * (refuse_second), not left unanswered until the first one's time is up. */
static int flush(struct rsp_session *s, int fd, int lfd, const char *current)
{
	size_t len;
	const char *p = rsp_session_output(s, &len);
	size_t done = 0;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	while (done < len) {
		ssize_t w = send(fd, p + done, len - done, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (w < 0 && errno == EINTR)
			continue;
		long left = SEND_TIMEOUT_S * 1000L - ms_since(&t0);
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && left > 0) {
			struct pollfd pf[2] = {{.fd = fd, .events = POLLOUT}, {.fd = lfd, .events = POLLIN}};
			if (poll(pf, 2, (int)left) > 0 && (pf[1].revents & POLLIN))
				refuse_second(lfd, current);
			continue;
		}
		if (w <= 0) {
			if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
				snr_warn("device: the debugger read no reply for %d s: its connection is dropped",
					 SEND_TIMEOUT_S);
			rsp_session_consume(s, len);
			return -1;
		}
		done += (size_t)w;
	}
	rsp_session_consume(s, len);
	return 0;
}

/* Reads what the debugger sent and feeds it in. Returns -1 on EOF or error. */
static int receive(struct rsp_session *s, int fd)
{
	char buf[4096];
	ssize_t n;
	do
		n = recv(fd, buf, sizeof(buf), 0);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return -1;
	rsp_session_feed(s, buf, (size_t)n);
	return 0;
}

static bool readable(int fd, int timeout_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	int r;
	do
		r = poll(&p, 1, timeout_ms);
	while (r < 0 && errno == EINTR);
	return r > 0;
}

/* How long a refused second debugger is given to send its first packet,
 * which the refusal answers (GDB shows an error reply only as the answer to
 * a packet of its own). */
#define REFUSE_WAIT_MS 500
/* While a debugger is attached, the listening socket is looked at every
 * this many packets and whenever the debugger is quiet for WATCH_MS. */
#define WATCH_PACKETS 1024
#define WATCH_MS 200

/* Who is at the other end of fd, for messages. */
static void peer_name(int fd, char *out, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char h[NI_MAXHOST], p[NI_MAXSERV];
	if (getpeername(fd, (struct sockaddr *)&ss, &sl) || ss.ss_family == AF_UNIX ||
	    getnameinfo((struct sockaddr *)&ss, sl, h, sizeof(h), p, sizeof(p), NI_NUMERICHOST | NI_NUMERICSERV))
		snprintf(out, len, "a local socket");
	else
		snprintf(out, len, "%s port %s", h, p);
}

/*
 * A debugger connects while another is attached: one debugger at a time
 * drives the machine, so the newcomer is refused, said on stderr and to it:
 * its first packet (GDB's qSupported) is acknowledged and answered with an
 * "E.text" error reply, which GDB prints ("Remote failure reply: E.snr
 * device: ..."), and the connection is closed. The attached debugger waits
 * at most REFUSE_WAIT_MS for this.
 */
static void refuse_second(int lfd, const char *current)
{
	int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
	if (fd < 0)
		return;
	char who[NI_MAXHOST + NI_MAXSERV + 16];
	peer_name(fd, who, sizeof(who));
	snr_warn("device: a second debugger connected (%s) while one is attached (%s): refused", who, current);
	struct rsp_framer f;
	rsp_framer_init(&f);
	bool packet = false;
	struct timespec t0;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		long left = REFUSE_WAIT_MS - ms_since(&t0);
		if (packet || left <= 0 || !readable(fd, (int)left))
			break;
		uint8_t buf[512];
		ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
		if (n <= 0)
			break;
		for (ssize_t i = 0; i < n && !packet; i++)
			packet = rsp_framer_push(&f, buf[i]) == RSP_FRAME_PACKET;
	}
	char msg[256], out[300];
	int len = snprintf(msg, sizeof(msg),
			   "E.snr device: another debugger (%s) is attached; one debugger at a time: connect again when "
			   "it has detached",
			   current);
	size_t olen = 0;
	if (packet)
		out[olen++] = '+';
	olen += rsp_frame_reply(msg, (size_t)len, out + olen, sizeof(out) - olen);
	if (send(fd, out, olen, MSG_NOSIGNAL | MSG_DONTWAIT) < 0) {
		/* it left already */
	}
	close(fd);
}

/* Waits for the debugger's next packet. A stepping debugger answers within
 * microseconds, and on an idle machine a blocking poll() costs far more than
 * that in wake-up latency (measured here: about 4k steps/s blocking, several
 * times more spinning), so the waiter spins first, but only while a CPU is
 * free for the debugger and spinning catches packets (lib/snr_wait.c;
 * SNR_RSP_WAIT=adaptive, spin or block). */
static bool next_packet_ready(struct snr_waiter *w, int fd, int lfd, const char *current)
{
	int r;
	for (;;) {
		r = snr_wait_readable(w, fd, WATCH_MS);
		if (r < 0 && errno == EINTR)
			continue;
		if (r != 0)
			break;
		if (readable(lfd, 0)) /* quiet: someone else knocking? */
			refuse_second(lfd, current);
	}
	return r > 0;
}

enum program { PROGRAM_ON, PROGRAM_EXITED, PROGRAM_FAILED };

/* Where the program stands with no debugger to tell: on, ended, or stopped
 * for good by a fault or an ebreak. */
static enum program program_state(struct ta1_machine *m)
{
	bool all_exited = true;
	for (unsigned i = 0; i < ta1_machine_nchips(m); i++) {
		enum ta1_chip_state st = ta1_chip_state(ta1_machine_chip(m, i));
		if (st == TA1_CHIP_FAULTED)
			return PROGRAM_FAILED;
		all_exited &= st == TA1_CHIP_EXITED;
	}
	return all_exited ? PROGRAM_EXITED : PROGRAM_ON;
}

/* One round of the program with no debugger. Returns 1 while it goes on,
 * 0 with *status when it has ended. */
static int run_unattended(struct ta1_machine *m, int *status)
{
	bool any = false;
	for (unsigned i = 0; i < ta1_machine_nchips(m); i++) {
		struct ta1_chip *c = ta1_machine_chip(m, i);
		if (ta1_chip_state(c) != TA1_CHIP_RUNNING)
			continue;
		any = true;
		enum ta1_stop r = ta1_chip_run(c, QUANTUM);
		if (r == TA1_STOP_FAULT) {
			snr_err("device: %s", ta1_chip_fault(c));
			*status = STATUS_UNFINISHED;
			return 0;
		}
		if (r == TA1_STOP_EBREAK || r == TA1_STOP_BREAKPOINT) {
			snr_err("device: chip %u: ebreak at pc 0x%llx with no debugger attached", i,
				(unsigned long long)ta1_chip_get_reg(c, TA1_REG_PC));
			*status = STATUS_UNFINISHED;
			return 0;
		}
	}
	if (any)
		return 1;
	*status = program_state(m) == PROGRAM_EXITED ? ta1_chip_exit_code(ta1_machine_chip(m, 0))
						       : STATUS_UNFINISHED;
	return 0;
}

/* Converses with one debugger until it leaves. Returns 1 if the server
 * should take the next one, 0 with *status if snr device should end. */
static int serve_connection(struct rsp_session *s, struct ta1_machine *m, int fd, int lfd, struct snr_waiter *w,
			    bool *free_run, bool halt, int *status)
{
	char current[NI_MAXHOST + NI_MAXSERV + 16];
	peer_name(fd, current, sizeof(current));
	for (unsigned long turn = 1;; turn++) {
		if (turn % WATCH_PACKETS == 0 && readable(lfd, 0))
			refuse_second(lfd, current);
		if (flush(s, fd, lfd, current))
			break;
		enum rsp_end end = rsp_session_end(s);
		if (end == RSP_END_KILLED) {
			*status = program_state(m) == PROGRAM_EXITED
					  ? ta1_chip_exit_code(ta1_machine_chip(m, 0))
					  : STATUS_UNFINISHED;
			return 0;
		}
		if (end == RSP_END_DETACHED) {
			rsp_session_reset(s); /* no breakpoint outlives its debugger */
			*free_run = true; /* the program goes on, as after a detach from a process */
			return 1;
		}
		if (rsp_session_running(s)) {
			if (readable(fd, 0) && receive(s, fd))
				break;
			if (readable(lfd, 0))
				refuse_second(lfd, current);
			rsp_session_run_slice(s);
		} else {
			if (!next_packet_ready(w, fd, lfd, current) || receive(s, fd))
				break;
		}
	}
	/* The connection dropped. */
	rsp_session_interrupt(s);
	rsp_session_reset(s);
	*free_run = !halt;
	return 1;
}

int rsp_serve_machine(struct ta1_machine *m, const struct snr_elf *elf, const char *endpoint, bool halt,
		      const char *config_from)
{
	(void)elf;
	char *unix_path = NULL;
	int status = 1;
	struct snr_waiter waiter;
	char werr[256];
	if (snr_waiter_init(&waiter, "SNR_RSP_WAIT", 200000, 0, werr, sizeof(werr))) {
		snr_err("device: %s", werr);
		return 1;
	}
	int lfd = listen_on(endpoint, &unix_path);
	if (lfd < 0)
		return 1;
	struct rsp_session *s = rsp_session_new(m, 0);
	rsp_session_set_config_from(s, config_from);
	bool free_run = !halt;
	for (;;) {
		enum program p = program_state(m);
		if (p != PROGRAM_ON) {
			/* Nothing left to run or debug once the debugger has gone
			 * (a fault was reported when it happened). */
			status = p == PROGRAM_EXITED ? ta1_chip_exit_code(ta1_machine_chip(m, 0))
						     : STATUS_UNFINISHED;
			break;
		}
		if (free_run) {
			if (!run_unattended(m, &status))
				break;
			if (!readable(lfd, 0))
				continue;
		}
		int cfd;
		do
			cfd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		while (cfd < 0 && errno == EINTR);
		if (cfd < 0) {
			snr_err("device: --gdb %s: accept: %s", endpoint, strerror(errno));
			status = 1;
			break;
		}
		int one = 1;
		setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)); /* fails on unix: fine */
		struct timeval tv = {.tv_sec = SEND_TIMEOUT_S};
		setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
		rsp_session_reset(s);
		free_run = false;
		int more = serve_connection(s, m, cfd, lfd, &waiter, &free_run, halt, &status);
		close(cfd);
		if (!more)
			break;
	}
	rsp_session_free(s);
	close(lfd);
	if (unix_path) {
		unlink(unix_path);
		free(unix_path);
	}
	return status;
}
