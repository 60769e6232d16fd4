/*
 * window.c: see window.h.
 */
#include "window.h"

#include <jansson.h>
#include <string.h>

#include "lib/snr_util.h"

static void keep_post(struct snr_window *w, const struct snr_trace_step *st, const struct snr_trace_reg *regs)
{
	if (w->npost == w->cap_post) {
		w->cap_post = w->cap_post ? 2 * w->cap_post : 64;
		w->post = snr_xrealloc(w->post, w->cap_post * sizeof(*w->post));
	}
	struct snr_window_post *p = &w->post[w->npost++];
	p->index = st->index;
	p->unread = st->unread;
	p->call = st->call;
	p->nregs = st->npost_regs;
	p->regs = snr_xcalloc(p->nregs + 1, sizeof(*p->regs));
	for (unsigned i = 0; i < p->nregs; i++) {
		p->regs[i].reg = st->post_regs[i].reg;
		p->regs[i].val = snr_xmemdup(st->post_regs[i].val, regs[st->post_regs[i].reg].size);
	}
	p->nmem = st->npost_mem;
	p->mem = snr_xcalloc(p->nmem + 1, sizeof(*p->mem));
	for (unsigned i = 0; i < p->nmem; i++) {
		p->mem[i] = st->post_mem[i];
		p->mem[i].data = snr_xmemdup(st->post_mem[i].data, st->post_mem[i].len);
	}
}

static void keep_code(struct snr_window *w, uint64_t pc, const uint8_t *b, uint8_t len)
{
	if (w->ncode == w->cap_code) {
		w->cap_code = w->cap_code ? w->cap_code * 2 : 256;
		w->code_pc = snr_xrealloc(w->code_pc, w->cap_code * sizeof(*w->code_pc));
		w->code = snr_xrealloc(w->code, w->cap_code * sizeof(*w->code));
		w->code_len = snr_xrealloc(w->code_len, w->cap_code);
	}
	w->code_pc[w->ncode] = pc;
	memcpy(w->code[w->ncode], b, len);
	w->code_len[w->ncode] = len;
	w->ncode++;
}

static int pc_register(struct snr_trace *t)
{
	json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	json_t *mregs = json_object_get(meta, "registers");
	int pc = -1;
	for (size_t i = 0; i < json_array_size(mregs); i++)
		if (json_is_true(json_object_get(json_array_get(mregs, i), "pc")))
			pc = (int)i;
	json_decref(meta);
	return pc;
}

int snr_window_load(struct snr_trace *t, const struct snr_sim_ops *sim, struct snr_sim *s, struct snr_window *w,
		    char *err, size_t errlen)
{
	memset(w, 0, sizeof(*w));
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	w->pc_reg = pc_register(t);
	if (w->pc_reg < 0) {
		snr_fmt(err, errlen, "the trace's register table names no pc");
		return -1;
	}
	struct snr_trace_step st;
	int n;
	w->pcs = snr_xmalloc(sizeof(*w->pcs));
	snr_spill_init(w->pcs, sizeof(uint64_t), 4u << 20, "replayed pcs");
	w->run_pcs = snr_xmalloc(SNR_WINDOW_RUN_PCS * sizeof(*w->run_pcs));
	snr_trace_rewind(t);
	for (;;) {
		/* most steps hold nothing but their pc: those in bulk, into the pcs' array */
		size_t room;
		uint64_t *at = snr_spill_reserve(w->pcs, &room);
		size_t k = snr_trace_next_plain(t, at, room);
		if (k) {
			snr_spill_extend(w->pcs, k);
			w->n += k;
			continue;
		}
		if ((n = snr_trace_next(t, &st)) != 1)
			break;
		snr_spill_push(w->pcs, &st.pc);
		w->n++;
		if (st.code_len) {
			keep_code(w, st.pc, st.code, st.code_len);
			if (sim->load_code(s, st.pc, st.code, st.code_len))
				goto sim_fail;
		}
		for (unsigned i = 0; i < st.nregs; i++)
			if (sim->set_reg(s, st.regs[i].reg, st.regs[i].val, regs[st.regs[i].reg].size))
				goto sim_fail;
		for (unsigned i = 0; i < st.nmem; i++)
			if (sim->load_mem(s, st.mem[i].space, st.mem[i].chip, st.mem[i].addr, st.mem[i].data, st.mem[i].len))
				goto sim_fail;
		if (st.npost_regs || st.npost_mem || st.unread || st.call)
			keep_post(w, &st, regs);
	}
	if (n < 0) {
		snr_fmt(err, errlen, "%s", snr_trace_error(t));
		return -1;
	}
	if (snr_spill_failed(w->pcs)) {
		snr_fmt(err, errlen, "%s", w->pcs->err);
		return -1;
	}
	if (w->n) {
		uint8_t pcbuf[16] = {0};
		uint64_t pc0 = snr_window_pc(w, 0);
		memcpy(pcbuf, &pc0, 8);
		if (sim->set_reg(s, (unsigned)w->pc_reg, pcbuf, regs[w->pc_reg].size))
			goto sim_fail;
	}
	return 0;
sim_fail:
	snr_fmt(err, errlen, "simulator %s: %s", sim->name, sim->error(s));
	return -1;
}

uint64_t snr_window_pc(const struct snr_window *w, uint64_t i)
{
	return *(const uint64_t *)snr_spill_at(w->pcs, i);
}

const char *snr_window_error(const struct snr_window *w)
{
	return w->pcs && snr_spill_failed(w->pcs) ? w->pcs->err : NULL;
}

/* The recorded pcs of [first, first + n) into w->run_pcs (n <= SNR_WINDOW_RUN_PCS) */
static const uint64_t *run_pcs(const struct snr_window *w, uint64_t first, uint64_t n)
{
	snr_spill_get_n(w->pcs, first, (size_t)n, w->run_pcs);
	return w->run_pcs;
}

int snr_window_run(const struct snr_sim_ops *sim, struct snr_sim *s, const struct snr_window *w,
		   const struct snr_trace_reg *regs, uint64_t first, uint64_t n, struct snr_sim_run *out)
{
	if (sim->abi_version >= 2 && sim->run) {
		memset(out, 0, sizeof(*out));
		for (uint64_t at = 0; at < n || !n;) {
			uint64_t k = n - at < SNR_WINDOW_RUN_PCS ? n - at : SNR_WINDOW_RUN_PCS;
			const uint64_t *pcs = run_pcs(w, first + at, k);
			if (snr_spill_failed(w->pcs))
				return -1;
			struct snr_sim_run r;
			int rc = sim->run(s, first + at, k, pcs, &r);
			uint64_t next_pc = out->next_pc;
			*out = r;
			out->done = at + r.done;
			if (!r.done && at)
				out->next_pc = next_pc; /* the last one executed was in the run before */
			if (rc || r.diverged || r.exited || r.done < k || !n)
				return rc;
			at += k;
		}
		return 0;
	}
	memset(out, 0, sizeof(*out));
	for (uint64_t i = 0; i < n; i++) {
		uint8_t cur[16] = {0};
		uint64_t pc = 0;
		if (sim->get_reg(s, (unsigned)w->pc_reg, cur, regs[w->pc_reg].size))
			return -1;
		memcpy(&pc, cur, 8);
		uint64_t want = snr_window_pc(w, first + i);
		if (snr_spill_failed(w->pcs))
			return -1;
		if (pc != want) {
			out->diverged = true;
			out->pc = pc;
			return 0;
		}
		struct snr_sim_step st;
		if (sim->step(s, first + i, &st))
			return -1;
		out->done = i + 1;
		out->next_pc = st.next_pc;
		if (st.exited) {
			out->exited = true;
			out->exit_code = st.exit_code;
			return 0;
		}
	}
	return 0;
}

int snr_window_apply_post(const struct snr_sim_ops *sim, struct snr_sim *s, const struct snr_trace_reg *regs,
			  const struct snr_window_post *p)
{
	for (unsigned i = 0; i < p->nregs; i++)
		if (sim->set_reg(s, p->regs[i].reg, p->regs[i].val, regs[p->regs[i].reg].size))
			return -1;
	for (unsigned i = 0; i < p->nmem; i++)
		if (sim->load_mem(s, p->mem[i].space, p->mem[i].chip, p->mem[i].addr, p->mem[i].data, p->mem[i].len))
			return -1;
	return 0;
}

int snr_window_unread_zeros(const struct snr_sim_ops *sim, struct snr_sim *s, const struct snr_trace_reg *regs,
			    size_t nregs, const struct snr_isa_ops *isa, void *isa_self, const struct snr_window *w,
			    const struct snr_window_post *p, char *err, size_t errlen)
{
	uint64_t pc = snr_window_pc(w, p->index);
	unsigned len = 0;
	const uint8_t *code = snr_window_code(w, pc, &len);
	if (!isa || !isa_self || !code) {
		snr_fmt(err, errlen, "instruction %llu at 0x%llx read memory the debugger could not read, and %s",
			(unsigned long long)p->index, (unsigned long long)pc,
			code ? "no ISA plugin for the trace's ISA is loaded to find it" : "the trace holds no code there");
		return -1;
	}
	nregs = nregs < SNR_ISA_MAX_REGS ? nregs : SNR_ISA_MAX_REGS;
	uint8_t *buf = snr_xcalloc(nregs ? nregs : 1, 256);
	const uint8_t **val = snr_xcalloc(nregs ? nregs : 1, sizeof(*val));
	for (size_t i = 0; i < nregs; i++)
		if (regs[i].size <= 256 && !sim->get_reg(s, (unsigned)i, buf + i * 256, regs[i].size))
			val[i] = buf + i * 256; /* others: neither captured nor written, no value */
	struct snr_isa_regs iv = {.val = val, .chip = 0, .nchips = 1};
	struct snr_insn_access acc;
	isa->access(isa_self, code, len, pc, &iv, &acc);
	int rc = 0;
	for (unsigned m = 0; m < acc.nmem && !rc; m++) {
		const struct snr_mem_region *g = &acc.mem[m];
		uint8_t *zeros = g->write ? NULL : snr_xcalloc(1, g->row_bytes ? g->row_bytes : 1);
		for (uint64_t row = 0; zeros && row < g->rows && !rc; row++) {
			uint64_t a = g->addr + (uint64_t)((int64_t)row * g->stride);
			if (sim->load_mem(s, g->space, g->chip, a, zeros, g->row_bytes)) {
				snr_fmt(err, errlen, "instruction %llu at 0x%llx: simulator %s: %s", (unsigned long long)p->index,
					(unsigned long long)pc, sim->name, sim->error(s));
				rc = -1;
			}
		}
		free(zeros);
	}
	if (!rc && acc.fault) {
		snr_fmt(err, errlen, "instruction %llu at 0x%llx read memory the debugger could not read, and the ISA "
			"plugin cannot say which: %s", (unsigned long long)p->index, (unsigned long long)pc, acc.fault);
		rc = -1;
	}
	free(val);
	free(buf);
	return rc;
}

const uint8_t *snr_window_code(const struct snr_window *w, uint64_t pc, unsigned *len)
{
	for (size_t i = 0; i < w->ncode; i++)
		if (w->code_pc[i] == pc) {
			*len = w->code_len[i];
			return w->code[i];
		}
	return NULL;
}

void snr_window_free(struct snr_window *w)
{
	for (size_t i = 0; i < w->npost; i++) {
		for (unsigned k = 0; k < w->post[i].nregs; k++)
			free((void *)w->post[i].regs[k].val);
		for (unsigned k = 0; k < w->post[i].nmem; k++)
			free((void *)w->post[i].mem[k].data);
		free(w->post[i].regs);
		free(w->post[i].mem);
	}
	free(w->post);
	if (w->pcs)
		snr_spill_free(w->pcs);
	free(w->pcs);
	free(w->run_pcs);
	free(w->code_pc);
	free(w->code);
	free(w->code_len);
	memset(w, 0, sizeof(*w));
}
