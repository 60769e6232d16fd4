/*
 * snr_set.c: trace and metrics sets (see snr_set.h): the manifest written
 * after every window, and the expansion of a command line's inputs into the
 * windows they hold.
 */
#include "snr_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "snr_outfile.h"
#include "snr_partial.h"
#include "snr_util.h"

struct snr_set_writer {
	char *dir;     /* DIR */
	char *partial; /* DIR.partial */
	char *kind;
	json_t *manifest;
	char path[4096];
};

static char *path_join(const char *dir, const char *name)
{
	size_t n = strlen(dir) + strlen(name) + 2;
	char *p = snr_xmalloc(n);
	snprintf(p, n, "%s/%s", dir, name);
	return p;
}

static int write_manifest(struct snr_set_writer *w, const char *dir, char *err, size_t errlen)
{
	char *text = json_dumps(w->manifest, JSON_INDENT(1) | JSON_PRESERVE_ORDER);
	char *p = path_join(dir, SNR_SET_MANIFEST);
	int rc = snr_outfile_write_text_part(p, text, strlen(text), err, errlen); /* rewritten per window */
	free(p);
	free(text);
	return rc;
}

struct snr_set_writer *snr_set_create(const char *dir, const char *kind, json_t *info, char *err, size_t errlen)
{
	struct stat st;
	size_t n = strlen(dir);
	while (n > 1 && dir[n - 1] == '/')
		n--;
	char *d = snr_xmalloc(n + 1);
	memcpy(d, dir, n);
	d[n] = 0;
	char *partial = snr_xmalloc(n + 9); /* memcpy: GCC's -fsanitize build saw a null %s in snprintf */
	memcpy(partial, d, n);
	memcpy(partial + n, ".partial", 9);
	if (stat(d, &st) == 0 || stat(partial, &st) == 0) {
		snr_fmt(err, errlen, "%s exists (%s); remove it or choose another -o: a set is never written over",
			stat(d, &st) == 0 ? d : partial,
			stat(d, &st) == 0 ? "an earlier set" : "an unfinished set: its finished windows are readable");
		goto fail;
	}
	if (mkdir(partial, 0777)) {
		snr_fmt(err, errlen, "creating %s: %s", partial, strerror(errno));
		goto fail;
	}
	struct snr_set_writer *w = snr_xcalloc(1, sizeof(*w));
	w->dir = d;
	w->partial = partial;
	w->kind = snr_xstrdup(kind);
	w->manifest = json_object();
	json_object_set_new(w->manifest, "format", json_string("snr set"));
	json_object_set_new(w->manifest, "version", json_integer(1));
	json_object_set_new(w->manifest, "kind", json_string(kind));
	json_object_set_new(w->manifest, "complete", json_false());
	if (info)
		json_object_update(w->manifest, info);
	json_decref(info);
	json_object_set_new(w->manifest, "windows", json_array());
	if (write_manifest(w, w->partial, err, errlen)) {
		snr_set_abandon(w, "error");
		return NULL;
	}
	return w;
fail:
	json_decref(info);
	free(d);
	free(partial);
	return NULL;
}

const char *snr_set_writer_dir(const struct snr_set_writer *w) { return w->partial; }

const char *snr_set_window_path(struct snr_set_writer *w, uint64_t k)
{
	snprintf(w->path, sizeof(w->path), "%s/window-%llu.%s", w->partial, (unsigned long long)k,
		 strcmp(w->kind, "metrics") ? "snrt" : "snrm");
	return w->path;
}

int snr_set_add(struct snr_set_writer *w, uint64_t k, json_t *entry, char *err, size_t errlen)
{
	char name[64];
	snprintf(name, sizeof(name), "window-%llu.%s", (unsigned long long)k, strcmp(w->kind, "metrics") ? "snrt" : "snrm");
	json_t *e = json_object();
	json_object_set_new(e, "window", json_integer((json_int_t)k));
	json_object_set_new(e, "file", json_string(name));
	json_object_update(e, entry);
	json_decref(entry);
	json_array_append_new(json_object_get(w->manifest, "windows"), e);
	return write_manifest(w, w->partial, err, errlen);
}

static void writer_free(struct snr_set_writer *w)
{
	json_decref(w->manifest);
	free(w->dir);
	free(w->partial);
	free(w->kind);
	free(w);
}

int snr_set_finish(struct snr_set_writer *w, const char *end, char *err, size_t errlen)
{
	json_object_set_new(w->manifest, "complete", json_true());
	json_object_set_new(w->manifest, "end", json_string(end));
	int rc = write_manifest(w, w->partial, err, errlen);
	if (!rc && rename(w->partial, w->dir)) {
		snr_fmt(err, errlen, "renaming %s to %s: %s", w->partial, w->dir, strerror(errno));
		rc = -1;
	}
	writer_free(w);
	return rc;
}

void snr_set_abandon(struct snr_set_writer *w, const char *end)
{
	char err[600];
	if (!json_array_size(json_object_get(w->manifest, "windows"))) {
		/* nothing recorded: no folder is left behind, unless it holds a
		 * window's journal (then the manifest says why it stopped) */
		char *m = path_join(w->partial, SNR_SET_MANIFEST);
		unlink(m);
		free(m);
		if (rmdir(w->partial) == 0) {
			writer_free(w);
			return;
		}
	}
	json_object_set_new(w->manifest, "end", json_string(end));
	if (write_manifest(w, w->partial, err, sizeof(err)))
		snr_warn("%s", err);
	writer_free(w);
}

/* ---- reading ---- */

bool snr_is_set(const char *path)
{
	struct stat st;
	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return false;
	char *m = path_join(path, SNR_SET_MANIFEST);
	bool ok = stat(m, &st) == 0;
	free(m);
	return ok;
}

int snr_set_refuse(const char *path, char *err, size_t errlen)
{
	if (!snr_is_set(path))
		return 0;
	snr_fmt(err, errlen, "%s is a set of windows: this command reads one of its window-K files; replay, analyze, "
		"annotate and report take the set", path);
	return -1;
}

/* "decode" from ".../decode.snrs", ".../decode.snrs.partial", "x/decode.snrt" */
static char *group_of(const char *path)
{
	size_t n = strlen(path);
	while (n > 1 && path[n - 1] == '/')
		n--;
	const char *base = path;
	for (size_t i = 0; i < n; i++)
		if (path[i] == '/' && i + 1 < n)
			base = path + i + 1;
	size_t len = (size_t)(path + n - base);
	static const char *const ext[] = {".partial", ".snrs", ".snrms", ".snrt", ".snrm"};
	for (size_t k = 0; k < sizeof(ext) / sizeof(ext[0]); k++) {
		size_t el = strlen(ext[k]);
		if (len > el && !memcmp(base + len - el, ext[k], el))
			len -= el;
	}
	char *g = snr_xmalloc(len + 1);
	memcpy(g, base, len);
	g[len] = 0;
	return g;
}

static void push(struct snr_inputs *in, const char *path, char *group, uint64_t k, bool in_set, int64_t hit)
{
	in->v = snr_xrealloc(in->v, (in->n + 1) * sizeof(*in->v));
	in->v[in->n++] = (struct snr_input){snr_xstrdup(path), group, k, in_set, hit};
}

static int expand_set(const char *dir, struct snr_inputs *in, char *err, size_t errlen)
{
	char *m = path_join(dir, SNR_SET_MANIFEST);
	json_error_t je;
	json_t *j = json_load_file(m, 0, &je);
	int rc = -1;
	if (!j) {
		snr_fmt(err, errlen, "%s: not a set manifest: %s (line %d)", m, je.text, je.line);
		goto out;
	}
	json_t *wins = json_object_get(j, "windows");
	const char *fmt = json_string_value(json_object_get(j, "format"));
	if (!fmt || strcmp(fmt, "snr set") || !json_is_array(wins)) {
		snr_fmt(err, errlen, "%s: not a set manifest (no \"format\": \"snr set\" with a \"windows\" array)", m);
		goto out;
	}
	if (json_is_object(json_object_get(j, "pod")) && !strcmp(json_string_value(json_object_get(j, "kind")) ?
								    json_string_value(json_object_get(j, "kind")) : "", "trace")) {
		/* its windows are one run's chips, which only replay together */
		snr_fmt(err, errlen,
			"%s is a pod recording (record --pod): its chips replay only together, as `snr replay %s` "
			"alone replays them (not as independent windows, nor with other traces); `snr trace info %s` lists "
			"them, and %s/window-K.snrt replays chip K alone (stopping at its first wait for another chip's "
			"signal)",
			dir, dir, dir, dir);
		goto out;
	}
	size_t nw = json_array_size(wins);
	json_int_t asked = json_integer_value(json_object_get(j, "windows_requested"));
	if (!json_is_true(json_object_get(j, "complete"))) {
		char what[300];
		const char *end = json_string_value(json_object_get(j, "end"));
		snprintf(what, sizeof(what), "%zu finished window%s of %lld asked for (%s)", nw, nw == 1 ? "" : "s",
			 (long long)asked, end ? end : "the recorder was killed");
		if (snr_partial_check(dir, what, err, errlen))
			goto out;
	}
	if (!nw) {
		snr_fmt(err, errlen, "%s: the set holds no window", dir);
		goto out;
	}
	char *setgroup = group_of(dir);
	for (size_t i = 0; i < nw; i++) {
		json_t *e = json_array_get(wins, i);
		const char *file = json_string_value(json_object_get(e, "file"));
		if (!file || strchr(file, '/')) {
			snr_fmt(err, errlen, "%s: window %zu names no file (or one outside the set)", m, i);
			free(setgroup);
			goto out;
		}
		char *p = path_join(dir, file);
		struct stat st;
		if (stat(p, &st)) {
			snr_fmt(err, errlen, "%s: window %zu's file %s: %s", m, i, p, strerror(errno));
			free(p);
			free(setgroup);
			goto out;
		}
		const char *g = json_string_value(json_object_get(e, "group"));
		json_t *hit = json_object_get(e, "hit");
		push(in, p, snr_xstrdup(g ? g : setgroup), i, true, json_is_integer(hit) ? json_integer_value(hit) : -1);
		free(p);
	}
	free(setgroup);
	in->any_set = true;
	rc = 0;
out:
	json_decref(j);
	free(m);
	return rc;
}

int snr_inputs_expand(char *const *args, int nargs, struct snr_inputs *in, char *err, size_t errlen)
{
	memset(in, 0, sizeof(*in));
	for (int i = 0; i < nargs; i++) {
		struct stat st;
		if (stat(args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
			if (!snr_is_set(args[i])) {
				snr_fmt(err, errlen, "%s is a folder without %s: not a trace set", args[i], SNR_SET_MANIFEST);
				snr_inputs_free(in);
				return -1;
			}
			if (expand_set(args[i], in, err, errlen)) {
				snr_inputs_free(in);
				return -1;
			}
		} else {
			push(in, args[i], group_of(args[i]), 0, false, -1);
		}
	}
	return 0;
}

void snr_inputs_free(struct snr_inputs *in)
{
	for (size_t i = 0; i < in->n; i++) {
		free(in->v[i].path);
		free(in->v[i].group);
	}
	free(in->v);
	memset(in, 0, sizeof(*in));
}

json_t *snr_input_json(const struct snr_inputs *in, size_t i)
{
	const struct snr_input *x = &in->v[i];
	json_t *o = json_object();
	json_object_set_new(o, "window", json_integer((json_int_t)i));
	json_object_set_new(o, "group", json_string(x->group));
	json_object_set_new(o, "set_window", json_integer((json_int_t)x->set_window));
	json_object_set_new(o, "path", json_string(x->path));
	if (x->hit >= 0)
		json_object_set_new(o, "hit", json_integer(x->hit));
	return o;
}
