/*
 * snr_cache.h: a two-level set-associative cache model (LRU, write-allocate)
 * on a simulator's memory events. The unicorn engine charges its latencies
 * to instructions; the replayer runs one on any simulator's memory events for
 * `snr replay --cache-report` (misses by instruction).
 *
 * Config: the machine config's "cache" object (docs/unicorn-sim.md):
 *   {"cache": {"l1": {"size": 32768, "line": 64, "assoc": 8, "latency": 4},
 *              "l2": {"size": 1048576, "line": 64, "assoc": 16, "latency": 14},
 *              "memory_latency": 200}}
 * An access costs the latency of the level that served it; every line an
 * access touches is one lookup.
 */
#ifndef SNR_CACHE_H
#define SNR_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

struct snr_cache_level_cfg {
	uint64_t size, line, assoc, latency;
};

struct snr_cache_cfg {
	struct snr_cache_level_cfg l1, l2;
	uint64_t memory_latency;
};

enum snr_cache_served { SNR_CACHE_L1, SNR_CACHE_L2, SNR_CACHE_MEMORY };

struct snr_cache;

void snr_cache_cfg_default(struct snr_cache_cfg *c);
/* Reads the "cache" object of config_json (absent: the defaults). */
int snr_cache_cfg_parse(struct snr_cache_cfg *c, const char *config_json, char *err, size_t errlen);
struct snr_cache *snr_cache_new(const struct snr_cache_cfg *c);
void snr_cache_free(struct snr_cache *c);
/* One access of bytes at addr: the worst level that served one of its
 * lines, and the cycles it took (the sum over its lines' latencies). */
enum snr_cache_served snr_cache_access(struct snr_cache *c, uint64_t addr, uint64_t bytes, uint64_t *cycles);

#endif
