/*
 * rsp_session.c: the GDB remote protocol's semantics on a TA1 machine.
 *
 * Every decoded packet (device/rsp_packet.c) becomes calls on the machine
 * API: registers and memory of the selected chip (Hg), breakpoints on every
 * chip (each chip has its own breakpoint table, and GDB expects a
 * breakpoint to stop whichever thread reaches it), single steps of the
 * resumed thread, and continues that run all resumed chips round-robin in
 * quanta, as ta1_machine_run does, until one stops. Memory is per chip: m,
 * M and X reach the core memory (and VMEM, HBM...) of the Hg chip only.
 *
 * Stop replies name the chip as thread:N and expedite every register (pc,
 * sp and ra first), so a debugger that steps and reads registers (the snr
 * recorder) needs one round trip per step:
 * SIGTRAP (T05) for a breakpoint, a finished step or an ebreak (the pc stays
 * at the ebreak, so continuing executes it again: step past it with
 * `set $pc += 4`), SIGSEGV (T0b) for a fault (the fault's text goes to
 * stderr as it does without a debugger), SIGINT (T02) for 0x03, and W with
 * chip 0's exit code once every chip has exited.
 *
 * A step of a chip blocked at a ta.wait that another chip must signal
 * (ta.dma.notify) lets the other running chips run on, a quantum each per
 * slice and through their breakpoints, until the wait passes; the step then
 * completes as usual. So a debugger that steps one chip of a pod (the snr
 * recorder's --chip) sees its wait end as it would on the hardware. A
 * pod-wide deadlock stops the stepped chip with SIGSEGV and the message.
 *
 * Pod mode (QSnrPod:1, snr's own; `snr record --pod` sets it) is for a
 * debugger that steps every chip itself, so that no chip runs unseen:
 * - a step of a chip blocked at a ta.wait runs nothing else: it stops at
 *   once with SIGTRAP, the pc and instret unchanged;
 * - a continue whose resumed chips are all blocked (none made progress in a
 *   slice) and the pod is not deadlocked stops with SIGTRAP at the first
 *   blocked one's wait, rather than waiting for chips it did not resume;
 * - a step that exits its chip, or a continue whose resumed chips all
 *   exited, while other chips have not, stops with w (GDB's thread-exit
 *   reply: wEXIT;THREAD) naming the chip, rather than running the chips
 *   it did not resume.
 */
#include "rsp_session.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/rsp_machine_config.h"
#include "device/rsp_packet.h"
#include "lib/snr_crc.h"
#include "lib/snr_util.h"

#define DEFAULT_QUANTUM 65536
#define RSP_MAX_BREAKPOINTS 64 /* the machine's table per chip */
#define SIG_INT 2
#define SIG_TRAP 5
#define SIG_SEGV 11

struct rsp_session {
	struct ta1_machine *m;
	unsigned nchips;
	uint64_t sync_budget, quantum;
	struct rsp_framer fr;
	bool noack;
	unsigned g_chip;   /* chip of g/G/p/P/m/M/X */
	int64_t c_chip;    /* chip of s/c by Hc, -1 = unset (use g_chip) */
	bool running;
	uint64_t ran;      /* instructions per chip since the resume, roughly */
	char *action;      /* per chip while running: 0, 'c' or 's' */
	uint64_t bps[RSP_MAX_BREAKPOINTS]; /* set on every chip */
	unsigned nbps;
	/* QSnrIgnore: hits of the breakpoint at ignore_addr that the next
	 * continue passes without stopping (snr record --method sim reaches
	 * the n-th arrival at a pc with one continue) */
	uint64_t ignore_addr, ignore_left;
	bool pod; /* QSnrPod:1: no chip runs unless resumed (the comment at the top) */
	char *config_from;  /* where the machine's config came from (rsp_session_set_config_from) */
	char *config_obj;   /* the qXfer:snr-config:read object, made at its first request */
	enum rsp_end end;
	/* The last stop, for '?': a signal on a chip, or the program's end. */
	bool stop_exited;
	int stop_sig;
	unsigned stop_chip;
	char *out;
	size_t out_len, out_cap;
	char last[RSP_MAX_PAYLOAD + 8]; /* the last frame sent, for a NAK */
	size_t last_len;
	char reply[RSP_MAX_PAYLOAD + 1];
	size_t reply_len;
	uint8_t scratch[RSP_MAX_PAYLOAD];
};

/* ---- The target description ---------------------------------------------- */

static const char *const xreg_names[32] = {
	"zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "fp", "s1", "a0",
	"a1", "a2", "a3", "a4", "a5", "a6", "a7", "s2", "s3", "s4", "s5",
	"s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6",
};

static char target_xml[8192];

const char *rsp_target_xml(void)
{
	if (target_xml[0])
		return target_xml;
	size_t n = 0, cap = sizeof(target_xml);
#define ADD(...) n += (size_t)snprintf(target_xml + n, n < cap ? cap - n : 0, __VA_ARGS__)
	ADD("<?xml version=\"1.0\"?>\n<!DOCTYPE target SYSTEM \"gdb-target.dtd\">\n"
	    "<target version=\"1.0\">\n<architecture>riscv:rv64</architecture>\n"
	    "<feature name=\"org.gnu.gdb.riscv.cpu\">\n");
	for (unsigned r = 0; r < 32; r++)
		ADD("  <reg name=\"%s\" bitsize=\"64\" type=\"%s\" regnum=\"%u\"/>\n", xreg_names[r],
		    r == 1 ? "code_ptr" : r == 2 || r == 8 ? "data_ptr" : "int", r);
	ADD("  <reg name=\"pc\" bitsize=\"64\" type=\"code_ptr\" regnum=\"%u\"/>\n</feature>\n",
	    TA1_REG_PC);
	ADD("<feature name=\"org.snr.ta1\">\n");
	for (unsigned f = 0; f < TA1_NUM_FLAGS; f++)
		ADD("  <reg name=\"flag%u\" bitsize=\"64\" type=\"uint64\" regnum=\"%u\" group=\"ta1\"/>\n",
		    f, TA1_REG_FLAG0 + f);
	static const struct {
		const char *name;
		unsigned reg;
	} extra[] = {
		{"cycle", TA1_REG_CYCLE},
		{"instret", TA1_REG_INSTRET},
		{"chipid", TA1_REG_CHIPID},
		{"nchips", TA1_REG_NCHIPS},
	};
	for (size_t i = 0; i < sizeof(extra) / sizeof(extra[0]); i++)
		ADD("  <reg name=\"%s\" bitsize=\"64\" type=\"uint64\" regnum=\"%u\" group=\"ta1\"/>\n",
		    extra[i].name, extra[i].reg);
	ADD("</feature>\n</target>\n");
#undef ADD
	if (n >= cap)
		abort(); /* a programming error: the table outgrew the buffer */
	return target_xml;
}

/* ---- Output ------------------------------------------------------------- */

static void out_bytes(struct rsp_session *s, const char *p, size_t n)
{
	if (s->out_len + n > s->out_cap) {
		size_t cap = s->out_cap ? s->out_cap : 4096;
		while (cap < s->out_len + n)
			cap *= 2;
		s->out = snr_xrealloc(s->out, cap);
		s->out_cap = cap;
	}
	memcpy(s->out + s->out_len, p, n);
	s->out_len += n;
}

static void reply_start(struct rsp_session *s) { s->reply_len = 0; }

static void reply_add(struct rsp_session *s, const char *p, size_t n)
{
	if (n > RSP_MAX_PAYLOAD - s->reply_len)
		n = RSP_MAX_PAYLOAD - s->reply_len; /* callers size their replies; never trusted */
	memcpy(s->reply + s->reply_len, p, n);
	s->reply_len += n;
}

static void reply_fmt(struct rsp_session *s, const char *fmt, ...) SNR_PRINTF(2, 3);
static void reply_fmt(struct rsp_session *s, const char *fmt, ...)
{
	char buf[256];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n > 0)
		reply_add(s, buf, (size_t)n < sizeof(buf) ? (size_t)n : sizeof(buf) - 1);
}

static void reply_send(struct rsp_session *s)
{
	s->last_len = rsp_frame_reply(s->reply, s->reply_len, s->last, sizeof(s->last));
	out_bytes(s, s->last, s->last_len);
}

static void send_str(struct rsp_session *s, const char *text)
{
	reply_start(s);
	reply_add(s, text, strlen(text));
	reply_send(s);
}

static void send_error(struct rsp_session *s, enum rsp_error e)
{
	reply_start(s);
	reply_fmt(s, "E%02x", (unsigned)e);
	reply_send(s);
}

/* ---- Stops ------------------------------------------------------------------ */

static struct ta1_chip *chip(struct rsp_session *s, unsigned i) { return ta1_machine_chip(s->m, i); }

static bool all_exited(struct rsp_session *s)
{
	for (unsigned i = 0; i < s->nchips; i++)
		if (ta1_chip_state(chip(s, i)) != TA1_CHIP_EXITED)
			return false;
	return true;
}

static void send_stop_reply(struct rsp_session *s)
{
	reply_start(s);
	if (s->stop_exited) {
		reply_fmt(s, "W%02x", (unsigned)ta1_chip_exit_code(chip(s, 0)) & 0xff);
	} else {
		struct ta1_chip *c = chip(s, s->stop_chip);
		static const unsigned first[] = {TA1_REG_PC, 2, 1};
		char hex[17] = "";
		reply_fmt(s, "T%02xthread:%x;", (unsigned)s->stop_sig, s->stop_chip + 1);
		/* Built by hand: this reply goes out once per single step. */
		char buf[TA1_REG_COUNT * 22], *p = buf;
		for (unsigned k = 0; k < TA1_REG_COUNT; k++) {
			/* pc, sp, ra first; x0 takes the pc's place in the order */
			unsigned r = k < 3 ? first[k] : k == TA1_REG_PC ? 0 : k;
			static const char digits[] = "0123456789abcdef";
			if (r >= 16)
				*p++ = digits[(r >> 4) & 15];
			*p++ = digits[r & 15];
			*p++ = ':';
			rsp_hex_u64le(ta1_chip_get_reg(c, r), hex);
			memcpy(p, hex, 16);
			p += 16;
			*p++ = ';';
		}
		reply_add(s, buf, (size_t)(p - buf));
	}
	reply_send(s);
}

static void stop(struct rsp_session *s, unsigned chip_index, int sig)
{
	s->running = false;
	s->ignore_left = 0;
	memset(s->action, 0, s->nchips);
	s->stop_exited = false;
	s->stop_sig = sig;
	s->stop_chip = chip_index;
	s->g_chip = chip_index;
	s->c_chip = -1;
	send_stop_reply(s);
}

static void stop_exited(struct rsp_session *s)
{
	s->running = false;
	memset(s->action, 0, s->nchips);
	s->stop_exited = true;
	send_stop_reply(s);
}

/* Pod mode: chip i exited while others have not (GDB's wEXIT;THREAD). */
static void stop_thread_exited(struct rsp_session *s, unsigned i)
{
	s->running = false;
	memset(s->action, 0, s->nchips);
	s->stop_exited = false;
	s->stop_sig = SIG_TRAP; /* '?' after it: the chips left are stopped */
	s->stop_chip = i;
	s->g_chip = i;
	s->c_chip = -1;
	reply_start(s);
	reply_fmt(s, "w%02x;%x", (unsigned)ta1_chip_exit_code(chip(s, i)) & 0xff, i + 1);
	reply_send(s);
}

static void report_fault(struct rsp_session *s, unsigned i)
{
	snr_err("device: %s", ta1_chip_fault(chip(s, i)));
}

/* The session has nothing resumable left: every chip exited, or the only
 * ones left faulted. Returns true if it stopped. */
static bool stop_if_nothing_runs(struct rsp_session *s)
{
	int faulted = -1;
	for (unsigned i = 0; i < s->nchips; i++) {
		enum ta1_chip_state st = ta1_chip_state(chip(s, i));
		if (st == TA1_CHIP_RUNNING)
			return false;
		if (st == TA1_CHIP_FAULTED && faulted < 0)
			faulted = (int)i;
	}
	if (faulted >= 0)
		stop(s, (unsigned)faulted, SIG_SEGV);
	else
		stop_exited(s);
	return true;
}

/* Chip `blocked` stopped at a ta.wait in a step: the other running chips
 * run a quantum each, through their breakpoints, and the step is tried
 * again. TA1_STOP_BLOCKED if it still waits; a pod-wide deadlock faults it. */
static enum ta1_stop run_others_through_wait(struct rsp_session *s, unsigned blocked)
{
	bool progress = false;
	for (unsigned j = 0; j < s->nchips; j++) {
		struct ta1_chip *o = chip(s, j);
		if (j == blocked || ta1_chip_state(o) != TA1_CHIP_RUNNING)
			continue;
		uint64_t before = ta1_chip_get_reg(o, TA1_REG_INSTRET);
		enum ta1_stop r = ta1_chip_run(o, s->quantum);
		if (r == TA1_STOP_BREAKPOINT)
			r = ta1_chip_step(o); /* a breakpoint stops only a resumed chip */
		if (r == TA1_STOP_FAULT)
			report_fault(s, j);
		progress |= ta1_chip_get_reg(o, TA1_REG_INSTRET) != before || r == TA1_STOP_EXIT;
	}
	enum ta1_stop r = ta1_chip_step(chip(s, blocked));
	unsigned which;
	if (r == TA1_STOP_BLOCKED && !progress && ta1_machine_deadlock(s->m, &which)) {
		report_fault(s, which);
		return which == blocked ? TA1_STOP_FAULT : TA1_STOP_BLOCKED;
	}
	return r;
}

void rsp_session_run_slice(struct rsp_session *s)
{
	if (!s->running)
		return;
	/* Steps first: each stepping chip executes one instruction, and the
	 * first of them is reported. */
	int stepped = -1;
	enum ta1_stop first = TA1_STOP_BUDGET;
	for (unsigned i = 0; i < s->nchips; i++) {
		if (s->action[i] != 's')
			continue;
		s->action[i] = 0;
		struct ta1_chip *c = chip(s, i);
		bool was_running = ta1_chip_state(c) == TA1_CHIP_RUNNING;
		enum ta1_stop r = ta1_chip_step(c);
		if (r == TA1_STOP_BLOCKED && s->pod) {
			stop(s, i, SIG_TRAP); /* nothing ran: the pc is the wait's */
			return;
		}
		if (r == TA1_STOP_BLOCKED && (r = run_others_through_wait(s, i)) == TA1_STOP_BLOCKED) {
			s->action[i] = 's'; /* still blocked: the step goes on in the next slice */
			return;
		}
		if (r == TA1_STOP_FAULT && was_running)
			report_fault(s, i);
		if (stepped < 0) {
			stepped = (int)i;
			first = r;
		}
	}
	if (stepped >= 0) {
		if (first == TA1_STOP_FAULT) {
			stop(s, (unsigned)stepped, SIG_SEGV);
			return;
		}
		if (first != TA1_STOP_EXIT) {
			stop(s, (unsigned)stepped, SIG_TRAP);
			return;
		}
		/* The stepped chip exited: let the others run on to a stop
		 * (pod mode: report the exit; nothing else runs). */
		if (s->pod && !all_exited(s)) {
			stop_thread_exited(s, (unsigned)stepped);
			return;
		}
		if (stop_if_nothing_runs(s))
			return;
		for (unsigned i = 0; i < s->nchips; i++)
			s->action[i] = 'c';
		return;
	}
	bool any = false, progress = false;
	for (unsigned i = 0; i < s->nchips; i++) {
		struct ta1_chip *c = chip(s, i);
		if (s->action[i] != 'c' || ta1_chip_state(c) != TA1_CHIP_RUNNING)
			continue;
		any = true;
		uint64_t before = ta1_chip_get_reg(c, TA1_REG_INSTRET);
		enum ta1_stop r = ta1_chip_run(c, s->quantum);
		progress |= r != TA1_STOP_BLOCKED || ta1_chip_get_reg(c, TA1_REG_INSTRET) != before;
		while (r == TA1_STOP_BREAKPOINT && s->ignore_left > 0 &&
		       ta1_chip_get_reg(c, TA1_REG_PC) == s->ignore_addr) {
			/* a hit to pass: execute the instruction under the
			 * breakpoint (a step ignores breakpoints) and run on */
			s->ignore_left--;
			r = ta1_chip_step(c);
			if (r == TA1_STOP_BUDGET && ta1_chip_state(c) == TA1_CHIP_RUNNING)
				r = ta1_chip_run(c, s->quantum);
		}
		if (r == TA1_STOP_BREAKPOINT || r == TA1_STOP_EBREAK) {
			stop(s, i, SIG_TRAP);
			return;
		}
		if (r == TA1_STOP_FAULT) {
			report_fault(s, i);
			stop(s, i, SIG_SEGV);
			return;
		}
	}
	s->ran += s->quantum;
	unsigned dead;
	if (any && !progress && ta1_machine_deadlock(s->m, &dead)) {
		report_fault(s, dead);
		stop(s, dead, SIG_SEGV);
		return;
	}
	if (any && !progress && s->pod) { /* blocked on chips it did not resume */
		for (unsigned i = 0; i < s->nchips; i++)
			if (s->action[i] == 'c' && ta1_chip_state(chip(s, i)) == TA1_CHIP_RUNNING) {
				stop(s, i, SIG_TRAP);
				return;
			}
	}
	if (!any && s->pod && !all_exited(s)) {
		for (unsigned i = 0; i < s->nchips; i++)
			if (s->action[i] == 'c' && ta1_chip_state(chip(s, i)) == TA1_CHIP_EXITED) {
				stop_thread_exited(s, i);
				return;
			}
	}
	if (!any) {
		/* The resumed chips are done; the rest of the pod, if any, runs on
		 * so that the debugger hears of a stop. */
		if (stop_if_nothing_runs(s))
			return;
		for (unsigned i = 0; i < s->nchips; i++)
			s->action[i] = 'c';
	}
}

void rsp_session_interrupt(struct rsp_session *s)
{
	if (!s->running)
		return;
	unsigned who = s->g_chip;
	for (unsigned i = 0; i < s->nchips; i++) {
		if (s->action[i] && ta1_chip_state(chip(s, i)) == TA1_CHIP_RUNNING) {
			who = i;
			break;
		}
	}
	stop(s, who, SIG_INT);
}

/* Starts the chips marked in s->action; in sync mode runs them to a stop. */
static void resume(struct rsp_session *s)
{
	if (all_exited(s)) {
		stop_exited(s);
		return;
	}
	s->running = true;
	s->ran = 0;
	if (!s->sync_budget)
		return;
	while (s->running && s->ran < s->sync_budget)
		rsp_session_run_slice(s);
	rsp_session_interrupt(s);
}

static unsigned resume_chip(struct rsp_session *s)
{
	return s->c_chip >= 0 ? (unsigned)s->c_chip : s->g_chip;
}

/* ---- Packets ---------------------------------------------------------------- */

static void do_read_regs(struct rsp_session *s)
{
	struct ta1_chip *c = chip(s, s->g_chip);
	char hex[17] = "";
	reply_start(s);
	for (unsigned r = 0; r < RSP_NUM_REGS; r++) {
		rsp_hex_u64le(ta1_chip_get_reg(c, r), hex);
		reply_add(s, hex, 16);
	}
	reply_send(s);
}

static uint64_t le64(const uint8_t *b)
{
	uint64_t v = 0;
	for (int i = 7; i >= 0; i--)
		v = v << 8 | b[i];
	return v;
}

static bool read_only(unsigned r)
{
	return r == 0 || r == TA1_REG_CHIPID || r == TA1_REG_NCHIPS;
}

static void do_write_regs(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	struct ta1_chip *c = chip(s, s->g_chip);
	size_t n = cmd->data_len / 8;
	if (cmd->data_len % 8 || n == 0 || n > RSP_NUM_REGS) {
		send_error(s, RSP_E_RANGE);
		return;
	}
	/* All or nothing: a read-only register may only be written unchanged. */
	for (unsigned r = 0; r < n; r++) {
		if (read_only(r) && le64(cmd->data + 8 * r) != ta1_chip_get_reg(c, r)) {
			send_error(s, RSP_E_REGISTER);
			return;
		}
	}
	for (unsigned r = 0; r < n; r++)
		if (!read_only(r))
			ta1_chip_set_reg(c, r, le64(cmd->data + 8 * r));
	send_str(s, "OK");
}

static void do_read_mem(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	size_t got = ta1_chip_read_mem(chip(s, s->g_chip), cmd->addr, s->scratch, (size_t)cmd->len);
	if (cmd->len && !got) {
		send_error(s, RSP_E_MEMORY);
		return;
	}
	reply_start(s);
	rsp_hex_encode(s->scratch, got, s->reply); /* got <= RSP_MAX_PAYLOAD / 2 */
	s->reply_len = 2 * got;
	reply_send(s);
}

/* x addr,len: "b" and the bytes, escaped as X escapes them, as many as fit
 * a packet (fewer than asked: the reader asks again for the rest). */
static void do_read_mem_bin(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	size_t want = cmd->len < RSP_MAX_PAYLOAD - 1 ? (size_t)cmd->len : RSP_MAX_PAYLOAD - 1;
	size_t got = ta1_chip_read_mem(chip(s, s->g_chip), cmd->addr, s->scratch, want);
	if (cmd->len && !got) {
		send_error(s, RSP_E_MEMORY);
		return;
	}
	/* an escaped byte takes two characters: only what fits */
	size_t n = 0, out = 1;
	for (; n < got; n++) {
		uint8_t b = s->scratch[n];
		size_t w = b == '#' || b == '$' || b == '}' || b == '*' ? 2 : 1;
		if (out + w > RSP_MAX_PAYLOAD)
			break;
		out += w;
	}
	reply_start(s);
	s->reply[0] = 'b';
	s->reply_len = 1 + rsp_escape(s->scratch, n, s->reply + 1);
	reply_send(s);
}

/* qCRC:addr,len: GDB's CRC-32 of the bytes (lib/snr_crc.h), "C" and it in
 * hex; E03 if any of them cannot be read. */
static void do_crc(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	uint32_t crc = 0xffffffffu;
	uint64_t at = cmd->addr, left = cmd->len;
	while (left) {
		size_t n = left < sizeof(s->scratch) ? (size_t)left : sizeof(s->scratch);
		if (ta1_chip_read_mem(chip(s, s->g_chip), at, s->scratch, n) != n) {
			send_error(s, RSP_E_MEMORY);
			return;
		}
		crc = snr_crc32_gdb(crc, s->scratch, n);
		at += n;
		left -= n;
	}
	reply_start(s);
	reply_fmt(s, "C%x", crc);
	reply_send(s);
}

static void do_write_mem(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	size_t done = cmd->data_len ? ta1_chip_write_mem(chip(s, s->g_chip), cmd->addr, cmd->data,
							 cmd->data_len)
				    : 0;
	if (done != cmd->data_len)
		send_error(s, RSP_E_MEMORY);
	else
		send_str(s, "OK");
}

static void do_breakpoint(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	unsigned b = 0;
	while (b < s->nbps && s->bps[b] != cmd->addr)
		b++;
	if (cmd->kind == RSP_CMD_REMOVE_BP) {
		if (b < s->nbps) {
			for (unsigned i = 0; i < s->nchips; i++)
				ta1_chip_clear_breakpoint(chip(s, i), cmd->addr);
			s->bps[b] = s->bps[--s->nbps];
		}
		send_str(s, "OK");
		return;
	}
	if (b < s->nbps) {
		send_str(s, "OK");
		return;
	}
	if (s->nbps == RSP_MAX_BREAKPOINTS) {
		send_error(s, RSP_E_BPFULL);
		return;
	}
	for (unsigned i = 0; i < s->nchips; i++) {
		if (ta1_chip_set_breakpoint(chip(s, i), cmd->addr)) {
			for (unsigned j = 0; j < i; j++)
				ta1_chip_clear_breakpoint(chip(s, j), cmd->addr);
			send_error(s, RSP_E_BPFULL);
			return;
		}
	}
	s->bps[s->nbps++] = cmd->addr;
	send_str(s, "OK");
}

/* A thread id naming one chip: n > 0 is chip n - 1. */
static bool thread_chip(struct rsp_session *s, int64_t t, unsigned *out)
{
	if (t < 1 || (uint64_t)t > s->nchips)
		return false;
	*out = (unsigned)(t - 1);
	return true;
}

static void do_set_thread(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	unsigned i;
	if (cmd->thread <= 0) {
		/* all or any: g/G keep their chip, s/c fall back to it */
		if (cmd->thread_op == 'c')
			s->c_chip = -1;
		send_str(s, "OK");
		return;
	}
	if (!thread_chip(s, cmd->thread, &i)) {
		send_error(s, RSP_E_THREAD);
		return;
	}
	if (cmd->thread_op == 'g')
		s->g_chip = i;
	else
		s->c_chip = i;
	send_str(s, "OK");
}

static void do_vcont(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	/* Each chip takes the leftmost action that names it or all threads. */
	unsigned i;
	for (unsigned a = 0; a < cmd->nactions; a++) {
		int64_t t = cmd->actions[a].thread;
		if (t > 0 && !thread_chip(s, t, &i)) {
			send_error(s, RSP_E_THREAD);
			return;
		}
	}
	memset(s->action, 0, s->nchips);
	for (unsigned a = 0; a < cmd->nactions; a++) {
		int64_t t = cmd->actions[a].thread;
		if (t >= 0) { /* one chip; 0 is "any", the selected one */
			i = resume_chip(s);
			if (t > 0)
				thread_chip(s, t, &i);
			if (!s->action[i])
				s->action[i] = cmd->actions[a].action;
			continue;
		}
		for (i = 0; i < s->nchips; i++)
			if (!s->action[i])
				s->action[i] = cmd->actions[a].action;
	}
	resume(s);
}

/* The part of a qXfer object's text that cmd asks for: 'm' and more to
 * come, or 'l' and the rest. */
static void xfer_reply(struct rsp_session *s, const struct rsp_cmd *cmd, const char *text)
{
	size_t total = strlen(text);
	uint64_t len = cmd->len;
	if (len > (RSP_MAX_PAYLOAD - 1) / 2)
		len = (RSP_MAX_PAYLOAD - 1) / 2; /* escaping may double every byte */
	if (cmd->addr >= total) {
		send_str(s, "l");
		return;
	}
	size_t off = (size_t)cmd->addr;
	size_t n = total - off < len ? total - off : (size_t)len;
	reply_start(s);
	s->reply[0] = off + n == total ? 'l' : 'm';
	s->reply_len = 1 + rsp_escape((const uint8_t *)text + off, n, s->reply + 1);
	reply_send(s);
}

static void do_xfer_features(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	if (strcmp(cmd->annex, "target.xml")) {
		send_str(s, "E00");
		return;
	}
	xfer_reply(s, cmd, rsp_target_xml());
}

/* qXfer:snr-config:read::OFF,LEN (rsp_machine_config.h): the annex is empty. */
static void do_xfer_snr_config(struct rsp_session *s, const struct rsp_cmd *cmd)
{
	if (cmd->annex[0]) {
		send_str(s, "E00");
		return;
	}
	if (!s->config_obj)
		s->config_obj = rsp_machine_config_object(ta1_machine_config(s->m), s->config_from);
	if (!s->config_obj) {
		send_str(s, "E01");
		return;
	}
	xfer_reply(s, cmd, s->config_obj);
}

static void do_thread_extra(struct rsp_session *s, int64_t t)
{
	unsigned i;
	if (!thread_chip(s, t, &i)) {
		send_error(s, RSP_E_THREAD);
		return;
	}
	char text[64];
	struct ta1_chip *c = chip(s, i);
	switch (ta1_chip_state(c)) {
	case TA1_CHIP_RUNNING: snprintf(text, sizeof(text), "chip %u", i); break;
	case TA1_CHIP_EXITED:
		snprintf(text, sizeof(text), "chip %u, exited with %d", i, ta1_chip_exit_code(c));
		break;
	case TA1_CHIP_FAULTED:
	default: snprintf(text, sizeof(text), "chip %u, faulted", i); break;
	}
	reply_start(s);
	size_t n = strlen(text);
	rsp_hex_encode((const uint8_t *)text, n, s->reply);
	s->reply_len = 2 * n;
	reply_send(s);
}

static void handle_packet(struct rsp_session *s, const char *payload, size_t len)
{
	struct rsp_cmd cmd;
	enum rsp_error e = rsp_parse(payload, len, s->scratch, sizeof(s->scratch), &cmd);
	if (e != RSP_OK) {
		send_error(s, e);
		return;
	}
	unsigned i;
	switch (cmd.kind) {
	case RSP_CMD_UNKNOWN: send_str(s, ""); break;
	case RSP_CMD_STOP_REASON: send_stop_reply(s); break;
	case RSP_CMD_READ_REGS: do_read_regs(s); break;
	case RSP_CMD_WRITE_REGS: do_write_regs(s, &cmd); break;
	case RSP_CMD_READ_REG: {
		char hex[17] = "";
		if (cmd.reg >= RSP_NUM_REGS) {
			send_error(s, RSP_E_REGISTER);
			break;
		}
		rsp_hex_u64le(ta1_chip_get_reg(chip(s, s->g_chip), cmd.reg), hex);
		send_str(s, hex);
		break;
	}
	case RSP_CMD_WRITE_REG:
		if (cmd.reg >= RSP_NUM_REGS || ta1_chip_set_reg(chip(s, s->g_chip), cmd.reg, cmd.value))
			send_error(s, RSP_E_REGISTER);
		else
			send_str(s, "OK");
		break;
	case RSP_CMD_READ_MEM: do_read_mem(s, &cmd); break;
	case RSP_CMD_READ_MEM_BIN: do_read_mem_bin(s, &cmd); break;
	case RSP_CMD_WRITE_MEM: do_write_mem(s, &cmd); break;
	case RSP_CMD_CONTINUE:
	case RSP_CMD_STEP:
		i = resume_chip(s);
		if (cmd.has_addr)
			ta1_chip_set_reg(chip(s, i), TA1_REG_PC, cmd.addr);
		memset(s->action, 0, s->nchips);
		if (cmd.kind == RSP_CMD_STEP)
			s->action[i] = 's';
		else
			memset(s->action, 'c', s->nchips);
		resume(s);
		break;
	case RSP_CMD_VCONT: do_vcont(s, &cmd); break;
	case RSP_CMD_VCONT_QUERY: send_str(s, "vCont;c;C;s;S"); break;
	case RSP_CMD_INSERT_BP:
	case RSP_CMD_REMOVE_BP: do_breakpoint(s, &cmd); break;
	case RSP_CMD_KILL: s->end = RSP_END_KILLED; break; /* GDB waits for no reply */
	case RSP_CMD_DETACH:
		send_str(s, "OK");
		s->end = RSP_END_DETACHED;
		break;
	case RSP_CMD_SET_THREAD: do_set_thread(s, &cmd); break;
	case RSP_CMD_THREAD_ALIVE:
		if (thread_chip(s, cmd.thread, &i) && ta1_chip_state(chip(s, i)) != TA1_CHIP_EXITED)
			send_str(s, "OK");
		else
			send_error(s, RSP_E_THREAD);
		break;
	case RSP_CMD_Q_SUPPORTED:
		reply_start(s);
		reply_fmt(s, "PacketSize=%x;QStartNoAckMode+;qXfer:features:read+;vContSupported+;QSnrIgnore+;"
			  "QSnrPod+;binary-upload+;qXfer:snr-config:read+",
			  RSP_MAX_PAYLOAD);
		reply_send(s);
		break;
	case RSP_CMD_Q_XFER_FEATURES: do_xfer_features(s, &cmd); break;
	case RSP_CMD_Q_XFER_SNR_CONFIG: do_xfer_snr_config(s, &cmd); break;
	case RSP_CMD_Q_FTHREADINFO:
		reply_start(s);
		reply_add(s, "m", 1);
		for (i = 0; i < s->nchips; i++)
			reply_fmt(s, i ? ",%x" : "%x", i + 1);
		reply_send(s);
		break;
	case RSP_CMD_Q_STHREADINFO: send_str(s, "l"); break;
	case RSP_CMD_Q_CURRENT_THREAD:
		reply_start(s);
		reply_fmt(s, "QC%x", s->g_chip + 1);
		reply_send(s);
		break;
	case RSP_CMD_Q_THREAD_EXTRA: do_thread_extra(s, cmd.thread); break;
	case RSP_CMD_Q_ATTACHED: send_str(s, "1"); break; /* quit detaches, the program runs on */
	case RSP_CMD_Q_CRC: do_crc(s, &cmd); break;
	case RSP_CMD_SNR_IGNORE:
		s->ignore_addr = cmd.addr;
		s->ignore_left = cmd.value;
		send_str(s, "OK");
		break;
	case RSP_CMD_SNR_POD:
		s->pod = cmd.value != 0;
		send_str(s, "OK");
		break;
	case RSP_CMD_START_NOACK:
		send_str(s, "OK");
		s->noack = true; /* from the next packet on; this one was acked */
		break;
	}
}

void rsp_session_feed(struct rsp_session *s, const void *data, size_t len)
{
	const uint8_t *p = data;
	for (size_t k = 0; k < len && s->end == RSP_END_NONE; k++) {
		switch (rsp_framer_push(&s->fr, p[k])) {
		case RSP_FRAME_NONE:
		case RSP_FRAME_ACK: break;
		case RSP_FRAME_INTERRUPT: rsp_session_interrupt(s); break;
		case RSP_FRAME_NAK:
			if (!s->noack && s->last_len)
				out_bytes(s, s->last, s->last_len);
			break;
		case RSP_FRAME_BAD_CSUM:
			if (s->noack)
				send_error(s, RSP_E_SYNTAX);
			else
				out_bytes(s, "-", 1);
			break;
		case RSP_FRAME_OVERSIZED:
		case RSP_FRAME_PACKET:
			/* In all-stop mode GDB sends nothing but 0x03 while the
			 * target runs; a packet then stops the target first. */
			rsp_session_interrupt(s);
			if (!s->noack)
				out_bytes(s, "+", 1);
			if (s->fr.overflow)
				send_error(s, RSP_E_RANGE);
			else
				handle_packet(s, s->fr.payload, s->fr.len);
			break;
		}
	}
}

/* ---- Life cycle ------------------------------------------------------------ */

struct rsp_session *rsp_session_new(struct ta1_machine *m, uint64_t sync_budget)
{
	struct rsp_session *s = snr_xcalloc(1, sizeof(*s));
	s->m = m;
	s->nchips = ta1_machine_nchips(m);
	s->sync_budget = sync_budget;
	s->quantum = DEFAULT_QUANTUM;
	s->action = snr_xcalloc(s->nchips, 1);
	s->stop_sig = SIG_TRAP;
	rsp_session_reset(s);
	return s;
}

void rsp_session_free(struct rsp_session *s)
{
	if (!s)
		return;
	free(s->action);
	free(s->out);
	free(s->config_from);
	free(s->config_obj);
	free(s);
}

void rsp_session_set_config_from(struct rsp_session *s, const char *from)
{
	free(s->config_from);
	s->config_from = from ? snr_xstrdup(from) : NULL;
	free(s->config_obj);
	s->config_obj = NULL;
}

void rsp_session_set_quantum(struct rsp_session *s, uint64_t quantum)
{
	s->quantum = quantum ? quantum : DEFAULT_QUANTUM;
}

void rsp_session_reset(struct rsp_session *s)
{
	rsp_framer_init(&s->fr);
	s->noack = false;
	s->pod = false; /* QSnrPod:1 was the last debugger's */
	s->ignore_left = 0;
	s->running = false;
	memset(s->action, 0, s->nchips);
	s->end = RSP_END_NONE;
	s->c_chip = -1;
	s->last_len = 0;
	s->out_len = 0;
	/* A debugger that dropped cannot remove its breakpoints. */
	for (unsigned b = 0; b < s->nbps; b++)
		for (unsigned i = 0; i < s->nchips; i++)
			ta1_chip_clear_breakpoint(chip(s, i), s->bps[b]);
	s->nbps = 0;
	if (!s->stop_exited && s->stop_chip >= s->nchips)
		s->stop_chip = 0;
}

bool rsp_session_running(const struct rsp_session *s) { return s->running; }
enum rsp_end rsp_session_end(const struct rsp_session *s) { return s->end; }

const char *rsp_session_output(const struct rsp_session *s, size_t *len)
{
	*len = s->out_len;
	return s->out;
}

void rsp_session_consume(struct rsp_session *s, size_t n)
{
	if (n >= s->out_len) {
		s->out_len = 0;
		return;
	}
	memmove(s->out, s->out + n, s->out_len - n);
	s->out_len -= n;
}
