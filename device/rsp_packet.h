/*
 * rsp_packet.h: GDB's remote serial protocol without sockets or machines.
 *
 * Three layers, each a pure function of its input so that tests and the
 * fuzzer reach them from data:
 *
 *   bytes --rsp_framer_push--> frame events (packet, ack, nak, interrupt)
 *   packet payload --rsp_parse--> struct rsp_cmd (one kind per packet type)
 *   reply text --rsp_frame_reply--> "$text#cs" bytes on the wire
 *
 * A frame on the wire is '$' payload '#' two hex checksum digits, the
 * checksum being the payload's bytes summed modulo 256. Outside a frame,
 * '+' and '-' acknowledge, and the byte 0x03 asks a running target to stop.
 * Binary data (X packets, qXfer replies) escapes '#', '$', '}' and '*' as
 * '}' followed by the byte xor 0x20.
 *
 * Error replies are "E" and two hex digits; the codes snr uses:
 *
 *   E01  malformed packet (bad hex, missing field, bad thread id)
 *   E02  a length out of range (larger than the packet size, or than memory)
 *   E03  memory not accessible at that address
 *   E04  no such register, or a read-only one
 *   E05  no such thread (chip)
 *   E06  breakpoint table full
 *
 * A packet whose checksum is wrong gets a NAK ('-') while acknowledgements
 * are on, and E01 once QStartNoAckMode is in effect (GDB resends on a NAK,
 * and without acks it waits for a reply). A packet longer than
 * RSP_MAX_PAYLOAD is acknowledged and answered E02.
 */
#ifndef SNR_RSP_PACKET_H
#define SNR_RSP_PACKET_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The PacketSize offered in qSupported: the longest payload GDB may send.
 * 16 KiB moves 8 KiB of memory per m/M packet. */
#define RSP_MAX_PAYLOAD 16384
#define RSP_MAX_VCONT 8

enum rsp_error {
	RSP_OK = 0,
	RSP_E_SYNTAX = 0x01,
	RSP_E_RANGE = 0x02,
	RSP_E_MEMORY = 0x03,
	RSP_E_REGISTER = 0x04,
	RSP_E_THREAD = 0x05,
	RSP_E_BPFULL = 0x06,
};

/* ---- Framing ------------------------------------------------------------- */

enum rsp_frame_event {
	RSP_FRAME_NONE,      /* byte consumed, nothing complete yet */
	RSP_FRAME_PACKET,    /* a packet with a good checksum: payload, len */
	RSP_FRAME_BAD_CSUM,  /* a complete packet whose checksum is wrong */
	RSP_FRAME_OVERSIZED, /* a complete packet longer than RSP_MAX_PAYLOAD */
	RSP_FRAME_ACK,       /* '+' */
	RSP_FRAME_NAK,       /* '-' */
	RSP_FRAME_INTERRUPT, /* 0x03 outside a packet */
};

struct rsp_framer {
	int state; /* private */
	uint8_t sum, given;
	bool overflow, bad_digit;
	size_t len;
	char payload[RSP_MAX_PAYLOAD + 1]; /* NUL-terminated for convenience */
};

void rsp_framer_init(struct rsp_framer *f);
/* Consumes one byte. On RSP_FRAME_PACKET the payload is f->payload[0..f->len)
 * until the next call. A '$' inside a packet starts a new packet (the bytes
 * before it were a frame cut short); other bytes outside packets are ignored. */
enum rsp_frame_event rsp_framer_push(struct rsp_framer *f, uint8_t byte);

/* Appends "$payload#cs" to out (at most cap bytes, escaping nothing: reply
 * payloads are built escaped). Returns the length written, 0 if cap is short. */
size_t rsp_frame_reply(const char *payload, size_t len, char *out, size_t cap);
uint8_t rsp_checksum(const char *data, size_t len);

/* ---- Hex and binary ----------------------------------------------------- */

int rsp_hex_digit(int c); /* -1 if not a hex digit */
/* Decodes 2*n hex digits into n bytes. Returns false on a non-hex digit. */
bool rsp_hex_decode(const char *hex, size_t n, uint8_t *out);
/* Writes 2*n lowercase hex digits (no NUL). */
void rsp_hex_encode(const uint8_t *in, size_t n, char *out);
/* Appends the 64-bit value as 16 hex digits in target (little-endian) order. */
void rsp_hex_u64le(uint64_t v, char *out);
/* Undoes '}' escaping of [in, in+n) into out (which may be in). Returns the
 * decoded length, or -1 if the data ends with a lone '}'. */
long rsp_unescape(const char *in, size_t n, uint8_t *out);
/* Escapes n bytes into out (room for 2n). Returns the escaped length. */
size_t rsp_escape(const uint8_t *in, size_t n, char *out);

/* ---- Packets ------------------------------------------------------------ */

enum rsp_kind {
	RSP_CMD_UNKNOWN, /* answered with the empty reply */
	RSP_CMD_STOP_REASON,   /* ? */
	RSP_CMD_READ_REGS,     /* g */
	RSP_CMD_WRITE_REGS,    /* G hex: data, data_len */
	RSP_CMD_READ_REG,      /* p n: reg */
	RSP_CMD_WRITE_REG,     /* P n=v: reg, value */
	RSP_CMD_READ_MEM,      /* m addr,len */
	RSP_CMD_READ_MEM_BIN,  /* x addr,len (gdb 16's binary read; qSupported binary-upload+) */
	RSP_CMD_WRITE_MEM,     /* M addr,len:hex and X addr,len:bin: data, len */
	RSP_CMD_CONTINUE,      /* c [addr], C sig[;addr]: has_addr, addr */
	RSP_CMD_STEP,          /* s [addr], S sig[;addr] */
	RSP_CMD_VCONT,         /* vCont;a[:t]...: actions */
	RSP_CMD_VCONT_QUERY,   /* vCont? */
	RSP_CMD_INSERT_BP,     /* Z0/Z1,addr,kind: bp_type, addr, len = kind */
	RSP_CMD_REMOVE_BP,     /* z0/z1 */
	RSP_CMD_KILL,          /* k */
	RSP_CMD_DETACH,        /* D */
	RSP_CMD_SET_THREAD,    /* Hg t / Hc t: thread_op, thread */
	RSP_CMD_THREAD_ALIVE,  /* T t */
	RSP_CMD_Q_SUPPORTED,   /* qSupported[:features] */
	RSP_CMD_Q_XFER_FEATURES, /* qXfer:features:read:annex:off,len */
	RSP_CMD_Q_XFER_SNR_CONFIG, /* qXfer:snr-config:read:annex:off,len (snr's own object: the machine config) */
	RSP_CMD_Q_FTHREADINFO, /* qfThreadInfo */
	RSP_CMD_Q_STHREADINFO, /* qsThreadInfo */
	RSP_CMD_Q_CURRENT_THREAD, /* qC */
	RSP_CMD_Q_THREAD_EXTRA,   /* qThreadExtraInfo,t */
	RSP_CMD_Q_ATTACHED,    /* qAttached */
	RSP_CMD_Q_CRC,         /* qCRC:addr,len: addr, len */
	RSP_CMD_START_NOACK,   /* QStartNoAckMode */
	RSP_CMD_SNR_IGNORE,    /* QSnrIgnore:addr,count (snr's own): addr, value */
	RSP_CMD_SNR_POD,       /* QSnrPod:0|1 (snr's own): value */
};

/* Thread ids: -1 = all threads, 0 = any thread, n > 0 = chip n - 1. */
struct rsp_vcont_action {
	char action; /* 'c' or 's' (C and S map to them; the signal is dropped) */
	int64_t thread;
};

struct rsp_cmd {
	enum rsp_kind kind;
	uint64_t addr, len;   /* memory; Z/z: len is the kind; qXfer: addr = offset */
	bool has_addr;        /* c/s with a resume address */
	unsigned reg;         /* p/P */
	uint64_t value;       /* P, little-endian decoded */
	const uint8_t *data;  /* G, M, X: decoded bytes in the caller's scratch */
	size_t data_len;
	int bp_type;          /* 0 software, 1 hardware */
	char thread_op;       /* H: 'g' or 'c' */
	int64_t thread;       /* H, T, qThreadExtraInfo */
	char annex[32];       /* qXfer:features:read, qXfer:snr-config:read */
	unsigned nactions;
	struct rsp_vcont_action actions[RSP_MAX_VCONT];
};

/* Decodes one payload (not NUL-terminated: len counts). Bytes that M, X and G
 * carry are decoded into scratch (scratch_cap >= len is always enough).
 * Returns RSP_OK with *cmd filled, or an enum rsp_error for the reply. An
 * unrecognised packet is RSP_OK with kind RSP_CMD_UNKNOWN. */
enum rsp_error rsp_parse(const char *payload, size_t len, uint8_t *scratch, size_t scratch_cap,
			 struct rsp_cmd *cmd);

#endif
