/*
 * gather.c: a sweep's results from whatever points are finished: every
 * point's figures, which points and tasks are missing (a partial sweep says
 * so in every output: "complete": false and "missing" in JSON, a comment
 * line in CSV, a line in the text and a banner on the page), each
 * parameter's elasticity, and the best points.
 *
 * Elasticity of the cycles to a parameter, between two neighbouring values
 * v1 < v2 of its axis with every other parameter fixed (cycles c1, c2):
 * the arc (midpoint) form, so that it is the same read in either direction,
 *
 *     e = ((c2 - c1) / ((c1 + c2) / 2)) / ((v2 - v1) / ((v1 + v2) / 2))
 *
 * the % change of the cycles per % change of the parameter: near -1 the
 * cycles fall in proportion as the parameter grows (the parameter bounds the
 * window), near 0 it does not matter there. Every such pair is listed; a parameter's summary is their
 * mean, minimum and maximum. Config-file axes and values that are not
 * numbers have none.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_outfile.h"
#include "lib/snr_util.h"
#include "sim/snr_tracker.h"
#include "sweep/sweep.h"

#define SWEEP_BEST 5

static json_t *load_point(const struct sweep_plan *p, size_t i)
{
	char *path = sweep_point_path(p, i);
	json_t *j = json_load_file(path, 0, NULL);
	free(path);
	if (j && json_integer_value(json_object_get(j, "point")) != (json_int_t)i) {
		json_decref(j);
		return NULL;
	}
	return j;
}

static json_t *elasticities(const struct sweep_plan *p, json_t **pts)
{
	json_t *out = json_array();
	size_t stride = p->npoints;
	for (size_t a = 0; a < p->naxes; a++) {
		size_t k = json_array_size(p->axes[a].values);
		stride /= k;
		if (p->axes[a].is_config_list || k < 2)
			continue;
		json_t *pairs = json_array();
		double sum = 0, lo = INFINITY, hi = -INFINITY;
		size_t n = 0;
		size_t coord[p->naxes];
		for (size_t i = 0; i < p->npoints; i++) {
			sweep_point_coords(p->axes, p->naxes, i, coord);
			if (coord[a] + 1 >= k || !pts[i] || !pts[i + stride])
				continue;
			json_t *v1j = json_array_get(p->axes[a].values, coord[a]);
			json_t *v2j = json_array_get(p->axes[a].values, coord[a] + 1);
			if (!json_is_number(v1j) || !json_is_number(v2j))
				continue;
			double v1 = json_number_value(v1j), v2 = json_number_value(v2j);
			double c1 = (double)json_integer_value(json_object_get(pts[i], "cycles"));
			double c2 = (double)json_integer_value(json_object_get(pts[i + stride], "cycles"));
			if (v1 + v2 == 0 || v1 == v2 || c1 + c2 == 0)
				continue;
			double e = ((c2 - c1) / ((c1 + c2) / 2)) / ((v2 - v1) / ((v1 + v2) / 2));
			json_t *pr = json_object();
			json_object_set_new(pr, "from", json_incref(v1j));
			json_object_set_new(pr, "to", json_incref(v2j));
			json_object_set_new(pr, "from_point", json_integer((json_int_t)i));
			json_object_set_new(pr, "to_point", json_integer((json_int_t)(i + stride)));
			json_object_set_new(pr, "elasticity", json_real(e));
			json_array_append_new(pairs, pr);
			sum += e;
			lo = e < lo ? e : lo;
			hi = e > hi ? e : hi;
			n++;
		}
		json_t *o = json_object();
		json_object_set_new(o, "param", json_string(p->axes[a].key));
		json_object_set_new(o, "pairs_measured", json_integer((json_int_t)n));
		json_object_set_new(o, "mean", n ? json_real(sum / (double)n) : json_null());
		json_object_set_new(o, "min", n ? json_real(lo) : json_null());
		json_object_set_new(o, "max", n ? json_real(hi) : json_null());
		json_object_set_new(o, "pairs", pairs);
		json_array_append_new(out, o);
	}
	return out;
}

static const json_t **g_pts;
static int cmp_cycles(const void *a, const void *b)
{
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	json_int_t cx = json_integer_value(json_object_get(g_pts[x], "cycles"));
	json_int_t cy = json_integer_value(json_object_get(g_pts[y], "cycles"));
	return cx < cy ? -1 : cx > cy ? 1 : x < y ? -1 : x > y;
}

json_t *sweep_gather(const struct sweep_plan *p)
{
	json_t **pts = snr_xcalloc(p->npoints, sizeof(*pts));
	json_t *res = json_object(), *points = json_array(), *missing = json_array();
	size_t *order = snr_xcalloc(p->npoints, sizeof(*order)), nbest = 0;
	for (size_t i = 0; i < p->npoints; i++) {
		pts[i] = load_point(p, i);
		if (pts[i]) {
			json_array_append(points, pts[i]);
			if (json_is_true(json_object_get(pts[i], "verified")))
				order[nbest++] = i;
		} else {
			json_array_append_new(missing, json_integer((json_int_t)i));
		}
	}
	json_object_set_new(res, "schema", json_string("snr.sweep/1"));
	json_object_set_new(res, "complete", json_boolean(json_array_size(missing) == 0));
	json_object_set_new(res, "points_total", json_integer((json_int_t)p->npoints));
	json_object_set_new(res, "points_finished", json_integer((json_int_t)json_array_size(points)));
	json_object_set_new(res, "missing", missing);
	json_t *mt = json_array();
	size_t *tasks, nt = sweep_unfinished_tasks(p, &tasks);
	for (size_t t = 0; t < nt; t++) {
		json_t *o = json_object();
		size_t a, b;
		sweep_task_points(p, tasks[t], &a, &b);
		json_object_set_new(o, "task", json_integer((json_int_t)tasks[t]));
		json_object_set_new(o, "first_point", json_integer((json_int_t)a));
		json_object_set_new(o, "last_point", json_integer((json_int_t)b - 1));
		char *sl = sweep_slurm_task_name(p, tasks[t]);
		if (sl)
			json_object_set_new(o, "slurm", json_string(sl));
		free(sl);
		json_array_append_new(mt, o);
	}
	free(tasks);
	json_object_set_new(res, "missing_tasks", mt);
	json_t *ax = json_array();
	for (size_t a = 0; a < p->naxes; a++) {
		json_t *o = json_object();
		json_object_set_new(o, "key", json_string(p->axes[a].key));
		json_object_set(o, "values", p->axes[a].values);
		json_array_append_new(ax, o);
	}
	json_object_set_new(res, "params", ax);
	json_object_set(res, "windows", json_object_get(p->plan, "windows"));
	json_object_set_new(res, "points", points);
	json_object_set_new(res, "elasticity", elasticities(p, pts));
	g_pts = (const json_t **)pts;
	if (nbest)
		snr_qsort(order, nbest, sizeof(*order), cmp_cycles);
	json_t *best = json_array();
	for (size_t i = 0; i < nbest && i < SWEEP_BEST; i++)
		json_array_append_new(best, json_integer((json_int_t)order[i]));
	json_object_set_new(res, "best", best);
	for (size_t i = 0; i < p->npoints; i++)
		json_decref(pts[i]);
	free(pts);
	free(order);
	return res;
}

/* ---- text and CSV ---- */

/* Point pt's value of parameter axis ax (a grid's key) as text. */
static void param_text(char *buf, size_t len, json_t *pt, json_t *ax)
{
	json_t *v = json_object_get(json_object_get(pt, "params"), json_string_value(json_object_get(ax, "key")));
	if (json_is_string(v))
		snprintf(buf, len, "%s", json_string_value(v));
	else {
		char *t = json_dumps(v, JSON_ENCODE_ANY);
		snprintf(buf, len, "%s", t ? t : "?");
		free(t);
	}
}

static json_t *point_by_index(json_t *res, json_int_t i)
{
	size_t k;
	json_t *pt;
	json_array_foreach(json_object_get(res, "points"), k, pt)
		if (json_integer_value(json_object_get(pt, "point")) == i)
			return pt;
	return NULL;
}

static void missing_line(FILE *f, json_t *res, const char *prefix)
{
	json_t *m = json_object_get(res, "missing");
	fprintf(f, "%sINCOMPLETE: %zu of %lld points missing (points", prefix, json_array_size(m),
		(long long)json_integer_value(json_object_get(res, "points_total")));
	size_t k;
	json_t *v;
	json_array_foreach(m, k, v) fprintf(f, " %lld", (long long)json_integer_value(v));
	fputs("; tasks", f);
	json_array_foreach(json_object_get(res, "missing_tasks"), k, v) {
		const char *sl = json_string_value(json_object_get(v, "slurm"));
		fprintf(f, " %lld", (long long)json_integer_value(json_object_get(v, "task")));
		if (sl)
			fprintf(f, " (Slurm %s)", sl);
	}
	fputs("): rerun them with snr sweep --resume\n", f);
}

void sweep_print_text(FILE *f, json_t *res)
{
	json_t *params = json_object_get(res, "params");
	bool complete = json_is_true(json_object_get(res, "complete"));
	if (!complete)
		missing_line(f, res, "");
	fprintf(f, "%5s", "point");
	size_t a;
	json_t *ax;
	int width[json_array_size(params) + 1]; /* a column as wide as its key, 8 at least */
	json_array_foreach(params, a, ax) {
		int w = (int)strlen(json_string_value(json_object_get(ax, "key")));
		width[a] = w < 8 ? 8 : w;
		fprintf(f, "  %*s", width[a], json_string_value(json_object_get(ax, "key")));
	}
	fprintf(f, "  %12s  %8s  %6s", "cycles", "vs p0", "IPC");
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, "  %12s", snr_stall_cause_name((enum snr_stall_cause)c));
	fputs("  verified\n", f);
	json_t *p0 = point_by_index(res, 0);
	double c0 = p0 ? (double)json_integer_value(json_object_get(p0, "cycles")) : 0;
	size_t k;
	json_t *pt;
	json_array_foreach(json_object_get(res, "points"), k, pt) {
		fprintf(f, "%5lld", (long long)json_integer_value(json_object_get(pt, "point")));
		json_array_foreach(params, a, ax) {
			char v[64];
			param_text(v, sizeof(v), pt, ax);
			fprintf(f, "  %*s", width[a], v);
		}
		double cy = (double)json_integer_value(json_object_get(pt, "cycles"));
		fprintf(f, "  %12.0f", cy);
		if (c0 > 0)
			fprintf(f, "  %+7.1f%%", 100.0 * (cy - c0) / c0);
		else
			fprintf(f, "  %8s", "-");
		fprintf(f, "  %6.3f", json_real_value(json_object_get(pt, "ipc")));
		for (int c = 0; c < SNR_STALL_COUNT; c++)
			fprintf(f, "  %12lld",
				(long long)json_integer_value(json_object_get(
					json_object_get(pt, "stall_cycles"), snr_stall_cause_name((enum snr_stall_cause)c))));
		fprintf(f, "  %s\n", json_is_true(json_object_get(pt, "verified")) ? "yes" : "DIVERGED");
	}
	fputs("\nelasticity (% cycles per % change, arc form between neighbouring values, others fixed):\n", f);
	json_array_foreach(json_object_get(res, "elasticity"), k, pt) {
		json_t *mean = json_object_get(pt, "mean");
		if (json_is_null(mean))
			fprintf(f, "  %-28s  not measured (no finished neighbouring points)\n",
				json_string_value(json_object_get(pt, "param")));
		else
			fprintf(f, "  %-28s  mean %+.3f  min %+.3f  max %+.3f  (%lld pairs)\n",
				json_string_value(json_object_get(pt, "param")), json_real_value(mean),
				json_real_value(json_object_get(pt, "min")), json_real_value(json_object_get(pt, "max")),
				(long long)json_integer_value(json_object_get(pt, "pairs_measured")));
	}
	fputs("best points (fewest cycles, verified):", f);
	json_array_foreach(json_object_get(res, "best"), k, pt) {
		json_t *bp = point_by_index(res, json_integer_value(pt));
		char *ps = json_dumps(json_object_get(bp, "params"), JSON_COMPACT | JSON_PRESERVE_ORDER);
		fprintf(f, "%s %lld %s %lld cycles", k ? ";" : "", (long long)json_integer_value(pt), ps,
			(long long)json_integer_value(json_object_get(bp, "cycles")));
		free(ps);
	}
	fputs(json_array_size(json_object_get(res, "best")) ? "\n" : " none\n", f);
	if (!complete)
		missing_line(f, res, "");
}

int sweep_write_csv(const char *path, json_t *res, char *err, size_t errlen)
{
	struct snr_outfile of;
	FILE *f = snr_outfile_fopen(&of, path, err, errlen);
	if (!f)
		return -1;
	if (!json_is_true(json_object_get(res, "complete")))
		missing_line(f, res, "# ");
	json_t *params = json_object_get(res, "params");
	size_t a;
	json_t *ax;
	fputs("point", f);
	json_array_foreach(params, a, ax) fprintf(f, ",%s", json_string_value(json_object_get(ax, "key")));
	fputs(",cycles,instructions,ipc,verified", f);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, ",stall_%s", snr_stall_cause_name((enum snr_stall_cause)c));
	fputs(",dma_stall_cycles,dma_count,dma_bytes", f);
	for (int u = 0; u < SNR_UNIT_COUNT; u++)
		fprintf(f, ",util_%s", snr_unit_name((enum snr_unit)u));
	fputc('\n', f);
	size_t k;
	json_t *pt;
	json_array_foreach(json_object_get(res, "points"), k, pt) {
		fprintf(f, "%lld", (long long)json_integer_value(json_object_get(pt, "point")));
		json_array_foreach(params, a, ax) {
			char v[600];
			param_text(v, sizeof(v), pt, ax);
			/* a config file's name may hold a comma or a quote */
			fputs(",\"", f);
			for (const char *c = v; *c; c++)
				fprintf(f, *c == '"' ? "\"\"" : "%c", *c);
			fputc('"', f);
		}
		fprintf(f, ",%lld,%lld,%.6f,%s", (long long)json_integer_value(json_object_get(pt, "cycles")),
			(long long)json_integer_value(json_object_get(pt, "instructions")),
			json_real_value(json_object_get(pt, "ipc")),
			json_is_true(json_object_get(pt, "verified")) ? "true" : "false");
		for (int c = 0; c < SNR_STALL_COUNT; c++)
			fprintf(f, ",%lld",
				(long long)json_integer_value(json_object_get(
					json_object_get(pt, "stall_cycles"), snr_stall_cause_name((enum snr_stall_cause)c))));
		fprintf(f, ",%lld,%lld,%lld", (long long)json_integer_value(json_object_get(pt, "dma_stall_cycles")),
			(long long)json_integer_value(json_object_get(pt, "dma_count")),
			(long long)json_integer_value(json_object_get(pt, "dma_bytes")));
		for (int u = 0; u < SNR_UNIT_COUNT; u++)
			fprintf(f, ",%.6f",
				json_real_value(json_object_get(json_object_get(pt, "utilization"),
								snr_unit_name((enum snr_unit)u))));
		fputc('\n', f);
	}
	return snr_outfile_close(&of, true, err, errlen);
}
