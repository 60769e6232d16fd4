#!/usr/bin/env bash
# Metrics files of the previous format version are still read, as what they
# are: tests/metrics/*-v4.snrm were written by `snr replay -o` of format 4
# (an ISSUE and a RETIRE record per instruction, its registers one record
# each) from the stored traces, with that replay's --json beside them;
# *-v5.snrm by the format-5 writer from the same timing model (before the
# pod's fabric shared ports max-min fairly, which moves some DMAs of the
# All-Gather window). Each trace is replayed again now, which must write
# format 6 (a pod's PEER and FABRIC records: none in a one-chip window) and
# the same replay --json (which has had the peer cause since), and every
# reader must read it; every reader must give the same
# output on the format-4 file and on the format-5 one:
# replay --json against the stored one, analyze dma, vmem, util, deps,
# suggest and suggest --verify --json, annotate --json, the report's page,
# and the Perfetto export in JSON and protobuf.
# usage: metrics_versions.sh SNR SRCDIR
source "$(dirname "$0")/lib.sh"
SNR=$(realpath "$SNR"); SRC=$(realpath "$2")
version() { od -A n -t u4 -j 8 -N 4 "$1" | tr -d ' '; }
cd "$SRC" # the fixtures name their traces relative to the source root
for old in tests/metrics/*-v4.snrm; do
  name=$(basename "$old" -v4.snrm)
  trace=traces/$name.snrt
  mkdir -p "$T/$name/old" "$T/$name/new" "$T/$name/cur"
  cp "$old" "$T/$name/old/m.snrm"
  "$SNR" replay "$trace" -o "$T/$name/new/m.snrm" --json >"$T/$name/new/replay.json" 2>"$T/err" ||
    fail "replay $trace: $(cat "$T/err")"
  cmp -s "$T/$name/new/replay.json" "tests/metrics/$name-v4.replay.json" ||
    fail "$trace: replay --json differs from the one stored with $old: $(diff "$T/$name/new/replay.json" \
      "tests/metrics/$name-v4.replay.json" | head -5)"
  [ "$(version "$old")" = 4 ] || fail "$old is format $(version "$old"), want 4"
  [ "$(version "$T/$name/new/m.snrm")" = 6 ] || fail "replay -o wrote format $(version "$T/$name/new/m.snrm"), want 6"
  cmp -s "$old" "$T/$name/new/m.snrm" && fail "$old and the new file are the same bytes"
  mv "$T/$name/new/m.snrm" "$T/$name/cur/m.snrm"
  cp "tests/metrics/$name-v5.snrm" "$T/$name/new/m.snrm"
  [ "$(version "$T/$name/new/m.snrm")" = 5 ] || fail "tests/metrics/$name-v5.snrm is not format 5"
  steps=0
  while IFS='|' read -r tag args; do
    for v in old new cur; do
      # shellcheck disable=SC2086
      (cd "$T/$name/$v" && "$SNR" $args >"$tag.out" 2>"$tag.err"; echo "exit $?" >>"$tag.out")
    done
    grep -q "^exit 0$" "$T/$name/new/$tag.out" ||
      fail "$name: snr $args failed: $(head -c 400 "$T/$name/new/$tag.err")"
    cmp -s "$T/$name/old/$tag.out" "$T/$name/new/$tag.out" ||
      fail "$name: snr $args differs between format 4 and 5: $(diff "$T/$name/old/$tag.out" \
        "$T/$name/new/$tag.out" | head -c 600)"
    grep -q "^exit 0$" "$T/$name/cur/$tag.out" ||
      fail "$name: snr $args failed on format 6: $(head -c 400 "$T/$name/cur/$tag.err")"
    steps=$((steps + 1))
  done <<STEPS
dma|analyze dma m.snrm --json
vmem|analyze vmem m.snrm --json
util|analyze util m.snrm --json
deps|analyze deps m.snrm --json
suggest|analyze suggest m.snrm --json
verify|analyze suggest m.snrm --verify --trace $SRC/$trace --json
annotate|annotate m.snrm --json
report|report m.snrm -o r.html --trace $SRC/$trace
perfetto|export perfetto m.snrm -o p.json
proto|export perfetto m.snrm --format proto -o p.pb
STEPS
  for f in r.html p.json p.pb; do
    [ -s "$T/$name/new/$f" ] || fail "$name: no $f written"
    cmp -s "$T/$name/old/$f" "$T/$name/new/$f" || fail "$name: $f differs between format 4 and 5"
    [ -s "$T/$name/cur/$f" ] || fail "$name: no $f written from format 6"
  done
  grep -q '"dmas"' "$T/$name/new/deps.out" || fail "$name: deps --json has no dmas: $(head -c 300 "$T/$name/new/deps.out")"
  echo "$name: format 4 and 5 read alike, 6 read ($steps commands, $(stat -c %s "$old") -> $(stat -c %s "$T/$name/new/m.snrm") bytes)"
done
echo "PASS metrics_versions"
