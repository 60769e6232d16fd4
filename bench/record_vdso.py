#!/usr/bin/env python3
"""record_vdso.py: what reading the time through the vDSO costs a recording.

tests/rec/x86_clock.c K (-O2, libc) calls clock_gettime(CLOCK_MONOTONIC) K
times. snr runs each call into the vDSO on the target as one step, as a
system call (docs/recording.md, "Reading the time"); an snr from before that
(--old SNR) stepped the vDSO's code, whose seqlock loop loads the clock from
the kernel's [vvar] pages (each load run on the target, marked unread) and
starts again when the kernel's clock update, every timer tick, lands inside a
pass. For K = 10 and K = 100, through ptrace (`snr record -- PROG`, ASLR
off) and through gdbserver on loopback TCP, by --method step and --method
sim, each snr in the same run, it prints the window's instructions, the
calls run on the target as a unit, the [vvar] loads stepped, the seqlock
passes stepped (rdtscp steps in the trace), debugger requests and seconds;
then per call (K=100 against K=10, over the 90 calls between): requests and
seconds, new against old. The machine's load average is printed with each
row: timings on a shared machine are noisy. A recording that takes longer
than --timeout seconds is reported as such, not counted.

  usage: record_vdso.py SNR [--old OLD_SNR] [--timeout S]
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
        "calls": num(r"^(\d+) calls? into the vDSO"),
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
    ap.add_argument("--old", help="an snr from before vDSO calls ran as a unit, measured in the same run")
    ap.add_argument("--timeout", type=float, default=60)
    a = ap.parse_args()
    snrs = [("new", os.path.abspath(a.snr))] + ([("old", os.path.abspath(a.old))] if a.old else [])
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "clk")
        subprocess.run(["cc", "-O2", "-no-pie", "-Wl,-z,now", os.path.join(SRC, "tests/rec/x86_clock.c"), "-o", prog],
                       check=True)
        print("snr  target     method  K    instructions  calls  [vvar] loads  passes  requests  seconds  load")
        rows = {}
        for target in ("ptrace", "gdbserver"):
            for method in ("sim", "step"):
                for which, snr in snrs:
                    for k in (10, 100):
                        out = os.path.join(tmp, "t.snrt")
                        for f in (out, out + ".partial"):
                            if os.path.exists(f):
                                os.unlink(f)
                        ld = load()
                        head = f"{which:<4} {target:<10} {method:<7} {k:<4}"
                        try:
                            p, secs = (ptrace(snr, prog, k, method, out, a.timeout) if target == "ptrace"
                                       else gdbserver(snr, prog, k, method, out, a.timeout, tmp))
                        except subprocess.TimeoutExpired:
                            print(f"{head} timed out after {a.timeout:.0f} s (load {ld})")
                            continue
                        if p.returncode:
                            print(f"{head} failed: {p.stderr.strip()}")
                            continue
                        s = summary(p.stderr, snr, out)
                        s["seconds"] = secs
                        rows[(which, target, method, k)] = s
                        print(f"{head} {s['instructions']:>12}  {s['calls']:>5}  {s['loads']:>12}  {s['passes']:>6}  "
                              f"{s['requests']:>8}  {secs:>7.2f}  {ld}")
        print("per call (K=100 against K=10):")
        for target in ("ptrace", "gdbserver"):
            for method in ("sim", "step"):
                per = {}
                for which, _ in snrs:
                    lo, hi = rows.get((which, target, method, 10)), rows.get((which, target, method, 100))
                    if lo and hi:
                        per[which] = ((hi["requests"] - lo["requests"]) / 90, (hi["seconds"] - lo["seconds"]) / 90)
                text = []
                for which, _ in snrs:
                    if which in per:
                        text.append(f"{which} {per[which][0]:.1f} requests, {per[which][1] * 1000:.2f} ms")
                    else:
                        text.append(f"{which} not measured (a run missing)")
                if "new" in per and "old" in per and per["new"][0] > 0:
                    text.append(f"{per['old'][0] / per['new'][0]:.1f}x fewer requests")
                print(f"  {target} {method}: " + "; ".join(text))
    return 0


if __name__ == "__main__":
    sys.exit(main())
