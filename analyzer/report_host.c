/*
 * report_host.c: `snr report H.snrh -o R.html`, the host page of the report:
 * what a host trace (`snr host record`) says, self-contained (the vendored
 * ECharts): each thread's on- and off-CPU time (a chart and the table of
 * `snr host report`), its buckets, the progress points, on/off-device, and
 * the causal profile (`snr host causal`): the ranking per progress point,
 * the hot names off the critical path and one plot per candidate of the
 * predicted effect against its speedup, as COZ draws them.
 *
 * The figures are those of `snr host report --json` (snrh_report_doc) and
 * `snr host causal --json` (snrh_causal_json), drawn by the same code as
 * `snr host causal --html` (analyzer/causal_page.c).
 */
#include "analyzer/report_host.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "analyzer/causal.h"
#include "analyzer/causal_page.h"
#include "analyzer/host_device_lanes.h"
#include "analyzer/host_report.h"
#include "lib/snr_host_trace.h"
#include "lib/snr_outfile.h"
#include "lib/snr_partial.h"
#include "lib/snr_util.h"

extern const char snr_echarts_js[];
extern const unsigned long snr_echarts_js_len;

bool an_is_host_trace(const char *path)
{
	size_t n = strlen(path);
	if (n > 5 && !strcmp(path + n - 5, ".snrh"))
		return true;
	FILE *f = fopen(path, "rb");
	if (!f)
		return false;
	char magic[8] = {0};
	bool yes = fread(magic, 1, sizeof(magic), f) == sizeof(magic) && !memcmp(magic, SNRH_MAGIC, sizeof(SNRH_MAGIC));
	fclose(f);
	return yes;
}

static double ms(const json_t *o, const char *key)
{
	return (double)json_integer_value(json_object_get(o, key)) / 1e6;
}

static void summary_write(FILE *f, const struct snrh_trace *t, const char *path, const char *truncated)
{
	json_t *m = t->meta, *cmd = json_object_get(m, "command");
	uint64_t t0 = (uint64_t)json_integer_value(json_object_get(m, "t_start_ns"));
	uint64_t t1 = (uint64_t)json_integer_value(json_object_get(m, "t_end_ns"));
	const char *exe = json_string_value(json_object_get(m, "exe"));
	fputs("<table id=\"host-summary\">\n<tr><th>host trace</th><td>", f);
	html_text(f, path);
	fputs("</td></tr>\n<tr><th>process</th><td>", f);
	fprintf(f, "pid %lld, ", (long long)json_integer_value(json_object_get(m, "pid")));
	html_text(f, json_array_size(cmd) ? json_string_value(json_array_get(cmd, 0)) : exe ? exe : "?");
	fprintf(f, "</td></tr>\n<tr><th>recorded</th><td>%.3f s; on-CPU sampled at %lld Hz; off-CPU stacks for blocks "
		   ">= %lld us; %zu threads, %zu samples, %zu off-CPU intervals, %zu CUPTI records</td></tr>\n",
		t1 > t0 ? (double)(t1 - t0) / 1e9 : 0.0, (long long)json_integer_value(json_object_get(m, "hz")),
		(long long)json_integer_value(json_object_get(m, "min_offcpu_us")), t->threads.n, t->samples.n,
		t->offcpu.n, t->device.n);
	if (truncated) {
		fputs("<tr id=\"host-truncated\"><th>TRUNCATED</th><td>", f);
		html_text(f, truncated);
		fputs("; this page covers what was written before</td></tr>\n", f);
	}
	fputs("</table>\n", f);
}

static void threads_write(FILE *f, const json_t *doc)
{
	fputs("<h2 id=\"host-threads\">Threads: on and off CPU</h2>\n<p>The scheduler's exact totals (every switch); "
	      "off CPU by the state the thread left the CPU in: R preempted, S sleeping (a lock, a condition, a "
	      "wait), D uninterruptible (I/O). Below it, the timeline: each thread's off-CPU intervals (the recorded blocks) "
	      "by state and its on-CPU samples, over the recording.</p>\n<div id=\"c-host-threads\" class=\"chart\"></div>\n"
	      "<div id=\"c-host-timeline\" class=\"chart\"></div>\n<p id=\"host-timeline-what\"></p>\n"
	      "<table class=\"host-threads\"><tr><th>thread</th><th class=\"num\">tid</th><th class=\"num\">on-CPU ms</th>"
	      "<th class=\"num\">off-CPU ms</th><th class=\"num\">R ms</th><th class=\"num\">S ms</th>"
	      "<th class=\"num\">D ms</th><th class=\"num\">other ms</th></tr>\n",
	      f);
	size_t i;
	json_t *th;
	json_array_foreach(json_object_get(doc, "threads"), i, th) {
		json_t *st = json_object_get(th, "offcpu_ns_by_state");
		double s[4], off = 0;
		for (int k = 0; k < 4; k++)
			off += s[k] = (double)json_integer_value(json_array_get(st, (size_t)k)) / 1e6;
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(th, "comm")));
		fprintf(f,
			"</td><td class=\"num\">%lld</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td "
			"class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td "
			"class=\"num\">%.3f</td></tr>\n",
			(long long)json_integer_value(json_object_get(th, "tid")), ms(th, "oncpu_ns"), off, s[0], s[1], s[2],
			s[3]);
	}
	fputs("</table>\n<h3 id=\"host-buckets\">Buckets (gPerf's host side)</h3>\n<p>An instant belongs to the "
	      "outermost probed runtime call around it (H:CTRL, H:WAIT_DEV, ...), else to a file or network system "
	      "call (H:IO), else to the application (H:APP) on CPU; off CPU without a bucket, to what it blocked in "
	      "(in parentheses). On-CPU time per bucket is estimated from the samples (count x 1/Hz); off-CPU time "
	      "is the recorded blocks'.</p>\n<table class=\"host-buckets\"><tr><th>thread</th><th class=\"num\">tid</th>"
	      "<th>bucket</th><th class=\"num\">in-call ms</th><th class=\"num\">on-CPU samples</th>"
	      "<th class=\"num\">on-CPU ms (estimate)</th><th class=\"num\">off-CPU ms</th></tr>\n",
	      f);
	json_t *b;
	json_array_foreach(json_object_get(doc, "buckets"), i, b) {
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(b, "comm")));
		fprintf(f, "</td><td class=\"num\">%lld</td><td>", (long long)json_integer_value(json_object_get(b, "tid")));
		html_text(f, json_string_value(json_object_get(b, "bucket")));
		fprintf(f,
			"</td><td class=\"num\">%.3f</td><td class=\"num\">%lld</td><td class=\"num\">~%.3f</td><td "
			"class=\"num\">%.3f</td></tr>\n",
			ms(b, "in_call_ns"), (long long)json_integer_value(json_object_get(b, "oncpu_samples")),
			json_number_value(json_object_get(b, "oncpu_ms_estimated")), ms(b, "offcpu_ns"));
	}
	fputs("</table>\n", f);
}

static void progress_write(FILE *f, const json_t *doc)
{
	const json_t *pa = json_object_get(doc, "progress");
	fputs("<h2 id=\"host-progress\">Progress points</h2>\n", f);
	if (!json_array_size(pa)) {
		fputs("<p id=\"host-no-progress\">none recorded: <code>snr host record --progress SYM</code> counts a unit "
		      "at each call of SYM, <code>--latency BEGIN:END</code> times each pair (docs/host.md)</p>\n",
		      f);
		return;
	}
	fputs("<p>Measured: a --progress point's units and their inter-arrival time, a --latency point's pairs and "
	      "their latency (end - begin); the rate is units per second between the first and the last.</p>\n"
	      "<table class=\"host-progress\"><tr><th>point</th><th>kind</th><th class=\"num\">count</th>"
	      "<th class=\"num\">per second</th><th>of</th><th class=\"num\">p50 ms</th><th class=\"num\">p90 ms</th>"
	      "<th class=\"num\">p99 ms</th><th class=\"num\">max ms</th><th class=\"num\">unmatched</th></tr>\n",
	      f);
	size_t i;
	json_t *p;
	json_array_foreach(pa, i, p) {
		const char *kind = json_string_value(json_object_get(p, "kind"));
		bool lat = kind && !strcmp(kind, "latency");
		const json_t *d = json_object_get(p, lat ? "latency_ms" : "interarrival_ms");
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(p, "name")));
		fprintf(f, "</td><td>%s</td><td class=\"num\">%lld</td><td class=\"num\">%.3f</td><td>%s</td>",
			lat ? "latency" : "progress", (long long)json_integer_value(json_object_get(p, "count")),
			json_number_value(json_object_get(p, "per_second")), lat ? "latency" : "inter-arrival");
		static const char *const q[] = {"p50", "p90", "p99", "max"};
		for (int k = 0; k < 4; k++)
			if (json_is_object(d)) /* fewer than two units: no distribution */
				fprintf(f, "<td class=\"num\">%.3f</td>", json_number_value(json_object_get(d, q[k])));
			else
				fputs("<td class=\"num\">-</td>", f);
		fprintf(f, "<td class=\"num\">%lld</td></tr>\n", (long long)json_integer_value(json_object_get(p, "unmatched")));
	}
	fputs("</table>\n", f);
}

static void device_write(FILE *f, const json_t *doc)
{
	const json_t *od = json_object_get(doc, "on_off_device"), *devs = json_object_get(od, "devices");
	fputs("<h2 id=\"host-device\">On and off the device</h2>\n", f);
	if (!json_array_size(devs)) {
		fputs("<p id=\"host-no-device\">no device activity in this trace (no CUPTI file merged, no TA1 runtime's "
		      "launches probed)</p>\n",
		      f);
		return;
	}
	fputs("<p>Measured per device over its window (first to last record): the time some work ran on it, split "
	      "into compute only, transfers only and both at once; queued: work issued, not yet running; idle: "
	      "nothing issued.</p>\n<table class=\"host-devices\"><tr><th>device</th><th>source</th>"
	      "<th class=\"num\">window ms</th><th class=\"num\">on-device ms</th><th class=\"num\">compute only ms</th>"
	      "<th class=\"num\">transfer only ms</th><th class=\"num\">both ms</th><th class=\"num\">queued ms</th>"
	      "<th class=\"num\">idle ms</th><th class=\"num\">active</th></tr>\n",
	      f);
	size_t i;
	json_t *d;
	json_array_foreach(devs, i, d) {
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(d, "device")));
		fputs("</td><td>", f);
		html_text(f, json_string_value(json_object_get(d, "source")));
		fprintf(f,
			"</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td "
			"class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td "
			"class=\"num\">%.3f</td><td class=\"num\">%.1f%%</td></tr>\n",
			ms(d, "window_ns"), ms(d, "on_device_ns"), ms(d, "compute_only_ns"), ms(d, "transfer_only_ns"),
			ms(d, "both_ns"), ms(d, "queued_ns"), ms(d, "idle_ns"),
			100.0 * json_number_value(json_object_get(d, "active_ratio")));
	}
	fputs("</table>\n<h3>Per piece of work: its time on the device and the host's waits for it</h3>\n"
	      "<table class=\"host-work\"><tr><th>device</th><th>kind</th><th>name</th><th class=\"num\">count</th>"
	      "<th class=\"num\">busy ms</th><th class=\"num\">queued ms</th><th class=\"num\">host waits</th>"
	      "<th class=\"num\">host wait ms</th></tr>\n",
	      f);
	json_array_foreach(json_object_get(od, "work"), i, d) {
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(d, "device")));
		fprintf(f, "</td><td>%s</td><td>", json_string_value(json_object_get(d, "kind")));
		html_text(f, json_string_value(json_object_get(d, "name")));
		fprintf(f,
			"</td><td class=\"num\">%lld</td><td class=\"num\">%.3f</td><td class=\"num\">%.3f</td><td "
			"class=\"num\">%lld</td><td class=\"num\">%.3f</td></tr>\n",
			(long long)json_integer_value(json_object_get(d, "count")), ms(d, "busy_ns"), ms(d, "queued_ns"),
			(long long)json_integer_value(json_object_get(d, "waits")), ms(d, "host_wait_ns"));
	}
	fputs("</table>\n", f);
}

static const char *cand_kind(const struct snrh_causal_cand *cd)
{
	return cd->device_kind == SNRH_CAUSAL_KERNEL	 ? "kernel"
	       : cd->device_kind == SNRH_CAUSAL_TRANSFER ? "transfer"
	       : cd->bucket				 ? "bucket"
							 : "function";
}

/* The ranking per progress point and the hot names off the critical path,
 * as `snr host causal` prints them; then the plots. */
static void causal_write(FILE *f, const struct snrh_causal *c)
{
	char dev[80] = "";
	if (c->device_timelines)
		snprintf(dev, sizeof(dev), " (%zu of them CUPTI devices' timelines)", c->device_timelines);
	fprintf(f,
		"<p id=\"causal-model\">Predicted by replaying the recorded dependency graph: %zu threads%s, %zu runs, "
		"%zu waits, %zu of them ended by a thread of the process; %zu on-CPU samples at %.0f Hz.</p>\n",
		c->threads, dev, c->runs, c->waits, c->dependent_waits, c->samples, c->hz);
	unsigned last = c->nspeedups - 1;
	for (int p = 0; p < c->npoints; p++) {
		fputs("<h3>", f);
		html_text(f, c->points[p].name);
		fprintf(f, ": predicted throughput change if the candidate were N%% faster (ranked at %g%%)</h3>\n",
			c->speedups[last]);
		fputs("<div class=\"rank-box\"><table class=\"causal-rank\" data-point=\"", f);
		html_text(f, c->points[p].name);
		fputs("\"><tr><th class=\"num\">rank</th><th>kind</th><th>candidate</th><th>where</th><th class=\"num\">self</th>",
		      f);
		for (unsigned s = 0; s < c->nspeedups; s++)
			fprintf(f, "<th class=\"num\">%g%%</th>", c->speedups[s]);
		fprintf(f, "<th class=\"num\">p50 lat (at %g%%)</th><th class=\"num\">p99 lat</th></tr>\n", c->speedups[last]);
		for (size_t ci = 0; ci < c->ncands; ci++) {
			const struct snrh_causal_cand *cd = &c->cands[ci];
			char wb[300];
			fprintf(f, "<tr><td class=\"num\">%zu</td><td>%s</td><td>", ci + 1, cand_kind(cd));
			html_text(f, cd->name);
			fputs("</td><td>", f);
			html_text(f, snrh_causal_where(cd, wb, sizeof(wb)));
			if (cd->device_kind)
				fputs("</td><td class=\"num\">-</td>", f);
			else
				fprintf(f, "</td><td class=\"num\">%.1f%%</td>", cd->self_pct);
			for (unsigned s = 0; s < c->nspeedups; s++)
				fprintf(f, "<td class=\"num\">%+.1f%%</td>",
					cd->effect[(size_t)s * (size_t)c->npoints + (size_t)p].throughput_pct);
			const struct snrh_causal_effect *e = &cd->effect[(size_t)last * (size_t)c->npoints + (size_t)p];
			fprintf(f, "<td class=\"num\">%+.1f%%</td><td class=\"num\">%+.1f%%</td></tr>\n", e->latency_p50_pct,
				e->latency_p99_pct);
		}
		fputs("</table></div>\n", f);
	}
	int said = 0;
	for (size_t ci = 0; ci < c->ncands; ci++) {
		const struct snrh_causal_cand *cd = &c->cands[ci];
		if (!snrh_causal_off_path(c, cd))
			continue;
		if (!said++)
			fputs("<h3>Off the critical path</h3>\n<p>Hot, yet speeding them up gains nothing: what the progress "
			      "waits for runs elsewhere meanwhile.</p>\n<ul id=\"causal-off-path\">\n",
			      f);
		char wb[300];
		fprintf(f, "<li data-name=\"");
		html_text(f, cd->name);
		fprintf(f, "\">%s ", cand_kind(cd));
		html_text(f, cd->name);
		fputs(" (", f);
		html_text(f, snrh_causal_where(cd, wb, sizeof(wb)));
		if (cd->device_kind)
			fprintf(f, ", %.1f%% of the device's window)", cd->device_pct);
		else
			fprintf(f, ", %.1f%% of on-CPU samples)", cd->self_pct);
		fprintf(f, ": %g%% faster changes no progress point's throughput or median latency by 1%% or more</li>\n",
			c->speedups[last]);
	}
	if (said)
		fputs("</ul>\n", f);
	else
		fputs("<p id=\"causal-off-path-none\">No hot function or device work is off the critical path.</p>\n", f);
	fputs("<h3>Effect against speedup, per candidate</h3>\n", f);
	snrh_causal_note_write(f);
	fputs("<div id=\"plots\"></div>\n", f);
	snrh_causal_data_write(f, c);
}

/* The timeline's data: each thread a lane, its off-CPU intervals by state
 * and its on-CPU samples, in ms from the trace's start. Past TIMELINE_MAX
 * of either, the longest intervals (the samples evenly thinned) are kept
 * and the page says how many of how many it draws. */
#define TIMELINE_MAX 20000

static int offcpu_longer(const void *a, const void *b)
{
	const struct snrh_offcpu *x = *(const struct snrh_offcpu *const *)a, *y = *(const struct snrh_offcpu *const *)b;
	uint64_t dx = x->end - x->start, dy = y->end - y->start;
	return dx < dy ? 1 : dx > dy ? -1 : 0;
}

static json_t *timeline_json(const struct snrh_trace *t, const struct snrh_ondev *od)
{
	uint64_t t0 = (uint64_t)json_integer_value(json_object_get(t->meta, "t_start_ns"));
	uint64_t t1 = (uint64_t)json_integer_value(json_object_get(t->meta, "t_end_ns"));
	json_t *lanes = json_array(), *iv = json_array(), *smp = json_array();
	for (size_t i = 0; i < t->threads.n; i++) {
		char name[96];
		snprintf(name, sizeof(name), "%s %u", snrh_str(t, t->threads.v[i].comm), t->threads.v[i].tid);
		json_array_append_new(lanes, json_string(name));
	}
	const struct snrh_offcpu **v = snr_xcalloc(t->offcpu.n + 1, sizeof(*v));
	for (size_t i = 0; i < t->offcpu.n; i++)
		v[i] = &t->offcpu.v[i];
	if (t->offcpu.n > TIMELINE_MAX)
		snr_qsort(v, t->offcpu.n, sizeof(*v), offcpu_longer);
	for (size_t i = 0; i < t->offcpu.n && i < TIMELINE_MAX; i++)
		for (size_t l = 0; l < t->threads.n; l++)
			if (t->threads.v[l].tid == v[i]->tid) {
				json_array_append_new(iv, json_pack("[I, f, f, I]", (json_int_t)l,
								    (double)(v[i]->start - t0) / 1e6,
								    (double)(v[i]->end - t0) / 1e6, (json_int_t)(v[i]->state & 3)));
				break;
			}
	free(v);
	size_t step = t->samples.n > TIMELINE_MAX ? (t->samples.n + TIMELINE_MAX - 1) / TIMELINE_MAX : 1;
	for (size_t i = 0; i < t->samples.n; i += step)
		for (size_t l = 0; l < t->threads.n; l++)
			if (t->threads.v[l].tid == t->samples.v[i].tid) {
				json_array_append_new(smp, json_pack("[I, f]", (json_int_t)l,
								     (double)(t->samples.v[i].ts - t0) / 1e6));
				break;
			}
	return json_pack("{s:o, s:o, s:o, s:I, s:I, s:f, s:o}", "lanes", lanes, "offcpu", iv, "samples", smp,
			 "offcpu_total", (json_int_t)t->offcpu.n, "samples_total", (json_int_t)t->samples.n, "span_ms",
			 t1 > t0 ? (double)(t1 - t0) / 1e6 : 0.0, "device",
			 snrh_device_lanes_json(t, od, t0, TIMELINE_MAX));
}

/* The timeline: per thread, its off-CPU intervals as bars colored by state
 * and its on-CPU samples as ticks; below the threads, a lane per device
 * (CUPTI stream, TA1 chip) with its kernels and transfers, each named in its
 * tooltip; each host wait for the device outlined on its thread's lane and
 * joined by a line to the end of the work that ended it. Zoom with the wheel
 * or the slider. */
static const char timeline_js[] =
	"(function(){var L=window.SNR_HOST_TL,D=L.device,el=document.getElementById('c-host-timeline');\n"
	"var col=HOST_STATE_COLORS,st=['R (preempted)','S (sleeping)','D (uninterruptible)','other'];\n"
	"var nt=L.lanes.length,lanes=L.lanes.concat(D.lanes);\n"
	"el.style.height=Math.max(180,(D.lanes.length?116:90)+30*lanes.length)+'px';\n"
	"var esc=function(s){return String(s).replace(/[&<>\"']/g,function(c){return '&#'+c.charCodeAt(0)+';';});};\n"
	"var f3=function(x){return x.toFixed(3);};\n"
	"var bar=function(fill,stroke,hk){return function(p,api){var l=api.value(0),a=api.coord([api.value(1),l]),\n"
	" b=api.coord([api.value(2),l]),h=api.size([0,1])[1]*hk;return {type:'rect',shape:{x:a[0],y:a[1]-h/2,\n"
	" width:Math.max(b[0]-a[0],1),height:h},style:stroke?{fill:'none',stroke:stroke,lineWidth:1.5}:{fill:fill}};};};\n"
	"var series=st.map(function(n,k){return {name:'off CPU, '+n,type:'custom',renderItem:bar(col[k],null,0.6),\n"
	" encode:{x:[1,2],y:0},itemStyle:{color:col[k]},data:L.offcpu.filter(function(v){return v[3]===k;})};});\n"
	"series.unshift({name:'on CPU (a sample)',type:'custom',itemStyle:{color:'#fac858'},encode:{x:1,y:0},\n"
	" data:L.samples,renderItem:function(p,api){var a=api.coord([api.value(1),api.value(0)]),h=api.size([0,1])[1]*0.6;\n"
	"  return {type:'rect',shape:{x:a[0],y:a[1]-h/2,width:1,height:h},style:{fill:'#fac858'}};}});\n"
	/* the device's work: [lane, start, end, index into D.work] */
	"var workTip=function(p){var w=D.work[p.data[3]],t=esc(w[4])+'<br>'+esc(D.lanes[w[0]])+': '+f3(w[2]-w[1])+\n"
	" ' ms ('+f3(w[1])+' to '+f3(w[2])+' ms)';if(w[3])t+='<br>transfer'+(w[9]?', '+esc(w[9]):'')+\n"
	" (w[5]?', '+w[5]+' bytes':'');if(w[6])t+='<br>launched by '+esc(w[6]);\n"
	" if(w[7])t+=(w[6]?' ':'<br>')+(D.lane_source[w[0]]==='CUPTI'?'(correlation id '+w[7]+')':'(launch #'+w[7]+')');\n"
	" if(w[1]>w[8])t+='<br>queued '+f3(w[1]-w[8])+' ms';return t;};\n"
	"['compute (kernel)','transfer'].forEach(function(n,x){series.push({name:'device: '+n,type:'custom',\n"
	" renderItem:bar(x?'#3ba272':'#73c0de',null,0.6),encode:{x:[1,2],y:0},itemStyle:{color:x?'#3ba272':'#73c0de'},\n"
	" tooltip:{formatter:workTip},data:D.work.map(function(w,i){return [w[0]+nt,w[1],w[2],i,w[3]];})\n"
	"  .filter(function(v){return v[4]===x;})});});\n"
	/* the host's waits for the device: [thread lane, start, end, index into D.waits] */
	"var waitTip=function(p){var v=D.waits[p.data[3]],w=v[4]>=0?D.work[v[4]]:null;\n"
	" return esc(v[3])+' (a host wait for the device)<br>'+esc(L.lanes[v[0]])+': '+f3(v[2]-v[1])+' ms ('+f3(v[1])+\n"
	"  ' to '+f3(v[2])+' ms)<br>'+(w?'ended by '+esc(w[4])+' on '+esc(D.lanes[w[0]])+', done at '+f3(w[2])+' ms':\n"
	"  'nothing completed on the device within it');};\n"
	"series.push({name:'host wait for the device',type:'custom',renderItem:bar(null,'#b00',0.85),\n"
	" encode:{x:[1,2],y:0},itemStyle:{color:'#b00'},tooltip:{formatter:waitTip},\n"
	" data:D.waits.map(function(v,i){return [v[0],v[1],v[2],i];})});\n"
	/* each linked wait: a line from its end to the end of the work that ended it */
	"series.push({name:'wait ended by',type:'custom',itemStyle:{color:'#b00'},encode:{x:[1,3],y:[0,2]},\n"
	" tooltip:{formatter:function(p){return waitTip({data:[0,0,0,p.data[4]]});}},renderItem:function(p,api){var a=api.coord([api.value(1),api.value(0)]),\n"
	"  b=api.coord([api.value(3),api.value(2)]);return {type:'line',shape:{x1:a[0],y1:a[1],x2:b[0],y2:b[1]},\n"
	"  style:{stroke:'#b00',lineWidth:1,lineDash:[4,3]}};},\n"
	" data:D.waits.map(function(v,i){var w=D.work[v[4]];return w?[v[0],v[2],w[0]+nt,w[2],i]:null;})\n"
	"  .filter(function(v){return v;})});\n"
	/* device work outside the recording (CUPTI's may start before it) widens the axis */
	"var x0=D.work.reduce(function(m,w){return Math.min(m,w[1]);},0),\n"
	" x1=D.work.reduce(function(m,w){return Math.max(m,w[2]);},L.span_ms);\n"
	"echarts.init(el,null,{renderer:'canvas'}).setOption({animation:false,legend:{top:0},tooltip:{},\n"
	" grid:{top:D.lanes.length?66:40,left:190,right:30,bottom:60},dataZoom:[{type:'slider',xAxisIndex:0},{type:'inside',xAxisIndex:0}],\n"
	" xAxis:{type:'value',name:'ms',min:x0,max:x1},yAxis:{type:'category',data:lanes,inverse:true},series:series});\n"
	"var linked=D.waits.filter(function(v){return v[4]>=0;}).length;\n"
	"document.getElementById('host-timeline-what').textContent='Off-CPU intervals: '+L.offcpu.length+' drawn of '+\n"
	" L.offcpu_total+(L.offcpu.length<L.offcpu_total?' (the longest)':'')+'; on-CPU samples: '+L.samples.length+' drawn of '+\n"
	" L.samples_total+(L.samples.length<L.samples_total?' (evenly thinned)':'')+'.'+(D.lanes.length?' Device work: '+\n"
	" D.work.length+' drawn of '+D.work_total+(D.work.length<D.work_total?' (the longest)':'')+' in '+D.lanes.length+\n"
	" (D.lanes.length>1?' lanes':' lane')+'; host waits for the device: '+D.waits.length+' drawn of '+D.waits_total+', '+linked+\n"
	" ' linked to the work that ended them.':'');})();\n";

/* The threads' chart: on-CPU and each off-CPU state per thread, stacked. */
static const char threads_js[] =
	"var HOST_STATE_COLORS=['#91cc75','#5470c6','#ee6666','#999'];\n"
	"(function(){var H=window.SNR_HOST,st=['R (preempted)','S (sleeping)','D (uninterruptible)','other'];\n"
	"var names=H.threads.map(function(t){return t.comm+' '+t.tid;});\n"
	"var series=[{name:'on CPU',type:'bar',stack:'t',itemStyle:{color:'#fac858'},\n"
	" data:H.threads.map(function(t){return t.oncpu_ns/1e6;})}].concat(\n"
	" st.map(function(n,k){return {name:'off CPU, '+n,type:'bar',stack:'t',itemStyle:{color:HOST_STATE_COLORS[k]},\n"
	"  data:H.threads.map(function(t){return t.offcpu_ns_by_state[k]/1e6;})};}));\n"
	"var el=document.getElementById('c-host-threads');el.style.height=Math.max(160,60+28*names.length)+'px';\n"
	"echarts.init(el,null,{renderer:'svg'}).setOption({animation:false,tooltip:{trigger:'axis'},legend:{top:0},\n"
	" grid:{top:40,left:160,right:30,bottom:30},yAxis:{type:'category',data:names,inverse:true},\n"
	" xAxis:{type:'value',name:'ms'},series:series});})();\n";

int an_report_host(int n, char **paths, const char *out)
{
	char err[700], why[700] = "";
	const char *in = paths[0], *cut = NULL;
	struct snrh_trace t;
	snrh_trace_init(&t);
	json_object_clear(t.meta);
	bool truncated = false;
	for (int i = 0; i < n; i++) { /* later files (CUPTI's) merge into the first, as for `snr host report` */
		bool part = false;
		if (!an_is_host_trace(paths[i])) {
			snr_err("report: %s is not a host trace (.snrh); a host trace's page takes host traces only", paths[i]);
			snrh_trace_free(&t);
			return 2;
		}
		if (snrh_trace_read_partial(&t, paths[i], &part, err, sizeof(err))) {
			snr_err("report: %s", err);
			snrh_trace_free(&t);
			return 1;
		}
		if (part && !cut) { /* err: "PATH: truncated after ...", said below as "PATH is partial: it holds ..." */
			size_t pl = strlen(paths[i]);
			cut = paths[i];
			snprintf(why, sizeof(why), "%s", !strncmp(err, cut, pl) && !strncmp(err + pl, ": ", 2) ? err + pl + 2 : err);
		}
		truncated |= part;
	}
	if (truncated) {
		char what[800];
		snprintf(what, sizeof(what), "what was written before it ended (%s)", why);
		if (snr_partial_check(cut, what, err, sizeof(err))) {
			snr_err("report: %s", err);
			snrh_trace_free(&t);
			return 1;
		}
		snrh_trace_rebuild_threads(&t);
	}
	json_t *doc = snrh_report_doc(&t, truncated, err, sizeof(err));
	if (!doc) {
		snr_err("report: %s: %s", in, err);
		snrh_trace_free(&t);
		return 1;
	}
	/* the causal profile at `snr host causal`'s default speedups; a trace
	 * without progress points has none, and the page says why */
	double speedups[10];
	for (unsigned s = 0; s < 10; s++)
		speedups[s] = 5.0 * (s + 1);
	struct snrh_causal cz;
	char cerr[700] = "";
	bool have_causal = !snrh_causal_run(&t, speedups, 10, &cz, cerr, sizeof(cerr));

	struct snr_outfile of;
	FILE *f = snr_outfile_fopen(&of, out, err, sizeof(err));
	if (!f) {
		snr_err("report: %s", err);
		snrh_causal_free(&cz);
		json_decref(doc);
		snrh_trace_free(&t);
		return 1;
	}
	fputs("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>snr report: ", f);
	html_text(f, in);
	fputs("</title>\n<style>\n"
	      "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}\n"
	      "h1{font-size:22px}h2{font-size:17px;margin-top:28px}h3{font-size:15px}\n"
	      "table{border-collapse:collapse}td,th{padding:2px 10px;text-align:left;border-bottom:1px solid #eee}\n"
	      ".num{text-align:right;font-variant-numeric:tabular-nums}.chart{width:1100px;height:300px}\n"
	      "#errors{display:none;color:#b00;white-space:pre}nav a{margin-right:14px}\n"
	      ".causal-rank td,.causal-rank th{padding:2px 5px;font-size:12px}.rank-box{max-width:100%;overflow-x:auto}\n"
	      ".causal-rank td:nth-child(3),.causal-rank td:nth-child(4){overflow-wrap:anywhere;min-width:7em}\n"
	      ".causal-rank th{overflow-wrap:normal}.cell{display:inline-block;margin:4px;border:1px solid #ddd;vertical-align:top}"
	      ".head{font-size:13px;padding:4px;width:460px}.plot{width:470px;height:280px}.note{color:#555;max-width:60em}\n"
	      "</style>\n<script>\nwindow.addEventListener('error',function(e){var p=document.getElementById('errors');"
	      "if(p){p.textContent+=String(e.message)+'\\n';p.style.display='block';}});\n",
	      f);
	fwrite(snr_echarts_js, 1, snr_echarts_js_len, f);
	fputs("\n</script>\n<script>\n", f);
	fputs(snrh_causal_plots_js, f);
	fputs("</script>\n</head><body>\n<h1>snr report: the host</h1>\n<nav><a href=\"#host-threads\">threads</a>"
	      "<a href=\"#host-buckets\">buckets</a><a href=\"#host-progress\">progress points</a><a "
	      "href=\"#host-device\">on/off device</a><a href=\"#host-causal\">causal profile</a></nav>\n"
	      "<pre id=\"errors\"></pre>\n",
	      f);
	summary_write(f, &t, in, truncated ? why : NULL);
	threads_write(f, doc);
	progress_write(f, doc);
	device_write(f, doc);
	fputs("<h2 id=\"host-causal\">Causal profile: what to speed up</h2>\n", f);
	if (have_causal)
		causal_write(f, &cz);
	else {
		fputs("<p id=\"causal-none\">none: ", f);
		html_text(f, cerr);
		fputs(" (docs/host.md, \"Causal profile\")</p>\n", f);
	}
	fputs("<p>Definitions: docs/host.md. Charts: Apache ECharts (Apache-2.0).</p>\n<script>\nwindow.SNR_HOST = ", f);
	char *js = json_dumps(doc, JSON_COMPACT);
	script_json(f, js);
	free(js);
	fputs(";\nwindow.SNR_HOST_TL = ", f);
	struct snrh_ondev od;
	snrh_ondev_build(&t, &od);
	json_t *tl = timeline_json(&t, &od);
	snrh_ondev_free(&od);
	js = json_dumps(tl, JSON_COMPACT);
	json_decref(tl);
	script_json(f, js);
	free(js);
	fputs(";\n", f);
	fputs(threads_js, f);
	fputs(timeline_js, f);
	if (have_causal)
		fputs("drawCausal();\n", f);
	fputs("</script>\n</body></html>\n", f);
	int rc = 0;
	if (snr_outfile_close(&of, true, err, sizeof(err))) {
		snr_err("report: %s", err);
		rc = 1;
	}
	snrh_causal_free(&cz);
	json_decref(doc);
	snrh_trace_free(&t);
	return rc;
}
