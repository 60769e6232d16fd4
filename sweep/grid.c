/*
 * grid.c: the sweep's grid. An axis is a machine-config key and its values
 * (`--param KEY=V1,V2,...` or a range START:END:STEP), or a list of whole
 * config files (`--configs`). Points are the axes' product, the last axis
 * varying fastest, so a point's number says the same thing whatever runs
 * it. A point's config is built as JSON (the base config with each dotted
 * key set) and checked by the one validator, lib/snr_config.c: any key the
 * validator knows can be swept, keys added later included, and a bad key or
 * value is refused there with its range.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_config.h"
#include "lib/snr_util.h"
#include "sweep/sweep.h"

static struct sweep_axis *axis_new(struct sweep_axis **axes, size_t *naxes, const char *key, size_t keylen)
{
	*axes = snr_xrealloc(*axes, (*naxes + 1) * sizeof(**axes));
	struct sweep_axis *a = &(*axes)[(*naxes)++];
	a->key = snr_xmemdup(key, keylen + 1);
	a->key[keylen] = '\0';
	a->values = json_array();
	a->is_config_list = false;
	return a;
}

/* START:END:STEP, integers, END included. */
static int range_parse(const char *v, json_t *out, const char *arg, char *err, size_t errlen)
{
	long long s, e, st;
	char tail;
	if (sscanf(v, "%lld:%lld:%lld%c", &s, &e, &st, &tail) != 3) {
		snr_fmt(err, errlen, "--param %s: '%s' is not a range START:END:STEP of whole numbers", arg, v);
		return -1;
	}
	if (st <= 0 || e < s) {
		snr_fmt(err, errlen, "--param %s: range '%s' needs STEP > 0 and END >= START", arg, v);
		return -1;
	}
	if ((unsigned long long)(e - s) / (unsigned long long)st >= SWEEP_MAX_POINTS) {
		snr_fmt(err, errlen, "--param %s: range '%s' has more than %d values", arg, v, SWEEP_MAX_POINTS);
		return -1;
	}
	for (long long x = s; x <= e; x += st) {
		json_array_append_new(out, json_integer(x));
		if (x > e - st)
			break; /* no overflow past END */
	}
	return 0;
}

int sweep_axis_parse(const char *arg, struct sweep_axis **axes, size_t *naxes, char *err, size_t errlen)
{
	const char *eq = strchr(arg, '=');
	if (!eq || eq == arg || !eq[1]) {
		snr_fmt(err, errlen, "--param '%s': give KEY=V1,V2,... (or KEY=START:END:STEP)", arg);
		return -1;
	}
	for (size_t i = 0; i < *naxes; i++)
		if (strlen((*axes)[i].key) == (size_t)(eq - arg) && !strncmp((*axes)[i].key, arg, (size_t)(eq - arg))) {
			snr_fmt(err, errlen, "--param '%s': %s is already an axis", arg, (*axes)[i].key);
			return -1;
		}
	struct sweep_axis *a = axis_new(axes, naxes, arg, (size_t)(eq - arg));
	char *list = snr_xstrdup(eq + 1), *save = NULL;
	int rc = 0;
	for (char *v = strtok_r(list, ",", &save); v && !rc; v = strtok_r(NULL, ",", &save)) {
		if (strchr(v, ':')) {
			rc = range_parse(v, a->values, arg, err, errlen);
			continue;
		}
		json_error_t je;
		json_t *j = json_loads(v, JSON_DECODE_ANY, &je);
		if (!j || json_is_object(j) || json_is_array(j)) {
			snr_fmt(err, errlen, "--param %s: '%s' is not a value (a number, or a JSON scalar)", arg, v);
			json_decref(j);
			rc = -1;
			break;
		}
		json_array_append_new(a->values, j);
	}
	free(list);
	if (!rc && json_array_size(a->values) == 0) {
		snr_fmt(err, errlen, "--param '%s': no values", arg);
		rc = -1;
	}
	/* the same value twice would be two identical points */
	for (size_t i = 0; !rc && i < json_array_size(a->values); i++)
		for (size_t k = 0; k < i; k++)
			if (json_equal(json_array_get(a->values, i), json_array_get(a->values, k))) {
				char *t = json_dumps(json_array_get(a->values, i), JSON_ENCODE_ANY);
				snr_fmt(err, errlen, "--param %s: the value %s is given twice", arg, t);
				free(t);
				rc = -1;
				break;
			}
	return rc;
}

int sweep_axis_configs(const char *arg, struct sweep_axis **axes, size_t *naxes, char *err, size_t errlen)
{
	for (size_t i = 0; i < *naxes; i++)
		if (!strcmp((*axes)[i].key, "config")) {
			snr_fmt(err, errlen, "--configs given twice");
			return -1;
		}
	struct sweep_axis *a = axis_new(axes, naxes, "config", 6);
	a->is_config_list = true;
	char *list = snr_xstrdup(arg), *save = NULL;
	for (char *v = strtok_r(list, ",", &save); v; v = strtok_r(NULL, ",", &save)) {
		char *abs = realpath(v, NULL);
		if (!abs) {
			snr_fmt(err, errlen, "--configs: %s: %s", v, strerror(errno));
			free(list);
			return -1;
		}
		json_array_append_new(a->values, json_string(abs));
		free(abs);
	}
	free(list);
	if (!json_array_size(a->values)) {
		snr_fmt(err, errlen, "--configs: no files");
		return -1;
	}
	return 0;
}

void sweep_axes_free(struct sweep_axis *axes, size_t naxes)
{
	for (size_t i = 0; i < naxes; i++) {
		free(axes[i].key);
		json_decref(axes[i].values);
	}
	free(axes);
}

size_t sweep_npoints(const struct sweep_axis *axes, size_t naxes)
{
	size_t n = 1;
	for (size_t i = 0; i < naxes; i++) {
		size_t k = json_array_size(axes[i].values);
		if (k == 0 || n > SWEEP_MAX_POINTS / k)
			return 0;
		n *= k;
	}
	return n;
}

void sweep_point_coords(const struct sweep_axis *axes, size_t naxes, size_t i, size_t *coord)
{
	for (size_t a = naxes; a-- > 0;) {
		size_t k = json_array_size(axes[a].values);
		coord[a] = i % k;
		i /= k;
	}
}

json_t *sweep_point_params(const struct sweep_axis *axes, size_t naxes, size_t i)
{
	size_t coord[naxes ? naxes : 1];
	sweep_point_coords(axes, naxes, i, coord);
	json_t *o = json_object();
	for (size_t a = 0; a < naxes; a++) {
		json_t *v = json_array_get(axes[a].values, coord[a]);
		if (axes[a].is_config_list) {
			const char *path = json_string_value(v), *slash = strrchr(path, '/');
			json_object_set_new(o, axes[a].key, json_string(slash ? slash + 1 : path));
		} else {
			json_object_set(o, axes[a].key, v);
		}
	}
	return o;
}

/* Sets the dotted key in the config object, creating its sections. */
static void set_dotted(json_t *cfg, const char *key, json_t *value)
{
	char *k = snr_xstrdup(key), *p = k, *dot;
	json_t *o = cfg;
	while ((dot = strchr(p, '.'))) {
		*dot = '\0';
		json_t *sub = json_object_get(o, p);
		if (!json_is_object(sub)) {
			sub = json_object();
			json_object_set_new(o, p, sub);
		}
		o = sub;
		p = dot + 1;
	}
	json_object_set(o, p, value);
	free(k);
}

char *sweep_point_config(const char *base_json, const struct sweep_axis *axes, size_t naxes, size_t i, char *err,
			 size_t errlen)
{
	size_t coord[naxes ? naxes : 1];
	sweep_point_coords(axes, naxes, i, coord);
	json_error_t je;
	json_t *cfg = NULL;
	char from[600];
	snr_fmt(from, sizeof(from), "the base config");
	for (size_t a = 0; a < naxes; a++)
		if (axes[a].is_config_list) {
			const char *path = json_string_value(json_array_get(axes[a].values, coord[a]));
			struct snr_config_text t;
			struct snr_config c;
			if (snr_config_read(&t, path, err, errlen))
				return NULL;
			int bad = snr_config_check(&c, &t, err, errlen);
			if (!bad)
				cfg = json_loadb(t.text, t.len, JSON_REJECT_DUPLICATES, &je);
			snr_config_text_free(&t);
			if (bad)
				return NULL;
			snr_fmt(from, sizeof(from), "%s", path);
		}
	if (!cfg)
		cfg = json_loads(base_json ? base_json : "{}", JSON_REJECT_DUPLICATES, &je);
	if (!json_is_object(cfg)) {
		snr_fmt(err, errlen, "%s is not a JSON object", from);
		json_decref(cfg);
		return NULL;
	}
	for (size_t a = 0; a < naxes; a++)
		if (!axes[a].is_config_list)
			set_dotted(cfg, axes[a].key, json_array_get(axes[a].values, coord[a]));
	char *text = json_dumps(cfg, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(cfg);
	/* the source names the point's parameters, which the validator's
	 * line:col then points into the config it reads */
	json_t *params = sweep_point_params(axes, naxes, i);
	char *pt = json_dumps(params, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(params);
	char source[1024];
	snr_fmt(source, sizeof(source), "point %zu %s", i, pt);
	free(pt);
	struct snr_config c;
	if (snr_config_parse(&c, text, source, err, errlen)) {
		free(text);
		return NULL;
	}
	size_t n = strlen(text);
	text = snr_xrealloc(text, n + 2);
	text[n] = '\n';
	text[n + 1] = '\0';
	return text;
}
