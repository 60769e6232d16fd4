#!/usr/bin/env python3
"""Two .snrt files hold the same bytes: every chunk's header and payload
equal, except what differs between two recordings of one window by
nature: META's "created" time and "target" (the stub's port), END's "seconds", "debugger_requests" and
"bytes_fetched" (those two count the target's answers, which a second
recording's page cache and catch-up may take in another number of
requests). A chunk whose length or CRC differs for that reason only is
compared by its decoded JSON. usage: trace_bytes_same.py A.snrt B.snrt"""
import json
import struct
import sys

VOLATILE_META = {"created", "target"}
VOLATILE_END = {"seconds", "debugger_requests", "bytes_fetched"}


def chunks(path):
    data = open(path, "rb").read()
    if data[:8] != b"SNRTRACE":
        sys.exit(f"{path}: not a trace")
    out, off = [data[:16]], 16
    while off < len(data):
        magic, typ, codec, seq, slen, rlen, pcrc, hcrc = struct.unpack_from("<IHHIIIII", data, off)
        out.append((typ, codec, seq, data[off + 28:off + 28 + slen], data[off:off + 28]))
        off += 28 + slen
    return out


def main():
    a, b = chunks(sys.argv[1]), chunks(sys.argv[2])
    if a[0] != b[0]:
        sys.exit("file headers differ")
    if len(a) != len(b):
        sys.exit(f"{len(a) - 1} chunks against {len(b) - 1}")
    for i, (x, y) in enumerate(zip(a[1:], b[1:])):
        if x[:3] != y[:3]:
            sys.exit(f"chunk {i}: type/codec/seq {x[:3]} against {y[:3]}")
        if x[3] == y[3] and x[4] == y[4]:
            continue
        if x[0] not in (1, 5) or x[1] != 0:
            sys.exit(f"chunk {i} (type {x[0]}) differs")
        drop = VOLATILE_META if x[0] == 1 else VOLATILE_END
        jx, jy = json.loads(x[3]), json.loads(y[3])
        for k in drop:
            jx.pop(k, None)
            jy.pop(k, None)
        if jx != jy:
            keys = sorted(k for k in set(jx) | set(jy) if jx.get(k) != jy.get(k))
            sys.exit(f"chunk {i} (type {x[0]}) differs beyond {sorted(drop)}: in {keys}")
    print(f"same: {len(a) - 1} chunks")


main()
