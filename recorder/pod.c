/*
 * pod.c: `snr record --pod` (see pod.h).
 *
 * Each chip is recorded by the recorder of one chip (snr_record, Algorithm
 * 1) on a thread of its own, through a debugger backend of this file's that
 * stands for one chip of the pod on the one connection to the device. Only
 * one of these threads runs at a time: the one whose turn it is. A thread
 * keeps the turn for up to TURN_STEPS instructions of its chip, or until
 * its chip's step blocks at a ta.wait (the device's pod mode stops such a
 * step at once, the pc and instret unchanged), then passes it to the next
 * chip in order. So the chips' instructions interleave in a fixed order, no
 * chip runs unrecorded inside the windows, and the run is the same every
 * time. The threads are the recorder's loops kept side by side, not
 * parallelism: the device answers one request at a time anyway.
 *
 * Before the windows: each chip's recorder continues its chip alone to the
 * breakpoint (the device runs only the resumed chip in pod mode); a chip
 * that blocks on the way passes the turn. A chip at its hit waits there
 * (stopped) until every chip has hit; the breakpoint is then cleared and the
 * windows start together. A chip that exits or faults before its hit, or
 * blocks while no chip still on its way can signal it, fails the recording.
 */
#include "recorder/pod.h"

#include <jansson.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_lines.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"
#include "recorder/machine_config.h"

#define TURN_STEPS 256 /* instructions a chip runs per turn */
#define POD_FLAGS 16   /* TA1's sync flags, registers flag0..flag15 */

enum phase {
	TO_HIT,    /* running to its breakpoint hit */
	AT_HIT,    /* stopped at it, waiting for the other chips to hit */
	WINDOW,    /* recording its window */
	DONE,      /* its recorder returned */
};

struct pod;

struct snr_dbg { /* one chip of the pod, as a debugger connection */
	struct pod *p;
	unsigned k;
	enum phase phase;
	uint64_t hits;       /* hits of the breakpoint reached */
	bool owe;            /* its turn ends at its next request */
	unsigned turn_steps; /* steps in this turn */
	bool blocked;        /* its last step or continue blocked */
	uint64_t blocked_pc;
	uint64_t flags[POD_FLAGS]; /* its sync flags when the windows started */
	char err[1024];
	/* the recorder of this chip */
	pthread_t th;
	struct snr_record_opts o;
	char *out_path;
	int rc;
	char rerr[4096];
};

struct pod {
	pthread_mutex_t mu;
	pthread_cond_t cv;
	const struct snr_dbg_ops *real;
	struct snr_dbg *d; /* the device */
	unsigned n;
	struct snr_dbg *chips;
	int turn;     /* the chip whose thread runs; -1: none */
	int selected; /* the chip selected on the device, -1 unknown */
	uint64_t skip;
	uint64_t bp;
	bool have_bp;
	bool started; /* every chip hit: the windows run */
	unsigned streak; /* turns in a row that ended blocked with no progress */
	bool failed;
	char why[4096]; /* what ended the pod's recording, if failed */
	struct snr_lines *lines; /* of --elf: where a chip waits, by file:line */
	size_t instret_off, regs_len;
	long flag_off[POD_FLAGS]; /* offsets of flag0..flag15 in the register buffer, -1 if absent */
	uint8_t *regbuf;
};

static __thread struct snr_dbg *pod_self; /* the chip a recorder thread opens */

/* ---- turns --------------------------------------------------------------- */

static bool runnable(const struct pod *p, const struct snr_dbg *c)
{
	return c->phase == TO_HIT || (p->started && c->phase == WINDOW);
}

static int select_chip(struct snr_dbg *c);

/* Every chip is at its hit (or done): the windows start. Called locked. */
static void start_windows(struct pod *p)
{
	for (unsigned i = 0; i < p->n; i++) {
		struct snr_dbg *c = &p->chips[i];
		if (c->phase != AT_HIT)
			continue;
		c->phase = WINDOW;
		/* the flags as the windows start: a flag a chip's window reads
		 * first after a peer signalled it is captured with that signal in
		 * its count, which a replay of the pod sends again */
		if (!p->failed && (select_chip(c) || p->real->read_regs(p->d, p->regbuf))) {
			p->failed = true;
			snr_fmt(p->why, sizeof(p->why), "reading chip %u's flags at the windows' start: %s", i,
				p->real->error(p->d));
		}
		for (unsigned f = 0; f < POD_FLAGS && !p->failed; f++)
			if (p->flag_off[f] >= 0)
				memcpy(&c->flags[f], p->regbuf + p->flag_off[f], 8);
	}
	p->started = true;
	p->streak = 0;
	if (p->have_bp && !p->failed) {
		if (p->real->clear_breakpoint(p->d, p->bp)) {
			p->failed = true;
			snr_fmt(p->why, sizeof(p->why), "clearing the breakpoint after every chip hit it: %s",
				p->real->error(p->d));
		}
	}
}

/* The turn goes to the next runnable chip after `from`. Called locked. */
static void pass_turn(struct pod *p, unsigned from)
{
	for (int pass = 0; pass < 2; pass++) {
		for (unsigned j = 1; j <= p->n; j++) {
			struct snr_dbg *c = &p->chips[(from + j) % p->n];
			if (runnable(p, c)) {
				p->turn = (int)c->k;
				c->turn_steps = 0;
				pthread_cond_broadcast(&p->cv);
				return;
			}
		}
		if (p->started)
			break;
		start_windows(p); /* nothing runs to its hit any more */
	}
	p->turn = -1;
	pthread_cond_broadcast(&p->cv);
}

static unsigned count_runnable(const struct pod *p)
{
	unsigned n = 0;
	for (unsigned i = 0; i < p->n; i++)
		n += runnable(p, &p->chips[i]);
	return n;
}

/* Waits for chip c's turn (ending its own turn first if it owes it). -1
 * if the pod's recording failed meanwhile. */
static int enter(struct snr_dbg *c)
{
	struct pod *p = c->p;
	pthread_mutex_lock(&p->mu);
	if (c->owe) {
		c->owe = false;
		pass_turn(p, c->k);
	}
	while (p->turn != (int)c->k && !p->failed)
		pthread_cond_wait(&p->cv, &p->mu);
	pthread_mutex_unlock(&p->mu);
	if (p->failed) {
		snr_fmt(c->err, sizeof(c->err), "the pod's recording stopped: %s", p->why);
		return -1;
	}
	return 0;
}

/* Chip c passes its turn and waits for it to come back. */
static int yield(struct snr_dbg *c)
{
	c->owe = true;
	return enter(c);
}

static void fail_pod(struct snr_dbg *c, const char *why)
{
	struct pod *p = c->p;
	pthread_mutex_lock(&p->mu);
	if (!p->failed) {
		p->failed = true;
		snr_fmt(p->why, sizeof(p->why), "%s", why);
	}
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	snr_fmt(c->err, sizeof(c->err), "%s", why);
}

/* The device's connection acts on chip c from now. */
static int select_chip(struct snr_dbg *c)
{
	struct pod *p = c->p;
	if (p->selected == (int)c->k)
		return 0;
	if (p->real->select_thread(p->d, (int)c->k)) {
		snr_fmt(c->err, sizeof(c->err), "%s", p->real->error(p->d));
		return -1;
	}
	p->selected = (int)c->k;
	return 0;
}

static int instret(struct snr_dbg *c, uint64_t *v)
{
	struct pod *p = c->p;
	if (p->real->read_regs(p->d, p->regbuf)) {
		snr_fmt(c->err, sizeof(c->err), "%s", p->real->error(p->d));
		return -1;
	}
	memcpy(v, p->regbuf + p->instret_off, 8);
	return 0;
}

/* A request of chip c's recorder: its turn, and its chip selected. */
static int begin(struct snr_dbg *c)
{
	if (enter(c))
		return -1;
	return select_chip(c);
}

/* ---- the backend of one chip ---------------------------------------------------- */

static struct snr_dbg *pod_open(const char *target, char *const argv[], char *err, size_t errlen)
{
	(void)target;
	(void)argv;
	if (!pod_self)
		snr_fmt(err, errlen, "the pod backend opens only from the pod recorder");
	return pod_self;
}

static void pod_close(struct snr_dbg *c) { (void)c; } /* the pod recorder closes the device */
static const char *pod_error(struct snr_dbg *c) { return c->err; }
static const char *pod_arch(struct snr_dbg *c) { return c->p->real->arch(c->p->d); }
static int pod_nthreads(struct snr_dbg *c) { return (int)c->p->n; }
static int pod_pid(struct snr_dbg *c) { return c->p->real->pid(c->p->d); }

static int pod_select_thread(struct snr_dbg *c, int thread)
{
	if (thread != (int)c->k) {
		snr_fmt(c->err, sizeof(c->err), "the recorder of chip %u selected chip %d", c->k, thread);
		return -1;
	}
	return 0;
}

static const struct snr_dbg_reg *pod_registers(struct snr_dbg *c, size_t *n)
{
	return c->p->real->registers(c->p->d, n);
}

/* Reading chip c's state: the window starts here if its chip has hit. */
static int begin_read(struct snr_dbg *c)
{
	struct pod *p = c->p;
	if (c->phase == TO_HIT && c->hits > p->skip) {
		/* its hit: it waits there until every chip has hit */
		pthread_mutex_lock(&p->mu);
		c->phase = AT_HIT;
		pthread_mutex_unlock(&p->mu);
		if (yield(c))
			return -1;
	}
	return begin(c);
}

#define PASS(call)                                                                       \
	do {                                                                             \
		if (call) {                                                              \
			snr_fmt(c->err, sizeof(c->err), "%s", c->p->real->error(c->p->d)); \
			return -1;                                                       \
		}                                                                        \
		return 0;                                                                \
	} while (0)

static int pod_read_regs(struct snr_dbg *c, uint8_t *buf)
{
	if (begin_read(c))
		return -1;
	PASS(c->p->real->read_regs(c->p->d, buf));
}

static int pod_read_regs_cheap(struct snr_dbg *c, uint8_t *buf, bool *got)
{
	if (begin_read(c))
		return -1;
	if (!c->p->real->read_regs_cheap) {
		size_t n = 0;
		c->p->real->registers(c->p->d, &n);
		for (size_t i = 0; i < n; i++)
			got[i] = true;
		PASS(c->p->real->read_regs(c->p->d, buf));
	}
	PASS(c->p->real->read_regs_cheap(c->p->d, buf, got));
}

static int pod_read_mem(struct snr_dbg *c, uint64_t addr, void *buf, size_t len)
{
	if (begin_read(c))
		return -1;
	PASS(c->p->real->read_mem(c->p->d, addr, buf, len));
}

/* Before the windows, the breakpoint of the window's start is set once for
 * every chip and cleared when every chip hit it (start_windows). */
static int pod_set_breakpoint(struct snr_dbg *c, uint64_t addr)
{
	struct pod *p = c->p;
	if (begin(c))
		return -1;
	if (c->phase == TO_HIT) {
		if (p->have_bp && p->bp != addr) {
			snr_fmt(c->err, sizeof(c->err), "chip %u's window starts at 0x%llx, another chip's at 0x%llx", c->k,
				(unsigned long long)addr, (unsigned long long)p->bp);
			return -1;
		}
		p->bp = addr;
		p->have_bp = true;
	}
	PASS(p->real->set_breakpoint(p->d, addr));
}

static int pod_clear_breakpoint(struct snr_dbg *c, uint64_t addr)
{
	struct pod *p = c->p;
	if (c->phase == TO_HIT && p->have_bp && addr == p->bp)
		return 0; /* other chips still run to it */
	if (begin(c))
		return -1;
	PASS(p->real->clear_breakpoint(p->d, addr));
}

static void chip_wait_text(struct pod *p, char *out, size_t len)
{
	size_t at = 0;
	out[0] = 0;
	for (unsigned i = 0; i < p->n && at < len; i++) {
		const struct snr_dbg *o = &p->chips[i];
		const char *what = o->phase == DONE	? "its window ended"
				   : o->phase == AT_HIT ? "stopped at its breakpoint hit"
				   : o->blocked		? "blocked at a ta.wait"
							: "running";
		at += (size_t)snprintf(out + at, len - at, "%schip %u: %s", i ? "; " : "", i, what);
		if (o->blocked && o->phase != DONE && o->phase != AT_HIT && at < len) {
			const struct snr_place *pl = p->lines ? snr_lines_find(p->lines, o->blocked_pc) : NULL;
			char place[600] = "";
			if (pl)
				snr_place_text(pl, place, sizeof(place));
			at += (size_t)snprintf(out + at, len - at, " at pc 0x%llx%s%s", (unsigned long long)o->blocked_pc,
					       pl ? ", " : "", place);
		}
	}
}

/* Chip c's step or continue blocked with no progress: the turn passes, or,
 * when every chip that could run is blocked, the pod is stuck. */
static int blocked(struct snr_dbg *c, uint64_t pc, bool progress)
{
	struct pod *p = c->p;
	c->blocked = true;
	c->blocked_pc = pc;
	p->streak = progress ? 1 : p->streak + 1;
	if (p->streak > count_runnable(p)) {
		char chips[3000], why[3500];
		chip_wait_text(p, chips, sizeof(chips));
		if (!p->started)
			snr_fmt(why, sizeof(why),
				"chip %u cannot reach the breakpoint: it waits for a signal that no chip still running to "
				"its hit sends (chips at their hit stay stopped until every chip hit it; move the "
				"breakpoint before the wait): %s",
				c->k, chips);
		else
			snr_fmt(why, sizeof(why),
				"the pod deadlocked inside the windows: every chip still recording waits at a ta.wait "
				"for a signal no recorded chip will send (a chip whose window ended runs no further: "
				"raise --count or use --until-return): %s",
				chips);
		fail_pod(c, why);
		return -1;
	}
	return yield(c);
}

static int pod_step(struct snr_dbg *c, struct snr_dbg_stop *st)
{
	struct pod *p = c->p;
	for (;;) {
		uint64_t before, after;
		if (begin_read(c) || instret(c, &before))
			return -1;
		if (p->real->step(p->d, st)) {
			snr_fmt(c->err, sizeof(c->err), "%s", p->real->error(p->d));
			return -1;
		}
		if (st->kind != SNR_DBG_STOP_TRAP)
			break;
		if (instret(c, &after))
			return -1;
		if (after != before)
			break;
		if (blocked(c, st->pc, false))
			return -1;
	}
	c->blocked = false;
	p->streak = 0;
	if (++c->turn_steps >= TURN_STEPS)
		c->owe = true;
	return 0;
}

/* A continue of chip c alone (the device's pod mode runs no other chip):
 * before the windows, to its hit, passing the turn while it blocks; inside
 * them, to a breakpoint the recorder set (a system instruction's next). */
static int pod_cont_selected(struct snr_dbg *c, int timeout_ms, struct snr_dbg_stop *st)
{
	struct pod *p = c->p;
	for (;;) {
		uint64_t before, after;
		if (begin(c) || instret(c, &before))
			return -1;
		if (p->real->cont_selected(p->d, timeout_ms, st)) {
			snr_fmt(c->err, sizeof(c->err), "%s", p->real->error(p->d));
			return -1;
		}
		if (st->kind == SNR_DBG_STOP_TRAP && st->thread >= 0 && st->thread != (int)c->k) {
			snr_fmt(c->err, sizeof(c->err), "continuing chip %u alone stopped chip %d", c->k, st->thread);
			return -1;
		}
		if (st->kind != SNR_DBG_STOP_TRAP || c->phase != TO_HIT || (p->have_bp && st->pc == p->bp))
			break;
		if (instret(c, &after)) /* stopped elsewhere: blocked at a ta.wait */
			return -1;
		if (blocked(c, st->pc, after != before))
			return -1;
	}
	if (st->kind == SNR_DBG_STOP_TRAP && c->phase == TO_HIT) {
		c->hits++;
		p->streak = 0;
	}
	c->blocked = false;
	if (st->kind == SNR_DBG_STOP_EXITED && st->thread < 0)
		st->thread = (int)c->k;
	return 0;
}

/* --method sim's fall-back puts chip c back at its last good checkpoint */
static int pod_write_regs(struct snr_dbg *c, const uint8_t *buf)
{
	if (begin(c))
		return -1;
	PASS(!c->p->real->write_regs || c->p->real->write_regs(c->p->d, buf));
}

static int pod_write_mem(struct snr_dbg *c, uint64_t addr, const void *buf, size_t len)
{
	if (begin(c))
		return -1;
	PASS(!c->p->real->write_mem || c->p->real->write_mem(c->p->d, addr, buf, len));
}

static int pod_detach(struct snr_dbg *c) { (void)c; return 0; } /* the pod recorder detaches the device */
static int pod_kill(struct snr_dbg *c) { (void)c; return 0; }

static int pod_close_stopped(struct snr_dbg *c, char *how, size_t howlen)
{
	(void)c;
	snr_fmt(how, howlen, "the pod recorder leaves the device's chips where they are");
	return 0;
}

static const struct snr_dbg_ops pod_ops = {
	.abi_version = SNR_DBG_ABI_VERSION,
	.name = "rsp",
	.open = pod_open,
	.close = pod_close,
	.error = pod_error,
	.arch = pod_arch,
	.nthreads = pod_nthreads,
	.select_thread = pod_select_thread,
	.pid = pod_pid,
	.registers = pod_registers,
	.read_regs = pod_read_regs,
	.read_mem = pod_read_mem,
	.set_breakpoint = pod_set_breakpoint,
	.clear_breakpoint = pod_clear_breakpoint,
	.cont = pod_cont_selected,
	.step = pod_step,
	.detach = pod_detach,
	.kill = pod_kill,
	.read_regs_cheap = pod_read_regs_cheap,
	.cont_selected = pod_cont_selected,
	.close_stopped = pod_close_stopped,
	.write_regs = pod_write_regs,
	.write_mem = pod_write_mem,
};

/* ---- the recording -------------------------------------------------------- */

static void *chip_main(void *arg)
{
	struct snr_dbg *c = arg;
	struct pod *p = c->p;
	pod_self = c;
	if (enter(c) == 0)
		c->rc = snr_record(&c->o, (struct snr_record_summary *)c->o.window_ctx, c->rerr, sizeof(c->rerr));
	else {
		c->rc = -1;
		snr_fmt(c->rerr, sizeof(c->rerr), "%s", c->err);
	}
	pthread_mutex_lock(&p->mu);
	if (c->rc && !p->failed) { /* before its hit: no window starts; inside: the pod's recording stops */
		p->failed = true;
		snr_fmt(p->why, sizeof(p->why), "chip %u: %s", c->k, c->rerr);
	}
	c->phase = DONE;
	c->owe = false;
	if (p->turn == (int)c->k)
		pass_turn(p, c->k);
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	return NULL;
}

int snr_record_pod(const struct snr_record_opts *o, struct snr_pod_summary *sum, char *err, size_t errlen)
{
	memset(sum, 0, sizeof(*sum));
	if (o->windows) {
		snr_fmt(err, errlen, "--pod records one window per chip; --windows is not taken with it");
		return -1;
	}
	if (o->dbg != &snr_dbg_rsp) {
		snr_fmt(err, errlen, "--pod records a TA1 pod on snr device (--target tcp:HOST:PORT or unix:PATH)");
		return -1;
	}
	struct pod p = {.real = o->dbg, .turn = 0, .selected = -1, .skip = o->skip};
	pthread_mutex_init(&p.mu, NULL);
	pthread_cond_init(&p.cv, NULL);
	struct snr_set_writer *set = NULL;
	int rc = -1;
	char *told = NULL, *cfg_json = NULL, said[640];
	p.d = o->dbg->open(o->target, o->argv, err, errlen);
	if (!p.d)
		goto out;
	/* the device's machine config, asked once: a --config that differs is
	 * refused here, before pod mode and before any chip runs (the device
	 * is left halted for the next debugger); each chip's trace stores it */
	if (snr_rec_target_config(o, p.d, &told, err, errlen) ||
	    snr_rec_machine_config(o->config_path, told, &cfg_json, said, sizeof(said), err, errlen)) {
		char how[300];
		size_t l = strlen(err);
		o->dbg->close_stopped(p.d, how, sizeof(how));
		p.d = NULL;
		snr_fmt(err + l, errlen - l, "; the target was not continued: snr left it halted and %s", how);
		goto out;
	}
	if (snr_dbg_rsp_pod_mode(p.d)) {
		snr_fmt(err, errlen, "%s", o->dbg->error(p.d));
		goto out;
	}
	int nth = o->dbg->nthreads(p.d);
	if (nth < 1 || nth > SNR_POD_MAX_CHIPS) {
		snr_fmt(err, errlen, "the target has %d threads: a pod recording takes 1 to %d chips", nth,
			SNR_POD_MAX_CHIPS);
		goto out;
	}
	p.n = (unsigned)nth;
	size_t nregs = 0;
	const struct snr_dbg_reg *regs = o->dbg->registers(p.d, &nregs);
	bool have_instret = false;
	for (unsigned f = 0; f < POD_FLAGS; f++)
		p.flag_off[f] = -1;
	for (size_t i = 0; i < nregs; i++) {
		unsigned f;
		char tail;
		if (sscanf(regs[i].name, "flag%u%c", &f, &tail) == 1 && f < POD_FLAGS && regs[i].size == 8)
			p.flag_off[f] = regs[i].offset;
		if (!strcmp(regs[i].name, "instret") && regs[i].size == 8) {
			p.instret_off = regs[i].offset;
			have_instret = true;
		}
		if (regs[i].offset + regs[i].size > p.regs_len)
			p.regs_len = regs[i].offset + regs[i].size;
	}
	if (!have_instret) {
		snr_fmt(err, errlen, "the target has no instret register: not a TA1 device");
		goto out;
	}
	p.regbuf = snr_xcalloc(1, p.regs_len);
	if (o->elf_path) {
		char lerr[300];
		p.lines = snr_lines_new();
		if (snr_lines_add(p.lines, o->elf_path, 0, NULL, lerr, sizeof(lerr))) {
			snr_lines_free(p.lines); /* the chips' recorders name what is wrong with it */
			p.lines = NULL;
		}
	}
	json_t *info = json_object();
	json_t *pod = json_object();
	json_object_set_new(pod, "chips", json_integer(p.n));
	json_object_set_new(pod, "start", json_string("each chip's own hit of the breakpoint, after every chip hit it"));
	json_object_set_new(info, "pod", pod);
	json_object_set_new(info, "breakpoint", json_string(o->breakpoint));
	json_object_set_new(info, "skip", json_integer((json_int_t)o->skip));
	json_object_set_new(info, "count", json_integer((json_int_t)o->count));
	if (o->until_return)
		json_object_set_new(info, "until_return", json_true());
	set = snr_set_create(o->out_path, "trace", info, err, errlen);
	if (!set)
		goto out;
	sum->chips = p.n;
	p.chips = snr_xcalloc(p.n, sizeof(*p.chips));
	for (unsigned k = 0; k < p.n; k++) {
		struct snr_dbg *c = &p.chips[k];
		c->p = &p;
		c->k = k;
		c->phase = TO_HIT;
		c->out_path = snr_xstrdup(snr_set_window_path(set, k));
		c->o = *o;
		c->o.dbg = &pod_ops;
		c->o.target_config = told;
		c->o.chip = (int)k;
		c->o.out_path = c->out_path;
		c->o.method = o->method && !strcmp(o->method, "sim") ? "sim" : "step";
		c->o.progress = false;
		c->o.stop = NULL;
		c->o.in_window = NULL;
		c->o.windows = 0;
		c->o.window_done = NULL;
		c->o.window_ctx = &sum->chip[k];
	}
	for (unsigned k = 0; k < p.n; k++)
		if (pthread_create(&p.chips[k].th, NULL, chip_main, &p.chips[k])) {
			snr_fmt(err, errlen, "cannot start the recorder of chip %u", k);
			pthread_mutex_lock(&p.mu);
			p.failed = true;
			snr_fmt(p.why, sizeof(p.why), "%s", err);
			for (unsigned j = k; j < p.n; j++)
				p.chips[j].phase = DONE;
			pthread_cond_broadcast(&p.cv);
			pthread_mutex_unlock(&p.mu);
			for (unsigned j = 0; j < k; j++)
				pthread_join(p.chips[j].th, NULL);
			goto out;
		}
	for (unsigned k = 0; k < p.n; k++)
		pthread_join(p.chips[k].th, NULL);
	if (p.failed) {
		size_t at = (size_t)snprintf(err, errlen, "%s", p.why);
		for (unsigned k = 0; k < p.n && at < errlen; k++)
			if (p.chips[k].rc && !strstr(p.chips[k].rerr, "the pod's recording stopped") &&
			    !strstr(p.why, p.chips[k].rerr) && !strstr(p.chips[k].rerr, p.why))
				at += (size_t)snprintf(err + at, errlen - at, "\n  chip %u: %s", k, p.chips[k].rerr);
		goto out;
	}
	for (unsigned k = 0; k < p.n; k++) {
		const struct snr_record_summary *s = &sum->chip[k];
		json_t *e = json_object();
		json_object_set_new(e, "chip", json_integer(k));
		json_object_set_new(e, "hit", json_integer((json_int_t)(o->skip + 1)));
		json_object_set_new(e, "instructions", json_integer((json_int_t)s->instructions));
		json_object_set_new(e, "end", json_string(s->end_reason));
		json_t *fl = json_array();
		for (unsigned f = 0; f < POD_FLAGS; f++)
			json_array_append_new(fl, json_integer((json_int_t)p.chips[k].flags[f]));
		json_object_set_new(e, "flags_at_start", fl);
		if (snr_set_add(set, k, e, err, errlen))
			goto out;
	}
	rc = snr_set_finish(set, "complete", err, errlen);
	set = NULL;
	sum->set_path = o->out_path;
	if (rc == 0) {
		if (o->kill_after)
			o->dbg->kill(p.d);
		else
			o->dbg->detach(p.d);
	}
out:
	if (set) {
		snprintf(sum->partial, sizeof(sum->partial), "%s", snr_set_writer_dir(set));
		sum->set_path = sum->partial;
		snr_set_abandon(set, "the pod's recording failed");
	}
	if (p.d)
		o->dbg->close(p.d);
	for (unsigned k = 0; p.chips && k < p.n; k++)
		free(p.chips[k].out_path);
	free(p.chips);
	free(p.regbuf);
	free(told);
	free(cfg_json);
	if (p.lines)
		snr_lines_free(p.lines);
	pthread_mutex_destroy(&p.mu);
	pthread_cond_destroy(&p.cv);
	return rc;
}
