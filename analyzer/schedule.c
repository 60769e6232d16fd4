/*
 * schedule.c: see schedule.h.
 */
#include "analyzer/schedule.h"

#include <inttypes.h>
#include <stdlib.h>

#include "analyzer/deps.h"
#include "analyzer/suggest_words.h"

void an_sched_place_json(FILE *f, const struct snr_source *src, uint64_t pc)
{
	char sym[256];
	fprintf(f, "{\"pc\":%" PRIu64 ",\"symbol\":", pc);
	snr_deps_json_str(f, snr_source_symbolize(src, pc, sym, sizeof(sym)));
	fputs(",\"source\":", f);
	snr_source_json_print(f, src, pc);
	fputc('}', f);
}

static size_t applied_waits(const struct round *r)
{
	return r->has_wm ? r->wm.napplied : 0;
}

void an_sched_print_text(FILE *f, const struct snr_source *src, const struct round *r, size_t nr)
{
	char label[1400];
	fputs("\nrounds (each applies the confirmed DMA moves, then the WAIT moves the what-if keeps, then runs "
	      "Algorithm 2 and the what-ifs again on the moved window):\n",
	      f);
	for (size_t j = 0; j < nr; j++) {
		fprintf(f, "  round %zu: %" PRIu64 " -> %" PRIu64 " cycles, %zu DMA move%s, %zu WAIT move%s\n", j + 1,
			r[j].cycles_before, r[j].cycles, r[j].nmoves, r[j].nmoves == 1 ? "" : "s", applied_waits(&r[j]),
			applied_waits(&r[j]) == 1 ? "" : "s");
		for (size_t m = 0; m < r[j].nmoves; m++)
			fprintf(f, "     %s: saves %" PRId64 "\n",
				an_sg_move_label(src, r[j].moves[m].dma_pc, r[j].moves[m].before_pc, r[j].moves[m].instances,
						 label, sizeof(label)),
				r[j].moves[m].realized);
		if (!r[j].has_wm)
			continue;
		for (size_t m = 0; m < r[j].wm.ng; m++) {
			const struct an_wm_group *g = &r[j].wm.g[m];
			if (!g->verified && !g->refused)
				continue;
			fprintf(f, "     %s%s (it stops at %s): ", g->applied ? "" : "not taken: ", an_wm_label(src, g, label, sizeof(label)),
				g->why_here);
			if (g->applied)
				fprintf(f, "saves %" PRId64 " alone (what-if)\n", g->realized);
			else
				fprintf(f, "%s\n", g->reason);
		}
	}
	if (nr && !r[nr - 1].nmoves && !applied_waits(&r[nr - 1]))
		fputs("  (the last round confirms nothing: the rounds stop)\n", f);
	fputs("\nfinal schedule (the moves applied, in order; the window's cycles after each round, what-if):\n", f);
	size_t step = 0;
	for (size_t j = 0; j < nr; j++) {
		for (size_t m = 0; m < r[j].nmoves; m++)
			fprintf(f, "  %zu. %s\n", ++step,
				an_sg_move_label(src, r[j].moves[m].dma_pc, r[j].moves[m].before_pc, r[j].moves[m].instances,
						 label, sizeof(label)));
		for (size_t m = 0; r[j].has_wm && m < r[j].wm.ng; m++)
			if (r[j].wm.g[m].applied)
				fprintf(f, "  %zu. %s\n", ++step, an_wm_label(src, &r[j].wm.g[m], label, sizeof(label)));
		fprintf(f, "     after round %zu: %" PRIu64 " cycles\n", j + 1, r[j].cycles);
	}
	if (!step)
		fputs("  (no move applied)\n", f);
}

static void wait_json(FILE *f, const struct snr_source *src, const struct an_wm_group *g)
{
	fputs("{\"kind\":\"wait\",\"wait\":", f);
	an_sched_place_json(f, src, g->wait_pc);
	fputs(",\"before\":", f);
	an_sched_place_json(f, src, g->before_pc);
	fprintf(f, ",\"flag\":%u,\"instances\":%zu,\"dmas_passed\":%zu,\"lifted\":%s,\"stops_at\":", g->flag, g->instances,
		g->passes_dmas, g->lifted ? "true" : "false");
	snr_deps_json_str(f, g->why_here);
	if (g->verified)
		fprintf(f, ",\"realized_cycles\":%" PRId64 ",\"cycles_after\":%" PRIu64, g->realized, g->cycles_after);
	else
		fputs(",\"realized_cycles\":null,\"cycles_after\":null", f);
	fprintf(f, ",\"applied\":%s,\"refused\":%s,\"reason\":", g->applied ? "true" : "false",
		g->refused ? "true" : "false");
	if (g->applied)
		fputs("null", f);
	else
		snr_deps_json_str(f, g->reason);
	fputc('}', f);
}

static void dma_json(FILE *f, const struct snr_source *src, const struct round_move *m)
{
	fputs("{\"kind\":\"dma\",\"dma\":", f);
	an_sched_place_json(f, src, m->dma_pc);
	fputs(",\"before\":", f);
	an_sched_place_json(f, src, m->before_pc);
	fprintf(f, ",\"instances\":%" PRIu64 ",\"estimate_cycles\":%" PRIu64 ",\"realized_cycles\":%" PRId64 "}",
		m->instances, m->estimate, m->realized);
}

void an_sched_print_json(FILE *f, const struct snr_source *src, const struct round *r, size_t nr)
{
	fputs(",\"rounds\":[", f);
	for (size_t j = 0; j < nr; j++) {
		fprintf(f, "%s{\"round\":%zu,\"cycles_before\":%" PRIu64 ",\"cycles_after_dma_moves\":%" PRIu64
			   ",\"cycles\":%" PRIu64 ",\"moves\":[",
			j ? "," : "", j + 1, r[j].cycles_before, r[j].cycles_dma, r[j].cycles);
		for (size_t m = 0; m < r[j].nmoves; m++) {
			fputs(m ? "," : "", f);
			dma_json(f, src, &r[j].moves[m]);
		}
		fputs("],\"wait_moves\":[", f);
		for (size_t m = 0, k = 0; r[j].has_wm && m < r[j].wm.ng; m++)
			if (r[j].wm.g[m].verified || r[j].wm.g[m].refused) {
				fputs(k++ ? "," : "", f);
				wait_json(f, src, &r[j].wm.g[m]);
			}
		fputs("]}", f);
	}
	fputs("],\"schedule\":{\"steps\":[", f);
	size_t step = 0;
	for (size_t j = 0; j < nr; j++) {
		for (size_t m = 0; m < r[j].nmoves; m++) {
			fprintf(f, "%s{\"round\":%zu,\"move\":", step++ ? "," : "", j + 1);
			dma_json(f, src, &r[j].moves[m]);
			fputc('}', f);
		}
		for (size_t m = 0; r[j].has_wm && m < r[j].wm.ng; m++)
			if (r[j].wm.g[m].applied) {
				fprintf(f, "%s{\"round\":%zu,\"move\":", step++ ? "," : "", j + 1);
				wait_json(f, src, &r[j].wm.g[m]);
				fputc('}', f);
			}
	}
	fputs("],\"cycles_after_round\":[", f);
	for (size_t j = 0; j < nr; j++)
		fprintf(f, "%s%" PRIu64, j ? "," : "", r[j].cycles);
	fputs("]}", f);
}

void an_sched_free(struct round *r, size_t nr)
{
	for (size_t k = 0; k < nr; k++) {
		free(r[k].moves);
		if (r[k].has_wm)
			an_wm_round_free(&r[k].wm);
	}
	free(r);
}
