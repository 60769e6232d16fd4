/*
 * deps_dot.c: `snr analyze deps --dot FILE`, the DMA-centric Graphviz graph
 * of the dependency graph (deps.c): each DMA with its stall and backtail,
 * its WAIT, the DMAs whose data it reads, and what anchors its relaxed
 * dependency.
 */
#include <inttypes.h>

#include "analyzer/deps.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_outfile.h"
#include "lib/snr_util.h"

/* The DMA issued at instruction i, or NULL (the DMAs are in issue order). */
static const struct snr_deps_dma *dma_issued_at(const struct snr_deps *d, uint64_t i)
{
	size_t a = 0, b = d->ndmas;
	while (a < b) {
		size_t mid = (a + b) / 2;
		int64_t x = d->dmas[mid].issue_index;
		if (x < (int64_t)i)
			a = mid + 1;
		else
			b = mid;
	}
	return a < d->ndmas && d->dmas[a].issue_index == (int64_t)i ? &d->dmas[a] : NULL;
}

int snr_deps_write_dot(const char *path, const struct snr_deps *d)
{
	struct snr_outfile of;
	char oerr[600];
	FILE *f = snr_outfile_fopen(&of, path, oerr, sizeof(oerr));
	if (!f) {
		snr_err("analyze deps: %s", oerr);
		return -1;
	}
	fprintf(f, "digraph deps {\n  rankdir=TB;\n  node [fontname=\"monospace\", fontsize=10];\n");
	for (size_t k = 0; k < d->ndmas; k++) {
		const struct snr_deps_dma *m = &d->dmas[k];
		char sym[256] = "before the window";
		if (m->issue_index >= 0)
			snr_source_symbolize(&d->an.src, snr_deps_insn_get(d, m->issue_index).pc, sym, sizeof(sym));
		fprintf(f,
			"  dma%" PRIu64 " [shape=box, style=filled, fillcolor=\"%s\", label=\"DMA %" PRIu64
			" #%" PRId64 "\\n%s\\n%" PRIu64 " B %s>%s\\nstall %" PRIu64 ", backtail %" PRIu64 " cyc\"];\n",
			m->id, m->stall_cycles ? "#f4b6b6" : "#d7ecd7", m->id, m->issue_index, sym, m->bytes,
			snr_deps_space_name(d, m->src_space), snr_deps_space_name(d, m->dst_space), m->stall_cycles, m->backtail_cycles);
		if (m->waited)
			fprintf(f,
				"  wait%" PRId64 " [shape=ellipse, label=\"WAIT #%" PRId64 "\\nflag %u\"];\n"
				"  dma%" PRIu64 " -> wait%" PRId64 " [style=dashed, label=\"flag %u\"];\n",
				m->wait_index, m->wait_index, m->flag, m->id, m->wait_index, m->flag);
		if (m->issue_index < 0)
			continue;
		/* DMA -> DMA through memory (its source written by another DMA) */
		size_t ne;
		const struct snr_dep_edge *e = snr_deps_edges_of(d, (uint64_t)m->issue_index, &ne);
		for (size_t j = 0; j < ne; j++) {
			const struct snr_deps_dma *q = e[j].kind == SNR_DEP_MEM ? dma_issued_at(d, e[j].producer) : NULL;
			if (q)
				fprintf(f, "  dma%" PRIu64 " -> dma%" PRIu64 " [label=\"src data\"];\n", q->id, m->id);
		}
		switch (m->anchor_kind) {
		case SNR_ANCHOR_DMA:
			fprintf(f, "  wait%" PRId64 " -> dma%" PRIu64
				   " [color=red, penwidth=2, label=\"relaxed: %zu insns\"];\n",
				d->dmas[m->anchor_dma - 1].wait_index, m->id, m->slice_total);
			break;
		case SNR_ANCHOR_INSN:
		case SNR_ANCHOR_FLAG:
		case SNR_ANCHOR_HEAVY:
			if (m->anchor_index >= 0) {
				fprintf(f, "  i%" PRId64 " [shape=plaintext, label=\"#%" PRId64 " %s\"];\n", m->anchor_index,
					m->anchor_index, ta1_class_name(snr_deps_insn_get(d, m->anchor_index).cls));
				fprintf(f, "  i%" PRId64 " -> dma%" PRIu64 " [color=red, label=\"relaxed (%s)\"];\n",
					m->anchor_index, m->id, snr_anchor_kind_name(m->anchor_kind));
			}
			break;
		default: break;
		}
	}
	fprintf(f, "}\n");
	if (snr_outfile_close(&of, true, oerr, sizeof(oerr))) {
		snr_err("analyze deps: %s", oerr);
		return -1;
	}
	return 0;
}
