#!/usr/bin/env bash
# Behind the CRCs: chunks re-encoded with valid checksums (chunk_forge) but a
# mutated payload, a forged raw length, two chunks exchanged, one dropped.
# Every reader names the chunk and refuses the damaged file (exit 3, README.md's
# "Exit status"), none crashes or reads on;
# a metrics file's EVENTS chunks exchanged or left out are caught as such.
# And nothing a user has is lost: a replay that fails part-way leaves the
# good .snrm at its -o path as it was; an export or a report that fails
# leaves the file at its -o path as it was (each given --force, which lets a
# finished output replace the file, never a failed one).
# usage: forged_chunks.sh SNR CHUNK_FORGE TRACE
set -u
SNR=$1; FORGE=$2; TRACE=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" replay "$TRACE" -o "$T/good.snrm" >/dev/null || fail "replay of $TRACE"
cp "$T/good.snrm" "$T/good.before"
echo '{"old": "export"}' >"$T/x.json"; cp "$T/x.json" "$T/x.before"
echo '<html>old report</html>' >"$T/r.html"; cp "$T/r.html" "$T/r.before"

for forge in "flip 3 5" "flip 3 200" "flip 1 0" "rawlen 3 99999" "rawlen 3 10" "swap 2 3" "swap 0 1" "drop 2" \
             "drop 0"; do
  "$FORGE" "$TRACE" "$T/bad.snrt" $forge || fail "chunk_forge $forge"
  for cmd in "trace verify" "trace dump" "replay" "analyze dma"; do
    extra=""; [ "$cmd" = replay ] && extra="-o $T/good.snrm --force"
    $SNR $cmd "$T/bad.snrt" $extra >"$T/out.txt" 2>&1
    rc=$?
    [ $rc -eq 3 ] || fail "$cmd on a trace with $forge: exit $rc: $(head -c 300 "$T/out.txt")"
    grep -q "chunk [0-9]* (offset [0-9]*)\|no META\|not an snr" "$T/out.txt" ||
      fail "$cmd on $forge: the message names no chunk: $(head -c 300 "$T/out.txt")"
  done
  cmp -s "$T/good.snrm" "$T/good.before" || fail "a failed replay ($forge) changed the .snrm at its -o path"
  "$SNR" export perfetto "$T/bad.snrt" -o "$T/x.json" --force >/dev/null 2>&1 && fail "export of $forge succeeded"
  cmp -s "$T/x.json" "$T/x.before" || fail "a failed export ($forge) changed the file at its -o path"
  "$SNR" report "$T/bad.snrt" -o "$T/r.html" --force >/dev/null 2>&1 && fail "report of $forge succeeded"
  cmp -s "$T/r.html" "$T/r.before" || fail "a failed report ($forge) changed the file at its -o path"
done
# The metrics file's reader, behind its CRCs too.
for forge in "flip 2 3" "rawlen 2 5" "drop 0"; do
  "$FORGE" "$T/good.snrm" "$T/bad.snrm" $forge || fail "chunk_forge $forge on the metrics file"
  "$SNR" analyze dma "$T/bad.snrm" >"$T/out.txt" 2>&1
  rc=$?
  [ $rc -eq 3 ] || fail "analyze dma on a metrics file with $forge: exit $rc: $(head -c 300 "$T/out.txt")"
done
# Its EVENTS chunks in another order, or some left out, each renumbered with
# valid checksums: refused (each chunk says how many records precede it, and
# the events end with a chunk counting them all), never analyzed out of order.
# good.snrm: META, SYMBOLS, 2 EVENTS (2..3, format 5: one record per
# instruction), the events' end (4), SUMMARY (5).
"$FORGE" "$T/good.snrm" "$T/bad.snrm" flip 6 0 2>&1 | grep -q "has 6 chunks" ||
  fail "good.snrm is not META, SYMBOLS, 2 EVENTS, the end, SUMMARY"
for forge in "swap 2 3" "swap 3 4" "drop 2" "drop 3" "drop 4"; do
  "$FORGE" "$T/good.snrm" "$T/bad.snrm" $forge || fail "chunk_forge $forge on the metrics file"
  for cmd in "analyze dma" "analyze util" "annotate" "analyze suggest"; do
    $SNR $cmd "$T/bad.snrm" >"$T/out.txt" 2>&1
    rc=$?
    [ $rc -eq 3 ] || fail "$cmd on a metrics file with $forge: exit $rc: $(head -c 300 "$T/out.txt")"
    grep -q "chunk [0-9]* (offset [0-9]*): EVENTS out of order\|chunk [0-9]* (offset [0-9]*): the events' end" \
      "$T/out.txt" || fail "$cmd on $forge: $(head -c 300 "$T/out.txt")"
  done
done
# The trace without its END (a recorder that stopped): dump refuses it (exit
# 3); with --allow-truncated every JSON line says "truncated": true, and the
# whole trace's lines do not.
n=$("$FORGE" "$TRACE" "$T/x.snrt" flip 9999 0 2>&1 | sed -n 's/.* has \([0-9]*\) chunks/\1/p')
[ -n "$n" ] || fail "cannot count the chunks of $TRACE"
"$FORGE" "$TRACE" "$T/noend.snrt" drop $((n - 1)) || fail "chunk_forge drop END"
"$SNR" trace dump --json "$T/noend.snrt" >"$T/out.txt" 2>&1
[ $? -eq 3 ] || fail "trace dump --json of a trace without END: not exit 3: $(head -c 300 "$T/out.txt")"
"$SNR" trace dump --json --allow-truncated "$T/noend.snrt" 2>/dev/null >"$T/dump.jsonl" || fail "dump --allow-truncated"
python3 - "$T/dump.jsonl" <<'PY' || fail "trace dump --json --allow-truncated: lines lack \"truncated\": true"
import json, sys
lines = [json.loads(l) for l in open(sys.argv[1])]
assert lines and all(l.get("truncated") is True for l in lines), len(lines)
PY
"$SNR" trace dump --json "$TRACE" 2>/dev/null | grep -q truncated && fail "a whole trace's dump says truncated"
ls -A "$T" | grep -q '^\.' && fail "temporary files left behind: $(ls -A "$T")"
echo "ok"
