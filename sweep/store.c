/*
 * store.c: the sweep folder (sweep.h has its layout). The plan is written
 * once, with every point's config, before any task runs; a task and the
 * gather only read it. A point is finished when DIR/points/pNNNN.json
 * exists: it is renamed into place after the point's windows, so --resume
 * trusts it and redoes nothing else.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "lib/snr_outfile.h"
#include "lib/snr_util.h"
#include "sweep/sweep.h"

#define PLAN_SCHEMA "snr.sweep.plan/1"

static char *path_of(const char *dir, const char *fmt, size_t a, size_t b)
{
	char name[128];
	snprintf(name, sizeof(name), fmt, a, b);
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = snr_xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

char *sweep_config_path(const struct sweep_plan *p, size_t point)
{
	return path_of(p->dir, "configs/p%04zu.json", point, 0);
}

char *sweep_point_path(const struct sweep_plan *p, size_t point)
{
	return path_of(p->dir, "points/p%04zu.json", point, 0);
}

char *sweep_window_path(const struct sweep_plan *p, size_t point, size_t window)
{
	return path_of(p->dir, "points/p%04zu-w%zu.json", point, window);
}

bool sweep_point_done(const struct sweep_plan *p, size_t point)
{
	char *path = sweep_point_path(p, point);
	struct stat st;
	bool done = stat(path, &st) == 0 && S_ISREG(st.st_mode);
	free(path);
	return done;
}

void sweep_task_points(const struct sweep_plan *p, size_t task, size_t *first, size_t *end)
{
	*first = task * p->per_task;
	*end = *first + p->per_task < p->npoints ? *first + p->per_task : p->npoints;
	if (*first > *end)
		*first = *end;
}

size_t sweep_unfinished_tasks(const struct sweep_plan *p, size_t **out)
{
	size_t n = 0;
	*out = NULL;
	for (size_t t = 0; t < p->ntasks; t++) {
		size_t a, b;
		sweep_task_points(p, t, &a, &b);
		for (size_t i = a; i < b; i++)
			if (!sweep_point_done(p, i)) {
				*out = snr_xrealloc(*out, (n + 1) * sizeof(**out));
				(*out)[n++] = t;
				break;
			}
	}
	return n;
}

static int mkdir_in(const char *dir, const char *sub, char *err, size_t errlen)
{
	char path[4096];
	snprintf(path, sizeof(path), "%s/%s", dir, sub);
	if (mkdir(path, 0777) && errno != EEXIST) {
		snr_fmt(err, errlen, "%s: %s", path, strerror(errno));
		return -1;
	}
	return 0;
}

int sweep_plan_create(const char *dir, char **windows, size_t nwindows, const char *base_json,
		      struct sweep_axis *axes, size_t naxes, size_t per_task, char *err, size_t errlen)
{
	size_t npoints = sweep_npoints(axes, naxes);
	if (!npoints) {
		snr_fmt(err, errlen, "the grid has more than %d points", SWEEP_MAX_POINTS);
		return -1;
	}
	/* every point's config is checked before anything is written */
	char **cfgs = snr_xcalloc(npoints, sizeof(*cfgs));
	int rc = -1;
	for (size_t i = 0; i < npoints; i++)
		if (!(cfgs[i] = sweep_point_config(base_json, axes, naxes, i, err, errlen)))
			goto out;
	if (mkdir(dir, 0777)) {
		snr_fmt(err, errlen, "-o %s: %s%s", dir, strerror(errno),
			errno == EEXIST ? " (continue a sweep there with --resume; a new one needs a new folder)" : "");
		goto out;
	}
	if (mkdir_in(dir, "configs", err, errlen) || mkdir_in(dir, "points", err, errlen) ||
	    mkdir_in(dir, "logs", err, errlen))
		goto out;
	json_t *plan = json_object();
	json_object_set_new(plan, "schema", json_string(PLAN_SCHEMA));
	json_t *w = json_array();
	for (size_t i = 0; i < nwindows; i++)
		json_array_append_new(w, json_string(windows[i]));
	json_object_set_new(plan, "windows", w);
	json_object_set_new(plan, "base_config", base_json ? json_loads(base_json, 0, NULL) : json_null());
	json_t *ax = json_array();
	for (size_t a = 0; a < naxes; a++) {
		json_t *o = json_object();
		json_object_set_new(o, "key", json_string(axes[a].key));
		json_object_set(o, "values", axes[a].values);
		json_object_set_new(o, "config_files", json_boolean(axes[a].is_config_list));
		json_array_append_new(ax, o);
	}
	json_object_set_new(plan, "axes", ax);
	json_object_set_new(plan, "points", json_integer((json_int_t)npoints));
	json_object_set_new(plan, "points_per_task", json_integer((json_int_t)per_task));
	json_object_set_new(plan, "tasks", json_integer((json_int_t)((npoints + per_task - 1) / per_task)));
	char *text = json_dumps(plan, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(plan);
	struct sweep_plan p = {.dir = (char *)dir};
	for (size_t i = 0; i < npoints; i++) {
		char *cp = sweep_config_path(&p, i);
		int wrc = snr_outfile_write_text(cp, cfgs[i], strlen(cfgs[i]), err, errlen);
		free(cp);
		if (wrc) {
			free(text);
			goto out;
		}
	}
	/* the plan last: a folder without it is no sweep, and is not resumed */
	char pp[4096];
	snprintf(pp, sizeof(pp), "%s/sweep.json", dir);
	size_t tl = strlen(text);
	text = snr_xrealloc(text, tl + 2);
	memcpy(text + tl, "\n", 2);
	rc = snr_outfile_write_text(pp, text, tl + 1, err, errlen);
	free(text);
out:
	for (size_t i = 0; i < npoints; i++)
		free(cfgs[i]);
	free(cfgs);
	return rc;
}

int sweep_plan_open(struct sweep_plan *p, const char *dir, char *err, size_t errlen)
{
	memset(p, 0, sizeof(*p));
	char pp[4096];
	snprintf(pp, sizeof(pp), "%s/sweep.json", dir);
	json_error_t je;
	json_t *plan = json_load_file(pp, JSON_REJECT_DUPLICATES, &je);
	if (!plan) {
		snr_fmt(err, errlen, "%s: %s%s", pp, je.text,
			access(pp, F_OK) ? " (not a sweep folder: `snr sweep ... -o DIR` makes one)" : "");
		return -1;
	}
	p->dir = snr_xstrdup(dir);
	p->plan = plan;
	json_t *w = json_object_get(plan, "windows"), *ax = json_object_get(plan, "axes");
	json_int_t np = json_integer_value(json_object_get(plan, "points"));
	json_int_t per = json_integer_value(json_object_get(plan, "points_per_task"));
	if (strcmp(json_string_value(json_object_get(plan, "schema")) ?: "", PLAN_SCHEMA) || !json_is_array(w) ||
	    !json_array_size(w) || !json_is_array(ax) || np <= 0 || per <= 0)
		goto bad;
	p->nwindows = json_array_size(w);
	p->windows = snr_xcalloc(p->nwindows, sizeof(*p->windows));
	for (size_t i = 0; i < p->nwindows; i++) {
		const char *s = json_string_value(json_array_get(w, i));
		if (!s)
			goto bad;
		p->windows[i] = snr_xstrdup(s);
	}
	p->naxes = json_array_size(ax);
	p->axes = snr_xcalloc(p->naxes ? p->naxes : 1, sizeof(*p->axes));
	for (size_t a = 0; a < p->naxes; a++) {
		json_t *o = json_array_get(ax, a);
		const char *key = json_string_value(json_object_get(o, "key"));
		json_t *vals = json_object_get(o, "values");
		if (!key || !json_is_array(vals) || !json_array_size(vals))
			goto bad;
		p->axes[a].key = snr_xstrdup(key);
		p->axes[a].values = json_incref(vals);
		p->axes[a].is_config_list = json_is_true(json_object_get(o, "config_files"));
	}
	p->npoints = (size_t)np;
	p->per_task = (size_t)per;
	p->ntasks = (p->npoints + p->per_task - 1) / p->per_task;
	if (sweep_npoints(p->axes, p->naxes) != p->npoints)
		goto bad;
	return 0;
bad:
	snr_fmt(err, errlen, "%s: not a sweep plan this snr reads (schema %s)", pp, PLAN_SCHEMA);
	sweep_plan_free(p);
	return -1;
}

void sweep_plan_free(struct sweep_plan *p)
{
	for (size_t i = 0; i < p->nwindows; i++)
		free(p->windows[i]);
	free(p->windows);
	for (size_t a = 0; a < p->naxes; a++) {
		free(p->axes[a].key);
		json_decref(p->axes[a].values);
	}
	free(p->axes);
	json_decref(p->plan);
	free(p->dir);
	memset(p, 0, sizeof(*p));
}
