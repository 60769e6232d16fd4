/*
 * timed_metrics.c: see timed_metrics.h.
 */
#include "device/timed_metrics.h"

#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_set.h"
#include "lib/snr_util.h"
#include "replayer/metrics.h"

struct ta1_timed_metrics {
	unsigned nchips;
	struct snr_set_writer *set;
	struct snr_metrics_writer **w;
	struct snr_tracker *trackers;
};

static void writers_abandon(struct ta1_timed_metrics *m)
{
	for (unsigned i = 0; i < m->nchips; i++)
		if (m->w[i])
			snr_metrics_abandon(m->w[i]);
	free(m->w);
	free(m->trackers);
	free(m);
}

struct ta1_timed_metrics *ta1_timed_metrics_new(const char *dir, const struct snr_config *cfg,
						const struct snr_elf *elf, char *err, size_t errlen)
{
	char abs[PATH_MAX];
	const char *elf_path = realpath(elf->path, abs) ? abs : elf->path;
	json_t *info = json_object();
	json_object_set_new(info, "pod", json_true());
	json_object_set_new(info, "chips", json_integer((json_int_t)cfg->chips));
	json_object_set_new(info, "source", json_string("snr device --timing"));
	json_object_set_new(info, "program", json_string(elf_path));
	struct snr_set_writer *set = snr_set_create(dir, "metrics", info, err, errlen);
	if (!set)
		return NULL;
	struct ta1_timed_metrics *m = snr_xcalloc(1, sizeof(*m));
	m->nchips = (unsigned)cfg->chips;
	m->set = set;
	m->w = snr_xcalloc(m->nchips, sizeof(*m->w));
	m->trackers = snr_xcalloc(m->nchips, sizeof(*m->trackers));
	char *cfg_s = snr_config_to_json(cfg);
	json_t *cfg_j = json_loads(cfg_s, 0, NULL);
	free(cfg_s);
	size_t ns = elf->nsymbols;
	uint64_t *sa = snr_xcalloc(ns + 1, 8), *sz = snr_xcalloc(ns + 1, 8);
	const char **sn = snr_xcalloc(ns + 1, sizeof(char *));
	for (size_t i = 0; i < ns; i++) {
		sa[i] = elf->symbols[i].addr;
		sz[i] = elf->symbols[i].size;
		sn[i] = elf->symbols[i].name;
	}
	int rc = 0;
	for (unsigned c = 0; c < m->nchips && !rc; c++) {
		/* what a replay's META holds, with the program in place of a trace:
		 * trace_meta names the ISA, the chip and the ELF (file:line) */
		json_t *tm = json_object();
		json_object_set_new(tm, "isa", json_string("ta1"));
		json_object_set_new(tm, "chip", json_integer(c));
		json_object_set_new(tm, "chips", json_integer((json_int_t)m->nchips));
		json_object_set_new(tm, "elf", json_string(elf_path));
		json_object_set(tm, "config", cfg_j);
		json_t *meta = json_object();
		json_object_set_new(meta, "format", json_string("snr metrics"));
		json_object_set_new(meta, "source", json_string("snr device --timing"));
		json_object_set_new(meta, "program", json_string(elf_path));
		json_object_set_new(meta, "simulator", json_string("ta1-timing"));
		json_object_set_new(meta, "chip", json_integer(c));
		json_object_set_new(meta, "trace_meta", tm);
		json_object_set(meta, "config", cfg_j);
		char *text = json_dumps(meta, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(meta);
		m->w[c] = snr_metrics_create(snr_set_window_path(set, c), text, err, errlen);
		free(text);
		if (!m->w[c] || snr_metrics_write_symbols(m->w[c], ns, sa, sz, sn)) {
			if (m->w[c])
				snr_fmt(err, errlen, "writing the symbols of chip %u's metrics file", c);
			rc = -1;
			break;
		}
		m->trackers[c] = *snr_metrics_tracker(m->w[c]);
	}
	json_decref(cfg_j);
	free(sa);
	free(sz);
	free(sn);
	if (rc) {
		ta1_timed_metrics_abandon(m, "error");
		return NULL;
	}
	return m;
}

const struct snr_tracker *ta1_timed_metrics_trackers(struct ta1_timed_metrics *m) { return m->trackers; }

static json_t *summary_of(struct ta1_timing_model *t)
{
	struct ta1_timing_totals tot;
	ta1_timing_totals(t, &tot);
	json_t *j = json_object();
	json_object_set_new(j, "instructions", json_integer((json_int_t)tot.instructions));
	json_object_set_new(j, "cycles", json_integer((json_int_t)tot.cycles));
	json_object_set_new(j, "ipc", json_real(tot.cycles ? (double)tot.instructions / (double)tot.cycles : 0));
	json_t *st = json_object();
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		json_object_set_new(st, snr_stall_cause_name((enum snr_stall_cause)k),
				    json_integer((json_int_t)tot.stall_cycles[k]));
	json_object_set_new(j, "stall_cycles", st);
	json_object_set_new(j, "dma_count", json_integer((json_int_t)tot.dma_count));
	json_object_set_new(j, "dma_bytes", json_integer((json_int_t)tot.dma_bytes));
	/* the device's run is the reference a replay is verified against: there
	 * is no recording to compare it with (docs/metrics-format.md) */
	json_object_set_new(j, "verified", json_true());
	json_object_set_new(j, "end_state_checked", json_false());
	json_object_set_new(j, "truncated_trace", json_false());
	json_object_set_new(j, "truncated", json_false());
	json_object_set_new(j, "program_exited", json_true());
	return j;
}

int ta1_timed_metrics_finish(struct ta1_timed_metrics *m, struct ta1_timing_model **models, const char *end,
			     char *err, size_t errlen)
{
	int rc = 0;
	for (unsigned c = 0; c < m->nchips; c++) {
		if (rc) {
			snr_metrics_abandon(m->w[c]);
			m->w[c] = NULL;
			continue;
		}
		json_t *sj = summary_of(models[c]);
		char *text = json_dumps(sj, JSON_COMPACT | JSON_PRESERVE_ORDER);
		json_decref(sj);
		rc = snr_metrics_finish(m->w[c], text, err, errlen);
		free(text);
		m->w[c] = NULL;
		json_t *entry = json_object();
		json_object_set_new(entry, "chip", json_integer(c));
		if (!rc)
			rc = snr_set_add(m->set, c, entry, err, errlen);
		else
			json_decref(entry);
	}
	struct snr_set_writer *set = m->set;
	writers_abandon(m); /* every writer finished or abandoned: frees m */
	if (rc)
		snr_set_abandon(set, "error");
	else
		rc = snr_set_finish(set, end, err, errlen);
	return rc;
}

void ta1_timed_metrics_abandon(struct ta1_timed_metrics *m, const char *end)
{
	struct snr_set_writer *set = m->set;
	writers_abandon(m); /* their temporaries first: the set's folder is then empty and goes */
	snr_set_abandon(set, end);
}
