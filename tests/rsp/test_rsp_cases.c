/*
 * test_rsp_cases.c: RSP transcripts (tests/rsp/cases/NAME.txt) replayed against
 * a session on a buffer over the fixture machine (rsp_fixture.h).
 *
 * Each case file is one fresh machine and session; lines are
 *
 *   # comment            ignored, as are blank lines
 *   chips N              (first) the pod's size, default 1
 *   > PAYLOAD            send "$PAYLOAD#cs", checksum computed
 *   >raw BYTES           send BYTES as they are (\xNN, \\ escapes)
 *   < PAYLOAD            the next output is exactly "$PAYLOAD#cs"
 *   <raw BYTES           the next output is exactly BYTES
 *   <prefix PAYLOAD      the next output is one well-formed frame whose
 *                        payload starts with PAYLOAD
 *   <end STATE           rsp_session_end() is STATE (none, killed, detached)
 *   reset                the debugger drops (rsp_session_reset): the next
 *                        lines are a new debugger on the same machine
 *
 * and at the end of the file nothing may be left unread. Resumes run
 * synchronously (100000 instructions per chip at most, then SIGINT).
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "device/rsp_packet.h"
#include "device/rsp_session.h"
#include "tests/check.h"
#include "tests/rsp/rsp_fixture.h"

/* Decodes \xNN and \\ in place; returns the length. */
static size_t unescape_line(char *s)
{
	size_t o = 0;
	for (size_t i = 0; s[i];) {
		if (s[i] == '\\' && s[i + 1] == 'x' && rsp_hex_digit((unsigned char)s[i + 2]) >= 0 &&
		    rsp_hex_digit((unsigned char)s[i + 3]) >= 0) {
			s[o++] = (char)(rsp_hex_digit((unsigned char)s[i + 2]) << 4 |
					rsp_hex_digit((unsigned char)s[i + 3]));
			i += 4;
		} else if (s[i] == '\\' && s[i + 1] == '\\') {
			s[o++] = '\\';
			i += 2;
		} else {
			s[o++] = s[i++];
		}
	}
	return o;
}

struct run {
	const char *file;
	unsigned line;
	struct rsp_session *s;
	size_t pos; /* read position in the session's output */
};

static void show(const char *p, size_t n, char *buf, size_t cap)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 5 < cap; i++) {
		unsigned char c = (unsigned char)p[i];
		o += (size_t)snprintf(buf + o, cap - o, c >= 32 && c < 127 ? "%c" : "\\x%02x", c);
	}
	buf[o < cap ? o : cap - 1] = 0;
	if (n && o + 5 >= cap)
		snprintf(buf + cap - 5, 5, "...");
}

/* Takes the next frame from the output: *payload and *len, or false. */
static bool next_frame(struct run *r, const char **payload, size_t *len)
{
	size_t n;
	const char *out = rsp_session_output(r->s, &n);
	const char *p = out + r->pos, *end = out + n;
	if (p >= end || *p != '$')
		return false;
	const char *hash = memchr(p, '#', (size_t)(end - p));
	if (!hash || end - hash < 3)
		return false;
	uint8_t want = (uint8_t)(rsp_hex_digit((unsigned char)hash[1]) << 4 | rsp_hex_digit((unsigned char)hash[2]));
	if (rsp_checksum(p + 1, (size_t)(hash - p - 1)) != want)
		return false;
	*payload = p + 1;
	*len = (size_t)(hash - p - 1);
	r->pos = (size_t)(hash + 3 - out);
	return true;
}

static void expect(struct run *r, const char *how, const char *text, size_t tlen)
{
	size_t n;
	const char *out = rsp_session_output(r->s, &n);
	char got[200], want[200];
	show(out + r->pos, n - r->pos, got, sizeof(got));
	show(text, tlen, want, sizeof(want));
	if (!strcmp(how, "raw")) {
		bool ok = n - r->pos >= tlen && !memcmp(out + r->pos, text, tlen);
		CHECK(ok, "%s:%u: expected raw '%s', output is '%s'", r->file, r->line, want, got);
		if (ok)
			r->pos += tlen;
		return;
	}
	const char *payload;
	size_t plen;
	if (!next_frame(r, &payload, &plen)) {
		CHECK(0, "%s:%u: expected a frame '%s', output is '%s'", r->file, r->line, want, got);
		return;
	}
	bool ok = !strcmp(how, "prefix") ? plen >= tlen && !memcmp(payload, text, tlen)
					 : plen == tlen && !memcmp(payload, text, tlen);
	CHECK(ok, "%s:%u: expected %s'%s', output is '%s'", r->file, r->line,
	      !strcmp(how, "prefix") ? "a frame starting " : "", want, got);
}

static void run_case(const char *dir, const char *name)
{
	char path[1024], line[20000], err[256];
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	FILE *fp = fopen(path, "r");
	CHECK(fp != NULL, "%s: cannot open", path);
	if (!fp)
		return;
	struct rsp_fixture fx;
	struct run r = {.file = name};
	unsigned chips = 1;
	bool started = false;
	while (fgets(line, sizeof(line), fp)) {
		r.line++;
		line[strcspn(line, "\n")] = 0;
		if (!line[0] || line[0] == '#')
			continue;
		if (!strncmp(line, "chips ", 6) && !started) {
			chips = (unsigned)atoi(line + 6);
			continue;
		}
		if (!started) {
			if (rsp_fixture_open(&fx, chips, err, sizeof(err))) {
				CHECK(0, "%s: fixture: %s", name, err);
				fclose(fp);
				return;
			}
			r.s = rsp_session_new(fx.m, 100000);
			rsp_session_set_quantum(r.s, 1000);
			started = true;
		}
		char *sp = strchr(line, ' ');
		char *arg = sp ? sp + 1 : line + strlen(line);
		if (sp)
			*sp = 0;
		size_t alen = unescape_line(arg);
		if (!strcmp(line, ">")) {
			char frame[sizeof(line) + 8];
			size_t n = rsp_frame_reply(arg, alen, frame, sizeof(frame));
			rsp_session_feed(r.s, frame, n);
		} else if (!strcmp(line, ">raw")) {
			rsp_session_feed(r.s, arg, alen);
		} else if (!strcmp(line, "<")) {
			expect(&r, "", arg, alen);
		} else if (!strcmp(line, "<raw") || !strcmp(line, "<prefix")) {
			expect(&r, line + 1, arg, alen);
		} else if (!strcmp(line, "reset")) {
			/* the debugger dropped; the next one connects afresh */
			size_t n;
			const char *out = rsp_session_output(r.s, &n);
			char rest[200];
			show(out + r.pos, n - r.pos, rest, sizeof(rest));
			CHECK(r.pos == n, "%s:%u: output left unchecked at the reset: '%s'", name, r.line, rest);
			rsp_session_reset(r.s);
			r.pos = 0;
		} else if (!strcmp(line, "<end")) {
			static const char *const names[] = {"none", "killed", "detached"};
			const char *got = names[rsp_session_end(r.s)];
			CHECK(!strcmp(got, arg), "%s:%u: session end is %s, expected %s", name, r.line, got, arg);
		} else {
			CHECK(0, "%s:%u: unknown directive '%s'", name, r.line, line);
		}
	}
	fclose(fp);
	if (!started)
		return;
	size_t n;
	const char *out = rsp_session_output(r.s, &n);
	char rest[200];
	show(out + r.pos, n - r.pos, rest, sizeof(rest));
	CHECK(r.pos == n, "%s: output left unchecked at the end: '%s'", name, rest);
	rsp_session_free(r.s);
	rsp_fixture_close(&fx);
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int main(int argc, char **argv)
{
	if (argc != 2) {
		fprintf(stderr, "usage: test_rsp_cases CASES-DIR\n");
		return 2;
	}
	DIR *d = opendir(argv[1]);
	CHECK(d != NULL, "cannot open %s", argv[1]);
	if (!d)
		return check_report("test_rsp_cases");
	char *names[256];
	size_t n = 0;
	struct dirent *e;
	while ((e = readdir(d)) && n < 256) {
		size_t l = strlen(e->d_name);
		if (l > 4 && !strcmp(e->d_name + l - 4, ".txt"))
			names[n++] = strdup(e->d_name);
	}
	closedir(d);
	qsort(names, n, sizeof(names[0]), by_name);
	CHECK(n >= 5, "only %zu cases in %s", n, argv[1]);
	for (size_t i = 0; i < n; i++) {
		int before = check_failures;
		run_case(argv[1], names[i]);
		fprintf(stderr, "%-24s %s\n", names[i], check_failures == before ? "ok" : "FAILED");
		free(names[i]);
	}
	return check_report("test_rsp_cases");
}
