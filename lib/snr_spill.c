/*
 * snr_spill.c: record arrays that spill to an unlinked temporary file
 * (snr_spill.h). The analyses keep per instruction or per event only what
 * they read back later (a pc, a busy interval, a VMEM access); with these
 * arrays that state is a fixed memory budget plus the file, so the
 * process's peak memory stays nearly flat from 1M to 10M instructions.
 * Writes go out in blocks of the budget; reading back goes through 64
 * cached blocks of 4 KiB, 4-way set associative, least recently used out
 * (sequential reads cost one pread per block, a lookup by index at most
 * one).
 */
#include "lib/snr_spill.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "lib/snr_util.h"

#define READ_BLOCK 4096
#define SPILL_SETS (SNR_SPILL_SLOTS / SNR_SPILL_WAYS)
#define RUN_BUF (64u << 10)

int snr_tmpfile_fd(const char *what, char *err, size_t errlen)
{
	const char *dir = getenv("TMPDIR");
	if (!dir || !*dir)
		dir = "/tmp";
	char path[4096];
	snprintf(path, sizeof(path), "%s/snr-%s-XXXXXX", dir, what);
	for (char *p = path + strlen(dir) + 1; *p; p++)
		if (*p == ' ' || *p == '/')
			*p = '-';
	int fd = mkstemp(path);
	if (fd < 0) {
		snr_fmt(err, errlen,
			"cannot create the %s's temporary file in %s: %s (set TMPDIR to a writable folder)",
			what, dir, strerror(errno));
		return -1;
	}
	unlink(path);
	return fd;
}

/* SNR_SPILL_MEM=BYTES replaces every budget (tests use a small one to take
 * the file's path on small windows) */
static size_t budget(size_t mem_bytes)
{
	const char *env = getenv("SNR_SPILL_MEM");
	uint64_t v;
	if (env && *env && snr_parse_u64(env, &v, false) && v)
		return (size_t)v;
	return mem_bytes;
}

void snr_spill_init(struct snr_spill *s, size_t rec, size_t mem_bytes, const char *what)
{
	mem_bytes = budget(mem_bytes);
	memset(s, 0, sizeof(*s));
	s->rec = rec;
	s->tail_cap = mem_bytes / rec;
	if (s->tail_cap < 4 * SNR_SPILL_KEEP)
		s->tail_cap = 4 * SNR_SPILL_KEEP;
	s->cache_cap = READ_BLOCK / rec ? READ_BLOCK / rec : 1;
	s->fd = -1;
	s->what = what;
}

void snr_spill_free(struct snr_spill *s)
{
	if (s->fd >= 0)
		close(s->fd);
	free(s->tail);
	free(s->cache);
	free(s->cache_block);
	free(s->cache_len);
	free(s->cache_used);
	memset(s, 0, sizeof(*s));
	s->fd = -1;
}

static void io_error(struct snr_spill *s, const char *verb)
{
	if (!s->err[0])
		snr_fmt(s->err, sizeof(s->err), "cannot %s the %s's temporary file: %s", verb, s->what,
			errno ? strerror(errno) : "short transfer");
}

static void write_at(struct snr_spill *s, uint64_t first, const unsigned char *p, size_t nrec)
{
	if (s->err[0] || !nrec)
		return;
	if (s->fd < 0) {
		s->fd = snr_tmpfile_fd(s->what, s->err, sizeof(s->err));
		if (s->fd < 0)
			return;
	}
	size_t len = nrec * s->rec;
	off_t off = (off_t)(first * s->rec);
	while (len) {
		errno = 0;
		ssize_t w = pwrite(s->fd, p, len, off);
		if (w <= 0) {
			io_error(s, "write");
			return;
		}
		p += w;
		len -= (size_t)w;
		off += w;
	}
}

static bool read_at(struct snr_spill *s, uint64_t first, unsigned char *p, size_t nrec)
{
	size_t len = nrec * s->rec;
	off_t off = (off_t)(first * s->rec);
	if (s->err[0] || s->fd < 0) {
		memset(p, 0, len);
		return false;
	}
	while (len) {
		errno = 0;
		ssize_t r = pread(s->fd, p, len, off);
		if (r <= 0) {
			io_error(s, "read");
			memset(p, 0, len);
			return false;
		}
		p += r;
		len -= (size_t)r;
		off += r;
	}
	return true;
}

/* Everything but the last `keep` records to the file. */
static void flush_tail(struct snr_spill *s, size_t keep)
{
	size_t in_tail = (size_t)(s->n - s->tail_first);
	if (keep > in_tail)
		keep = in_tail;
	size_t out = in_tail - keep;
	write_at(s, s->tail_first, s->tail, out);
	memmove(s->tail, s->tail + out * s->rec, keep * s->rec);
	s->tail_first += out;
}

void snr_spill_push(struct snr_spill *s, const void *r)
{
	if (!s->tail)
		s->tail = snr_xmalloc(s->tail_cap * s->rec);
	if (s->n - s->tail_first == s->tail_cap)
		flush_tail(s, SNR_SPILL_KEEP);
	memcpy(s->tail + (size_t)(s->n - s->tail_first) * s->rec, r, s->rec);
	s->n++;
}

void snr_spill_push_n(struct snr_spill *s, const void *r, size_t n)
{
	const unsigned char *p = r;
	while (n) {
		size_t room, k;
		void *at = snr_spill_reserve(s, &room);
		k = room < n ? room : n;
		memcpy(at, p, k * s->rec);
		snr_spill_extend(s, k);
		p += k * s->rec;
		n -= k;
	}
}

void *snr_spill_reserve(struct snr_spill *s, size_t *room)
{
	if (!s->tail)
		s->tail = snr_xmalloc(s->tail_cap * s->rec);
	if (s->n - s->tail_first == s->tail_cap)
		flush_tail(s, SNR_SPILL_KEEP);
	size_t at = (size_t)(s->n - s->tail_first);
	*room = s->tail_cap - at;
	return s->tail + at * s->rec;
}

void snr_spill_extend(struct snr_spill *s, size_t k) { s->n += k; }

void snr_spill_get_n(struct snr_spill *s, uint64_t first, size_t n, void *out)
{
	unsigned char *o = out;
	if (first < s->tail_first) { /* the file holds every record below the tail, as written */
		size_t k = s->tail_first - first < n ? (size_t)(s->tail_first - first) : n;
		read_at(s, first, o, k);
		o += k * s->rec;
		first += k;
		n -= k;
	}
	if (n)
		memcpy(o, s->tail + (size_t)(first - s->tail_first) * s->rec, n * s->rec);
}

void snr_spill_set(struct snr_spill *s, uint64_t i, const void *r)
{
	if (i >= s->n) {
		unsigned char zero[256] = {0};
		unsigned char *z = s->rec <= sizeof(zero) ? zero : snr_xcalloc(1, s->rec);
		while (s->n < i)
			snr_spill_push(s, z);
		if (z != zero)
			free(z);
		snr_spill_push(s, r);
		return;
	}
	if (i >= s->tail_first) {
		memcpy(s->tail + (size_t)(i - s->tail_first) * s->rec, r, s->rec);
		return;
	}
	write_at(s, i, r, 1);
	uint64_t blk = i / s->cache_cap;
	size_t set = (size_t)(blk % SPILL_SETS) * SNR_SPILL_WAYS, off = (size_t)(i % s->cache_cap);
	for (size_t slot = set; s->cache && slot < set + SNR_SPILL_WAYS; slot++)
		if (s->cache_block[slot] == blk + 1 && off < s->cache_len[slot])
			memcpy(s->cache + (slot * s->cache_cap + off) * s->rec, r, s->rec);
}

const void *snr_spill_at_slow(struct snr_spill *s, uint64_t i)
{
	if (i >= s->tail_first)
		return s->tail + (size_t)(i - s->tail_first) * s->rec;
	uint64_t blk = i / s->cache_cap;
	size_t set = (size_t)(blk % SPILL_SETS) * SNR_SPILL_WAYS, off = (size_t)(i % s->cache_cap);
	if (!s->cache) {
		s->cache = snr_xmalloc(SNR_SPILL_SLOTS * s->cache_cap * s->rec);
		s->cache_block = snr_xcalloc(SNR_SPILL_SLOTS, sizeof(*s->cache_block));
		s->cache_len = snr_xcalloc(SNR_SPILL_SLOTS, sizeof(*s->cache_len));
		s->cache_used = snr_xcalloc(SNR_SPILL_SLOTS, sizeof(*s->cache_used));
	}
	/* the block's way in its set, else the set's least recently used */
	size_t slot = set;
	for (size_t w = set; w < set + SNR_SPILL_WAYS; w++) {
		if (s->cache_block[w] == blk + 1) {
			slot = w;
			break;
		}
		if (s->cache_used[w] < s->cache_used[slot])
			slot = w;
	}
	s->cache_used[slot] = ++s->cache_clock;
	unsigned char *block = s->cache + slot * s->cache_cap * s->rec;
	if (s->cache_block[slot] != blk + 1 || off >= s->cache_len[slot]) {
		uint64_t first = blk * s->cache_cap, n = s->tail_first - first;
		s->cache_block[slot] = blk + 1;
		s->cache_len[slot] = n < s->cache_cap ? (size_t)n : s->cache_cap;
		read_at(s, first, block, s->cache_len[slot]);
	}
	s->hot = block;
	s->hot_first = blk * s->cache_cap;
	s->hot_n = s->cache_len[slot];
	return block + off * s->rec;
}

void *snr_spill_last(struct snr_spill *s, size_t back)
{
	return s->tail + (size_t)(s->n - 1 - back - s->tail_first) * s->rec;
}

/* ---- sorted runs ---- */

struct snr_sorted_run {
	uint64_t next, end; /* records of the run not yet in buf */
	unsigned char *buf;
	size_t nbuf, pos;
};

void snr_sorted_init(struct snr_sorted *s, size_t rec, int (*cmp)(const void *, const void *),
		     size_t mem_bytes, const char *what)
{
	mem_bytes = budget(mem_bytes);
	memset(s, 0, sizeof(*s));
	s->rec = rec;
	s->cmp = cmp;
	s->cap = mem_bytes / rec ? mem_bytes / rec : 1;
	s->key_off = -1;
	snr_spill_init(&s->runs, rec, RUN_BUF, what);
}

void snr_sorted_init_key(struct snr_sorted *s, size_t rec, int (*cmp)(const void *, const void *), size_t key_off,
			 size_t mem_bytes, const char *what)
{
	snr_sorted_init(s, rec, cmp, mem_bytes, what);
	if (key_off + sizeof(uint64_t) <= rec)
		s->key_off = (long)key_off;
}

void snr_sorted_free(struct snr_sorted *s)
{
	for (size_t k = 0; s->cur && k < s->nruns; k++)
		free(s->cur[k].buf);
	free(s->cur);
	free(s->heap);
	free(s->buf);
	free(s->run_first);
	snr_spill_free(&s->runs);
	memset(s, 0, sizeof(*s));
	s->runs.fd = -1; /* freeing it again closes nothing */
}

/* Sorts n records of rec bytes at a, stably (records that compare equal
 * keep their order: the order glibc's qsort, a merge sort, gave them), with
 * tmp as large as a (a left half may be most of it): runs of 16 by
 * insertion, then merges in
 * place, bottom up, each only over what is out of order (the left half's
 * records after the right half's first, up to the right half's records
 * before the left half's last) through a copy of that part of the left
 * half. Input already in order costs a comparison a record, and two halves
 * already in order one comparison: the events mostly come nearly sorted (on
 * the serving loop a record in 10 to 90 is out of order; annotate's stalls
 * come sorted), where qsort made every record's log2(n) comparisons and
 * copies. */
#define SORT_RUN 16

/* One record: the sizes the analyses sort (16, 24, 32 and 40 bytes) copied
 * inline, not through a call */
static inline void rec_copy(unsigned char *d, const unsigned char *s, size_t rec)
{
	switch (rec) {
	case 16: memcpy(d, s, 16); break;
	case 24: memcpy(d, s, 24); break;
	case 32: memcpy(d, s, 32); break;
	case 40: memcpy(d, s, 40); break;
	default: memcpy(d, s, rec); break;
	}
}

static void sort_stable(unsigned char *a, size_t n, size_t rec, int (*cmp)(const void *, const void *),
			unsigned char *tmp)
{
	size_t i = 1;
	while (i < n && cmp(a + (i - 1) * rec, a + i * rec) <= 0)
		i++;
	if (i >= n)
		return;
	unsigned char x[256];
	for (size_t lo = 0; lo < n; lo += SORT_RUN) {
		size_t hi = lo + SORT_RUN < n ? lo + SORT_RUN : n;
		for (size_t k = lo + 1; k < hi; k++) {
			if (cmp(a + (k - 1) * rec, a + k * rec) <= 0)
				continue;
			rec_copy(x, a + k * rec, rec);
			size_t j = k - 1;
			while (j > lo && cmp(a + (j - 1) * rec, x) > 0)
				j--;
			memmove(a + (j + 1) * rec, a + j * rec, (k - j) * rec);
			rec_copy(a + j * rec, x, rec);
		}
	}
	for (size_t w = SORT_RUN; w < n; w *= 2) {
		for (size_t lo = 0; lo + w < n; lo += 2 * w) {
			size_t mid = lo + w, hi = lo + 2 * w < n ? lo + 2 * w : n;
			const unsigned char *first_right = a + mid * rec, *last_left = a + (mid - 1) * rec;
			if (cmp(last_left, first_right) <= 0)
				continue;
			/* the left records not after the right's first stay: the first
			 * left record greater than it */
			size_t p0 = lo, p1 = mid;
			while (p0 < p1) {
				size_t m = p0 + (p1 - p0) / 2;
				if (cmp(a + m * rec, first_right) <= 0)
					p0 = m + 1;
				else
					p1 = m;
			}
			/* the right records not before the left's last stay: the first
			 * right record not less than it */
			size_t q0 = mid, q1 = hi;
			while (q0 < q1) {
				size_t m = q0 + (q1 - q0) / 2;
				if (cmp(a + m * rec, last_left) < 0)
					q0 = m + 1;
				else
					q1 = m;
			}
			size_t end = q0, nl = mid - p0;
			memcpy(tmp, a + p0 * rec, nl * rec);
			size_t p = 0, q = mid, k = p0;
			while (p < nl && q < end) {
				if (cmp(a + q * rec, tmp + p * rec) < 0)
					rec_copy(a + k++ * rec, a + q++ * rec, rec);
				else
					rec_copy(a + k++ * rec, tmp + p++ * rec, rec);
			}
			memcpy(a + k * rec, tmp + p * rec, (nl - p) * rec);
		}
	}
}

static inline uint64_t rec_key(const unsigned char *r, size_t off)
{
	uint64_t k;
	memcpy(&k, r + off, sizeof(k));
	return k;
}

/* Sorts n records by the uint64_t at off, stably: least significant byte
 * first, one counting pass per byte up to the largest key's highest (a
 * window's cycles take 4 at most below 2^32), between a and tmp. */
static void sort_radix(unsigned char *a, size_t n, size_t rec, size_t off, unsigned char *tmp)
{
	uint64_t max = 0;
	for (size_t i = 0; i < n; i++) {
		uint64_t k = rec_key(a + i * rec, off);
		max = k > max ? k : max;
	}
	unsigned char *src = a, *dst = tmp;
	for (unsigned shift = 0; shift < 64 && (max >> shift); shift += 8) {
		size_t at[256] = {0};
		for (size_t i = 0; i < n; i++)
			at[(rec_key(src + i * rec, off) >> shift) & 255]++;
		size_t sum = 0;
		for (unsigned b = 0; b < 256; b++) {
			size_t c = at[b];
			at[b] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++) {
			const unsigned char *r = src + i * rec;
			rec_copy(dst + at[(rec_key(r, off) >> shift) & 255]++ * rec, r, rec);
		}
		unsigned char *t = src;
		src = dst;
		dst = t;
	}
	if (src != a)
		memcpy(a, src, n * rec);
}

static void sort_buf(struct snr_sorted *s)
{
	if (s->nbuf < 2)
		return;
	if (s->key_off >= 0) {
		unsigned char *tmp = snr_xmalloc(s->nbuf * s->rec);
		sort_radix(s->buf, s->nbuf, s->rec, (size_t)s->key_off, tmp);
		free(tmp);
		return;
	}
	if (s->rec > 256) { /* no room for one in sort_stable's insertion */
		snr_qsort(s->buf, s->nbuf, s->rec, s->cmp);
		return;
	}
	unsigned char *tmp = snr_xmalloc(s->nbuf * s->rec); /* freed after, as qsort's own */
	sort_stable(s->buf, s->nbuf, s->rec, s->cmp, tmp);
	free(tmp);
}

static void write_run(struct snr_sorted *s)
{
	if (!s->nbuf)
		return;
	sort_buf(s);
	s->run_first = snr_xrealloc(s->run_first, (s->nruns + 2) * sizeof(*s->run_first));
	s->run_first[s->nruns++] = s->runs.n;
	for (size_t i = 0; i < s->nbuf; i++)
		snr_spill_push(&s->runs, s->buf + i * s->rec);
	s->run_first[s->nruns] = s->runs.n;
	s->nbuf = 0;
}

void snr_sorted_push(struct snr_sorted *s, const void *r)
{
	if (!s->buf)
		s->buf = snr_xmalloc(s->cap * s->rec);
	if (s->nbuf == s->cap)
		write_run(s);
	memcpy(s->buf + s->nbuf * s->rec, r, s->rec);
	s->nbuf++;
	s->n++;
}

static const unsigned char *run_head(struct snr_sorted *s, size_t k)
{
	struct snr_sorted_run *c = &s->cur[k];
	return c->buf + c->pos * s->rec;
}

/* the run's next record into view; false when it has none */
static bool run_fill(struct snr_sorted *s, size_t k)
{
	struct snr_sorted_run *c = &s->cur[k];
	if (c->pos < c->nbuf)
		return true;
	if (c->next >= c->end)
		return false;
	size_t per = RUN_BUF / s->rec ? RUN_BUF / s->rec : 1;
	uint64_t n = c->end - c->next;
	c->nbuf = n < per ? (size_t)n : per;
	c->pos = 0;
	read_at(&s->runs, c->next, c->buf, c->nbuf);
	c->next += c->nbuf;
	return true;
}

/* heap order: the smaller record, then the earlier run */
static bool heap_less(struct snr_sorted *s, size_t a, size_t b)
{
	int c = s->cmp(run_head(s, a), run_head(s, b));
	return c < 0 || (c == 0 && a < b);
}

static void sift_down(struct snr_sorted *s, size_t i)
{
	for (;;) {
		size_t l = 2 * i + 1, r = l + 1, m = i;
		if (l < s->nheap && heap_less(s, s->heap[l], s->heap[m]))
			m = l;
		if (r < s->nheap && heap_less(s, s->heap[r], s->heap[m]))
			m = r;
		if (m == i)
			return;
		size_t t = s->heap[i];
		s->heap[i] = s->heap[m];
		s->heap[m] = t;
		i = m;
	}
}

void snr_sorted_rewind(struct snr_sorted *s)
{
	if (!s->finished) {
		s->finished = true;
		if (!s->nruns) {
			sort_buf(s);
		} else {
			write_run(s);
			flush_tail(&s->runs, 0);
			free(s->buf);
			s->buf = NULL;
			s->cur = snr_xcalloc(s->nruns, sizeof(*s->cur));
			s->heap = snr_xcalloc(s->nruns, sizeof(*s->heap));
			for (size_t k = 0; k < s->nruns; k++)
				s->cur[k].buf = snr_xmalloc(RUN_BUF + s->rec);
		}
	}
	s->pos = 0;
	if (!s->nruns)
		return;
	s->nheap = 0;
	for (size_t k = 0; k < s->nruns; k++) {
		struct snr_sorted_run *c = &s->cur[k];
		c->next = s->run_first[k];
		c->end = s->run_first[k + 1];
		c->nbuf = c->pos = 0;
		if (run_fill(s, k))
			s->heap[s->nheap++] = k;
	}
	for (size_t i = s->nheap / 2; i-- > 0;)
		sift_down(s, i);
}

const void *snr_sorted_next(struct snr_sorted *s)
{
	if (!s->nruns)
		return s->pos < s->nbuf ? s->buf + s->pos++ * s->rec : NULL;
	if (!s->nheap)
		return NULL;
	size_t k = s->heap[0];
	struct snr_sorted_run *c = &s->cur[k];
	/* the record stays where it is until this run is read again: copy it
	 * past the buffer's end (RUN_BUF + rec bytes) before the refill */
	unsigned char *out = c->buf + RUN_BUF;
	memcpy(out, run_head(s, k), s->rec);
	c->pos++;
	if (!run_fill(s, k))
		s->heap[0] = s->heap[--s->nheap];
	if (s->nheap)
		sift_down(s, 0);
	return out;
}
