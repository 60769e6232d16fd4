#!/usr/bin/env bash
# Every reader of a trace (snr trace info, dump, verify, snr replay) reports
# a corrupted byte with the chunk and offset, exits 3 (a damaged input, as
# every reader: README.md, "Exit status"), and never crashes.
# usage: corrupt_readers.sh SNR CORPUS_TRACE
set -u
SNR=$1; SRC=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
size=$(stat -c %s "$SRC")
for off in 20 60 100 $((size / 2)) $((size - 5)); do
  cp "$SRC" "$T/bad.snrt"
  printf '\x5a' | dd of="$T/bad.snrt" bs=1 seek=$off conv=notrunc status=none
  # flip rather than overwrite: make sure the byte changed
  cmp -s "$SRC" "$T/bad.snrt" && printf '\xa5' | dd of="$T/bad.snrt" bs=1 seek=$off conv=notrunc status=none
  for cmd in "trace info" "trace dump" "trace verify" "replay"; do
    $SNR $cmd "$T/bad.snrt" >/dev/null 2>"$T/err"
    rc=$?
    [ $rc -eq 3 ] || fail "snr $cmd with byte $off corrupted: exit $rc ($(cat "$T/err"))"
    grep -q "chunk [0-9]* (offset [0-9]*)\|file header" "$T/err" || fail "snr $cmd: no place named: $(cat "$T/err")"
  done
done
echo ok
