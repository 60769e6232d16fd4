#!/usr/bin/env python3
"""socket_session.py SNR: `snr device --gdb` over real sockets, from a small
RSP client: Ctrl-C (0x03) stopping a running program, a dropped connection
(the server takes the next one, the program having run on meanwhile and the
old breakpoints gone), a bad checksum (NAK), detach (the program finishes
and the device exits with its status), kill, and a program that ends
before any debugger connects. Every socket read has a timeout, and every
device process is killed on the way out."""
import os
import re
import socket
import subprocess
import sys
import tempfile
import time

SNR = sys.argv[1]
failures = 0


def check(cond, what):
    global failures
    if not cond:
        failures += 1
        print("FAIL:", what)


def frame(p):
    p = p.encode() if isinstance(p, str) else p
    return b"$" + p + b"#%02x" % (sum(p) & 0xFF)


class Client:
    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.s.settimeout(5)
        self.s.connect(path)
        self.buf = b""

    def send(self, raw):
        self.s.sendall(raw)

    def read_frame(self, timeout=5):
        """Skips acks; returns the next payload, or None on timeout."""
        self.s.settimeout(timeout)
        while True:
            m = re.match(rb"[+-]*\$([^#]*)#([0-9a-f]{2})", self.buf)
            if m:
                self.buf = self.buf[m.end():]
                assert sum(m.group(1)) & 0xFF == int(m.group(2), 16), "bad checksum from server"
                return m.group(1).decode()
            try:
                data = self.s.recv(65536)
            except socket.timeout:
                return None
            if not data:
                return None
            self.buf += data

    def ask(self, p):
        self.send(frame(p))
        return self.read_frame()

    def reg(self, n):
        v = self.ask("p%x" % n)
        return int.from_bytes(bytes.fromhex(v), "little")

    def close(self):
        self.s.close()


def start(elf, sock, *args):
    if os.path.exists(sock):
        os.unlink(sock)
    p = subprocess.Popen([SNR, "device", elf, "--gdb", "unix:" + sock, *args],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    for _ in range(200):
        if os.path.exists(sock):
            return p
        time.sleep(0.025)
    p.kill()
    raise SystemExit("snr device did not start listening")


INSTRET = 0x32
work = tempfile.mkdtemp()
procs = []
try:
    src = os.path.join(work, "loop.c")
    with open(src, "w") as f:
        f.write("#include <stdint.h>\nvolatile uint64_t counter;\nvolatile int stop_flag;\n"
                "int main(void)\n{\n\twhile (!stop_flag)\n\t\tcounter++;\n\treturn 42;\n}\n")
    elf = os.path.join(work, "loop.elf")
    subprocess.run([SNR, "cc", "-g", src, "-o", elf], check=True)
    nm = subprocess.run(["riscv64-unknown-elf-nm", elf], check=True, capture_output=True, text=True).stdout
    syms = {l.split()[2]: int(l.split()[0], 16) for l in nm.splitlines() if len(l.split()) == 3}
    sock = os.path.join(work, "gdb.sock")

    # 1. No --halt: the program runs until a debugger connects; then it is stopped.
    dev = start(elf, sock)
    procs.append(dev)
    time.sleep(0.3)
    c = Client(sock)
    stop = c.ask("?")
    check(stop is not None and stop.startswith("T05thread:1;"), "stop reply on connect: %r" % stop)
    n1 = c.reg(INSTRET)
    time.sleep(0.2)
    n2 = c.reg(INSTRET)
    check(n1 > 0 and n1 == n2, "stopped on connect: instret %d then %d" % (n1, n2))

    # 2. Ctrl-C interrupts a continue.
    c.send(frame("c"))
    check(c.read_frame(timeout=0.5) is None, "c on an endless loop replied at once")
    t0 = time.time()
    c.send(b"\x03")
    stop = c.read_frame(timeout=5)
    check(stop is not None and stop.startswith("T02thread:1;"), "stop reply after 0x03: %r" % stop)
    check(time.time() - t0 < 2, "0x03 took %.2f s" % (time.time() - t0))
    n3 = c.reg(INSTRET)
    check(n3 > n2, "continue ran nothing: instret %d then %d" % (n2, n3))

    # 3. A bad checksum gets a NAK; the retransmission an answer.
    c.send(b"$p32#00")
    c.s.settimeout(5)
    nak = c.s.recv(1)
    check(nak == b"-", "bad checksum answered %r, not '-'" % nak)

    # 4. A dropped connection while running: the next debugger finds the
    # program further on, and the dropped debugger's breakpoint gone.
    loop_pc = c.reg(0x20)
    check(c.ask("Z0,%x,4" % loop_pc) == "OK", "Z0 at the loop")
    c.send(frame("c"))
    stop = c.read_frame()
    check(stop is not None and stop.startswith("T05"), "breakpoint in the loop: %r" % stop)
    n4 = c.reg(INSTRET)
    c.send(frame("c"))
    time.sleep(0.1)
    c.close()
    time.sleep(0.3)
    check(dev.poll() is None, "snr device ended when the debugger dropped")
    c = Client(sock)
    stop = c.ask("?")
    check(stop is not None and stop.startswith("T"), "stop reply after reconnecting: %r" % stop)
    n5 = c.reg(INSTRET)
    check(n5 > n4 + 1000, "the program did not run on after the drop: %d then %d" % (n4, n5))
    c.send(frame("c"))
    time.sleep(0.2)
    c.send(b"\x03")
    stop = c.read_frame()
    check(stop is not None and stop.startswith("T02"), "the dropped debugger's breakpoint stayed: %r" % stop)

    # 5. Detach after letting the loop end: the device exits with 42.
    addr = syms["stop_flag"]
    check(c.ask("M%x,4:01000000" % addr) == "OK", "write stop_flag")
    check(c.ask("D") == "OK", "D")
    c.close()
    try:
        rc = dev.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc == 42, "exit status after detach: %r (expected 42)" % rc)

    # 6. --halt: nothing runs until told; k ends the device with status 3.
    dev = start(elf, sock, "--halt")
    procs.append(dev)
    c = Client(sock)
    check(c.ask("?").startswith("T05thread:1;20:"), "stop reply with --halt")
    check(c.reg(INSTRET) == 0, "--halt: the program ran before the debugger continued")
    c.send(frame("k"))
    try:
        rc = dev.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc == 3, "exit status after k: %r (expected 3)" % rc)
    c.close()

    # 7. A program that ends with no debugger: the device exits with its status.
    src7 = os.path.join(work, "seven.c")
    with open(src7, "w") as f:
        f.write("int main(void) { return 7; }\n")
    elf7 = os.path.join(work, "seven.elf")
    subprocess.run([SNR, "cc", src7, "-o", elf7], check=True)
    dev = subprocess.Popen([SNR, "device", elf7, "--gdb", "unix:" + sock], stderr=subprocess.PIPE)
    procs.append(dev)
    try:
        rc = dev.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = None
    check(rc == 7, "exit status with no debugger: %r (expected 7)" % rc)
    check(not os.path.exists(sock), "the socket file was left behind")
finally:
    for p in procs:
        if p.poll() is None:
            p.kill()
            p.wait()
    subprocess.run(["rm", "-rf", work])

print("socket_session: %s" % ("ok" if failures == 0 else "%d failed" % failures))
sys.exit(1 if failures else 0)
