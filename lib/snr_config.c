/*
 * snr_config.c: machine configuration defaults and the JSON loader (jansson).
 *
 * Defaults follow DESIGN.md: 1 GHz, DMA base latency 500 cycles, HBM 1,200
 * B/cycle, inter-chip link 50 B/cycle, MXU 128x128 with one row per cycle
 * after a 128-cycle fill, vector unit 1,024 f32 per cycle.
 */
#include "snr_config.h"

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "sim/snr_cache.h"
#include "snr_util.h"

#define F(key, field, min, max, doc) {key, offsetof(struct snr_config, field), min, max, doc, NULL}
#define E(key, field, names, doc) {key, offsetof(struct snr_config, field), 0, sizeof(names) / sizeof(names[0]) - 2, doc, names}
#define GiB (1ull << 30)
#define MiB (1ull << 20)

const char *const snr_topology_names[] = {"all-to-all", "ring", "torus", NULL};

const struct snr_config_field snr_config_fields[] = {
	F("clock_hz", clock_hz, 1, 100 * GiB, "core clock, cycles per second"),
	F("chips", chips, 1, 256, "number of chips in the pod (--chips overrides)"),
	F("core_memory_bytes", core_memory_bytes, 64 * 1024, 256 * MiB, "core memory size"),
	F("vmem.bytes", vmem_bytes, 64 * 1024, 256 * MiB, "VMEM size"),
	F("vmem.page_bytes", vmem_page_bytes, 64, MiB, "VMEM page size used by the analyses"),
	F("hbm.bytes", hbm_bytes, MiB, 1024 * GiB, "HBM size per chip (allocated sparsely)"),
	F("dma.base_latency_cycles", dma_base_latency_cycles, 0, 1u << 30, "constant part of every DMA (Tb)"),
	F("dma.hbm_bytes_per_cycle", dma_hbm_bytes_per_cycle, 1, 1u << 20, "HBM bandwidth"),
	F("dma.ici_bytes_per_cycle", dma_ici_bytes_per_cycle, 1, 1u << 20, "inter-chip link bandwidth"),
	F("dma.vmem_bytes_per_cycle", dma_vmem_bytes_per_cycle, 1, 1u << 20, "VMEM port bandwidth for DMA"),
	F("dma.core_bytes_per_cycle", dma_core_bytes_per_cycle, 1, 1u << 20, "core memory bandwidth for DMA"),
	E("ici.topology", ici_topology, snr_topology_names, "how the chips' links connect them"),
	F("ici.torus_x", ici_torus_x, 0, 256, "the torus's X extent (0: the most square)"),
	F("ici.hop_latency_cycles", ici_hop_latency_cycles, 0, 1u << 20, "cycles each inter-chip hop adds"),
	F("vector.f32_per_cycle", vector_f32_per_cycle, 1, 1u << 20, "vector unit throughput"),
	F("vector.latency_cycles", vector_latency_cycles, 0, 1u << 20, "vector pipeline latency"),
	F("mxu.fill_cycles", mxu_fill_cycles, 0, 1u << 20, "MXU pipeline fill before the first row"),
	F("mxu.rows_per_cycle", mxu_rows_per_cycle, 1, 1024, "MXU rows streamed per cycle"),
	F("mxu.weight_load_cycles", mxu_weight_load_cycles, 0, 1u << 20, "cycles to load 128x128 weights"),
	F("scalar.alu_cycles", scalar_alu_cycles, 1, 1024, "integer ALU latency"),
	F("scalar.mul_cycles", scalar_mul_cycles, 1, 1024, "multiply latency"),
	F("scalar.div_cycles", scalar_div_cycles, 1, 1024, "divide latency"),
	F("scalar.load_cycles", scalar_load_cycles, 1, 1024, "core-memory load latency"),
	F("scalar.store_cycles", scalar_store_cycles, 1, 1024, "core-memory store latency"),
	F("scalar.branch_taken_cycles", scalar_branch_taken_cycles, 1, 1024, "taken branch or jump"),
};
const size_t snr_config_nfields = sizeof(snr_config_fields) / sizeof(snr_config_fields[0]);

void snr_config_default(struct snr_config *c)
{
	memset(c, 0, sizeof(*c));
	c->clock_hz = 1000000000ull;
	c->chips = 1;
	c->core_memory_bytes = 16 * MiB;
	c->vmem_bytes = 32 * MiB;
	c->vmem_page_bytes = 1024;
	c->hbm_bytes = 4 * GiB;
	c->dma_base_latency_cycles = 500;
	c->dma_hbm_bytes_per_cycle = 1200;
	c->dma_ici_bytes_per_cycle = 50;
	c->dma_vmem_bytes_per_cycle = 2048;
	c->dma_core_bytes_per_cycle = 64;
	c->vector_f32_per_cycle = 1024;
	c->vector_latency_cycles = 8;
	c->mxu_fill_cycles = 128;
	c->mxu_rows_per_cycle = 1;
	c->mxu_weight_load_cycles = 128;
	c->scalar_alu_cycles = 1;
	c->scalar_mul_cycles = 3;
	c->scalar_div_cycles = 20;
	c->scalar_load_cycles = 2;
	c->scalar_store_cycles = 1;
	c->scalar_branch_taken_cycles = 2;
}

static const struct snr_config_field *find_field(const char *key)
{
	for (size_t i = 0; i < snr_config_nfields; i++)
		if (!strcmp(snr_config_fields[i].key, key))
			return &snr_config_fields[i];
	return NULL;
}

/* A dotted prefix of some field's key ("dma" of "dma.hbm_bytes_per_cycle"):
 * the only keys whose value may be an object. "cache" is the cache model's
 * section (sim/snr_cache.h), checked as a whole by snr_cache_cfg_parse. */
static bool is_section(const char *key)
{
	size_t n = strlen(key);
	for (size_t i = 0; i < snr_config_nfields; i++)
		if (!strncmp(snr_config_fields[i].key, key, n) && snr_config_fields[i].key[n] == '.')
			return true;
	return false;
}

/* jansson keeps no positions in its values, so a value's line and column are
 * found again in the (already parsed, hence valid) text: a scan that follows
 * object keys down the dotted path. pos is 1-based like jansson's. */
struct scan {
	const char *p, *end;
	int line, col;
};

static void scan_adv(struct scan *s)
{
	if (*s->p == '\n') {
		s->line++;
		s->col = 1;
	} else {
		s->col++;
	}
	s->p++;
}

static void scan_ws(struct scan *s)
{
	while (s->p < s->end && strchr(" \t\r\n", *s->p))
		scan_adv(s);
}

/* Skips a string at s->p (on its quote); copies up to cap-1 bytes of its raw
 * text into out (escapes kept: keys with escapes simply never match). */
static void scan_string(struct scan *s, char *out, size_t cap)
{
	size_t n = 0;
	scan_adv(s);
	while (s->p < s->end && *s->p != '"') {
		if (*s->p == '\\' && s->p + 1 < s->end) {
			if (out && n + 1 < cap)
				out[n++] = *s->p;
			scan_adv(s);
		}
		if (out && n + 1 < cap)
			out[n++] = *s->p;
		scan_adv(s);
	}
	if (s->p < s->end)
		scan_adv(s);
	if (out)
		out[n] = 0;
}

static void scan_value(struct scan *s)
{
	scan_ws(s);
	if (s->p >= s->end)
		return;
	if (*s->p == '"') {
		scan_string(s, NULL, 0);
		return;
	}
	if (*s->p == '{' || *s->p == '[') {
		int depth = 0;
		while (s->p < s->end) {
			char c = *s->p;
			if (c == '"') {
				scan_string(s, NULL, 0);
				continue;
			}
			if (c == '{' || c == '[')
				depth++;
			else if (c == '}' || c == ']')
				depth--;
			scan_adv(s);
			if (!depth)
				return;
		}
		return;
	}
	while (s->p < s->end && !strchr(",}] \t\r\n", *s->p))
		scan_adv(s);
}

/* Positions s on the value of dotted key `path` in the object at s->p. */
static bool scan_find(struct scan *s, const char *path)
{
	scan_ws(s);
	if (s->p >= s->end || *s->p != '{')
		return false;
	scan_adv(s);
	const char *dot = strchr(path, '.');
	size_t seg = dot ? (size_t)(dot - path) : strlen(path);
	for (;;) {
		scan_ws(s);
		if (s->p >= s->end || *s->p != '"')
			return false;
		char key[128];
		scan_string(s, key, sizeof(key));
		scan_ws(s);
		if (s->p < s->end && *s->p == ':')
			scan_adv(s);
		scan_ws(s);
		if (strlen(key) == seg && !strncmp(key, path, seg))
			return dot ? scan_find(s, dot + 1) : true;
		scan_value(s);
		scan_ws(s);
		if (s->p >= s->end || *s->p != ',')
			return false;
		scan_adv(s);
	}
}

/* "SOURCE:LINE:COL" of the value of key in text, or "SOURCE" if not found. */
static void where(char *buf, size_t len, const struct snr_config_text *t, const char *key)
{
	struct scan s = {t->text, t->text + t->len, 1, 1};
	if (key && scan_find(&s, key))
		snr_fmt(buf, len, "%s:%d:%d", t->source, s.line, s.col);
	else
		snr_fmt(buf, len, "%s", t->source);
}

/* Walks an object, building dotted paths; leaves must be known integer keys. */
static int load_object(struct snr_config *cfg, json_t *obj, const char *prefix, const struct snr_config_text *t,
		       char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	char at[400];
	json_object_foreach(obj, k, v) {
		char key[128];
		snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (!*prefix && !strcmp(k, "cache")) {
			struct snr_cache_cfg cc;
			char *js = json_dumps(obj, JSON_COMPACT), cerr[300];
			int rc = snr_cache_cfg_parse(&cc, js, cerr, sizeof(cerr));
			free(js);
			if (rc) {
				where(at, sizeof(at), t, key);
				snr_fmt(err, errlen, "%s: %s", at, cerr);
				return -1;
			}
			continue;
		}
		const struct snr_config_field *f = find_field(key);
		if (!f && is_section(key)) {
			if (!json_is_object(v)) {
				where(at, sizeof(at), t, key);
				snr_fmt(err, errlen, "%s: \"%s\" must be an object of %s.* keys", at, key, key);
				return -1;
			}
			if (load_object(cfg, v, key, t, err, errlen))
				return -1;
			continue;
		}
		where(at, sizeof(at), t, key);
		if (!f) {
			snr_fmt(err, errlen, "%s: unknown key \"%s\" (see docs/machine-config.md)", at, key);
			return -1;
		}
		uint64_t u;
		if (f->names) {
			u = UINT64_MAX;
			for (uint64_t n = 0; json_is_string(v) && f->names[n]; n++)
				if (!strcmp(json_string_value(v), f->names[n]))
					u = n;
			if (u == UINT64_MAX) {
				char list[200] = "";
				for (size_t n = 0; f->names[n]; n++)
					snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s\"%s\"", n ? ", " : "",
						 f->names[n]);
				snr_fmt(err, errlen, "%s: \"%s\" must be one of %s", at, key, list);
				return -1;
			}
		} else if (json_is_integer(v) && json_integer_value(v) >= 0) {
			u = (uint64_t)json_integer_value(v);
		} else if (json_is_real(v) && json_real_value(v) >= 0 && json_real_value(v) < 0x1p63 &&
			   json_real_value(v) == (double)(uint64_t)json_real_value(v)) {
			u = (uint64_t)json_real_value(v);
		} else {
			snr_fmt(err, errlen, "%s: \"%s\" must be a whole number in [%llu, %llu]", at, key,
				(unsigned long long)f->min, (unsigned long long)f->max);
			return -1;
		}
		if (u < f->min || u > f->max) {
			snr_fmt(err, errlen, "%s: \"%s\" = %llu is outside [%llu, %llu]", at, key, (unsigned long long)u,
				(unsigned long long)f->min, (unsigned long long)f->max);
			return -1;
		}
		*(uint64_t *)((char *)cfg + f->offset) = u;
	}
	return 0;
}

int snr_config_check(struct snr_config *cfg, const struct snr_config_text *t, char *err, size_t errlen)
{
	snr_config_default(cfg);
	json_error_t je;
	json_t *root = json_loadb(t->text, t->len, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snr_fmt(err, errlen, "%s:%d:%d: %s", t->source, je.line, je.column, je.text);
		return -1;
	}
	int rc = -1;
	if (!json_is_object(root)) {
		snr_fmt(err, errlen, "%s: the machine config must be a JSON object", t->source);
		goto out;
	}
	if (load_object(cfg, root, "", t, err, errlen))
		goto out;
	if (cfg->vmem_bytes % cfg->vmem_page_bytes) {
		char at[400];
		where(at, sizeof(at), t, "vmem.bytes");
		snr_fmt(err, errlen, "%s: vmem.bytes (%llu) must be a multiple of vmem.page_bytes (%llu)", at,
			(unsigned long long)cfg->vmem_bytes, (unsigned long long)cfg->vmem_page_bytes);
		goto out;
	}
	rc = 0;
out:
	json_decref(root);
	return rc;
}

int snr_config_read(struct snr_config_text *t, const char *path, char *err, size_t errlen)
{
	memset(t, 0, sizeof(*t));
	size_t len;
	char *text = snr_read_regular(path, 16u << 20, &len, err, errlen);
	if (!text)
		return -1;
	t->text = text;
	t->len = len;
	t->source = snr_xstrdup(path);
	return 0;
}

void snr_config_text_free(struct snr_config_text *t)
{
	free((char *)t->text);
	free((char *)t->source);
	memset(t, 0, sizeof(*t));
}

int snr_config_load(struct snr_config *cfg, const char *path, char *err, size_t errlen)
{
	struct snr_config_text t;
	if (snr_config_read(&t, path, err, errlen))
		return -1;
	int rc = snr_config_check(cfg, &t, err, errlen);
	snr_config_text_free(&t);
	return rc;
}

int snr_config_parse(struct snr_config *cfg, const char *json, const char *source, char *err, size_t errlen)
{
	struct snr_config_text t = {json, strlen(json), source};
	return snr_config_check(cfg, &t, err, errlen);
}

char *snr_config_to_json(const struct snr_config *cfg)
{
	json_t *root = json_object();
	for (size_t i = 0; i < snr_config_nfields; i++) {
		const struct snr_config_field *f = &snr_config_fields[i];
		uint64_t v = *(const uint64_t *)((const char *)cfg + f->offset);
		char key[128];
		snprintf(key, sizeof(key), "%s", f->key);
		json_t *obj = root;
		char *dot, *part = key;
		while ((dot = strchr(part, '.'))) {
			*dot = 0;
			json_t *sub = json_object_get(obj, part);
			if (!sub) {
				sub = json_object();
				json_object_set_new(obj, part, sub);
			}
			obj = sub;
			part = dot + 1;
		}
		json_object_set_new(obj, part, f->names ? json_string(f->names[v]) : json_integer((json_int_t)v));
	}
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
