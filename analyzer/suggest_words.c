/*
 * suggest_words.c: see suggest_words.h. The groups are found through an
 * open-addressing table on (pc, reason), so that grouping is linear in the
 * stalled DMAs.
 */
#include "suggest_words.h"

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_line_pack.h"
#include "lib/snr_util.h"

const char *an_sg_code_at(const struct snr_source *src, uint64_t pc, char *buf, size_t len)
{
	const struct snr_place *pl = snr_source_place(src, pc);
	FILE *f = pl && pl->file ? snr_line_pack_fopen(pl->file) : NULL;
	char *line = NULL;
	size_t cap = 0;
	unsigned n = 0;
	buf[0] = 0;
	while (f && getline(&line, &cap, f) >= 0)
		if (++n == pl->line) {
			char *t = line, *e = line + strlen(line);
			while (*t == ' ' || *t == '\t')
				t++;
			while (e > t && (e[-1] == '\n' || e[-1] == ' ' || e[-1] == '\t'))
				*--e = 0;
			if (*t)
				snprintf(buf, len, "`%.60s%s` ", t, strlen(t) > 60 ? "..." : "");
			break;
		}
	free(line);
	if (f)
		fclose(f);
	return buf;
}

const char *an_sg_place(const struct snr_source *src, uint64_t pc, const char *what, char *buf, size_t len)
{
	char sym[256], code[80];
	snr_source_where_short(src, pc, sym, sizeof(sym));
	an_sg_code_at(src, pc, code, sizeof(code));
	snprintf(buf, len, "%s%s%s (pc 0x%" PRIx64 ")", code[0] ? code : what ? what : "",
		 code[0] || what ? "at " : "", sym, pc);
	return buf;
}

const char *an_sg_function_of(const struct snr_source *src, uint64_t pc, char *buf, size_t len)
{
	snr_source_symbolize(src, pc, buf, len);
	char *plus = strchr(buf, '+');
	if (plus)
		*plus = 0;
	return buf;
}

const char *an_sg_move_label(const struct snr_source *src, uint64_t dma_pc, uint64_t before_pc, uint64_t n,
			     char *buf, size_t len)
{
	char a[400], b[400], fa[256], fb[256];
	bool later = before_pc >= dma_pc && !strcmp(an_sg_function_of(src, dma_pc, fa, sizeof(fa)),
						    an_sg_function_of(src, before_pc, fb, sizeof(fb)));
	snprintf(buf, len, "move %s up to before %s%s (%" PRIu64 " instance%s)",
		 an_sg_place(src, dma_pc, "the DMA ", a, sizeof(a)), an_sg_place(src, before_pc, NULL, b, sizeof(b)),
		 later ? ", in an earlier iteration of the loop" : "", n, n == 1 ? "" : "s");
	return buf;
}

static size_t nomove_slot(const struct an_sg_nomoves *s, uint64_t pc, const char *reason)
{
	uint64_t h = pc * 0x9e3779b97f4a7c15ull;
	for (const char *p = reason; *p; p++)
		h = (h ^ (uint8_t)*p) * 1099511628211ull;
	size_t mask = s->ntab - 1, i = (size_t)(h >> 17) & mask;
	while (s->tab[i] && (s->g[s->tab[i] - 1].pc != pc || strcmp(s->g[s->tab[i] - 1].reason, reason)))
		i = (i + 1) & mask;
	return i;
}

void an_sg_nomove_add(struct an_sg_nomoves *s, uint64_t pc, const char *reason, uint64_t stall_cycles)
{
	if (!reason)
		reason = "";
	if (!s->ntab) {
		s->ntab = 64;
		s->tab = snr_xcalloc(s->ntab, sizeof(*s->tab));
	}
	size_t k = nomove_slot(s, pc, reason);
	if (!s->tab[k]) {
		if (s->n == s->cap) {
			s->cap = s->cap ? 2 * s->cap : 16;
			s->g = snr_xrealloc(s->g, s->cap * sizeof(*s->g));
		}
		s->g[s->n++] = (struct an_sg_nomove){pc, snr_xstrdup(reason), 0, 0};
		if (2 * s->n > s->ntab) { /* rehash */
			free(s->tab);
			s->ntab *= 2;
			s->tab = snr_xcalloc(s->ntab, sizeof(*s->tab));
			for (size_t i = 0; i < s->n; i++)
				s->tab[nomove_slot(s, s->g[i].pc, s->g[i].reason)] = i + 1;
		} else {
			s->tab[k] = s->n;
		}
		k = nomove_slot(s, pc, reason);
	}
	struct an_sg_nomove *g = &s->g[s->tab[k] - 1];
	g->instances++;
	g->stall_cycles += stall_cycles;
}

void an_sg_nomoves_free(struct an_sg_nomoves *s)
{
	for (size_t i = 0; i < s->n; i++)
		free(s->g[i].reason);
	free(s->g);
	free(s->tab);
	memset(s, 0, sizeof(*s));
}
