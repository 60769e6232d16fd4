#!/usr/bin/env python3
"""run_random.py: the device against qemu-riscv64 on random RV64IM streams.

For each seed: gen_random.py writes a stream of random instructions, `snr cc`
assembles it, and the ELF runs under `snr device` and under qemu-riscv64. Both
print the 4 KiB scratch buffer and then x1..x31 (see gen_random.py); the two
outputs and exit codes must be identical. On a mismatch the test names the
seed, the first register (or scratch byte) that differs, both values, and the
command that rebuilds the failing program; then it bisects on the length of
the stream and prints the first instruction group after which the machines
disagree, with the register values it started from.

Coverage is measured on what was assembled, not on what the generator meant:
objdump (no aliases) lists the words between stream_begin and stream_end, and
every opcode the generator is meant to cover must appear at least --min times
per seed.

Exit status: 0 pass, 1 mismatch or too little coverage, 77 (skip) when
qemu-riscv64 is not installed.
"""
import argparse
import collections
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import gen_random  # noqa: E402

REG_NAMES = ["zero", "ra", "sp", "gp", "tp", "t0", "t1", "t2", "s0", "s1", "a0", "a1", "a2", "a3", "a4", "a5",
             "a6", "a7", "s2", "s3", "s4", "s5", "s6", "s7", "s8", "s9", "s10", "s11", "t3", "t4", "t5", "t6"]
DUMP_BYTES = gen_random.SCRATCH + 8 * gen_random.NREGS


def first_difference(dev, ref):
    """Describes the first difference between two dumps, or returns None."""
    if dev == ref:
        return None
    if len(dev) != DUMP_BYTES or len(ref) != DUMP_BYTES:
        return "output length differs: device %d bytes, qemu %d bytes (expected %d)" % (
            len(dev), len(ref), DUMP_BYTES)
    base = gen_random.SCRATCH
    for r in range(1, 32):  # registers first: they usually point at the culprit
        o = base + 8 * (r - 1)
        a = int.from_bytes(dev[o:o + 8], "little")
        b = int.from_bytes(ref[o:o + 8], "little")
        if a != b:
            return "register x%d (%s): device 0x%016x, qemu 0x%016x" % (r, REG_NAMES[r], a, b)
    for i in range(base):
        if dev[i] != ref[i]:
            return "scratch byte %d (offset %+d from s11): device 0x%02x, qemu 0x%02x" % (
                i, i - base // 2, dev[i], ref[i])
    return "outputs differ"  # not reached


def self_check():
    """The comparison must notice a one-bit change anywhere in the dump."""
    import random
    rng = random.Random(1)
    ref = bytes(rng.getrandbits(8) for _ in range(DUMP_BYTES))
    assert first_difference(ref, ref) is None
    for pos, want in ((gen_random.SCRATCH + 8 * 9 + 3, "register x10 (a0)"), (17, "scratch byte 17"),
                      (DUMP_BYTES - 1, "register x31 (t6)")):
        bad = bytearray(ref)
        bad[pos] ^= 0x10
        got = first_difference(bytes(bad), ref)
        if not got or not got.startswith(want):
            sys.exit("self-check failed: flipping byte %d gave %r, expected %r" % (pos, got, want))
    if first_difference(ref[:-1], ref) is None:
        sys.exit("self-check failed: a short output went unnoticed")


def coverage(elf, objdump):
    """Mnemonic -> count for the words between stream_begin and stream_end."""
    syms = subprocess.run([objdump, "-t", elf], check=True, capture_output=True, text=True).stdout
    addr = {}
    for line in syms.splitlines():
        f = line.split()
        if f and f[-1] in ("stream_begin", "stream_end"):
            addr[f[-1]] = int(f[0], 16)
    dis = subprocess.run([objdump, "-d", "-M", "no-aliases,numeric", "--start-address=%#x" % addr["stream_begin"],
                          "--stop-address=%#x" % addr["stream_end"], elf],
                         check=True, capture_output=True, text=True).stdout
    counts = collections.Counter()
    for line in dis.splitlines():
        f = line.split("\t")
        if len(f) >= 3 and f[0].strip().endswith(":"):
            counts[f[2].strip()] += 1
    return counts


def run(cmd, timeout):
    p = subprocess.run(cmd, capture_output=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


class Case:
    """One seed's program, built and run on both machines."""

    def __init__(self, snr, qemu, work, seed, count, def_path):
        self.snr, self.qemu, self.work = snr, qemu, work
        self.seed, self.count, self.def_path = seed, count, def_path

    def build(self, limit=None):
        tag = "%d" % self.seed if limit is None else "%d-upto%d" % (self.seed, limit)
        src = os.path.join(self.work, "random-%s.S" % tag)
        elf = os.path.join(self.work, "random-%s.elf" % tag)
        text, _, gen = gen_random.generate(self.seed, self.count, self.def_path, limit)
        with open(src, "w") as f:
            f.write(text)
        rc, _, err = run([self.snr, "cc", src, "-o", elf], 300)
        if rc:
            raise RuntimeError("seed %d: snr cc %s failed:\n%s" % (self.seed, src, err.decode(errors="replace")))
        return elf, gen

    def run(self, elf):
        """(difference or None, device exit, qemu exit, device stderr, device output)"""
        drc, dout, derr = run([self.snr, "device", "--limit", str(20 * self.count + 100000), elf], 120)
        qrc, qout, _ = run([self.qemu, elf], 120)
        diff = first_difference(dout, qout)
        if not diff and drc != qrc:
            diff = "exit codes differ"
        return diff, drc, qrc, derr.decode(errors="replace").strip(), dout

    def bisect(self, ngroups):
        """Finds the first group after which the machines disagree and prints
        it with the (agreed) register values it starts from."""
        lo, hi = 0, ngroups  # the prefix of lo groups agrees, of hi does not
        good = None
        while hi - lo > 1:
            mid = (lo + hi) // 2
            elf, _ = self.build(mid)
            d, _, _, _, out = self.run(elf)
            if d:
                hi = mid
            else:
                lo, good = mid, out
        elf, gen = self.build(hi)
        d, _, _, derr, _ = self.run(elf)
        print("  bisected: the machines agree after %d groups and disagree after %d; group %d is:" % (lo, hi, hi - 1))
        text = gen.lines(hi - 1, hi)
        for line in text:
            print("      " + line)
        if good is None and lo == 0:
            elf0, _ = self.build(0)
            good = self.run(elf0)[4]
        if good and len(good) == DUMP_BYTES:
            regs = sorted({int(t[1:]) for line in text for t in line.replace(",", " ").replace("(", " ")
                           .replace(")", " ").split() if t.startswith("x") and t[1:].isdigit()})
            vals = ["x%d=0x%016x" % (r, int.from_bytes(good[gen_random.SCRATCH + 8 * (r - 1):][:8], "little"))
                    for r in regs if r]
            print("    registers before it: " + " ".join(vals))
        print("    after it: %s" % d)
        if derr:
            print("    device stderr: %s" % derr)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snr", help="the snr binary")
    ap.add_argument("--seeds", default="1,2,3", help="comma-separated seeds (default 1,2,3)")
    ap.add_argument("--count", type=int, default=100000, help="random instructions per seed")
    ap.add_argument("--min", type=int, default=200, help="minimum occurrences of each opcode per seed")
    ap.add_argument("--no-bisect", action="store_true", help="do not look for the first differing instruction")
    ap.add_argument("--keep", help="keep the generated files in this directory")
    ap.add_argument("--qemu", default=os.environ.get("QEMU_RISCV64", "qemu-riscv64"))
    a = ap.parse_args()

    qemu = shutil.which(a.qemu)
    if not qemu:
        print("SKIP: %s not found (install qemu-user: apt-get install qemu-user)" % a.qemu)
        return 77
    objdump = shutil.which("riscv64-unknown-elf-objdump")
    if not objdump:
        print("FAIL: riscv64-unknown-elf-objdump not found (it comes with gcc-riscv64-unknown-elf)")
        return 1
    self_check()
    def_path = os.path.join(HERE, "..", "..", "isa", "ta1", "ta1_insns.def")
    intended = gen_random.intended_ops(def_path)
    work = a.keep or tempfile.mkdtemp(prefix="snr-diff-random-")
    os.makedirs(work, exist_ok=True)
    snr = os.path.abspath(a.snr)
    failed = False
    total = collections.Counter()
    for seed in [int(s) for s in a.seeds.split(",") if s]:
        case = Case(snr, qemu, work, seed, a.count, def_path)
        try:
            elf, gen = case.build()
        except RuntimeError as e:
            print(e)
            failed = True
            continue
        cov = coverage(elf, objdump)
        total.update(cov)
        thin = [(op, cov.get(op, 0)) for op in intended if cov.get(op, 0) < a.min]
        if thin:
            print("seed %d: too little coverage (want %d each): %s" % (
                seed, a.min, ", ".join("%s=%d" % t for t in thin)))
            failed = True
        diff, drc, qrc, derr, dout = case.run(elf)
        if diff:
            failed = True
            print("seed %d: MISMATCH: %s" % (seed, diff))
            print("  exit codes: device %d, qemu %d" % (drc, qrc))
            if derr:
                print("  device stderr: %s" % derr)
            print("  reproduce: python3 %s/gen_random.py --seed %d --count %d -o r.S && %s cc r.S -o r.elf && "
                  "cmp <(%s device r.elf) <(qemu-riscv64 r.elf)" % (HERE, seed, a.count, snr, snr))
            if not a.no_bisect:
                case.bisect(len(gen.groups))
        else:
            rare = min(((op, cov.get(op, 0)) for op in intended), key=lambda t: t[1])
            print("seed %d: %d random instructions (%d words in the stream), device == qemu (%d bytes), "
                  "rarest opcode %s=%d" % (seed, a.count, sum(cov.values()), len(dout), rare[0], rare[1]))
    print("coverage over all seeds (%d opcodes):" % len(intended))
    line = []
    for op in intended:
        line.append("%s=%d" % (op, total.get(op, 0)))
    for i in range(0, len(line), 8):
        print("  " + " ".join(line[i:i + 8]))
    if not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
