/*
 * check_golden.c: what `snr check` says of one trace, from its replay's
 * summary and its golden. Without a tolerance every field must be equal,
 * and a change is named with its direction (a faster kernel reads
 * "improved", yet fails: the golden no longer describes the simulator, and
 * `--update` is the reviewed way to accept it). With a tolerance (`snr check
 * --tolerance 2%`, or the golden's own "tolerance": "2%"), the timing fields
 * are compared as performance: cycles and each stall cause may grow by at
 * most the tolerance (a stall cause relative to the golden's cycles, so a
 * cause that goes from 0 to 5 cycles of 70,000 is 0.007%), ipc fall by at
 * most it; beyond it the other way is an improvement, which passes and is
 * labelled. The functional fields (instructions, DMA count and bytes, the
 * verification and end flags) stay exact: a tolerance is about speed, not
 * about running other code.
 */
#include "cli/check_golden.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

int snr_tolerance_parse(const char *text, double *fraction)
{
	char *end;
	if (!text || !*text)
		return -1;
	double v = strtod(text, &end);
	if (end == text || (*end && strcmp(end, "%")) || !isfinite(v) || v < 0 || v >= 100)
		return -1;
	*fraction = v / 100.0;
	return 0;
}

static void add(char *buf, size_t len, const char *fmt, ...) SNR_PRINTF(3, 4);
static void add(char *buf, size_t len, const char *fmt, ...)
{
	size_t used = strlen(buf);
	if (used + 3 >= len)
		return;
	if (used)
		used += (size_t)snprintf(buf + used, len - used, "; ");
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(buf + used, len - used, fmt, ap);
	va_end(ap);
}

/* -1 lower is better (cycles, stalls), +1 higher is better (ipc), 0 exact */
static int timing_direction(const char *key)
{
	if (!strcmp(key, "cycles") || !strncmp(key, "stall_cycles.", 13))
		return -1;
	if (!strcmp(key, "ipc"))
		return 1;
	return 0;
}

struct ctx {
	struct snr_golden_cmp *c;
	double golden_cycles;
};

static void compare(struct ctx *x, const char *prefix, json_t *want, json_t *got)
{
	struct snr_golden_cmp *c = x->c;
	const char *k;
	json_t *wv, *gv0;
	/* a golden that holds less than the summary checks less than it seems to */
	json_object_foreach(got, k, gv0) {
		if (!json_object_get(want, k))
			add(c->failed, sizeof(c->failed), "%s%s%s (not in the golden)", prefix, *prefix ? "." : "", k);
	}
	json_object_foreach(want, k, wv) {
		if (!*prefix && !strcmp(k, "tolerance"))
			continue;
		json_t *gv = json_object_get(got, k);
		char key[128];
		snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (json_is_object(wv) && json_is_object(gv)) {
			compare(x, key, wv, gv);
			continue;
		}
		if (gv && json_equal(wv, gv))
			continue;
		int dir = timing_direction(key);
		if (gv && dir && json_is_number(wv) && json_is_number(gv)) {
			double a = json_number_value(wv), b = json_number_value(gv);
			double base = dir < 0 && strcmp(key, "cycles") ? x->golden_cycles : a;
			double change = base > 0 ? (b - a) / base : (b > a ? INFINITY : -INFINITY);
			bool better = dir < 0 ? b < a : b > a;
			char what[200];
			if (json_is_integer(wv))
				snprintf(what, sizeof(what), "%s %lld -> %lld (%+.2f%%%s)", key, (long long)a, (long long)b,
					 100 * change, strcmp(key, "cycles") && dir < 0 ? " of the cycles" : "");
			else
				snprintf(what, sizeof(what), "%s %.4f -> %.4f (%+.2f%%)", key, a, b, 100 * change);
			if (!c->tolerant)
				add(c->failed, sizeof(c->failed), "%s, %s", what, better ? "improved" : "regressed");
			else if (fabs(change) <= c->tolerance + 1e-12)
				add(c->within, sizeof(c->within), "%s", what);
			else if (better)
				add(c->improved, sizeof(c->improved), "%s", what);
			else
				add(c->failed, sizeof(c->failed), "%s, regressed beyond %g%%", what, 100 * c->tolerance);
			continue;
		}
		char *a = json_dumps(wv, JSON_ENCODE_ANY), *b = gv ? json_dumps(gv, JSON_ENCODE_ANY) : NULL;
		add(c->failed, sizeof(c->failed), "%s %s -> %s", key, a, b ? b : "(missing)");
		free(a);
		free(b);
	}
}

int snr_golden_compare(json_t *want, json_t *got, bool cli_tolerant, double cli_tolerance,
		       struct snr_golden_cmp *c, char *err, size_t errlen)
{
	memset(c, 0, sizeof(*c));
	json_t *t = json_object_get(want, "tolerance");
	if (t) {
		if (!json_is_string(t) || snr_tolerance_parse(json_string_value(t), &c->tolerance)) {
			char *s = json_dumps(t, JSON_ENCODE_ANY);
			snr_fmt(err, errlen, "the golden's \"tolerance\" is %s: give a percentage such as \"2%%\"", s);
			free(s);
			return -1;
		}
		c->tolerant = true;
	} else if (cli_tolerant) {
		c->tolerant = true;
		c->tolerance = cli_tolerance;
	}
	struct ctx x = {.c = c, .golden_cycles = json_number_value(json_object_get(want, "cycles"))};
	compare(&x, "", want, got);
	return 0;
}
