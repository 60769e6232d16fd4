/*
 * report_pod.c: the pod's section of `snr report MSET -o R.html` for a pod's
 * metrics set (report_windows.c writes the page): `snr analyze pod`'s
 * document (analyzer/pod.c) as a table of the critical path, a chart of each
 * chip's cycles split Elk's way and one of each port's and link's bytes per
 * sampling period.
 */
#include "analyzer/report_pod.h"

#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"

static void cell_u(FILE *f, const json_t *o, const char *key)
{
	fprintf(f, "<td class=\"num\">%lld</td>", (long long)json_integer_value(json_object_get(o, key)));
}

void an_report_pod_section(FILE *f, const json_t *pod)
{
	fprintf(f, "<h2 id=\"pod\">The pod: %lld chips, chip %lld finished last at cycle %lld</h2>\n",
		(long long)json_integer_value(json_object_get(pod, "chips_in_pod")),
		(long long)json_integer_value(json_object_get(pod, "last_chip")),
		(long long)json_integer_value(json_object_get(pod, "cycles")));
	fputs("<p>The critical path (<code>snr analyze pod</code>): from the chip that finished last back through the "
	      "peer signals that ended its waits, each step a stretch of the pod's clock (a chip running, named by "
	      "its line with the most cycles; a <code>ta.dma.notify</code> in flight), adding up to the last chip's "
	      "cycles. All chips' windows start at cycle 0 of the pod's clock.</p>\n",
	      f);
	fputs("<table class=\"pod-path\"><tr><th>chip</th><th class=\"num\">start</th><th class=\"num\">end</th>"
	      "<th class=\"num\">cycles</th><th>pc</th><th>where</th><th>what</th></tr>\n",
	      f);
	size_t i;
	json_t *s;
	json_array_foreach(json_object_get(pod, "critical_path"), i, s) {
		fputs("<tr>", f);
		cell_u(f, s, "chip");
		cell_u(f, s, "start");
		cell_u(f, s, "end");
		cell_u(f, s, "cycles");
		fprintf(f, "<td><code>0x%llx</code></td><td>",
			(unsigned long long)json_integer_value(json_object_get(s, "pc")));
		html_text(f, json_string_value(json_object_get(s, "where")));
		fputs("</td><td>", f);
		html_text(f, json_string_value(json_object_get(s, "what")));
		fputs("</td></tr>\n", f);
	}
	fputs("</table>\n", f);
	fputs("<h3>Each chip's cycles, Elk's breakdown</h3>\n<p>Preload only: its DMA engine busy while the core "
	      "waits; execute only; overlapped: both; stall: the core waits and none of its DMAs moves (a base "
	      "latency, a peer's signal).</p>\n<div id=\"c-pod-elk\" class=\"chart\"></div>\n",
	      f);
	fputs("<table><tr><th>chip</th><th class=\"num\">cycles</th><th class=\"num\">preload only</th>"
	      "<th class=\"num\">execute only</th><th class=\"num\">overlapped</th><th class=\"num\">stall</th>"
	      "<th class=\"num\">peer stall</th></tr>\n",
	      f);
	json_array_foreach(json_object_get(pod, "chips"), i, s) {
		const json_t *e = json_object_get(s, "elk");
		fputs("<tr>", f);
		cell_u(f, s, "chip");
		cell_u(f, s, "cycles");
		cell_u(f, e, "preload_only");
		cell_u(f, e, "execute_only");
		cell_u(f, e, "overlapped");
		cell_u(f, e, "stall");
		cell_u(f, s, "peer_stall");
		fputs("</tr>\n", f);
	}
	fputs("</table>\n<h3>Ports and links: bytes per sampling period</h3>\n"
	      "<div id=\"c-pod-res\" class=\"chart\"></div>\n",
	      f);
	fputs("<table><tr><th>port or link</th><th class=\"num\">B/cycle</th><th class=\"num\">bytes</th>"
	      "<th class=\"num\">busy cycles</th><th class=\"num\">contended cycles</th></tr>\n",
	      f);
	json_array_foreach(json_object_get(pod, "resources"), i, s) {
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(s, "name")));
		fputs("</td>", f);
		cell_u(f, s, "bytes_per_cycle");
		fprintf(f, "<td class=\"num\">%.0f</td><td class=\"num\">%.1f</td><td class=\"num\">%.1f</td></tr>\n",
			json_number_value(json_object_get(s, "bytes")), json_number_value(json_object_get(s, "busy_cycles")),
			json_number_value(json_object_get(s, "contended_cycles")));
	}
	fputs("</table>\n", f);
}

const char an_report_pod_js[] =
	"(function(){var P=window.SNR_POD;if(!P)return;try{\n"
	"var parts=['preload_only','execute_only','overlapped','stall'];\n"
	"var c1=echarts.init(document.getElementById('c-pod-elk'),null,{renderer:'svg'});\n"
	"c1.setOption({animation:false,tooltip:{trigger:'axis'},legend:{top:0},grid:{top:40,left:80,right:20,bottom:40},"
	"xAxis:{type:'category',data:P.chips.map(function(c){return 'chip '+c.chip;})},yAxis:{type:'value',name:'cycles'},"
	"series:parts.map(function(k){return {name:k.replace('_',' '),type:'bar',stack:'e',"
	"data:P.chips.map(function(c){return c.elk[k];})};})});\n"
	"var c2=echarts.init(document.getElementById('c-pod-res'),null,{renderer:'svg'});\n"
	"c2.setOption({animation:false,tooltip:{trigger:'axis'},legend:{top:0,type:'scroll'},"
	"grid:{top:50,left:80,right:20,bottom:60},dataZoom:[{type:'slider'}],"
	"xAxis:{type:'value',name:'cycle'},yAxis:{type:'value',name:'bytes per period'},"
	"series:P.resources.map(function(r){return {name:r.name,type:'line',step:'start',showSymbol:false,"
	"data:r.series.map(function(s){return [s[0],s[2]];})};})});\n"
	"}catch(e){var p=document.getElementById('errors');p.textContent+=String(e&&e.stack||e);p.style.display='block';}})();\n";
