#!/usr/bin/env bash
# snr check: the stored traces pass against their goldens; a golden that no
# longer matches fails naming the field and both values; a trace of another
# format version is refused naming the version; --update rewrites goldens.
. "$(dirname "$0")/lib.sh"
TRACES=$2
run "$SNR" check "$TRACES"
expect_rc 0; expect_out "passed, 0 failed"
mkdir "$T/tr"
cp "$TRACES"/ta1-rec-window.snrt "$TRACES"/ta1-rec-window.golden.json "$T/tr/"
python3 - "$T/tr/ta1-rec-window.golden.json" <<'PY'
import json, sys
g = json.load(open(sys.argv[1])); g["cycles"] += 7; json.dump(g, open(sys.argv[1], "w"))
PY
run "$SNR" check "$T/tr"
expect_rc 1; expect_out "FAIL ta1-rec-window.snrt: cycles"; expect_out "0 passed, 1 failed"
run "$SNR" check "$T/tr" --update
expect_rc 0; expect_out "UPDATED ta1-rec-window.snrt"
run "$SNR" check "$T/tr"
expect_rc 0
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
echo ok
