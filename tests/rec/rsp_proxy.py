#!/usr/bin/env python3
"""rsp_proxy.py: a GDB remote protocol stub that misbehaves, made of a real
one (`snr device --gdb`) and this proxy between it and the debugger.

Every byte passes through, except the replies the chosen faults change:

  --crc wrong        every qCRC reply's CRC is flipped in its lowest bit
                     (the stub computes a wrong CRC)
  --crc unsupported  every qCRC is answered with the empty reply (QEMU 7.2)
  --binary unsupported
                     binary-upload+ is removed from the qSupported reply
                     and every x packet is answered with the empty reply
                     (a stub without gdb 16's binary read: gdbserver 13)
  --write unsupported
                     every G, P, M and X packet (a register or memory
                     write) is answered with the empty reply: a stub that
                     cannot put its target back

  --fault KIND       one reply is replaced by a transport failure: drop (both
                     connections closed), badsum (the reply with a wrong
                     checksum), junk (bytes that are no packet, and no
                     reply), oversized (a reply over the client's 16 MiB
                     limit), badrle (a reply with a bad run-length count)
  --fault-on WHAT    which reply: read (the first memory read, m or x: the
                     recorder's check of the ELF's code; the default) or
                     resume (the third resume's stop reply: inside the
                     window)

It serves one debugger, then exits. The log (--log) has a line per qCRC
("crc ADDR,LEN"), per memory read ("read m|x ADDR,LEN") and per reply it
changed ("changed ..."), and per resume ("run ..."), for the test to check what the debugger did.

  usage: rsp_proxy.py --stub PORT [--crc pass|wrong|unsupported]
                      [--binary pass|unsupported] [--write pass|unsupported] [--fault KIND [--fault-on read|resume]]
                      --log FILE
  prints "127.0.0.1:PORT" (where it listens) on stdout, then serves.
"""
import argparse
import select
import socket
import sys


def frame(payload):
    return b"$" + payload + b"#" + b"%02x" % (sum(payload) & 0xFF)


class Packets:
    """Splits a byte stream into packets ($...#cs) and the bytes between."""

    def __init__(self):
        self.buf = b""

    def feed(self, data):
        self.buf += data
        out = []
        while self.buf:
            if self.buf[0:1] != b"$":
                k = self.buf.find(b"$")
                k = len(self.buf) if k < 0 else k
                out.append(("raw", self.buf[:k]))
                self.buf = self.buf[k:]
                continue
            h = self.buf.find(b"#")
            if h < 0 or len(self.buf) < h + 3:
                break
            out.append(("pkt", self.buf[1:h]))
            self.buf = self.buf[h + 3:]
        return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--stub", type=int, required=True)
    ap.add_argument("--crc", default="pass", choices=("pass", "wrong", "unsupported"))
    ap.add_argument("--binary", default="pass", choices=("pass", "unsupported"))
    ap.add_argument("--write", default="pass", choices=("pass", "unsupported"))
    ap.add_argument("--fault", choices=("drop", "badsum", "junk", "oversized", "badrle"))
    ap.add_argument("--fault-on", default="read", choices=("read", "resume"))
    ap.add_argument("--log", required=True)
    a = ap.parse_args()
    log = open(a.log, "w")
    ls = socket.socket()
    ls.bind(("127.0.0.1", 0))
    ls.listen(1)
    print("127.0.0.1:%d" % ls.getsockname()[1], flush=True)
    cl, _ = ls.accept()
    st = socket.create_connection(("127.0.0.1", a.stub))
    for s in (cl, st):
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    up, down = Packets(), Packets()
    asked = []  # the commands sent, oldest first, each answered by one reply
    reads = resumes = 0
    faulty = None  # the command whose reply becomes the fault
    while True:
        r, _, _ = select.select([cl, st], [], [])
        if cl in r:
            try:
                data = cl.recv(65536)
            except ConnectionResetError:
                break  # the client hung up on a fault
            if not data:
                break
            for kind, b in up.feed(data):
                if kind == "pkt":
                    asked.append(b)
                    if b.startswith(b"qCRC:"):
                        if any(p.startswith(b"qCRC:") for p in asked[:-1]):
                            log.write("pipelined\n")  # sent before the last qCRC's reply
                        log.write("crc %s\n" % b[5:].decode())
                    elif b[:1] in (b"m", b"x"):
                        log.write("read %s %s\n" % (b[:1].decode(), b[1:].decode()))
                    elif b[:1] in (b"c", b"s", b"C", b"S") or b.startswith(b"vCont;"):
                        log.write("run %s\n" % b.decode())
                    if b[:1] in (b"m", b"x"):
                        reads += 1
                        if a.fault and a.fault_on == "read" and reads == 1:
                            faulty = b
                    elif b[:1] in (b"c", b"s", b"C", b"S") or b.startswith(b"vCont;"):
                        resumes += 1
                        if a.fault and a.fault_on == "resume" and resumes == 3:
                            faulty = b
                    if a.binary == "unsupported" and b[:1] == b"x":
                        log.write("changed x %s: unsupported\n" % b[1:].decode())
                        asked.pop()
                        cl.sendall(frame(b""))  # the stub never sees it
                        continue
                    if a.write == "unsupported" and b[:1] in (b"G", b"P", b"M", b"X"):
                        log.write("changed %s: unsupported\n" % b[:1].decode())
                        asked.pop()
                        cl.sendall(frame(b""))
                        continue
                    if a.crc == "unsupported" and b.startswith(b"qCRC:"):
                        log.write("changed qCRC: unsupported\n")
                        asked.pop()
                        cl.sendall(frame(b""))
                        continue
                    st.sendall(frame(b))
                else:
                    st.sendall(b)
        if st in r:
            data = st.recv(65536)
            if not data:
                break
            for kind, b in down.feed(data):
                if kind != "pkt":
                    cl.sendall(b)
                    continue
                cmd = asked.pop(0) if asked else b""
                if faulty is not None and cmd == faulty:
                    faulty = None
                    log.write("fault %s for %s\n" % (a.fault, cmd.decode()))
                    log.flush()
                    if a.fault == "drop":
                        cl.close()
                        st.close()
                        return 0
                    if a.fault == "badsum":
                        good = sum(b) & 0xFF
                        cl.sendall(b"$" + b + b"#%02x" % (good ^ 0x55))
                    elif a.fault == "junk":
                        cl.sendall(b"hello from a confused stub\r\n")
                    elif a.fault == "oversized":
                        cl.sendall(b"$")
                        chunk = b"0" * (1 << 20)
                        try:
                            for _ in range(17):
                                cl.sendall(chunk)
                        except OSError:
                            pass  # the client hung up, as it should
                    elif a.fault == "badrle":
                        cl.sendall(frame(b"0*\x10"))
                    continue
                if cmd.startswith(b"qSupported") and a.binary == "unsupported":
                    b = b.replace(b";binary-upload+", b"")
                if cmd.startswith(b"qCRC:") and a.crc == "wrong" and b[:1] == b"C":
                    crc = int(b[1:], 16) ^ 1
                    log.write("changed qCRC:%s: C%x for %s\n" % (cmd[5:].decode(), crc, b[1:].decode()))
                    b = b"C%x" % crc
                cl.sendall(frame(b))
        log.flush()
    log.close()


if __name__ == "__main__":
    sys.exit(main())
