/*
 * test_spill.c: lib/snr_spill's arrays against plain memory. A record
 * array with a budget of a few records (so nearly everything is in the
 * temporary file) read back in order and by index, overwritten at indices
 * in the file and in memory, extended past its end with a gap, its last
 * records merged in place; a sorted array of many runs read back equal to
 * qsort's order, twice (rewind); one that never spills; records that
 * compare equal back in the order they were pushed (the sort is stable;
 * the radix sort by key too); and the error when
 * the temporary folder cannot be written (sticky, zeroed reads, the folder
 * named).
 */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "lib/snr_spill.h"

struct rec {
	uint64_t key, payload;
	uint32_t tag;
};

static int cmp_rec(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	if (x->key != y->key)
		return x->key < y->key ? -1 : 1;
	return x->payload < y->payload ? -1 : x->payload > y->payload;
}

static uint64_t rng = 88172645463325252ull;
static uint64_t next_rand(void)
{
	return check_rand(&rng);
}

static void test_array(void)
{
	enum { N = 100000 };
	struct snr_spill s;
	snr_spill_init(&s, sizeof(struct rec), 40 * sizeof(struct rec), "test array");
	struct rec *ref = calloc(N + 100, sizeof(*ref));
	for (uint64_t i = 0; i < N; i++) {
		ref[i] = (struct rec){.key = next_rand(), .payload = i, .tag = (uint32_t)i};
		snr_spill_push(&s, &ref[i]);
	}
	CHECK(s.n == N, "n %llu", (unsigned long long)s.n);
	CHECK(s.fd >= 0, "a budget of 40 records did not spill %d records", N);
	/* in memory: the records not yet written, at most the budget */
	CHECK(s.n - s.tail_first <= 40, "%llu records in memory", (unsigned long long)(s.n - s.tail_first));
	/* the last records merge in place */
	struct rec *last = snr_spill_last(&s, 0);
	last->tag = 7;
	ref[N - 1].tag = 7;
	struct rec *third = snr_spill_last(&s, SNR_SPILL_KEEP - 1);
	third->payload = 99;
	ref[N - SNR_SPILL_KEEP].payload = 99;
	/* overwrite in the file and in memory */
	for (int k = 0; k < 1000; k++) {
		uint64_t i = next_rand() % N;
		ref[i].tag = (uint32_t)next_rand();
		snr_spill_set(&s, i, &ref[i]);
	}
	/* set past the end: zero records fill the gap */
	ref[N + 50] = (struct rec){.key = 5, .payload = 6, .tag = 7};
	snr_spill_set(&s, N + 50, &ref[N + 50]);
	CHECK(s.n == N + 51, "n after a set past the end: %llu", (unsigned long long)s.n);
	size_t bad = 0;
	for (uint64_t i = 0; i < s.n; i++)
		bad += memcmp(snr_spill_at(&s, i), &ref[i], sizeof(ref[i])) != 0;
	CHECK(!bad, "%zu records differ read in order", bad);
	bad = 0;
	for (int k = 0; k < 5000; k++) {
		uint64_t i = next_rand() % s.n;
		bad += memcmp(snr_spill_at(&s, i), &ref[i], sizeof(ref[i])) != 0;
	}
	CHECK(!bad, "%zu records differ read by index", bad);
	CHECK(!snr_spill_failed(&s), "error: %s", s.err);
	snr_spill_free(&s);
	free(ref);
}

static void test_sorted(size_t n, size_t budget_recs, bool expect_file)
{
	struct snr_sorted s;
	snr_sorted_init(&s, sizeof(struct rec), cmp_rec, budget_recs * sizeof(struct rec), "test sort");
	struct rec *ref = calloc(n + 1, sizeof(*ref));
	for (size_t i = 0; i < n; i++) {
		ref[i] = (struct rec){.key = next_rand() % 1000, .payload = i, .tag = 3};
		snr_sorted_push(&s, &ref[i]);
	}
	qsort(ref, n, sizeof(*ref), cmp_rec);
	for (int pass = 0; pass < 2; pass++) {
		snr_sorted_rewind(&s);
		size_t k = 0, bad = 0;
		for (const struct rec *r; (r = snr_sorted_next(&s)); k++)
			bad += k >= n || memcmp(r, &ref[k], sizeof(*r)) != 0;
		CHECK(k == n && !bad, "sorted %zu records (budget %zu), pass %d: read %zu, %zu out of place",
		      n, budget_recs, pass, k, bad);
	}
	CHECK((s.nruns > 0) == expect_file, "%zu records, budget %zu: %zu runs", n, budget_recs, s.nruns);
	CHECK(!snr_sorted_failed(&s), "error: %s", snr_sorted_error(&s));
	snr_sorted_free(&s);
	free(ref);
}

static int cmp_key_only(const void *a, const void *b)
{
	const struct rec *x = a, *y = b;
	return x->key < y->key ? -1 : x->key > y->key;
}

/* Records that compare equal (by key alone) come back in the order they
 * were pushed (payload), whatever the input's order (random, nearly sorted,
 * sorted, reversed), in one run or many, by the merge sort or (by_key) the
 * radix sort on the key. */
static void test_stable(size_t n, size_t budget_recs, int shape, bool by_key)
{
	struct snr_sorted s;
	if (by_key)
		snr_sorted_init_key(&s, sizeof(struct rec), cmp_key_only, 0, budget_recs * sizeof(struct rec),
				    "test sort");
	else
		snr_sorted_init(&s, sizeof(struct rec), cmp_key_only, budget_recs * sizeof(struct rec), "test sort");
	struct rec *ref = calloc(n + 1, sizeof(*ref));
	for (size_t i = 0; i < n; i++) {
		uint64_t key = shape == 0   ? next_rand() % 50                                    /* random, many ties */
			       : shape == 1 ? i / 4 + (next_rand() % 64 == 0 ? next_rand() % 300 : 0) /* nearly sorted */
			       : shape == 2 ? i / 3                                                /* sorted */
					    : (n - i) / 3;                                         /* reversed */
		if (by_key && shape == 0)
			key |= (next_rand() % 3) << 40; /* bytes above the low ones */
		ref[i] = (struct rec){.key = key, .payload = i, .tag = 7};
		snr_sorted_push(&s, &ref[i]);
	}
	qsort(ref, n, sizeof(*ref), cmp_rec); /* by key, then push order */
	snr_sorted_rewind(&s);
	size_t k = 0, bad = 0;
	for (const struct rec *r; (r = snr_sorted_next(&s)); k++)
		bad += k >= n || memcmp(r, &ref[k], sizeof(*r)) != 0;
	CHECK(k == n && !bad, "stable sort of %zu records (budget %zu, shape %d, %s): read %zu, %zu out of place", n,
	      budget_recs, shape, by_key ? "radix" : "merge", k, bad);
	snr_sorted_free(&s);
	free(ref);
}

static void test_no_folder(void)
{
	setenv("TMPDIR", "/nonexistent-snr-spill-test", 1);
	struct snr_spill s;
	snr_spill_init(&s, sizeof(struct rec), sizeof(struct rec) * 16, "test array");
	struct rec r = {.key = 1, .payload = 2, .tag = 3};
	for (int i = 0; i < 100; i++)
		snr_spill_push(&s, &r);
	CHECK(snr_spill_failed(&s), "no error without a temporary folder");
	CHECK(strstr(s.err, "/nonexistent-snr-spill-test") && strstr(s.err, "test array"),
	      "the error names neither the folder nor the data: %s", s.err);
	const struct rec *z = snr_spill_at(&s, 0);
	CHECK(z->key == 0 && z->payload == 0, "a record lost to the error reads back as %llu",
	      (unsigned long long)z->key);
	const struct rec *kept = snr_spill_at(&s, 99);
	CHECK(kept->key == 1, "the last record (in memory) reads back as %llu",
	      (unsigned long long)kept->key);
	snr_spill_free(&s);
	struct snr_sorted so;
	snr_sorted_init(&so, sizeof(struct rec), cmp_rec, sizeof(struct rec) * 16, "test sort");
	for (int i = 0; i < 100; i++)
		snr_sorted_push(&so, &r);
	snr_sorted_rewind(&so);
	while (snr_sorted_next(&so))
		;
	CHECK(snr_sorted_failed(&so) && strstr(snr_sorted_error(&so), "/nonexistent-snr-spill-test"),
	      "sorted without a temporary folder: '%s'", snr_sorted_error(&so));
	snr_sorted_free(&so);
	unsetenv("TMPDIR");
}

/* push_n is n pushes, as is reserve and extend; get_n reads what at() reads, across the file and the
 * tail, for runs of every length up to past the budget. */
static void test_bulk(void)
{
	enum { N = 20000 };
	struct snr_spill s;
	snr_spill_init(&s, sizeof(uint64_t), 100 * sizeof(uint64_t), "test bulk");
	uint64_t *ref = calloc(N, sizeof(*ref)), *got = calloc(N, sizeof(*got));
	for (uint64_t i = 0; i < N; i++)
		ref[i] = next_rand();
	for (uint64_t i = 0, k = 1; i < N; i += k, k = k % 300 + 7)
		snr_spill_push_n(&s, ref + i, (size_t)(i + k <= N ? k : N - i));
	CHECK(s.n == N && s.fd >= 0 && s.n - s.tail_first <= 100, "n %llu, in memory %llu", (unsigned long long)s.n,
	      (unsigned long long)(s.n - s.tail_first));
	/* and written in place: reserve, then extend by part of the room */
	struct snr_spill s2;
	snr_spill_init(&s2, sizeof(uint64_t), 100 * sizeof(uint64_t), "test bulk");
	for (uint64_t i = 0, k = 1; i < N; k = k % 300 + 7) {
		size_t room;
		uint64_t *at = snr_spill_reserve(&s2, &room);
		size_t n = (size_t)(k < room ? k : room);
		if (n > N - i)
			n = (size_t)(N - i);
		CHECK(room >= 1, "no room");
		memcpy(at, ref + i, n * sizeof(*at));
		snr_spill_extend(&s2, n);
		i += n;
	}
	size_t bad2 = 0;
	for (uint64_t i = 0; i < N; i++)
		bad2 += *(const uint64_t *)snr_spill_at(&s2, i) != ref[i];
	CHECK(s2.n == N && !bad2, "%zu records written in place differ (n %llu)", bad2, (unsigned long long)s2.n);
	snr_spill_free(&s2);
	size_t bad = 0;
	for (uint64_t i = 0; i < N; i++)
		bad += *(const uint64_t *)snr_spill_at(&s, i) != ref[i];
	CHECK(!bad, "%zu records pushed in bulk differ", bad);
	bad = 0;
	for (int r = 0; r < 2000; r++) {
		uint64_t first = next_rand() % N, n = next_rand() % 400;
		if (first + n > N)
			n = N - first;
		snr_spill_get_n(&s, first, (size_t)n, got);
		bad += memcmp(got, ref + first, (size_t)n * sizeof(*got)) != 0;
	}
	snr_spill_get_n(&s, 0, N, got);
	bad += memcmp(got, ref, N * sizeof(*got)) != 0;
	CHECK(!bad, "%zu bulk reads differ", bad);
	CHECK(!snr_spill_failed(&s), "error: %s", s.err);
	snr_spill_free(&s);
	free(ref);
	free(got);
}

int main(void)
{
	unsetenv("SNR_SPILL_MEM");
	test_array();
	test_bulk();
	test_sorted(200000, 1000, true); /* 200 runs */
	test_sorted(5000, 5000, false);	 /* one run: never written */
	test_sorted(5001, 5000, true);	 /* two runs, the second of one record */
	test_sorted(0, 16, false);
	for (int shape = 0; shape < 4; shape++)
		for (int by_key = 0; by_key < 2; by_key++) {
			test_stable(100000, 200000, shape, by_key); /* one run */
			test_stable(100000, 7000, shape, by_key);   /* 15 runs */
			test_stable(37, 200000, shape, by_key);     /* fewer than an insertion run and a half */
		}
	test_no_folder();
	return check_report("test_spill");
}
