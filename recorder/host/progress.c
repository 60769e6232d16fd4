/*
 * progress.c: the loader side of progress points and request latency
 * (progress.h). Each distinct marked symbol gets one uprobe, its index the
 * BPF cookie; --progress SYM makes every call of SYM a unit of work,
 * --latency BEGIN:END pairs each call of BEGIN with the next END on the
 * same thread (or, with a third field `arg`, with the END whose first
 * argument equals BEGIN's). A function GCC cloned at -O2 (a static one
 * whose symbol became `read_response.isra.0`, `.constprop.0`, `.part.0`)
 * is found under its plain name when the plain one is not there.
 */
#include "progress.h"

#include <bpf/libbpf.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "host.h"
#include "lib/snr_elf.h"
#include "lib/snr_util.h"
#include "progress.skel.h"
#include "uprobe_multi.h"

#define MAX_MARKS 64

struct snrh_progress {
	struct progress_bpf *skel;
	const char *const *progress, *const *latency;
	unsigned nprogress, nlatency;
	char *syms[MAX_MARKS];
	unsigned nsyms;
	struct bpf_link *links[MAX_MARKS];
	/* Linux 6.6+: the marks are one uprobe_multi link (uprobe_multi.h),
	 * taken down with one grace period, not one per mark */
	bool multi;
	int multi_fd;
	uint64_t offsets[MAX_MARKS], cookies[MAX_MARKS];
};

static int valid_symbol(const char *s, size_t n)
{
	if (n == 0)
		return 0;
	for (size_t i = 0; i < n; i++)
		if (!(s[i] == '_' || s[i] == '.' || (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= 'A' && s[i] <= 'Z')))
			return 0;
	return 1;
}

/* BEGIN:END[:arg] -> its parts; 0 or -1. */
static int split_latency(const char *spec, char *begin, char *end, size_t cap, int *by_arg)
{
	const char *c1 = strchr(spec, ':');
	if (!c1)
		return -1;
	const char *c2 = strchr(c1 + 1, ':');
	size_t nb = (size_t)(c1 - spec), ne = c2 ? (size_t)(c2 - c1 - 1) : strlen(c1 + 1);
	if (nb >= cap || ne >= cap || !valid_symbol(spec, nb) || !valid_symbol(c1 + 1, ne))
		return -1;
	if (c2 && strcmp(c2 + 1, "arg") && strcmp(c2 + 1, "thread"))
		return -1;
	memcpy(begin, spec, nb);
	begin[nb] = 0;
	memcpy(end, c1 + 1, ne);
	end[ne] = 0;
	*by_arg = c2 && !strcmp(c2 + 1, "arg");
	return 0;
}

int snrh_progress_check(const char *const *progress, unsigned nprogress, const char *const *latency,
			unsigned nlatency, char *err, size_t errlen)
{
	char b[256], e[256];
	int by_arg;
	for (unsigned i = 0; i < nprogress; i++)
		if (!valid_symbol(progress[i], strlen(progress[i]))) {
			snprintf(err, errlen, "--progress '%s': want a function name of the traced program", progress[i]);
			return -1;
		}
	for (unsigned i = 0; i < nlatency; i++)
		if (split_latency(latency[i], b, e, sizeof(b), &by_arg)) {
			snprintf(err, errlen,
				 "--latency '%s': want BEGIN:END (matched per thread) or BEGIN:END:arg (matched by the "
				 "first argument), two function names of the traced program",
				 latency[i]);
			return -1;
		}
	if (2 * (size_t)nlatency + nprogress > MAX_MARKS) {
		snprintf(err, errlen, "at most %d marked functions (--progress and --latency together)", MAX_MARKS);
		return -1;
	}
	return 0;
}

static unsigned mark_of(struct snrh_progress *p, const char *sym)
{
	for (unsigned i = 0; i < p->nsyms; i++)
		if (!strcmp(p->syms[i], sym))
			return i;
	p->syms[p->nsyms] = snr_xstrdup(sym);
	return p->nsyms++;
}

int snrh_progress_load(const char *const *progress, unsigned nprogress, const char *const *latency,
		       unsigned nlatency, int tgid, struct snrh_progress **out, char *err, size_t errlen)
{
	*out = NULL;
	if (!nprogress && !nlatency)
		return 0;
	if (snrh_progress_check(progress, nprogress, latency, nlatency, err, errlen))
		return -1;
	struct snrh_progress *p = snr_xcalloc(1, sizeof(*p));
	p->progress = progress;
	p->nprogress = nprogress;
	p->latency = latency;
	p->nlatency = nlatency;
	p->multi_fd = -1;
	p->skel = progress_bpf__open();
	if (!p->skel) {
		snprintf(err, errlen, "cannot open the progress-point program: %s", strerror(errno));
		snrh_progress_free(p);
		return -1;
	}
	p->skel->rodata->target_tgid = tgid;
	p->multi = snrh_uprobe_multi_supported();
	if (p->multi)
		bpf_program__set_expected_attach_type(p->skel->progs.mark,
						      (enum bpf_attach_type)SNRH_BPF_TRACE_UPROBE_MULTI);
	if (progress_bpf__load(p->skel)) {
		snprintf(err, errlen, "cannot load the progress-point program: %s", strerror(errno));
		snrh_progress_free(p);
		return -1;
	}
	*out = p;
	return 0;
}

/* The symbol of exe to probe for sym: sym itself, else the one clone of it
 * (sym followed by '.' and GCC's suffix). NULL: neither (or several). */
static const char *resolve_symbol(const struct snr_elf *elf, const char *sym)
{
	if (!elf)
		return sym;
	size_t n = strlen(sym);
	const char *clone = NULL;
	for (size_t i = 0; i < elf->nsymbols; i++) {
		const struct snr_elf_symbol *e = &elf->symbols[i];
		if (!e->is_func || strncmp(e->name, sym, n))
			continue;
		if (!e->name[n])
			return sym;
		/* a clone, not the cold part split out of one (no entry there) */
		if (e->name[n] == '.' && !strstr(e->name + n, ".cold")) {
			if (clone && strcmp(clone, e->name))
				return NULL;
			clone = e->name;
		}
	}
	return clone;
}

int snrh_progress_attach(struct snrh_progress *p, const char *exe, struct snrh_trace *t, char *err,
			 size_t errlen)
{
	if (!p)
		return 0;
	json_t *points = json_array(), *marks = json_array();
	char b[256], e[256];
	int by_arg;
	for (unsigned i = 0; i < p->nprogress; i++) {
		unsigned m = mark_of(p, p->progress[i]);
		json_array_append_new(points, json_pack("{s:s, s:s, s:I}", "name", p->progress[i], "kind", "progress",
							"mark", (json_int_t)m));
	}
	for (unsigned i = 0; i < p->nlatency; i++) {
		split_latency(p->latency[i], b, e, sizeof(b), &by_arg);
		unsigned mb = mark_of(p, b), me = mark_of(p, e);
		char name[520];
		snprintf(name, sizeof(name), "%s:%s", b, e);
		json_array_append_new(points, json_pack("{s:s, s:s, s:I, s:I, s:s}", "name", name, "kind", "latency",
							"begin", (json_int_t)mb, "end", (json_int_t)me, "match",
							by_arg ? "arg" : "thread"));
	}
	int rc = 0;
	char eerr[300];
	struct snr_elf *elf = snr_elf_open(exe, eerr, sizeof(eerr));
	for (unsigned i = 0; i < p->nsyms && !rc; i++) {
		const char *sym = resolve_symbol(elf, p->syms[i]);
		if (!sym) {
			snprintf(err, errlen,
				 "cannot put a progress uprobe on '%s' in %s: no such function (or several clones of it)",
				 p->syms[i], exe);
			rc = -1;
			break;
		}
		char why[300] = "";
		if (p->multi) {
			if (snrh_func_offset(exe, sym, &p->offsets[i], why, sizeof(why)) == 0)
				p->cookies[i] = i;
			else
				rc = -1;
		} else {
			LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = sym, .retprobe = false, .bpf_cookie = i);
			p->links[i] = bpf_program__attach_uprobe_opts(p->skel->progs.mark, -1, exe, 0, &uo);
			if (!p->links[i]) {
				snprintf(why, sizeof(why), "%s", strerror(errno));
				rc = -1;
			}
		}
		if (rc)
			snprintf(err, errlen,
				 "cannot put a progress uprobe on '%s' in %s: %s (a function of the program itself, "
				 "not inlined: give it __attribute__((noinline)) or a caller that is not)",
				 p->syms[i], exe, why);
		json_array_append_new(marks, json_pack("{s:I, s:s, s:s, s:s}", "id", (json_int_t)i, "symbol", p->syms[i],
						       "probed", sym, "path", exe));
	}
	snr_elf_free(elf);
	if (!rc && p->multi && p->nsyms) {
		p->multi_fd = snrh_uprobe_multi_attach(bpf_program__fd(p->skel->progs.mark), exe, p->offsets, p->cookies,
						       p->nsyms, false);
		if (p->multi_fd < 0) {
			snprintf(err, errlen, "cannot put the %u progress uprobes in %s (uprobe_multi): %s", p->nsyms, exe,
				 strerror(-p->multi_fd));
			rc = -1;
		}
	}
	json_object_set_new(t->meta, "marks", marks);
	json_object_set_new(t->meta, "progress", points);
	return rc;
}

int snrh_progress_ring_fd(const struct snrh_progress *p)
{
	return p ? bpf_map__fd(p->skel->maps.events) : -1;
}

void snrh_progress_event(struct snrh_trace *t, const void *data, size_t size)
{
	if (size < sizeof(struct snrh_mark_event))
		return;
	const struct snrh_mark_event *e = data;
	struct snrh_mark m = {e->tid, e->point, e->ts_ns, e->arg};
	SNRH_PUSH(t->marks, m);
}

uint64_t snrh_progress_dropped(const struct snrh_progress *p)
{
	return p && p->skel->bss ? p->skel->bss->dropped_events : 0;
}

void snrh_progress_free(struct snrh_progress *p)
{
	if (!p)
		return;
	if (p->multi_fd >= 0)
		close(p->multi_fd);
	for (unsigned i = 0; i < p->nsyms; i++) {
		bpf_link__destroy(p->links[i]);
		free(p->syms[i]);
	}
	progress_bpf__destroy(p->skel);
	free(p);
}
