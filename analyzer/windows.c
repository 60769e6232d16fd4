/*
 * windows.c: per window and together (see windows.h).
 */
#include "analyzer/windows.h"

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "analyzer/source.h"
#include "lib/snr_partial.h"
#include "lib/snr_util.h"
#include "sim/snr_tracker.h"

void an_windows_init(struct an_windows *w, const struct snr_inputs *in)
{
	w->in = in;
	w->summary = snr_xcalloc(in->n ? in->n : 1, sizeof(*w->summary));
}

void an_windows_free(struct an_windows *w)
{
	for (size_t i = 0; w->in && i < w->in->n; i++)
		json_decref(w->summary[i]);
	free(w->summary);
	w->summary = NULL;
}

void an_windows_set(struct an_windows *w, size_t i, json_t *summary)
{
	json_decref(w->summary[i]);
	w->summary[i] = summary ? json_incref(summary) : NULL;
}

/* Adds a summary into a sum (both snr_replay_summary's shape). */
static void add_into(json_t *sum, const json_t *s)
{
	static const char *const counts[] = {"instructions", "cycles", "dma_count", "dma_bytes"};
	for (size_t k = 0; k < sizeof(counts) / sizeof(counts[0]); k++)
		json_object_set_new(sum, counts[k],
				    json_integer(json_integer_value(json_object_get(sum, counts[k])) +
						 json_integer_value(json_object_get(s, counts[k]))));
	json_t *st = json_object_get(sum, "stall_cycles");
	if (!st) {
		st = json_object();
		json_object_set_new(sum, "stall_cycles", st);
	}
	for (int c = 0; c < SNR_STALL_COUNT; c++) {
		const char *name = snr_stall_cause_name((enum snr_stall_cause)c);
		json_object_set_new(st, name,
				    json_integer(json_integer_value(json_object_get(st, name)) +
						 json_integer_value(json_object_get(json_object_get(s, "stall_cycles"), name))));
	}
	json_object_set_new(sum, "windows", json_integer(json_integer_value(json_object_get(sum, "windows")) + 1));
}

static void finish_sum(json_t *sum)
{
	json_int_t insns = json_integer_value(json_object_get(sum, "instructions"));
	json_int_t cycles = json_integer_value(json_object_get(sum, "cycles"));
	json_object_set_new(sum, "ipc", json_real(cycles ? (double)insns / (double)cycles : 0.0));
}

json_t *an_windows_json(const struct an_windows *w)
{
	json_t *root = json_object(), *wins = json_array(), *groups = json_array(), *total = json_object();
	json_object_set_new(total, "windows", json_integer(0));
	for (size_t i = 0; i < w->in->n; i++) {
		json_t *o = snr_input_json(w->in, i);
		json_object_set(o, "summary", w->summary[i] ? w->summary[i] : json_null());
		json_array_append_new(wins, o);
		if (!w->summary[i])
			continue;
		json_t *g = NULL;
		size_t k;
		json_t *x;
		json_array_foreach(groups, k, x) {
			if (!strcmp(json_string_value(json_object_get(x, "group")), w->in->v[i].group))
				g = x;
		}
		if (!g) {
			g = json_object();
			json_object_set_new(g, "group", json_string(w->in->v[i].group));
			json_object_set_new(g, "windows", json_integer(0));
			json_array_append_new(groups, g);
		}
		add_into(g, w->summary[i]);
		add_into(total, w->summary[i]);
	}
	size_t k;
	json_t *x;
	json_array_foreach(groups, k, x) finish_sum(x);
	finish_sum(total);
	json_object_set_new(root, "windows", wins);
	json_object_set_new(root, "groups", groups);
	json_object_set_new(root, "total", total);
	return root;
}

static void row(FILE *f, const char *what, const char *group, const json_t *s)
{
	fprintf(f, "%-10s %-12s %12lld %12lld %6.3f", what, group,
		(long long)json_integer_value(json_object_get(s, "instructions")),
		(long long)json_integer_value(json_object_get(s, "cycles")),
		json_real_value(json_object_get(s, "ipc")) ? json_real_value(json_object_get(s, "ipc"))
		: json_integer_value(json_object_get(s, "cycles"))
			? (double)json_integer_value(json_object_get(s, "instructions")) /
				  (double)json_integer_value(json_object_get(s, "cycles"))
			: 0.0);
	json_t *st = json_object_get(s, "stall_cycles");
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, " %12lld",
			(long long)json_integer_value(json_object_get(st, snr_stall_cause_name((enum snr_stall_cause)c))));
	fprintf(f, " %6lld\n", (long long)json_integer_value(json_object_get(s, "dma_count")));
}

void an_windows_print(const struct an_windows *w, FILE *f)
{
	json_t *j = an_windows_json(w);
	fprintf(f, "%-10s %-12s %12s %12s %6s", "window", "group", "instructions", "cycles", "IPC");
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, " %12s", snr_stall_cause_name((enum snr_stall_cause)c));
	fprintf(f, " %6s\n", "DMAs");
	size_t i;
	json_t *x;
	json_array_foreach(json_object_get(j, "windows"), i, x) {
		char what[32];
		snprintf(what, sizeof(what), "%zu", i);
		if (w->summary[i])
			row(f, what, w->in->v[i].group, w->summary[i]);
		else
			fprintf(f, "%-10s %-12s (failed: no figures)\n", what, w->in->v[i].group);
	}
	json_array_foreach(json_object_get(j, "groups"), i, x) {
		char what[32];
		snprintf(what, sizeof(what), "%lld win", (long long)json_integer_value(json_object_get(x, "windows")));
		row(f, what, json_string_value(json_object_get(x, "group")), x);
	}
	char what[32];
	json_t *t = json_object_get(j, "total");
	snprintf(what, sizeof(what), "%lld win", (long long)json_integer_value(json_object_get(t, "windows")));
	row(f, what, "together", t);
	json_decref(j);
}

int an_windows_run(int (*fn)(int, char **), int argc, char **argv, FILE *out, json_t **summary)
{
	*summary = NULL;
	FILE *sink = tmpfile();
	if (!sink) {
		snr_err("cannot create a temporary file for a window's summary");
		return 1;
	}
	fflush(stdout);
	fflush(stderr);
	pid_t pid = fork();
	if (pid < 0) {
		snr_err("fork: cannot run a window's command");
		fclose(sink);
		return 1;
	}
	if (pid == 0) {
		snr_source_summary_sink = sink;
		if (out && dup2(fileno(out), 1) < 0)
			_exit(1);
		int rc = fn(argc, argv);
		if (rc && snr_partial_refused())
			rc = SNR_EXIT_PARTIAL;
		fflush(stdout);
		fflush(sink);
		_exit(rc);
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0)
		;
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 1;
	if (rc) { /* a window refused or failed gives no figures */
		fclose(sink);
		return rc;
	}
	rewind(sink);
	char *line = NULL;
	size_t cap = 0;
	while (getline(&line, &cap, sink) > 0) { /* the first input read is the window's (--compare reads another) */
		json_t *s = json_loads(line, 0, NULL);
		if (s && !*summary)
			*summary = s;
		else
			json_decref(s);
	}
	free(line);
	fclose(sink);
	return rc;
}
