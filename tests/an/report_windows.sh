#!/usr/bin/env bash
# Several windows of one run, per window and together, in one command each:
# the decode workload's serving loop (workloads/decode.c -DSERVE, -g) recorded
# from `snr device --gdb` as two trace sets, prefill (three chunks, each to its
# return) and decode (every second step from the second); `snr replay` of
# both sets into one metrics set gives each window's figures, each group's
# and the total; `snr report` of the metrics set opens in headless Chromium
# with no console errors, both charts drawn, and its table holds replay's
# figures for every window, group and total, and for the decode window at hit
# 4 the figures of that window recorded alone; one window's own page passes
# the single-window report's checks. Every analysis and annotate take the
# sets (--json: each window's result with its index, groups, together). A set
# marked incomplete is refused (exit 3) by every reader unless
# --allow-truncated.
# usage: report_windows.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
. "$HERE/lib.sh"

"$SNR" cc -g -O2 -DSERVE -DCTX=1024 "$SRC/workloads/decode.c" -o "$T/serve.elf" || fail "snr cc decode -DSERVE"
rec() { # OUT ARGS...
  local out=$1; shift
  gdb_device "$SNR" "$T" "$T/serve.elf"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/serve.elf" --kill -o "$out" "$@" 2>"$T/rec.err" ||
    fail "record $out: $(cat "$T/rec.err")"
  wait $DEV; DEV=""
}
rec "$T/prefill.snrs" --breakpoint prefill_chunk --windows 3 --until-return --count 5000
rec "$T/decode.snrs" --breakpoint decode_step --skip 1 --windows 3 --every 2 --count 1200
rec "$T/alone.snrt" --breakpoint decode_step --skip 3 --count 1200 # decode's window 1 (hit 4), alone

# replay: both sets, one metrics set; per window, per group, together
"$SNR" replay "$T/prefill.snrs" "$T/decode.snrs" -o "$T/all.snrms" --json >"$T/replay.json" ||
  fail "replay of the sets: $(cat "$T/replay.json")"
"$SNR" replay "$T/alone.snrt" --json >"$T/alone.json" || fail "replay alone"
python3 - "$T/replay.json" <<'PY' || fail "replay --json of the sets: $(cat "$T/replay.json")"
import json, sys
r = json.load(open(sys.argv[1]))
w = r['windows']
assert [x['window'] for x in w] == list(range(6)), w
assert [(x['group'], x['set_window'], x['hit']) for x in w] == \
    [('prefill', 0, 1), ('prefill', 1, 2), ('prefill', 2, 3), ('decode', 0, 2), ('decode', 1, 4), ('decode', 2, 6)], w
assert [g['group'] for g in r['groups']] == ['prefill', 'decode'], r['groups']
for g in r['groups']:
    mine = [x['summary'] for x in w if x['group'] == g['group']]
    assert g['cycles'] == sum(s['cycles'] for s in mine) and g['windows'] == 3, g
    assert g['stall_cycles']['dma-base'] == sum(s['stall_cycles']['dma-base'] for s in mine), g
assert r['total']['cycles'] == sum(x['summary']['cycles'] for x in w), r['total']
assert all(x['summary']['verified'] and x['summary']['end_state_checked'] for x in w), w
PY
"$SNR" replay "$T/prefill.snrs" "$T/decode.snrs" >"$T/replay.txt" || fail "replay (text)"
grep -q "^3 win *prefill" "$T/replay.txt" && grep -q "^6 win *together" "$T/replay.txt" || fail "replay table: $(cat "$T/replay.txt")"
echo "replay: 6 windows, groups prefill and decode, together"

# the report of the metrics set, in Chromium
"$SNR" report "$T/all.snrms" -o "$T/r.html" 2>"$T/report.err" || fail "report: $(cat "$T/report.err")"
for k in 0 1 2 3 4 5; do [ -s "$T/r-w$k.html" ] || fail "no page for window $k"; done
render_report "$T" "$T/r.html" 1200,2400
python3 "$HERE/check_report_windows.py" "$T/dom.html" "$T/shot.png" "$T/replay.json" "$T/alone.json" 4 ||
  fail "the page of the windows"
grep -q 'id="hottest"' "$T/dom.html" && grep -q 'decode.c:[0-9]* (decode_step)' "$T/dom.html" &&
  grep -q 'decode.c:[0-9]* (prefill_chunk)' "$T/dom.html" || fail "the hottest lines together name no source line"
mkdir -p "$T/w4" && render_report "$T/w4" "$T/r-w4.html" 1200,5600
python3 "$HERE/check_report.py" "$T/w4/dom.html" "$T/w4/shot.png" || fail "window 4's own page"
echo "report: the page of 6 windows drawn, its figures replay's and the window recorded alone's; a window's page drawn"

# every analysis and annotate on the sets
for kind in dma vmem util deps suggest; do
  "$SNR" analyze $kind "$T/all.snrms" --json >"$T/$kind.json" 2>"$T/$kind.err" || fail "analyze $kind: $(cat "$T/$kind.err")"
  python3 - "$T/$kind.json" "$T/replay.json" "$kind" <<'PY' || fail "analyze $3 --json of the set"
import json, sys
a, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert a['kind'] == sys.argv[3] and [w['window'] for w in a['windows']] == list(range(6)), a.keys()
assert all(isinstance(w['result'], dict) and w['result'] for w in a['windows']), [w['result'] is None for w in a['windows']]
assert a['together']['cycles'] == r['total']['cycles'] and a['together']['windows'] == 6, a['together']
assert [g['group'] for g in a['groups']] == ['prefill', 'decode'], a['groups']
PY
done
"$SNR" analyze dma "$T/prefill.snrs" "$T/decode.snrs" >"$T/dma.txt" || fail "analyze dma of the trace sets"
[ "$(grep -c '^== window' "$T/dma.txt")" = 6 ] && grep -q "^6 win *together" "$T/dma.txt" || fail "analyze dma text: $(cat "$T/dma.txt")"
python3 - "$T/dma.json" <<'PY' || fail "analyze dma: a window's result is not its own"
import json, sys
a = json.load(open(sys.argv[1]))
for w in a['windows']:
    assert w['result']['totals']['dmas'] == len(w['result']['dmas']), w['window']
PY
"$SNR" annotate "$T/prefill.snrs" "$T/decode.snrs" --json >"$T/annot.json" || fail "annotate of the sets"
python3 - "$T/annot.json" "$T/replay.json" <<'PY' || fail "annotate together"
import json, sys
a, r = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
assert [w['window'] for w in a['windows']] == list(range(6))
t = a['together']
assert t['total_cycles'] == r['total']['cycles'] == sum(w['result']['total_cycles'] for w in a['windows']), t['total_cycles']
assert t['stall_cycles'] == r['total']['stall_cycles'], (t['stall_cycles'], r['total']['stall_cycles'])
assert sum(l['cycles'] for l in t['lines']) + t['drain_cycles'] == t['total_cycles']
PY
echo "analyze dma, vmem, util, deps, suggest and annotate: per window with its index, per group, together"
# export perfetto takes a set: a process per window, named by its group and index
"$SNR" export perfetto "$T/all.snrms" -o "$T/p.json" --format json 2>"$T/exp.err" ||
  fail "export perfetto of a set: $(cat "$T/exp.err")"
python3 - "$T/p.json" "$T/all.snrms/set.json" <<'PY' || fail "export perfetto of a set: the processes"
import json, sys
names = [e["args"]["name"] for e in json.load(open(sys.argv[1]))["traceEvents"]
         if e.get("ph") == "M" and e.get("name") == "process_name"]
n = len(json.load(open(sys.argv[2]))["windows"])
assert len(names) == n and all(" window " in x for x in names), (names, n)
PY

# an incomplete set is partial: refused (exit 3) unless --allow-truncated
cp -r "$T/decode.snrs" "$T/cut.snrs"
python3 - "$T/cut.snrs/set.json" <<'PY'
import json, sys
m = json.load(open(sys.argv[1])); m['complete'] = False; m['end'] = 'killed'; m['windows'] = m['windows'][:2]
json.dump(m, open(sys.argv[1], 'w'))
PY
for cmd in "replay" "analyze dma" "annotate" "report -o $T/cut.html"; do
  "$SNR" $cmd "$T/cut.snrs" >"$T/cut.out" 2>&1; rc=$?
  [ $rc = 3 ] || fail "$cmd of an incomplete set: exit $rc, want 3: $(cat "$T/cut.out")"
  grep -q "partial: it holds 2 finished windows of 3" "$T/cut.out" || fail "$cmd: $(cat "$T/cut.out")"
done
"$SNR" replay "$T/cut.snrs" --allow-truncated >"$T/cut.out" 2>&1 || fail "replay --allow-truncated: $(cat "$T/cut.out")"
grep -q "^2 win *together" "$T/cut.out" || fail "replay --allow-truncated: $(cat "$T/cut.out")"
echo "an incomplete set: refused with exit 3 by replay, analyze, annotate and report; read with --allow-truncated"
echo "ok"
