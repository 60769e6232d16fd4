/*
 * test_sweep.c: the sweep's grid (sweep/grid.c) and the JUnit writer
 * (lib/snr_junit.c). Axes from --param text: lists, ranges with END
 * included, a value given twice, ranges and values refused with their text;
 * the point numbering (last axis fastest) and its inverse; a point's config
 * built from the base with its dotted keys set, sections made where missing,
 * checked by the config validator (an unknown key, a value out of range);
 * XML escaping of a failure's message.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "lib/snr_config.h"
#include "lib/snr_junit.h"
#include "sweep/sweep.h"
#include "tests/check.h"

static void test_axes(void)
{
	struct sweep_axis *ax = NULL;
	size_t n = 0;
	char err[1024];
	CHECK(!sweep_axis_parse("dma.hbm_bytes_per_cycle=300,600,1200", &ax, &n, err, sizeof(err)), "%s", err);
	CHECK(!sweep_axis_parse("dma.base_latency_cycles=100:500:200", &ax, &n, err, sizeof(err)), "%s", err);
	CHECK(n == 2, "%zu axes", n);
	CHECK(json_array_size(ax[1].values) == 3 && json_integer_value(json_array_get(ax[1].values, 2)) == 500,
	      "range 100:500:200 is 100,300,500");
	CHECK(sweep_npoints(ax, n) == 9, "9 points");
	size_t c[2];
	sweep_point_coords(ax, n, 5, c);
	CHECK(c[0] == 1 && c[1] == 2, "point 5 is (1,2), the last axis fastest: (%zu,%zu)", c[0], c[1]);
	json_t *p = sweep_point_params(ax, n, 5);
	CHECK(json_integer_value(json_object_get(p, "dma.hbm_bytes_per_cycle")) == 600 &&
		      json_integer_value(json_object_get(p, "dma.base_latency_cycles")) == 500,
	      "point 5's params");
	json_decref(p);
	char *cfg = sweep_point_config("{\"vmem\": {\"bytes\": 524288}}", ax, n, 5, err, sizeof(err));
	CHECK(cfg != NULL, "%s", err);
	struct snr_config sc;
	CHECK(cfg && !snr_config_parse(&sc, cfg, "point", err, sizeof(err)), "%s", err);
	CHECK(sc.dma_hbm_bytes_per_cycle == 600 && sc.dma_base_latency_cycles == 500 && sc.vmem_bytes == 524288,
	      "the point's config keeps the base and sets its keys");
	free(cfg);
	/* refused: a key twice, a value twice, bad ranges, no values */
	CHECK(sweep_axis_parse("dma.hbm_bytes_per_cycle=1", &ax, &n, err, sizeof(err)) && strstr(err, "already"),
	      "a key twice: %s", err);
	const char *bad[] = {"x=1,1", "x=5:1:1", "x=1:5:0", "x=1:5", "x=", "=1", "x", "x=[1]", "x=1:9999999999:1"};
	for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		struct sweep_axis *b = NULL;
		size_t nb = 0;
		err[0] = '\0';
		CHECK(sweep_axis_parse(bad[i], &b, &nb, err, sizeof(err)) != 0 && err[0], "'%s' accepted", bad[i]);
		sweep_axes_free(b, nb);
	}
	sweep_axes_free(ax, n);
	/* the validator has the last word on keys and ranges */
	ax = NULL;
	n = 0;
	CHECK(!sweep_axis_parse("dma.nope=1,2", &ax, &n, err, sizeof(err)), "%s", err);
	CHECK(!sweep_point_config("{}", ax, n, 0, err, sizeof(err)) && strstr(err, "unknown key \"dma.nope\""),
	      "an unknown key: %s", err);
	sweep_axes_free(ax, n);
	ax = NULL;
	n = 0;
	CHECK(!sweep_axis_parse("mxu.rows_per_cycle=4096", &ax, &n, err, sizeof(err)), "%s", err);
	CHECK(!sweep_point_config("{}", ax, n, 0, err, sizeof(err)) && strstr(err, "outside"), "out of range: %s", err);
	sweep_axes_free(ax, n);
}

static void test_junit(void)
{
	char dir[] = "/tmp/test_sweep.XXXXXX", path[64], err[256];
	CHECK(mkdtemp(dir) != NULL, "mkdtemp");
	snprintf(path, sizeof(path), "%s/j.xml", dir);
	struct snr_junit j;
	snr_junit_init(&j, "snr check <t>");
	snr_junit_add(&j, "a.snrt", SNR_JUNIT_PASS, NULL, 0.5);
	snr_junit_add(&j, "b&c.snrt", SNR_JUNIT_FAILURE, "cycles 1 -> 2\n\"x\" <y>\x01", 0.25);
	snr_junit_add(&j, "d.snrt", SNR_JUNIT_ERROR, "cannot replay", 0);
	CHECK(!snr_junit_write(&j, path, err, sizeof(err)), "%s", err);
	snr_junit_free(&j);
	FILE *f = fopen(path, "r");
	char buf[4096] = "";
	size_t got = f ? fread(buf, 1, sizeof(buf) - 1, f) : 0;
	buf[got] = '\0';
	if (f)
		fclose(f);
	CHECK(strstr(buf, "tests=\"3\" failures=\"1\" errors=\"1\" time=\"0.750\""), "counts: %s", buf);
	CHECK(strstr(buf, "name=\"b&amp;c.snrt\""), "name escaped: %s", buf);
	CHECK(strstr(buf, "<failure message=\"cycles 1 -&gt; 2\">cycles 1 -&gt; 2\n&quot;x&quot; &lt;y&gt;?</failure>"),
	      "message escaped: %s", buf);
	CHECK(strstr(buf, "<error message=\"cannot replay\">"), "error: %s", buf);
	remove(path);
	remove(dir);
}

int main(void)
{
	test_axes();
	test_junit();
	return check_report("test_sweep");
}
