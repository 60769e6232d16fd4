/*
 * cmd_trace.c: `snr trace info|dump|verify`, reading .snrt files, and `snr trace
 * finish`, writing the trace of a journal whose recording ended.
 */
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "lib/snr_line_pack.h"
#include "lib/snr_lines.h"
#include "lib/snr_partial.h"
#include "lib/snr_pod.h"
#include "lib/snr_trace.h"
#include "lib/snr_util.h"
#include "isa/snr_isa.h"
#include "snr_cli.h"

static const char trace_usage[] =
	"usage: snr trace info T.snrt|POD [--json]\n"
	"       snr trace dump T.snrt [--json] [--limit N]\n"
	"       snr trace verify T.snrt\n"
	"       snr trace finish T.snrt.partial [-o T.snrt] [--force]\n"
	"\n"
	"info    what the trace holds: ISA, target, breakpoint, instructions, how\n"
	"        recording ended, what was captured, size; of a pod recording (POD,\n"
	"        from record --pod): its chips, each trace checked to be that chip of\n"
	"        one recording of one program\n"
	"dump    one line per instruction: index, pc, symbol+offset, disassembly, its\n"
	"        source line (\"at file:line (function)\", from the program's DWARF), and\n"
	"        the registers and memory captured just before it (--json: one JSON\n"
	"        object per line, with \"source\")\n"
	"\n"
	"--elf PROG  the program whose line tables place pcs (default: the one recorded)\n"
	"verify  reads every chunk and step; exit 0 if the trace is complete and\n"
	"        intact, 3 if it is truncated (readable up to the instruction named)\n"
	"        or damaged (the message names the chunk and offset), as every reader\n"
	"        exits 3 on a damaged input\n"
	"\n"
	"finish  writes the trace of a recording whose journal holds the window's\n"
	"        end but whose trace could not be written (a full disk): the bytes the\n"
	"        recorder would have written, to -o (default: the journal's name less\n"
	"        .partial; an existing file only with --force), then removes the\n"
	"        journal. A journal without its end (a recorder killed) is refused\n"
	"        (exit 3): readers use what it holds with --allow-truncated\n"
	"\n"
	"A truncated or interrupted trace: info describes it and exits 3, dump\n"
	"refuses it (exit 3); --allow-truncated lets both use what it holds (and\n"
	"every line of dump --json then carries \"truncated\": true).\n";

struct counts {
	uint64_t steps, regs, reg_bytes, mem_ranges, mem_bytes, code_bytes, post, unread, calls;
};

static int scan(struct snr_trace *t, struct counts *c)
{
	struct snr_trace_step s;
	int rc;
	memset(c, 0, sizeof(*c));
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	while ((rc = snr_trace_next(t, &s)) == 1) {
		c->steps++;
		c->regs += s.nregs;
		for (unsigned i = 0; i < s.nregs; i++)
			c->reg_bytes += regs[s.regs[i].reg].size;
		c->mem_ranges += s.nmem;
		for (unsigned i = 0; i < s.nmem; i++)
			c->mem_bytes += s.mem[i].len;
		c->code_bytes += s.code_len;
		c->post += s.npost_regs + s.npost_mem;
		c->unread += s.unread;
		c->calls += s.call;
	}
	return rc;
}

static const char *meta_str(json_t *meta, const char *key)
{
	const char *s = json_string_value(json_object_get(meta, key));
	return s ? s : "-";
}

/* How the window was recorded (traces before --method say nothing: stepping). */
/* The LINES chunk the trace carries (lib/snr_line_pack.h): its rows and
 * source files, and the bytes it takes in the file. */
static struct snr_line_pack *lines_of(struct snr_trace *t, size_t *stored)
{
	size_t n;
	const uint8_t *p = snr_trace_lines(t, &n);
	char err[300];
	*stored = snr_trace_lines_stored(t);
	return p ? snr_line_pack_parse(p, n, err, sizeof(err)) : NULL;
}

static json_t *lines_json(struct snr_trace *t)
{
	size_t stored;
	struct snr_line_pack *k = lines_of(t, &stored);
	json_t *o = k ? json_pack("{s:I,s:I,s:I}", "rows", (json_int_t)snr_line_pack_rows(k), "source_files",
				  (json_int_t)snr_line_pack_files(k), "bytes", (json_int_t)stored)
		      : json_null();
	snr_line_pack_free(k);
	return o;
}

static void print_lines(struct snr_trace *t)
{
	size_t stored;
	struct snr_line_pack *k = lines_of(t, &stored);
	if (k)
		printf("lines        %zu pcs' source lines and %zu source file%s carried (%zu bytes): they answer if "
		       "the program is rebuilt or its sources move\n",
		       snr_line_pack_rows(k), snr_line_pack_files(k), snr_line_pack_files(k) == 1 ? "" : "s", stored);
	else
		printf("lines        none carried: source lines come from the program's ELF\n");
	snr_line_pack_free(k);
}

static void print_method(json_t *meta, json_t *end)
{
	const char *m = json_string_value(json_object_get(meta, "method"));
	if (!m)
		return;
	printf("method       %s", m);
	json_t *req = json_object_get(end, "debugger_requests");
	if (req)
		printf(", %lld debugger requests, %lld bytes fetched from the target", (long long)json_integer_value(req),
		       (long long)json_integer_value(json_object_get(end, "bytes_fetched")));
	printf("\n");
	json_t *v = json_object_get(end, "verification");
	if (!v)
		return;
	printf("verified     to instruction %lld against the target: %lld checkpoints, %lld continues, %lld single "
	       "steps, %lld instructions run on the target for the simulator\n",
	       (long long)json_integer_value(json_object_get(v, "verified_to")),
	       (long long)json_integer_value(json_object_get(v, "checkpoints")),
	       (long long)json_integer_value(json_object_get(v, "target_continues")),
	       (long long)json_integer_value(json_object_get(v, "target_steps")),
	       (long long)json_integer_value(json_object_get(v, "target_instructions")));
	const char *fb = json_string_value(json_object_get(v, "fallback"));
	if (fb)
		printf("fallback     %s\n", fb);
}

static int cmd_info(struct snr_trace *t, const char *path, int as_json)
{
	struct counts c;
	if (scan(t, &c) < 0) {
		snr_err("trace: %s", snr_trace_error(t));
		return 1;
	}
	struct stat st;
	stat(path, &st);
	json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	json_t *end = snr_trace_end_json(t) ? json_loads(snr_trace_end_json(t), 0, NULL) : NULL;
	const uint8_t *const *dregs;
	size_t nblocks = 0;
	const struct snr_trace_mem *blocks;
	const uint64_t *hashes;
	bool digest = snr_trace_digest(t, &dregs, &nblocks, &blocks, &hashes);
	if (as_json) {
		json_t *o = json_object();
		json_object_set(o, "meta", meta);
		json_object_set_new(o, "instructions", json_integer((json_int_t)c.steps));
		json_object_set_new(o, "truncated", json_boolean(snr_trace_truncated(t) || snr_trace_interrupted(t)));
		json_object_set_new(o, "interrupted", json_boolean(snr_trace_interrupted(t)));
		if (end)
			json_object_set(o, "end", end);
		json_object_set_new(o, "registers_captured", json_integer((json_int_t)c.regs));
		json_object_set_new(o, "memory_ranges_captured", json_integer((json_int_t)c.mem_ranges));
		json_object_set_new(o, "memory_bytes_captured", json_integer((json_int_t)c.mem_bytes));
		json_object_set_new(o, "code_bytes", json_integer((json_int_t)c.code_bytes));
		json_object_set_new(o, "unread_loads", json_integer((json_int_t)c.unread));
		json_object_set_new(o, "target_calls", json_integer((json_int_t)c.calls));
		json_object_set_new(o, "digest_blocks", json_integer((json_int_t)nblocks));
		json_object_set_new(o, "has_digest", json_boolean(digest));
		json_object_set_new(o, "symbols", json_integer((json_int_t)snr_trace_nsymbols(t)));
		json_object_set_new(o, "lines", lines_json(t));
		json_object_set_new(o, "file_bytes", json_integer((json_int_t)st.st_size));
		char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(o);
	} else {
		printf("trace        %s (%lld bytes)\n", path, (long long)st.st_size);
#define META_STR(k) meta_str(meta, k)
		printf("isa          %s\n", META_STR("isa"));
		printf("debugger     %s, target %s\n", META_STR("debugger"), META_STR("target"));
		printf("breakpoint   %s (0x%llx), hit %lld\n", META_STR("breakpoint"),
		       (unsigned long long)json_integer_value(json_object_get(meta, "breakpoint_address")),
		       (long long)json_integer_value(json_object_get(meta, "skip")) + 1);
		printf("chip         %lld of %lld\n", (long long)json_integer_value(json_object_get(meta, "chip")),
		       (long long)json_integer_value(json_object_get(meta, "chips")));
		printf("instructions %llu of %lld requested\n", (unsigned long long)c.steps,
		       (long long)json_integer_value(json_object_get(meta, "count")));
		char partial[300];
		if (snr_trace_truncated(t))
			printf("state        TRUNCATED: %s\n", snr_trace_end_json(t)
							       ? snr_trace_partial_text(t, partial, sizeof(partial))
							       : "the recorder stopped before finishing");
		else
			printf("ended by     %s%s\n", json_string_value(json_object_get(end, "reason")),
			       snr_trace_interrupted(t) ? ": the window ends where SIGINT or SIGTERM stopped it" : "");
		printf("captured     %llu registers (%llu bytes), %llu memory ranges (%llu bytes)\n",
		       (unsigned long long)c.regs, (unsigned long long)c.reg_bytes, (unsigned long long)c.mem_ranges,
		       (unsigned long long)c.mem_bytes);
		printf("code         %llu bytes\n", (unsigned long long)c.code_bytes);
		if (c.unread)
			printf("unread       %llu loads from memory the debugger could not read (the vDSO's [vvar]): run on "
			       "the target, their outputs recorded after them\n", (unsigned long long)c.unread);
		if (c.calls)
			printf("calls        %llu calls the target ran as a unit (into the vDSO): one step each, their "
			       "outputs recorded after them\n", (unsigned long long)c.calls);
		print_method(meta, end);
		printf("end state    %s\n", digest ? "digest present" : "no digest");
		if (digest)
			printf("             %zu memory blocks of written memory hashed\n", nblocks);
		printf("symbols      %zu\n", snr_trace_nsymbols(t));
		print_lines(t);
		printf("recorded     %s by %s\n", META_STR("created"), META_STR("recorder"));
#undef META_STR
	}
	json_decref(meta);
	json_decref(end);
	return 0;
}

static void hex(FILE *f, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		fprintf(f, "%02x", p[i]);
}

/* little-endian register bytes as one hex number */
static void hex_le(FILE *f, const uint8_t *p, size_t n)
{
	fputs("0x", f);
	for (size_t i = n; i-- > 0;)
		fprintf(f, "%02x", p[i]);
}

/* s as a JSON string (quoted, escaped) on f. */
static void put_json_string(FILE *f, const char *s)
{
	json_t *j = json_string(s);
	char *js = j ? json_dumps(j, JSON_ENCODE_ANY) : NULL;
	fputs(js ? js : "\"?\"", f);
	free(js);
	json_decref(j);
}

static int cmd_dump(struct snr_trace *t, const char *path, int as_json, uint64_t limit)
{
	/* a partial trace (given --allow-truncated) says so on every line */
	const bool partial = snr_trace_truncated(t) || snr_trace_interrupted(t);
	json_t *meta = json_loads(snr_trace_meta_json(t), 0, NULL);
	const char *isa_name = json_string_value(json_object_get(meta, "isa"));
	const struct snr_isa_ops *isa = isa_name ? snr_isa_find(isa_name) : NULL;
	json_t *cfg = json_object_get(meta, "config");
	char *cfg_s = cfg ? json_dumps(cfg, JSON_COMPACT) : NULL;
	char err[256];
	void *self = isa ? isa->create(cfg_s, err, sizeof(err)) : NULL;
	free(cfg_s);
	json_decref(meta);
	struct snr_lines *lines = snr_lines_open_trace(t, path);
	const struct snr_trace_reg *regs = snr_trace_regs(t);
	/* code bytes are stored once per pc: keep them for disassembly */
	struct code { uint64_t pc; uint8_t len; uint8_t b[16]; } *codes = NULL;
	size_t ncodes = 0, cap = 0;
	struct snr_trace_step s;
	int rc;
	uint64_t n = 0;
	while ((rc = snr_trace_next(t, &s)) == 1 && (!limit || n < limit)) {
		n++;
		const struct code *cd = NULL;
		if (s.code_len) {
			if (ncodes == cap) {
				cap = cap ? cap * 2 : 1024;
				codes = snr_xrealloc(codes, cap * sizeof(*codes));
			}
			codes[ncodes].pc = s.pc;
			codes[ncodes].len = s.code_len;
			memcpy(codes[ncodes].b, s.code, s.code_len);
			cd = &codes[ncodes++];
		} else {
			for (size_t i = ncodes; i-- > 0;)
				if (codes[i].pc == s.pc) {
					cd = &codes[i];
					break;
				}
		}
		char dis[128] = "?", sym[160];
		if (cd && self)
			isa->disasm(self, cd->b, cd->len, s.pc, dis, sizeof(dis));
		snr_trace_symbolize(t, s.pc, sym, sizeof(sym));
		if (s.call) /* one step for the whole call: its entry's instruction did not run alone */
			snprintf(dis, sizeof(dis), "(call run on the target)");
		if (as_json) {
			json_t *src = snr_lines_source_json(lines, s.pc, sym);
			char *src_s = json_dumps(src, JSON_COMPACT | JSON_PRESERVE_ORDER);
			printf("{\"index\":%llu,\"pc\":%llu,\"symbol\":", (unsigned long long)s.index,
			       (unsigned long long)s.pc);
			put_json_string(stdout, sym);
			printf(",\"source\":%s,\"disasm\":", src_s);
			put_json_string(stdout, dis);
			if (partial)
				printf(",\"truncated\":true");
			free(src_s);
			json_decref(src);
			if (s.code_len) {
				printf(",\"code\":\"");
				hex(stdout, s.code, s.code_len);
				printf("\"");
			}
			printf(",\"registers\":{");
			for (unsigned i = 0; i < s.nregs; i++) {
				printf("%s\"%s\":\"", i ? "," : "", regs[s.regs[i].reg].name);
				hex_le(stdout, s.regs[i].val, regs[s.regs[i].reg].size);
				printf("\"");
			}
			printf("},\"memory\":[");
			for (unsigned i = 0; i < s.nmem; i++) {
				printf("%s{\"space\":%u,\"chip\":%u,\"addr\":%llu,\"len\":%llu,\"data\":\"", i ? "," : "",
				       s.mem[i].space, s.mem[i].chip, (unsigned long long)s.mem[i].addr,
				       (unsigned long long)s.mem[i].len);
				hex(stdout, s.mem[i].data, s.mem[i].len);
				printf("\"}");
			}
			printf("]");
			if (s.npost_regs) {
				printf(",\"post_registers\":{");
				for (unsigned i = 0; i < s.npost_regs; i++) {
					printf("%s\"%s\":\"", i ? "," : "", regs[s.post_regs[i].reg].name);
					hex_le(stdout, s.post_regs[i].val, regs[s.post_regs[i].reg].size);
					printf("\"");
				}
				printf("}");
			}
			if (s.npost_mem) {
				printf(",\"post_memory\":[");
				for (unsigned i = 0; i < s.npost_mem; i++) {
					printf("%s{\"space\":%u,\"chip\":%u,\"addr\":%llu,\"len\":%llu,\"data\":\"",
					       i ? "," : "", s.post_mem[i].space, s.post_mem[i].chip,
					       (unsigned long long)s.post_mem[i].addr, (unsigned long long)s.post_mem[i].len);
					hex(stdout, s.post_mem[i].data, s.post_mem[i].len);
					printf("\"}");
				}
				printf("]");
			}
			if (s.unread)
				printf(",\"unread\":true");
			if (s.call)
				printf(",\"call\":true");
			printf("}\n");
		} else {
			printf("%8llu  %#10llx  %-24s %-36s", (unsigned long long)s.index, (unsigned long long)s.pc, sym,
			       dis);
			const struct snr_place *place = snr_lines_find(lines, s.pc);
			char where[400];
			if (place)
				printf(" at %s", snr_place_text(place, where, sizeof(where)));
			for (unsigned i = 0; i < s.nregs; i++) {
				printf(" %s=", regs[s.regs[i].reg].name);
				hex_le(stdout, s.regs[i].val, regs[s.regs[i].reg].size);
			}
			for (unsigned i = 0; i < s.nmem; i++) {
				printf(" mem[%#llx+%llu]", (unsigned long long)s.mem[i].addr, (unsigned long long)s.mem[i].len);
				if (s.mem[i].len <= 16) {
					putchar('=');
					hex(stdout, s.mem[i].data, s.mem[i].len);
				}
			}
			for (unsigned i = 0; i < s.npost_regs; i++) {
				printf(" after:%s=", regs[s.post_regs[i].reg].name);
				hex_le(stdout, s.post_regs[i].val, regs[s.post_regs[i].reg].size);
			}
			for (unsigned i = 0; i < s.npost_mem; i++) {
				printf(" after:mem[%#llx+%llu]", (unsigned long long)s.post_mem[i].addr,
				       (unsigned long long)s.post_mem[i].len);
				if (s.post_mem[i].len <= 16) {
					putchar('=');
					hex(stdout, s.post_mem[i].data, s.post_mem[i].len);
				}
			}
			if (s.unread)
				printf(" unread");
			if (s.call)
				printf(" call");
			putchar('\n');
		}
	}
	free(codes);
	snr_lines_free(lines);
	if (self)
		isa->destroy(self);
	if (rc < 0) {
		snr_err("trace: %s", snr_trace_error(t));
		return 1;
	}
	return 0;
}

static int cmd_verify(struct snr_trace *t, const char *path)
{
	struct counts c;
	if (scan(t, &c) < 0) {
		snr_err("trace: %s", snr_trace_error(t));
		return 1;
	}
	if (snr_trace_truncated(t) && snr_trace_end_json(t)) {
		/* an END that contradicts the file (lib/snr_trace.c, check_end) */
		char partial[300];
		printf("%s: refused: it holds %s\n", path, snr_trace_partial_text(t, partial, sizeof(partial)));
		return 3;
	}
	if (snr_trace_truncated(t)) {
		if (c.steps)
			printf("%s: truncated at instruction %llu: the recorder stopped before writing its end; "
			       "instructions 0..%llu are intact and replayable\n",
			       path, (unsigned long long)c.steps, (unsigned long long)c.steps - 1);
		else
			printf("%s: truncated at instruction 0: the recorder stopped before a whole chunk of steps "
			       "was written; no instruction is replayable\n",
			       path);
		return 3;
	}
	const uint8_t *const *dregs;
	size_t nb;
	const struct snr_trace_mem *blocks;
	const uint64_t *hashes;
	json_t *end = json_loads(snr_trace_end_json(t), 0, NULL);
	json_int_t want = json_integer_value(json_object_get(end, "instructions"));
	const char *reason = json_string_value(json_object_get(end, "reason"));
	int rc = 0;
	if ((uint64_t)want != c.steps) {
		snr_err("trace: %s: END says %lld instructions, the steps hold %llu", path, (long long)want,
			(unsigned long long)c.steps);
		rc = SNR_EXIT_PARTIAL;
	} else if (reason && !strcmp(reason, "count") && !snr_trace_digest(t, &dregs, &nb, &blocks, &hashes)) {
		snr_err("trace: %s: complete but without the end-state digest", path);
		rc = SNR_EXIT_PARTIAL;
	} else {
		printf("%s: ok: %llu instructions, ended by %s, every chunk intact\n", path, (unsigned long long)c.steps,
		       reason ? reason : "?");
	}
	json_decref(end);
	return rc;
}

/* info of a pod recording (record --pod): its chips, each checked to
 * belong to it (lib/snr_pod.h). */
static int pod_info(const char *path, int as_json)
{
	struct snr_pod pod;
	char err[1200];
	if (snr_pod_open(path, &pod, err, sizeof(err))) {
		snr_err("trace: %s", err);
		return 1;
	}
	if (as_json) {
		json_t *o = json_object(), *chips = json_array();
		json_object_set_new(o, "pod", json_string(path));
		for (unsigned k = 0; k < pod.chips; k++) {
			json_t *c = json_object();
			json_object_set_new(c, "chip", json_integer(k));
			json_object_set_new(c, "instructions", json_integer((json_int_t)pod.chip[k].instructions));
			json_object_set_new(c, "end", json_string(pod.chip[k].end));
			json_object_set_new(c, "breakpoint_address", json_integer((json_int_t)pod.chip[k].breakpoint));
			json_object_set_new(c, "trace", json_string(pod.chip[k].path));
			json_array_append_new(chips, c);
		}
		json_object_set_new(o, "chips", chips);
		char *s = json_dumps(o, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
		puts(s);
		free(s);
		json_decref(o);
	} else {
		printf("pod          %s: %u chip%s, each chip's window from its own hit of the breakpoint (0x%llx)\n", path,
		       pod.chips, pod.chips == 1 ? "" : "s", (unsigned long long)pod.chip[0].breakpoint);
		printf("%-5s %12s  %-9s %s\n", "chip", "instructions", "end", "trace");
		for (unsigned k = 0; k < pod.chips; k++)
			printf("%-5u %12llu  %-9s %s\n", k, (unsigned long long)pod.chip[k].instructions, pod.chip[k].end,
			       pod.chip[k].path);
	}
	snr_pod_free(&pod);
	return 0;
}

/* `snr trace finish J [-o T]` */
static int cmd_finish(int argc, char **argv)
{
	const char *journal = NULL, *out = NULL;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "-o") && i + 1 < argc && !out) {
			out = argv[++i];
		} else if (argv[i][0] == '-' || journal) {
			snr_err("trace finish: unexpected argument '%s'", argv[i]);
			return 2;
		} else {
			journal = argv[i];
		}
	}
	if (!journal) {
		snr_err("trace finish: give a recording's journal (T.snrt.partial)");
		fputs(trace_usage, stderr);
		return 2;
	}
	size_t n = strlen(journal);
	char *def = NULL;
	if (!out) {
		if (n <= 8 || strcmp(journal + n - 8, ".partial")) {
			snr_err("trace finish: %s is not named T.snrt.partial: give the trace's path with -o", journal);
			return 2;
		}
		def = snr_xstrdup(journal);
		def[n - 8] = 0;
		out = def;
	}
	char err[700];
	uint64_t steps = 0;
	int rc = snr_trace_finish_journal(journal, out, &steps, err, sizeof(err));
	if (rc)
		snr_err("trace finish: %s", err);
	else
		printf("%s: %llu instructions, written from %s (removed)\n", out, (unsigned long long)steps, journal);
	free(def);
	return rc ? 1 : 0;
}

int snr_cmd_trace(int argc, char **argv)
{
	if (snr_wants_help(argc, argv)) {
		fputs(trace_usage, stdout);
		return 0;
	}
	if (argc >= 2 && !strcmp(argv[1], "finish"))
		return cmd_finish(argc, argv);
	if (argc < 2 || (strcmp(argv[1], "info") && strcmp(argv[1], "dump") && strcmp(argv[1], "verify"))) {
		if (argc < 2)
			snr_err("trace: give a subcommand: info, dump, verify or finish");
		else
			snr_err("trace: unknown subcommand '%s' (info, dump, verify, finish)", argv[1]);
		fputs(trace_usage, stderr);
		return 2;
	}
	if (argc < 3) {
		snr_err("trace %s: give a trace (T.snrt)", argv[1]);
		fputs(trace_usage, stderr);
		return 2;
	}
	const char *sub = argv[1], *path = NULL;
	int as_json = 0;
	uint64_t limit = 0;
	for (int i = 2; i < argc; i++) {
		if (!strcmp(argv[i], "--json")) {
			as_json = 1;
		} else if (!strcmp(argv[i], "--limit") && i + 1 < argc) {
			if (!snr_parse_u64(argv[++i], &limit, true)) {
				snr_err("trace: --limit needs a count");
				return 2;
			}
		} else if (argv[i][0] == '-' || path) {
			snr_err("trace: unexpected argument '%s'", argv[i]);
			return 2;
		} else {
			path = argv[i];
		}
	}
	if (!path) {
		snr_err("trace %s: give a trace (T.snrt)", sub);
		fputs(trace_usage, stderr);
		return 2;
	}
	char err[600];
	if (!strcmp(sub, "info") && snr_pod_is(path))
		return pod_info(path, as_json);
	struct snr_trace *t = snr_trace_open(path, err, sizeof(err));
	if (!t) {
		snr_err("trace: %s", err);
		return 1;
	}
	/* info describes a partial trace, then fails; dump refuses it first */
	char partial[256];
	bool refused = strcmp(sub, "verify") && snr_trace_partial_text(t, partial, sizeof(partial)) &&
		       snr_partial_check(path, partial, err, sizeof(err));
	if (refused && !strcmp(sub, "dump")) {
		snr_err("trace: %s", err);
		snr_trace_close(t);
		return SNR_EXIT_PARTIAL;
	}
	int rc = !strcmp(sub, "info") ? cmd_info(t, path, as_json)
		 : !strcmp(sub, "dump") ? cmd_dump(t, path, as_json, limit)
					: cmd_verify(t, path);
	snr_trace_close(t);
	if (refused && rc == 0) {
		snr_err("trace: %s", err);
		rc = SNR_EXIT_PARTIAL;
	}
	return rc;
}
