#!/usr/bin/env python3
"""scalar_speed.py: scalar instructions per second, the device against qemu.

Builds bench/scalar_kernel.c (about 1e9 RV64IM instructions with the default
ROUNDS) with `snr cc`, counts its instructions with `snr device --stats`, then
times the same ELF under `snr device` (without --stats, as programs normally
run) and under qemu-riscv64 in the same run, best of --repeat. Both must print
the same result. Prints instructions/s for each, the ratio, and whether the
device meets the 100 M instructions/s target. qemu executes the very same
instruction stream (the program is deterministic), so the device's count
serves for both.

  usage: scalar_speed.py SNR [--rounds N] [--repeat N] [--min-mips M]

--min-mips makes a result below M million instructions/s an error (exit 1).
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
TARGET_MIPS = 100.0


def timed(cmd, repeat):
    best, out = None, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            sys.exit("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr.decode(errors="replace")))
        if out is not None and p.stdout != out:
            sys.exit("%s: output changed between runs" % " ".join(cmd))
        out = p.stdout
        best = dt if best is None else min(best, dt)
    return best, out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snr")
    ap.add_argument("--rounds", type=int, help="kernel rounds (default: the source's, about 1e9 instructions)")
    ap.add_argument("--repeat", type=int, default=1, help="time each machine N times and keep the best")
    ap.add_argument("--min-mips", type=float, help="fail if the device is below this many M instructions/s")
    ap.add_argument("--qemu", default=os.environ.get("QEMU_RISCV64", "qemu-riscv64"))
    a = ap.parse_args()
    snr = os.path.abspath(a.snr)
    with tempfile.TemporaryDirectory(prefix="snr-bench-") as work:
        elf = os.path.join(work, "scalar_kernel.elf")
        cc = [snr, "cc", os.path.join(HERE, "scalar_kernel.c"), "-o", elf]
        if a.rounds:
            cc.append("-DROUNDS=%d" % a.rounds)
        subprocess.run(cc, check=True)
        p = subprocess.run([snr, "device", "--stats", elf], capture_output=True, check=True)
        insns = next(int(l.split()[1]) for l in p.stderr.decode().splitlines() if l.startswith("0 "))
        dev_t, dev_out = timed([snr, "device", elf], a.repeat)
        dev_ips = insns / dev_t
        print("workload: bench/scalar_kernel.c, %d instructions (snr device --stats)" % insns)
        print("device:       %8.3f s  %8.1f M instructions/s" % (dev_t, dev_ips / 1e6))
        qemu = shutil.which(a.qemu)
        if qemu:
            q_t, q_out = timed([qemu, elf], a.repeat)
            if q_out != dev_out:
                sys.exit("the device and qemu disagree: %r vs %r" % (dev_out, q_out))
            print("qemu-riscv64: %8.3f s  %8.1f M instructions/s" % (q_t, insns / q_t / 1e6))
            print("device / qemu: %.3f (qemu is %.1fx faster)" % (dev_ips / (insns / q_t), dev_t / q_t)
                  if q_t < dev_t else "device / qemu: %.3f" % (dev_ips / (insns / q_t)))
        else:
            print("qemu-riscv64: not installed, not compared")
        met = dev_ips >= TARGET_MIPS * 1e6
        print("target %.0f M instructions/s: %s" % (TARGET_MIPS, "met" if met else "NOT met"))
        if a.min_mips and dev_ips < a.min_mips * 1e6:
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
