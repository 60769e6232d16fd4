/*
 * dbg_rsp.c: the debugger backend that speaks GDB's remote serial protocol
 * to a stub: `snr device --gdb`, gdbserver, or QEMU's -g. Targets are
 * tcp:HOST:PORT and unix:PATH.
 *
 * Handshake: qSupported (PacketSize, multiprocess, qXfer:features:read),
 * QStartNoAckMode when offered, target.xml (following xi:include) for the
 * register list and architecture, vCont? for the resume actions, '?' for the
 * initial stop, qfThreadInfo/qsThreadInfo for the threads. Without a
 * target.xml the register list comes from a built-in table chosen by the
 * length of the 'g' reply (or SNR_RSP_ARCH).
 *
 * Registers: read_regs() answers from the registers the last stop reply
 * expedited when that covers them all; otherwise one 'g' (its reply maps
 * byte for byte onto the front of the buffer, since both follow regnum
 * order), plus one 'p' per register beyond 'g' (QEMU's RISC-V CSRs, for
 * example). Unavailable registers ('x' bytes, or a 'p' that errs) read as
 * zeros; a register whose 'p' errs once is not asked for again. Each 'p' is
 * a round trip (QEMU 7.2's RISC-V: 39 beyond 'g', ~300 read_regs/s instead
 * of ~3000), so SNR_RSP_REGS=g trims the register list to what 'g' carries.
 *
 * Every wait is a poll() with a deadline (SNR_RSP_TIMEOUT_MS, default 5000),
 * spinning first only while a CPU is free for the stub and spinning catches
 * replies (lib/snr_wait.c;
 * SNR_RSP_WAIT=adaptive, the default, spin or block),
 * so a silent, truncated or garbled peer gives an error naming the packet,
 * never a hang. cont() with a timeout interrupts the target with 0x03 and
 * reports TIMEOUT; so does a step still running after the reply timeout (an
 * instruction blocked in a system call); cont() without one waits as long as
 * the program runs. After a timeout nobody asked for or a hang-up the byte
 * stream is out of step, and later requests fail at once saying why.
 * Stop-reply signal numbers are GDB's (SIGTRAP 5, SIGSEGV 11, SIGBUS 10).
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "lib/snr_util.h"
#include "lib/snr_wait.h"
#include "recorder/snr_debugger.h"

#define RSP_MAX_THREADS 4096
#define RSP_MAX_BREAKPOINTS 1024
#define RSP_MAX_XML_DEPTH 8
#define RSP_MAX_PACKET (1u << 24) /* a reply larger than this is garbage */

struct rsp_reg {
	int regnum;
	bool in_g;        /* covered by the 'g' reply */
	bool unavailable; /* 'p' erred: do not ask again */
};

struct rsp_bp {
	uint64_t addr;
	char type; /* '0' (software) or '1' (hardware) */
};

struct snr_dbg {
	int fd;
	char err[512];
	int timeout_ms;
	struct snr_waiter waiter; /* spins before blocking only while that pays (lib/snr_wait.c) */

	/* receive buffer */
	uint8_t rbuf[8192];
	size_t rpos, rlen;
	/* last decoded packet */
	char *pkt;
	size_t pktlen, pktcap;

	size_t packet_size;
	bool noack, multiprocess, has_xml, vcont_s, vcont_c;
	char z_type; /* '0' until Z0 turns out unsupported */

	char arch[64];
	struct snr_dbg_reg *regs;
	struct rsp_reg *rinfo;
	size_t nregs, regbytes, gbytes; /* gbytes: known once a 'g' came back */
	int pc_index;
	uint8_t *cache;
	bool *cache_valid;

	char (*threads)[64];
	int nthreads, cur_thread;
	bool snr_ignore; /* the stub counts breakpoint hits (QSnrIgnore+: snr device) */
	bool snr_pod;    /* the stub steps one chip of a pod alone (QSnrPod+: snr device) */
	bool has_auxv;   /* qXfer:auxv:read+ (gdbserver): the program's auxiliary vector */
	bool has_snr_config; /* qXfer:snr-config:read+ (snr device): the machine config it runs */
	bool binary_read; /* binary-upload+ (snr device, gdb 16's x): memory read without hex, until a stub
			   * answers x as unsupported */
	bool no_crc;      /* qCRC answered as unsupported (QEMU): not asked again */
	bool crc_ok;      /* qCRC answered with a CRC once: several may go out together */
	char hc_thread[64]; /* what the last Hc named */
	int pid, stub_pid; /* pid() reports pid; the stub's own number is stub_pid */

	struct rsp_bp bps[RSP_MAX_BREAKPOINTS];
	int nbps;

	bool attached; /* the program is alive and ours */
	/* A timeout or a lost connection leaves the byte stream out of step
	 * with the stub: every later request fails at once, saying why. */
	bool broken;
	char broken_why[256];
	/* bytes read past the deadline late_deadline (get_byte) */
	int64_t late_deadline;
	size_t late_bytes;
};

static int fail(struct snr_dbg *d, const char *fmt, ...) SNR_PRINTF(2, 3);
static int fail(struct snr_dbg *d, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(d->err, sizeof(d->err), fmt, ap);
	va_end(ap);
	return -1;
}

static int64_t now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static int hexval(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Parses hex digits at *s into *v, advancing *s; false if there were none. */
static bool parse_hex(const char **s, uint64_t *v)
{
	const char *p = *s;
	uint64_t x = 0;
	int n = 0;
	while (hexval((unsigned char)*p) >= 0 && n < 16) {
		x = x << 4 | (uint64_t)hexval((unsigned char)*p);
		p++;
		n++;
	}
	if (n == 0 || hexval((unsigned char)*p) >= 0)
		return false;
	*s = p;
	*v = x;
	return true;
}

/* ---- transport ---------------------------------------------------------- */

static void mark_broken(struct snr_dbg *d)
{
	if (!d->broken)
		snprintf(d->broken_why, sizeof(d->broken_why), "%.200s", d->err);
	d->broken = true;
}

static int send_all(struct snr_dbg *d, const void *buf, size_t len, const char *what)
{
	const uint8_t *p = buf;
	while (len > 0) {
		ssize_t w = send(d->fd, p, len, MSG_NOSIGNAL);
		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			struct pollfd pfd = {.fd = d->fd, .events = POLLOUT};
			if (poll(&pfd, 1, d->timeout_ms) <= 0) {
				fail(d, "rsp: sending %s: peer not accepting data for %d ms", what, d->timeout_ms);
				mark_broken(d);
				return -1;
			}
			continue;
		}
		if (w <= 0) {
			fail(d, "rsp: sending %s: %s", what, w < 0 ? strerror(errno) : "connection closed");
			mark_broken(d);
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* One byte, waiting until deadline (ms on the monotonic clock). Returns the
 * byte, -1 on error (message set), -2 on timeout (message set). */
static int get_byte(struct snr_dbg *d, int64_t deadline, const char *what)
{
	if (d->rpos < d->rlen)
		return d->rbuf[d->rpos++];
	for (;;) {
		int64_t left = deadline - now_ms();
		int r;
		bool late = left <= 0;
		if (late) {
			/* Past the deadline: read what is waiting, without waiting.
			 * This process may have been stopped while the reply came
			 * (a loaded or paused machine): a reply that is waiting is
			 * no timeout. Bounded, so that a stub streaming noise still
			 * times out. */
			if (d->late_deadline != deadline) {
				d->late_deadline = deadline;
				d->late_bytes = 0;
			}
			struct pollfd pfd = {.fd = d->fd, .events = POLLIN};
			r = d->late_bytes > 2 * RSP_MAX_PACKET ? 0 : poll(&pfd, 1, 0);
			if (r == 0) {
				fail(d, "rsp: %s: no reply within %d ms", what, d->timeout_ms);
				mark_broken(d);
				return -2;
			}
		} else {
			/* A stub answering a step replies within microseconds: the
			 * waiter spins that long first while spinning catches
			 * replies. */
			r = snr_wait_readable(&d->waiter, d->fd, left > 1000 ? 1000 : (int)left);
		}
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			fail(d, "rsp: %s: poll: %s", what, strerror(errno));
			mark_broken(d);
			return -1;
		}
		if (r == 0)
			continue;
		ssize_t n = recv(d->fd, d->rbuf, sizeof(d->rbuf), 0);
		if (n < 0 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n <= 0) {
			fail(d, "rsp: %s: %s", what, n < 0 ? strerror(errno) : "connection closed by the stub");
			mark_broken(d);
			return -1;
		}
		if (late)
			d->late_bytes += (size_t)n;
		d->rpos = 0;
		d->rlen = (size_t)n;
		return d->rbuf[d->rpos++];
	}
}

static void pkt_put(struct snr_dbg *d, char c)
{
	if (d->pktlen + 2 > d->pktcap) {
		d->pktcap = d->pktcap ? d->pktcap * 2 : 4096;
		d->pkt = snr_xrealloc(d->pkt, d->pktcap);
	}
	d->pkt[d->pktlen++] = c;
	d->pkt[d->pktlen] = 0;
}

/* Sends $payload#cs, escaping '$', '#', '}' and '*', and waits for the '+'
 * unless no-ack mode is on (retransmitting on '-', three times). */
static int send_packet(struct snr_dbg *d, const char *payload, const char *what)
{
	if (d->broken)
		return fail(d, "rsp: %s: not sent: the connection is unusable after an earlier failure (%s)", what,
			    d->broken_why);
	size_t n = strlen(payload);
	char *frame = snr_xmalloc(2 * n + 5);
	size_t k = 0;
	uint8_t sum = 0;
	frame[k++] = '$';
	for (size_t i = 0; i < n; i++) {
		char c = payload[i];
		if (c == '$' || c == '#' || c == '}' || c == '*') {
			frame[k++] = '}';
			sum += '}';
			c ^= 0x20;
		}
		frame[k++] = c;
		sum += (uint8_t)c;
	}
	k += (size_t)snprintf(frame + k, 4, "#%02x", sum);
	int rc = -1;
	for (int attempt = 0; attempt < 3; attempt++) {
		if (send_all(d, frame, k, what) < 0)
			goto cleanup;
		if (d->noack) {
			rc = 0;
			goto cleanup;
		}
		int64_t deadline = now_ms() + d->timeout_ms;
		int c;
		/* Skip noise before the ack; a reply that comes without one
		 * counts as the ack (left in the buffer for recv_packet). */
		while ((c = get_byte(d, deadline, what)) >= 0 && c != '+' && c != '-' && c != '$')
			;
		if (c == '$') {
			d->rpos--;
			c = '+';
		}
		if (c < 0) {
			fail(d, "rsp: %s: no acknowledgement (%s)", what, c == -2 ? "timeout" : "connection lost");
			goto cleanup;
		}
		if (c == '+') {
			rc = 0;
			goto cleanup;
		}
	}
	fail(d, "rsp: %s: the stub rejected the packet three times", what);
cleanup:
	free(frame);
	return rc;
}

/* The bytes of a packet's body already received that need no decoding (no
 * '#', '$', '*' or '}'), at once into d->pkt, as the byte loop below would
 * put them: a memory read's binary reply came in at about 60 instructions a
 * byte, 4% of the instructions of the 1M serving window's recording
 * (callgrind). Stops where d->pkt reaches RSP_MAX_PACKET, for the loop's
 * check. */
static void take_plain_run(struct snr_dbg *d, uint8_t *sum, int *prev)
{
	const uint8_t *p = (const uint8_t *)d->rbuf + d->rpos;
	size_t n = 0, max = d->rlen - d->rpos;
	if (max > RSP_MAX_PACKET + 1 - d->pktlen)
		max = RSP_MAX_PACKET + 1 - d->pktlen;
	uint8_t s = *sum;
	while (n < max && p[n] != '#' && p[n] != '$' && p[n] != '*' && p[n] != '}')
		s += p[n++];
	if (!n)
		return;
	if (d->pktlen + n + 1 > d->pktcap) {
		while (d->pktlen + n + 1 > d->pktcap)
			d->pktcap = d->pktcap ? d->pktcap * 2 : 4096;
		d->pkt = snr_xrealloc(d->pkt, d->pktcap);
	}
	memcpy(d->pkt + d->pktlen, p, n);
	d->pktlen += n;
	d->pkt[d->pktlen] = 0;
	d->rpos += n;
	*sum = s;
	*prev = p[n - 1];
}

/* Receives one packet into d->pkt (run-length expanded, then unescaped).
 * Bytes outside $...# are skipped; a bad checksum is NAKed and retried in
 * ack mode, an error in no-ack mode. */
static int recv_packet_until(struct snr_dbg *d, int64_t deadline, const char *what)
{
	for (int attempt = 0; attempt < 3; attempt++) {
		int c;
		/* bytes before the '$' that are no acknowledgement: junk, named
		 * if no reply follows (not taken for a target that does not stop) */
		char junk[17];
		size_t njunk = 0;
		do {
			c = get_byte(d, deadline, what);
			if (c >= 0 && c != '$' && c != '+' && c != '-' && njunk++ < sizeof(junk) - 1)
				junk[njunk - 1] = (char)(c >= 0x20 && c < 0x7f ? c : '.');
		} while (c >= 0 && c != '$');
		if (c == -2 && njunk) {
			junk[njunk < sizeof(junk) ? njunk : sizeof(junk) - 1] = 0;
			fail(d, "rsp: %s: the stub sent %zu bytes that are no packet (\"%s\") and no reply within %d ms",
			     what, njunk, junk, d->timeout_ms);
			d->broken = false;
			mark_broken(d);
			return -1;
		}
		if (c < 0)
			return c;
		/* raw payload, expanding run lengths as we go */
		d->pktlen = 0;
		pkt_put(d, 0);
		d->pktlen = 0;
		uint8_t sum = 0;
		int prev = -1;
		bool esc = false;
		for (;;) {
			if (!esc && d->rpos < d->rlen && d->pktlen <= RSP_MAX_PACKET)
				take_plain_run(d, &sum, &prev);
			c = get_byte(d, deadline, what);
			if (c < 0) {
				if (c == -2) {
					fail(d, "rsp: %s: truncated reply (no '#' within %d ms, %zu bytes so far)",
					     what, d->timeout_ms, d->pktlen);
					d->broken = false;
					mark_broken(d);
				}
				return c;
			}
			if (c == '#')
				break;
			if (c == '$') { /* a new packet began: the old one was truncated */
				fail(d, "rsp: %s: truncated reply ('$' inside a packet)", what);
				mark_broken(d);
				return -1;
			}
			sum += (uint8_t)c;
			if (d->pktlen > RSP_MAX_PACKET) {
				fail(d, "rsp: %s: reply longer than %u bytes", what, RSP_MAX_PACKET);
				mark_broken(d);
				return -1;
			}
			if (c == '*' && !esc) {
				int cnt = get_byte(d, deadline, what);
				if (cnt < 0)
					return cnt;
				sum += (uint8_t)cnt;
				if (prev < 0 || cnt < 29 || cnt > 126) {
					fail(d, "rsp: %s: bad run-length encoding", what);
					return -1;
				}
				for (int i = 0; i < cnt - 29; i++)
					pkt_put(d, (char)prev);
				continue;
			}
			esc = (c == '}' && !esc);
			pkt_put(d, (char)c);
			prev = c;
		}
		int h1 = get_byte(d, deadline, what);
		int h2 = h1 < 0 ? h1 : get_byte(d, deadline, what);
		if (h2 < 0)
			return h2;
		bool ok = hexval(h1) >= 0 && hexval(h2) >= 0 && (uint8_t)(hexval(h1) << 4 | hexval(h2)) == sum;
		if (!ok) {
			if (d->noack) {
				fail(d, "rsp: %s: reply with a bad checksum (%c%c, computed %02x)", what, h1, h2, sum);
				mark_broken(d);
				return -1;
			}
			if (send_all(d, "-", 1, what) < 0)
				return -1;
			fail(d, "rsp: %s: reply with a bad checksum (%c%c, computed %02x)", what, h1, h2, sum);
			continue;
		}
		if (!d->noack && send_all(d, "+", 1, what) < 0)
			return -1;
		/* unescape in place */
		size_t o = 0;
		for (size_t i = 0; i < d->pktlen; i++) {
			if (d->pkt[i] == '}' && i + 1 < d->pktlen)
				d->pkt[o++] = (char)(d->pkt[++i] ^ 0x20);
			else
				d->pkt[o++] = d->pkt[i];
		}
		d->pktlen = o;
		d->pkt[o] = 0;
		return 0;
	}
	return -1; /* message from the last bad checksum */
}

static int recv_packet(struct snr_dbg *d, const char *what)
{
	return recv_packet_until(d, now_ms() + d->timeout_ms, what) < 0 ? -1 : 0;
}

/* Sends a command and receives its reply into d->pkt. */
static int transact(struct snr_dbg *d, const char *cmd)
{
	if (send_packet(d, cmd, cmd) < 0)
		return -1;
	return recv_packet(d, cmd);
}

static bool is_error_reply(const struct snr_dbg *d)
{
	return d->pktlen >= 1 && d->pkt[0] == 'E' &&
	       (d->pktlen == 3 ? hexval((unsigned char)d->pkt[1]) >= 0 && hexval((unsigned char)d->pkt[2]) >= 0
			       : d->pkt[1] == '.');
}

/* Sends cmd and wants OK; what names it in errors (NULL: cmd itself). A
 * packet that carries data (G, P, M) is named, not quoted: its hex runs to
 * the packet size. */
static int expect_ok_as(struct snr_dbg *d, const char *cmd, const char *what)
{
	if (!what)
		what = cmd;
	if (send_packet(d, cmd, what) < 0 || recv_packet(d, what) < 0)
		return -1;
	if (strcmp(d->pkt, "OK") != 0)
		return fail(d, "rsp: %s: expected OK, got \"%.40s\"", what, d->pkt);
	return 0;
}

static int expect_ok(struct snr_dbg *d, const char *cmd) { return expect_ok_as(d, cmd, NULL); }

/* ---- connection ------------------------------------------------------- */

static int connect_tcp(struct snr_dbg *d, const char *hostport)
{
	char host[256];
	const char *colon = strrchr(hostport, ':');
	if (!colon || colon == hostport || (size_t)(colon - hostport) >= sizeof(host) || !colon[1])
		return fail(d, "rsp: target tcp:%s: expected tcp:HOST:PORT", hostport);
	memcpy(host, hostport, (size_t)(colon - hostport));
	host[colon - hostport] = 0;
	struct addrinfo hints = {.ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM}, *res = NULL;
	int gai = getaddrinfo(host, colon + 1, &hints, &res);
	if (gai != 0)
		return fail(d, "rsp: target tcp:%s: %s", hostport, gai_strerror(gai));
	int last_errno = 0;
	for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
		int fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC | SOCK_NONBLOCK, ai->ai_protocol);
		if (fd < 0) {
			last_errno = errno;
			continue;
		}
		int r = connect(fd, ai->ai_addr, ai->ai_addrlen);
		if (r < 0 && errno == EINPROGRESS) {
			struct pollfd pfd = {.fd = fd, .events = POLLOUT};
			int soerr = 0;
			socklen_t sl = sizeof(soerr);
			if (poll(&pfd, 1, d->timeout_ms) == 1 && getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &sl) == 0)
				r = soerr ? (errno = soerr, -1) : 0;
			else
				errno = ETIMEDOUT;
		}
		if (r == 0) {
			int one = 1;
			setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
			d->fd = fd;
			freeaddrinfo(res);
			return 0;
		}
		last_errno = errno;
		close(fd);
	}
	freeaddrinfo(res);
	return fail(d, "rsp: connecting to tcp:%s: %s", hostport, strerror(last_errno));
}

static int connect_unix(struct snr_dbg *d, const char *path)
{
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	if (strlen(path) >= sizeof(sa.sun_path))
		return fail(d, "rsp: target unix:%s: path too long", path);
	strcpy(sa.sun_path, path);
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return fail(d, "rsp: socket: %s", strerror(errno));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		int e = errno;
		close(fd);
		return fail(d, "rsp: connecting to unix:%s: %s", path, strerror(e));
	}
	d->fd = fd;
	return 0;
}

/* ---- registers ---------------------------------------------------------- */

static void add_reg(struct snr_dbg *d, const char *name, uint32_t size, int regnum)
{
	d->regs = snr_xrealloc(d->regs, (d->nregs + 1) * sizeof(*d->regs));
	d->rinfo = snr_xrealloc(d->rinfo, (d->nregs + 1) * sizeof(*d->rinfo));
	struct snr_dbg_reg *r = &d->regs[d->nregs];
	memset(r, 0, sizeof(*r));
	size_t i;
	for (i = 0; name[i] && i + 1 < sizeof(r->name); i++)
		r->name[i] = (char)tolower((unsigned char)name[i]);
	r->size = size;
	d->rinfo[d->nregs] = (struct rsp_reg){.regnum = regnum};
	d->nregs++;
}

static int cmp_regnum(const void *a, const void *b, void *ctx)
{
	const struct snr_dbg *d = ctx;
	int x = d->rinfo[*(const size_t *)a].regnum, y = d->rinfo[*(const size_t *)b].regnum;
	return (x > y) - (x < y);
}

/* Sorts registers by regnum, assigns offsets, finds the pc, sizes caches. */
static int finish_regs(struct snr_dbg *d)
{
	if (d->nregs == 0)
		return fail(d, "rsp: the target description names no registers");
	size_t *order = snr_xmalloc(d->nregs * sizeof(size_t));
	for (size_t i = 0; i < d->nregs; i++)
		order[i] = i;
	qsort_r(order, d->nregs, sizeof(size_t), cmp_regnum, d);
	struct snr_dbg_reg *regs = snr_xmalloc(d->nregs * sizeof(*regs));
	struct rsp_reg *rinfo = snr_xmalloc(d->nregs * sizeof(*rinfo));
	for (size_t i = 0; i < d->nregs; i++) {
		regs[i] = d->regs[order[i]];
		rinfo[i] = d->rinfo[order[i]];
	}
	free(order);
	free(d->regs);
	free(d->rinfo);
	d->regs = regs;
	d->rinfo = rinfo;
	uint32_t off = 0;
	d->pc_index = -1;
	for (size_t i = 0; i < d->nregs; i++) {
		if (i > 0 && rinfo[i].regnum == rinfo[i - 1].regnum)
			return fail(d, "rsp: the target description gives regnum %d twice", rinfo[i].regnum);
		regs[i].offset = off;
		off += regs[i].size;
		if (d->pc_index < 0 && (!strcmp(regs[i].name, "pc") || !strcmp(regs[i].name, "rip") ||
					!strcmp(regs[i].name, "eip")))
			d->pc_index = (int)i;
	}
	d->regbytes = off;
	d->cache = snr_xcalloc(off ? off : 1, 1);
	d->cache_valid = snr_xcalloc(d->nregs, sizeof(bool));
	return 0;
}

/* Built-in register lists for stubs without target.xml. */
struct builtin_reg {
	const char *name;
	uint32_t size;
};
static const struct builtin_reg rv64_regs[] = {
	{"zero", 8}, {"ra", 8},  {"sp", 8},  {"gp", 8},  {"tp", 8},  {"t0", 8},  {"t1", 8},  {"t2", 8},
	{"fp", 8},   {"s1", 8},  {"a0", 8},  {"a1", 8},  {"a2", 8},  {"a3", 8},  {"a4", 8},  {"a5", 8},
	{"a6", 8},   {"a7", 8},  {"s2", 8},  {"s3", 8},  {"s4", 8},  {"s5", 8},  {"s6", 8},  {"s7", 8},
	{"s8", 8},   {"s9", 8},  {"s10", 8}, {"s11", 8}, {"t3", 8},  {"t4", 8},  {"t5", 8},  {"t6", 8},
	{"pc", 8},
};
static const struct builtin_reg amd64_regs[] = {
	{"rax", 8},    {"rbx", 8},   {"rcx", 8},  {"rdx", 8},   {"rsi", 8},   {"rdi", 8},   {"rbp", 8},
	{"rsp", 8},    {"r8", 8},    {"r9", 8},   {"r10", 8},   {"r11", 8},   {"r12", 8},   {"r13", 8},
	{"r14", 8},    {"r15", 8},   {"rip", 8},  {"eflags", 4}, {"cs", 4},   {"ss", 4},    {"ds", 4},
	{"es", 4},     {"fs", 4},    {"gs", 4},   {"st0", 10},  {"st1", 10},  {"st2", 10},  {"st3", 10},
	{"st4", 10},   {"st5", 10},  {"st6", 10}, {"st7", 10},  {"fctrl", 4}, {"fstat", 4}, {"ftag", 4},
	{"fiseg", 4},  {"fioff", 4}, {"foseg", 4}, {"fooff", 4}, {"fop", 4},   {"xmm0", 16}, {"xmm1", 16},
	{"xmm2", 16},  {"xmm3", 16}, {"xmm4", 16}, {"xmm5", 16}, {"xmm6", 16}, {"xmm7", 16}, {"xmm8", 16},
	{"xmm9", 16},  {"xmm10", 16}, {"xmm11", 16}, {"xmm12", 16}, {"xmm13", 16}, {"xmm14", 16},
	{"xmm15", 16}, {"mxcsr", 4},
};
static const struct builtin_reg aarch64_regs[] = {
	{"x0", 8},  {"x1", 8},  {"x2", 8},  {"x3", 8},  {"x4", 8},  {"x5", 8},  {"x6", 8},  {"x7", 8},
	{"x8", 8},  {"x9", 8},  {"x10", 8}, {"x11", 8}, {"x12", 8}, {"x13", 8}, {"x14", 8}, {"x15", 8},
	{"x16", 8}, {"x17", 8}, {"x18", 8}, {"x19", 8}, {"x20", 8}, {"x21", 8}, {"x22", 8}, {"x23", 8},
	{"x24", 8}, {"x25", 8}, {"x26", 8}, {"x27", 8}, {"x28", 8}, {"x29", 8}, {"x30", 8}, {"sp", 8},
	{"pc", 8},  {"cpsr", 4},
};
static const struct {
	const char *arch;
	const struct builtin_reg *regs;
	size_t n;
} builtin_archs[] = {
	{"riscv:rv64", rv64_regs, sizeof(rv64_regs) / sizeof(rv64_regs[0])},
	{"i386:x86-64", amd64_regs, sizeof(amd64_regs) / sizeof(amd64_regs[0])},
	{"aarch64", aarch64_regs, sizeof(aarch64_regs) / sizeof(aarch64_regs[0])},
};

static size_t builtin_bytes(size_t k)
{
	size_t b = 0;
	for (size_t i = 0; i < builtin_archs[k].n; i++)
		b += builtin_archs[k].regs[i].size;
	return b;
}

/* No target.xml: pick the table named by SNR_RSP_ARCH, else the one whose
 * size matches the 'g' reply exactly, else the largest that fits in it. */
static int builtin_regs(struct snr_dbg *d)
{
	const char *want = getenv("SNR_RSP_ARCH");
	int pick = -1;
	size_t nb = sizeof(builtin_archs) / sizeof(builtin_archs[0]);
	if (want && *want) {
		for (size_t k = 0; k < nb; k++)
			if (!strcmp(builtin_archs[k].arch, want))
				pick = (int)k;
		if (pick < 0)
			return fail(d, "rsp: SNR_RSP_ARCH=%s: no built-in register table (riscv:rv64, "
				       "i386:x86-64, aarch64)", want);
	} else {
		if (transact(d, "g") < 0)
			return -1;
		if (is_error_reply(d) || d->pktlen == 0 || d->pktlen % 2)
			return fail(d, "rsp: g: unusable reply \"%.40s\" while guessing the architecture "
				       "(the stub has no target.xml; set SNR_RSP_ARCH)", d->pkt);
		size_t glen = d->pktlen / 2, best = 0;
		for (size_t k = 0; k < nb; k++) {
			size_t b = builtin_bytes(k);
			if (b == glen) {
				pick = (int)k;
				break;
			}
			if (b < glen && b > best) {
				best = b;
				pick = (int)k;
			}
		}
		if (pick < 0)
			return fail(d, "rsp: the stub has no target.xml and its %zu-byte 'g' reply matches no "
				       "built-in register table; set SNR_RSP_ARCH", glen);
	}
	snprintf(d->arch, sizeof(d->arch), "%s", builtin_archs[pick].arch);
	for (size_t i = 0; i < builtin_archs[pick].n; i++)
		add_reg(d, builtin_archs[pick].regs[i].name, builtin_archs[pick].regs[i].size, (int)i);
	return 0;
}

/* Reads a whole qXfer:OBJECT:read annex (binary data unescaped; a NUL after it). */
static int read_xfer(struct snr_dbg *d, const char *object, const char *annex, char **out, size_t *outlen)
{
	size_t len = 0, cap = 4096;
	char *buf = snr_xmalloc(cap);
	size_t chunk = d->packet_size > 64 ? d->packet_size - 32 : 256;
	char cmd[512];
	for (;;) {
		snprintf(cmd, sizeof(cmd), "qXfer:%s:read:%s:%zx,%zx", object, annex, len, chunk);
		if (transact(d, cmd) < 0)
			goto fail_out;
		if (d->pktlen == 0 || (d->pkt[0] != 'm' && d->pkt[0] != 'l')) {
			fail(d, "rsp: %s: unexpected reply \"%.40s\"", cmd, d->pkt);
			goto fail_out;
		}
		size_t n = d->pktlen - 1;
		while (len + n + 1 > cap)
			cap *= 2;
		buf = snr_xrealloc(buf, cap);
		memcpy(buf + len, d->pkt + 1, n);
		len += n;
		if (d->pkt[0] == 'l')
			break;
		if (n == 0) {
			fail(d, "rsp: %s: empty 'm' reply (the stub would loop)", cmd);
			goto fail_out;
		}
		if (len > RSP_MAX_PACKET) {
			fail(d, "rsp: %s: annex larger than %u bytes", annex, RSP_MAX_PACKET);
			goto fail_out;
		}
	}
	buf[len] = 0;
	*out = buf;
	*outlen = len;
	return 0;
fail_out:
	free(buf);
	return -1;
}

/* Value of attribute name in the tag text [tag, end), into out. */
static bool xml_attr(const char *tag, const char *end, const char *name, char *out, size_t outlen)
{
	size_t nl = strlen(name);
	for (const char *p = tag; p + nl + 2 < end; p++) {
		if ((p == tag || isspace((unsigned char)p[-1])) && !strncmp(p, name, nl)) {
			const char *q = p + nl;
			while (q < end && isspace((unsigned char)*q))
				q++;
			if (q >= end || *q != '=')
				continue;
			q++;
			while (q < end && isspace((unsigned char)*q))
				q++;
			if (q >= end || (*q != '"' && *q != '\''))
				continue;
			char quote = *q++;
			const char *v = q;
			while (q < end && *q != quote)
				q++;
			if (q >= end)
				return false;
			size_t n = (size_t)(q - v) < outlen - 1 ? (size_t)(q - v) : outlen - 1;
			memcpy(out, v, n);
			out[n] = 0;
			return true;
		}
	}
	return false;
}

/* Scans one annex in document order: <architecture>, <reg>, <xi:include>
 * (recursively, inlined where it appears). Enough XML for GDB's
 * target descriptions; comments and other elements are skipped. */
static int parse_features(struct snr_dbg *d, const char *annex, int depth, int *next_regnum)
{
	if (depth > RSP_MAX_XML_DEPTH)
		return fail(d, "rsp: target description: xi:include nested deeper than %d at %s",
			    RSP_MAX_XML_DEPTH, annex);
	char *xml = NULL;
	size_t len = 0;
	int rc = -1;
	if (read_xfer(d, "features", annex, &xml, &len) < 0)
		return -1;
	const char *p = xml, *end = xml + len;
	while ((p = memchr(p, '<', (size_t)(end - p))) != NULL) {
		if (!strncmp(p, "<!--", 4)) {
			const char *e = strstr(p, "-->");
			if (!e)
				break;
			p = e + 3;
			continue;
		}
		const char *e = memchr(p, '>', (size_t)(end - p));
		if (!e) {
			fail(d, "rsp: target description %s: unterminated tag at byte %zu", annex, (size_t)(p - xml));
			goto cleanup;
		}
		if (!strncmp(p, "<architecture>", 14)) {
			const char *t = p + 14, *te = strchr(t, '<');
			if (te) {
				while (t < te && isspace((unsigned char)*t))
					t++;
				while (te > t && isspace((unsigned char)te[-1]))
					te--;
				size_t n = (size_t)(te - t) < sizeof(d->arch) - 1 ? (size_t)(te - t) : sizeof(d->arch) - 1;
				memcpy(d->arch, t, n);
				d->arch[n] = 0;
			}
		} else if (!strncmp(p, "<reg", 4) && isspace((unsigned char)p[4])) {
			char name[64], bits[32], num[32];
			if (!xml_attr(p, e, "name", name, sizeof(name)) || !xml_attr(p, e, "bitsize", bits, sizeof(bits))) {
				fail(d, "rsp: target description %s: <reg> without name or bitsize at byte %zu", annex,
				     (size_t)(p - xml));
				goto cleanup;
			}
			uint64_t b, rn = (uint64_t)*next_regnum;
			if (!snr_parse_u64(bits, &b, false) || b == 0 || b % 8 || b > 8 * 1024 ||
			    (xml_attr(p, e, "regnum", num, sizeof(num)) && (!snr_parse_u64(num, &rn, false) || rn > 1u << 20))) {
				fail(d, "rsp: target description %s: register %s: bad bitsize or regnum", annex, name);
				goto cleanup;
			}
			add_reg(d, name, (uint32_t)(b / 8), (int)rn);
			*next_regnum = (int)rn + 1;
		} else if (!strncmp(p, "<xi:include", 11)) {
			char href[256];
			if (!xml_attr(p, e, "href", href, sizeof(href))) {
				fail(d, "rsp: target description %s: xi:include without href", annex);
				goto cleanup;
			}
			if (parse_features(d, href, depth + 1, next_regnum) < 0)
				goto cleanup;
		}
		p = e + 1;
	}
	rc = 0;
cleanup:
	free(xml);
	return rc;
}

/* Decodes hex into the register cache: 'x' digits mean unavailable (zeros). */
static void hex_to_bytes(const char *hex, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int h = hexval((unsigned char)hex[2 * i]), l = hexval((unsigned char)hex[2 * i + 1]);
		out[i] = (h < 0 || l < 0) ? 0 : (uint8_t)(h << 4 | l);
	}
}

static bool all_hex_or_x(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (hexval((unsigned char)s[i]) < 0 && s[i] != 'x')
			return false;
	return true;
}

static int fetch_g(struct snr_dbg *d)
{
	if (transact(d, "g") < 0)
		return -1;
	if (is_error_reply(d))
		return fail(d, "rsp: g: the stub answered %s", d->pkt);
	if (d->pktlen % 2 || !all_hex_or_x(d->pkt, d->pktlen))
		return fail(d, "rsp: g: malformed reply (%zu characters, \"%.40s\")", d->pktlen, d->pkt);
	size_t glen = d->pktlen / 2;
	if (glen > d->regbytes)
		glen = d->regbytes;
	hex_to_bytes(d->pkt, d->cache, glen);
	d->gbytes = glen;
	for (size_t i = 0; i < d->nregs; i++) {
		d->rinfo[i].in_g = d->regs[i].offset + d->regs[i].size <= glen;
		if (d->rinfo[i].in_g)
			d->cache_valid[i] = true;
	}
	return 0;
}

static int fetch_p(struct snr_dbg *d, size_t i)
{
	char cmd[32];
	snprintf(cmd, sizeof(cmd), "p%x", d->rinfo[i].regnum);
	if (transact(d, cmd) < 0)
		return -1;
	struct snr_dbg_reg *r = &d->regs[i];
	if (d->pktlen == 0 || is_error_reply(d)) {
		/* unsupported or unreadable: zeros from now on */
		d->rinfo[i].unavailable = true;
		memset(d->cache + r->offset, 0, r->size);
	} else if (d->pktlen != 2 * (size_t)r->size || !all_hex_or_x(d->pkt, d->pktlen)) {
		return fail(d, "rsp: %s (register %s): malformed reply \"%.40s\"", cmd, r->name, d->pkt);
	} else {
		hex_to_bytes(d->pkt, d->cache + r->offset, r->size);
	}
	d->cache_valid[i] = true;
	return 0;
}

/* Makes every register of the selected thread valid in the cache. */
static int fill_cache(struct snr_dbg *d)
{
	bool need_g = d->gbytes == 0;
	for (size_t i = 0; i < d->nregs && !need_g; i++)
		if (!d->cache_valid[i] && d->rinfo[i].in_g)
			need_g = true;
	if (need_g && fetch_g(d) < 0)
		return -1;
	for (size_t i = 0; i < d->nregs; i++) {
		if (d->cache_valid[i])
			continue;
		if (d->rinfo[i].unavailable) {
			memset(d->cache + d->regs[i].offset, 0, d->regs[i].size);
			d->cache_valid[i] = true;
			continue;
		}
		if (fetch_p(d, i) < 0)
			return -1;
	}
	return 0;
}

static void invalidate_regs(struct snr_dbg *d)
{
	memset(d->cache_valid, 0, d->nregs * sizeof(bool));
}

static uint64_t cached_u64(const struct snr_dbg *d, size_t i)
{
	uint64_t v = 0;
	size_t n = d->regs[i].size < 8 ? d->regs[i].size : 8;
	for (size_t k = 0; k < n; k++)
		v |= (uint64_t)d->cache[d->regs[i].offset + k] << (8 * k);
	return v;
}

/* ---- threads ------------------------------------------------------------ */

static int thread_index(const struct snr_dbg *d, const char *id)
{
	for (int i = 0; i < d->nthreads; i++)
		if (!strcmp(d->threads[i], id))
			return i;
	return -1;
}

/* pid from a multiprocess id "pPID.TID". QEMU numbers its "processes"
 * from 1 (one per CPU cluster) rather than by host pid, so pid() reports
 * 1 as none; D;PID still needs it. */
static void note_pid(struct snr_dbg *d, const char *id)
{
	if (id[0] == 'p' && d->stub_pid == 0) {
		const char *s = id + 1;
		uint64_t v;
		if (parse_hex(&s, &v) && (*s == '.' || !*s) && v > 0 && v < (1u << 30)) {
			d->stub_pid = (int)v;
			d->pid = v > 1 ? (int)v : 0;
		}
	}
}

static int refresh_threads(struct snr_dbg *d)
{
	int n = 0;
	char (*list)[64] = NULL;
	const char *cmd = "qfThreadInfo";
	for (;;) {
		if (transact(d, cmd) < 0)
			goto fail_out;
		if (d->pktlen == 0 && n == 0 && cmd[1] == 'f')
			break; /* no thread support: one implicit thread */
		if (d->pkt[0] == 'l')
			break;
		if (d->pkt[0] != 'm') {
			fail(d, "rsp: %s: unexpected reply \"%.40s\"", cmd, d->pkt);
			goto fail_out;
		}
		char *save = NULL;
		for (char *t = strtok_r(d->pkt + 1, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
			if (n >= RSP_MAX_THREADS || strlen(t) >= 64) {
				fail(d, "rsp: %s: more than %d threads or a bad id", cmd, RSP_MAX_THREADS);
				goto fail_out;
			}
			list = snr_xrealloc(list, (size_t)(n + 1) * sizeof(*list));
			strcpy(list[n++], t);
		}
		cmd = "qsThreadInfo";
	}
	char cur[64] = "";
	if (d->cur_thread >= 0 && d->cur_thread < d->nthreads)
		strcpy(cur, d->threads[d->cur_thread]);
	free(d->threads);
	d->threads = list;
	d->nthreads = n;
	d->cur_thread = n > 0 ? 0 : -1;
	for (int i = 0; i < n; i++) {
		note_pid(d, list[i]);
		if (!strcmp(list[i], cur))
			d->cur_thread = i;
	}
	return 0;
fail_out:
	free(list);
	return -1;
}

/* ---- stop replies ------------------------------------------------------- */

/* Parses the stop reply in d->pkt. what names the packet that caused it. */
static int parse_stop(struct snr_dbg *d, const char *what, struct snr_dbg_stop *stop)
{
	const char *p = d->pkt;
	memset(stop, 0, sizeof(*stop));
	stop->thread = -1;
	uint64_t v;
	if (d->pktlen < 3 || hexval((unsigned char)p[1]) < 0 || hexval((unsigned char)p[2]) < 0)
		return fail(d, "rsp: %s: malformed stop reply \"%.40s\"", what, p);
	int sig = hexval((unsigned char)p[1]) << 4 | hexval((unsigned char)p[2]);
	invalidate_regs(d);
	switch (p[0]) {
	case 'W':
	case 'X':
		stop->kind = p[0] == 'W' ? SNR_DBG_STOP_EXITED : SNR_DBG_STOP_KILLED;
		stop->code = sig;
		d->attached = false;
		return 0;
	case 'w': { /* one thread exited, others remain (snr device's pod mode) */
		stop->kind = SNR_DBG_STOP_EXITED;
		stop->code = sig;
		const char *t = p[3] == ';' ? p + 4 : NULL;
		if (!t || !*t)
			return fail(d, "rsp: %s: thread-exit reply without a thread \"%.40s\"", what, p);
		stop->thread = thread_index(d, t);
		if (stop->thread < 0)
			return fail(d, "rsp: %s: thread-exit reply names unknown thread %.20s", what, t);
		return 0;
	}
	case 'S':
	case 'T':
		break;
	default:
		return fail(d, "rsp: %s: unexpected reply \"%.40s\" where a stop reply belongs", what, p);
	}
	stop->kind = sig == 5 ? SNR_DBG_STOP_TRAP : SNR_DBG_STOP_SIGNAL;
	stop->code = sig;
	char tid[64] = "";
	/* T: pairs "key:value;" — hex keys are expedited registers */
	for (p += 3; *p;) {
		const char *colon = strchr(p, ':'), *semi = strchr(p, ';');
		if (!semi)
			semi = p + strlen(p);
		if (!colon || colon > semi)
			return fail(d, "rsp: %s: malformed stop reply field \"%.*s\"", what, (int)(semi - p), p);
		const char *k = p;
		if (parse_hex(&k, &v) && k == colon) {
			int regnum = (int)v;
			for (size_t i = 0; i < d->nregs; i++) {
				if (d->rinfo[i].regnum != regnum)
					continue;
				const char *val = colon + 1;
				if ((size_t)(semi - val) != 2 * (size_t)d->regs[i].size || !all_hex_or_x(val, (size_t)(semi - val)))
					return fail(d, "rsp: %s: expedited register %s has a malformed value", what,
						    d->regs[i].name);
				hex_to_bytes(val, d->cache + d->regs[i].offset, d->regs[i].size);
				d->cache_valid[i] = true;
				break;
			}
		} else if (colon - p == 6 && !strncmp(p, "thread", 6)) {
			size_t n = (size_t)(semi - colon - 1);
			if (n >= sizeof(tid))
				return fail(d, "rsp: %s: thread id too long", what);
			memcpy(tid, colon + 1, n);
			tid[n] = 0;
		}
		p = *semi ? semi + 1 : semi;
	}
	if (tid[0]) {
		int ti = thread_index(d, tid);
		if (ti < 0 && refresh_threads(d) == 0)
			ti = thread_index(d, tid);
		note_pid(d, tid);
		stop->thread = ti;
		/* the registers we hold are the stopped thread's; follow it
		 * (GDB does the same: it switches to the thread that stopped) */
		if (ti >= 0 && ti != d->cur_thread) {
			char cmd[80];
			snprintf(cmd, sizeof(cmd), "Hg%s", tid);
			if (expect_ok(d, cmd) < 0)
				return -1;
			d->cur_thread = ti;
		}
	} else {
		stop->thread = d->cur_thread;
	}
	if (d->pc_index >= 0) {
		size_t i = (size_t)d->pc_index;
		if (!d->cache_valid[i]) {
			int r = d->rinfo[i].in_g || d->gbytes == 0 ? fetch_g(d) : fetch_p(d, i);
			if (r < 0)
				return -1;
		}
		stop->pc = cached_u64(d, i);
	}
	return 0;
}

/* Waits for a stop reply, skipping console output ('O' packets). With
 * timeout_ms > 0, interrupts the target when it runs out and reports
 * TIMEOUT; with 0, waits as long as the program runs (a dropped connection
 * still ends the wait). */
static int wait_stop(struct snr_dbg *d, const char *what, int timeout_ms, struct snr_dbg_stop *stop)
{
	bool interrupted = false;
	int64_t deadline = timeout_ms > 0 ? now_ms() + timeout_ms : INT64_MAX;
	for (;;) {
		int r = recv_packet_until(d, deadline, what);
		if (r == -2 && timeout_ms > 0 && !interrupted) {
			d->broken = false; /* this timeout was asked for */
			if (send_all(d, "\x03", 1, "interrupt (0x03)") < 0)
				return -1;
			interrupted = true;
			deadline = now_ms() + d->timeout_ms;
			continue;
		}
		if (r == -2 && interrupted) {
			fail(d, "rsp: %s: the target did not stop within %d ms of an interrupt (0x03); "
				"QEMU's user-mode stub ignores interrupts", what, d->timeout_ms);
			d->broken = false;
			mark_broken(d);
			return -1;
		}
		if (r < 0)
			return -1;
		if (d->pkt[0] == 'O' && d->pktlen > 1 && strcmp(d->pkt, "OK"))
			continue;
		if (parse_stop(d, what, stop) < 0)
			return -1;
		if (interrupted && (stop->kind == SNR_DBG_STOP_TRAP || stop->kind == SNR_DBG_STOP_SIGNAL))
			stop->kind = SNR_DBG_STOP_TIMEOUT;
		return 0;
	}
}

/* ---- the ABI ------------------------------------------------------------ */

static void rsp_free(struct snr_dbg *d)
{
	if (d->fd >= 0)
		close(d->fd);
	free(d->pkt);
	free(d->regs);
	free(d->rinfo);
	free(d->cache);
	free(d->cache_valid);
	free(d->threads);
	free(d);
}

static int handshake(struct snr_dbg *d)
{
	/* GDB opens with an ack so a stub waiting for one is satisfied */
	if (send_all(d, "+", 1, "initial ack") < 0)
		return -1;
	if (transact(d, "qSupported:multiprocess+;swbreak+;hwbreak+;vContSupported+;xmlRegisters=i386") < 0)
		return -1;
	bool want_noack = false, has_xml = false;
	char *save = NULL;
	for (char *f = strtok_r(d->pkt, ";", &save); f; f = strtok_r(NULL, ";", &save)) {
		if (!strncmp(f, "PacketSize=", 11)) {
			const char *s = f + 11;
			uint64_t v;
			if (parse_hex(&s, &v) && !*s && v >= 64)
				d->packet_size = v > RSP_MAX_PACKET ? RSP_MAX_PACKET : v;
		} else if (!strcmp(f, "QStartNoAckMode+")) {
			want_noack = true;
		} else if (!strcmp(f, "qXfer:features:read+")) {
			has_xml = true;
		} else if (!strcmp(f, "qXfer:auxv:read+")) {
			d->has_auxv = true;
		} else if (!strcmp(f, "qXfer:snr-config:read+")) {
			d->has_snr_config = true;
		} else if (!strcmp(f, "multiprocess+")) {
			d->multiprocess = true;
		} else if (!strcmp(f, "QSnrIgnore+")) {
			d->snr_ignore = true;
		} else if (!strcmp(f, "QSnrPod+")) {
			d->snr_pod = true;
		} else if (!strcmp(f, "binary-upload+")) {
			d->binary_read = true;
		}
	}
	/* SNR_RSP_MEM=hex: memory is read in hex 'm' packets and checked by
	 * reading it back, as against a stub that has neither x nor qCRC */
	const char *mem = getenv("SNR_RSP_MEM");
	if (mem && !strcmp(mem, "hex")) {
		d->binary_read = false;
		d->no_crc = true;
	}
	if (want_noack) {
		if (expect_ok(d, "QStartNoAckMode") < 0)
			return -1;
		d->noack = true;
	}
	if (transact(d, "vCont?") < 0)
		return -1;
	if (!strncmp(d->pkt, "vCont", 5)) {
		char *s2 = NULL;
		for (char *a = strtok_r(d->pkt + 5, ";", &s2); a; a = strtok_r(NULL, ";", &s2)) {
			d->vcont_s |= !strcmp(a, "s");
			d->vcont_c |= !strcmp(a, "c");
		}
	}
	d->has_xml = has_xml;
	/* gdbserver answers qXfer:features from the current thread's
	 * process and asserts if it has none yet: pick any thread first, as
	 * GDB does (and say we understand i386 XML, or it serves a tdesc
	 * without XML) */
	if (expect_ok(d, d->multiprocess ? "Hgp0.0" : "Hg0") < 0)
		return -1;
	if (has_xml) {
		int next = 0;
		if (parse_features(d, "target.xml", 0, &next) < 0)
			return -1;
	}
	if (d->nregs == 0 && builtin_regs(d) < 0)
		return -1;
	if (finish_regs(d) < 0)
		return -1;
	if (refresh_threads(d) < 0)
		return -1;
	struct snr_dbg_stop stop;
	if (transact(d, "?") < 0)
		return -1;
	if (parse_stop(d, "?", &stop) < 0)
		return -1;
	if (stop.kind == SNR_DBG_STOP_EXITED || stop.kind == SNR_DBG_STOP_KILLED)
		return fail(d, "rsp: ?: the program has already ended");
	const char *only = getenv("SNR_RSP_REGS");
	if (only && !strcmp(only, "g")) {
		/* keep only what 'g' carries (a prefix in regnum order): one
		 * round trip per read_regs instead of one per extra register */
		if (d->gbytes == 0 && fetch_g(d) < 0)
			return -1;
		size_t n = 0;
		while (n < d->nregs && d->rinfo[n].in_g)
			n++;
		if (n == 0)
			return fail(d, "rsp: SNR_RSP_REGS=g: the 'g' reply carries no whole register");
		d->nregs = n;
		d->regbytes = d->regs[n - 1].offset + d->regs[n - 1].size;
		if (d->pc_index >= (int)n)
			d->pc_index = -1;
	} else if (only && *only && strcmp(only, "all")) {
		return fail(d, "rsp: SNR_RSP_REGS=%s: expected \"all\" or \"g\"", only);
	}
	d->attached = true;
	return 0;
}

static struct snr_dbg *rsp_open(const char *target, char *const argv[], char *err, size_t errlen)
{
	(void)argv;
	if (!target) {
		snr_fmt(err, errlen, "rsp: cannot launch a program; give a target tcp:HOST:PORT or unix:PATH "
				     "(start the program under gdbserver or qemu -g)");
		return NULL;
	}
	struct snr_dbg *d = snr_xcalloc(1, sizeof(*d));
	d->fd = -1;
	d->packet_size = 4096;
	d->z_type = '0';
	d->cur_thread = -1;
	d->timeout_ms = 5000;
	const char *t = getenv("SNR_RSP_TIMEOUT_MS");
	uint64_t v;
	if (t && snr_parse_u64(t, &v, false) && v > 0 && v < 3600000)
		d->timeout_ms = (int)v;
	/* before: 2,000 poll(0) calls per reply, the fixed spin's budget */
	if (snr_waiter_init(&d->waiter, "SNR_RSP_WAIT", 500000, 2000, err, errlen)) {
		free(d);
		return NULL;
	}
	int r;
	if (!strncmp(target, "tcp:", 4))
		r = connect_tcp(d, target + 4);
	else if (!strncmp(target, "unix:", 5))
		r = connect_unix(d, target + 5);
	else
		r = fail(d, "rsp: target %s: expected tcp:HOST:PORT or unix:PATH", target);
	if (r < 0 || handshake(d) < 0) {
		snr_fmt(err, errlen, "%s", d->err);
		rsp_free(d);
		return NULL;
	}
	return d;
}

/* The breakpoint kind Z0 wants: the trap's length in bytes. */
static int bp_kind(const struct snr_dbg *d)
{
	return strstr(d->arch, "x86") || strstr(d->arch, "i386") ? 1 : 4;
}

/* Removes every breakpoint we set: stubs remove their own on D, but a stub
 * that does not would leave traps in a program without a debugger. */
static int remove_breakpoints(struct snr_dbg *d)
{
	for (int i = d->nbps - 1; i >= 0; i--) {
		char z[64];
		snprintf(z, sizeof(z), "z%c,%llx,%d", d->bps[i].type, (unsigned long long)d->bps[i].addr,
			 bp_kind(d));
		if (transact(d, z) < 0)
			return -1;
	}
	d->nbps = 0;
	return 0;
}

static int rsp_detach(struct snr_dbg *d)
{
	if (!d->attached)
		return fail(d, "rsp: detach: not attached (the program ended or was detached)");
	if (d->broken)
		return fail(d, "rsp: detach: the connection is unusable after an earlier failure (%s)", d->broken_why);
	char cmd[32] = "D";
	if (d->multiprocess && d->stub_pid > 0)
		snprintf(cmd, sizeof(cmd), "D;%x", d->stub_pid);
	if (remove_breakpoints(d) < 0)
		return -1;
	if (expect_ok(d, cmd) < 0)
		return -1;
	d->attached = false;
	return 0;
}

static void rsp_close(struct snr_dbg *d)
{
	if (!d)
		return;
	if (d->attached)
		rsp_detach(d);
	rsp_free(d);
}

/* The connection closed without D: what the program does then is the
 * stub's choice, and the clause says so. */
static int rsp_close_stopped(struct snr_dbg *d, char *how, size_t howlen)
{
	if (d->attached && !d->broken)
		(void)remove_breakpoints(d);
	snr_fmt(how, howlen,
		"closed the connection without detaching (snr device --halt and gdbserver without --once keep the "
		"program so for the next debugger; QEMU's user-mode stub lets it run)");
	rsp_free(d);
	return 0;
}

static const char *rsp_error(struct snr_dbg *d)
{
	return d->err;
}

static const char *rsp_arch(struct snr_dbg *d)
{
	return d->arch[0] ? d->arch : NULL;
}

static int rsp_nthreads(struct snr_dbg *d)
{
	return d->nthreads > 0 ? d->nthreads : 1;
}

static int rsp_select_thread(struct snr_dbg *d, int thread)
{
	if (thread < 0 || thread >= rsp_nthreads(d))
		return fail(d, "rsp: select_thread %d: the target has %d threads", thread, rsp_nthreads(d));
	if (d->nthreads == 0 || thread == d->cur_thread)
		return 0;
	char cmd[80];
	snprintf(cmd, sizeof(cmd), "Hg%s", d->threads[thread]);
	if (expect_ok(d, cmd) < 0)
		return -1;
	d->cur_thread = thread;
	invalidate_regs(d);
	return 0;
}

static int rsp_pid(struct snr_dbg *d)
{
	return d->pid;
}

static const struct snr_dbg_reg *rsp_registers(struct snr_dbg *d, size_t *n)
{
	*n = d->nregs;
	return d->regs;
}

static int rsp_read_regs(struct snr_dbg *d, uint8_t *buf)
{
	if (!d->attached)
		return fail(d, "rsp: read_regs: the program is not running under the debugger");
	if (fill_cache(d) < 0)
		return -1;
	memcpy(buf, d->cache, d->regbytes);
	return 0;
}

/* The 'g' registers (and any expedited with the stop): one round trip at
 * most. QEMU's AArch64 stub carries only x0-x30, sp, pc and cpsr in 'g'; its
 * 34 vector and FP registers (258 with SVE and the system registers) take a
 * 'p' each (QEMU 7.2 with SVE and its system registers: 244, 21 steps/s
 * instead of 600). */
static int rsp_read_regs_cheap(struct snr_dbg *d, uint8_t *buf, bool *got)
{
	if (!d->attached)
		return fail(d, "rsp: read_regs: the program is not running under the debugger");
	bool need_g = d->gbytes == 0;
	for (size_t i = 0; i < d->nregs && !need_g; i++)
		if (!d->cache_valid[i] && d->rinfo[i].in_g)
			need_g = true;
	if (need_g && fetch_g(d) < 0)
		return -1;
	for (size_t i = 0; i < d->nregs; i++) {
		got[i] = d->cache_valid[i];
		if (got[i])
			memcpy(buf + d->regs[i].offset, d->cache + d->regs[i].offset, d->regs[i].size);
	}
	return 0;
}

/* x addr,len (gdb 16, binary-upload+): "b" and the bytes, unescaped by
 * recv_packet. 0 read (all of len), 1 the stub does not serve x after all
 * (nothing read: the caller reads in hex), -1 failed. */
static int read_mem_binary(struct snr_dbg *d, uint64_t addr, uint8_t *out, size_t len)
{
	size_t chunk = d->packet_size - 8, done = 0;
	char cmd[64];
	while (done < len) {
		size_t n = len - done < chunk ? len - done : chunk;
		uint64_t a = addr + done;
		snprintf(cmd, sizeof(cmd), "x%llx,%zx", (unsigned long long)a, n);
		if (transact(d, cmd) < 0)
			return -1;
		if (d->pktlen == 0 && done == 0) {
			d->binary_read = false;
			return 1;
		}
		if (is_error_reply(d) || d->pktlen == 0)
			return fail(d, "rsp: %s: cannot read memory at 0x%llx (stub answered \"%.40s\")", cmd,
				    (unsigned long long)a, d->pkt);
		if (d->pkt[0] != 'b' || d->pktlen - 1 > n || d->pktlen == 1)
			return fail(d, "rsp: %s: malformed reply (%zu bytes, starting \"%.8s\")", cmd, d->pktlen, d->pkt);
		/* fewer bytes than asked (a packet's worth, or the end of a
		 * mapping): go on from there */
		memcpy(out + done, d->pkt + 1, d->pktlen - 1);
		done += d->pktlen - 1;
	}
	return 0;
}

static int rsp_read_mem(struct snr_dbg *d, uint64_t addr, void *buf, size_t len)
{
	if (!d->attached)
		return fail(d, "rsp: read_mem: the program is not running under the debugger");
	if (d->binary_read) {
		int b = read_mem_binary(d, addr, buf, len);
		if (b <= 0)
			return b;
	}
	size_t chunk = (d->packet_size - 8) / 2;
	uint8_t *out = buf;
	size_t done = 0;
	char cmd[64];
	while (done < len) {
		size_t n = len - done < chunk ? len - done : chunk;
		uint64_t a = addr + done;
		snprintf(cmd, sizeof(cmd), "m%llx,%zx", (unsigned long long)a, n);
		if (transact(d, cmd) < 0)
			return -1;
		if (is_error_reply(d) || d->pktlen == 0)
			return fail(d, "rsp: %s: cannot read memory at 0x%llx (stub answered \"%s\")", cmd,
				    (unsigned long long)a, d->pkt);
		if (d->pktlen % 2 || d->pktlen / 2 > n || !all_hex_or_x(d->pkt, d->pktlen) || memchr(d->pkt, 'x', d->pktlen))
			return fail(d, "rsp: %s: malformed reply \"%.40s\"", cmd, d->pkt);
		/* a stub may return fewer bytes than asked (end of a mapping):
		 * go on from there; the next request then fails, naming it */
		hex_to_bytes(d->pkt, out + done, d->pktlen / 2);
		done += d->pktlen / 2;
	}
	return 0;
}

static void bytes_to_hex(const uint8_t *in, size_t n, char *out)
{
	static const char digits[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = digits[in[i] >> 4];
		out[2 * i + 1] = digits[in[i] & 15];
	}
	out[2 * n] = 0;
}

/* The registers 'g' carries by one 'G' (the rest of the 'g' block as the
 * stub holds it now), the others by a 'P' each: gdbserver answers no 'P'
 * on x86-64, QEMU's 'g' leaves AArch64's vector registers out. */
static int rsp_write_regs(struct snr_dbg *d, const uint8_t *buf)
{
	if (!d->attached)
		return fail(d, "rsp: write_regs: the program is not running under the debugger");
	if (d->gbytes == 0 && fetch_g(d) < 0)
		return -1;
	if (transact(d, "g") < 0)
		return -1;
	if (is_error_reply(d) || d->pktlen % 2 || d->pktlen / 2 < d->gbytes)
		return fail(d, "rsp: g: the stub answered \"%.40s\"", d->pkt);
	size_t glen = d->pktlen / 2;
	size_t room = glen;
	for (size_t i = 0; i < d->nregs; i++)
		if (d->regs[i].size > room)
			room = d->regs[i].size;
	char *cmd = snr_xmalloc(2 * room + 64);
	uint8_t *block = snr_xmalloc(glen);
	hex_to_bytes(d->pkt, block, glen);
	memcpy(block, buf, d->gbytes);
	cmd[0] = 'G';
	bytes_to_hex(block, glen, cmd + 1);
	char what[160];
	snprintf(what, sizeof(what), "writing the registers (G, the %zu-byte register block)", glen);
	int rc = expect_ok_as(d, cmd, what);
	for (size_t i = 0; i < d->nregs && !rc; i++) {
		if (d->rinfo[i].in_g || d->rinfo[i].unavailable)
			continue;
		int at = snprintf(cmd, 32, "P%x=", d->rinfo[i].regnum);
		bytes_to_hex(buf + d->regs[i].offset, d->regs[i].size, cmd + at);
		snprintf(what, sizeof(what), "writing register %.40s (P%x, %u bytes)", d->regs[i].name,
			 d->rinfo[i].regnum, (unsigned)d->regs[i].size);
		rc = expect_ok_as(d, cmd, what);
	}
	free(block);
	free(cmd);
	invalidate_regs(d);
	return rc;
}

static int rsp_write_mem(struct snr_dbg *d, uint64_t addr, const void *buf, size_t len)
{
	if (!d->attached)
		return fail(d, "rsp: write_mem: the program is not running under the debugger");
	size_t chunk = (d->packet_size - 40) / 2;
	char *cmd = snr_xmalloc(40 + 2 * chunk + 1);
	int rc = 0;
	for (size_t done = 0; done < len && !rc;) {
		size_t n = len - done < chunk ? len - done : chunk;
		int at = snprintf(cmd, 40, "M%llx,%zx:", (unsigned long long)(addr + done), n);
		bytes_to_hex((const uint8_t *)buf + done, n, cmd + at);
		char what[96];
		snprintf(what, sizeof(what), "writing memory (M, %zu bytes at 0x%llx)", n, (unsigned long long)(addr + done));
		rc = expect_ok_as(d, cmd, what);
		done += n;
	}
	free(cmd);
	return rc;
}

static int rsp_set_breakpoint(struct snr_dbg *d, uint64_t addr)
{
	if (!d->attached)
		return fail(d, "rsp: set_breakpoint: the program is not running under the debugger");
	if (d->nbps >= RSP_MAX_BREAKPOINTS)
		return fail(d, "rsp: set_breakpoint 0x%llx: more than %d breakpoints", (unsigned long long)addr,
			    RSP_MAX_BREAKPOINTS);
	char cmd[64];
	for (;;) {
		snprintf(cmd, sizeof(cmd), "Z%c,%llx,%d", d->z_type, (unsigned long long)addr, bp_kind(d));
		if (transact(d, cmd) < 0)
			return -1;
		if (!strcmp(d->pkt, "OK"))
			break;
		if (d->pktlen == 0 && d->z_type == '0') {
			d->z_type = '1'; /* no software breakpoints: try hardware ones */
			continue;
		}
		return fail(d, "rsp: %s: cannot set a breakpoint at 0x%llx (stub answered \"%.40s\")", cmd,
			    (unsigned long long)addr, d->pktlen ? d->pkt : "unsupported");
	}
	d->bps[d->nbps++] = (struct rsp_bp){.addr = addr, .type = d->z_type};
	return 0;
}

static int rsp_clear_breakpoint(struct snr_dbg *d, uint64_t addr)
{
	for (int i = 0; i < d->nbps; i++) {
		if (d->bps[i].addr != addr)
			continue;
		char cmd[64];
		snprintf(cmd, sizeof(cmd), "z%c,%llx,%d", d->bps[i].type, (unsigned long long)addr, bp_kind(d));
		if (d->attached && expect_ok(d, cmd) < 0)
			return -1;
		d->bps[i] = d->bps[--d->nbps];
		return 0;
	}
	return fail(d, "rsp: clear_breakpoint: no breakpoint at 0x%llx", (unsigned long long)addr);
}

/* Points Hc at id ("-1" for all) unless it already does. */
static int set_hc(struct snr_dbg *d, const char *id)
{
	if (!strcmp(d->hc_thread, id))
		return 0;
	char cmd[80];
	snprintf(cmd, sizeof(cmd), "Hc%s", id);
	if (expect_ok(d, cmd) < 0)
		return -1;
	snprintf(d->hc_thread, sizeof(d->hc_thread), "%s", id);
	return 0;
}

static int rsp_cont(struct snr_dbg *d, int timeout_ms, struct snr_dbg_stop *stop)
{
	if (!d->attached)
		return fail(d, "rsp: cont: the program is not running under the debugger");
	const char *cmd = "vCont;c";
	if (!d->vcont_c) {
		cmd = "c";
		if (d->hc_thread[0] && set_hc(d, "-1") < 0)
			return -1;
	}
	if (send_packet(d, cmd, cmd) < 0)
		return -1;
	return wait_stop(d, cmd, timeout_ms, stop);
}

static int rsp_cont_selected(struct snr_dbg *d, int timeout_ms, struct snr_dbg_stop *stop)
{
	const char *tid = d->cur_thread >= 0 ? d->threads[d->cur_thread] : NULL;
	if (!d->vcont_c || !tid || d->nthreads <= 1)
		return rsp_cont(d, timeout_ms, stop);
	if (!d->attached)
		return fail(d, "rsp: cont: the program is not running under the debugger");
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "vCont;c:%s", tid);
	if (send_packet(d, cmd, cmd) < 0)
		return -1;
	return wait_stop(d, cmd, timeout_ms, stop);
}

static int rsp_cont_to_hit(struct snr_dbg *d, uint64_t addr, uint64_t hits, struct snr_dbg_stop *stop)
{
	if (!d->snr_ignore || hits == 0)
		return 1;
	char cmd[96];
	snprintf(cmd, sizeof(cmd), "QSnrIgnore:%llx,%llx", (unsigned long long)addr, (unsigned long long)(hits - 1));
	if (expect_ok(d, cmd) < 0)
		return -1;
	return rsp_cont_selected(d, 0, stop);
}

int snr_dbg_rsp_pod_mode(struct snr_dbg *d)
{
	if (!d->snr_pod)
		return fail(d, "rsp: the stub does not offer QSnrPod+ (snr device does): it cannot step one chip of a "
			    "pod without running the others");
	return expect_ok(d, "QSnrPod:1") < 0 ? -1 : 0;
}

int snr_dbg_rsp_machine_config(struct snr_dbg *d, char **text)
{
	*text = NULL;
	if (!d->has_snr_config)
		return 1;
	size_t n;
	return read_xfer(d, "snr-config", "", text, &n) < 0 ? -1 : 0;
}

static int rsp_step(struct snr_dbg *d, struct snr_dbg_stop *stop)
{
	if (!d->attached)
		return fail(d, "rsp: step: the program is not running under the debugger");
	char cmd[96] = "s";
	const char *tid = d->cur_thread >= 0 ? d->threads[d->cur_thread] : NULL;
	if (d->vcont_s) {
		if (tid)
			snprintf(cmd, sizeof(cmd), "vCont;s:%s", tid);
		else
			snprintf(cmd, sizeof(cmd), "vCont;s");
	} else if (tid && set_hc(d, tid) < 0) {
		return -1;
	}
	if (send_packet(d, cmd, cmd) < 0)
		return -1;
	/* a step that blocks (a system call waiting for input) is
	 * interrupted like a cont and reported as TIMEOUT */
	return wait_stop(d, cmd, d->timeout_ms, stop);
}

static int rsp_kill(struct snr_dbg *d)
{
	if (!d->attached)
		return fail(d, "rsp: kill: the program is not running under the debugger");
	/* 'k' has no reliable reply: gdbserver sends X09 or nothing, QEMU
	 * exits and closes the connection. Wait briefly for either. */
	if (send_packet(d, "k", "k") < 0)
		return -1;
	d->attached = false;
	int saved = d->timeout_ms;
	d->timeout_ms = saved < 1000 ? saved : 1000;
	(void)recv_packet(d, "k");
	d->timeout_ms = saved;
	d->err[0] = 0;
	return 0;
}

/* The program's auxiliary vector (qXfer:auxv:read, which gdbserver offers
 * for a Linux process); 1 if the stub offers none. */
static int rsp_read_auxv(struct snr_dbg *d, uint8_t *buf, size_t cap, size_t *len)
{
	if (!d->has_auxv)
		return 1;
	char *data = NULL;
	size_t n = 0;
	if (read_xfer(d, "auxv", "", &data, &n) < 0)
		return -1;
	*len = n < cap ? n : cap;
	memcpy(buf, data, *len);
	free(data);
	return 0;
}

/* qCRC:addr,len: "C" and GDB's CRC-32 in hex. An empty or malformed reply
 * is a stub that does not serve it: 1, and qCRC is not asked again; an
 * error reply (memory it cannot read) is 1 too, and the caller reads. */
static int rsp_crc_mem(struct snr_dbg *d, uint64_t addr, size_t len, uint32_t *crc)
{
	if (!d->attached)
		return fail(d, "rsp: crc_mem: the program is not running under the debugger");
	if (d->no_crc)
		return 1;
	char cmd[64];
	snprintf(cmd, sizeof(cmd), "qCRC:%llx,%zx", (unsigned long long)addr, len);
	if (transact(d, cmd) < 0)
		return -1;
	if (is_error_reply(d))
		return 1;
	const char *s = d->pkt + 1;
	uint64_t v;
	if (d->pktlen < 2 || d->pkt[0] != 'C' || !parse_hex(&s, &v) || *s || v > 0xffffffffu) {
		d->no_crc = true;
		return 1;
	}
	*crc = (uint32_t)v;
	d->crc_ok = true;
	return 0;
}

/*
 * n qCRC packets sent together and their n replies read after: one round
 * trip for a stride's written ranges instead of one each (about 16 ranges
 * a checkpoint on the serving window, each a send, a wait and a receive on
 * both ends). Only where the stub reads its packets from a stream and
 * answers each in order without acknowledgements, which snr device
 * does (QSnrIgnore+) in no-ack mode, once a qCRC has been answered with a
 * CRC (a stub that does not serve it is asked once); any other stub is asked
 * one at a time. At most CRC_BATCH packets go out before their replies are read: neither
 * end's socket buffer fills (the requests about 40 bytes each, the replies
 * 12), so neither waits on the other to read while it cannot.
 * status[k]: 0 crc[k] is the target's, 1 it cannot tell (read instead).
 */
#define CRC_BATCH 256

int snr_dbg_rsp_crc_many(struct snr_dbg *d, size_t n, const uint64_t *addr, const size_t *len, uint32_t *crc,
			 int *status)
{
	if (!d->attached)
		return fail(d, "rsp: crc_mem: the program is not running under the debugger");
	if (d->no_crc || !d->crc_ok || !d->noack || !d->snr_ignore || n < 2) {
		for (size_t k = 0; k < n; k++)
			if ((status[k] = rsp_crc_mem(d, addr[k], len[k], &crc[k])) < 0)
				return -1;
		return 0;
	}
	if (n > CRC_BATCH) {
		for (size_t k = 0; k < n; k += CRC_BATCH)
			if (snr_dbg_rsp_crc_many(d, n - k < CRC_BATCH ? n - k : CRC_BATCH, addr + k, len + k, crc + k,
						 status + k))
				return -1;
		return 0;
	}
	if (d->broken)
		return fail(d, "rsp: qCRC: not sent: the connection is unusable after an earlier failure (%s)",
			    d->broken_why);
	size_t cap = n * 48, k0 = 0;
	char *frames = snr_xmalloc(cap);
	for (size_t k = 0; k < n; k++) {
		char cmd[64];
		int m = snprintf(cmd, sizeof(cmd), "qCRC:%llx,%zx", (unsigned long long)addr[k], len[k]);
		uint8_t sum = 0;
		for (int i = 0; i < m; i++)
			sum += (uint8_t)cmd[i]; /* hex digits, ':' and ',': nothing to escape */
		k0 += (size_t)snprintf(frames + k0, cap - k0, "$%s#%02x", cmd, sum);
	}
	int rc = send_all(d, frames, k0, "qCRC");
	free(frames);
	if (rc < 0)
		return -1;
	for (size_t k = 0; k < n; k++) {
		if (recv_packet(d, "qCRC") < 0)
			return -1;
		const char *s = d->pkt + 1;
		uint64_t v;
		status[k] = 1;
		if (is_error_reply(d))
			continue;
		if (d->pktlen < 2 || d->pkt[0] != 'C' || !parse_hex(&s, &v) || *s || v > 0xffffffffu) {
			d->no_crc = true; /* the rest of the replies are read all the same */
			continue;
		}
		crc[k] = (uint32_t)v;
		status[k] = 0;
	}
	return 0;
}

const struct snr_dbg_ops snr_dbg_rsp = {
	.abi_version = SNR_DBG_ABI_VERSION,
	.name = "rsp",
	.open = rsp_open,
	.close = rsp_close,
	.error = rsp_error,
	.arch = rsp_arch,
	.nthreads = rsp_nthreads,
	.select_thread = rsp_select_thread,
	.pid = rsp_pid,
	.registers = rsp_registers,
	.read_regs = rsp_read_regs,
	.read_mem = rsp_read_mem,
	.set_breakpoint = rsp_set_breakpoint,
	.clear_breakpoint = rsp_clear_breakpoint,
	.cont = rsp_cont,
	.step = rsp_step,
	.detach = rsp_detach,
	.kill = rsp_kill,
	.read_regs_cheap = rsp_read_regs_cheap,
	.cont_selected = rsp_cont_selected,
	.cont_to_hit = rsp_cont_to_hit,
	.write_regs = rsp_write_regs,
	.write_mem = rsp_write_mem,
	.close_stopped = rsp_close_stopped,
	.read_auxv = rsp_read_auxv,
	.crc_mem = rsp_crc_mem,
	.machine_config = snr_dbg_rsp_machine_config,
};
