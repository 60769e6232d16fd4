#!/usr/bin/env bash
# The report's source page and --compare on workloads/attn.c (snr cc -g -O2),
# rendered in headless Chromium with no virtual-time budget: the hottest line
# (annotate's first, the KNOWN-DMA-WAIT line) is named first among the
# hottest lines and its text, read from the source through --source-dir
# (the source moved after the build), is drawn there (a DOM check and a
# screenshot check: ink in its cell); its row in the function's source is
# selected with its instructions listed; the DMA timeline's rows are named by
# the issuing line (KNOWN-DMA-ISSUE); --compare against a window with half
# the rows shows both windows' cycles and each cause before and after, as
# `snr annotate --compare --json` gives them (check_report_source.py).
# usage: report_source.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
# build from a copy of the source, then move the copy: the line table names a
# path that is gone, --source-dir finds the file by its base name
mkdir -p "$T/src/workloads" && cp "$SRC/workloads/attn.c" "$T/src/workloads/" || fail "copy attn.c"
record_attn "$SNR" "$T/src" "$T" -g -O2
mkdir -p "$T/half"
record_attn "$SNR" "$T/src" "$T/half" -g -O2 -DROWS=16
mv "$T/src" "$T/moved"
"$SNR" report "$T/a.snrm" --compare "$T/half/a.snrm" --source-dir "$T/moved/workloads" -o "$T/r.html" \
  2>"$T/report.err" || fail "snr report --compare: $(cat "$T/report.err")"
"$SNR" annotate "$T/a.snrm" --json >"$T/ann.json" || fail "annotate --json"
"$SNR" annotate "$T/a.snrm" --compare "$T/half/a.snrm" --json >"$T/cmp.json" || fail "annotate --compare --json"
render_report "$T" "$T/r.html" 1200,1600
python3 "$HERE/check_report_source.py" "$T/dom.html" "$T/shot.png" "$T/ann.json" "$T/cmp.json" \
  "$T/moved/workloads/attn.c" || fail "source page check"
echo "ok: the hottest line's text on the source page (DOM and screenshot), DMA rows by line, compare's cycles"
