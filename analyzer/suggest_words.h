/*
 * suggest_words.h: how suggest's answers are put in words, shared by
 * `snr analyze suggest`'s text and the report's suggestions (so that both
 * say the same): a place as its statement (`text` at file:line (function)
 * (pc)), a static move as a sentence, and the stalled DMAs no move covers
 * grouped by where they issue and why.
 */
#ifndef SNR_ANALYZER_SUGGEST_WORDS_H
#define SNR_ANALYZER_SUGGEST_WORDS_H

#include <stddef.h>
#include <stdint.h>

#include "analyzer/source.h"

/* The statement at pc's source line, as "`text` " (trimmed, at most 60
 * characters), or "" when there are no line tables or the file is not
 * readable here. */
const char *an_sg_code_at(const struct snr_source *src, uint64_t pc, char *buf, size_t len);
/* "`ta_dma(...);` at attn.c:38 (attn) (pc 0x10180)", or, when the source
 * text is not at hand, `what` (NULL: nothing) and the place: "the DMA at
 * chain+0x40 (pc 0x10180)". */
const char *an_sg_place(const struct snr_source *src, uint64_t pc, const char *what, char *buf, size_t len);
/* The function pc is in: its symbol without the offset ("0x..." without
 * symbols). */
const char *an_sg_function_of(const struct snr_source *src, uint64_t pc, char *buf, size_t len);
/* A static move in words: "move `...` at ... up to before `...` at ...
 * (N instances)", with ", in an earlier iteration of the loop" when the
 * point after the DMA in its function is in an earlier iteration of a
 * loop around both. */
const char *an_sg_move_label(const struct snr_source *src, uint64_t dma_pc, uint64_t before_pc, uint64_t n,
			     char *buf, size_t len);

/* The stalled DMAs no move covers, grouped by issuing pc and reason, in
 * the order of each group's first DMA. */
struct an_sg_nomove {
	uint64_t pc;
	char *reason;
	uint64_t instances, stall_cycles;
};
struct an_sg_nomoves {
	struct an_sg_nomove *g;
	size_t n, cap;
	size_t *tab; /* group index + 1; 0 empty */
	size_t ntab;
};
void an_sg_nomove_add(struct an_sg_nomoves *s, uint64_t pc, const char *reason, uint64_t stall_cycles);
void an_sg_nomoves_free(struct an_sg_nomoves *s);

#endif
