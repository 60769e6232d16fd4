/*
 * snr_cache.c: see snr_cache.h. Each level is sets x ways of line tags with
 * an LRU stamp per way; a lookup scans the set's ways (associativity is
 * small), a miss evicts the oldest way. L2 is looked up only on an L1 miss
 * and both levels allocate the line (inclusive enough for a report).
 */
#include "sim/snr_cache.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_util.h"

struct level {
	uint64_t line_shift, sets, assoc, latency;
	uint64_t *tag;   /* sets * assoc; tag + 1 so that 0 is empty */
	uint64_t *stamp; /* last use */
};

struct snr_cache {
	struct level l1, l2;
	uint64_t memory_latency, clock, line;
};

void snr_cache_cfg_default(struct snr_cache_cfg *c)
{
	c->l1 = (struct snr_cache_level_cfg){32768, 64, 8, 4};
	c->l2 = (struct snr_cache_level_cfg){1048576, 64, 16, 14};
	c->memory_latency = 200;
}

static bool pow2(uint64_t v) { return v && !(v & (v - 1)); }

static int level_parse(struct snr_cache_level_cfg *l, json_t *o, const char *name, char *err, size_t errlen)
{
	if (!o)
		return 0;
	if (!json_is_object(o)) {
		snr_fmt(err, errlen, "cache.%s: an object with size, line, assoc, latency", name);
		return -1;
	}
	const char *k;
	json_t *v;
	json_object_foreach(o, k, v)
	{
		uint64_t *dst = !strcmp(k, "size")	  ? &l->size
				: !strcmp(k, "line")	  ? &l->line
				: !strcmp(k, "assoc")	  ? &l->assoc
				: !strcmp(k, "latency") ? &l->latency
							  : NULL;
		/* bounds keep the model's tables (16 bytes a line) within 256 MiB:
		 * 256 MiB of 16-byte lines at most */
		json_int_t max = dst == &l->size ? 1ll << 28 : dst == &l->line ? 4096 : dst == &l->assoc ? 64 : 1 << 20;
		if (!dst || !json_is_integer(v) || json_integer_value(v) < 0 || json_integer_value(v) > max) {
			if (dst)
				snr_fmt(err, errlen, "cache.%s.%s: an integer in [0, %lld]", name, k, (long long)max);
			else
				snr_fmt(err, errlen, "cache.%s.%s: unknown key (size, line, assoc, latency)", name, k);
			return -1;
		}
		*dst = (uint64_t)json_integer_value(v);
	}
	if (!pow2(l->line) || l->line < 16 || !l->assoc || l->size % (l->line * l->assoc) ||
	    !pow2(l->size / (l->line * l->assoc))) {
		snr_fmt(err, errlen,
			"cache.%s: line (%llu) must be a power of two of at least 16 and size (%llu) a power-of-two number of "
			"sets of assoc (%llu) lines",
			name, (unsigned long long)l->line, (unsigned long long)l->size, (unsigned long long)l->assoc);
		return -1;
	}
	return 0;
}

int snr_cache_cfg_parse(struct snr_cache_cfg *c, const char *config_json, char *err, size_t errlen)
{
	snr_cache_cfg_default(c);
	if (!config_json)
		return 0;
	json_error_t je;
	json_t *root = json_loads(config_json, JSON_REJECT_DUPLICATES, &je);
	if (!root) {
		snr_fmt(err, errlen, "machine config: %s", je.text);
		return -1;
	}
	int rc = 0;
	json_t *cache = json_object_get(root, "cache");
	if (cache && !json_is_object(cache)) {
		snr_fmt(err, errlen, "cache: an object with l1, l2, memory_latency");
		rc = -1;
	} else if (cache) {
		const char *k;
		json_t *v;
		json_object_foreach(cache, k, v)
		{
			if (strcmp(k, "l1") && strcmp(k, "l2") && strcmp(k, "memory_latency")) {
				snr_fmt(err, errlen, "cache.%s: unknown key (l1, l2, memory_latency)", k);
				json_decref(root);
				return -1;
			}
		}
		json_t *ml = json_object_get(cache, "memory_latency");
		rc = level_parse(&c->l1, json_object_get(cache, "l1"), "l1", err, errlen);
		if (!rc)
			rc = level_parse(&c->l2, json_object_get(cache, "l2"), "l2", err, errlen);
		if (!rc && ml) {
			if (!json_is_integer(ml) || json_integer_value(ml) < 0 || json_integer_value(ml) > 1 << 20) {
				snr_fmt(err, errlen, "cache.memory_latency: an integer in [0, 1048576]");
				rc = -1;
			} else {
				c->memory_latency = (uint64_t)json_integer_value(ml);
			}
		}
		if (!rc && c->l1.line != c->l2.line) {
			snr_fmt(err, errlen, "cache: l1.line and l2.line must be equal");
			rc = -1;
		}
	}
	json_decref(root);
	return rc;
}

static void level_init(struct level *l, const struct snr_cache_level_cfg *c)
{
	l->line_shift = (uint64_t)__builtin_ctzll(c->line);
	l->assoc = c->assoc;
	l->sets = c->size / (c->line * c->assoc);
	l->latency = c->latency;
	l->tag = snr_xcalloc(l->sets * l->assoc, sizeof(*l->tag));
	l->stamp = snr_xcalloc(l->sets * l->assoc, sizeof(*l->stamp));
}

struct snr_cache *snr_cache_new(const struct snr_cache_cfg *c)
{
	struct snr_cache *k = snr_xcalloc(1, sizeof(*k));
	level_init(&k->l1, &c->l1);
	level_init(&k->l2, &c->l2);
	k->memory_latency = c->memory_latency;
	k->line = c->l1.line;
	return k;
}

void snr_cache_free(struct snr_cache *c)
{
	if (!c)
		return;
	free(c->l1.tag);
	free(c->l1.stamp);
	free(c->l2.tag);
	free(c->l2.stamp);
	free(c);
}

/* Looks the line up; allocates it on a miss. Returns whether it hit. */
static bool lookup(struct level *l, uint64_t line_addr, uint64_t now)
{
	uint64_t set = line_addr & (l->sets - 1), tag = line_addr + 1;
	uint64_t *t = l->tag + set * l->assoc, *s = l->stamp + set * l->assoc;
	uint64_t victim = 0;
	for (uint64_t w = 0; w < l->assoc; w++) {
		if (t[w] == tag) {
			s[w] = now;
			return true;
		}
		if (s[w] < s[victim])
			victim = w;
	}
	t[victim] = tag;
	s[victim] = now;
	return false;
}

enum snr_cache_served snr_cache_access(struct snr_cache *c, uint64_t addr, uint64_t bytes, uint64_t *cycles)
{
	enum snr_cache_served worst = SNR_CACHE_L1;
	uint64_t sum = 0;
	if (!bytes)
		bytes = 1;
	uint64_t shift = c->l1.line_shift;
	for (uint64_t line = addr >> shift; line <= (addr + bytes - 1) >> shift; line++) {
		c->clock++;
		if (lookup(&c->l1, line, c->clock)) {
			sum += c->l1.latency;
			continue;
		}
		if (lookup(&c->l2, line, c->clock)) {
			sum += c->l2.latency;
			if (worst < SNR_CACHE_L2)
				worst = SNR_CACHE_L2;
			continue;
		}
		sum += c->memory_latency;
		worst = SNR_CACHE_MEMORY;
	}
	if (cycles)
		*cycles = sum;
	return worst;
}
