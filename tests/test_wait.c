/*
 * test_wait.c: the decisions of lib/snr_wait.c's adaptive wait, made
 * deterministic by injecting its clock and its count of runnable tasks:
 * spin only when a CPU is free for the peer (runnable tasks at most the
 * CPUs in two looks in a row), the count looked at no more than every 2 ms
 * (250 us to confirm a busy count), spins that run out twice in a row backing
 * off, a descheduled spin looking again, and the fixed spin and block modes. The socket is a
 * socketpair made readable (or not) by the test, and every blocking wait has
 * a timeout of 0, so nothing here depends on the machine's speed or load.
 */
#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "lib/snr_wait.h"
#include "tests/check.h"

/* the injected clock: each call returns now and then advances it by step */
static int64_t fake_now, fake_step;
static int64_t fake_clock(void)
{
	int64_t t = fake_now;
	fake_now += fake_step;
	return t;
}

static int fake_runnable, runnable_looks;
static int fake_count(void)
{
	runnable_looks++;
	return fake_runnable;
}

static void fake_waiter(struct snr_waiter *w, int64_t spin_ns, unsigned cpus)
{
	char err[128];
	unsetenv("SNR_TEST_WAIT");
	CHECK(snr_waiter_init(w, "SNR_TEST_WAIT", spin_ns, 0, err, sizeof(err)) == 0, "init: %s", err);
	CHECK(w->mode == SNR_WAIT_ADAPTIVE, "unset: adaptive");
	w->clock_ns = fake_clock;
	w->count_runnable = fake_count;
	w->cpus = cpus;
	fake_now = 1000000000;
	fake_step = 0;
	runnable_looks = 0;
}

static void make_readable(int tx, int rx, bool readable)
{
	char b[16];
	while (recv(rx, b, sizeof(b), MSG_DONTWAIT) > 0)
		;
	if (readable)
		CHECK(send(tx, "x", 1, 0) == 1, "send");
}

static void test_cpu_free(int tx, int rx)
{
	struct snr_waiter w;
	fake_waiter(&w, 200000, 2);

	/* 2 runnable on 2 CPUs (this end and the peer): spin, the reply is
	 * caught by the first poll, nothing blocks */
	fake_runnable = 2;
	make_readable(tx, rx, true);
	CHECK(snr_wait_readable(&w, rx, 0) == 1, "readable");
	CHECK(w.spins_won == 1 && w.blocked == 0 && w.busy_blocked == 0,
	      "spun: won %llu blocked %llu busy %llu", (unsigned long long)w.spins_won,
	      (unsigned long long)w.blocked, (unsigned long long)w.busy_blocked);
	CHECK(runnable_looks == 1, "one look, got %d", runnable_looks);

	/* a third runnable task within 2 ms of the look: not seen yet */
	fake_runnable = 3;
	fake_now += 1999999;
	CHECK(snr_wait_readable(&w, rx, 0) == 1, "readable");
	CHECK(w.spins_won == 2 && runnable_looks == 1, "still spinning on the old look: won %llu looks %d",
	      (unsigned long long)w.spins_won, runnable_looks);

	/* 2 ms after the look: seen, but one busy look after a free one is
	 * not believed yet: the wait still spins, and the count is looked at
	 * again 250 us later */
	fake_now += 1;
	CHECK(snr_wait_readable(&w, rx, 0) == 1, "readable");
	CHECK(runnable_looks == 2, "looked again, got %d", runnable_looks);
	CHECK(w.spins_won == 3 && w.busy_blocked == 0 && w.blocked == 0,
	      "one busy look: still spun: won %llu busy %llu blocked %llu", (unsigned long long)w.spins_won,
	      (unsigned long long)w.busy_blocked, (unsigned long long)w.blocked);
	fake_now += 249999;
	snr_wait_readable(&w, rx, 0);
	CHECK(runnable_looks == 2 && w.spins_won == 4, "not yet 250 us: looks %d", runnable_looks);

	/* the second busy look, 250 us after the first: the wait blocks at
	 * once although the socket is readable (poll with the caller's
	 * timeout answers) */
	fake_now += 1;
	CHECK(snr_wait_readable(&w, rx, 0) == 1, "readable");
	CHECK(runnable_looks == 3, "looked again, got %d", runnable_looks);
	CHECK(w.spins_won == 4 && w.busy_blocked == 1 && w.blocked == 1,
	      "blocked: won %llu busy %llu blocked %llu", (unsigned long long)w.spins_won,
	      (unsigned long long)w.busy_blocked, (unsigned long long)w.blocked);

	/* and keeps blocking until a look (2 ms later) finds a CPU free again */
	fake_runnable = 2;
	for (int i = 0; i < 5; i++)
		snr_wait_readable(&w, rx, 0);
	CHECK(w.busy_blocked == 6 && runnable_looks == 3,
	      "5 more blocked on the old look: busy %llu looks %d", (unsigned long long)w.busy_blocked,
	      runnable_looks);
	fake_now += 2000000;
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_won == 5 && w.busy_blocked == 6 && runnable_looks == 4,
	      "spinning again: won %llu busy %llu", (unsigned long long)w.spins_won,
	      (unsigned long long)w.busy_blocked);

	/* a busy moment between free looks never blocks */
	fake_runnable = 3;
	fake_now += 2000000;
	snr_wait_readable(&w, rx, 0);
	fake_runnable = 2;
	fake_now += 250000;
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_won == 7 && w.busy_blocked == 6 && runnable_looks == 6,
	      "a moment's third task: won %llu busy %llu looks %d", (unsigned long long)w.spins_won,
	      (unsigned long long)w.busy_blocked, runnable_looks);

	/* a count that cannot be read leaves the spin to its own record */
	fake_runnable = -1;
	fake_now += 2000000;
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_won == 8 && w.busy_blocked == 6, "unknown count: spun");

	/* 4 CPUs: 4 runnable still leave one for the peer, 5 do not */
	fake_waiter(&w, 200000, 4);
	fake_runnable = 4;
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_won == 1 && w.busy_blocked == 0, "4 of 4: spun");
	fake_runnable = 5;
	fake_now += 2000000;
	snr_wait_readable(&w, rx, 0);
	fake_now += 250000;
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_won == 2 && w.busy_blocked == 1, "5 of 4, twice: blocked");
	make_readable(tx, rx, false);
}

static void test_budget(int tx, int rx)
{
	struct snr_waiter w;
	fake_waiter(&w, 200000, 2);
	fake_runnable = 1;

	/* a reply there: caught by the spin */
	make_readable(tx, rx, true);
	CHECK(snr_wait_readable(&w, rx, 0) == 1, "readable");
	CHECK(w.spins_won == 1 && w.blocked == 0, "caught");

	/* nothing comes: polls 10 us apart run out the 200 us; a first
	 * failure costs only this wait's blocking poll, as the fixed spin */
	make_readable(tx, rx, false);
	fake_step = 10000;
	CHECK(snr_wait_readable(&w, rx, 0) == 0, "timed out");
	CHECK(w.spins_lost == 1 && w.failures == 1 && w.block_left == 0 && w.blocked == 1,
	      "lost once: lost %llu failures %u block_left %u blocked %llu", (unsigned long long)w.spins_lost,
	      w.failures, w.block_left, (unsigned long long)w.blocked);

	/* the second in a row: the next wait blocks without spinning, the
	 * one after probes */
	CHECK(snr_wait_readable(&w, rx, 0) == 0, "timed out");
	CHECK(w.spins_lost == 2 && w.failures == 2 && w.block_left == 1 && w.blocked == 2,
	      "lost twice: lost %llu failures %u block_left %u", (unsigned long long)w.spins_lost, w.failures,
	      w.block_left);
	fake_step = 0;
	make_readable(tx, rx, true);
	snr_wait_readable(&w, rx, 0);
	CHECK(w.blocked == 3 && w.spins_won == 1 && w.busy_blocked == 0,
	      "backed off once: blocked %llu won %llu", (unsigned long long)w.blocked,
	      (unsigned long long)w.spins_won);
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_won == 2 && w.failures == 0, "probe caught the reply: won %llu failures %u",
	      (unsigned long long)w.spins_won, w.failures);

	/* failures in a row double the back-off, up to 16 waits */
	make_readable(tx, rx, false);
	fake_step = 10000;
	const unsigned expect[] = {0, 1, 2, 4, 8, 16, 16, 16, 16};
	for (int i = 0; i < 9; i++) {
		w.block_left = 0;
		snr_wait_readable(&w, rx, 0);
		CHECK(w.block_left == expect[i], "failure %d: back-off %u, expected %u", i + 1, w.block_left,
		      expect[i]);
	}
}

static void test_descheduled(int tx, int rx)
{
	struct snr_waiter w;
	fake_waiter(&w, 200000, 2);
	fake_runnable = 2;
	make_readable(tx, rx, false);
	/* polls 60 us apart: this task lost its CPU between them; the spin
	 * ends at once (well within the 200 us budget), with no back-off (a
	 * virtual machine's vCPU taken away for a moment), and the next wait
	 * looks at the runnable count again, not 2 ms later */
	fake_step = 60000;
	snr_wait_readable(&w, rx, 0);
	CHECK(w.spins_lost == 1 && w.descheduled == 1 && w.failures == 0 && w.block_left == 0,
	      "descheduled: lost %llu failures %u", (unsigned long long)w.spins_lost, w.failures);
	CHECK(runnable_looks == 1, "one look so far, got %d", runnable_looks);
	fake_step = 0;
	fake_runnable = 3;
	make_readable(tx, rx, true);
	snr_wait_readable(&w, rx, 0);
	CHECK(runnable_looks == 2 && w.spins_won == 1, "looked again at once: looks %d", runnable_looks);
	/* really busy: the confirming look 250 us later blocks */
	fake_now += 250000;
	snr_wait_readable(&w, rx, 0);
	CHECK(runnable_looks == 3 && w.busy_blocked == 1, "confirmed: looks %d busy %llu", runnable_looks,
	      (unsigned long long)w.busy_blocked);
	make_readable(tx, rx, false);
}

static void test_modes(int tx, int rx)
{
	char err[128];
	struct snr_waiter w;
	make_readable(tx, rx, false);

	setenv("SNR_TEST_WAIT", "spin", 1);
	CHECK(snr_waiter_init(&w, "SNR_TEST_WAIT", 0, 50, err, sizeof(err)) == 0 && w.mode == SNR_WAIT_SPIN,
	      "spin");
	w.count_runnable = fake_count;
	runnable_looks = 0;
	fake_runnable = 100;
	/* the fixed spin: its 50 polls whatever the load, then blocks */
	CHECK(snr_wait_readable(&w, rx, 0) == 0, "spin timed out");
	CHECK(w.blocked == 1 && w.busy_blocked == 0 && runnable_looks == 0, "fixed spin ignores the load");
	make_readable(tx, rx, true);
	CHECK(snr_wait_readable(&w, rx, 0) == 1 && w.blocked == 1, "fixed spin caught the byte");

	setenv("SNR_TEST_WAIT", "block", 1);
	CHECK(snr_waiter_init(&w, "SNR_TEST_WAIT", 200000, 0, err, sizeof(err)) == 0 &&
		  w.mode == SNR_WAIT_BLOCK,
	      "block");
	CHECK(snr_wait_readable(&w, rx, 0) == 1 && w.blocked == 1 && w.spins_won == 0, "block never spins");

	setenv("SNR_TEST_WAIT", "adaptive", 1);
	CHECK(snr_waiter_init(&w, "SNR_TEST_WAIT", 200000, 0, err, sizeof(err)) == 0 &&
		  w.mode == SNR_WAIT_ADAPTIVE,
	      "adaptive");
	setenv("SNR_TEST_WAIT", "fast", 1);
	CHECK(snr_waiter_init(&w, "SNR_TEST_WAIT", 200000, 0, err, sizeof(err)) == -1, "bad mode refused");
	CHECK(strstr(err, "SNR_TEST_WAIT=fast") && strstr(err, "adaptive, spin or block"), "message: %s",
	      err);
	unsetenv("SNR_TEST_WAIT");
	CHECK(w.cpus >= 1, "online CPUs");
	make_readable(tx, rx, false);
}

/* how many of this process's descriptors are /proc/loadavg */
static int loadavg_fds(void)
{
	DIR *dir = opendir("/proc/self/fd");
	if (!dir)
		return -1;
	int n = 0;
	struct dirent *e;
	while ((e = readdir(dir))) {
		char path[300], target[300];
		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		ssize_t len = readlink(path, target, sizeof(target) - 1);
		if (len > 0) {
			target[len] = 0;
			n += !strcmp(target, "/proc/loadavg");
		}
	}
	closedir(dir);
	return n;
}

int main(void)
{
	int sv[2];
	if (socketpair(AF_UNIX, SOCK_STREAM, 0, sv)) {
		perror("socketpair");
		return 1;
	}
	test_cpu_free(sv[0], sv[1]);
	test_budget(sv[0], sv[1]);
	test_descheduled(sv[0], sv[1]);
	test_modes(sv[0], sv[1]);
	/* the real count: at least this task, which is running */
	int n = snr_count_runnable();
	CHECK(n >= 1, "runnable tasks from /proc/loadavg: %d", n);
	/* looked at again and again through one descriptor kept open (one
	 * pread a look, not an open, a read and a close) */
	for (int k = 0; k < 100; k++)
		CHECK(snr_count_runnable() >= 1, "look %d", k);
	CHECK(loadavg_fds() == 1, "/proc/loadavg open %d times after 101 looks, expected once", loadavg_fds());
	close(sv[0]);
	close(sv[1]);
	return check_report("test_wait");
}
