/*
 * verify.c: `snr record --method sim`'s checkpoints and recovery (see
 * recorder/verify.h and docs/recording.md, "Methods" and "Recovery").
 */
#include "recorder/verify.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_crc.h"
#include "lib/snr_util.h"
#include "recorder/crc_check.h"
#include "recorder/pod_sim.h"
#include "recorder/readable_pages.h"
#include "recorder/record_sim.h"

/* Brings the target to window index `index`, reads its registers and
 * compares them with the simulation's: 0 the same, 1 the target went
 * elsewhere or holds other values (err says where), -1 failure. */
static int verify_at(struct rec *r, uint64_t index, char *err, size_t errlen)
{
	r->blocked = false;
	int arc = snr_ahead_advance(r->ahead, index, err, errlen);
	if (arc == SNR_AHEAD_DIVERGED) {
		const struct snr_dbg_stop *ds = snr_ahead_diverged_stop(r->ahead);
		r->blocked = ds->kind == SNR_DBG_STOP_TRAP && pod_blocked_at_wait(r, ds->pc);
		r->blocked_pc = ds->pc;
		return ds->kind == SNR_DBG_STOP_TRAP || ds->kind == SNR_DBG_STOP_SIGNAL ? 1 : -1;
	}
	if (arc)
		return -1;
	if (read_registers(r, err, errlen))
		return -1;
	snr_ahead_stats(r->ahead)->checkpoints++;
	for (size_t k = 0; k < r->niregs; k++) {
		uint8_t v[256];
		if (!r->regval[k] || r->sim->get_reg(r->simst, (unsigned)k, v, r->iregs[k].size))
			continue;
		if (!strcmp(r->isa->name, "x86-64") && !strcmp(r->iregs[k].name, "eflags")) {
			/* AF, PF and OF: undefined after shifts, rotates, multiplies
			 * and bit scans, where unicorn and the CPU differ (seen: AF
			 * after shr ecx, 3; PF after imul); the checkpoint then hands
			 * the target's value to the simulator */
			v[0] = (uint8_t)((v[0] & ~0x14) | (r->regval[k][0] & 0x14));
			v[1] = (uint8_t)((v[1] & ~0x08) | (r->regval[k][1] & 0x08));
			if (!memcmp(v, r->regval[k], r->iregs[k].size) &&
			    r->sim->set_reg(r->simst, (unsigned)k, r->regval[k], r->iregs[k].size)) {
				snr_fmt(err, errlen, "loading eflags into the simulator: %s", r->sim->error(r->simst));
				return -1;
			}
		}
		if (memcmp(v, r->regval[k], r->iregs[k].size) && !pod_flag_signalled(r, k, v, r->regval[k])) {
			uint64_t sv = 0, tv = 0;
			memcpy(&sv, v, r->iregs[k].size < 8 ? r->iregs[k].size : 8);
			memcpy(&tv, r->regval[k], r->iregs[k].size < 8 ? r->iregs[k].size : 8);
			snr_fmt(err, errlen,
				"the target diverged from the simulation by instruction %llu (pc 0x%llx): register %s is "
				"0x%llx on the target, 0x%llx in the simulation",
				(unsigned long long)index, (unsigned long long)reg_u64(r, (size_t)r->pc_reg), r->iregs[k].name,
				(unsigned long long)tv, (unsigned long long)sv);
			return 1;
		}
	}
	return 0;
}

/* Bytes the window wrote as the target holds them (target) against the
 * simulation's: 0 the same, 1 different (err says where), -1 failure. */
static int compare_written(const uint8_t *mine, uint64_t lo, const uint8_t *target, uint64_t len,
			   uint64_t index, char *err, size_t errlen)
{
	if (!memcmp(mine, target, len))
		return 0;
	uint64_t at = 0;
	while (mine[at] == target[at])
		at++;
	snr_fmt(err, errlen,
		"the target diverged from the simulation by instruction %llu: the byte the window wrote at 0x%llx "
		"is 0x%02x on the target, 0x%02x in the simulation",
		(unsigned long long)index, (unsigned long long)(lo + at), target[at], mine[at]);
	return 1;
}

static int read_back(struct rec *r, uint64_t lo, uint64_t len, uint8_t *out, uint64_t index, const char *what,
		     char *err, size_t errlen);

int verify_written(struct rec *r, uint32_t key, uint64_t lo, uint64_t len, uint8_t *out, uint64_t index,
		   const char *what, char *err, size_t errlen)
{
	if (r->sim->read_mem(r->simst, (uint8_t)(key >> 16), (uint16_t)(key & 0xffff), lo, out, len)) {
		snr_fmt(err, errlen, "reading the simulation's bytes at 0x%llx: %s", (unsigned long long)lo,
			r->sim->error(r->simst));
		return -1;
	}
	if (len && r->dbg->abi_version >= 7 && r->dbg->crc_mem) {
		uint32_t crc;
		r->requests++;
		int c = r->dbg->crc_mem(r->d, lo, (size_t)len, &crc);
		if (c < 0) {
			snr_fmt(err, errlen, "checking %s at 0x%llx (%llu bytes): %s", what, (unsigned long long)lo,
				(unsigned long long)len, r->dbg->error(r->d));
			return -1;
		}
		if (c == 0 && crc == snr_crc32_gdb(0xffffffffu, out, (size_t)len))
			return 0;
		/* different, or the target cannot: the bytes say which and where */
	}
	return read_back(r, lo, len, out, index, what, err, errlen);
}

/* The target's bytes at lo against the simulation's in out (which receives
 * the target's): as verify_written, once the CRCs did not settle it. */
static int read_back(struct rec *r, uint64_t lo, uint64_t len, uint8_t *out, uint64_t index, const char *what,
		     char *err, size_t errlen)
{
	uint8_t *target = snr_xmalloc(len ? len : 1);
	int rc;
	r->requests++;
	if (r->dbg->read_mem(r->d, lo, target, len)) {
		snr_fmt(err, errlen, "reading %s at 0x%llx: %s", what, (unsigned long long)lo, r->dbg->error(r->d));
		rc = -1;
	} else {
		rc = compare_written(out, lo, target, len, index, err, errlen);
		memcpy(out, target, len);
	}
	free(target);
	return rc;
}

static void stride_drop_pre(struct stride *sd)
{
	for (size_t k = 0; k < sd->npre; k++)
		free((void *)sd->pre[k].data);
	free(sd->pre);
	sd->pre = NULL;
	sd->npre = 0;
}

/* A new stride: nothing written in it yet. */
static void stride_clear_wrote(struct stride *sd)
{
	snr_ranges_free(&sd->wrote);
	sd->npieces = 0;
	sd->undo_len = 0;
	sd->undo_lost = false;
}

void stride_free(struct stride *sd)
{
	stride_drop_pre(sd);
	free(sd->emitted);
	free(sd->good_regs);
	snr_ranges_free(&sd->wrote);
	free(sd->pieces);
	free(sd->undo_bytes);
	free(sd->miss);
}

void stride_wrote(struct rec *r, struct stride *sd, uint32_t key, uint64_t lo, uint64_t hi)
{
	if (sd->can_restore && !sd->undo_lost) {
		size_t nmiss = 0;
		snr_ranges_missing(&sd->wrote, key, lo, hi, &sd->miss, &nmiss, &sd->miss_cap);
		for (size_t q = 0; q < nmiss; q++) {
			uint64_t len = sd->miss[q].hi - sd->miss[q].lo;
			if (sd->undo_len + len > sd->undo_cap) {
				sd->undo_cap = 2 * (sd->undo_len + len);
				sd->undo_bytes = snr_xrealloc(sd->undo_bytes, sd->undo_cap);
			}
			if (r->sim->read_mem(r->simst, (uint8_t)(key >> 16), (uint16_t)(key & 0xffff), sd->miss[q].lo,
					     sd->undo_bytes + sd->undo_len, len)) {
				sd->undo_lost = true; /* memory the simulator does not have: read from the target */
				break;
			}
			if (sd->npieces == sd->pieces_cap)
				sd->pieces = snr_xrealloc(sd->pieces, (sd->pieces_cap = sd->pieces_cap ? 2 * sd->pieces_cap : 256) *
									  sizeof(*sd->pieces));
			sd->pieces[sd->npieces++] = (struct stride_piece){key, sd->miss[q].lo, sd->miss[q].hi, sd->undo_len};
			sd->undo_len += len;
		}
	}
	snr_ranges_add(&sd->wrote, key, lo, hi);
}

/* A step whose code bytes went into the trace at pc. */
void stride_emitted(struct stride *sd, uint64_t pc)
{
	if (sd->nemitted == sd->emitted_cap)
		sd->emitted = snr_xrealloc(sd->emitted,
					   (sd->emitted_cap = sd->emitted_cap ? 2 * sd->emitted_cap : 256) * sizeof(*sd->emitted));
	sd->emitted[sd->nemitted++] = pc;
}

/* The target is verified at window index `index`, its registers in
 * regbuf: the recorder's state there becomes the one a mismatch returns to.
 * This runs at every instruction the target runs (system calls, counter
 * reads), so it costs what changed since the last commit, not the size of
 * the window's sets: those keep undo logs, emptied here. */
int stride_commit(struct rec *r, struct stride *sd, uint64_t index, struct snr_ranges *known,
		  struct snr_ranges *written, const uint64_t *reg_known, const struct snr_record_summary *sum,
		  struct snr_trace_writer *w, char *err, size_t errlen)
{
	stride_drop_pre(sd);
	stride_clear_wrote(sd);
	sd->nemitted = 0;
	sd->good = index;
	if (!sd->can_restore)
		return 0;
	if (snr_trace_writer_mark(w, &sd->mark)) {
		snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
		return -1;
	}
	if (!sd->good_regs)
		sd->good_regs = snr_xmalloc(r->regbuf_len);
	memcpy(sd->good_regs, r->regbuf, r->regbuf_len);
	memcpy(sd->reg_known, reg_known, sizeof(sd->reg_known));
	snr_ranges_log_commit(known);
	snr_ranges_log_commit(written);
	sd->sum = *sum;
	pod_flags_commit(r, sd);
	return 0;
}

static int piece_cmp(const void *pa, const void *pb)
{
	const struct stride_piece *a = pa, *b = pb;
	if (a->key != b->key)
		return a->key < b->key ? -1 : 1;
	return a->lo < b->lo ? -1 : a->lo > b->lo;
}

/* The undo pieces' bytes for [lo, hi) into buf: true if they cover it
 * (sorted pieces, which together are `wrote`, so a range of it is whole
 * pieces). */
static bool undo_bytes_for(const struct stride *sd, uint32_t key, uint64_t lo, uint64_t hi, uint8_t *buf)
{
	size_t a = 0, b = sd->npieces;
	while (a < b) { /* the first piece at or after (key, lo) */
		size_t m = a + (b - a) / 2;
		const struct stride_piece *p = &sd->pieces[m];
		if (p->key < key || (p->key == key && p->lo < lo))
			a = m + 1;
		else
			b = m;
	}
	uint64_t at = lo;
	for (; a < sd->npieces && sd->pieces[a].key == key && sd->pieces[a].lo == at && at < hi; a++) {
		memcpy(buf + (at - lo), sd->undo_bytes + sd->pieces[a].at, sd->pieces[a].hi - sd->pieces[a].lo);
		at = sd->pieces[a].hi;
	}
	return at == hi;
}

/* The bytes the simulation wrote since the checkpoint, as the target holds
 * them while it is still there: the simulation's own bytes from before it
 * wrote them where the target's CRC (crc_mem) says they are the target's,
 * else read from the target. */
static int stride_save_pre(struct rec *r, struct stride *sd, char *err, size_t errlen)
{
	stride_drop_pre(sd);
	size_t n = 0;
	for (size_t l = 0; l < sd->wrote.n; l++)
		n += sd->wrote.lists[l].n;
	sd->pre = snr_xcalloc(n ? n : 1, sizeof(*sd->pre));
	bool crc = !sd->undo_lost && r->dbg->abi_version >= 7 && r->dbg->crc_mem;
	if (crc)
		snr_qsort(sd->pieces, sd->npieces, sizeof(*sd->pieces), piece_cmp);
	bool *same = snr_xcalloc(n ? n : 1, sizeof(*same));
	for (size_t l = 0; l < sd->wrote.n; l++)
		for (size_t q = 0; q < sd->wrote.lists[l].n; q++) {
			uint32_t key = sd->wrote.lists[l].key;
			const struct snr_range *g = &sd->wrote.lists[l].r[q];
			uint64_t len = g->hi - g->lo;
			uint8_t *buf = snr_xmalloc(len ? len : 1);
			same[sd->npre] = crc && len && undo_bytes_for(sd, key, g->lo, g->hi, buf);
			sd->pre[sd->npre++] = (struct snr_trace_mem){(uint8_t)(key >> 16), (uint16_t)(key & 0xffff), g->lo,
								     len, buf};
		}
	/* the ranges whose bytes the undo log holds: the target's CRCs, in one
	 * round trip where the target takes them so (recorder/crc_check.c) */
	if (crc && crc_check(r, sd->pre, sd->npre, same, "the bytes before the target runs to them", err, errlen)) {
		free(same);
		return -1;
	}
	for (size_t k = 0; k < sd->npre; k++) {
		if (same[k])
			continue;
		r->requests++;
		if (r->dbg->read_mem(r->d, sd->pre[k].addr, (uint8_t *)sd->pre[k].data, sd->pre[k].len)) {
			snr_fmt(err, errlen, "reading the bytes at 0x%llx before the target runs to them: %s",
				(unsigned long long)sd->pre[k].addr, r->dbg->error(r->d));
			free(same);
			return -1;
		}
	}
	free(same);
	return 0;
}

/* The stride's written bytes on the target against the simulation's: as
 * verify_written, the CRCs of all the ranges asked in one round trip where
 * the target takes them so (recorder/crc_check.c). */
static int stride_compare(struct rec *r, struct stride *sd, uint64_t index, char *err, size_t errlen)
{
	struct snr_trace_mem *now = snr_xcalloc(sd->npre ? sd->npre : 1, sizeof(*now));
	bool *same = snr_xcalloc(sd->npre ? sd->npre : 1, sizeof(*same));
	bool crc = r->dbg->abi_version >= 7 && r->dbg->crc_mem;
	int rc = 0;
	for (size_t k = 0; k < sd->npre && !rc; k++) {
		now[k] = sd->pre[k];
		now[k].data = snr_xmalloc(sd->pre[k].len ? sd->pre[k].len : 1);
		if (r->sim->read_mem(r->simst, sd->pre[k].space, sd->pre[k].chip, sd->pre[k].addr, (uint8_t *)now[k].data,
				     sd->pre[k].len)) {
			snr_fmt(err, errlen, "reading the simulation's bytes at 0x%llx: %s",
				(unsigned long long)sd->pre[k].addr, r->sim->error(r->simst));
			rc = -1;
		}
		same[k] = crc && sd->pre[k].len;
	}
	if (!rc && crc && crc_check(r, now, sd->npre, same, "the bytes the target wrote", err, errlen))
		rc = -1;
	for (size_t k = 0; k < sd->npre && !rc; k++)
		if (!same[k])
			rc = read_back(r, now[k].addr, now[k].len, (uint8_t *)now[k].data, index, "the bytes the target wrote",
				       err, errlen);
	for (size_t k = 0; k < sd->npre; k++)
		free((void *)now[k].data);
	free(now);
	free(same);
	return rc;
}

/* Puts the target and the recorder back at the checkpoint. */
static int stride_restore(struct rec *r, struct stride *sd, struct snr_ranges *known, struct snr_ranges *written,
			  uint64_t *reg_known, struct snr_record_summary *sum, struct code_cache *cc,
			  struct snr_trace_writer *w, char *err, size_t errlen)
{
	/* a pod's chip keeps the peers' signals that reached it since */
	uint8_t *regs = snr_xmalloc(r->regbuf_len);
	memcpy(regs, sd->good_regs, r->regbuf_len);
	if (pod_keep_signals(r, sd, regs, sum, err, errlen)) {
		free(regs);
		return -1;
	}
	for (size_t k = 0; k < sd->npre; k++) {
		r->requests++;
		if (r->dbg->write_mem(r->d, sd->pre[k].addr, sd->pre[k].data, sd->pre[k].len)) {
			snr_fmt(err, errlen, "writing back the %llu bytes at 0x%llx: %s", (unsigned long long)sd->pre[k].len,
				(unsigned long long)sd->pre[k].addr, r->dbg->error(r->d));
			free(regs);
			return -1;
		}
	}
	r->requests++;
	int wr = r->dbg->write_regs(r->d, regs);
	free(regs);
	if (wr) {
		snr_fmt(err, errlen, "writing back the registers: %s", r->dbg->error(r->d));
		return -1;
	}
	if (snr_trace_writer_rewind(w, &sd->mark)) {
		snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
		return -1;
	}
	for (size_t k = 0; k < sd->nemitted; k++)
		code_slot(cc, sd->emitted[k])->used &= (uint8_t)~2;
	sd->nemitted = 0;
	stride_drop_pre(sd);
	stride_clear_wrote(sd);
	snr_ranges_log_undo(known);
	readable_pages_forget(r); /* what known answered may be gone */
	snr_ranges_log_undo(written);
	memcpy(reg_known, sd->reg_known, sizeof(sd->reg_known));
	/* what the summary says of the window so far; the debugger calls stay counted */
	sum->instructions = sd->sum.instructions;
	sum->regs_captured = sd->sum.regs_captured;
	sum->bytes_captured = sd->sum.bytes_captured;
	sum->bytes_post = sd->sum.bytes_post;
	sum->unmodelled = sd->sum.unmodelled;
	sum->first_unmodelled_index = sd->sum.first_unmodelled_index;
	sum->first_unmodelled_pc = sd->sum.first_unmodelled_pc;
	memcpy(sum->first_unmodelled, sd->sum.first_unmodelled, sizeof(sum->first_unmodelled));
	sum->target_instructions = sd->sum.target_instructions;
	sum->vdso_calls = sd->sum.vdso_calls;
	sum->unread = sd->sum.unread;
	return 0;
}

/* The checkpoint after sd->good mismatched at `at`, err saying how: the
 * target and the recorder go back to sd->good and the rest of the window
 * is recorded by stepping. -1 (err says why) where that cannot be done. */
int verify_fall_back(struct rec *r, struct stride *sd, uint64_t at, struct snr_ranges *known,
		     struct snr_ranges *written, uint64_t *reg_known, struct snr_record_summary *sum,
		     struct code_cache *cc, struct snr_trace_writer *w, char *err, size_t errlen)
{
	if (!sd->can_restore)
		return -1;
	char reason[sizeof(sum->fallback_reason)];
	snprintf(reason, sizeof(reason), "%s", err);
	if (stride_restore(r, sd, known, written, reg_known, sum, cc, w, err, errlen)) {
		size_t l = strlen(err);
		snr_fmt(err + l, errlen - l, " (putting the target back at instruction %llu after: %s)",
			(unsigned long long)sd->good, reason);
		return -1;
	}
	sum->fell_back = true;
	sum->fallback_at = sd->good;
	sum->fallback_detected_at = at;
	sum->fallback_blocked = r->blocked;
	sum->fallback_pc = r->blocked ? r->blocked_pc : 0; /* the wait, else the checkpoint's pc */
	uint64_t pcv = 0;
	if (!r->blocked && r->pc_reg >= 0 && r->iregs[r->pc_reg].size <= 8 &&
	    !r->sim->get_reg(r->simst, (unsigned)r->pc_reg, (uint8_t *)&pcv, r->iregs[r->pc_reg].size))
		sum->fallback_pc = pcv;
	memcpy(sum->fallback_reason, reason, sizeof(reason));
	sum->end_reason = "count";
	r->sim = NULL;
	/* stepping commits nothing more: no undo logs to keep */
	snr_ranges_log_stop(known);
	snr_ranges_log_stop(written);
	err[0] = 0;
	/* stepping: each step into the journal as it comes */
	if (snr_trace_writer_hold(w, false)) {
		snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
		return -1;
	}
	return 0;
}

/* A checkpoint at window index `index`: the stride's pre-images read, the
 * target brought there and compared, registers and written bytes. 0, 1
 * (a mismatch, err says which) or -1. */
static int checkpoint(struct rec *r, struct stride *sd, uint64_t index, struct snr_trace_writer *w, char *err,
		      size_t errlen)
{
	/* the journal holds at least what the target runs */
	if (snr_trace_writer_flush(w)) {
		snr_fmt(err, errlen, "%s", snr_trace_writer_error(w));
		return -1;
	}
	if (sd->can_restore && stride_save_pre(r, sd, err, errlen))
		return -1;
	int vrc = verify_at(r, index, err, errlen);
	if (vrc == 0 && sd->can_restore)
		vrc = stride_compare(r, sd, index, err, errlen);
	return vrc;
}


/* A checkpoint at `index`, then: 0, it matched and is the last good one
 * now; 1, it did not and the target and the recorder are back at the last
 * good checkpoint, sd->good, to record on from there by stepping; -1. */
int verify_or_fall_back(struct rec *r, struct stride *sd, uint64_t index, struct snr_ranges *known,
			struct snr_ranges *written, uint64_t *reg_known, struct snr_record_summary *sum,
			struct code_cache *cc, struct snr_trace_writer *w, char *err, size_t errlen)
{
	int c = checkpoint(r, sd, index, w, err, errlen);
	if (c > 0)
		return verify_fall_back(r, sd, index, known, written, reg_known, sum, cc, w, err, errlen) ? -1 : 1;
	if (c < 0 || stride_commit(r, sd, index, known, written, reg_known, sum, w, err, errlen))
		return -1;
	return 0;
}
