/*
 * causal_page.c: see causal_page.h. The page holds the causal JSON
 * (snrh_causal_json) and a short script that draws it; nothing is fetched.
 */
#include "analyzer/causal_page.h"

#include <stdlib.h>
#include <string.h>

#include "lib/snr_outfile.h"
#include "lib/snr_util.h"

extern const char snr_echarts_js[];
extern const unsigned long snr_echarts_js_len;

static const char page_head[] =
	"<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><title>snr causal profile</title>\n"
	"<style>body{font-family:sans-serif;margin:1em}.cell{display:inline-block;margin:4px;border:1px solid #ddd;"
	"vertical-align:top}.head{font-size:13px;padding:4px;width:460px}.plot{width:470px;height:280px}.note{color:#555;max-width:60em}</style>\n<script>\n";

/* Draws one chart per candidate from the JSON in #causal-data into
 * #plots: x the candidate's speedup (0 and the speedups predicted), y the
 * change in % of each point's throughput (solid) and latency p50/p99
 * (dashed, dotted). Each chart's element carries what ECharts drew, read
 * back from the chart (data-candidate, data-series: [{name, data}]). */
const char snrh_causal_plots_js[] =
	"function drawCausal(){\n"
	" var d=JSON.parse(document.getElementById('causal-data').textContent);\n"
	" var by={},order=[];\n"
	" d.candidates.forEach(function(c){var k=c.kernel?'kernel '+c.kernel+' ('+c.device+')':c.transfer?'transfer '+c.transfer+' ('+c.device+')':\n"
	"   (c.bucket?'bucket ':'')+(c.function||c.bucket);\n"
	"  if(!by[k]){by[k]={c:c,rows:[]};order.push(k);} by[k].rows.push(c);});\n"
	" var root=document.getElementById('plots');\n"
	" order.forEach(function(k){var e=by[k],cell=document.createElement('div');cell.className='cell';\n"
	"  var h=document.createElement('div');h.className='head';\n"
	"  var where=e.c.device?(e.c.pieces+' pieces, '+e.c.device_ms.toFixed(3)+' ms on the device'):e.c.file?(e.c.file.split('/').pop()+':'+e.c.line+' pc 0x'+e.c.pc.toString(16)):\n"
	"   (e.c.bucket?'bucket':((e.c.module||'')+' pc 0x'+(e.c.pc||0).toString(16)));\n"
	"  h.textContent='#'+e.c.rank+' '+k+' ('+where+(e.c.device?')':', '+e.c.self_pct.toFixed(1)+'% of on-CPU samples)')+\n"
	"   (e.c.off_critical_path?': off the critical path':'');\n"
	"  var div=document.createElement('div');div.className='plot';cell.appendChild(h);cell.appendChild(div);\n"
	"  root.appendChild(cell);var series=[];\n"
	"  d.progress.forEach(function(p){[['throughput_pct','throughput','solid'],['latency_p50_pct','p50 latency','dashed'],\n"
	"    ['latency_p99_pct','p99 latency','dotted']].forEach(function(m){\n"
	"   var pts=[[0,0]];e.rows.forEach(function(r){pts.push([r.speedup_pct,r.effect[p.name][m[0]]]);});\n"
	"   series.push({name:p.name+' '+m[1],type:'line',data:pts,lineStyle:{type:m[2]},symbolSize:5});});});\n"
	"  var ch=echarts.init(div);ch.setOption({animation:false,tooltip:{trigger:'axis'},legend:{bottom:0,type:'scroll'},\n"
	"   grid:{top:30,bottom:50,left:50,right:60},xAxis:{type:'value',name:'speedup %',min:0},\n"
	"   yAxis:{type:'value',name:'change %'},series:series});\n"
	"  div.setAttribute('data-candidate',k);div.setAttribute('data-series',JSON.stringify(ch.getOption().series.map(\n"
	"   function(s){return {name:s.name,data:s.data};})));});\n"
	"}\n";

void snrh_causal_note_write(FILE *f)
{
	fputs("<p class=\"note\">Each plot: the predicted change of every progress point's throughput "
	      "(solid), latency p50 (dashed) and p99 (dotted) if that candidate were made faster by the speedup on "
	      "the x axis, from a replay of the recorded dependency graph (docs/host.md, \"Causal profile\"). A flat "
	      "line at 0 is a candidate off the critical path. Ranked by the first point's throughput at the largest "
	      "speedup. Predictions, not measurements.</p>\n",
	      f);
}

void snrh_causal_data_write(FILE *f, const struct snrh_causal *c)
{
	json_t *j = snrh_causal_json(c);
	char *text = json_dumps(j, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(j);
	fputs("<script type=\"application/json\" id=\"causal-data\">", f);
	for (const char *p = text; p && *p; p++) { /* nothing in the data may close the script */
		if (*p == '<')
			fputs("\\u003c", f);
		else
			fputc(*p, f);
	}
	fputs("</script>\n", f);
	free(text);
}

int snrh_causal_page(const struct snrh_causal *c, const char *trace_path, const char *out, char *err, size_t errlen)
{
	struct snr_outfile of;
	FILE *f = snr_outfile_fopen(&of, out, err, errlen);
	if (!f)
		return -1;
	fputs(page_head, f);
	fwrite(snr_echarts_js, 1, snr_echarts_js_len, f);
	fputs("\n</script>\n<script>\n", f);
	fputs(snrh_causal_plots_js, f);
	fputs("</script></head><body onload=\"drawCausal()\">\n<h2>Causal profile: ", f);
	for (const char *p = trace_path; *p; p++) /* the name, HTML-escaped */
		fputs(*p == '<' ? "&lt;" : *p == '>' ? "&gt;" : *p == '&' ? "&amp;" : (char[]){*p, 0}, f);
	fputs("</h2>\n", f);
	snrh_causal_note_write(f);
	fputs("<div id=\"plots\"></div>\n", f);
	snrh_causal_data_write(f, c);
	fputs("</body></html>\n", f);
	return snr_outfile_close(&of, true, err, errlen);
}
