#!/usr/bin/env bash
# Behind the CRCs: chunks re-encoded with valid checksums (chunk_forge) but a
# mutated payload, a forged raw length, two chunks exchanged, one dropped.
# Every reader names the chunk and fails (exit 1), none crashes or reads on.
# And nothing a user has is lost: a replay that fails part-way leaves the
# good .snrm at its -o path as it was; an export or a report that fails
# leaves the file at its -o path as it was.
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
    extra=""; [ "$cmd" = replay ] && extra="-o $T/good.snrm"
    $SNR $cmd "$T/bad.snrt" $extra >"$T/out.txt" 2>&1
    rc=$?
    [ $rc -eq 1 ] || fail "$cmd on a trace with $forge: exit $rc: $(head -c 300 "$T/out.txt")"
    grep -q "chunk [0-9]* (offset [0-9]*)\|no META\|not an snr" "$T/out.txt" ||
      fail "$cmd on $forge: the message names no chunk: $(head -c 300 "$T/out.txt")"
  done
  cmp -s "$T/good.snrm" "$T/good.before" || fail "a failed replay ($forge) changed the .snrm at its -o path"
  "$SNR" export perfetto "$T/bad.snrt" -o "$T/x.json" >/dev/null 2>&1 && fail "export of $forge succeeded"
  cmp -s "$T/x.json" "$T/x.before" || fail "a failed export ($forge) changed the file at its -o path"
  "$SNR" report "$T/bad.snrt" -o "$T/r.html" >/dev/null 2>&1 && fail "report of $forge succeeded"
  cmp -s "$T/r.html" "$T/r.before" || fail "a failed report ($forge) changed the file at its -o path"
done
# The metrics file's reader, behind its CRCs too.
for forge in "flip 2 3" "rawlen 2 5" "drop 0"; do
  "$FORGE" "$T/good.snrm" "$T/bad.snrm" $forge || fail "chunk_forge $forge on the metrics file"
  "$SNR" analyze dma "$T/bad.snrm" >"$T/out.txt" 2>&1
  rc=$?
  [ $rc -eq 1 ] || fail "analyze dma on a metrics file with $forge: exit $rc: $(head -c 300 "$T/out.txt")"
done
ls -A "$T" | grep -q '^\.' && fail "temporary files left behind: $(ls -A "$T")"
echo "ok"
