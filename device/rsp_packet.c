/*
 * rsp_packet.c: framing, checksums, hex and binary escaping, and the decoder
 * that turns each packet snr's GDB server answers into a struct rsp_cmd.
 *
 * Nothing here touches a socket or a machine, and nothing trusts its input:
 * every number is checked for hex digits and for overflow, every length
 * against the bytes actually present, and a frame that never ends costs at
 * most RSP_MAX_PAYLOAD bytes of buffer. tests/rsp/ drives it from
 * transcripts and tests/fuzz/fuzz_rsp.c from arbitrary bytes.
 */
#include "rsp_packet.h"

#include <string.h>

enum { FR_IDLE, FR_DATA, FR_CSUM1, FR_CSUM2 };

void rsp_framer_init(struct rsp_framer *f)
{
	f->state = FR_IDLE;
	f->sum = 0;
	f->given = 0;
	f->overflow = false;
	f->bad_digit = false;
	f->len = 0;
	f->payload[0] = 0;
}

int rsp_hex_digit(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

enum rsp_frame_event rsp_framer_push(struct rsp_framer *f, uint8_t b)
{
	int d;
	switch (f->state) {
	case FR_IDLE:
		if (b == '$') {
			rsp_framer_init(f);
			f->state = FR_DATA;
			return RSP_FRAME_NONE;
		}
		if (b == '+')
			return RSP_FRAME_ACK;
		if (b == '-')
			return RSP_FRAME_NAK;
		if (b == 0x03)
			return RSP_FRAME_INTERRUPT;
		return RSP_FRAME_NONE;
	case FR_DATA:
		if (b == '$') { /* a frame cut short: start over */
			rsp_framer_init(f);
			f->state = FR_DATA;
			return RSP_FRAME_NONE;
		}
		if (b == '#') {
			f->state = FR_CSUM1;
			return RSP_FRAME_NONE;
		}
		f->sum = (uint8_t)(f->sum + b);
		if (f->len < RSP_MAX_PAYLOAD)
			f->payload[f->len++] = (char)b;
		else
			f->overflow = true;
		return RSP_FRAME_NONE;
	case FR_CSUM1:
		d = rsp_hex_digit(b);
		f->given = (uint8_t)((d < 0 ? 0 : d) << 4);
		f->bad_digit = d < 0;
		f->state = FR_CSUM2;
		return RSP_FRAME_NONE;
	case FR_CSUM2: {
		bool bad = f->bad_digit;
		d = rsp_hex_digit(b);
		if (d < 0)
			bad = true;
		else
			f->given = (uint8_t)(f->given | d);
		f->state = FR_IDLE;
		f->payload[f->len] = 0;
		if (bad || f->given != f->sum)
			return RSP_FRAME_BAD_CSUM;
		return f->overflow ? RSP_FRAME_OVERSIZED : RSP_FRAME_PACKET;
	}
	}
	f->state = FR_IDLE;
	return RSP_FRAME_NONE;
}

uint8_t rsp_checksum(const char *data, size_t len)
{
	uint8_t s = 0;
	for (size_t i = 0; i < len; i++)
		s = (uint8_t)(s + (uint8_t)data[i]);
	return s;
}

size_t rsp_frame_reply(const char *payload, size_t len, char *out, size_t cap)
{
	static const char hex[] = "0123456789abcdef";
	if (cap < 4 || len > cap - 4)
		return 0;
	uint8_t s = rsp_checksum(payload, len);
	out[0] = '$';
	memcpy(out + 1, payload, len);
	out[len + 1] = '#';
	out[len + 2] = hex[s >> 4];
	out[len + 3] = hex[s & 15];
	return len + 4;
}

bool rsp_hex_decode(const char *hex, size_t n, uint8_t *out)
{
	for (size_t i = 0; i < n; i++) {
		int hi = rsp_hex_digit((unsigned char)hex[2 * i]);
		int lo = rsp_hex_digit((unsigned char)hex[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

void rsp_hex_encode(const uint8_t *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
}

void rsp_hex_u64le(uint64_t v, char *out)
{
	uint8_t b[8];
	for (int i = 0; i < 8; i++)
		b[i] = (uint8_t)(v >> (8 * i));
	rsp_hex_encode(b, 8, out);
}

long rsp_unescape(const char *in, size_t n, uint8_t *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t b = (uint8_t)in[i];
		if (b == '}') {
			if (++i == n)
				return -1;
			b = (uint8_t)in[i] ^ 0x20;
		}
		out[o++] = b;
	}
	return (long)o;
}

size_t rsp_escape(const uint8_t *in, size_t n, char *out)
{
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t b = in[i];
		if (b == '#' || b == '$' || b == '}' || b == '*') {
			out[o++] = '}';
			b ^= 0x20;
		}
		out[o++] = (char)b;
	}
	return o;
}

/* ---- The decoder --------------------------------------------------------- */

/* A cursor over one payload. */
struct cur {
	const char *p, *end;
};

static bool at_end(const struct cur *c) { return c->p == c->end; }

static bool eat(struct cur *c, char ch)
{
	if (c->p < c->end && *c->p == ch) {
		c->p++;
		return true;
	}
	return false;
}

static bool eat_str(struct cur *c, const char *s)
{
	size_t n = strlen(s);
	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n))
		return false;
	c->p += n;
	return true;
}

/* Whether the rest of the payload is exactly s. */
static bool rest_is(const struct cur *c, const char *s)
{
	size_t n = strlen(s);
	return (size_t)(c->end - c->p) == n && !memcmp(c->p, s, n);
}

/* One or more hex digits, at most 16 (values past 64 bits are refused). */
static bool hex_u64(struct cur *c, uint64_t *out)
{
	uint64_t v = 0;
	int n = 0, d;
	while (c->p < c->end && (d = rsp_hex_digit((unsigned char)*c->p)) >= 0) {
		if (v >> 60)
			return false;
		v = v << 4 | (uint64_t)d;
		c->p++;
		n++;
	}
	*out = v;
	return n > 0;
}

/* A thread id: "-1", or hex (0 = any). */
static bool thread_id(struct cur *c, int64_t *out)
{
	uint64_t v;
	if (eat(c, '-')) {
		if (!eat(c, '1'))
			return false;
		*out = -1;
		return true;
	}
	if (!hex_u64(c, &v) || v > INT32_MAX)
		return false;
	*out = (int64_t)v;
	return true;
}

/* "addr,len" */
static bool addr_len(struct cur *c, uint64_t *addr, uint64_t *len)
{
	return hex_u64(c, addr) && eat(c, ',') && hex_u64(c, len);
}

static enum rsp_error parse_vcont(struct cur *c, struct rsp_cmd *cmd)
{
	cmd->kind = RSP_CMD_VCONT;
	cmd->nactions = 0;
	if (at_end(c))
		return RSP_E_SYNTAX;
	while (eat(c, ';')) {
		uint64_t sig;
		char a = at_end(c) ? 0 : *c->p++;
		if (a == 'C' || a == 'S') {
			if (!hex_u64(c, &sig) || sig > 0xff)
				return RSP_E_SYNTAX;
			a = (char)(a - 'A' + 'a');
		} else if (a != 'c' && a != 's') {
			return RSP_E_SYNTAX; /* 't', 'r' and the rest are not offered */
		}
		int64_t t = -1;
		if (eat(c, ':') && !thread_id(c, &t))
			return RSP_E_SYNTAX;
		if (cmd->nactions == RSP_MAX_VCONT)
			return RSP_E_RANGE;
		cmd->actions[cmd->nactions].action = a;
		cmd->actions[cmd->nactions].thread = t;
		cmd->nactions++;
	}
	return at_end(c) && cmd->nactions ? RSP_OK : RSP_E_SYNTAX;
}

static enum rsp_error parse_q(struct cur *c, struct rsp_cmd *cmd)
{
	if (eat_str(c, "qSupported")) {
		cmd->kind = RSP_CMD_Q_SUPPORTED; /* GDB's features need no answer */
		return RSP_OK;
	}
	bool features = eat_str(c, "qXfer:features:read:");
	if (features || eat_str(c, "qXfer:snr-config:read:")) {
		size_t n = 0;
		while (!at_end(c) && *c->p != ':') {
			if (n + 1 >= sizeof(cmd->annex))
				return RSP_E_RANGE;
			cmd->annex[n++] = *c->p++;
		}
		cmd->annex[n] = 0;
		if (!eat(c, ':') || !addr_len(c, &cmd->addr, &cmd->len) || !at_end(c))
			return RSP_E_SYNTAX;
		cmd->kind = features ? RSP_CMD_Q_XFER_FEATURES : RSP_CMD_Q_XFER_SNR_CONFIG;
		return RSP_OK;
	}
	if (rest_is(c, "qfThreadInfo")) {
		cmd->kind = RSP_CMD_Q_FTHREADINFO;
		return RSP_OK;
	}
	if (rest_is(c, "qsThreadInfo")) {
		cmd->kind = RSP_CMD_Q_STHREADINFO;
		return RSP_OK;
	}
	if (eat_str(c, "qThreadExtraInfo,")) {
		if (!thread_id(c, &cmd->thread) || !at_end(c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_Q_THREAD_EXTRA;
		return RSP_OK;
	}
	if (eat_str(c, "qAttached")) {
		cmd->kind = RSP_CMD_Q_ATTACHED; /* with or without ":pid" */
		return RSP_OK;
	}
	if (eat_str(c, "qCRC:")) {
		if (!addr_len(c, &cmd->addr, &cmd->len) || !at_end(c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_Q_CRC;
		return RSP_OK;
	}
	if (rest_is(c, "qC")) {
		cmd->kind = RSP_CMD_Q_CURRENT_THREAD;
		return RSP_OK;
	}
	cmd->kind = RSP_CMD_UNKNOWN;
	return RSP_OK;
}

enum rsp_error rsp_parse(const char *payload, size_t len, uint8_t *scratch, size_t scratch_cap,
			 struct rsp_cmd *cmd)
{
	struct cur c = {payload, payload + len};
	uint64_t v;
	memset(cmd, 0, sizeof(*cmd));
	cmd->kind = RSP_CMD_UNKNOWN;
	if (len == 0)
		return RSP_OK;
	char k = *c.p++;
	switch (k) {
	case '?':
		cmd->kind = RSP_CMD_STOP_REASON;
		return at_end(&c) ? RSP_OK : RSP_E_SYNTAX;
	case 'g':
		cmd->kind = RSP_CMD_READ_REGS;
		return at_end(&c) ? RSP_OK : RSP_E_SYNTAX;
	case 'G': {
		size_t n = (size_t)(c.end - c.p);
		if (n % 2 || n / 2 > scratch_cap)
			return RSP_E_SYNTAX;
		if (!rsp_hex_decode(c.p, n / 2, scratch))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_WRITE_REGS;
		cmd->data = scratch;
		cmd->data_len = n / 2;
		return RSP_OK;
	}
	case 'p':
		if (!hex_u64(&c, &v) || !at_end(&c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_READ_REG;
		cmd->reg = v > 0xffff ? 0xffff : (unsigned)v;
		return RSP_OK;
	case 'P': {
		uint8_t b[8];
		if (!hex_u64(&c, &v) || !eat(&c, '='))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_WRITE_REG;
		cmd->reg = v > 0xffff ? 0xffff : (unsigned)v;
		if (c.end - c.p != 16 || !rsp_hex_decode(c.p, 8, b))
			return RSP_E_SYNTAX;
		for (int i = 7; i >= 0; i--)
			cmd->value = cmd->value << 8 | b[i];
		return RSP_OK;
	}
	case 'm':
		if (!addr_len(&c, &cmd->addr, &cmd->len) || !at_end(&c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_READ_MEM;
		/* The reply is two hex digits per byte and must fit a packet. */
		return cmd->len > RSP_MAX_PAYLOAD / 2 ? RSP_E_RANGE : RSP_OK;
	case 'x':
		/* The reply carries what fits a packet, escaped (the reader
		 * asks again for the rest, as after a short 'm' reply). */
		if (!addr_len(&c, &cmd->addr, &cmd->len) || !at_end(&c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_READ_MEM_BIN;
		return RSP_OK;
	case 'M': {
		if (!addr_len(&c, &cmd->addr, &cmd->len) || !eat(&c, ':'))
			return RSP_E_SYNTAX;
		size_t n = (size_t)(c.end - c.p);
		if (cmd->len > scratch_cap || n != 2 * cmd->len)
			return RSP_E_RANGE;
		if (!rsp_hex_decode(c.p, cmd->len, scratch))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_WRITE_MEM;
		cmd->data = scratch;
		cmd->data_len = cmd->len;
		return RSP_OK;
	}
	case 'X': {
		if (!addr_len(&c, &cmd->addr, &cmd->len) || !eat(&c, ':'))
			return RSP_E_SYNTAX;
		size_t n = (size_t)(c.end - c.p);
		if (n > scratch_cap)
			return RSP_E_RANGE;
		long got = rsp_unescape(c.p, n, scratch);
		if (got < 0)
			return RSP_E_SYNTAX;
		if ((uint64_t)got != cmd->len)
			return RSP_E_RANGE;
		cmd->kind = RSP_CMD_WRITE_MEM;
		cmd->data = scratch;
		cmd->data_len = (size_t)got;
		return RSP_OK;
	}
	case 'c':
	case 's':
	case 'C':
	case 'S':
		cmd->kind = (k == 'c' || k == 'C') ? RSP_CMD_CONTINUE : RSP_CMD_STEP;
		if (k == 'C' || k == 'S') {
			if (!hex_u64(&c, &v) || v > 0xff)
				return RSP_E_SYNTAX;
			if (at_end(&c))
				return RSP_OK;
			if (!eat(&c, ';'))
				return RSP_E_SYNTAX;
		}
		if (at_end(&c))
			return RSP_OK;
		if (!hex_u64(&c, &cmd->addr) || !at_end(&c))
			return RSP_E_SYNTAX;
		cmd->has_addr = true;
		return RSP_OK;
	case 'v':
		if (len == 6 && !memcmp(payload, "vCont?", 6)) {
			cmd->kind = RSP_CMD_VCONT_QUERY;
			return RSP_OK;
		}
		c.p = payload;
		if (eat_str(&c, "vCont") && (at_end(&c) || *c.p == ';'))
			return parse_vcont(&c, cmd);
		return RSP_OK; /* vMustReplyEmpty, vKill, vRun...: not offered */
	case 'Z':
	case 'z': {
		uint64_t type;
		if (!hex_u64(&c, &type) || !eat(&c, ','))
			return RSP_E_SYNTAX;
		if (type > 1)
			return RSP_OK; /* watchpoints: unsupported, the empty reply */
		if (!addr_len(&c, &cmd->addr, &cmd->len))
			return RSP_E_SYNTAX;
		/* Conditions and commands (";X...") are not offered; refuse them. */
		if (!at_end(&c))
			return RSP_E_SYNTAX;
		cmd->kind = k == 'Z' ? RSP_CMD_INSERT_BP : RSP_CMD_REMOVE_BP;
		cmd->bp_type = (int)type;
		return RSP_OK;
	}
	case 'k':
		cmd->kind = RSP_CMD_KILL;
		return RSP_OK;
	case 'D':
		cmd->kind = RSP_CMD_DETACH; /* "D" or "D;pid" */
		return RSP_OK;
	case 'H':
		if (at_end(&c) || (*c.p != 'g' && *c.p != 'c'))
			return RSP_OK; /* other H ops are unknown: empty reply */
		cmd->thread_op = *c.p++;
		if (!thread_id(&c, &cmd->thread) || !at_end(&c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_SET_THREAD;
		return RSP_OK;
	case 'T':
		if (!thread_id(&c, &cmd->thread) || !at_end(&c))
			return RSP_E_SYNTAX;
		cmd->kind = RSP_CMD_THREAD_ALIVE;
		return RSP_OK;
	case 'q':
		c.p = payload;
		return parse_q(&c, cmd);
	case 'Q':
		if (len == 15 && !memcmp(payload, "QStartNoAckMode", 15))
			cmd->kind = RSP_CMD_START_NOACK;
		if (len > 11 && !memcmp(payload, "QSnrIgnore:", 11)) {
			c.p = payload + 11;
			if (!hex_u64(&c, &cmd->addr) || !eat(&c, ',') || !hex_u64(&c, &cmd->value) || !at_end(&c))
				return RSP_E_SYNTAX;
			cmd->kind = RSP_CMD_SNR_IGNORE;
		}
		if (len > 8 && !memcmp(payload, "QSnrPod:", 8)) {
			c.p = payload + 8;
			if (!hex_u64(&c, &cmd->value) || cmd->value > 1 || !at_end(&c))
				return RSP_E_SYNTAX;
			cmd->kind = RSP_CMD_SNR_POD;
		}
		return RSP_OK;
	}
	return RSP_OK;
}
