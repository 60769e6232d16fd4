#!/usr/bin/env bash
# snr analyze dma|vmem|util on tests/an/an_prog.c, whose answers are known
# before running it (see the comment at the top of an_prog.c), both from the
# trace (replayed in-process) and from the metrics file; then the Perfetto
# export's trace-event format (check_perfetto.py), and its protobuf form
# against the JSON (check_perfetto_proto.py).
# usage: analyses.sh SNR
set -u
SNR=$1; HERE=$(cd "$(dirname "$0")" && pwd)
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
. "$HERE/lib.sh"
record_an_prog "$SNR" "$T"

for f in a.snrt a.snrm; do
  "$SNR" analyze dma "$T/$f" --json >"$T/dma.json" || fail "analyze dma $f"
  "$SNR" analyze vmem "$T/$f" --interval 1 --json >"$T/vmem.json" || fail "analyze vmem $f"
  "$SNR" analyze util "$T/$f" --window 100000 --json >"$T/util.json" || fail "analyze util $f"
  python3 "$HERE/check_analyses.py" "$T/dma.json" "$T/vmem.json" "$T/util.json" || fail "known answers ($f)"
done
# the text tables fit 100 columns
for k in dma vmem util; do
  "$SNR" analyze $k "$T/a.snrm" >"$T/$k.txt" || fail "analyze $k (text)"
  awk -v k=$k 'length($0) > 100 { print "line over 100 columns in " k ": " $0; bad=1 } END { exit bad }' "$T/$k.txt" ||
    fail "$k table too wide"
done
grep -q "window+0x" "$T/dma.txt" || fail "dma table not symbolized: $(cat "$T/dma.txt")"

"$SNR" export perfetto "$T/a.snrt" "$T/a.snrm" -o "$T/trace.json" 2>"$T/export.err" || fail "export perfetto"
python3 "$HERE/check_perfetto.py" "$T/trace.json" || fail "trace-event format"
# a small window: --format auto wrote JSON, and said nothing
[ ! -s "$T/export.err" ] || fail "export perfetto (auto, small window) said: $(cat "$T/export.err")"
# Perfetto's protobuf format: the same slices, flows and counters as the JSON, decoded by
# Debian's python3-protobuf against the .proto the export is compiled from
"$SNR" export perfetto --format proto "$T/a.snrt" "$T/a.snrm" -o "$T/trace.pb" 2>"$T/proto.err" ||
  fail "export perfetto --format proto"
[ ! -s "$T/proto.err" ] || fail "export perfetto --format proto said: $(cat "$T/proto.err")"
/usr/bin/python3 -c 'import google.protobuf' 2>/dev/null ||
  fail "python3-protobuf is missing (Debian's /usr/bin/python3): scripts/install-deps"
protoc --python_out="$T" -I"$HERE/../../analyzer" "$HERE/../../analyzer/perfetto_trace.proto" ||
  fail "protoc (protobuf-compiler) on analyzer/perfetto_trace.proto"
/usr/bin/python3 "$HERE/check_perfetto_proto.py" "$T" "$T/trace.pb" "$T/trace.json" || fail "protobuf export vs JSON"
# the format is checked by protoc itself too
protoc --decode=perfetto.protos.Trace -I"$HERE/../../analyzer" "$HERE/../../analyzer/perfetto_trace.proto" \
  <"$T/trace.pb" >"$T/trace.txt" || fail "protoc --decode of the protobuf export"
grep -q 'TYPE_SLICE_BEGIN' "$T/trace.txt" || fail "protoc --decode shows no slice"
"$SNR" export perfetto --format xml "$T/a.snrm" -o "$T/x" 2>"$T/fmt.err" && fail "--format xml accepted"
grep -q "auto, json or proto" "$T/fmt.err" || fail "--format xml: $(cat "$T/fmt.err")"
# The same analyses and export with every spilled array's memory budget at 1 KiB
# (SNR_SPILL_MEM, lib/snr_spill.h): the pcs, busy intervals and VMEM accesses go
# through temporary files even on this small window, and every output is the same.
for k in dma vmem util; do
  "$SNR" analyze $k "$T/a.snrm" --json >"$T/$k.mem.json" || fail "analyze $k --json"
  SNR_SPILL_MEM=1024 "$SNR" analyze $k "$T/a.snrm" --json >"$T/$k.spill.json" || fail "analyze $k (spilled)"
  cmp -s "$T/$k.mem.json" "$T/$k.spill.json" || fail "analyze $k --json differs when spilled"
done
SNR_SPILL_MEM=1024 "$SNR" export perfetto --format proto "$T/a.snrt" "$T/a.snrm" -o "$T/trace.spill.pb" ||
  fail "export perfetto (spilled)"
cmp -s "$T/trace.pb" "$T/trace.spill.pb" || fail "export perfetto --format proto differs when spilled"
# analyze dma --json is written one DMA at a time in json_dumpf's layout: it
# parses, and dumped again with the same layout (indent 1, ", " and ": ") it is
# the same text
/usr/bin/python3 -c 'import json, sys
t = open(sys.argv[1]).read()
sys.exit(json.dumps(json.loads(t), indent=1, ensure_ascii=False) + "\n" != t)' "$T/dma.mem.json" ||
  fail "analyze dma --json: not the layout of a whole-document dump"
# no temporary folder: an error naming it, exit 1, no output
SNR_SPILL_MEM=1024 TMPDIR=/nonexistent-snr-tmp "$SNR" analyze vmem "$T/a.snrm" >"$T/o" 2>"$T/e"
rc=$?
[ $rc = 1 ] || fail "analyze vmem without a temporary folder: exit $rc, want 1"
grep -q "temporary file in /nonexistent-snr-tmp" "$T/e" || fail "analyze vmem without a temporary folder: $(cat "$T/e")"
[ ! -s "$T/o" ] || fail "analyze vmem without a temporary folder printed a result"
echo "ok: dma, vmem, util known answers from trace and metrics; perfetto export well-formed, its protobuf" \
  "form equal to its JSON"
