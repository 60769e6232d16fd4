/*
 * snr_pod.c: reading a pod recording as a whole (see snr_pod.h).
 */
#include "lib/snr_pod.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/snr_set.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"

static json_t *manifest(const char *dir, char *err, size_t errlen)
{
	size_t len = strlen(dir) + sizeof(SNR_SET_MANIFEST) + 2;
	char *m = snr_xmalloc(len);
	snprintf(m, len, "%s/%s", dir, SNR_SET_MANIFEST);
	json_error_t je;
	json_t *j = json_load_file(m, 0, &je);
	if (!j && err)
		snr_fmt(err, errlen, "%s: not a set manifest: %s (line %d)", m, je.text, je.line);
	free(m);
	return j;
}

bool snr_pod_is(const char *dir)
{
	if (!snr_is_set(dir))
		return false;
	json_t *j = manifest(dir, NULL, 0);
	bool pod = j && json_is_object(json_object_get(j, "pod"));
	json_decref(j);
	return pod;
}

/* What of a chip's META must be the same on every chip of one recording. */
static const char *const same_keys[] = {"isa", "breakpoint_address", "objects", "config", "chips"};

int snr_pod_open(const char *dir, struct snr_pod *pod, char *err, size_t errlen)
{
	memset(pod, 0, sizeof(*pod));
	json_t *j = manifest(dir, err, errlen), *first = NULL;
	int rc = -1;
	if (!j)
		return -1;
	json_t *p = json_object_get(j, "pod"), *wins = json_object_get(j, "windows");
	json_int_t n = json_integer_value(json_object_get(p, "chips"));
	if (!json_is_object(p) || n < 1 || n > 65536 || !json_is_array(wins)) {
		snr_fmt(err, errlen, "%s/%s: not a pod recording (no \"pod\": {\"chips\": N} with a \"windows\" array)", dir,
			SNR_SET_MANIFEST);
		goto out;
	}
	if (!json_is_true(json_object_get(j, "complete"))) {
		const char *end = json_string_value(json_object_get(j, "end"));
		snr_fmt(err, errlen, "%s: the pod recording is not complete (%s): no chip's window can be taken without "
			"the others'", dir, end ? end : "the recorder was killed");
		goto out;
	}
	if (json_array_size(wins) != (size_t)n) {
		snr_fmt(err, errlen, "%s/%s: a pod of %lld chips lists %zu chip files", dir, SNR_SET_MANIFEST, (long long)n,
			json_array_size(wins));
		goto out;
	}
	pod->chips = (unsigned)n;
	pod->chip = snr_xcalloc(pod->chips, sizeof(*pod->chip));
	for (unsigned k = 0; k < pod->chips; k++) {
		json_t *e = json_array_get(wins, k);
		const char *file = json_string_value(json_object_get(e, "file"));
		json_t *chip = json_object_get(e, "chip");
		if (!file || strchr(file, '/') || !json_is_integer(chip) || json_integer_value(chip) != (json_int_t)k) {
			snr_fmt(err, errlen, "%s/%s: entry %u names no file of chip %u (or one outside the set)", dir,
				SNR_SET_MANIFEST, k, k);
			goto out;
		}
		size_t plen = strlen(dir) + strlen(file) + 2;
		char *path = snr_xmalloc(plen);
		snprintf(path, plen, "%s/%s", dir, file);
		pod->chip[k].path = path;
		json_t *fl = json_object_get(e, "flags_at_start");
		if (fl && json_array_size(fl) != 16) {
			snr_fmt(err, errlen, "%s/%s: chip %u's entry has no \"flags_at_start\" of 16 flags", dir,
				SNR_SET_MANIFEST, k);
			goto out;
		}
		pod->chip[k].has_flags = fl != NULL;
		for (unsigned f = 0; fl && f < 16; f++) {
			json_t *v = json_array_get(fl, f);
			if (!json_is_integer(v) || json_integer_value(v) < 0) {
				snr_fmt(err, errlen, "%s/%s: chip %u's flags_at_start[%u] is not a count", dir,
					SNR_SET_MANIFEST, k, f);
				goto out;
			}
			pod->chip[k].flags_at_start[f] = (uint64_t)json_integer_value(v);
		}
		struct stat st;
		if (stat(path, &st)) {
			snr_fmt(err, errlen, "%s: chip %u's trace %s: %s", dir, k, path, strerror(errno));
			goto out;
		}
		char terr[600];
		struct snr_trace *t = snr_trace_open(path, terr, sizeof(terr));
		if (!t) {
			snr_fmt(err, errlen, "chip %u: %s", k, terr);
			goto out;
		}
		json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL), *end = NULL;
		const char *ej = snr_trace_end_json(t);
		if (ej)
			end = json_loads(ej, 0, NULL);
		pod->chip[k].instructions = snr_trace_instructions(t);
		snprintf(pod->chip[k].end, sizeof(pod->chip[k].end), "%s",
			 end && json_string_value(json_object_get(end, "reason")) ? json_string_value(json_object_get(end, "reason"))
										: "truncated");
		pod->chip[k].breakpoint = (uint64_t)json_integer_value(json_object_get(meta, "breakpoint_address"));
		bool truncated = snr_trace_truncated(t);
		snr_trace_close(t);
		json_decref(end);
		int bad = 0;
		if (truncated) {
			snr_fmt(err, errlen, "chip %u: %s is truncated", k, path);
			bad = 1;
		} else if (json_integer_value(json_object_get(meta, "chip")) != (json_int_t)k ||
			   json_integer_value(json_object_get(meta, "chips")) != n) {
			snr_fmt(err, errlen, "%s: the pod's chip %u is chip %lld of %lld chips: not a trace of this pod",
				path, k, (long long)json_integer_value(json_object_get(meta, "chip")),
				(long long)json_integer_value(json_object_get(meta, "chips")));
			bad = 1;
		}
		for (size_t q = 0; !bad && first && q < sizeof(same_keys) / sizeof(same_keys[0]); q++)
			if (!json_equal(json_object_get(meta, same_keys[q]), json_object_get(first, same_keys[q]))) {
				snr_fmt(err, errlen,
					"%s: chip %u was recorded from another program or machine than chip 0 (%s differs "
					"from %s's): not one pod's recording",
					path, k, same_keys[q], pod->chip[0].path);
				bad = 1;
			}
		if (!bad && json_is_integer(json_object_get(e, "instructions")) &&
		    json_integer_value(json_object_get(e, "instructions")) != (json_int_t)pod->chip[k].instructions) {
			snr_fmt(err, errlen,
				"%s: chip %u's window holds %llu instructions where %s/%s lists %lld: not this pod's "
				"window (a file of another recording?)",
				path, k, (unsigned long long)pod->chip[k].instructions, dir, SNR_SET_MANIFEST,
				(long long)json_integer_value(json_object_get(e, "instructions")));
			bad = 1;
		}
		if (!first)
			first = meta;
		else
			json_decref(meta);
		if (bad)
			goto out;
	}
	rc = 0;
out:
	json_decref(first);
	json_decref(j);
	if (rc)
		snr_pod_free(pod);
	return rc;
}

void snr_pod_free(struct snr_pod *pod)
{
	for (unsigned k = 0; pod->chip && k < pod->chips; k++)
		free(pod->chip[k].path);
	free(pod->chip);
	memset(pod, 0, sizeof(*pod));
}
