/*
 * test_rsp_packet.c: the packet layer alone (device/rsp_packet.h), from a
 * table: what each payload decodes to, field by field, and how the framer
 * splits a byte stream into events. The transcripts in cases/ cover the
 * replies; this covers the decoded structs they rest on.
 */
#include <string.h>

#include "device/rsp_packet.h"
#include "tests/check.h"

static const struct {
	const char *payload;
	enum rsp_error err;
	enum rsp_kind kind;
	uint64_t addr, len;
	int64_t thread;
	const char *actions; /* vCont: "c:-1 s:2" as action:thread pairs */
} cases[] = {
	{"m10000,8", RSP_OK, RSP_CMD_READ_MEM, 0x10000, 8, 0, NULL},
	{"mffffffffffffffff,1", RSP_OK, RSP_CMD_READ_MEM, ~0ull, 1, 0, NULL},
	{"m1ffffffffffffffff,1", RSP_E_SYNTAX, RSP_CMD_READ_MEM, 0, 0, 0, NULL},
	{"m0,2001", RSP_E_RANGE, RSP_CMD_READ_MEM, 0, 0x2001, 0, NULL},
	{"M20,2:abcd", RSP_OK, RSP_CMD_WRITE_MEM, 0x20, 2, 0, NULL},
	{"X20,1:}]", RSP_OK, RSP_CMD_WRITE_MEM, 0x20, 1, 0, NULL},
	{"Z0,10014,4", RSP_OK, RSP_CMD_INSERT_BP, 0x10014, 4, 0, NULL},
	{"z1,10014,4", RSP_OK, RSP_CMD_REMOVE_BP, 0x10014, 4, 0, NULL},
	{"Z3,10014,4", RSP_OK, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"QSnrPod:1", RSP_OK, RSP_CMD_SNR_POD, 0, 0, 0, NULL},
	{"QSnrPod:0", RSP_OK, RSP_CMD_SNR_POD, 0, 0, 0, NULL},
	{"QSnrPod:2", RSP_E_SYNTAX, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"QSnrPod:1x", RSP_E_SYNTAX, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"Hg-1", RSP_OK, RSP_CMD_SET_THREAD, 0, 0, -1, NULL},
	{"Hc2a", RSP_OK, RSP_CMD_SET_THREAD, 0, 0, 0x2a, NULL},
	{"H-1", RSP_OK, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"Hg-2", RSP_E_SYNTAX, RSP_CMD_SET_THREAD, 0, 0, 0, NULL},
	{"Hg100000000", RSP_E_SYNTAX, RSP_CMD_SET_THREAD, 0, 0, 0, NULL},
	{"T3", RSP_OK, RSP_CMD_THREAD_ALIVE, 0, 0, 3, NULL},
	{"vCont;s:2;c", RSP_OK, RSP_CMD_VCONT, 0, 0, 0, "s:2 c:-1"},
	{"vCont;C0b:1;S05", RSP_OK, RSP_CMD_VCONT, 0, 0, 0, "c:1 s:-1"},
	{"vCont;t:1", RSP_E_SYNTAX, RSP_CMD_VCONT, 0, 0, 0, NULL},
	{"vCont?", RSP_OK, RSP_CMD_VCONT_QUERY, 0, 0, 0, NULL},
	{"vContX", RSP_OK, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"c1000c", RSP_OK, RSP_CMD_CONTINUE, 0x1000c, 0, 0, NULL},
	{"S05;20", RSP_OK, RSP_CMD_STEP, 0x20, 0, 0, NULL},
	{"qXfer:features:read:target.xml:10,20", RSP_OK, RSP_CMD_Q_XFER_FEATURES, 0x10, 0x20, 0, NULL},
	{"qfThreadInfo", RSP_OK, RSP_CMD_Q_FTHREADINFO, 0, 0, 0, NULL},
	{"qfThreadInfoqC", RSP_OK, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"qCRC:10000,4", RSP_OK, RSP_CMD_Q_CRC, 0x10000, 4, 0, NULL},
	{"qCRC:10000", RSP_E_SYNTAX, RSP_CMD_Q_CRC, 0, 0, 0, NULL},
	{"qCRC:10000,4,", RSP_E_SYNTAX, RSP_CMD_Q_CRC, 0, 0, 0, NULL},
	{"x10000,4000", RSP_OK, RSP_CMD_READ_MEM_BIN, 0x10000, 0x4000, 0, NULL},
	{"x10000,", RSP_E_SYNTAX, RSP_CMD_READ_MEM_BIN, 0, 0, 0, NULL},
	{"x10000,4:", RSP_E_SYNTAX, RSP_CMD_READ_MEM_BIN, 0, 0, 0, NULL},
	{"QStartNoAckMode", RSP_OK, RSP_CMD_START_NOACK, 0, 0, 0, NULL},
	{"QStartNoAckModeX", RSP_OK, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
	{"QSnrIgnore:10014,3", RSP_OK, RSP_CMD_SNR_IGNORE, 0x10014, 0, 0, NULL},
	{"QSnrIgnore:10014", RSP_E_SYNTAX, RSP_CMD_SNR_IGNORE, 0, 0, 0, NULL},
	{"QSnrIgnore:10014,3x", RSP_E_SYNTAX, RSP_CMD_SNR_IGNORE, 0, 0, 0, NULL},
	{"", RSP_OK, RSP_CMD_UNKNOWN, 0, 0, 0, NULL},
};

static void check_parse(void)
{
	uint8_t scratch[RSP_MAX_PAYLOAD];
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct rsp_cmd cmd;
		const char *p = cases[i].payload;
		enum rsp_error e = rsp_parse(p, strlen(p), scratch, sizeof(scratch), &cmd);
		CHECK(e == cases[i].err, "'%s': error %d, expected %d", p, e, cases[i].err);
		if (e != RSP_OK)
			continue;
		CHECK(cmd.kind == cases[i].kind, "'%s': kind %d, expected %d", p, cmd.kind, cases[i].kind);
		CHECK(cmd.addr == cases[i].addr, "'%s': addr 0x%llx", p, (unsigned long long)cmd.addr);
		CHECK(cmd.len == cases[i].len, "'%s': len 0x%llx", p, (unsigned long long)cmd.len);
		CHECK(cmd.thread == cases[i].thread, "'%s': thread %lld", p, (long long)cmd.thread);
		if (cases[i].actions) {
			char got[128] = "";
			size_t n = 0;
			for (unsigned a = 0; a < cmd.nactions; a++)
				n += (size_t)snprintf(got + n, sizeof(got) - n, "%s%c:%lld", a ? " " : "",
						      cmd.actions[a].action, (long long)cmd.actions[a].thread);
			CHECK(!strcmp(got, cases[i].actions), "'%s': actions '%s', expected '%s'", p, got,
			      cases[i].actions);
		}
	}
	/* Decoded data. */
	struct rsp_cmd cmd;
	CHECK(rsp_parse("QSnrIgnore:10014,3", 18, scratch, sizeof(scratch), &cmd) == RSP_OK && cmd.value == 3,
	      "QSnrIgnore's count");
	CHECK(rsp_parse("X0,4:}\x03}\x04}]}\x0a", 13, scratch, sizeof(scratch), &cmd) == RSP_OK &&
		      cmd.data_len == 4 && !memcmp(cmd.data, "#$}*", 4),
	      "X unescaping");
	CHECK(rsp_parse("P20=0800010000000000", 20, scratch, sizeof(scratch), &cmd) == RSP_OK &&
		      cmd.reg == 0x20 && cmd.value == 0x10008,
	      "P decodes little-endian");
}

static void check_framer(void)
{
	static struct rsp_framer f;
	static const struct {
		const char *bytes;
		const char *events; /* one letter per event: P packet, B bad checksum,
				       O oversized, + ack, - nak, I interrupt */
	} streams[] = {
		{"$g#67", "P"},
		{"$g#68", "B"},
		{"$g#6", "" },
		{"+-\x03junk$?#3f", "+-IP"},
		{"$m0$g#67", "P"},
		{"$g#zz$g#67", "BP"},
		{"$\x03#03", "P"},
	};
	for (size_t i = 0; i < sizeof(streams) / sizeof(streams[0]); i++) {
		char got[32] = "";
		size_t n = 0;
		rsp_framer_init(&f);
		for (const char *b = streams[i].bytes; *b; b++) {
			enum rsp_frame_event e = rsp_framer_push(&f, (uint8_t)*b);
			static const char letters[] = {0, 'P', 'B', 'O', '+', '-', 'I'};
			if (e != RSP_FRAME_NONE && n + 1 < sizeof(got))
				got[n++] = letters[e];
		}
		got[n] = 0;
		CHECK(!strcmp(got, streams[i].events), "stream %zu: events '%s', expected '%s'", i, got,
		      streams[i].events);
	}
	/* An endless frame stays bounded and ends as oversized. */
	rsp_framer_init(&f);
	uint8_t sum = 0;
	rsp_framer_push(&f, '$');
	for (int i = 0; i < 3 * RSP_MAX_PAYLOAD; i++) {
		rsp_framer_push(&f, 'a');
		sum = (uint8_t)(sum + 'a');
	}
	static const char hex[] = "0123456789abcdef";
	rsp_framer_push(&f, '#');
	rsp_framer_push(&f, (uint8_t)hex[sum >> 4]);
	CHECK(rsp_framer_push(&f, (uint8_t)hex[sum & 15]) == RSP_FRAME_OVERSIZED, "oversized frame");
	CHECK(f.len == RSP_MAX_PAYLOAD, "oversized frame kept %zu bytes", f.len);
}

int main(void)
{
	check_parse();
	check_framer();
	return check_report("test_rsp_packet");
}
