#!/usr/bin/env python3
"""stalled_reader.py SNR: `snr device --gdb` while its debugger stops
reading: the debugger asks for far more than the socket buffers hold and
reads nothing, so the server waits to send; a second debugger that
connects meanwhile still gets the "another debugger is attached" refusal
within 3 s (not after the first one's 10 s send timeout). Every socket has
a timeout, and the device is killed on the way out."""
import os
import socket
import subprocess
import sys
import tempfile
import threading
import time

SNR = sys.argv[1]


def frame(p):
    p = p.encode()
    return b"$" + p + b"#%02x" % (sum(p) & 0xFF)


work = tempfile.mkdtemp()
dev = None
ok = False
try:
    src = os.path.join(work, "loop.c")
    with open(src, "w") as f:
        f.write("volatile int n;\nint main(void)\n{\n\tfor (;;)\n\t\tn++;\n}\n")
    elf = os.path.join(work, "loop.elf")
    subprocess.run([SNR, "cc", src, "-o", elf], check=True)
    sock = os.path.join(work, "gdb.sock")
    dev = subprocess.Popen([SNR, "device", elf, "--gdb", "unix:" + sock, "--halt"],
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    for _ in range(400):
        if os.path.exists(sock):
            break
        time.sleep(0.025)
    else:
        raise SystemExit("FAIL: snr device did not start listening")
    a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    a.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    a.settimeout(5)
    a.connect(sock)
    a.sendall(frame("?"))
    got = b""
    while b"#" not in got:
        got += a.recv(4096)
    # The pc's memory, 2 KiB a reply, asked for 2000 times: megabytes the
    # debugger never reads. Sent from a thread, as the server stops reading
    # too once it cannot send.
    a.sendall(frame("p20"))
    got = b""
    while got.count(b"#") < 1:
        got += a.recv(4096)
    pc = int.from_bytes(bytes.fromhex(got.split(b"$")[1].split(b"#")[0].decode()), "little")
    flood = frame("m%x,800" % pc) * 2000
    threading.Thread(target=lambda: a.sendall(flood), daemon=True).start()
    time.sleep(1.0)  # the server is stuck sending to A by now
    b = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    b.settimeout(3)
    t0 = time.time()
    b.connect(sock)
    b.sendall(frame("qSupported"))
    data = b""
    try:
        while True:
            chunk = b.recv(4096)
            if not chunk:
                break
            data += chunk
    except socket.timeout:
        pass
    took = time.time() - t0
    if b"E.snr device: another debugger" not in data:
        print("FAIL: a second debugger got %r in %.1f s while the first read nothing (no refusal)" % (data, took))
    else:
        print("stalled_reader: ok: refused in %.2f s" % took)
        ok = True
finally:
    if dev and dev.poll() is None:
        dev.kill()
        dev.wait()
    subprocess.run(["rm", "-rf", work])
sys.exit(0 if ok else 1)
