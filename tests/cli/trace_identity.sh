#!/usr/bin/env bash
# A metrics file knows its trace by identity, not by path: `snr replay -o`
# records the trace's digest (FNV-1a 64 of the file's bytes) and size, and
# whatever reopens "the trace it was replayed from" (analyze suggest --verify,
# report's what-ifs) refuses another trace put at that path, refuses a FIFO
# there without waiting on it, and takes the trace from --trace PATH when
# given (checked all the same). A metrics file without a digest (an older
# snr's) needs --trace and is then used with a warning.
# usage: trace_identity.sh SNR CHUNK_FORGE TRACES_DIR
source "$(dirname "$0")/lib.sh"
SNR=$(realpath "$SNR"); FORGE=$(realpath "$2"); TR=$(realpath "$3")
cp "$TR/ta1-matmul-chain.snrt" "$T/t.snrt"
cp "$T/t.snrt" "$T/keep.snrt"
cd "$T"
run "$SNR" replay t.snrt -o m.snrm; expect_rc 0
grep -aq '"trace_digest":"fnv1a64:[0-9a-f]\{16\}","trace_bytes":'"$(stat -c %s t.snrt)" m.snrm ||
  fail "m.snrm's META records no trace_digest and trace_bytes"
run "$SNR" analyze suggest m.snrm --verify --json; expect_rc 0
cp out good.json
grep -q '"combined"' good.json || fail "suggest --verify ran no what-if: $(head -c 300 good.json)"

# another trace at the recorded path: refused, naming both digests
cp "$TR/ta1-decode-step.snrt" t.snrt
run "$SNR" analyze suggest m.snrm --verify; expect_rc 1
expect_err "t.snrt is not the trace m.snrm was replayed from"
expect_err "--trace PATH"
# the same through report: the suggestions say why they have no what-if
run "$SNR" report m.snrm -o r.html; expect_rc 0
grep -q 'is not the trace m.snrm was replayed from' r.html || fail "report verified suggestions on another trace"
run "$SNR" report m.snrm -o r2.html --trace keep.snrt; expect_rc 0
grep -q "\"verify_error\":" r2.html && fail "report --trace keep.snrt: $(grep -o "\"verify_error\":[^}]*" r2.html | head -c 300)"

# a FIFO at the path: refused at once, never waited on
rm t.snrt; mkfifo t.snrt
run timeout 20 "$SNR" analyze suggest m.snrm --verify
[ "$rc" -eq 124 ] && fail "suggest --verify hung on a FIFO at the trace's path"
expect_rc 1; expect_err "t.snrt: not a regular file (a FIFO)"
for cmd in "replay" "analyze dma" "trace info"; do
  run timeout 20 "$SNR" $cmd t.snrt
  [ "$rc" -eq 124 ] && fail "$cmd hung on a FIFO"
  expect_rc 1; expect_err "not a regular file (a FIFO)"
done

# --trace names it: the same results as on the recorded path
run "$SNR" analyze suggest m.snrm --verify --json --trace keep.snrt; expect_rc 0
cmp -s out good.json || fail "--trace keep.snrt gives other results than the recorded trace"
run "$SNR" analyze suggest m.snrm --verify --trace "$TR/ta1-decode-step.snrt"; expect_rc 1
expect_err "is not the trace m.snrm was replayed from"
run "$SNR" analyze suggest keep.snrt --verify --trace keep.snrt; expect_rc 1
expect_err "--trace names the trace of a metrics file"
run "$SNR" report keep.snrt -o r3.html --trace keep.snrt; expect_rc 2
expect_err "--trace names the trace of a metrics file"
[ -e r3.html ] && fail "report --trace on a trace wrote a page"
run "$SNR" analyze suggest m.snrm --trace keep.snrt; expect_rc 2
expect_err "--trace needs --verify"

# a metrics file without a digest: --trace required, then used with a warning
"$FORGE" m.snrm old.snrm delkey 0 trace_digest || fail "chunk_forge delkey"
rm t.snrt; cp keep.snrt t.snrt
run "$SNR" analyze suggest old.snrm --verify; expect_rc 1
expect_err "records its trace only by path"
expect_err "--trace PATH"
run "$SNR" analyze suggest old.snrm --verify --json --trace keep.snrt; expect_rc 0
expect_err "records no digest of its trace"
sed 's/"source":"old.snrm"/"source":"m.snrm"/' out | cmp -s - good.json || fail "old.snrm --trace keep.snrt gives other results"
echo ok
