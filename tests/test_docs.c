/*
 * test_docs.c: the reference documents keep up with the code.
 *  - docs/ta1-isa.md names every mnemonic of isa/ta1/ta1_insns.def in a code
 *    span, and every Xta instruction in a section heading of its own;
 *  - docs/machine-config.md has a table row for every key of
 *    snr_config_fields, whose default and range are the ones in lib/snr_config.c.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "isa/ta1/ta1_isa.h"
#include "lib/snr_config.h"
#include "tests/check.h"

#define DOCS_DIR SNR_TA1_SRCDIR "/../../docs/"

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		CHECK(0, "cannot open %s", path);
		return NULL;
	}
	fseek(f, 0, SEEK_END);
	long n = ftell(f);
	fseek(f, 0, SEEK_SET);
	char *s = malloc((size_t)n + 1);
	size_t got = fread(s, 1, (size_t)n, f);
	s[got] = 0;
	fclose(f);
	return s;
}

/* Does some line starting with `prefix` contain `needle`? */
static int line_with(const char *text, const char *prefix, const char *needle)
{
	for (const char *l = text; l && *l; l = strchr(l, '\n') ? strchr(l, '\n') + 1 : NULL) {
		const char *end = strchr(l, '\n');
		size_t len = end ? (size_t)(end - l) : strlen(l);
		if (strncmp(l, prefix, strlen(prefix)))
			continue;
		char line[1024];
		snprintf(line, sizeof(line), "%.*s", (int)(len < sizeof(line) - 1 ? len : sizeof(line) - 1),
			 l);
		if (strstr(line, needle))
			return 1;
	}
	return 0;
}

static void test_isa_doc(void)
{
	char *doc = slurp(DOCS_DIR "ta1-isa.md");
	if (!doc)
		return;
	for (unsigned op = 0; op < TA1_OP_COUNT; op++) {
		const struct ta1_insn_info *ii = &ta1_insn_table[op];
		char span[64];
		snprintf(span, sizeof(span), "`%s`", ii->mnemonic);
		CHECK(strstr(doc, span) != NULL, "docs/ta1-isa.md does not mention %s", span);
		if (!strncmp(ii->mnemonic, "ta.", 3))
			CHECK(line_with(doc, "### ", span), "docs/ta1-isa.md has no section heading for %s",
			      span);
	}
	free(doc);
}

static void test_config_doc(void)
{
	char *doc = slurp(DOCS_DIR "machine-config.md");
	if (!doc)
		return;
	struct snr_config def;
	snr_config_default(&def);
	for (size_t i = 0; i < snr_config_nfields; i++) {
		const struct snr_config_field *f = &snr_config_fields[i];
		uint64_t v = *(const uint64_t *)((const char *)&def + f->offset);
		char row[160], range[96];
		if (f->names) /* a named value: its default by name, every name listed */
			snprintf(row, sizeof(row), "| `%s` | \"%s\"", f->key, f->names[v]);
		else
			snprintf(row, sizeof(row), "| `%s` | %llu", f->key, (unsigned long long)v);
		for (size_t n = 0; f->names && f->names[n]; n++) {
			char name[64];
			snprintf(name, sizeof(name), "`\"%s\"`", f->names[n]);
			CHECK(line_with(doc, row, name), "docs/machine-config.md: the row of %s does not list %s", f->key,
			      name);
		}
		snprintf(range, sizeof(range), "| %llu .. %llu |", (unsigned long long)f->min,
			 (unsigned long long)f->max);
		char key[96];
		snprintf(key, sizeof(key), "| `%s` |", f->key);
		CHECK(line_with(doc, "| ", key), "docs/machine-config.md has no row for %s", f->key);
		CHECK(line_with(doc, row, range),
		      "docs/machine-config.md: the row of %s does not say default %llu, range %s", f->key,
		      (unsigned long long)v, range);
	}
	free(doc);
}

int main(void)
{
	test_isa_doc();
	test_config_doc();
	return check_report("test_docs");
}
