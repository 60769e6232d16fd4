#!/usr/bin/env python3
"""record_syscalls.py: does a window's recording cost grow linearly with its system calls?

bench/syscall_loop.c N (host cc -O2, -z now) calls getppid() N times, each
call followed by a one-byte store 16 bytes past the last. Under
`snr record --method sim` through ptrace every system call runs on the
target and is a checkpoint the recorder commits to, while the recorder's
known and written sets grow by a range per call: a commit that copied the
sets (as snr did before its undo logs) makes the window cost N x N. For
N = 1k, 10k, 100k (--calls), with each SNR binary given (the first is the
one measured; --old SNR adds the binary to compare against, run
interleaved in the same run), it prints the recorder's seconds (its own
summary), its CPU seconds (user + system, with the traced program's, which
is tiny), debugger requests, and per call: microseconds of wall time, of
CPU and requests. Linear means the per-call figures stay flat as N grows:
the last column is each row's CPU per call over the same binary's at the
smallest N. The machine's load average is printed with each row; the
figures are noisy on a busy machine, the request counts are not.

  usage: record_syscalls.py SNR [--old SNR] [--calls N,N,...] [--timeout S]
"""
import argparse
import os
import re
import resource
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))


def load():
    return float(open("/proc/loadavg").read().split()[0])


def record(snr, prog, n, out, timeout):
    cmd = [snr, "record", "--breakpoint", "calls", "--until-return", "--count", "1000000000", "--method", "sim",
           "--kill", "-o", out, "--", prog, str(n)]
    r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
    t0 = time.monotonic()
    try:
        p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return None
    wall = time.monotonic() - t0
    r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
    if p.returncode != 0:
        sys.exit("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    num = lambda pat: (m := re.search(pat, p.stderr, re.M)) and m.group(1)
    ck = num(r"to (\d+) checkpoints")
    if not ck or int(ck) < n:
        sys.exit("%s: want at least %d checkpoints: %s" % (" ".join(cmd), n, p.stderr))
    return {"instructions": int(num(r"^recorded (\d+) instructions")), "s": float(num(r"instructions in ([\d.]+) s")),
            "wall": wall, "cpu": (r1.ru_utime - r0.ru_utime) + (r1.ru_stime - r0.ru_stime),
            "requests": int(num(r"(\d+) debugger requests")), "checkpoints": int(ck)}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snr")
    ap.add_argument("--old", help="another snr binary to compare against, in the same run")
    ap.add_argument("--calls", default="1000,10000,100000")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a recording may take (default 900)")
    a = ap.parse_args()
    cc = shutil.which("cc")
    if not cc or os.uname().machine != "x86_64":
        print("record_syscalls: needs an x86-64 host and cc")
        return 0
    calls = [int(x) for x in a.calls.split(",")]
    bins = [("new", os.path.abspath(a.snr))] + ([("old", os.path.abspath(a.old))] if a.old else [])
    with tempfile.TemporaryDirectory() as tmp:
        prog = os.path.join(tmp, "syscall_loop")
        subprocess.run([cc, "-O2", "-Wl,-z,now", os.path.join(HERE, "syscall_loop.c"), "-o", prog], check=True)
        print("snr record --method sim through ptrace, a window of N getppid() calls (bench/syscall_loop.c)")
        print("%-4s %7s %9s %8s %8s %8s %9s %10s %9s %10s %6s" % (
            "snr", "N", "instr", "rec s", "wall s", "cpu s", "requests", "wall us/N", "cpu us/N", "requests/N",
            "load"))
        base = {}
        for n in calls:
            for name, snr in bins:
                la = load()
                r = record(snr, prog, n, os.path.join(tmp, "w.snrt"), a.timeout)
                if r is None:
                    print("%-4s %7d  did not finish within %.0f s (load %.1f)" % (name, n, a.timeout, la))
                    continue
                per = r["cpu"] / n * 1e6
                base.setdefault(name, per)
                print("%-4s %7d %9d %8.2f %8.2f %8.2f %9d %10.1f %9.1f %10.2f %6.1f   cpu/N %.2fx N=%d's" % (
                    name, n, r["instructions"], r["s"], r["wall"], r["cpu"], r["requests"], r["wall"] / n * 1e6,
                    per, r["requests"] / n, la, per / base[name], calls[0]))
                sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main())
