/*
 * pcinfo.c: see pcinfo.h. An open-addressing table from pc to its
 * disassembly; the ISA's disassembler is created from the source's META.
 */
#include "pcinfo.h"

#include <jansson.h>
#include <stdlib.h>
#include <string.h>

#include "isa/snr_isa.h"
#include "lib/snr_lines.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"

struct slot {
	uint64_t pc;
	char *disasm; /* NULL: empty slot */
	char *where;  /* snr_source_where_short, when asked */
	char *args;   /* an_pcinfo_args, when asked */
	uint8_t flow; /* enum an_flow */
	uint8_t len;  /* the instruction's bytes (0: unknown) */
};

struct an_pcinfo {
	const struct snr_source *src;
	const struct snr_isa_ops *isa;
	void *self;
	int link; /* the link register's number (-1: none) */
	struct slot *slots;
	size_t nslots, nused;
	bool trace_read;
};

struct an_pcinfo *an_pcinfo_new(const struct snr_source *src)
{
	struct an_pcinfo *p = snr_xcalloc(1, sizeof(*p));
	p->src = src;
	p->nslots = 1024;
	p->slots = snr_xcalloc(p->nslots, sizeof(*p->slots));
	json_t *meta = json_loads(src->meta_json ? src->meta_json : "{}", 0, NULL);
	const char *name = json_string_value(json_object_get(meta, "isa"));
	const struct snr_isa_ops *isa = name ? snr_isa_find(name) : NULL;
	json_t *cfg = json_object_get(meta, "config");
	char *cfg_s = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
	char err[256];
	p->self = isa ? isa->create(cfg_s, err, sizeof(err)) : NULL;
	p->isa = p->self ? isa : NULL;
	p->link = -1;
	size_t nregs = 0;
	const struct snr_isa_reg *regs = p->isa ? p->isa->registers(p->self, &nregs) : NULL;
	static const char *const link_names[] = {"ra", "x30", "lr"};
	for (size_t k = 0; k < 3 && p->link < 0; k++)
		for (size_t r = 0; r < nregs && r < SNR_ISA_MAX_REGS; r++)
			if (!strcmp(regs[r].name, link_names[k]) || (regs[r].alt_name && !strcmp(regs[r].alt_name, link_names[k]))) {
				p->link = (int)r;
				break;
			}
	free(cfg_s);
	json_decref(meta);
	return p;
}

void an_pcinfo_free(struct an_pcinfo *p)
{
	if (!p)
		return;
	for (size_t i = 0; i < p->nslots; i++) {
		free(p->slots[i].disasm);
		free(p->slots[i].where);
		free(p->slots[i].args);
	}
	free(p->slots);
	if (p->isa)
		p->isa->destroy(p->self);
	free(p);
}

static struct slot *slot_of(struct an_pcinfo *p, uint64_t pc)
{
	size_t mask = p->nslots - 1, i = (size_t)((pc * 0x9e3779b97f4a7c15ull) >> 24) & mask;
	while (p->slots[i].disasm && p->slots[i].pc != pc)
		i = (i + 1) & mask;
	return &p->slots[i];
}

static void put(struct an_pcinfo *p, uint64_t pc, const uint8_t *code, size_t n)
{
	char dis[128];
	if (!p->isa || !n || !p->isa->disasm(p->self, code, n, pc, dis, sizeof(dis)))
		snprintf(dis, sizeof(dis), "?");
	if (2 * (p->nused + 1) > p->nslots) {
		struct slot *old = p->slots;
		size_t nold = p->nslots;
		p->nslots *= 2;
		p->slots = snr_xcalloc(p->nslots, sizeof(*p->slots));
		for (size_t i = 0; i < nold; i++)
			if (old[i].disasm)
				*slot_of(p, old[i].pc) = old[i];
		free(old);
	}
	struct slot *s = slot_of(p, pc);
	if (s->disasm)
		return;
	*s = (struct slot){pc, snr_xstrdup(dis), NULL, NULL, AN_FLOW_OTHER, 0};
	p->nused++;
	struct snr_insn_access acc;
	struct snr_isa_regs none = {NULL, 0, 1};
	if (p->isa && n && !p->isa->access(p->self, code, n, pc, &none, &acc)) {
		s->len = (uint8_t)(acc.length < 256 ? acc.length : 0);
		if (acc.cls == SNR_CLASS_BRANCH && p->link >= 0) {
			if (snr_regset_has(acc.regs_written, (unsigned)p->link))
				s->flow = AN_FLOW_CALL;
			else if (snr_regset_has(acc.regs_read, (unsigned)p->link))
				s->flow = AN_FLOW_RETURN;
		}
	}
}

const char *an_pcinfo_disasm(struct an_pcinfo *p, uint64_t pc)
{
	struct slot *s = slot_of(p, pc);
	if (s->disasm)
		return s->disasm;
	uint8_t code[16];
	size_t n = snr_lines_code(p->src->lines, pc, code, sizeof(code));
	if (n)
		put(p, pc, code, n);
	else if (!p->trace_read && p->src->trace && p->isa) {
		p->trace_read = true; /* every pc's bytes at once */
		struct snr_trace_step st;
		snr_trace_rewind(p->src->trace);
		while (snr_trace_next(p->src->trace, &st) == 1)
			if (st.code_len && !slot_of(p, st.pc)->disasm)
				put(p, st.pc, st.code, st.code_len);
	}
	if (!slot_of(p, pc)->disasm)
		put(p, pc, NULL, 0); /* "?", remembered */
	return slot_of(p, pc)->disasm;
}

enum an_flow an_pcinfo_flow(struct an_pcinfo *p, uint64_t pc, unsigned *len)
{
	an_pcinfo_disasm(p, pc);
	const struct slot *s = slot_of(p, pc);
	*len = s->len;
	return (enum an_flow)s->flow;
}

const char *an_pcinfo_mnemonic(struct an_pcinfo *p, uint64_t pc, char *buf, size_t len)
{
	const char *d = an_pcinfo_disasm(p, pc);
	size_t n = strcspn(d, " \t");
	snprintf(buf, len, "%.*s", (int)n, d);
	return buf;
}

const char *an_pcinfo_where(struct an_pcinfo *p, uint64_t pc)
{
	an_pcinfo_disasm(p, pc);
	struct slot *s = slot_of(p, pc);
	if (!s->where) {
		char w[400];
		s->where = snr_xstrdup(snr_source_where_short(p->src, pc, w, sizeof(w)));
	}
	return s->where;
}

const char *an_pcinfo_args(struct an_pcinfo *p, uint64_t pc)
{
	an_pcinfo_disasm(p, pc);
	struct slot *s = slot_of(p, pc);
	if (!s->args) {
		json_t *o = json_object();
		json_object_set_new(o, "pc", json_integer((json_int_t)pc));
		json_object_set_new(o, "disasm", json_string(s->disasm));
		json_t *src = snr_source_json(p->src, pc);
		json_object_del(src, "inlined"); /* per slice: the place; the chain is in annotate's pcs */
		json_object_set_new(o, "source", src);
		char *j = json_dumps(o, JSON_COMPACT | JSON_PRESERVE_ORDER);
		size_t n = strlen(j);
		s->args = snr_xmemdup(j + 1, n - 1); /* without the braces */
		s->args[n - 2] = 0;
		free(j);
		json_decref(o);
	}
	return s->args;
}
