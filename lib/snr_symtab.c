/*
 * snr_symtab.c: see snr_symtab.h.
 */
#include "snr_symtab.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void snr_symtab_encode(struct snr_buf *b, size_t n, const uint64_t *addr, const uint64_t *size,
		       const char *const *name)
{
	snr_buf_varint(b, n);
	uint64_t prev = 0;
	for (size_t i = 0; i < n; i++) {
		size_t nl = strlen(name[i]);
		snr_buf_varint(b, snr_zigzag((int64_t)(addr[i] - prev)));
		snr_buf_varint(b, size[i]);
		snr_buf_varint(b, nl);
		snr_buf_put(b, name[i], nl);
		prev = addr[i];
	}
}

int snr_symtab_decode(struct snr_symtab *t, const uint8_t *p, size_t len)
{
	struct snr_cursor c = {p, p + len, 0};
	memset(t, 0, sizeof(*t));
	uint64_t count = snr_cur_varint(&c), prev = 0;
	if (c.bad || count > len)
		return -1;
	t->addr = snr_xcalloc(count ? count : 1, sizeof(*t->addr));
	t->size = snr_xcalloc(count ? count : 1, sizeof(*t->size));
	t->name = snr_xcalloc(count ? count : 1, sizeof(*t->name));
	for (uint64_t i = 0; i < count; i++) {
		uint64_t addr = prev + (uint64_t)snr_unzigzag(snr_cur_varint(&c));
		uint64_t size = snr_cur_varint(&c), nl = snr_cur_varint(&c);
		const uint8_t *name = nl < 4096 ? snr_cur_bytes(&c, nl) : NULL;
		if (c.bad || !name || (i && addr < prev))
			return -1;
		t->addr[t->n] = addr;
		t->size[t->n] = size;
		/* control bytes (a name is the program's to choose) as \xHH */
		t->name[t->n] = snr_xmalloc(nl * 4 + 1);
		snr_escape_controls(name, nl, t->name[t->n]);
		t->n++;
		prev = addr;
	}
	return c.p == c.end ? 0 : -1;
}

void snr_symtab_free(struct snr_symtab *t)
{
	for (size_t i = 0; i < t->n; i++)
		free(t->name[i]);
	free(t->addr);
	free(t->size);
	free(t->name);
	memset(t, 0, sizeof(*t));
}

const char *snr_symtab_symbolize(const struct snr_symtab *t, uint64_t addr, char *buf, size_t len)
{
	size_t lo = 0, hi = t->n;
	while (lo < hi) { /* first symbol above addr */
		size_t mid = (lo + hi) / 2;
		if (t->addr[mid] <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo > 0) {
		size_t i = lo - 1;
		if (!t->size[i] || addr < t->addr[i] + t->size[i]) {
			if (addr == t->addr[i])
				snprintf(buf, len, "%s", t->name[i]);
			else
				snprintf(buf, len, "%s+0x%llx", t->name[i], (unsigned long long)(addr - t->addr[i]));
			return buf;
		}
	}
	snprintf(buf, len, "0x%llx", (unsigned long long)addr);
	return buf;
}
