/*
 * source.c: see source.h.
 */
#include "source.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_line_pack.h"
#include "lib/snr_partial.h"
#include "lib/snr_set.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "replayer/metrics.h"
#include "replayer/replay.h"

static int config_of(struct snr_source *src, json_t *cfg, const char *what, char *err, size_t errlen)
{
	snr_config_default(&src->cfg);
	if (!cfg)
		return 0;
	char *s = json_dumps(cfg, JSON_COMPACT), source[600];
	snr_fmt(source, sizeof(source), "%s (%s)", src->path, what);
	int rc = snr_config_parse(&src->cfg, s, source, err, errlen);
	free(s);
	return rc;
}

FILE *snr_source_summary_sink;

static void summary_to_sink(const json_t *summary)
{
	if (!snr_source_summary_sink || !summary)
		return;
	json_dumpf(summary, snr_source_summary_sink, JSON_COMPACT);
	fputc('\n', snr_source_summary_sink);
	fflush(snr_source_summary_sink);
}

int snr_source_run(struct snr_source *src, const char *path, const char *sim, const char *config_path,
		   const struct snr_tracker *t, char *err, size_t errlen)
{
	memset(src, 0, sizeof(*src));
	src->path = snr_xstrdup(path);
	if (snr_set_refuse(path, err, errlen))
		return -1;
	int fd = snr_open_regular(path, err, errlen);
	char magic[8] = {0};
	if (fd < 0)
		return -1;
	ssize_t got = read(fd, magic, 8);
	close(fd);
	if (got == 8 && !memcmp(magic, SNR_METRICS_MAGIC, 8)) {
		if (config_path) {
			/* its events were timed with the config it carries: another one
			 * would apply to some figures and not to others */
			snr_fmt(err, errlen,
				"--config %s: %s is a metrics file, replayed with the machine config it carries; "
				"--config applies to a trace's replay (give the trace, or replay it with --config)",
				config_path, path);
			return -1;
		}
		src->metrics = snr_metrics_open(path, err, errlen);
		if (!src->metrics)
			return -1;
		json_t *meta = json_loads(snr_metrics_meta_json(src->metrics), 0, NULL);
		json_t *tm = json_object_get(meta, "trace_meta");
		src->meta_json = tm ? json_dumps(tm, JSON_COMPACT) : snr_xstrdup("{}");
		int rc = config_of(src, json_object_get(meta, "config"), "its machine config", err, errlen);
		json_decref(meta);
		if (rc)
			return -1;
		const char *sum = snr_metrics_summary_json(src->metrics);
		json_t *sj = sum ? json_loads(sum, 0, NULL) : NULL;
		if (!sj) /* a replay renames its metrics file into place whole: this one was cut since */
			return snr_partial_unusable(path,
						    "it has no summary (the end of the file is missing); replay its trace "
						    "again (snr replay T.snrt -o M.snrm)",
						    err, errlen);
		src->instructions = (uint64_t)json_integer_value(json_object_get(sj, "instructions"));
		src->cycles = (uint64_t)json_integer_value(json_object_get(sj, "cycles"));
		src->verified = json_is_true(json_object_get(sj, "verified"));
		json_t *st = json_object_get(sj, "stall_cycles");
		for (int k = 0; k < SNR_STALL_COUNT; k++)
			src->stall_cycles[k] = (uint64_t)json_integer_value(
				json_object_get(st, snr_stall_cause_name((enum snr_stall_cause)k)));
		bool partial = json_is_true(json_object_get(sj, "truncated_trace")) ||
			       json_is_true(json_object_get(sj, "truncated"));
		summary_to_sink(sj);
		json_decref(sj);
		char what[200];
		snr_fmt(what, sizeof(what), "the replay of a partial trace (%llu instructions)",
			(unsigned long long)src->instructions);
		if (partial && snr_partial_check(path, what, err, errlen))
			return -1;
		if (!src->verified) {
			snr_fmt(err, errlen, "%s: the replay that wrote it diverged from the recording", path);
			return -1;
		}
		size_t nl;
		const uint8_t *lp = snr_metrics_lines(src->metrics, &nl);
		src->lines = snr_lines_open_meta_pack(src->meta_json, path,
						      lp ? snr_line_pack_parse(lp, nl, err, errlen) : NULL, false);
		return snr_metrics_replay(src->metrics, t, err, errlen);
	}
	if (got != 8 || memcmp(magic, SNR_TRACE_MAGIC, 8)) {
		snr_fmt(err, errlen, "%s: neither a trace (.snrt) nor a metrics file (.snrm)", path);
		return -1;
	}
	src->is_trace = true;
	src->trace = snr_trace_open(path, err, errlen);
	if (!src->trace)
		return -1;
	src->meta_json = snr_xstrdup(snr_trace_meta_json(src->trace));
	src->lines = snr_lines_open_trace(src->trace, path);
	json_t *meta = json_loads(src->meta_json, 0, NULL);
	/* the analyses' config is the replay's: --config replaces the recorded one */
	int rc = config_path ? snr_config_load(&src->cfg, config_path, err, errlen)
			     : config_of(src, json_object_get(meta, "config"), "its recorded machine config", err, errlen);
	json_decref(meta);
	if (rc)
		return -1;
	struct snr_replay_opts o = {.trace_path = path, .sim = sim, .config_path = config_path, .tracker = t};
	struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
	rc = snr_replay(&o, r, err, errlen);
	if (!rc && !r->ok) {
		snr_fmt(err, errlen, "%s: the replay diverged from the recording:\n%s", path, r->report);
		rc = -1;
	}
	src->instructions = r->instructions;
	src->cycles = r->cycles;
	memcpy(src->stall_cycles, r->stall_cycles, sizeof(src->stall_cycles));
	src->verified = r->ok;
	if (!rc) {
		json_t *sj = snr_replay_summary(r);
		summary_to_sink(sj);
		json_decref(sj);
	}
	free(r);
	return rc;
}

void snr_source_close(struct snr_source *src)
{
	if (src->trace)
		snr_trace_close(src->trace);
	if (src->metrics)
		snr_metrics_close(src->metrics);
	snr_lines_free(src->lines);
	free(src->path);
	free(src->meta_json);
	memset(src, 0, sizeof(*src));
}

const char *snr_source_symbolize(const struct snr_source *src, uint64_t pc, char *buf, size_t len)
{
	if (src->trace)
		return snr_trace_symbolize(src->trace, pc, buf, len);
	if (src->metrics)
		return snr_metrics_symbolize(src->metrics, pc, buf, len);
	snprintf(buf, len, "0x%llx", (unsigned long long)pc);
	return buf;
}

const char *snr_source_where(const struct snr_source *src, uint64_t pc, char *buf, size_t len)
{
	char sym[160];
	return snr_lines_where(src->lines, pc, snr_source_symbolize(src, pc, sym, sizeof(sym)), buf, len);
}

json_t *snr_source_json(const struct snr_source *src, uint64_t pc)
{
	char sym[160];
	return snr_lines_source_json(src->lines, pc, snr_source_symbolize(src, pc, sym, sizeof(sym)));
}

const struct snr_place *snr_source_place(const struct snr_source *src, uint64_t pc)
{
	return snr_lines_find(src->lines, pc);
}

const char *snr_source_where_short(const struct snr_source *src, uint64_t pc, char *buf, size_t len)
{
	const struct snr_place *p = snr_lines_find(src->lines, pc);
	if (p)
		return snr_place_short(p, buf, len);
	return snr_source_symbolize(src, pc, buf, len);
}

void snr_source_json_print(FILE *f, const struct snr_source *src, uint64_t pc)
{
	json_t *o = snr_source_json(src, pc);
	json_dumpf(o, f, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(o);
}
