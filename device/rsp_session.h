/*
 * rsp_session.h: one debugger's conversation with a TA1 machine, on byte
 * buffers. Bytes from the debugger go in with rsp_session_feed(); the bytes
 * to send back collect in an output buffer. device/rsp_server.c moves them
 * over a socket; tests and the fuzzer move them by hand.
 *
 * Each chip is a thread, chip i being thread id i + 1. A resume (c, s,
 * vCont) leaves the session "running": the driver calls
 * rsp_session_run_slice() until the stop reply has been produced, polling
 * the debugger between slices so that 0x03 can interrupt. A session made
 * with a sync_budget > 0 instead runs every resume to its stop inside
 * rsp_session_feed(), giving up after sync_budget instructions per chip with
 * a SIGINT stop, so a buffer-driven session never hangs.
 */
#ifndef SNR_RSP_SESSION_H
#define SNR_RSP_SESSION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "device/ta1_machine.h"

struct rsp_session;

enum rsp_end {
	RSP_END_NONE,     /* the conversation goes on */
	RSP_END_KILLED,   /* k: the debugger ended the program */
	RSP_END_DETACHED, /* D: the program runs on without a debugger */
};

/* Both the target description and the g packet list the registers in
 * enum ta1_reg_id order: x0..x31 (0..31), pc (32), the 16 DMA sync flags
 * (33..48), cycle, instret, chipid and nchips (49..52), all 64-bit. */
#define RSP_NUM_REGS TA1_REG_COUNT

/* A session over m, whose chips stand where they are (the first stop reply
 * is SIGTRAP on chip 0). The machine stays the caller's. */
struct rsp_session *rsp_session_new(struct ta1_machine *m, uint64_t sync_budget);
void rsp_session_free(struct rsp_session *s);

/* Where the machine's config came from ("--config M.json"; NULL: the
 * built-in defaults), told with the config to a debugger that reads
 * qXfer:snr-config (device/rsp_machine_config.h). */
void rsp_session_set_config_from(struct rsp_session *s, const char *from);

/* Instructions per chip per slice (default 65536, the machine's quantum). */
void rsp_session_set_quantum(struct rsp_session *s, uint64_t quantum);

/* A new connection: acknowledgements back on, the thread selection and the
 * framing state reset. Breakpoints are removed from every chip (a debugger
 * that dropped cannot remove its own). */
void rsp_session_reset(struct rsp_session *s);

void rsp_session_feed(struct rsp_session *s, const void *data, size_t len);
bool rsp_session_running(const struct rsp_session *s);
/* Runs each resumed chip for one quantum (round-robin); on a stop, queues
 * the stop reply and leaves the session halted. */
void rsp_session_run_slice(struct rsp_session *s);
/* Stops a running session as 0x03 does (stop reply SIGINT). */
void rsp_session_interrupt(struct rsp_session *s);
enum rsp_end rsp_session_end(const struct rsp_session *s);

/* The bytes queued for the debugger; consume drops the first n. */
const char *rsp_session_output(const struct rsp_session *s, size_t *len);
void rsp_session_consume(struct rsp_session *s, size_t n);

/* The whole target description (target.xml), NUL-terminated. */
const char *rsp_target_xml(void);

#endif
