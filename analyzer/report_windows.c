/*
 * report_windows.c: `snr report SET|FILE... -o OUT.html`, the report of
 * several windows (a trace or metrics set, lib/snr_set.h, or several files):
 * each window's own report, the single-window page of report.c, written
 * beside OUT as OUT-wK.html (run in a child process: one window's memory at
 * a time), and OUT itself, the page of them all: a table of every window's,
 * every group's (a set is a group, e.g. prefill and decode) and all windows'
 * cycles, IPC, stall cycles by cause and DMAs; a chart of each window's
 * cycles by cause and one of each group's share of cycles by cause; the
 * hottest source lines of all windows together and of each group (annotate's
 * figures added up per pc, annotate.h); then a section per window with its
 * figures, its hottest lines and the link to its page.
 *
 * The figures of a window come from its own run (its replay summary, as
 * `snr replay` prints it) and its annotate pass, which reads the window a
 * second time (a trace is replayed again; a metrics set reads faster).
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "analyzer/annotate.h"
#include "analyzer/pod.h"
#include "analyzer/report_pod.h"
#include "analyzer/windows.h"
#include "lib/snr_outfile.h"
#include "lib/snr_set.h"
#include "lib/snr_util.h"

extern const char snr_echarts_js[];
extern const unsigned long snr_echarts_js_len;

/* OUT.html -> OUT-wK.html (the page of window k) */
static char *window_page(const char *out, size_t k)
{
	size_t n = strlen(out), base = n > 5 && !strcmp(out + n - 5, ".html") ? n - 5 : n;
	char *p = snr_xmalloc(base + 32);
	snprintf(p, base + 32, "%.*s-w%zu.html", (int)base, out, k);
	return p;
}

static const char *base_name(const char *p)
{
	const char *s = strrchr(p, '/');
	return s ? s + 1 : p;
}

static void lines_table(FILE *f, const struct an_annot *a, size_t top)
{
	fputs("<table class=\"lines\"><tr><th>line</th><th class=\"num\">cycles</th><th class=\"num\">share</th>"
	      "<th class=\"num\">executions</th>",
	      f);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, "<th class=\"num\">%s</th>", snr_stall_cause_name((enum snr_stall_cause)c));
	fputs("</tr>\n", f);
	for (size_t i = 0; i < a->nlines && i < top; i++) {
		const struct an_annot_row *l = &a->lines[i];
		char w[600];
		if (l->file)
			snprintf(w, sizeof(w), "%s:%u (%s)", base_name(l->file), l->line, l->function);
		else
			snprintf(w, sizeof(w), "%s (no line table)", l->function);
		fputs("<tr><td>", f);
		html_text(f, w);
		fprintf(f, "</td><td class=\"num\">%llu</td><td class=\"num\">%.1f%%</td><td class=\"num\">%llu</td>",
			(unsigned long long)l->cycles,
			a->total_cycles ? 100.0 * (double)l->cycles / (double)a->total_cycles : 0.0,
			(unsigned long long)l->executions);
		for (int c = 0; c < SNR_STALL_COUNT; c++)
			fprintf(f, "<td class=\"num\">%llu</td>", (unsigned long long)l->stall[c]);
		fputs("</tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void summary_row(FILE *f, const char *what, const char *group, const json_t *s, const char *link)
{
	long long insns = json_integer_value(json_object_get(s, "instructions"));
	long long cycles = json_integer_value(json_object_get(s, "cycles"));
	fputs("<tr><td>", f);
	if (link) {
		fputs("<a href=\"", f);
		html_text(f, link);
		fputs("\">", f);
	}
	html_text(f, what);
	fputs(link ? "</a></td><td>" : "</td><td>", f);
	html_text(f, group);
	fprintf(f, "</td><td class=\"num\">%lld</td><td class=\"num\">%lld</td><td class=\"num\">%.3f</td>", insns,
		cycles, cycles ? (double)insns / (double)cycles : 0.0);
	json_t *st = json_object_get(s, "stall_cycles");
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, "<td class=\"num\">%lld</td>",
			(long long)json_integer_value(json_object_get(st, snr_stall_cause_name((enum snr_stall_cause)c))));
	fprintf(f, "<td class=\"num\">%lld</td></tr>\n", (long long)json_integer_value(json_object_get(s, "dma_count")));
}

static void summary_head(FILE *f, const char *first)
{
	fprintf(f, "<table class=\"sum\"><tr><th>%s</th><th>group</th><th class=\"num\">instructions</th>"
		   "<th class=\"num\">cycles</th><th class=\"num\">IPC</th>",
		first);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, "<th class=\"num\">%s</th>", snr_stall_cause_name((enum snr_stall_cause)c));
	fputs("<th class=\"num\">DMAs</th></tr>\n", f);
}

/* The charts: each window's cycles by cause (issue: the cycles no stall
 * explains), each group's share of its cycles by cause. */
static const char charts_js[] =
	"(function(){var D=window.SNR_WINDOWS,boxes=[],errors=[];\n"
	"try{var causes=D.causes,cats=['issue'].concat(causes);\n"
	"function parts(s){var st=0,o={};causes.forEach(function(c){o[c]=s.stall_cycles[c]||0;st+=o[c];});"
	"o.issue=Math.max(0,s.cycles-st);return o;}\n"
	"var w=D.windows.filter(function(x){return x.summary;});\n"
	"var c1=echarts.init(document.getElementById('c-windows'),null,{renderer:'svg'});\n"
	"c1.setOption({animation:false,tooltip:{trigger:'axis'},legend:{top:0},grid:{top:40,left:70,right:20,bottom:60},"
	"xAxis:{type:'category',data:w.map(function(x){return x.window+' '+x.group+'#'+x.set_window;}),"
	"axisLabel:{rotate:30}},yAxis:{type:'value',name:'cycles'},"
	"series:cats.map(function(c){return {name:c,type:'bar',stack:'c',data:w.map(function(x){return parts(x.summary)[c];})};})});\n"
	"var c2=echarts.init(document.getElementById('c-groups'),null,{renderer:'svg'});\n"
	"var g=D.groups.concat([Object.assign({group:'together'},D.total)]);\n"
	"c2.setOption({animation:false,tooltip:{trigger:'axis',valueFormatter:function(v){return v.toFixed(1)+'%';}},"
	"legend:{top:0},grid:{top:40,left:70,right:20,bottom:40},"
	"xAxis:{type:'category',data:g.map(function(x){return x.group+' ('+x.windows+')';})},"
	"yAxis:{type:'value',name:'% of cycles',max:100},"
	"series:cats.map(function(c){return {name:c,type:'bar',stack:'s',data:g.map(function(x){"
	"return x.cycles?100*parts(x)[c]/x.cycles:0;})};})});\n"
	"['c-windows','c-groups'].forEach(function(id){var r=document.getElementById(id).getBoundingClientRect();"
	"boxes.push({id:id,x:Math.round(r.left+window.scrollX),y:Math.round(r.top+window.scrollY),w:Math.round(r.width),h:Math.round(r.height)});});\n"
	"}catch(e){errors.push(String(e&&e.stack||e));}\n"
	"if(errors.length){var p=document.getElementById('errors');p.textContent=errors.join('\\n');p.style.display='block';}\n"
	"document.body.setAttribute('data-charts',JSON.stringify(boxes));\n"
	"if(!errors.length)document.body.setAttribute('data-ready','1');})();\n";

int an_report_windows(int nargs, char **args, const char *out_path, const char *config, uint64_t interval,
		      const char *source_dir, uint64_t inline_max)
{
	struct snr_inputs in;
	char err[2048];
	if (snr_inputs_expand(args, nargs, &in, err, sizeof(err))) {
		snr_err("report: %s", err);
		return 1;
	}
	struct an_windows w;
	an_windows_init(&w, &in);
	struct an_annot *a = snr_xcalloc(in.n, sizeof(*a)), together = {0};
	struct snr_source *src = snr_xcalloc(in.n, sizeof(*src));
	char **pages = snr_xcalloc(in.n, sizeof(*pages));
	size_t loaded = 0;
	int rc = 0;
	char num[32], imax[32];
	snprintf(num, sizeof(num), "%llu", (unsigned long long)interval);
	snprintf(imax, sizeof(imax), "%llu", (unsigned long long)inline_max);
	for (; loaded < in.n && !rc; loaded++) {
		size_t i = loaded;
		pages[i] = window_page(out_path, i);
		char *cargv[14];
		int cargc = 0;
		cargv[cargc++] = "report";
		cargv[cargc++] = in.v[i].path;
		cargv[cargc++] = "-o";
		cargv[cargc++] = pages[i];
		cargv[cargc++] = "--inline-max";
		cargv[cargc++] = imax;
		if (config) {
			cargv[cargc++] = "--config";
			cargv[cargc++] = (char *)config;
		}
		if (interval) {
			cargv[cargc++] = "--interval";
			cargv[cargc++] = num;
		}
		if (source_dir) {
			cargv[cargc++] = "--source-dir";
			cargv[cargc++] = (char *)source_dir;
		}
		cargv[cargc] = NULL;
		json_t *sum;
		int crc = an_windows_run(snr_cmd_report, cargc, cargv, NULL, &sum);
		an_windows_set(&w, i, sum);
		json_decref(sum);
		if (crc) {
			snr_err("report: window %zu (%s): its report failed", i, in.v[i].path);
			rc = crc;
			break;
		}
		if (an_annotate_load(&a[i], &src[i], in.v[i].path, config, err, sizeof(err))) {
			snr_err("report: window %zu: %s", i, err);
			rc = 1;
			break;
		}
		an_annot_merge(&together, &a[i]);
	}
	if (rc)
		goto out;

	/* a pod's metrics set: the pod's section (snr analyze pod) */
	json_t *pod = NULL;
	if (nargs == 1 && snr_is_set(args[0])) {
		char man[4096];
		snprintf(man, sizeof(man), "%s/%s", args[0], SNR_SET_MANIFEST);
		json_t *m = json_load_file(man, 0, NULL);
		bool is_pod = json_is_true(json_object_get(m, "pod"));
		json_decref(m);
		int status = 0;
		if (is_pod && !(pod = an_pod_document(args[0], err, sizeof(err), &status))) {
			snr_err("report: %s", err);
			rc = status;
			goto out;
		}
	}
	json_t *wj = an_windows_json(&w);
	json_t *causes = json_array();
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		json_array_append_new(causes, json_string(snr_stall_cause_name((enum snr_stall_cause)c)));
	json_object_set_new(wj, "causes", causes);
	json_object_set_new(wj, "schema", json_string("snr.report.windows/1"));
	char *js = json_dumps(wj, JSON_COMPACT);

	struct snr_outfile of;
	char oerr[600];
	FILE *f = snr_outfile_fopen(&of, out_path, oerr, sizeof(oerr));
	if (!f) {
		snr_err("report: %s", oerr);
		free(js);
		json_decref(wj);
		json_decref(pod);
		rc = 1;
		goto out;
	}
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>snr report: %zu windows"
		   "</title>\n<style>\n"
		   "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\n"
		   "h1{font-size:22px}h2{font-size:17px;margin-top:28px}h3{font-size:15px}\n"
		   "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #eee}\n"
		   ".num{text-align:right;font-variant-numeric:tabular-nums}.chart{width:1100px;height:360px}\n"
		   "tr.group td{background:#f6f6f6}tr.total td{background:#eef3ff;font-weight:600}\n"
		   "#errors{display:none;color:#b00;white-space:pre}\n"
		   "</style>\n<script>\n",
		in.n);
	fwrite(snr_echarts_js, 1, snr_echarts_js_len, f);
	fprintf(f, "\n</script>\n</head><body>\n<h1>snr report: %zu windows</h1>\n<pre id=\"errors\"></pre>\n", in.n);
	fputs("<p>Each window is replayed on its own (its own snapshot, its own cycle 0); the groups and the total add "
	      "their windows' cycles, stall cycles and DMAs (IPC from the sums). Each window's full report (DMA "
	      "timeline, busy intervals, VMEM, suggestions, source page) is its own page, linked below.</p>\n",
	      f);
	fputs("<h2 id=\"windows\">Windows, groups and together</h2>\n", f);
	summary_head(f, "window");
	for (size_t i = 0; i < in.n; i++) {
		char what[64];
		snprintf(what, sizeof(what), "%zu", i);
		summary_row(f, what, in.v[i].group, w.summary[i], base_name(pages[i]));
	}
	size_t gi;
	json_t *g;
	json_array_foreach(json_object_get(wj, "groups"), gi, g) {
		char what[64];
		snprintf(what, sizeof(what), "%lld windows", (long long)json_integer_value(json_object_get(g, "windows")));
		fputs("<tbody class=\"group\">", f);
		summary_row(f, what, json_string_value(json_object_get(g, "group")), g, NULL);
		fputs("</tbody>", f);
	}
	{
		char what[64];
		snprintf(what, sizeof(what), "%zu windows", in.n);
		fputs("<tbody class=\"total\">", f);
		summary_row(f, what, "together", json_object_get(wj, "total"), NULL);
		fputs("</tbody>", f);
	}
	fputs("</table>\n", f);
	if (pod)
		an_report_pod_section(f, pod);
	fputs("<h2>Cycles of each window by cause</h2><div id=\"c-windows\" class=\"chart\"></div>\n"
	      "<h2>Share of cycles by cause, per group and together</h2><div id=\"c-groups\" class=\"chart\"></div>\n",
	      f);
	fputs("<h2 id=\"hottest\">Hottest source lines, all windows together</h2>\n", f);
	lines_table(f, &together, 20);
	json_array_foreach(json_object_get(wj, "groups"), gi, g) {
		const char *name = json_string_value(json_object_get(g, "group"));
		struct an_annot ga = {0};
		for (size_t i = 0; i < in.n; i++)
			if (!strcmp(in.v[i].group, name))
				an_annot_merge(&ga, &a[i]);
		fputs("<h3>Hottest lines of group ", f);
		html_text(f, name);
		fputs("</h3>\n", f);
		lines_table(f, &ga, 10);
		an_annot_free(&ga);
	}
	for (size_t i = 0; i < in.n; i++) {
		fprintf(f, "<h2 id=\"w%zu\">Window %zu: ", i, i);
		html_text(f, in.v[i].group);
		fprintf(f, " #%llu", (unsigned long long)in.v[i].set_window);
		if (in.v[i].hit >= 0)
			fprintf(f, ", breakpoint hit %lld", (long long)in.v[i].hit);
		fputs("</h2>\n<p>", f);
		html_text(f, in.v[i].path);
		fputs(": <a href=\"", f);
		html_text(f, base_name(pages[i]));
		fputs("\">its full report</a></p>\n", f);
		summary_head(f, "window");
		char what[64];
		snprintf(what, sizeof(what), "%zu", i);
		summary_row(f, what, in.v[i].group, w.summary[i], NULL);
		fputs("</table>\n", f);
		lines_table(f, &a[i], 10);
	}
	fputs("<p>Definitions: docs/analyses.md. Charts: Apache ECharts (Apache-2.0).</p>\n<script>\nwindow.SNR_WINDOWS = ",
	      f);
	script_json(f, js);
	if (pod) {
		char *pj = json_dumps(pod, JSON_COMPACT);
		fputs(";\nwindow.SNR_POD = ", f);
		script_json(f, pj);
		free(pj);
		fprintf(f, ";\n%s", an_report_pod_js);
		json_decref(pod);
	}
	fprintf(f, ";\n%s</script>\n</body></html>\n", charts_js);
	free(js);
	json_decref(wj);
	if (snr_outfile_close(&of, true, oerr, sizeof(oerr))) {
		snr_err("report: %s", oerr);
		rc = 1;
		goto out;
	}
	fprintf(stderr, "report: %s (%zu windows; each window's page beside it: %s ... %s)\n", out_path, in.n,
		base_name(pages[0]), base_name(pages[in.n - 1]));
out:
	an_annot_free(&together);
	for (size_t i = 0; i < in.n; i++) { /* both safe on a window never loaded */
		an_annot_free(&a[i]);
		snr_source_close(&src[i]);
		free(pages[i]);
	}
	free(pages);
	free(a);
	free(src);
	an_windows_free(&w);
	snr_inputs_free(&in);
	return rc;
}
