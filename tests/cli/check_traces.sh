#!/usr/bin/env bash
# snr check: the stored traces pass against their goldens; a golden that no
# longer matches fails naming the field and both values; a trace of another
# format version is refused naming the version; --update rewrites goldens.
# Tolerances (--tolerance, a golden's "tolerance"): improvements pass as
# IMPROVED, regressions beyond fail, functional fields stay exact.
. "$(dirname "$0")/lib.sh"
TRACES=$2
run "$SNR" check "$TRACES"
expect_rc 0; expect_out "passed, 0 failed"
grep -o '^PASS [^:]*' "$T/out" | sort >"$T/all"
# --shard K/N: the N shares cover every trace once; --junit: a case per trace
: >"$T/shards"
for k in 1 2 3; do
  run "$SNR" check "$TRACES" --shard $k/3 --junit "$T/j$k.xml"
  expect_rc 0; expect_out "shard $k/3: "
  grep -o '^PASS [^:]*' "$T/out" >>"$T/shards"
  python3 - "$T/j$k.xml" "$T/out" <<'PY' || fail "shard $k's JUnit XML does not match its output"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
names = [c.get("name") for c in s.findall("testcase")]
passed = [l.split()[1].rstrip(":") for l in open(sys.argv[2]) if l.startswith("PASS ")]
assert names == passed and s.get("tests") == str(len(names)) and s.get("failures") == "0", (names, passed)
PY
done
sort "$T/shards" | cmp -s - "$T/all" || fail "the shards do not cover the traces once: $(sort "$T/shards" | diff - "$T/all")"
run "$SNR" check "$TRACES" --shard 40/40
expect_rc 0; expect_out "shard 40/40: no traces"
for bad in 0/3 4/3 3 1/0 x/2 1/2x; do
  run "$SNR" check "$TRACES" --shard "$bad"
  expect_rc 2; expect_err "--shard '$bad': give K/N with 1 <= K <= N"
done
run "$SNR" check "$TRACES" --junit
expect_rc 2; expect_err "--junit needs a value"
mkdir "$T/tr"
cp "$TRACES"/ta1-rec-window.snrt "$TRACES"/ta1-rec-window.golden.json "$T/tr/"
python3 - "$T/tr/ta1-rec-window.golden.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1])); g["cycles"] += 7; json.dump(g, open(sys.argv[1], "w"))
PY
run "$SNR" check "$T/tr" --junit "$T/fail.xml"
expect_rc 1; expect_out "FAIL ta1-rec-window.snrt: cycles"; expect_out "0 passed, 1 failed"
python3 - "$T/fail.xml" <<'PY' || fail "the JUnit XML does not carry the failure"
import sys, xml.etree.ElementTree as ET
s = ET.parse(sys.argv[1]).getroot().find("testsuite")
f = s.find("testcase").find("failure")
assert s.get("failures") == "1" and f is not None and f.get("message").startswith("cycles "), ET.tostring(s)
PY
run "$SNR" check "$T/tr" --update
expect_rc 0; expect_out "UPDATED ta1-rec-window.snrt"
run "$SNR" check "$T/tr"
expect_rc 0
# Tolerances: the golden edited so that the replay is 10% faster, then
# 10% slower, than it says (cycles; the register stall by 3% of the cycles).
golden_edit() { # CYCLES_FACTOR [TOLERANCE]
  python3 - "$TRACES/ta1-rec-window.golden.json" "$T/tr/ta1-rec-window.golden.json" "$@" <<'PY'
import json, sys
g = json.load(open(sys.argv[1])); f = float(sys.argv[3])
g["cycles"] = int(g["cycles"] * f); g["stall_cycles"]["register"] += int(g["cycles"] * 0.03 * (f > 1 and 1 or -1))
if len(sys.argv) > 4: g["tolerance"] = json.loads(sys.argv[4])
json.dump(g, open(sys.argv[2], "w"))
PY
}
golden_edit 1.1
run "$SNR" check "$T/tr"
expect_rc 1; expect_out "FAIL ta1-rec-window.snrt: cycles"; expect_out "(-9.09%), improved"
run "$SNR" check "$T/tr" --tolerance 2% --junit "$T/imp.xml" --force
expect_rc 0; expect_out "IMPROVED ta1-rec-window.snrt: cycles"; expect_out "beyond the 2% tolerance, faster"
expect_out "1 passed, 0 failed (1 of the passed improved beyond the tolerance)"
grep -q 'failures="0"' "$T/imp.xml" || fail "an improvement is a JUnit failure: $(cat "$T/imp.xml")"
run "$SNR" check "$T/tr" --tolerance 15%
expect_rc 0; expect_out "PASS ta1-rec-window.snrt"; expect_out "within the 15% tolerance: cycles"
golden_edit 0.9
run "$SNR" check "$T/tr" --tolerance 2%
expect_rc 1; expect_out "(+11.11%), regressed beyond 2%"; expect_out "0 passed, 1 failed"
run "$SNR" check "$T/tr" --tolerance 12
expect_rc 0; expect_out "within the 12% tolerance"
# the golden's own tolerance wins over the command's
golden_edit 0.9 '"1%"'
run "$SNR" check "$T/tr" --tolerance 50%
expect_rc 1; expect_out "regressed beyond 1%"
golden_edit 1.1 '"12%"'
run "$SNR" check "$T/tr"
expect_rc 0; expect_out "within the 12% tolerance"
# --update keeps the golden's tolerance
run "$SNR" check "$T/tr" --update
expect_rc 0
grep -q '"tolerance": "12%"' "$T/tr/ta1-rec-window.golden.json" || fail "--update dropped the golden's tolerance"
# functional fields stay exact under any tolerance
python3 - "$T/tr/ta1-rec-window.golden.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1])); g["instructions"] += 1; json.dump(g, open(sys.argv[1], "w"))
PY
run "$SNR" check "$T/tr" --tolerance 50%
expect_rc 1; expect_out "FAIL ta1-rec-window.snrt: instructions 60001 -> 60000"
golden_edit 1.0 '"abc"'
run "$SNR" check "$T/tr"
expect_rc 1; expect_out "the golden's \"tolerance\" is \"abc\""
for bad in 5%x -1 100 "" x; do
  run "$SNR" check "$T/tr" --tolerance "$bad"
  expect_rc 2; expect_err "--tolerance needs a percentage"
done
cp "$TRACES/ta1-rec-window.golden.json" "$T/tr/"
# A version-2 file header (checksum valid): refused, naming both versions.
python3 - "$T/tr/ta1-rec-window.snrt" "$T/tr/future.snrt" <<'PY'
import struct, sys
b = bytearray(open(sys.argv[1], "rb").read())
b[8:12] = struct.pack("<I", 2)
# CRC-32C of bytes 0..11
crc = 0xffffffff
for x in b[0:12]:
    crc ^= x
    for _ in range(8):
        crc = (crc >> 1) ^ (0x82f63b78 & -(crc & 1))
b[12:16] = struct.pack("<I", crc ^ 0xffffffff)
open(sys.argv[2], "wb").write(b)
PY
run "$SNR" check "$T/tr"
expect_rc 1; expect_out "format version 2; this snr reads version 1"
rm "$T/tr/future.snrt"
# A golden of {} checks nothing: it fails, naming what it lacks.
echo '{}' >"$T/tr/ta1-rec-window.golden.json"
run "$SNR" check "$T/tr"
expect_rc 1; expect_out "FAIL ta1-rec-window.snrt: instructions (not in the golden)"
# --update over a read-only golden's folder: the old golden stays whole.
run "$SNR" check "$T/tr" --update
expect_rc 0
cp "$T/tr/ta1-rec-window.golden.json" "$T/golden.before"
chmod a-w "$T/tr"
if [ "$(id -u)" != 0 ]; then
  run "$SNR" check "$T/tr" --update
  expect_rc 1; expect_out "cannot write"
  cmp -s "$T/golden.before" "$T/tr/ta1-rec-window.golden.json" || fail "a failed --update changed the golden"
fi
chmod u+w "$T/tr"
# A partial trace: refused with exit 3, and the refusal says so.
python3 - "$TRACES/ta1-rec-window.snrt" "$T/tr/ta1-rec-window.snrt" <<'PY'
import sys
b = open(sys.argv[1], "rb").read()
open(sys.argv[2], "wb").write(b[: len(b) // 2])
PY
run "$SNR" check "$T/tr"
expect_rc 3; expect_out "is partial: it holds"
echo ok
