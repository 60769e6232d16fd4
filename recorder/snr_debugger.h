/*
 * snr_debugger.h: the debugger-backend plugin ABI (version 7; older
 * backends still work: version 1 has no read_regs_cheap(), 2 no
 * cont_selected(), 3 no write_regs()/write_mem(), 4 no close_stopped(),
 * 5 no read_auxv(), 6 no crc_mem()).
 *
 * The recorder drives a program through a step debugger with nothing more
 * than this table: open (connect, launch or attach), breakpoints, continue,
 * single-step, read registers, read memory, detach. Backends in the tree: the
 * GDB remote serial protocol client (recorder/dbg_rsp.c; works against
 * `snr device --gdb`, gdbserver and QEMU's -g stub) and ptrace
 * (recorder/dbg_ptrace.c). A vendor backend fills in the same table, sets
 * abi_version to SNR_DBG_ABI_VERSION, and exports it as snr_dbg_plugin from a shared object (docs/recorder-plugins.md).
 *
 * Registers are described by the backend (name and size, as the target
 * reports them, e.g. from GDB's target.xml); the recorder matches them to the
 * ISA plugin's registers by name. Values are little-endian byte strings.
 * Every function returns 0 on success or -1 with a message available from
 * error(); a message says what failed and where (packet, address, errno).
 */
#ifndef SNR_DEBUGGER_H
#define SNR_DEBUGGER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define SNR_DBG_ABI_VERSION 8
#define SNR_DBG_ABI_MIN_VERSION 1 /* the oldest version the recorder drives */

struct snr_dbg; /* a backend's connection, opaque */

struct snr_dbg_reg {
	char name[32];   /* lower case, as GDB names it: "x1"/"ra", "rax", "pc", "rip" */
	uint32_t size;   /* bytes */
	uint32_t offset; /* byte offset of this register in read_regs()'s buffer */
};

enum snr_dbg_stop_kind {
	SNR_DBG_STOP_TRAP,     /* breakpoint or completed step (SIGTRAP) */
	SNR_DBG_STOP_SIGNAL,   /* stopped by another signal (signo in code): a fault */
	SNR_DBG_STOP_EXITED,   /* the program exited (status in code) */
	SNR_DBG_STOP_KILLED,   /* terminated by a signal (signo in code) */
	SNR_DBG_STOP_TIMEOUT,  /* cont() reached its timeout; the target was interrupted */
};

struct snr_dbg_stop {
	enum snr_dbg_stop_kind kind;
	int code;
	int thread;  /* the thread (chip) that stopped, 0-based, or -1 if unknown */
	uint64_t pc; /* valid for TRAP and SIGNAL */
};

struct snr_dbg_ops {
	uint32_t abi_version; /* SNR_DBG_ABI_VERSION */
	const char *name;     /* "rsp", "ptrace", ... */

	/* target: "tcp:HOST:PORT", "unix:PATH", "pid:N", or NULL with argv to
	 * launch a command (argv[0] searched in PATH) stopped at its first
	 * instruction. On failure returns NULL and fills err. */
	struct snr_dbg *(*open)(const char *target, char *const argv[], char *err, size_t errlen);
	/* Detaches (the program goes on) if still attached, then frees. */
	void (*close)(struct snr_dbg *d);
	const char *(*error)(struct snr_dbg *d);

	/* The target's architecture as GDB names it ("riscv:rv64",
	 * "i386:x86-64", "aarch64"), or NULL if the target did not say. */
	const char *(*arch)(struct snr_dbg *d);
	/* Threads (chips on TA1): count, and which one later calls act on. */
	int (*nthreads)(struct snr_dbg *d);
	int (*select_thread)(struct snr_dbg *d, int thread);
	/* PID of the debugged process, or 0 if it has none (a device). */
	int (*pid)(struct snr_dbg *d);

	/* The register file: *n entries, valid until close. */
	const struct snr_dbg_reg *(*registers)(struct snr_dbg *d, size_t *n);
	/* All registers of the selected thread into buf (sized by the last
	 * register's offset + size). May answer from values that came with the
	 * last stop reply, at no round trip. */
	int (*read_regs)(struct snr_dbg *d, uint8_t *buf);
	/* len bytes at addr. Fails (does not return partial data) if any byte
	 * cannot be read, naming the address. */
	int (*read_mem)(struct snr_dbg *d, uint64_t addr, void *buf, size_t len);

	int (*set_breakpoint)(struct snr_dbg *d, uint64_t addr);
	int (*clear_breakpoint)(struct snr_dbg *d, uint64_t addr);
	/* Resumes all threads until a stop; timeout_ms > 0 interrupts the target
	 * after that long and reports SNR_DBG_STOP_TIMEOUT. */
	int (*cont)(struct snr_dbg *d, int timeout_ms, struct snr_dbg_stop *stop);
	/* Executes one instruction of the selected thread. */
	int (*step)(struct snr_dbg *d, struct snr_dbg_stop *stop);
	/* Lets the program go on without the debugger. */
	int (*detach)(struct snr_dbg *d);
	/* Ends the program. */
	int (*kill)(struct snr_dbg *d);

	/* Version 2, optional (NULL: read_regs is as cheap as any read). Reads
	 * the registers that cost at most one exchange with the target (RSP:
	 * the 'g' reply and what the stop reply expedited, not the registers
	 * that take a 'p' round trip each, such as QEMU's AArch64 vector
	 * registers) into their places in buf, leaving the other bytes of buf
	 * alone, and sets got[i] (i indexes registers()) for each register
	 * whose bytes in buf are now current, clearing the others. The
	 * recorder reads the rest only when it needs them. */
	int (*read_regs_cheap)(struct snr_dbg *d, uint8_t *buf, bool *got);

	/* Version 3, optional (NULL: cont(), which resumes every thread). As
	 * cont(), but resumes the selected thread alone and leaves the others
	 * stopped, as step() does (RSP: vCont;c:TID). `snr record --method
	 * sim` runs the target through the window with it, so that the chips
	 * not recorded stay stopped as they do while stepping. */
	int (*cont_selected)(struct snr_dbg *d, int timeout_ms, struct snr_dbg_stop *stop);
	/* Version 3, optional (NULL, or returning 1 without resuming: the
	 * target cannot count hits). As cont_selected, but the breakpoint at
	 * addr, which the caller has set, stops the thread only at its hits-th
	 * arrival (hits >= 1); the arrivals before pass. RSP: QSnrIgnore:ADDR,
	 * HITS-1 and vCont;c:TID where the stub offers QSnrIgnore+ (snr device
	 * does). GDB's protocol has no hit counts, so without it a recorder
	 * stops at every arrival. */
	int (*cont_to_hit)(struct snr_dbg *d, uint64_t addr, uint64_t hits, struct snr_dbg_stop *stop);

	/* Version 4, optional (NULL: `snr record --method sim` cannot bring
	 * the target back to its last verified checkpoint, so a mismatch there
	 * is an error). Writes every register of the selected thread from buf
	 * (read_regs()'s layout; RSP: a 'P' per register), and len bytes at
	 * addr (RSP: 'M'). The recorder writes back only values it read from
	 * the target (docs/recording.md, "Recovery"). */
	int (*write_regs)(struct snr_dbg *d, const uint8_t *buf);
	int (*write_mem)(struct snr_dbg *d, uint64_t addr, const void *buf, size_t len);

	/* Version 5, optional (NULL: the recorder calls close(), which lets
	 * the program go on). Ends the session leaving the program stopped
	 * where it is, for the next debugger, and frees d; the breakpoints set
	 * are removed first. Fills how with what became of the program (a
	 * clause: "snr closed the connection without detaching, ..."). Returns
	 * 0 if the program is left stopped, -1 if it could not be (it was
	 * ended or let go, as how says). The recorder calls it when a check
	 * before the window fails: the target was not continued, and the user
	 * finds it where it was. RSP: the socket is closed without D (snr
	 * device --halt and gdbserver keep the program for the next debugger;
	 * QEMU's user-mode stub lets it run); ptrace: an attached process is
	 * detached with SIGSTOP, a launched one, which nothing else could
	 * reach, is killed. */
	int (*close_stopped)(struct snr_dbg *d, char *how, size_t howlen);

	/* Version 6, optional (NULL, or returning 1: the target tells no
	 * auxiliary vector). Copies the program's auxiliary vector (the
	 * kernel's (type, value) pairs, in the target's word size and byte
	 * order) into buf, at most cap bytes, and sets *len. The recorder
	 * finds the vDSO by its AT_SYSINFO_EHDR (docs/recording.md, "Reading
	 * the time"). RSP: qXfer:auxv:read; ptrace: /proc/PID/auxv. */
	int (*read_auxv)(struct snr_dbg *d, uint8_t *buf, size_t cap, size_t *len);

	/* Version 7, optional (NULL, or returning 1: the target cannot).
	 * GDB's CRC-32 (lib/snr_crc.h: snr_crc32_gdb from 0xffffffff) of the
	 * len bytes at addr, computed by the target, into *crc: the recorder
	 * checks memory the simulation wrote against the target without
	 * reading it back, and reads it only where the CRCs differ. RSP:
	 * qCRC:addr,len (gdbserver, snr device; QEMU's stubs answer it as
	 * unsupported, asked once). */
	int (*crc_mem)(struct snr_dbg *d, uint64_t addr, size_t len, uint32_t *crc);

	/* Version 8, optional (NULL, or returning 1: the target does not tell).
	 * The TA1 machine config the target runs, a JSON object {"from": WHERE,
	 * "config": {...}} (WHERE a phrase saying whose it is; the config in
	 * lib/snr_config.h's keys), into *text, malloc'd: a recording without
	 * --config stores it, and one whose --config differs from it is refused
	 * before the target runs (docs/recording.md, "Machine config"). 0, 1,
	 * or -1 (error() says why). RSP: qXfer:snr-config:read (snr device;
	 * gdbserver and QEMU do not offer it: 1). */
	int (*machine_config)(struct snr_dbg *d, char **text);
};

extern const struct snr_dbg_ops snr_dbg_rsp;
/* snr device's pod mode on an rsp connection (QSnrPod:1, device/rsp_session.c):
 * a step of a chip blocked at a ta.wait runs no other chip and stops with
 * the pc unchanged; `snr record --pod` steps every chip itself. 0, or -1
 * (error() says why: the stub does not offer QSnrPod+). */
int snr_dbg_rsp_pod_mode(struct snr_dbg *d);
/* crc_mem over n ranges on an rsp connection, their qCRC packets sent
 * together where the stub is snr device (one round trip), else one at a
 * time; status[k] as crc_mem returns for range k (0: crc[k] is the
 * target's, 1: it cannot tell). 0, or -1 (error() says why). */
int snr_dbg_rsp_crc_many(struct snr_dbg *d, size_t n, const uint64_t *addr, const size_t *len, uint32_t *crc,
			 int *status);
/* The machine config snr device runs (qXfer:snr-config:read, offered as
 * qXfer:snr-config:read+; device/rsp_machine_config.h): its JSON object
 * {"from": WHERE, "config": {...}} into *text (malloc'd). 0; 1 when the
 * stub does not offer it (gdbserver, QEMU); -1, error() saying why. */
int snr_dbg_rsp_machine_config(struct snr_dbg *d, char **text);
extern const struct snr_dbg_ops snr_dbg_ptrace;

#endif
