#!/usr/bin/env bash
# The host page's device lanes on CUPTI activity: runtime/cupti/test_cupti_lanes
# writes its trace (kernels and copies on five (GPU, stream) pairs, recorded
# on CUPTI's own clock and mapped onto the host's; two host threads launching
# them; four cudaStreamSynchronize waits, three ended by a piece of work);
# `snr report` draws it, and in headless Chromium at 1200 px the timeline
# shows a lane per stream below the threads with every piece of work `snr
# host report --json` counts, each wait linked to the work that ended it,
# and tooltips naming the work, its direction and bytes, the thread that
# launched it and its correlation id. No GPU needed.
# usage: report_cupti_lanes.sh SNR TEST_CUPTI_LANES
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../host/lib.sh"
. "$HERE/lib.sh"
LANES=${2:?test_cupti_lanes}
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

"$LANES" "$T/cu.snrh" || fail "test_cupti_lanes"
run "$SNR" report "$T/cu.snrh" -o "$T/cu.html"
expect_rc 0
run "$SNR" host report "$T/cu.snrh" --json
expect_rc 0
cp "$T/out" "$T/cu.report.json"
: >"$T/cu.causal.json" # no progress point: no causal profile
mkdir -p "$T/cu"
# the page with tests/an/host_page_probe.js at its end: its DOM holds the page's and what was drawn
python3 "$HERE/host_page_probe.py" "$T/cu.html" "$T/cu.probe.html" || fail "host_page_probe.py"
render_report "$T/cu" "$T/cu.probe.html" 1200,2000
python3 "$HERE/check_report_host.py" "$T/cu/dom.html" "$T/cu.report.json" "$T/cu.causal.json" "$T/cu.html" \
  "$T/cu/dom.html" || fail "the host page's device lanes differ from snr host report --json"
# the known answers of test_cupti_lanes.c, as drawn (tooltips as the browser shows them)
python3 - "$T/cu/dom.html" <<'PY' || fail "the drawn timeline differs from test_cupti_lanes.c's answers"
import html, json, re, sys
r = json.loads(html.unescape(re.search(r'<pre id="probe">(.*?)</pre>', open(sys.argv[1]).read(), re.S).group(1)))
tips = {k: html.unescape(v) for k, v in r['tips'].items()}
want = [(r['lanes'], ['infer 77', 'loader 78', 'GPU 0 stream 7', 'GPU 0 stream 8', 'GPU 0 stream 9',
                      'GPU 1 stream 3', 'GPU 1 stream 4']),
        (r['series'][5:], [['device: compute (kernel)', 3], ['device: transfer', 4],
                           ['host wait for the device', 4], ['wait ended by', 3]]),
        (tips['device: transfer'], 'memcpy HtoD<br>GPU 0 stream 7: 1.000 ms (0.500 to 1.500 ms)<br>transfer, host to '
                                   'device, 1048576 bytes<br>launched by infer 77 (correlation id 1)<br>queued 0.400 ms'),
        (tips['device: compute (kernel)'], 'gemm<float, 128><br>GPU 0 stream 8: 2.000 ms (1.000 to 3.000 ms)<br>'
                                           'launched by loader 78 (correlation id 2)<br>queued 0.700 ms'),
        (tips['host wait for the device'], 'cudaStreamSynchronize (a host wait for the device)<br>infer 77: 1.600 ms '
                                           '(2.000 to 3.600 ms)<br>ended by memset on GPU 0 stream 9, done at 3.400 ms')]
bad = [f'{g!r}, want {w!r}' for g, w in want if g != w]
print('\n'.join(bad))
sys.exit(1 if bad else 0)
PY
echo "report_cupti_lanes: ok"
