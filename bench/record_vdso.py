#!/usr/bin/env python3
"""record_vdso.py: what reading the time through the vDSO costs a recording.

tests/rec/x86_clock.c K (-O2, libc) calls clock_gettime(CLOCK_MONOTONIC) K
times; each call runs the vDSO's seqlock loop, whose loads from the kernel's
[vvar] pages no debugger can read: each runs on the target and its outputs
are recorded after it (docs/recording.md, "Memory the debugger cannot
read"). For K = 10 and K = 100, through ptrace (`snr record -- PROG`, ASLR
off) and through gdbserver on loopback TCP, by --method step and --method
sim, in the same run, it prints the window's instructions, its [vvar]
loads, the seqlock passes (the rdtscp steps in the trace: a pass that the
kernel's clock update, every timer tick, overtook is run again), passes per
call, debugger requests, seconds, and for each target and method the
requests per [vvar] load: the difference in requests between K = 100 and
K = 10 over the difference in loads. The machine's load average is printed
with each row: stepping's retries grow with the load, since a pass then
spans more ticks. A recording that takes longer than --timeout seconds is
reported as such, not counted.

  usage: record_vdso.py SNR [--timeout S]
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile
import time

SRC = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..")


def load():
    return open("/proc/loadavg").read().split()[0]


def summary(err, snr, trace):
    num = lambda pat: int(m.group(1)) if (m := re.search(pat, err, re.M)) else 0
    dump = subprocess.run([snr, "trace", "dump", trace], capture_output=True, text=True).stdout
    return {
        "instructions": num(r"^recorded (\d+) instructions"),
        "loads": num(r"^(\d+) loads? from memory the debugger cannot read"),
        "passes": len(re.findall(r" rdtscp ", dump)),
        "requests": num(r"(\d+) debugger requests"),
    }


def ptrace(snr, prog, k, method, out, timeout):
    cmd = ["setarch", "-R", snr, "record", "--breakpoint", "clocks", "--until-return", "--count", "10000000",
           "--method", method, "-o", out, "--", prog, str(k)]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    return p, time.monotonic() - t0


def gdbserver(snr, prog, k, method, out, timeout, tmp):
    log = open(os.path.join(tmp, "gs.out"), "w+")
    gs = subprocess.Popen(["gdbserver", "--once", "127.0.0.1:0", prog, str(k)], stdout=log, stderr=subprocess.STDOUT)
    try:
        port = None
        for _ in range(200):
            log.seek(0)
            m = re.search(r"Listening on port (\d+)", log.read())
            if m:
                port = m.group(1)
                break
            time.sleep(0.05)
        if not port:
            raise RuntimeError("gdbserver did not start")
        cmd = [snr, "record", "--target", "tcp:127.0.0.1:" + port, "--elf", prog, "--breakpoint", "clocks",
               "--until-return", "--count", "10000000", "--method", method, "-o", out]
        t0 = time.monotonic()
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
        return p, time.monotonic() - t0
    finally:
        gs.kill()
        gs.wait()


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("snr")
    ap.add_argument("--timeout", type=float, default=120)
    a = ap.parse_args()
    snr = os.path.abspath(a.snr)
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "clk")
        subprocess.run(["cc", "-O2", "-no-pie", "-Wl,-z,now", os.path.join(SRC, "tests/rec/x86_clock.c"), "-o", prog],
                       check=True)
        print("target     method  K    instructions  [vvar] loads  passes  passes/call  requests  seconds  load")
        rows = {}
        for target in ("ptrace", "gdbserver"):
            for method in ("sim", "step"):
                for k in (10, 100):
                    out = os.path.join(tmp, "t.snrt")
                    for f in (out, out + ".partial"):
                        if os.path.exists(f):
                            os.unlink(f)
                    ld = load()
                    try:
                        p, secs = (ptrace(snr, prog, k, method, out, a.timeout) if target == "ptrace"
                                   else gdbserver(snr, prog, k, method, out, a.timeout, tmp))
                    except subprocess.TimeoutExpired:
                        print(f"{target:<10} {method:<7} {k:<4} timed out after {a.timeout:.0f} s (load {ld})")
                        continue
                    if p.returncode:
                        print(f"{target:<10} {method:<7} {k:<4} failed: {p.stderr.strip()}")
                        continue
                    s = summary(p.stderr, snr, out)
                    rows[(target, method, k)] = s
                    print(f"{target:<10} {method:<7} {k:<4} {s['instructions']:>12}  {s['loads']:>12}  {s['passes']:>6}  "
                          f"{s['passes'] / k:>11.1f}  {s['requests']:>8}  {secs:>7.2f}  {ld}")
        for target in ("ptrace", "gdbserver"):
            for method in ("sim", "step"):
                lo, hi = rows.get((target, method, 10)), rows.get((target, method, 100))
                if lo and hi and hi["loads"] > lo["loads"]:
                    what = ("debugger requests per [vvar] load (K=100 against K=10)" if method == "sim" else
                            "debugger requests per [vvar] load, the pass's other instructions included (K=100 against K=10)")
                    print(f"{target} {method}: {(hi['requests'] - lo['requests']) / (hi['loads'] - lo['loads']):.1f} {what}")
                else:
                    print(f"{target} {method}: requests per [vvar] load not measured (a run missing)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
