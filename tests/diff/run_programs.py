#!/usr/bin/env python3
"""run_programs.py: C programs on the device and under qemu-riscv64.

Each program in tests/diff/programs is built with `snr cc` at -O2 and at -O0
(two different instruction mixes from one source) and run under `snr device`
and qemu-riscv64; stdout and the exit code must match byte for byte. On a
mismatch the test prints the program, the flags, the first differing line of
output and the command that reproduces it.

Exit status: 0 pass, 1 mismatch, 77 (skip) when qemu-riscv64 is not installed.
"""
import argparse
import os
import shutil
import subprocess
import sys
import tempfile


def first_line_difference(dev, ref):
    a, b = dev.split(b"\n"), ref.split(b"\n")
    for i in range(max(len(a), len(b))):
        x = a[i] if i < len(a) else b"<end of output>"
        y = b[i] if i < len(b) else b"<end of output>"
        if x != y:
            return "line %d:\n    device: %r\n    qemu:   %r" % (i + 1, x[:200], y[:200])
    return "outputs differ"


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snr", help="the snr binary")
    ap.add_argument("programs", nargs="+", help="C sources")
    ap.add_argument("--opts", default="-O2,-O0", help="comma-separated optimisation flags (default -O2,-O0)")
    ap.add_argument("--qemu", default=os.environ.get("QEMU_RISCV64", "qemu-riscv64"))
    a = ap.parse_args()
    qemu = shutil.which(a.qemu)
    if not qemu:
        print("SKIP: %s not found (install qemu-user: apt-get install qemu-user)" % a.qemu)
        return 77
    snr = os.path.abspath(a.snr)
    failed = False
    with tempfile.TemporaryDirectory(prefix="snr-diff-programs-") as work:
        for src in a.programs:
            name = os.path.splitext(os.path.basename(src))[0]
            for opt in a.opts.split(","):
                elf = os.path.join(work, "%s%s.elf" % (name, opt))
                cc = [snr, "cc", src, "-o", elf, opt, "-Wall", "-Wextra", "-Werror"]
                p = subprocess.run(cc, capture_output=True, text=True, timeout=300)
                if p.returncode:
                    print("%s %s: snr cc failed:\n%s" % (name, opt, p.stderr))
                    failed = True
                    continue
                d = subprocess.run([snr, "device", "--stats", "--limit", "500000000", elf], capture_output=True,
                                   timeout=300)
                q = subprocess.run([qemu, elf], capture_output=True, timeout=300)
                stats = d.stderr.decode(errors="replace").splitlines()
                insns = next((l.split()[1] for l in stats if l.startswith("0 ")), "?")
                if d.stdout != q.stdout or d.returncode != q.returncode:
                    failed = True
                    print("%s %s: MISMATCH (device exit %d, qemu exit %d)" % (name, opt, d.returncode, q.returncode))
                    if d.stdout != q.stdout:
                        print("  " + first_line_difference(d.stdout, q.stdout))
                    errs = [l for l in stats if l.startswith("snr:")]
                    if errs:
                        print("  device: " + "\n  device: ".join(errs))
                    print("  reproduce: %s && cmp <(%s device %s) <(qemu-riscv64 %s)" % (
                        " ".join(cc), snr, elf, elf))
                else:
                    print("%s %s: device == qemu (%d bytes of output, exit %d, %s instructions)" % (
                        name, opt, len(d.stdout), d.returncode, insns))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
