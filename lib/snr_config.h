/*
 * snr_config.h: the TA1 machine configuration, one description shared by the
 * device (functional runs) and the simulator (timing). docs/machine-config.md
 * lists every key with its default; snr_config_fields below is that list.
 */
#ifndef SNR_CONFIG_H
#define SNR_CONFIG_H

#include <stddef.h>
#include <stdint.h>

struct snr_config {
	uint64_t clock_hz;
	uint64_t chips;
	uint64_t core_memory_bytes;
	uint64_t vmem_bytes;
	uint64_t vmem_page_bytes;
	uint64_t hbm_bytes;
	/* DMA engine */
	uint64_t dma_base_latency_cycles;
	uint64_t dma_hbm_bytes_per_cycle;
	uint64_t dma_ici_bytes_per_cycle;
	uint64_t dma_vmem_bytes_per_cycle;
	uint64_t dma_core_bytes_per_cycle;
	/* inter-chip links (sim/ta1_fabric.c): enum snr_topology, the torus's X
	 * extent (0: the most square), the cycles each hop adds */
	uint64_t ici_topology;
	uint64_t ici_torus_x;
	uint64_t ici_hop_latency_cycles;
	/* vector unit */
	uint64_t vector_f32_per_cycle;
	uint64_t vector_latency_cycles;
	/* matrix unit */
	uint64_t mxu_fill_cycles;
	uint64_t mxu_rows_per_cycle;
	uint64_t mxu_weight_load_cycles;
	/* scalar core latencies */
	uint64_t scalar_alu_cycles;
	uint64_t scalar_mul_cycles;
	uint64_t scalar_div_cycles;
	uint64_t scalar_load_cycles;
	uint64_t scalar_store_cycles;
	uint64_t scalar_branch_taken_cycles;
};

enum snr_topology {
	SNR_TOPOLOGY_ALL_TO_ALL, /* a link from every chip to every other */
	SNR_TOPOLOGY_RING,       /* chip i to i+1 and i-1 (mod chips) */
	SNR_TOPOLOGY_TORUS,      /* 2-D torus of X x (chips / X), wrap-around links */
};

struct snr_config_field {
	const char *key;  /* dotted JSON path, e.g. "dma.base_latency_cycles" */
	size_t offset;
	uint64_t min, max;
	const char *doc;
	/* A key whose value is one of these names (stored as its index, min and
	 * max bounding it), or NULL: a whole number. */
	const char *const *names;
};

extern const char *const snr_topology_names[]; /* by enum snr_topology, NULL-terminated */

extern const struct snr_config_field snr_config_fields[];
extern const size_t snr_config_nfields;

void snr_config_default(struct snr_config *cfg);

/* The one validator of machine configs, for every command that reads one
 * (device, record, profile, replay, the analyses, report) and for the config
 * a trace or metrics file carries. A config is JSON text and the name of
 * where it came from (the user's file, or "T.snrt (recorded machine
 * config)"). Checked: JSON syntax, duplicate keys (everywhere, at any depth),
 * that it is an object, every key known, objects only where a section of
 * keys is ("dma", "vmem", ...; "cache" is the cache model's, sim/snr_cache.h),
 * every value a whole number within its field's range, vmem.bytes a
 * multiple of vmem.page_bytes. Every error starts "SOURCE:LINE:COL: " (the
 * value's position) or "SOURCE: " when no position applies. */
struct snr_config_text {
	const char *text;
	size_t len;
	const char *source;
};

/* Validates t and fills cfg: the defaults, overridden by the keys t gives.
 * 0, or -1 with err filled. */
int snr_config_check(struct snr_config *cfg, const struct snr_config_text *t, char *err, size_t errlen);

/* Reads a config file the user named (a regular file: a FIFO or directory
 * is refused, never waited on); source is path. "PATH: No such file or
 * directory" when missing. 0, or -1 with err filled. */
int snr_config_read(struct snr_config_text *t, const char *path, char *err, size_t errlen);
void snr_config_text_free(struct snr_config_text *t);

/* snr_config_read + snr_config_check. */
int snr_config_load(struct snr_config *cfg, const char *path, char *errbuf, size_t errlen);

/* snr_config_check of a NUL-terminated text. */
int snr_config_parse(struct snr_config *cfg, const char *json, const char *source, char *err, size_t errlen);

/* Writes the config as JSON (all keys), for --dump-config and trace headers. */
char *snr_config_to_json(const struct snr_config *cfg);

#endif
