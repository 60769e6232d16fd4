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

#include "snr_util.h"

#define F(key, field, min, max, doc) {key, offsetof(struct snr_config, field), min, max, doc}
#define GiB (1ull << 30)
#define MiB (1ull << 20)

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

/* Walks an object, building dotted paths; leaves must be known integer keys. */
static int load_object(struct snr_config *cfg, json_t *obj, const char *prefix, const char *path,
		       char *err, size_t errlen)
{
	const char *k;
	json_t *v;
	json_object_foreach(obj, k, v) {
		char key[128];
		snprintf(key, sizeof(key), "%s%s%s", prefix, *prefix ? "." : "", k);
		if (json_is_object(v)) {
			if (load_object(cfg, v, key, path, err, errlen))
				return -1;
			continue;
		}
		const struct snr_config_field *f = find_field(key);
		if (!f) {
			snr_fmt(err, errlen, "%s: unknown key \"%s\" (see docs/machine-config.md)", path, key);
			return -1;
		}
		double d;
		if (json_is_integer(v)) {
			json_int_t iv = json_integer_value(v);
			if (iv < 0) {
				snr_fmt(err, errlen, "%s: \"%s\" must not be negative", path, key);
				return -1;
			}
			d = (double)iv;
		} else if (json_is_real(v) && json_real_value(v) == (double)(uint64_t)json_real_value(v)) {
			d = json_real_value(v);
		} else {
			snr_fmt(err, errlen, "%s: \"%s\" must be a whole number", path, key);
			return -1;
		}
		if (d < (double)f->min || d > (double)f->max) {
			snr_fmt(err, errlen, "%s: \"%s\" = %.0f is outside [%llu, %llu]", path, key, d,
				(unsigned long long)f->min, (unsigned long long)f->max);
			return -1;
		}
		*(uint64_t *)((char *)cfg + f->offset) = (uint64_t)d;
	}
	return 0;
}

static int load_root(struct snr_config *cfg, json_t *root, const char *path, char *err, size_t errlen);

int snr_config_load(struct snr_config *cfg, const char *path, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_load_file(path, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snr_fmt(err, errlen, "%s:%d:%d: %s", path, je.line, je.column, je.text);
		return -1;
	}
	return load_root(cfg, root, path, err, errlen);
}

int snr_config_parse(struct snr_config *cfg, const char *json, const char *source, char *err, size_t errlen)
{
	json_error_t je;
	json_t *root = json_loads(json, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snr_fmt(err, errlen, "%s:%d:%d: %s", source, je.line, je.column, je.text);
		return -1;
	}
	return load_root(cfg, root, source, err, errlen);
}

static int load_root(struct snr_config *cfg, json_t *root, const char *path, char *err, size_t errlen)
{
	if (!json_is_object(root)) {
		snr_fmt(err, errlen, "%s: the machine config must be a JSON object", path);
		json_decref(root);
		return -1;
	}
	int rc = load_object(cfg, root, "", path, err, errlen);
	json_decref(root);
	if (rc == 0 && cfg->vmem_bytes % cfg->vmem_page_bytes) {
		snr_fmt(err, errlen, "%s: vmem.bytes must be a multiple of vmem.page_bytes", path);
		return -1;
	}
	return rc;
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
		json_object_set_new(obj, part, json_integer((json_int_t)v));
	}
	char *s = json_dumps(root, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	json_decref(root);
	return s;
}
