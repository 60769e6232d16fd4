#!/usr/bin/env python3
"""Writes the kept seed corpus of fuzz_rsp (tests/fuzz/corpus/rsp/): a few
whole, valid debugger sessions against the fixture program of
tests/rsp/rsp_fixture.h. Run it again after changing the sessions."""
import os

def frame(p):
    if isinstance(p, str):
        p = p.encode()
    return b"$" + p + b"#%02x" % (sum(p) & 0xFF)

SESSIONS = {
    "handshake": ["qSupported:multiprocess+;swbreak+;xmlRegisters=i386", "+", "QStartNoAckMode",
                  "qXfer:features:read:target.xml:0,ffb", "qXfer:features:read:target.xml:ffb,ffb",
                  "?", "qfThreadInfo", "qsThreadInfo", "qC", "qAttached", "Hg0", "g", "p20",
                  "vCont?", "k"],
    "breakpoints": ["QStartNoAckMode", "Z0,10014,4", "vCont;c", "pa", "z0,10014,4", "Z1,10010,4",
                    "c", "z1,10010,4", "s", "vCont;s:1", "c", "?", "D"],
    "memory": ["QStartNoAckMode", "m10000,24", "M10100,8:0102030405060708",
               b"X10108,4:}\x03}\x04}]}\x0a", "m10100,10", "m0,4", "P20=2000010000000000", "c",
               "P20=1c00010000000000", "c", "G" + "00" * 8 * 53],
    "threads": ["2", "QStartNoAckMode", "qfThreadInfo", "Hg2", "p33", "M10100,1:ff", "Hg1",
                "m10100,1", "Z0,10014,4", "Hc-1", "c", "vCont;c:2", "qThreadExtraInfo,2",
                "T2", "Hc2", "s", "vCont;c", "?"],
    "acks": ["?", "-", "+", "qC", "+", b"$g#00", "g", "+", "\x03", "M10024,4:6f000000",
             "P20=2400010000000000", "c", "\x03", "g"],
}

here = os.path.join(os.path.dirname(os.path.abspath(__file__)), "corpus", "rsp")
os.makedirs(here, exist_ok=True)
for name, items in SESSIONS.items():
    out = b""
    for it in items:
        raw = it.encode() if isinstance(it, str) else it
        if raw in (b"+", b"-", b"\x03", b"2") or raw.startswith(b"$"):
            out += raw
        else:
            out += frame(raw)
    with open(os.path.join(here, name), "wb") as f:
        f.write(out)
