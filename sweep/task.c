/*
 * task.c: one task of a sweep, whatever engine started it: the points of
 * task t, each window replayed by snr_replay() with the point's config file
 * (the code path of `snr replay --config FILE`, the same call cmd_replay.c
 * makes), its JSON stored as that command prints it. A tracker beside the
 * replay adds each unit's busy cycles (the timing model's busy intervals;
 * utilization = busy / cycles); the replay's own figures do not change with
 * it, which the byte-for-byte test against `snr replay --config` checks.
 */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_outfile.h"
#include "lib/snr_util.h"
#include "replayer/replay.h"
#include "sweep/sweep.h"

struct busy {
	uint64_t cycles[SNR_UNIT_COUNT];
};

static void on_busy(void *user, const struct snr_ev_busy *e)
{
	struct busy *b = user;
	if (e->unit < SNR_UNIT_COUNT && e->end > e->start)
		b->cycles[e->unit] += e->end - e->start;
}

static int write_json(const char *path, json_t *j, char *err, size_t errlen)
{
	char *t = json_dumps(j, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	size_t n = strlen(t);
	t = snr_xrealloc(t, n + 2);
	memcpy(t + n, "\n", 2);
	int rc = snr_outfile_write_text(path, t, n + 1, err, errlen);
	free(t);
	return rc;
}

static int run_point(const struct sweep_plan *p, size_t point, FILE *log, char *err, size_t errlen)
{
	char *cfg = sweep_config_path(p, point);
	uint64_t instructions = 0, cycles = 0, stalls[SNR_STALL_COUNT] = {0}, dmas = 0, dma_bytes = 0;
	struct busy busy = {0};
	bool verified = true;
	int rc = -1;
	struct snr_replay_result *r = snr_xcalloc(1, sizeof(*r));
	for (size_t w = 0; w < p->nwindows; w++) {
		struct snr_tracker tr = {.abi_version = SNR_TRACKER_ABI_VERSION, .user = &busy, .on_busy = on_busy};
		struct snr_replay_opts o = {.trace_path = p->windows[w], .config_path = cfg, .tracker = &tr};
		char rerr[1024];
		if (snr_replay(&o, r, rerr, sizeof(rerr))) {
			snr_fmt(err, errlen, "point %zu, window %zu (%s): %s", point, w, p->windows[w], rerr);
			goto out;
		}
		json_t *j = snr_replay_json(p->windows[w], r);
		char *wp = sweep_window_path(p, point, w);
		int wrc = write_json(wp, j, err, errlen);
		free(wp);
		json_decref(j);
		if (wrc)
			goto out;
		instructions += r->instructions;
		cycles += r->cycles;
		for (int k = 0; k < SNR_STALL_COUNT; k++)
			stalls[k] += r->stall_cycles[k];
		dmas += r->dma_count;
		dma_bytes += r->dma_bytes;
		verified &= r->ok;
	}
	json_t *pj = json_object();
	json_object_set_new(pj, "point", json_integer((json_int_t)point));
	json_object_set_new(pj, "params", sweep_point_params(p->axes, p->naxes, point));
	char rel[64];
	snprintf(rel, sizeof(rel), "configs/p%04zu.json", point);
	json_object_set_new(pj, "config", json_string(rel));
	json_object_set_new(pj, "windows", json_integer((json_int_t)p->nwindows));
	json_object_set_new(pj, "instructions", json_integer((json_int_t)instructions));
	json_object_set_new(pj, "cycles", json_integer((json_int_t)cycles));
	json_object_set_new(pj, "ipc", json_real(cycles ? (double)instructions / (double)cycles : 0));
	json_object_set_new(pj, "verified", json_boolean(verified));
	json_t *st = json_object();
	for (int k = 0; k < SNR_STALL_COUNT; k++)
		json_object_set_new(st, snr_stall_cause_name((enum snr_stall_cause)k), json_integer((json_int_t)stalls[k]));
	json_object_set_new(pj, "stall_cycles", st);
	json_object_set_new(pj, "dma_stall_cycles",
			    json_integer((json_int_t)(stalls[SNR_STALL_DMA_BASE] + stalls[SNR_STALL_DMA_TRANSFER])));
	json_object_set_new(pj, "dma_count", json_integer((json_int_t)dmas));
	json_object_set_new(pj, "dma_bytes", json_integer((json_int_t)dma_bytes));
	json_t *u = json_object();
	for (int k = 0; k < SNR_UNIT_COUNT; k++) {
		double f = cycles ? (double)busy.cycles[k] / (double)cycles : 0;
		json_object_set_new(u, snr_unit_name((enum snr_unit)k), json_real(f > 1 ? 1 : f));
	}
	json_object_set_new(pj, "utilization", u);
	char *pp = sweep_point_path(p, point);
	rc = write_json(pp, pj, err, errlen);
	free(pp);
	json_decref(pj);
	if (!rc && log)
		fprintf(log, "point %zu: %llu cycles%s\n", point, (unsigned long long)cycles,
			verified ? "" : " (a window diverged from its recording)");
out:
	free(r);
	free(cfg);
	return rc;
}

/* The temporary files a killed run of this point left (lib/snr_outfile.h
 * names them ".NAME.XXXXXX"): only this task writes this point's files, so
 * they are stale. */
static void remove_stale(const struct sweep_plan *p, size_t point)
{
	char dir[4096], pre1[32], pre2[32];
	snprintf(dir, sizeof(dir), "%s/points", p->dir);
	snprintf(pre1, sizeof(pre1), ".p%04zu.", point);
	snprintf(pre2, sizeof(pre2), ".p%04zu-w", point);
	DIR *d = opendir(dir);
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, pre1, strlen(pre1)) || !strncmp(e->d_name, pre2, strlen(pre2))) {
			char path[4400];
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			unlink(path);
		}
	closedir(d);
}

int sweep_run_task(const struct sweep_plan *p, size_t task, FILE *log, char *err, size_t errlen)
{
	if (task >= p->ntasks) {
		snr_fmt(err, errlen, "task %zu: the sweep in %s has tasks 0..%zu", task, p->dir, p->ntasks - 1);
		return -1;
	}
	size_t a, b;
	sweep_task_points(p, task, &a, &b);
	for (size_t i = a; i < b; i++) {
		if (sweep_point_done(p, i))
			continue; /* finished by an earlier run of this task */
		remove_stale(p, i);
		if (run_point(p, i, log, err, errlen))
			return -1;
	}
	return 0;
}
