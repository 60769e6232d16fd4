#!/usr/bin/env bash
# One machine-config validator for every command: errors name the user's file
# with the line and column of the bad value; a missing file says so; types,
# ranges, sections and duplicate keys are checked the same by device, replay,
# the analyses and report; a config a trace carries is checked by the same
# code and its errors name the trace. A command applies --config to all its
# figures or refuses it: a metrics file's analyses refuse --config (their
# figures were timed with the config the file carries), and suggest --verify
# on a metrics file runs its what-ifs with that same config.
# usage: config_errors.sh SNR CHUNK_FORGE TRACES_DIR
source "$(dirname "$0")/lib.sh"
SNR=$(realpath "$SNR"); FORGE=$(realpath "$2"); TR=$(realpath "$3")
cd "$T"
cp "$TR/ta1-matmul-chain.snrt" t.snrt
printf '{"chips": {}}\n' >chips_obj.json
printf '{\n  "dma": {"base_latency_cycles": 100,\n          "base_latency_cycles": 200}\n}\n' >dup.json
printf '{\n  "dma": {\n    "hbm_bytes_per_cycle": 0\n  }\n}\n' >range.json
printf '{\n  "vector": {"latency_cycles": 1e300}\n}\n' >huge.json
printf '{"dma": 5}\n' >notobj.json
printf '{"dma": {"base_latency_cycles": 100}\n' >syntax.json
printf '{"dma": {"base_latency_cycles": 100}}\n' >tb100.json
printf '{"cache": {"l1": {"size": 1099511627776}}}\n' >cache_huge.json
mkfifo fifo.json

# every reader of a config: device, profile, replay, analyze, report
for cmd in "device x.elf" "profile x.elf" "replay t.snrt" "analyze dma t.snrt" "analyze vmem t.snrt" \
           "report t.snrt -o r.html" "annotate t.snrt" "analyze suggest t.snrt" "analyze util t.snrt" \
           "analyze deps t.snrt" "export perfetto t.snrt -o x.json"; do
  # each file and the error it must get: FILE:LINE:COL of the offending value
  while IFS='|' read -r file want; do
    run timeout 60 "$SNR" $cmd --config "$file"; expect_rc 1
    expect_err "$want"
  done <<'CASES'
missing.json|missing.json: No such file or directory
chips_obj.json|chips_obj.json:1:11: "chips" must be a whole number in [1, 256]
dup.json|dup.json:3:31: duplicate object key
range.json|range.json:3:28: "dma.hbm_bytes_per_cycle" = 0 is outside [1, 1048576]
huge.json|huge.json:2:32: "vector.latency_cycles" must be a whole number
notobj.json|notobj.json:1:9: "dma" must be an object of dma.* keys
syntax.json|syntax.json:2:0: 
cache_huge.json|cache_huge.json:1:11: cache.l1.size: an integer in [0, 268435456]
CASES
  run timeout 60 "$SNR" $cmd --config missing.json
  grep -q -- '-1:-1' "$T/err" && fail "$cmd: a missing file shown as line -1: $(cat "$T/err")"
  run timeout 20 "$SNR" $cmd --config fifo.json
  [ "$rc" -eq 124 ] && fail "$cmd --config FIFO hung"
  expect_rc 1; expect_err "fifo.json: not a regular file (a FIFO)"
  grep -q "trace's machine config" "$T/err" && fail "$cmd blames the trace for the user's file: $(cat "$T/err")"
done

# a config carried by a trace: the same validator, naming the trace
"$FORGE" t.snrt badcfg.snrt setkey 0 config '{"chips": {}}' || fail "chunk_forge setkey"
for cmd in "replay" "analyze dma" "annotate"; do
  run "$SNR" $cmd badcfg.snrt; expect_rc 1
  expect_err 'badcfg.snrt (its recorded machine config):1:10: "chips" must be a whole number'
done
"$FORGE" t.snrt dupcfg.snrt setkey 0 config '{"dma": {"base_latency_cycles": 100, "base_latency_cycles": 100}}' ||
  fail "chunk_forge setkey"
run "$SNR" replay dupcfg.snrt; expect_rc 3
expect_err "dupcfg.snrt: chunk 0 (offset 16): metadata is not JSON"
expect_err "duplicate object key"

# --config on a trace applies to every figure: the replay's and the analyses'
run "$SNR" replay t.snrt --json --config tb100.json; expect_rc 0
c100=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cycles"])' out)
run "$SNR" replay t.snrt --json; expect_rc 0
c500=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["cycles"])' out)
[ "$c100" -lt "$c500" ] || fail "Tb 100 gives $c100 cycles, Tb 500 $c500"
run "$SNR" analyze suggest t.snrt --verify --json --config tb100.json; expect_rc 0
python3 - out "$c100" <<'PY' || fail "suggest --config tb100.json: stalls and what-if disagree on the config"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cycles"] == int(sys.argv[2]) == d["what_if_baseline_cycles"], (d["cycles"], d["what_if_baseline_cycles"])
PY

# a metrics file carries its config: --config refused (even a valid one), and
# its what-ifs use the carried config
run "$SNR" replay t.snrt --config tb100.json -o m100.snrm; expect_rc 0
for cmd in "analyze dma" "analyze vmem" "analyze util" "analyze deps" "annotate" "analyze suggest" \
           "export perfetto -o x.json"; do
  for c in tb100.json syntax.json; do
    run "$SNR" $cmd m100.snrm --config $c; expect_rc 1
    expect_err "--config $c: m100.snrm is a metrics file, replayed with the machine config it carries"
  done
done
run "$SNR" report m100.snrm -o r.html --config tb100.json; expect_rc 1
expect_err "m100.snrm is a metrics file"
run "$SNR" analyze suggest m100.snrm --verify --json; expect_rc 0
python3 - out "$c100" <<'PY' || fail "suggest m100.snrm --verify: the what-if used another config than the stalls"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["cycles"] == int(sys.argv[2]) == d["what_if_baseline_cycles"], (d["cycles"], d["what_if_baseline_cycles"])
PY
# record stores a config only in a TA1 trace: another target refuses --config
if [ "$(uname -m)" = x86_64 ] && command -v cc >/dev/null; then
  printf 'int main(void) { return 0; }\n' >host.c
  cc -O1 host.c -o host || fail "cc host.c"
  run timeout 60 "$SNR" record --breakpoint main --count 10 -o host.snrt --config tb100.json -- ./host
  expect_rc 1
  expect_err "--config tb100.json: the machine config is stored in TA1 traces; this target is x86-64"
  [ -e host.snrt ] && fail "record --config on x86-64 left a trace"
fi
echo ok
