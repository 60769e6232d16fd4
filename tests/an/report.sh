#!/usr/bin/env bash
# snr report on tests/an/an_prog.c: the HTML loads nothing from outside,
# opens in headless Chromium with no console errors, and every chart area is
# drawn without a virtual-time budget (the screenshot is taken at load), the
# DMA timeline's backtail whiskers included (checked on a screenshot by
# check_report.py); the summary's stall causes are the replay's; the lane
# timeline's busy intervals are the ones `snr analyze util --json` averages. Installs Debian's
# chromium when it is missing (scripts/install-deps lists it too).
# usage: report.sh SNR
set -u
SNR=$1; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
if ! command -v chromium >/dev/null; then
  sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
  (export DEBIAN_FRONTEND=noninteractive; $sudo apt-get update -qq &&
    $sudo apt-get install -y -qq --no-install-recommends chromium >/dev/null) || fail "cannot install chromium"
fi
record_an_prog "$SNR" "$T"
"$SNR" report "$T/a.snrm" -o "$T/r.html" || fail "snr report"
# self-contained: no element loads a URL (the bundled library's code is not markup, so
# only the report's own markup, outside <script> bodies, is checked)
python3 - "$T/r.html" <<'PY' || fail "the report references an external resource"
import re, sys
s = open(sys.argv[1], encoding='utf-8').read()
markup = re.sub(r'(?s)(<script>).*?(</script>)', r'\1\2', s)
bad = re.findall(r'(?i)<[a-z]+[^>]*\b(?:src|href)\s*=\s*(?!"#)', markup)  # in-page links are fine
sys.exit(1 if bad or '<script src' in markup else 0)
PY

chrome() {
  timeout 120 chromium --headless --no-sandbox --disable-gpu --disable-background-networking \
    --disable-component-update --no-first-run --user-data-dir="$(mktemp -d -p "$T")" \
    --hide-scrollbars --window-size=1200,3600 --enable-logging=stderr --v=0 "$@"
}
chrome --dump-dom "file://$T/r.html" >"$T/dom.html" 2>"$T/dom.err" || fail "chromium --dump-dom: $(tail -5 "$T/dom.err")"
if grep -E 'CONSOLE|Uncaught' "$T/dom.err" | grep -vi 'dbus' >"$T/console.txt"; then
  fail "console messages: $(cat "$T/console.txt")"
fi
chrome --screenshot="$T/shot.png" "file://$T/r.html" >/dev/null 2>"$T/shot.err" || fail "chromium --screenshot: $(tail -5 "$T/shot.err")"
# the backtails the timeline draws are deps' (DMA #5 reads what #4 brought: it could issue
# only after #4's WAIT)
"$SNR" analyze deps "$T/a.snrm" --json >"$T/deps.json" || fail "analyze deps"
python3 - "$T/deps.json" <<'PY' || fail "deps of an_prog: $(cat "$T/deps.json")"
import json, sys
d = {m["id"]: m for m in json.load(open(sys.argv[1]))["dmas"]}
assert d[5]["relaxed"]["anchor"] == "dma" and d[5]["relaxed"]["anchor_dma"] == 4, d[5]
assert d[2]["relaxed"]["backtail_cycles"] > 500, d[2]
PY
# the replay's stall causes and the util windows the lanes must reproduce
"$SNR" replay "$T/a.snrt" --json >"$T/replay.json" || fail "replay --json"
"$SNR" analyze util "$T/a.snrm" --json >"$T/util.json" || fail "analyze util --json"
python3 "$HERE/check_report.py" "$T/dom.html" "$T/shot.png" "$T/deps.json" "$T/replay.json" "$T/util.json" ||
  fail "report check"
echo "ok: report self-contained, no console errors, every chart drawn, backtails drawn as deps gives them," \
  "stall causes as the replay sums them, lanes as util averages them"
