#!/usr/bin/env bash
# Numbers behind valid CRCs (chunk_forge setkey/drop): a metrics file's
# SUMMARY and a trace's META and END given extreme or inconsistent values.
# Every reader refuses the file with exit 3, naming the file and the field,
# or, for a trace whose END contradicts its steps, reads it as truncated
# with --allow-truncated (and says so); none crashes, hangs or allocates
# what a number asks for.
# usage: forged_numbers.sh SNR CHUNK_FORGE TRACE
set -u
SNR=$1; FORGE=$2; TRACE=$3
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
# a refused reader: exit 3, the file and the field named
refused() { # WHAT FILE FIELD CMD...
  local what=$1 file=$2 field=$3; shift 3
  timeout 60 "$@" >"$T/out.txt" 2>&1
  local rc=$?
  [ $rc -eq 3 ] || fail "$what: exit $rc: $(grep -v warning "$T/out.txt" | head -c 300)"
  grep -q "$file" "$T/out.txt" && grep -q "\"$field\"\|$field" "$T/out.txt" ||
    fail "$what: the message names not $file and $field: $(grep -v warning "$T/out.txt" | head -c 300)"
}
"$SNR" replay "$TRACE" -o "$T/good.snrm" >/dev/null 2>&1 || fail "replay of $TRACE"
# good.snrm: META, SYMBOLS, EVENTS..., SUMMARY last
ns=$("$FORGE" "$T/good.snrm" "$T/x" flip 9999 0 2>&1 | sed -n 's/.* has \([0-9]*\) chunks/\1/p')
[ -n "$ns" ] || fail "cannot count the chunks of good.snrm"
sum=$((ns - 1))
"$SNR" analyze util "$T/good.snrm" >/dev/null 2>&1 || fail "analyze util of the good metrics file"
big=9223372036854775807
for key in cycles instructions; do
  for v in -1 -20 0 $big 18446744073709551615 1.5 '"12"' null; do
    "$FORGE" "$T/good.snrm" "$T/m.snrm" setkey $sum $key "$v" || fail "setkey $key $v"
    for cmd in "analyze util" "analyze vmem" "analyze deps" "analyze suggest"; do
      refused "$cmd, SUMMARY $key=$v" m.snrm SUMMARY $SNR $cmd "$T/m.snrm"
      grep -q "$key\|SUMMARY is not JSON" "$T/out.txt" || fail "$cmd, $key=$v: no $key: $(head -c 300 "$T/out.txt")"
    done
    refused "export perfetto, SUMMARY $key=$v" m.snrm SUMMARY $SNR export perfetto "$T/m.snrm" -o "$T/p.json"
    refused "report, SUMMARY $key=$v" m.snrm SUMMARY $SNR report "$T/m.snrm" -o "$T/r.html"
  done
done
for key in dma_count dma_bytes stall_cycles verified; do
  "$FORGE" "$T/good.snrm" "$T/m.snrm" setkey $sum $key -1 || fail "setkey $key"
  refused "analyze util, SUMMARY $key=-1" m.snrm "$key" $SNR analyze util "$T/m.snrm"
done
"$FORGE" "$T/good.snrm" "$T/m.snrm" setkey $sum stall_cycles '{"dma-base": -5}' || fail "setkey stall_cycles"
refused "analyze util, a stall count of -5" m.snrm "stall_cycles.dma-base" $SNR analyze util "$T/m.snrm"

# The trace: META's counts, END's count against the steps, the DIGEST.
nt=$("$FORGE" "$TRACE" "$T/x" flip 9999 0 2>&1 | sed -n 's/.* has \([0-9]*\) chunks/\1/p')
[ -n "$nt" ] || fail "cannot count the chunks of $TRACE"
end=$((nt - 1)) digest=$((nt - 2)) steps=$((nt - 3))
for v in -1 1.5 '"a"'; do
  "$FORGE" "$TRACE" "$T/t.snrt" setkey 0 count "$v" || fail "setkey META count"
  for cmd in "trace info" "trace verify" "replay" "analyze dma"; do
    refused "$cmd, META count=$v" t.snrt count $SNR $cmd "$T/t.snrt"
  done
done
forge_end() { "$FORGE" "$TRACE" "$T/t.snrt" setkey $end instructions "$1" || fail "setkey END instructions $1"; }
for forge in "end -1" "end 59999" "end 60001" "end $big" "end 1.5" "drop $digest" "drop $steps"; do
  set -- $forge
  if [ "$1" = end ]; then forge_end "$2"; field=instructions; else
    "$FORGE" "$TRACE" "$T/t.snrt" drop "$2" || fail "drop $2"; field="instructions\|DIGEST"; fi
  for cmd in "trace verify" "trace info" "trace dump" "replay" "analyze dma" "analyze util"; do
    refused "$cmd, $forge" t.snrt "$field" $SNR $cmd "$T/t.snrt"
  done
  refused "export perfetto, $forge" t.snrt "$field" $SNR export perfetto "$T/t.snrt" -o "$T/p.json"
  # with --allow-truncated: read as truncated, and labelled so
  "$SNR" trace info --json --allow-truncated "$T/t.snrt" 2>/dev/null | grep -q '"truncated": true' ||
    fail "trace info --json --allow-truncated, $forge: not labelled truncated"
  "$SNR" trace info --allow-truncated "$T/t.snrt" 2>/dev/null | grep -q 'TRUNCATED' ||
    fail "trace info --allow-truncated, $forge: not labelled truncated"
  "$SNR" replay --json --allow-truncated "$T/t.snrt" >"$T/out.txt" 2>&1 || fail "replay --allow-truncated, $forge: $(head -c 300 "$T/out.txt")"
  grep -q '"truncated": true' "$T/out.txt" || fail "replay --json --allow-truncated, $forge: not labelled truncated"
done
"$SNR" trace verify "$TRACE" >/dev/null || fail "trace verify of $TRACE"
echo "ok"
