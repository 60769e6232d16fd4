/*
 * record.h: the recorder (Snap & Replay's Algorithm 1) over the debugger and
 * ISA plugin ABIs.
 */
#ifndef SNR_RECORD_H
#define SNR_RECORD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "recorder/snr_debugger.h"
#include "isa/snr_isa.h"

struct snr_record_summary;

struct snr_record_opts {
	const struct snr_dbg_ops *dbg;
	const char *target;     /* "tcp:...", "unix:...", "pid:N", or NULL to launch argv */
	char *const *argv;
	const char *elf_path;   /* symbols; NULL: /proc/PID/exe and its mapped objects */
	const char *isa;        /* "auto" or a plugin name */
	const char *breakpoint; /* SYM, 0xADDR, SYM+OFF or 0xADDR+OFF */
	uint64_t skip;          /* record the (skip+1)-th hit */
	uint64_t count;         /* N */
	int chip;               /* thread to record */
	int timeout_s;          /* for the breakpoint to be hit */
	const char *config_path; /* TA1 machine config to store in the trace (recorder/machine_config.h) */
	const char *target_config; /* the target's config object, asked already (a pod); NULL: ask the target */
	const char *out_path;
	bool progress;          /* draw a progress line on stderr */
	bool kill_after;        /* kill the program after recording (default: detach) */
	const char *method;     /* "auto" (NULL), "sim" or "step" (docs/recording.md) */
	bool until_return;      /* end the window when the function of the breakpoint (at its entry)
				   returns; count is then a ceiling (end_reason "returned") */
	/* Set (to the signal's number) by a SIGINT/SIGTERM handler: the window
	 * ends before the next step, the trace is finished with its digest and
	 * marked "interrupted". NULL: not watched. */
	volatile int *stop;
	volatile int *in_window; /* set to 1 when the window starts, if not NULL */
	/* Several windows of one run (docs/recording.md, "Several windows"):
	 * windows K > 0 records K windows into the trace set out_path (a folder,
	 * lib/snr_set.h), window k from the (skip + k * every + 1)-th hit of the
	 * breakpoint; between windows the target runs freely. 0: one trace. */
	uint64_t windows;
	uint64_t every; /* hits from one window's start to the next (0: 1) */
	/* Called after each window of a set is written (path: its trace). */
	void (*window_done)(void *ctx, uint64_t k, const char *path, const struct snr_record_summary *s);
	void *window_ctx;
};

struct snr_record_summary {
	uint64_t instructions;
	uint64_t regs_captured;
	uint64_t bytes_captured;
	uint64_t bytes_written; /* memory written inside the window */
	uint64_t bytes_post;    /* of it, written by system calls (saved after their steps) */
	uint64_t trace_bytes;
	double seconds;
	const char *end_reason; /* "count", "returned", "exited", "fault", "killed", "interrupted" */
	int signal;             /* "interrupted": by this signal */
	int exit_code;
	/* Instructions whose access query reported a fault (an effect the ISA
	 * plugin does not model, bytes it cannot decode): what they read may be
	 * missing from the trace. The first one's index, pc and reason. */
	uint64_t unmodelled, first_unmodelled_index, first_unmodelled_pc;
	char first_unmodelled[200];
	const char *method;        /* "sim" or "step": what recorded the window */
	char machine_config[640];  /* TA1: the stored config and whose it is (recorder/machine_config.h) */
	uint64_t requests;         /* debugger calls made on the target (at most one round trip each over RSP,
				    * but for long memory reads) */
	uint64_t bytes_fetched;    /* memory read from the target */
	uint64_t checkpoints;      /* sim: window indices where the target's registers were compared */
	uint64_t target_steps;     /* sim: single steps of the target while it ran the window for real */
	uint64_t target_conts;     /* sim: continues to a breakpoint */
	uint64_t target_instructions; /* sim: instructions the target ran itself (system and counter reads) */
	uint64_t peer_waits;       /* sim: ta.waits on a peer's signal the target ran, the simulation on after them */
	uint64_t peer_bytes_changed; /* sim: bytes the window knew that a peer changed while it waited (reloaded) */
	uint64_t unread;           /* loads from memory the debugger cannot read ([vvar]): run on the target */
	uint64_t vdso_calls;       /* calls into the vDSO the target ran as a unit (trace flag 64) */
	uint64_t windows;          /* a set: windows written whole */
	const char *set_path;      /* a set: its folder (SET, or SET.partial when it is not complete) */
	/* sim: a checkpoint mismatched and the window from fallback_at on was
	 * recorded by stepping (fallback_detected_at: the checkpoint) */
	bool fell_back;
	uint64_t fallback_at, fallback_detected_at;
	uint64_t fallback_pc;      /* the pc of instruction fallback_detected_at in the simulation, or the wait's */
	bool fallback_blocked;     /* on its way there the target blocked at a ta.wait (at fallback_pc) that the
				    * simulation passed */
	char fallback_reason[400];
	/* sim, a chip of a pod: signals of peers that reached the target after
	 * the checkpoint it was put back at, kept in its flags */
	uint64_t peer_signals_kept;
};

/* Runs the whole recording. Returns 0, or -1 with err filled (the steps
 * recorded so far are kept in the journal, OUT.partial, read as truncated). */
int snr_record(const struct snr_record_opts *o, struct snr_record_summary *sum, char *err, size_t errlen);

/* A vendor's ISA plugin (exporting `const struct snr_isa_ops
 * snr_isa_plugin`) or debugger backend (`const struct snr_dbg_ops
 * snr_dbg_plugin`) from a shared object; NULL with err naming what is wrong
 * (docs/recorder-plugins.md). */
const struct snr_isa_ops *snr_isa_load(const char *path, char *err, size_t errlen);
const struct snr_dbg_ops *snr_dbg_load(const char *path, char *err, size_t errlen);

#endif
