/*
 * machine_config.c: which TA1 machine config a recording stores (the
 * comment in machine_config.h).
 */
#include "machine_config.h"

#include <inttypes.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_config.h"
#include "lib/snr_util.h"

int snr_rec_target_config(const struct snr_record_opts *o, struct snr_dbg *d, char **text, char *err, size_t errlen)
{
	*text = NULL;
	if (o->target_config) {
		*text = snr_xstrdup(o->target_config);
		return 0;
	}
	if (o->dbg->abi_version < 8 || !o->dbg->machine_config)
		return 0;
	int k = o->dbg->machine_config(d, text);
	if (k < 0) {
		snr_fmt(err, errlen, "reading the target's machine config: %s", o->dbg->error(d));
		return -1;
	}
	return 0;
}

/* A field's value as the user writes it in a config file. */
static void value_text(const struct snr_config_field *f, const struct snr_config *c, char *out, size_t outlen)
{
	uint64_t v = *(const uint64_t *)((const char *)c + f->offset);
	if (f->names)
		snr_fmt(out, outlen, "\"%s\"", f->names[v]);
	else
		snr_fmt(out, outlen, "%" PRIu64, v);
}

/* The target's object {"from": WHERE, "config": {...}}: its config into
 * cfg, where it came from into from. */
static int target_object(const char *text, struct snr_config *cfg, char *from, size_t fromlen, char *err,
			 size_t errlen)
{
	static const char source[] = "the target's machine config (qXfer:snr-config)";
	json_error_t je;
	json_t *o = json_loads(text, 0, &je);
	json_t *c = o ? json_object_get(o, "config") : NULL;
	json_t *w = o ? json_object_get(o, "from") : NULL;
	if (!json_is_object(c) || !json_is_string(w)) {
		snr_fmt(err, errlen, "%s: %s", source,
			!o ? je.text : "not an object with \"from\" (a string) and \"config\" (an object)");
		json_decref(o);
		return -1;
	}
	snr_fmt(from, fromlen, "%s", json_string_value(w));
	char *ctext = json_dumps(c, JSON_PRESERVE_ORDER);
	json_decref(o);
	struct snr_config_text t = {ctext, ctext ? strlen(ctext) : 0, source};
	int rc = ctext ? snr_config_check(cfg, &t, err, errlen) : -1;
	if (!ctext)
		snr_fmt(err, errlen, "%s: out of memory", source);
	free(ctext);
	return rc;
}

int snr_rec_machine_config(const char *config_path, const char *target_text, char **json, char *said, size_t saidlen,
			   char *err, size_t errlen)
{
	struct snr_config mine, theirs;
	char from[512] = "";
	*json = NULL;
	snr_config_default(&mine);
	if (config_path && snr_config_load(&mine, config_path, err, errlen))
		return -1;
	if (!target_text) {
		*json = snr_config_to_json(&mine);
		if (config_path)
			snr_fmt(said, saidlen, "machine config: --config %s (the recorder's: the target did not tell its own)",
				config_path);
		else
			snr_fmt(said, saidlen,
				"machine config: the built-in defaults (the recorder's: the target did not tell its own)");
		return 0;
	}
	if (target_object(target_text, &theirs, from, sizeof(from), err, errlen))
		return -1;
	if (config_path) {
		for (size_t i = 0; i < snr_config_nfields; i++) {
			const struct snr_config_field *f = &snr_config_fields[i];
			if (!strcmp(f->key, "chips")) /* the pod's size: the target's threads */
				continue;
			if (*(const uint64_t *)((const char *)&mine + f->offset) ==
			    *(const uint64_t *)((const char *)&theirs + f->offset))
				continue;
			char a[64], b[64];
			value_text(f, &mine, a, sizeof(a));
			value_text(f, &theirs, b, sizeof(b));
			snr_fmt(err, errlen,
				"--config %s differs from the target's machine config (its %s): %s is %s in %s, %s on the "
				"target; a replay would time another machine than the one that ran. Record without "
				"--config to store the target's, or start the device with --config %s",
				config_path, from, f->key, a, config_path, b, config_path);
			return -1;
		}
		snr_fmt(said, saidlen, "machine config: --config %s, the same as the target's (its %s)", config_path, from);
	} else {
		snr_fmt(said, saidlen, "machine config: the target's (its %s)", from);
	}
	*json = snr_config_to_json(&theirs);
	return 0;
}
