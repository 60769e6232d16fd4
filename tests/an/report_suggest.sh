#!/usr/bin/env bash
# The report's suggestions say what `snr analyze suggest` says, in the same
# words: workloads/matmul_chain.c (snr cc -g) recorded from chain() for 300
# instructions has one static move (7 instances) and two stalled DMAs no
# move covers. Each move row of the page is the CLI's move sentence
# (statements at file:line (function), not symbol+offset), and the table of
# DMAs with no move has the CLI's groups, one row each (place, DMAs, stall
# cycles, reason), not a row per DMA.
# usage: report_suggest.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
"$SNR" cc -g "$SRC/workloads/matmul_chain.c" -o "$T/p.elf" || fail "snr cc matmul_chain.c"
gdb_device "$SNR" "$T" "$T/p.elf"
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint chain --count 300 \
  -o "$T/a.snrt" 2>"$T/rec.err" || { kill $DEV; fail "record: $(cat "$T/rec.err")"; }
wait $DEV
"$SNR" replay "$T/a.snrt" -o "$T/a.snrm" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"
"$SNR" analyze suggest "$T/a.snrm" >"$T/suggest.txt" || fail "analyze suggest"
"$SNR" report "$T/a.snrm" -o "$T/r.html" 2>"$T/report.err" || fail "snr report: $(cat "$T/report.err")"
render_report "$T" "$T/r.html" 1200,1600
python3 - "$T/dom.html" "$T/suggest.txt" <<'PY' || fail "the report's suggestions differ from the CLI's"
import html, re, sys
dom = open(sys.argv[1], encoding='utf-8').read(); cli = open(sys.argv[2]).read()
text = lambda f: html.unescape(re.sub(r'<[^>]+>', '', f))
moves = [re.sub(r'^\s*\d+\. ', '', l) for l in cli.split('\n') if re.match(r'\s*\d+\. move ', l)]
groups = [re.match(r'\s+(.*), (\d+) instances?, (\d+) stall cycles: (.*)$', l).groups()
          for l in cli.split('\n')[cli.split('\n').index('stalled DMAs with no move:') + 1:] if l.startswith('     ')]
assert moves and len(groups) == 2, (moves, groups)
sec = dom[dom.index('<div id="suggest">'):dom.index('<div id="no-move"')]
page_moves = [text(m) for m in re.findall(r'<td class="move">(.*?)</td>', sec, re.S)]
assert page_moves == moves, (page_moves, moves)
assert '+0x' not in ''.join(page_moves), page_moves
nm = re.search(r'<table class="paged" data-table="no_move">(.*?)</table>', dom, re.S)
assert nm, 'no table of the DMAs with no move'
rows = [tuple(text(c) for c in re.findall(r'<td[^>]*>(.*?)</td>', r, re.S))
        for r in re.findall(r'<tr data-row="\d+">(.*?)</tr>', nm.group(1), re.S)]
assert rows == groups, (rows, groups)
PY
echo "ok: the report's moves and DMAs with no move as snr analyze suggest words and groups them"
