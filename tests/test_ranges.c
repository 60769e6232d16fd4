/*
 * test_ranges.c: lib/snr_ranges.c's undo log against copies of the whole
 * set. Random adds (inserts, extensions, merges of many ranges, new keys)
 * with commits and undos at random points: after every undo the set must
 * equal, range for range, a copy taken at the last commit, and go on
 * working (adds after an undo, undo twice). Committing must leave the log
 * empty and an add that changes nothing must not grow it, so that a commit
 * costs what changed since the last one.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_ranges.h"
#include "tests/check.h"

static uint64_t rng = 0x9e3779b97f4a7c15ull;
static uint64_t next(void)
{
	return check_rand(&rng);
}

static int same(const struct snr_ranges *a, const struct snr_ranges *b)
{
	if (a->n != b->n)
		return 0;
	for (size_t i = 0; i < a->n; i++) {
		const struct snr_range_list *x = &a->lists[i], *y = &b->lists[i];
		if (x->key != y->key || x->n != y->n || memcmp(x->r, y->r, x->n * sizeof(*x->r)))
			return 0;
	}
	return 1;
}

static void random_add(struct snr_ranges *s)
{
	uint32_t key = snr_ranges_key((unsigned)(next() % 3), (unsigned)(next() % 2));
	uint64_t lo = next() % 100000, len = next() % 8 == 0 ? next() % 5000 : 1 + next() % 64;
	snr_ranges_add(s, key, lo, lo + len);
}

static void test_random(void)
{
	struct snr_ranges s = {0}, snap = {0};
	snr_ranges_log_commit(&s);
	int undos = 0, mismatches = 0;
	for (int round = 0; round < 3000; round++) {
		int nadd = (int)(next() % 40);
		for (int k = 0; k < nadd; k++)
			random_add(&s);
		if (next() % 3 == 0) {
			snr_ranges_log_undo(&s);
			undos++;
			mismatches += !same(&s, &snap);
			if (next() % 2) { /* a second undo changes nothing */
				snr_ranges_log_undo(&s);
				mismatches += !same(&s, &snap);
			}
		} else {
			snr_ranges_log_commit(&s);
			CHECK(snr_ranges_log_len(&s) == 0, "a commit empties the log");
			snr_ranges_copy(&snap, &s);
		}
	}
	CHECK(undos > 500, "undos exercised: %d", undos);
	CHECK(mismatches == 0, "%d undos did not give back the committed set", mismatches);
	CHECK(snap.log == NULL, "a copy does not carry the log");
	snr_ranges_free(&s);
	snr_ranges_free(&snap);
}

/* The shapes one by one: insert before, between and after; an extension;
 * a merge of many; a new key; and what does not change the set. */
static void test_shapes(void)
{
	struct snr_ranges s = {0}, snap = {0};
	uint32_t k0 = snr_ranges_key(0, 0), k1 = snr_ranges_key(1, 3);
	for (uint64_t a = 100; a < 1000; a += 100)
		snr_ranges_add(&s, k0, a, a + 10);
	snr_ranges_log_commit(&s);
	snr_ranges_copy(&snap, &s);
	snr_ranges_add(&s, k0, 100, 110);
	snr_ranges_add(&s, k0, 102, 108);
	CHECK(snr_ranges_log_len(&s) == 0, "adds inside a range log nothing (%zu)", snr_ranges_log_len(&s));
	snr_ranges_add(&s, k0, 0, 5);
	snr_ranges_add(&s, k0, 150, 160);
	snr_ranges_add(&s, k0, 2000, 2001);
	snr_ranges_add(&s, k0, 110, 120);
	snr_ranges_add(&s, k0, 250, 720); /* merges 300..700's five ranges with 200's */
	snr_ranges_add(&s, k1, 5, 6);
	snr_ranges_add(&s, k1, 6, 9);
	CHECK(s.n == 2 && snr_ranges_get(&s, k0)->n == 8, "the shapes applied (%zu lists, %zu ranges)", s.n,
	      snr_ranges_get(&s, k0)->n);
	CHECK(snr_ranges_log_len(&s) == 7, "one log entry per changing add (%zu)", snr_ranges_log_len(&s));
	snr_ranges_log_undo(&s);
	CHECK(same(&s, &snap), "undo gives back the committed set");
	CHECK(s.n == 1 && !snr_ranges_get(&s, k1), "the new key's list is gone");
	snr_ranges_add(&s, k1, 1, 2);
	CHECK(snr_ranges_find(&s, k1, 1, &(struct snr_range){0}), "adds work after an undo");
	snr_ranges_log_stop(&s);
	snr_ranges_add(&s, k0, 5000, 5001);
	snr_ranges_log_undo(&s);
	CHECK(snr_ranges_find(&s, k0, 5000, &(struct snr_range){0}), "no undo once the log is stopped");
	snr_ranges_free(&s);
	snr_ranges_free(&snap);
}

int main(void)
{
	test_shapes();
	test_random();
	return check_report("test_ranges");
}
