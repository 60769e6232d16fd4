/*
 * pod_reorder.c: see pod_reorder.h.
 */
#include "replayer/pod_reorder.h"

#include <stdlib.h>
#include <string.h>

#include "device/ta1_machine.h"
#include "isa/ta1/ta1_isa.h"
#include "lib/snr_util.h"

int pod_reorder_init(struct pod_reorder *r, const uint64_t *order, const uint8_t *moved, uint64_t n,
		     const struct snr_window *w, char *err, size_t errlen)
{
	memset(r, 0, sizeof(*r));
	if (n != w->n || !n) {
		snr_fmt(err, errlen, "the what-if's order has %llu instructions, the window %llu", (unsigned long long)n,
			(unsigned long long)w->n);
		return -1;
	}
	if (w->npost) {
		snr_fmt(err, errlen,
			"its window holds steps the recorder applied as a unit (calls run whole, memory it could not "
			"read); a what-if does not reorder such a window");
		return -1;
	}
	uint8_t *seen = snr_xcalloc(n, 1);
	int rc = 0;
	for (uint64_t k = 0; k < n && !rc; k++)
		if (order[k] >= n || seen[order[k]]++) {
			snr_fmt(err, errlen, "the what-if's order names instruction %llu %s", (unsigned long long)order[k],
				order[k] >= n ? "past the window" : "twice");
			rc = -1;
		}
	free(seen);
	if (!rc && order[n - 1] != n - 1) {
		snr_fmt(err, errlen, "the what-if's order does not end with the window's last instruction");
		rc = -1;
	}
	r->order = order;
	r->moved = moved;
	r->n = n;
	return rc;
}

void pod_reorder_free(struct pod_reorder *r)
{
	free(r->pend);
	memset(r, 0, sizeof(*r));
}

bool pod_reorder_before(struct pod_reorder *r, struct ta1_chip *chip, const struct snr_window *w, uint64_t at,
			uint64_t *went_on)
{
	uint64_t q = r->order[at];
	if (at && q != r->order[at - 1] + 1 && r->jumped != at + 1) { /* jumped: a WAIT that parked after it */
		uint64_t prev = r->order[at - 1];
		if (prev + 1 < w->n && ta1_chip_get_reg(chip, TA1_REG_PC) != snr_window_pc(w, prev + 1)) {
			*went_on = snr_window_pc(w, prev + 1);
			return true;
		}
		ta1_chip_set_reg(chip, TA1_REG_PC, snr_window_pc(w, q));
		r->jumped = at + 1;
	}
	if (!r->moved[at] && r->npend) {
		size_t k = 0;
		for (size_t i = 0; i < r->npend; i++) {
			if (r->pend[i].index < q)
				ta1_chip_set_reg(chip, r->pend[i].reg, r->pend[i].value);
			else
				r->pend[k++] = r->pend[i];
		}
		r->npend = k;
	}
	return false;
}

void pod_reorder_enter(struct pod_reorder *r, struct ta1_chip *chip, uint64_t at, uint64_t save[32])
{
	bool first = !at || !r->moved[at - 1];
	for (unsigned reg = 1; reg < 32; reg++) {
		save[reg] = ta1_chip_get_reg(chip, reg);
		if (first)
			r->shadow[reg] = save[reg];
		else
			ta1_chip_set_reg(chip, reg, r->shadow[reg]);
	}
}

void pod_reorder_leave(struct pod_reorder *r, struct ta1_chip *chip, uint64_t q, const uint64_t save[32])
{
	for (unsigned reg = 1; reg < 32; reg++) {
		uint64_t v = ta1_chip_get_reg(chip, reg);
		if (v != r->shadow[reg]) {
			if (r->npend == r->cap_pend) {
				r->cap_pend = r->cap_pend ? 2 * r->cap_pend : 32;
				r->pend = snr_xrealloc(r->pend, r->cap_pend * sizeof(*r->pend));
			}
			r->pend[r->npend++] = (struct pod_reorder_pending){q, reg, v};
			r->shadow[reg] = v;
		}
		ta1_chip_set_reg(chip, reg, save[reg]);
	}
}
