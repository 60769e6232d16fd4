#!/usr/bin/env python3
"""gen_random.py: writes a random RV64IM instruction stream as a TA1 .S file.

The stream is the device's differential test against qemu-riscv64 (see
run_random.py). It covers every scalar row of isa/ta1/ta1_insns.def except
ecall, ebreak, fence.i and the CSR writes (csrrw, csrrwi); a row the generator
cannot emit is an error, so a new scalar instruction in the table fails the
test until it is given an emitter here.

Shape of the program:

  1. every register but the base gets a random 64-bit value (a mix of edge
     values: 0, +-1, INT64_MIN, INT64_MAX, 32-bit boundaries, and noise);
  2. COUNT random instructions (default 100000) with random operands;
     one group in 25 reloads a register with an edge value, and one in 50
     is a divide or multiply on a corner-case pair (INT_MIN / -1, x / 0,
     in 64 and 32 bits), so these occur in every stream;
  3. x1..x31 are stored after the scratch buffer and the buffer plus the
     registers (4096 + 248 bytes) go to stdout with write (ecall 64);
     the program exits 0 with ecall 93.

Invariants that keep the stream well defined on both machines:

  * s11 (x27) is the base register: it points at the middle of a 4 KiB
    scratch buffer and is never written; loads and stores use it with a
    random 12-bit offset, so every access stays inside the buffer (some are
    misaligned, which TA1 and qemu's user mode both allow);
  * branches and jumps only go forward, by 1..8 groups, so the stream always
    ends; jalr is emitted as `auipc t, 0; jalr rd, off(t)` with a forward
    word offset, and no branch target lands between the two;
  * the counters (cycle, time, instret) differ between the machines, so each
    CSR read is followed by `sltu rd, zero, rd`: the comparison sees only that
    the read wrote rd with a non-zero value.
"""
import argparse
import os
import random
import re
import sys

BASE = 27  # s11: the scratch base register, never written by the stream
SCRATCH = 4096
NREGS = 31

EXCLUDED = {"ecall", "ebreak", "fence.i", "csrrw", "csrrwi"}

EDGE = [0, 1, 2, 0xFFFFFFFFFFFFFFFF, 0xFFFFFFFFFFFFFFFE, 0x8000000000000000, 0x7FFFFFFFFFFFFFFF,
        0x80000000, 0x7FFFFFFF, 0xFFFFFFFF, 0xFFFFFFFF80000000, 0x100000000, 31, 32, 63, 64,
        0x8000000000000001, 0xFFFFFFFF7FFFFFFF]

R_OPS = ["add", "sub", "sll", "slt", "sltu", "xor", "srl", "sra", "or", "and",
         "addw", "subw", "sllw", "srlw", "sraw",
         "mul", "mulh", "mulhsu", "mulhu", "div", "divu", "rem", "remu",
         "mulw", "divw", "divuw", "remw", "remuw"]
I_OPS = ["addi", "slti", "sltiu", "xori", "ori", "andi", "addiw"]
SH6_OPS = ["slli", "srli", "srai"]
SH5_OPS = ["slliw", "srliw", "sraiw"]
LOADS = {"lb": 1, "lh": 2, "lw": 4, "ld": 8, "lbu": 1, "lhu": 2, "lwu": 4}
STORES = {"sb": 1, "sh": 2, "sw": 4, "sd": 8}
BRANCHES = ["beq", "bne", "blt", "bge", "bltu", "bgeu"]
CSR_READS = ["csrrs", "csrrc", "csrrsi", "csrrci"]
CSRS = ["cycle", "time", "instret"]
OTHER = ["lui", "auipc", "jal", "jalr", "fence"]
EMITTABLE = set(R_OPS + I_OPS + SH6_OPS + SH5_OPS + list(LOADS) + list(STORES) + BRANCHES + CSR_READS + OTHER)


def scalar_ops(def_path):
    """Mnemonics of the table's scalar rows (everything before the Xta rows)."""
    ops = []
    for line in open(def_path):
        m = re.match(r'\s*TA1_INSN\(\s*\w+\s*,\s*"([^"]+)"', line)
        if m and not m.group(1).startswith("ta."):
            ops.append(m.group(1))
    return ops


def intended_ops(def_path):
    ops = [o for o in scalar_ops(def_path) if o not in EXCLUDED]
    missing = sorted(set(ops) - EMITTABLE)
    if missing:
        sys.exit("gen_random.py: no emitter for scalar instruction(s) %s in %s" % (", ".join(missing), def_path))
    return ops


class Gen:
    def __init__(self, rng, ops):
        self.rng = rng
        self.ops = ops
        self.groups = []   # each: list of instruction lines (one word each)
        self.targets = {}  # group index -> labels placed before it
        self.nlabels = 0
        self.counts = {o: 0 for o in ops}

    def reg(self):  # any register but the base; x0 allowed as a source
        r = self.rng.randrange(32)
        return r if r != BASE else 0

    def dst(self):  # a destination; x0 now and then (the write is dropped)
        if self.rng.random() < 0.03:
            return 0
        while True:
            r = self.rng.randrange(1, 32)
            if r != BASE:
                return r

    def imm12(self):
        c = self.rng.random()
        if c < 0.2:
            return self.rng.choice([0, 1, -1, 2047, -2048, 2046, -2047, 31, 32, 63, 64])
        return self.rng.randrange(-2048, 2048)

    def edge(self):
        if self.rng.random() < 0.7:
            return self.rng.choice(EDGE)
        return self.rng.getrandbits(64)

    def label_at(self, group_index):
        name = ".Lf%d" % self.nlabels  # .L: kept out of the symbol table
        self.nlabels += 1
        self.targets.setdefault(group_index, []).append(name)
        return name

    def mem_offset(self, size):
        off = self.rng.randrange(-2048, 2048 - size + 1)
        if self.rng.random() < 0.85:
            off -= off % size  # mostly aligned, sometimes not
        return off

    def one(self, n_groups_total):
        rng = self.rng
        i = len(self.groups)
        op = rng.choice(self.ops)
        self.counts[op] += 1
        x = lambda r: "x%d" % r
        if op in R_OPS:
            g = ["%s %s, %s, %s" % (op, x(self.dst()), x(self.reg()), x(self.reg()))]
        elif op in I_OPS:
            g = ["%s %s, %s, %d" % (op, x(self.dst()), x(self.reg()), self.imm12())]
        elif op in SH6_OPS:
            g = ["%s %s, %s, %d" % (op, x(self.dst()), x(self.reg()), rng.randrange(64))]
        elif op in SH5_OPS:
            g = ["%s %s, %s, %d" % (op, x(self.dst()), x(self.reg()), rng.randrange(32))]
        elif op in LOADS:
            g = ["%s %s, %d(%s)" % (op, x(self.dst()), self.mem_offset(LOADS[op]), x(BASE))]
        elif op in STORES:
            g = ["%s %s, %d(%s)" % (op, x(self.reg()), self.mem_offset(STORES[op]), x(BASE))]
        elif op == "lui":
            g = ["lui %s, 0x%x" % (x(self.dst()), rng.getrandbits(20))]
        elif op == "auipc":
            g = ["auipc %s, 0x%x" % (x(self.dst()), rng.getrandbits(20))]
        elif op == "fence":
            g = [rng.choice(["fence", "fence rw, rw", "fence r, w", "fence iorw, iorw", "fence w, r"])]
        elif op in BRANCHES:
            k = rng.randrange(1, 9)
            g = ["%s %s, %s, %s" % (op, x(self.reg()), x(self.reg()), self.label_at(min(i + 1 + k, n_groups_total)))]
        elif op == "jal":
            k = rng.randrange(0, 8)
            g = ["jal %s, %s" % (x(self.dst()), self.label_at(min(i + 1 + k, n_groups_total)))]
        elif op == "jalr":
            t = self.dst() or 5
            # target: k groups after this one; the offset (from the auipc) is
            # resolved in words once the following groups exist
            k = rng.randrange(0, 8)
            rd = rng.choice([t, self.dst()])
            g = ["auipc %s, 0" % x(t), ("JALR", rd, t, k, rng.random() < 0.3)]
        elif op in CSR_READS:
            rd = self.dst() or 6
            src = "x0" if op in ("csrrs", "csrrc") else "0"
            g = ["%s %s, %s, %s" % (op, x(rd), rng.choice(CSRS), src), "sltu %s, x0, %s" % (x(rd), x(rd))]
        else:
            raise AssertionError(op)
        self.groups.append(g)

    def edge_pair(self):
        """A multiply or divide on a dividend/divisor pair from the corner cases
        (INT_MIN / -1 and division by zero, in 64 and 32 bits), so every stream
        has them however the random values fall."""
        rng = self.rng
        op = rng.choice(["div", "divu", "rem", "remu", "divw", "divuw", "remw", "remuw", "mulh", "mulhsu", "mulw"])
        self.counts[op] += 1
        a = self.dst() or 1
        b = self.dst() or 2
        while b == a:
            b = self.dst() or 2
        va = rng.choice([0x8000000000000000, 0xFFFFFFFF80000000, 0x80000000, 0x7FFFFFFFFFFFFFFF,
                         rng.getrandbits(64)])
        vb = rng.choice([0xFFFFFFFFFFFFFFFF, 0, 0xFFFFFFFF, 0x100000000, 0xFFFFFFFF00000000, 1])
        self.groups.append(["li x%d, 0x%x" % (a, va), "li x%d, 0x%x" % (b, vb),
                            "%s x%d, x%d, x%d" % (op, rng.choice([a, b, self.dst()]), a, b)])

    def reload(self):
        r = self.dst() or 1
        self.groups.append(["li x%d, 0x%x" % (r, self.edge())])

    def lines(self, i, limit):
        """Group i's instructions, in a program that stops after group limit."""
        g = self.groups[i]
        if len(g) == 2 and isinstance(g[1], tuple):
            # The jalr offset is counted in words from the auipc. A reload
            # (`li`) may expand to several words, so a jalr never skips over
            # one: it stops short of it instead.
            _, rd, t, k, odd = g[1]
            skipped, j = 0, i + 1
            while j < limit and j <= i + k and not self.groups[j][0].startswith("li "):
                skipped += len(self.groups[j])
                j += 1
            return [g[0], "jalr x%d, %d(x%d)" % (rd, 4 * (2 + skipped) + (1 if odd else 0), t)]
        return g


def generate(seed, n, def_path, limit=None):
    """The program for (seed, n) as text, the opcode counts and the generator.
    With limit, only the first `limit` groups run before the dump (the
    registers' and the buffer's initial values are the same): run_random.py
    bisects on it to find the first group where the machines disagree."""
    rng = random.Random(seed)
    ops = intended_ops(def_path)
    gen = Gen(rng, ops)
    picks = 0
    # branch targets past the last group are placed at the end
    while picks < n:
        c = rng.random()
        if c < 0.04:
            gen.reload()
        elif c < 0.06:
            gen.edge_pair()
            picks += 1
        else:
            gen.one(10**12)
            picks += 1
    ngroups = len(gen.groups) if limit is None else min(limit, len(gen.groups))
    out = []
    w = out.append
    w("/* generated by tests/diff/gen_random.py --seed %d --count %d: do not edit */" % (seed, n))
    w("\t.option norelax")
    w("\t.text")
    w("\t.globl main")
    w("main:")
    w("\tlla x%d, scratch + %d" % (BASE, SCRATCH // 2))
    for r in range(1, 32):
        if r != BASE:
            w("\tli x%d, 0x%x" % (r, gen.edge()))
    w("\t.globl stream_begin")
    w("stream_begin:")
    end_labels = []
    for i in range(ngroups):
        for lab in gen.targets.get(i, []):
            w(lab + ":")
        for line in gen.lines(i, ngroups):
            w("\t" + line)
    for idx, labs in gen.targets.items():
        if idx >= ngroups:
            end_labels += labs
    for lab in end_labels:
        w(lab + ":")
    w("\t.globl stream_end")
    w("stream_end:")
    # dump: the registers after the buffer, then buffer and registers at once
    w("\taddi x%d, x%d, %d" % (BASE, BASE, SCRATCH // 2 - 1))
    w("\taddi x%d, x%d, 1" % (BASE, BASE))
    for r in range(1, 32):
        w("\tsd x%d, %d(x%d)" % (r, 8 * (r - 1), BASE))
    w("\tli a0, 1")
    w("\tlla a1, scratch")
    w("\tli a2, %d" % (SCRATCH + 8 * NREGS))
    w("\tli a7, 64")
    w("\tecall")
    w("\tli a0, 0")
    w("\tli a7, 93")
    w("\tecall")
    w("\t.data")
    w("\t.balign 16")
    w("scratch:")
    for _ in range(SCRATCH // 8):
        w("\t.dword 0x%x" % rng.getrandbits(64))
    w("regdump:")
    w("\t.space %d" % (8 * NREGS))
    return "\n".join(out) + "\n", gen.counts, gen


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--seed", type=int, required=True)
    ap.add_argument("--count", type=int, default=100000, help="random instructions (default 100000)")
    ap.add_argument("--def", dest="def_path",
                    default=os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "isa", "ta1",
                                         "ta1_insns.def"))
    ap.add_argument("--limit", type=int, help="stop after this many groups (run_random.py --bisect uses it)")
    ap.add_argument("-o", "--output", required=True)
    ap.add_argument("--list-ops", action="store_true", help="print the intended opcodes and exit")
    a = ap.parse_args()
    if a.list_ops:
        print(" ".join(intended_ops(a.def_path)))
        return
    text, _, _ = generate(a.seed, a.count, a.def_path, a.limit)
    with open(a.output, "w") as f:
        f.write(text)


if __name__ == "__main__":
    main()
