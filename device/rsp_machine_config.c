/*
 * rsp_machine_config.c: the qXfer:snr-config:read object (the comment in
 * rsp_machine_config.h).
 */
#include "rsp_machine_config.h"

#include <jansson.h>
#include <stdlib.h>


char *rsp_machine_config_object(const struct snr_config *cfg, const char *from)
{
	char *text = snr_config_to_json(cfg);
	json_t *c = json_loads(text, 0, NULL);
	free(text);
	json_t *o = json_object();
	json_object_set_new(o, "from", json_string(from && *from ? from : "built-in defaults"));
	json_object_set_new(o, "config", c ? c : json_object());
	char *out = json_dumps(o, JSON_PRESERVE_ORDER);
	json_decref(o);
	return out; /* NULL only out of memory: the session answers E01 */
}
