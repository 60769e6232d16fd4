#!/usr/bin/env python3
"""record_qemu_rate.py: `snr record --method sim` against `--method step` through QEMU's user-mode stubs.

In one run, for each ISA QEMU records in user mode -- aarch64 under
`qemu-aarch64 -g` and plain RV64 under `qemu-riscv64 -g` -- the same windows
of tests/rec/rv_rec.c's work() (built -O1: aarch64-linux-gnu-gcc -static
with glibc, or `snr cc` with picolibc): `loop`, the first --count
instructions, which end inside work()'s loop, and `call`, the whole call
(--until-return, about 140k instructions), which ends after it. Each is
recorded by sim (unicorn runs the window, the target catches up at
checkpoints) and by step (one round trip per instruction) over loopback
TCP. QEMU's stubs have no breakpoint hit counts, so the target catches up
with a window that ends inside a loop at about four requests per iteration
still to come; one that ends after its loops with a handful. Printed:
seconds as the recorder's summary
states them, the wall time of the whole `snr record` (connecting and the
full register reads included), instructions/s, debugger requests and bytes
fetched, and the ratio step/sim of each. The load average before each
recording is printed: timings on a shared machine are noisy.

  usage: record_qemu_rate.py SNR [--count N] [--windows loop,call]
"""
import argparse
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, HERE)
from record_rate import load_average, run, summary  # noqa: E402


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()
    return port


def record_qemu(snr, qemu, elf, isa, method, window, out):
    """Starts QEMU's stub on ELF and records from work() (window: the
    recorder's --count/--until-return arguments); returns (summary, wall
    seconds of snr record)."""
    port = free_port()
    q = subprocess.Popen([qemu, "-g", str(port), elf], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        for _ in range(200):
            t0 = time.perf_counter()
            p = subprocess.run([snr, "record", "--target", "tcp:127.0.0.1:%d" % port, "--elf", elf, "--isa", isa,
                                "--breakpoint", "work", "--method", method, "-o", out] + window,
                               capture_output=True, text=True)
            wall = time.perf_counter() - t0
            if p.returncode == 0:
                q.wait(timeout=120)
                return summary(p.stderr), wall
            if "refused" not in p.stderr:
                sys.exit("snr record --method %s under %s failed: %s" % (method, qemu, p.stderr))
            time.sleep(0.05)
        sys.exit("%s never accepted a connection" % qemu)
    finally:
        if q.poll() is None:
            q.kill()
            q.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snr")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--windows", default="loop,call")
    a = ap.parse_args()
    windows = {"loop": ["--count", str(a.count)], "call": ["--count", "1000000", "--until-return"]}
    if any(w not in windows for w in a.windows.split(",")):
        sys.exit("--windows: a list of loop and call, not '%s'" % a.windows)
    snr = os.path.abspath(a.snr)
    need = ["qemu-aarch64", "qemu-riscv64", "aarch64-linux-gnu-gcc"]
    missing = [t for t in need if not shutil.which(t)]
    if missing:
        sys.exit("needs %s (scripts/install-deps)" % ", ".join(missing))
    src = os.path.join(ROOT, "tests", "rec", "rv_rec.c")
    with tempfile.TemporaryDirectory() as tmp:
        a64 = os.path.join(tmp, "rv_rec_a64")
        rv = os.path.join(tmp, "rv_rec.elf")
        run(["aarch64-linux-gnu-gcc", "-O1", "-static", src, "-o", a64])
        run([snr, "cc", "-O1", src, "-o", rv])
        print("tests/rec/rv_rec.c's work() over loopback TCP; loop: its first %d instructions, call: the whole "
              "call" % a.count)
        print("%-8s %-5s %-5s %8s %8s %8s %10s %9s %9s %6s" % ("isa", "window", "method", "instr", "summary", "wall",
                                                              "instr/s", "requests", "fetched", "load"))
        for name, qemu, elf, isa in (("aarch64", "qemu-aarch64", a64, "aarch64"),
                                     ("rv64", "qemu-riscv64", rv, "ta1")):
            for wname in a.windows.split(","):
                res = {}
                for meth in ("sim", "step"):
                    la = load_average()
                    r, wall = record_qemu(snr, qemu, elf, isa, meth, windows[wname], os.path.join(tmp, "w.snrt"))
                    if r["method"] != meth:
                        sys.exit("asked for --method %s, the summary says %s" % (meth, r["method"]))
                    res[meth] = (r, wall)
                    print("%-8s %-6s %-5s %8d %7.2fs %7.2fs %10d %9d %9d %6.1f" % (
                        name, wname, meth, r["n"], r["s"], wall, r["rate"], r["requests"], r["fetched"], la))
                (sim, sim_wall), (step, step_wall) = res["sim"], res["step"]
                print("%-8s %-6s step/sim: %.1fx the summary's seconds, %.1fx wall, %.0fx fewer requests" % (
                    name, wname, step["s"] / max(sim["s"], 1e-3), step_wall / max(sim_wall, 1e-3),
                    step["requests"] / max(sim["requests"], 1)))


if __name__ == "__main__":
    main()
