/*
 * test_lines.c: lib/snr_lines on host ELFs with known answers.
 * usage: test_lines PROG_G PROG_NOG SOURCE
 *   PROG_G    lines_prog.c built -O2 -g -no-pie; PROG_NOG the same without -g
 *   SOURCE    lines_prog.c (its KNOWN-BSWAP line is the expected place)
 * Every pc of user_fn is placed in lines_prog.c and function user_fn; the
 * pcs of the inlined __bswap_32 are attributed to the KNOWN-BSWAP line with
 * the header's frame innermost in the chain; text and JSON forms; the
 * cache answers alike; without -g no line; a wrong build-id is refused.
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/snr_elf.h"
#include "lib/snr_lines.h"

static unsigned known_line(const char *source, const char *marker)
{
	FILE *f = fopen(source, "r");
	char buf[1024];
	unsigned n = 0, at = 0;
	while (f && fgets(buf, sizeof(buf), f)) {
		n++;
		if (strstr(buf, marker)) {
			at = n;
			break;
		}
	}
	if (f)
		fclose(f);
	return at;
}

static bool ends_with(const char *s, const char *tail)
{
	size_t a = s ? strlen(s) : 0, b = strlen(tail);
	return a >= b && !strcmp(s + a - b, tail);
}

int main(int argc, char **argv)
{
	if (argc != 4) {
		fprintf(stderr, "usage: test_lines PROG_G PROG_NOG SOURCE\n");
		return 2;
	}
	char err[512];
	unsigned want = known_line(argv[3], "/* KNOWN-BSWAP */");
	CHECK(want > 0, "no KNOWN-BSWAP line in %s", argv[3]);
	struct snr_elf *elf = snr_elf_open(argv[1], err, sizeof(err));
	CHECK(elf != NULL, "%s", err);
	const struct snr_elf_symbol *fn = elf ? snr_elf_find(elf, "user_fn") : NULL;
	CHECK(fn && fn->size > 0, "no user_fn in %s", argv[1]);

	struct snr_lines *l = snr_lines_new();
	CHECK(snr_lines_add(l, argv[1], 0, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(snr_lines_have_lines(l), "no line table in %s", argv[1]);
	char id[129];
	CHECK(snr_elf_build_id(argv[1], id, sizeof(id)) == 0 && strlen(id) == 40, "no build-id in %s", argv[1]);
	unsigned at_known = 0, inlined_from_header = 0;
	for (uint64_t pc = fn ? fn->addr : 0; fn && pc < fn->addr + fn->size; pc++) {
		const struct snr_place *p = snr_lines_find(l, pc);
		CHECK(p != NULL, "no place for pc 0x%llx", (unsigned long long)pc);
		if (!p)
			continue;
		CHECK(snr_lines_find(l, pc) == p, "the cache answers differently");
		CHECK(ends_with(p->file, "/lines_prog.c"), "pc 0x%llx placed in %s", (unsigned long long)pc, p->file);
		CHECK(p->function && !strcmp(p->function, "user_fn"), "pc 0x%llx in function %s",
		      (unsigned long long)pc, p->function ? p->function : "(none)");
		const struct snr_lines_frame *last = &p->frames[p->nframes - 1];
		CHECK(last->function && !strcmp(last->function, "user_fn"), "the chain's last frame is %s",
		      last->function ? last->function : "(none)");
		if (p->nframes > 1 && ends_with(p->frames[0].file, "byteswap.h")) {
			inlined_from_header++;
			CHECK(snr_lines_is_system_file(p->frames[0].file), "%s is not a system file", p->frames[0].file);
			CHECK(p->line == want, "bswap's pc 0x%llx at line %u, want %u", (unsigned long long)pc, p->line, want);
			CHECK(p->frames[0].function && strstr(p->frames[0].function, "bswap_32"), "inner frame %s",
			      p->frames[0].function ? p->frames[0].function : "(none)");
			json_t *j = snr_place_json(p);
			json_t *inl = json_object_get(j, "inlined");
			CHECK(json_array_size(inl) == p->nframes, "JSON chain of %zu frames", json_array_size(inl));
			CHECK(json_integer_value(json_object_get(j, "line")) == want, "JSON line");
			CHECK(ends_with(json_string_value(json_object_get(json_array_get(inl, 0), "file")), "byteswap.h"),
			      "JSON chain's first frame");
			json_decref(j);
			char text[400], want_text[64];
			snprintf(want_text, sizeof(want_text), "lines_prog.c:%u (user_fn)", want);
			CHECK(ends_with(snr_place_text(p, text, sizeof(text)), want_text), "text %s", text);
		}
		at_known += p->line == want;
	}
	CHECK(at_known > 0, "no pc at line %u", want);
	CHECK(inlined_from_header > 0, "no pc of user_fn inlined from byteswap.h");
	CHECK(snr_lines_find(l, 0x10) == NULL, "a place for an address outside the program");
	snr_lines_free(l);

	/* a wrong build-id: refused, saying both */
	l = snr_lines_new();
	CHECK(snr_lines_add(l, argv[1], 0, "00112233", err, sizeof(err)) == -1, "a wrong build-id was accepted");
	CHECK(strstr(err, "00112233") && strstr(err, id), "the message does not give both ids: %s", err);
	CHECK(!snr_lines_have_lines(l), "lines after a refused object");
	CHECK(snr_lines_add(l, argv[1], 0, id, err, sizeof(err)) == 0, "the right build-id refused: %s", err);
	snr_lines_free(l);

	/* without -g: no lines, no error */
	l = snr_lines_new();
	CHECK(snr_lines_add(l, argv[2], 0, NULL, err, sizeof(err)) == 0, "%s", err);
	CHECK(fn == NULL || snr_lines_find(l, fn->addr) == NULL, "a line from a program without -g");
	snr_lines_free(l);
	CHECK(snr_lines_add((l = snr_lines_new()), "/nonexistent/prog", 0, NULL, err, sizeof(err)) == -1,
	      "a missing file was accepted");
	CHECK(strstr(err, "/nonexistent/prog") != NULL, "the message does not name the file: %s", err);
	snr_lines_free(l);
	snr_elf_free(elf);
	return check_report("test_lines");
}
