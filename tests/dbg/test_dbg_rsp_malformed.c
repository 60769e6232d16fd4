/*
 * test_dbg_rsp_malformed.c: the RSP client against a scripted fake stub on
 * a unix socket (a forked child), with SNR_RSP_TIMEOUT_MS=300. Each case
 * checks that the client fails with a message naming the packet, within a
 * bounded time, and never crashes or hangs:
 *   badsum     every reply has a bad checksum (resent on '-')
 *   truncated  the qSupported reply stops before '#', the stub stays silent
 *   garbage    bytes with no '$', then the stub closes
 *   close      the stub closes at once
 *   noack      no-ack mode, then a bad checksum
 *   session    a stub without target.xml in ack mode: the built-in RISC-V
 *              table from the 'g' length, run-length-encoded 'g' with 'x'
 *              (unavailable) bytes, an escaped thread id in the stop reply,
 *              Z0 unsupported so Z1, a stop reply expediting every register
 *              (read_regs must not send 'g'), 'm' chunked by PacketSize, then
 *              an E reply, a malformed stop reply, a hang-up, and requests
 *              after it failing at once.
 *   stalled    the session stub, but this process is stopped (a signal
 *              handler sleeping past the 300 ms) while the stub's reply to
 *              qSupported arrives: a reply that is waiting when the client
 *              runs again is read, not called a timeout (a client stalled
 *              on a loaded or paused machine is no sign of a silent stub).
 */
#include <errno.h>
#include <linux/sockios.h>
#include <sys/ioctl.h>
#include <sys/un.h>

#include "tests/check.h"
#include "tests/dbg/dbg_testutil.h"

static const struct snr_dbg_ops *ops = &snr_dbg_rsp;

/* ---- the fake stub -------------------------------------------------------- */

static int stub_fd;
static char last_reply[2048];
static int stall_pipe[2] = {-1, -1}; /* "stalled": the stub tells the client's handler it replied */
static int stalling_pipe[2] = {-1, -1}; /* and the handler tells the stub it runs */

static void put(const char *s, size_t n)
{
	if (write(stub_fd, s, n) < 0)
		_exit(0);
}

static void reply(const char *payload)
{
	uint8_t sum = 0;
	for (const char *p = payload; *p; p++)
		sum += (uint8_t)*p;
	snprintf(last_reply, sizeof(last_reply), "$%s#%02x", payload, sum);
	put(last_reply, strlen(last_reply));
}

/* Reads the next packet into buf (acking it when ack is set); on '-'
 * resends the last reply. Exits when the client goes away. */
static void next_packet(char *buf, size_t len, int ack)
{
	char c;
	for (;;) {
		if (read(stub_fd, &c, 1) != 1)
			_exit(0);
		if (c == '-')
			put(last_reply, strlen(last_reply));
		if (c == '$')
			break;
	}
	size_t n = 0;
	while (read(stub_fd, &c, 1) == 1 && c != '#')
		if (n + 1 < len)
			buf[n++] = c;
	buf[n] = 0;
	char cs[2];
	if (read(stub_fd, cs, 2) != 2)
		_exit(0);
	if (ack)
		put("+", 1);
}

/* Hex digits with runs of '0' run-length encoded ('*' + count char). */
static void rle_zeros(const char *hex, char *out)
{
	size_t o = 0;
	for (size_t i = 0; hex[i];) {
		size_t run = 1;
		while (hex[i + run] == hex[i])
			run++;
		out[o++] = hex[i];
		size_t rem = run - 1;
		while (rem >= 3) {
			size_t r = rem > 97 ? 97 : rem;
			if (r + 29 == '#' || r + 29 == '$')
				r = 5;
			out[o++] = '*';
			out[o++] = (char)(r + 29);
			rem -= r;
		}
		while (rem--)
			out[o++] = hex[i];
		i += run;
	}
	out[o] = 0;
}

/* Waits, at most 10 s, until process pid has read all the stub sent (the
 * '+') and sleeps (state S in /proc/PID/stat): in its wait for the reply. */
static void wait_asleep(pid_t pid)
{
	char path[64], buf[256];
	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	for (int i = 0; i < 10000; i++) {
		int fd = open(path, O_RDONLY);
		ssize_t n = fd < 0 ? -1 : read(fd, buf, sizeof(buf) - 1);
		if (fd >= 0)
			close(fd);
		const char *p = n > 0 ? (buf[n] = 0, strrchr(buf, ')')) : NULL;
		int unread = -1;
		if (p && p[1] == ' ' && p[2] == 'S' && ioctl(stub_fd, SIOCOUTQ, &unread) == 0 && unread == 0)
			return;
		struct timespec ts = {.tv_sec = 0, .tv_nsec = 1000000L};
		nanosleep(&ts, NULL);
	}
}

static void stub_session(void)
{
	char pkt[1024], buf[2048];
	int steps = 0, g_refused = 0;
	for (;;) {
		next_packet(pkt, sizeof(pkt), 1);
		if (!strncmp(pkt, "qSupported", 10)) {
			if (stall_pipe[1] >= 0) {
				wait_asleep(getppid()); /* in its poll() for the reply */
				kill(getppid(), SIGUSR1); /* the client stalls from now on */
				char c;
				if (read(stalling_pipe[0], &c, 1) != 1)
					_exit(1);
			}
			reply("PacketSize=200;multiprocess-");
			if (stall_pipe[1] >= 0 && write(stall_pipe[1], "r", 1) != 1)
				_exit(1);
		} else if (pkt[0] == 'H') {
			reply("OK");
		} else if (!strcmp(pkt, "qfThreadInfo")) {
			reply("m1,2");
		} else if (!strcmp(pkt, "qsThreadInfo")) {
			reply("l");
		} else if (!strcmp(pkt, "?")) {
			/* thread:2 with the '2' escaped as '}' 0x12 */
			reply("T05thread:}\x12;");
		} else if (!strcmp(pkt, "g") && g_refused) {
			reply("E01");
		} else if (!strcmp(pkt, "g")) {
			char hex[33 * 16 + 1];
			memset(hex, '0', 33 * 16);
			hex[33 * 16] = 0;
			memcpy(hex + 10 * 16, "3412", 4);         /* a0 = 0x1234 */
			memcpy(hex + 32 * 16, "0000010000000000", 16); /* pc = 0x10000 */
			memset(hex + 31 * 16, 'x', 16);                /* t6 unavailable */
			rle_zeros(hex, buf);
			reply(buf);
		} else if (pkt[0] == 'm') {
			unsigned long long a;
			unsigned n;
			if (sscanf(pkt, "m%llx,%x", &a, &n) != 2 || n > 252 || (a >> 16) == 0xdead) {
				reply("E14");
				continue;
			}
			for (unsigned i = 0; i < n; i++)
				snprintf(buf + 2 * i, 3, "%02x", (unsigned)((a + i) & 0xff));
			reply(buf);
		} else if (!strncmp(pkt, "Z1,", 3) || !strncmp(pkt, "z1,", 3)) {
			reply("OK"); /* only hardware breakpoints */
		} else if (pkt[0] == 's' && steps == 0) {
			/* every register expedited (regnum 0x0a = a0, 0x20 = pc);
			 * from now on 'g' fails, so read_regs must not send one */
			size_t o = (size_t)snprintf(buf, sizeof(buf), "T05");
			for (int r = 0; r < 33; r++)
				o += (size_t)snprintf(buf + o, sizeof(buf) - o, "%x:%016llx;", r,
						      r == 10 ? 0x7856000000000000ull : r == 32 ? 0x0400010000000000ull : 0ull);
			snprintf(buf + o, sizeof(buf) - o, "thread:2;");
			reply(buf);
			steps++;
			g_refused = 1;
		} else if (pkt[0] == 's') {
			if (steps++ == 1)
				reply("Tzz");
			else
				_exit(0); /* hang up */
		} else {
			reply("");
		}
	}
}

static void run_stub(const char *scenario)
{
	char pkt[1024];
	if (!strcmp(scenario, "close"))
		_exit(0);
	if (!strcmp(scenario, "session") || !strcmp(scenario, "stalled"))
		stub_session();
	next_packet(pkt, sizeof(pkt), 1);
	if (!strcmp(scenario, "badsum")) {
		snprintf(last_reply, sizeof(last_reply), "$PacketSize=1000#00");
		put(last_reply, strlen(last_reply));
		for (;;)
			next_packet(pkt, sizeof(pkt), 1);
	} else if (!strcmp(scenario, "truncated")) {
		put("$PacketSize=1000;QSt", 20);
		sleep(10);
	} else if (!strcmp(scenario, "garbage")) {
		for (int i = 0; i < 50; i++)
			put("x#*}", 4);
	} else if (!strcmp(scenario, "noack")) {
		reply("PacketSize=400;QStartNoAckMode+");
		next_packet(pkt, sizeof(pkt), 1); /* QStartNoAckMode */
		reply("OK");
		next_packet(pkt, sizeof(pkt), 0); /* vCont? */
		put("$vCont;c;s#00", 13);
		sleep(10);
	}
	_exit(0);
}

/* Starts the stub for scenario on path; returns its pid. */
static pid_t start_stub(const char *path, const char *scenario)
{
	unlink(path);
	int lfd = socket(AF_UNIX, SOCK_STREAM, 0);
	struct sockaddr_un sa = {.sun_family = AF_UNIX};
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (lfd < 0 || bind(lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(lfd, 1) < 0) {
		fprintf(stderr, "stub socket %s: %s\n", path, strerror(errno));
		exit(1);
	}
	pid_t pid = fork();
	if (pid == 0) {
		stub_fd = accept(lfd, NULL, NULL);
		if (stub_fd < 0)
			_exit(1);
		run_stub(scenario);
		_exit(0);
	}
	close(lfd);
	return pid;
}

static double now_s(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* open() must fail, quickly, with a message containing want1 and want2. */
static void expect_open_fails(const char *path, const char *scenario, const char *want1, const char *want2)
{
	char target[256], err[512] = "";
	pid_t stub = start_stub(path, scenario);
	snprintf(target, sizeof(target), "unix:%s", path);
	double t0 = now_s();
	struct snr_dbg *d = ops->open(target, NULL, err, sizeof(err));
	double dt = now_s() - t0;
	fprintf(stderr, "%-9s -> %s (%.2f s)\n", scenario, err, dt);
	CHECK(d == NULL, "%s: open succeeded", scenario);
	if (d)
		ops->close(d);
	/* A stub that hangs up at once may be gone before the client's first
	 * byte (its '+') is sent: then the error names that stage instead. */
	bool hung_up_first = !strcmp(scenario, "close") && strstr(err, "rsp: sending initial ack:");
	CHECK(hung_up_first || (strstr(err, want1) && strstr(err, want2)), "%s: error \"%s\" lacks \"%s\" / \"%s\"",
	      scenario, err, want1, want2);
	CHECK(dt < 10.0, "%s: open took %.2f s", scenario, dt);
	kill(stub, SIGKILL);
	waitpid(stub, NULL, 0);
}

static void test_session(const char *path)
{
	char target[256], err[512] = "";
	pid_t stub = start_stub(path, "session");
	snprintf(target, sizeof(target), "unix:%s", path);
	struct snr_dbg *d = ops->open(target, NULL, err, sizeof(err));
	CHECK(d != NULL, "session: open: %s", err);
	if (!d) {
		kill(stub, SIGKILL);
		waitpid(stub, NULL, 0);
		return;
	}
	CHECK(ops->arch(d) && !strcmp(ops->arch(d), "riscv:rv64"), "session: arch %s (built-in table by 'g' length)",
	      ops->arch(d) ? ops->arch(d) : "(null)");
	CHECK(ops->nthreads(d) == 2, "session: %d threads, expected 2", ops->nthreads(d));
	size_t n;
	const struct snr_dbg_reg *regs = ops->registers(d, &n);
	CHECK(n == 33 && !strcmp(regs[10].name, "a0") && !strcmp(regs[32].name, "pc"), "session: %zu registers", n);
	uint8_t rbuf[33 * 8];
	CHECK(ops->read_regs(d, rbuf) == 0, "session: read_regs: %s", ops->error(d));
	CHECK(dbgt_reg(regs, n, rbuf, "a0") == 0x1234 && dbgt_reg(regs, n, rbuf, "pc") == 0x10000,
	      "session: a0 0x%llx pc 0x%llx from the run-length-encoded 'g'",
	      (unsigned long long)dbgt_reg(regs, n, rbuf, "a0"), (unsigned long long)dbgt_reg(regs, n, rbuf, "pc"));
	CHECK(dbgt_reg(regs, n, rbuf, "t6") == 0, "session: unavailable t6 reads 0x%llx, not 0",
	      (unsigned long long)dbgt_reg(regs, n, rbuf, "t6"));
	CHECK(ops->set_breakpoint(d, 0x10008) == 0, "session: set_breakpoint (Z0 unsupported, Z1 works): %s",
	      ops->error(d));
	CHECK(ops->clear_breakpoint(d, 0x10008) == 0, "session: clear_breakpoint: %s", ops->error(d));

	uint8_t mem[600];
	CHECK(ops->read_mem(d, 0x20000, mem, sizeof(mem)) == 0, "session: read_mem 600 bytes: %s", ops->error(d));
	int bad = 0;
	for (int i = 0; i < 600; i++)
		bad += mem[i] != (uint8_t)i;
	CHECK(bad == 0, "session: %d bytes wrong across 'm' chunks", bad);
	CHECK(ops->read_mem(d, 0xdead0000, mem, 4) < 0 && strstr(ops->error(d), "0xdead0000"),
	      "session: read_mem of a bad address: \"%s\"", ops->error(d));

	struct snr_dbg_stop st;
	CHECK(ops->step(d, &st) == 0 && st.kind == SNR_DBG_STOP_TRAP && st.pc == 0x10004 && st.thread == 1,
	      "session: step: kind %d pc 0x%llx thread %d: %s", st.kind, (unsigned long long)st.pc, st.thread,
	      ops->error(d));
	CHECK(ops->read_regs(d, rbuf) == 0 && dbgt_reg(regs, n, rbuf, "a0") == 0x5678,
	      "session: read_regs after a stop that expedited every register sent 'g' or got a0 0x%llx: %s",
	      (unsigned long long)dbgt_reg(regs, n, rbuf, "a0"), ops->error(d));
	double t0 = now_s();
	CHECK(ops->step(d, &st) < 0 && strstr(ops->error(d), "malformed stop reply"),
	      "session: step with reply Tzz: \"%s\"", ops->error(d));
	CHECK(ops->step(d, &st) < 0 && strstr(ops->error(d), "rsp: s:") && strstr(ops->error(d), "closed"),
	      "session: step, stub hangs up: \"%s\"", ops->error(d));
	CHECK(ops->cont(d, 0, &st) < 0 && strstr(ops->error(d), "unusable") && strstr(ops->error(d), "closed"),
	      "session: cont after the hang-up: \"%s\"", ops->error(d));
	CHECK(ops->read_mem(d, 0x20000, mem, 4) < 0, "session: read_mem after hang-up succeeded");
	ops->close(d); /* tries to detach over a dead connection: must return */
	CHECK(now_s() - t0 < 12.0, "session: error paths took %.2f s", now_s() - t0);
	kill(stub, SIGKILL);
	waitpid(stub, NULL, 0);
}

/* The client's stall: until the stub has written its reply, then past the
 * client's 300 ms timeout, so that the reply waits in the socket and the
 * deadline has gone by when the client runs again. */
static void stall(int sig)
{
	(void)sig;
	char c;
	if (write(stalling_pipe[1], "s", 1) != 1 || read(stall_pipe[0], &c, 1) != 1)
		return;
	struct timespec ts = {.tv_sec = 0, .tv_nsec = 450 * 1000000L};
	nanosleep(&ts, NULL);
}

static void test_stalled(const char *path)
{
	char target[256], err[512] = "";
	CHECK(pipe(stall_pipe) == 0 && pipe(stalling_pipe) == 0, "pipe: %s", strerror(errno));
	struct sigaction sa = {.sa_handler = stall}, old;
	sigaction(SIGUSR1, &sa, &old);
	/* blocking waits: the stall interrupts the client's poll() (a spinning
	 * client may be stopped between two polls instead and find the reply) */
	setenv("SNR_RSP_WAIT", "block", 1);
	pid_t stub = start_stub(path, "stalled");
	snprintf(target, sizeof(target), "unix:%s", path);
	struct snr_dbg *d = ops->open(target, NULL, err, sizeof(err));
	fprintf(stderr, "stalled   -> %s\n", d ? "opened" : err);
	CHECK(d != NULL, "stalled: a reply that waited while the client was stopped was called a timeout: %s", err);
	if (d)
		ops->close(d);
	unsetenv("SNR_RSP_WAIT");
	kill(stub, SIGKILL);
	waitpid(stub, NULL, 0);
	sigaction(SIGUSR1, &old, NULL);
	for (int i = 0; i < 2; i++) {
		close(stall_pipe[i]);
		close(stalling_pipe[i]);
		stall_pipe[i] = stalling_pipe[i] = -1;
	}
}

int main(void)
{
	signal(SIGPIPE, SIG_IGN);
	setenv("SNR_RSP_TIMEOUT_MS", "300", 1);
	char path[] = "/tmp/snr-fake-stub-XXXXXX";
	if (!mkdtemp(path)) {
		perror("mkdtemp");
		return 1;
	}
	char sock[sizeof(path) + 16];
	snprintf(sock, sizeof(sock), "%s/s", path);

	expect_open_fails(sock, "badsum", "qSupported", "checksum");
	expect_open_fails(sock, "truncated", "qSupported", "truncated");
	expect_open_fails(sock, "garbage", "qSupported", "closed");
	expect_open_fails(sock, "close", "rsp: ", "qSupported");
	expect_open_fails(sock, "noack", "vCont?", "checksum");
	test_session(sock);
	test_stalled(sock);

	char err[256];
	CHECK(ops->open("serial:/dev/ttyS0", NULL, err, sizeof(err)) == NULL && strstr(err, "serial:/dev/ttyS0"),
	      "unknown target kind: %s", err);
	CHECK(ops->open("tcp:nohostport", NULL, err, sizeof(err)) == NULL && strstr(err, "tcp:HOST:PORT"),
	      "bad tcp target: %s", err);
	unlink(sock);
	rmdir(path);
	return check_report("test_dbg_rsp_malformed");
}
