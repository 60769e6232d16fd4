/*
 * report.c: the sweep's page, one self-contained HTML file like `snr
 * report`'s (the vendored ECharts inlined, analyzer/embed.py): a banner
 * when points are missing, the best points, each parameter's elasticity
 * (gather.c defines it) as a table and a chart, cycles by stall cause per
 * point as a chart, and every point's figures as a table. The charts are
 * sweep/report.js, drawn from results.json's object embedded as
 * window.SNR_SWEEP.
 */
#include <stdlib.h>
#include <string.h>

#include "analyzer/analyses.h"
#include "lib/snr_outfile.h"
#include "lib/snr_util.h"
#include "sim/snr_tracker.h"
#include "sweep/sweep.h"

extern const char snr_echarts_js[], snr_sweep_report_js[];
extern const unsigned long snr_echarts_js_len, snr_sweep_report_js_len;

static void value_html(FILE *f, json_t *v)
{
	char *t = json_is_string(v) ? NULL : json_dumps(v, JSON_ENCODE_ANY);
	html_text(f, t ? t : json_string_value(v) ? json_string_value(v) : "?");
	free(t);
}

static void point_row(FILE *f, json_t *res, json_t *pt)
{
	fprintf(f, "<tr><td class=\"num\">%lld</td>", (long long)json_integer_value(json_object_get(pt, "point")));
	size_t a;
	json_t *ax;
	json_array_foreach(json_object_get(res, "params"), a, ax) {
		fputs("<td class=\"num\">", f);
		value_html(f, json_object_get(json_object_get(pt, "params"), json_string_value(json_object_get(ax, "key"))));
		fputs("</td>", f);
	}
	fprintf(f, "<td class=\"num\">%lld</td><td class=\"num\">%.3f</td>",
		(long long)json_integer_value(json_object_get(pt, "cycles")), json_real_value(json_object_get(pt, "ipc")));
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, "<td class=\"num\">%lld</td>",
			(long long)json_integer_value(json_object_get(json_object_get(pt, "stall_cycles"),
								      snr_stall_cause_name((enum snr_stall_cause)c))));
	for (int u = 0; u < SNR_UNIT_COUNT; u++)
		fprintf(f, "<td class=\"num\">%.1f%%</td>",
			100 * json_real_value(json_object_get(json_object_get(pt, "utilization"),
							      snr_unit_name((enum snr_unit)u))));
	fprintf(f, "<td>%s</td></tr>\n", json_is_true(json_object_get(pt, "verified")) ? "yes" : "DIVERGED");
}

static void points_head(FILE *f, json_t *res)
{
	fputs("<table><tr><th>point</th>", f);
	size_t a;
	json_t *ax;
	json_array_foreach(json_object_get(res, "params"), a, ax) {
		fputs("<th>", f);
		html_text(f, json_string_value(json_object_get(ax, "key")));
		fputs("</th>", f);
	}
	fputs("<th>cycles</th><th>IPC</th>", f);
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		fprintf(f, "<th>%s</th>", snr_stall_cause_name((enum snr_stall_cause)c));
	for (int u = 0; u < SNR_UNIT_COUNT; u++)
		fprintf(f, "<th>%s busy</th>", snr_unit_name((enum snr_unit)u));
	fputs("<th>verified</th></tr>\n", f);
}

int sweep_write_report(const char *path, json_t *res, char *err, size_t errlen)
{
	struct snr_outfile of;
	FILE *f = snr_outfile_fopen(&of, path, err, errlen);
	if (!f)
		return -1;
	bool complete = json_is_true(json_object_get(res, "complete"));
	long long total = (long long)json_integer_value(json_object_get(res, "points_total"));
	fprintf(f, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n<title>snr sweep: %lld points%s"
		   "</title>\n<style>\n"
		   "body{font:14px/1.4 system-ui,sans-serif;margin:24px;color:#222;max-width:1300px}\n"
		   "h1{font-size:22px}h2{font-size:17px;margin-top:28px}\n"
		   "table{border-collapse:collapse}td,th{padding:2px 8px;text-align:left;border-bottom:1px solid #eee}\n"
		   ".num{text-align:right;font-variant-numeric:tabular-nums}.chart{width:1200px;height:420px}\n"
		   ".banner{background:#fee;border:1px solid #c00;padding:8px;font-weight:600}\n"
		   "#errors{display:none;color:#b00;white-space:pre}\n</style>\n<script>\n",
		total, complete ? "" : " (INCOMPLETE)");
	fwrite(snr_echarts_js, 1, snr_echarts_js_len, f);
	fprintf(f, "\n</script>\n</head><body>\n<h1>snr sweep: %lld points</h1>\n<pre id=\"errors\"></pre>\n", total);
	if (!complete) {
		fprintf(f, "<p class=\"banner\" id=\"incomplete\">INCOMPLETE: %zu of %lld points are missing (points",
			json_array_size(json_object_get(res, "missing")), total);
		size_t k;
		json_t *v;
		json_array_foreach(json_object_get(res, "missing"), k, v)
			fprintf(f, " %lld", (long long)json_integer_value(v));
		fputs("); every figure below is of the finished points only. Run <code>snr sweep --resume</code>.</p>\n",
		      f);
	}
	fputs("<p>Each point replays every window with its machine config (<code>snr replay --config "
	      "configs/pNNNN.json</code>); a point's cycles are its windows' added up.</p>\n",
	      f);
	fputs("<h2 id=\"best\">Best points (fewest cycles, verified)</h2>\n", f);
	points_head(f, res);
	size_t k;
	json_t *v;
	json_array_foreach(json_object_get(res, "best"), k, v) {
		size_t i;
		json_t *pt;
		json_array_foreach(json_object_get(res, "points"), i, pt)
			if (json_equal(json_object_get(pt, "point"), v))
				point_row(f, res, pt);
	}
	fputs("</table>\n<h2 id=\"elasticity\">Elasticity of the cycles to each parameter</h2>\n"
	      "<p>% change of the cycles per % change of the parameter, between neighbouring values of its axis "
	      "with the other parameters fixed, in the arc form ((c2&minus;c1)/mean(c1,c2)) / "
	      "((v2&minus;v1)/mean(v1,v2)): near &minus;1 the parameter bounds the cycles, near 0 it does not "
	      "matter.</p>\n<table><tr><th>parameter</th><th>mean</th><th>min</th><th>max</th><th>pairs</th></tr>\n",
	      f);
	json_array_foreach(json_object_get(res, "elasticity"), k, v) {
		fputs("<tr><td>", f);
		html_text(f, json_string_value(json_object_get(v, "param")));
		fputs("</td>", f);
		const char *keys[] = {"mean", "min", "max"};
		for (int i = 0; i < 3; i++) {
			json_t *x = json_object_get(v, keys[i]);
			if (json_is_null(x))
				fputs("<td class=\"num\">-</td>", f);
			else
				fprintf(f, "<td class=\"num\">%+.3f</td>", json_real_value(x));
		}
		fprintf(f, "<td class=\"num\">%lld</td></tr>\n",
			(long long)json_integer_value(json_object_get(v, "pairs_measured")));
	}
	fputs("</table>\n<div id=\"c-elasticity\" class=\"chart\" style=\"height:260px\"></div>\n"
	      "<h2 id=\"cycles\">Cycles of each point by stall cause</h2>\n<div id=\"c-points\" class=\"chart\"></div>\n"
	      "<h2 id=\"points\">Every point</h2>\n",
	      f);
	points_head(f, res);
	json_array_foreach(json_object_get(res, "points"), k, v) point_row(f, res, v);
	fputs("</table>\n<script>\nwindow.SNR_SWEEP = ", f);
	json_t *page = json_deep_copy(res);
	json_t *causes = json_array();
	for (int c = 0; c < SNR_STALL_COUNT; c++)
		json_array_append_new(causes, json_string(snr_stall_cause_name((enum snr_stall_cause)c)));
	json_object_set_new(page, "causes", causes);
	char *js = json_dumps(page, JSON_COMPACT | JSON_PRESERVE_ORDER);
	json_decref(page);
	script_json(f, js);
	free(js);
	fputs(";\n</script>\n<script>\n", f);
	fwrite(snr_sweep_report_js, 1, snr_sweep_report_js_len, f);
	fputs("</script>\n</body></html>\n", f);
	return snr_outfile_close(&of, true, err, errlen);
}
