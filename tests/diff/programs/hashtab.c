/* hashtab.c: a chained hash table with malloc'ed nodes and string keys,
 * grown by rehashing; inserts, lookups, updates and deletes, checked against
 * a shadow array; frees everything at the end. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct node {
	struct node *next;
	uint64_t value;
	char key[];
};

struct table {
	struct node **slot;
	size_t nslots, count;
};

static uint64_t hash_str(const char *s)
{
	uint64_t h = 0xcbf29ce484222325ull;
	while (*s)
		h = (h ^ (unsigned char)*s++) * 0x100000001b3ull;
	return h;
}

static void grow(struct table *t)
{
	size_t n = t->nslots ? t->nslots * 2 : 8;
	struct node **s = calloc(n, sizeof(*s));
	for (size_t i = 0; i < t->nslots; i++)
		for (struct node *e = t->slot[i], *nx; e; e = nx) {
			nx = e->next;
			size_t b = hash_str(e->key) & (n - 1);
			e->next = s[b];
			s[b] = e;
		}
	free(t->slot);
	t->slot = s;
	t->nslots = n;
}

static struct node **find(struct table *t, const char *key)
{
	struct node **pp = &t->slot[hash_str(key) & (t->nslots - 1)];
	while (*pp && strcmp((*pp)->key, key))
		pp = &(*pp)->next;
	return pp;
}

static void put(struct table *t, const char *key, uint64_t v)
{
	if (t->count + 1 > t->nslots * 3 / 4)
		grow(t);
	struct node **pp = find(t, key);
	if (*pp) {
		(*pp)->value = v;
		return;
	}
	size_t len = strlen(key);
	struct node *e = malloc(sizeof(*e) + len + 1);
	memcpy(e->key, key, len + 1);
	e->value = v;
	e->next = NULL;
	*pp = e;
	t->count++;
}

static int del(struct table *t, const char *key)
{
	struct node **pp = find(t, key);
	if (!*pp)
		return 0;
	struct node *e = *pp;
	*pp = e->next;
	free(e);
	t->count--;
	return 1;
}

#define KEYS 1500
static uint64_t shadow[KEYS];
static unsigned char present[KEYS];

int main(void)
{
	struct table t = {0};
	grow(&t);
	char key[32];
	uint32_t r = 1;
	int bad = 0;
	for (int step = 0; step < 3000; step++) {
		r = r * 1664525u + 1013904223u;
		unsigned k = (r >> 8) % KEYS, what = r >> 28;
		snprintf(key, sizeof(key), "key-%u-%x", k, k * 2654435761u);
		if (what < 9) {
			shadow[k] = (uint64_t)r * step;
			present[k] = 1;
			put(&t, key, shadow[k]);
		} else if (what < 12) {
			bad += del(&t, key) != present[k];
			present[k] = 0;
		} else {
			struct node *e = *find(&t, key);
			bad += (e != NULL) != present[k] || (e && e->value != shadow[k]);
		}
	}
	uint64_t sum = 0;
	size_t longest = 0, used = 0;
	for (size_t i = 0; i < t.nslots; i++) {
		size_t len = 0;
		for (struct node *e = t.slot[i]; e; e = e->next, len++)
			sum += e->value ^ hash_str(e->key);
		used += len > 0;
		longest = len > longest ? len : longest;
	}
	size_t expect = 0;
	for (int k = 0; k < KEYS; k++)
		expect += present[k];
	printf("entries %zu (expected %zu), slots %zu, used %zu, longest chain %zu\n", t.count, expect, t.nslots,
	       used, longest);
	printf("sum %016llx disagreements %d\n", (unsigned long long)sum, bad);
	for (size_t i = 0; i < t.nslots; i++)
		for (struct node *e = t.slot[i], *nx; e; e = nx) {
			nx = e->next;
			free(e);
		}
	free(t.slot);
	return bad ? 1 : (int)(t.count % 100);
}
