#!/usr/bin/env bash
# snr report H.snrh: the host page, on two real recordings: the token loop
# (tests/host/causal_tokens.c, -O2: three threads, a progress point and a
# latency point) and the TA1 serving loop (runtime/ta1_serve.c over
# libta1rt: a device thread, so on/off-device and device candidates). In
# headless Chromium the page shows no console message and no script error;
# its tables hold `snr host report --json`'s threads, buckets, progress
# points and devices; its timeline a lane per device below the threads with
# each piece of work the report counts, and each host wait for the device
# linked to the work that ended it (the serving loop: 8 uploads, 8 runs, 8
# ta1rt_wait calls), tooltips naming them; at 1200 px each ranking table
# fits the page; each causal plot (one per candidate, read back from
# the chart: check_report_host.py) holds `snr host causal --json`'s points,
# the ranking its ranks, the off-the-critical-path list its names. A trace
# without a progress point gets a page that says so; a cut-short trace is
# refused (exit 3) unless --allow-truncated, then marked; a file that is
# not a host trace, a missing one, an option for device traces and an
# existing output get clear errors.
# Needs root and eBPF (the recorder): exits 77 (skip) with the reason otherwise.
# usage: report_host.sh SNR CAUSAL_TOKENS TA1_SERVE
HERE=$(cd "$(dirname "$0")" && pwd)
. "$HERE/../host/lib.sh"
. "$HERE/lib.sh"
BASE=${2:?causal_tokens}
SERVE=${3:?ta1_serve}
need_host_record
echo "load: $(cut -d' ' -f1-3 /proc/loadavg)"

check_page() { # NAME: $T/NAME.snrh -> $T/NAME.html, rendered and checked
  local n=$1
  run "$SNR" report "$T/$n.snrh" -o "$T/$n.html"
  expect_rc 0
  run "$SNR" host causal "$T/$n.snrh" --json
  [ "$rc" = 0 ] || [ "$rc" = 1 ] || fail "$n: host causal exit $rc"
  cp "$T/out" "$T/$n.causal.json"
  run "$SNR" host report "$T/$n.snrh" --json
  expect_rc 0
  cp "$T/out" "$T/$n.report.json"
  mkdir -p "$T/$n"
  # the page with tests/an/host_page_probe.js at its end: its DOM holds the page's and what was drawn
  python3 "$HERE/host_page_probe.py" "$T/$n.html" "$T/$n.probe.html" || fail "$n: host_page_probe.py"
  render_report "$T/$n" "$T/$n.probe.html" 1200,4000
  python3 "$HERE/check_report_host.py" "$T/$n/dom.html" "$T/$n.report.json" "$T/$n.causal.json" "$T/$n.html" \
    "$T/$n/dom.html" || fail "$n: the host page differs from snr host report/causal --json"
}

# the token loop: work_a and serial_step gate the tokens, work_b waits (off the critical path)
run "$SNR" host record -F 997 --progress emit_token --latency request_begin:request_end -o "$T/tokens.snrh" -- \
  "$BASE" 40 fifo
expect_rc 0
check_page tokens
grep -q '"function":"work_a"' "$T/tokens.html" || fail "work_a is no candidate on the page"

# the serving loop: the device's kernel and transfers are candidates, the device has a window
"$SNR" cc "$HERE/../../workloads/mlp.c" -o "$T/mlp.elf" >/dev/null || fail "snr cc mlp"
run "$SNR" host record -F 997 --progress read_response -o "$T/serve.snrh" -- "$SERVE" "$T/mlp.elf" 8 "$T"
expect_rc 0
check_page serve
grep -q '"device":{"lanes":\["TA1 device, thread ta1-device ' "$T/serve.html" || fail "the timeline has no TA1 device lane"
grep -q '"kernel":"ta1rt_device_run"' "$T/serve.html" || fail "kernel ta1rt_device_run is no candidate on the page"

# no progress point: the page says there is no causal profile, and why
run "$SNR" host record -o "$T/plain.snrh" -- "$BASE" 5
expect_rc 0
check_page plain
grep -q 'id="causal-none"' "$T/plain/dom.html" || fail "a trace without progress points: no 'none' paragraph"

# --- errors ---
run "$SNR" report "$T/tokens.snrh" -o "$T/tokens.html"
expect_rc 1; expect_err "tokens.html"
run "$SNR" report "$T/tokens.snrh" -o "$T/tokens.snrh" --force
expect_rc 1; expect_err "tokens.snrh"
cmp -s "$T/tokens.snrh" "$T/serve.snrh" && fail "impossible"
run "$SNR" report "$T/tokens.snrh" --compare "$T/serve.snrh" -o "$T/x.html"
expect_rc 2; expect_err "--compare is for a device trace"
echo "not a trace" >"$T/text.snrh"
run "$SNR" report "$T/text.snrh" -o "$T/x.html"
expect_rc 1; expect_err "text.snrh"
run "$SNR" report "$T/tokens.snrh" "$T/mlp.elf" -o "$T/x.html"
expect_rc 2; expect_err "mlp.elf is not a host trace"
run "$SNR" report "$T/missing.snrh" -o "$T/x.html"
expect_rc 1; expect_err "missing.snrh"
[ -e "$T/x.html" ] && fail "a refused report left $T/x.html"
# cut short: refused, exit 3, unless --allow-truncated; then the page says so
head -c $(($(stat -c %s "$T/tokens.snrh") * 2 / 3)) "$T/tokens.snrh" >"$T/cut.snrh"
run "$SNR" report "$T/cut.snrh" -o "$T/x.html"
expect_rc 3; expect_err "cut.snrh"
[ -e "$T/x.html" ] && fail "a refused report left $T/x.html"
run "$SNR" report "$T/cut.snrh" -o "$T/cut.html" --allow-truncated
expect_rc 0
grep -q 'id="host-truncated"' "$T/cut.html" || fail "a cut-short trace's page does not say so"
mkdir -p "$T/cut" && render_report "$T/cut" "$T/cut.html" 1200,2000
echo "report_host: ok"
