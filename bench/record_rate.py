#!/usr/bin/env python3
"""record_rate.py: how fast `snr record` records, and how small its traces are.

In one run, against the same programs:
  * recording rate over GDB's remote protocol against `snr device --gdb`, on
    loopback TCP and on a unix socket (instructions/s, from the recorder's
    own summary: connect, run to the breakpoint, N steps, end-state digest);
  * gdb-multiarch's own `stepi N` against the same stub at the same
    breakpoint (steps/s, timed inside gdb around the stepi alone), and the
    ratio (target: at least 30k/s and at least 5x gdb);
  * the ptrace recording rate of an x86-64 loop (tests/rec/x86_rec.c, host
    cc -O1; target at least 20k/s);
  * trace bytes per instruction of a TA1 window (tests/rec/rec_prog.c);
  * the recording method (`snr record --method`): a 600,000-instruction
    window (bench/window_prog.c's loop, ITERS=50000) over loopback TCP,
    `sim` against `step`, with no load added and with two busy loops
    beside them, in the same run: seconds, rate and debugger requests per
    window (targets: sim at least 20x step, under 2 s idle and under 5 s
    with the busy loops);
  * the wait on both ends of a step (lib/snr_wait.c): the fixed spin used
    before (SNR_RSP_WAIT=spin), the adaptive wait (the default) and block,
    with no load added and with two busy loops (`sh -c 'while :; do :;
    done'`) running beside them, --rounds rounds with the modes interleaved
    (targets: adaptive not slower than the fixed spin with no load added, at
    least 5x its rate with the busy loops; medians and overall rates --
    all rounds' instructions over all rounds' seconds -- compared);
  * for a TA1 window that moves data through HBM (workloads/mlp.c from
    forward()), what a naive snapshot would store -- every byte of core
    memory and VMEM plus the HBM ranges the window touches -- against the
    minimal snapshot (the bytes the recorder captured).

  * the serving window (bench/analyses_prog.c's serve(), -O2, as
    bench/record_scale.sh and bench/analyses_scale.sh build it) recorded
    by the default method (--method sim) from `snr device` over loopback
    TCP, --serve-count instructions (default 10M): record wall seconds, the
    recorder's CPU seconds (user + system) and peak RSS, the device's CPU,
    then `snr replay` of the same trace (the GRM with the timing model,
    verified): its wall and CPU seconds, and the recorder's CPU over the
    replay's (targets: at most 3x, 10M under 1 s idle). With --serve-old
    SNR an earlier snr records the same window in the same run, rounds
    alternating (--serve-rounds), and its trace must have the same bytes
    (tests/rec/trace_bytes_same.py).

With --wait-only, just the wait item. With --serve-only, just the serving
window item. With --rate-only, just the first
item, --rounds times (TCP and unix socket alternating): each round's rate
and the load average before it, the best and the median, against the 30k/s
target. Every rate is `snr record
--method step`'s as its summary states it, with the journal (OUT.partial,
one writev per step: docs/recording.md) included, since it is always on.

  usage: record_rate.py SNR [--count N] [--gdb-steps N] [--wait-count N] [--method-count N]
                        [--serve-count N] [--serve-old SNR] [--serve-rounds N]
                        [--rate-only | --wait-only | --serve-only] [--rounds N]
"""
import argparse
import itertools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
SPACE_HBM = 3  # isa/ta1/ta1_isa.h: enum ta1_space


def run(cmd, **kw):
    p = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if p.returncode != 0:
        sys.exit("%s failed (exit %d): %s" % (" ".join(cmd), p.returncode, p.stderr))
    return p


def start_device(snr, elf, gdb, env=None):
    """Starts `snr device ELF --gdb GDB --halt`; returns (process, target)."""
    p = subprocess.Popen([snr, "device", elf, "--gdb", gdb, "--halt"], stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True, env=env)
    if gdb.startswith("unix:"):
        for _ in range(200):
            if os.path.exists(gdb[5:]):
                return p, gdb
            time.sleep(0.01)
        sys.exit("device did not create %s" % gdb)
    line = p.stderr.readline()
    m = re.search(r"127\.0\.0\.1:(\d+)", line)
    if not m:
        sys.exit("device did not say its port: %s" % line)
    return p, "tcp:127.0.0.1:" + m.group(1)


def requests(stderr):
    m = re.search(r"method (\w+): (\d+) debugger requests, (\d+) bytes fetched", stderr)
    if not m:
        sys.exit("no method line from snr record: %s" % stderr)
    return m.group(1), int(m.group(2)), int(m.group(3))


def summary(stderr):
    m = re.search(r"recorded (\d+) instructions in ([\d.]+) s \((\d+)/s\)", stderr)
    t = re.search(r"trace .*: (\d+) bytes \(([\d.]+) bytes per instruction\)", stderr)
    c = re.search(r"captured (\d+) registers and (\d+) bytes of memory", stderr)
    if not (m and t and c):
        sys.exit("no summary from snr record: %s" % stderr)
    meth, req, fetched = requests(stderr)
    return {"n": int(m.group(1)), "s": float(m.group(2)), "rate": int(m.group(3)), "trace": int(t.group(1)),
            "bpi": float(t.group(2)), "regs": int(c.group(1)), "bytes": int(c.group(2)), "method": meth,
            "requests": req, "fetched": fetched}


def record_device(snr, elf, gdb, bp, count, out, env=None, extra=("--method", "step")):
    dev, target = start_device(snr, elf, gdb, env)
    p = run([snr, "record", "--target", target, "--elf", elf, "--breakpoint", bp, "--count", str(count),
             "-o", out] + list(extra), env=env)
    dev.wait(timeout=120)
    return summary(p.stderr)


def gdb_stepi_rate(snr, elf, steps):
    gdb = shutil.which("gdb-multiarch")
    if not gdb:
        return None
    dev, target = start_device(snr, elf, "tcp:127.0.0.1:0")
    py = ("python import time; t=time.perf_counter(); gdb.execute('stepi %d', to_string=True); "
          "print('STEPI_RATE %%.0f' %% (%d/(time.perf_counter()-t)))" % (steps, steps))
    p = run([gdb, "-nx", "-batch", "-ex", "set pagination off", "-ex", "set confirm off", "-ex", "file " + elf,
             "-ex", "target remote " + target[4:], "-ex", "break window", "-ex", "continue", "-ex", py,
             "-ex", "detach"])
    dev.wait(timeout=120)
    m = re.search(r"STEPI_RATE (\d+)", p.stdout)
    if not m:
        sys.exit("gdb printed no rate: %s %s" % (p.stdout, p.stderr))
    return int(m.group(1))


def load_average():
    return os.getloadavg()[0]


class BusyLoops:
    """n shell busy loops for the duration of a with block."""

    def __init__(self, n):
        self.n = n
        self.procs = []

    def __enter__(self):
        for _ in range(self.n):
            self.procs.append(subprocess.Popen(["sh", "-c", "while :; do :; done"]))
        time.sleep(0.5)  # let the scheduler see them
        return self

    def __exit__(self, *exc):
        for p in self.procs:
            p.kill()
            p.wait()


WAIT_MODES = ("spin", "adaptive", "block")
WAIT_LABELS = {"spin": "fixed spin (before)", "adaptive": "adaptive (default)", "block": "block (never spin)"}


def wait_modes(snr, elf, count, rounds, tmp):
    """Stepping rate over loopback TCP per wait mode (SNR_RSP_WAIT, on both
    ends), without and with two busy loops; `rounds` rounds, modes
    interleaved so that all see the same machine, each round in the next of
    their six orders (a mode run right after the fixed spin's runs on a
    machine that spin has just kept fully busy; no mode may always be the
    one). Returns {(mode, loaded): [(rate, load average), ...]}."""
    orders = list(itertools.permutations(WAIT_MODES))
    res = {}
    for rnd in range(rounds):
        for loaded in (False, True):
            with BusyLoops(2 if loaded else 0):
                for mode in orders[rnd % len(orders)]:
                    env = dict(os.environ, SNR_RSP_WAIT=mode)
                    la = load_average()
                    r = record_device(snr, elf, "tcp:127.0.0.1:0", "window", count,
                                      os.path.join(tmp, "wait.snrt"), env)
                    res.setdefault((mode, loaded), []).append((r["rate"], la))
    return res


def print_wait_modes(w, count, rounds):
    print("stepping wait (RSP, TCP, rec_prog window(), %d instructions, %d rounds; rate per round, load average "
          "before it):" % (count, rounds))
    for loaded in (False, True):
        for mode in WAIT_MODES:
            runs = w[(mode, loaded)]
            rates = sorted(r for r, _ in runs)
            print("  %-20s %-14s median %6d/s  best %6d/s   %s" % (
                WAIT_LABELS[mode], "2 busy loops" if loaded else "no load added", rates[len(rates) // 2],
                rates[-1], "  ".join("%d (%.1f)" % r for r in runs)))
    med = {k: sorted(r for r, _ in v)[len(v) // 2] for k, v in w.items()}
    # What a user waits for over all rounds: every round steps the same
    # window, so the overall rate is the rounds' harmonic mean (a collapsed
    # round costs its full time, not one vote in a median).
    overall = {k: len(v) / sum(1.0 / r for r, _ in v) for k, v in w.items()}
    for loaded, target in ((False, "target >= 1: not slower"), (True, "target >= 5")):
        what = "2 busy loops " if loaded else "no load added"
        print("  adaptive / fixed spin, %s  %5.2fx median, %5.2fx overall (%s); adaptive / block %5.2fx median"
              % (what, med[("adaptive", loaded)] / med[("spin", loaded)],
                 overall[("adaptive", loaded)] / overall[("spin", loaded)], target,
                 med[("adaptive", loaded)] / med[("block", loaded)]))
    print("  overall rate (all rounds' instructions over all rounds' seconds): " + ", ".join(
        "%s %s %d/s" % (WAIT_LABELS[m], "loaded" if l else "idle", overall[(m, l)])
        for l in (False, True) for m in WAIT_MODES))
    print("  (load average: the 1-minute figure before each round, busy loops included; on %d CPUs)"
          % os.cpu_count())


def methods(snr, count, tmp):
    """sim and step on the same 600k window, without and with two busy
    loops. Returns [(loaded, method, summary, load average)]."""
    elf = os.path.join(tmp, "window.elf")
    run([snr, "cc", "-O1", "-DITERS=%d" % (count // 12), os.path.join(HERE, "window_prog.c"), "-o", elf])
    res = []
    for loaded in (False, True):
        with BusyLoops(2 if loaded else 0):
            for meth in ("sim", "step"):
                la = load_average()
                r = record_device(snr, elf, "tcp:127.0.0.1:0", "window", count, os.path.join(tmp, "m.snrt"),
                                  extra=["--method", meth, "--kill"])
                res.append((loaded, meth, r, la))
    return res


def naive_vs_minimal(snr, trace):
    """Core memory + VMEM (sizes from the trace's machine config) + the HBM
    bytes the window touches (captured or written: the union of the ranges),
    against the captured bytes."""
    info = json.loads(run([snr, "trace", "info", trace, "--json"]).stdout)
    dump = run([snr, "trace", "dump", trace, "--json"]).stdout
    hbm = []
    captured = 0
    for line in dump.splitlines():
        s = json.loads(line)
        for m in s.get("memory", []):
            captured += m["len"]
            if m["space"] == SPACE_HBM:
                hbm.append((m["chip"], m["addr"], m["addr"] + m["len"]))
    return info, captured, hbm


def rate_only(snr, rec, count, rounds, tmp):
    """The stepping rate with the journal, TCP and unix socket alternating,
    `rounds` times each, with the load average before each round."""
    res = {"tcp": [], "unix": []}
    for i in range(rounds):
        for kind in ("tcp", "unix"):
            la = load_average()
            gdb = "tcp:127.0.0.1:0" if kind == "tcp" else "unix:" + os.path.join(tmp, "gdb%d.sock" % i)
            out = os.path.join(tmp, "%s%d.snrt" % (kind, i))
            r = record_device(snr, rec, gdb, "window", count, out)
            res[kind].append((r["rate"], la))
            os.unlink(out)
    print("snr record --method step, rec_prog window(), %d instructions, journal (OUT.partial) on, %d rounds:"
          % (count, rounds))
    for kind, label in (("tcp", "loopback TCP"), ("unix", "unix socket")):
        rates = sorted(r for r, _ in res[kind])
        print("  %-13s %s" % (label, "  ".join("%6d/s (load %.1f)" % r for r in res[kind])))
        print("  %-13s best %d/s, median %d/s; target >= 30000/s on an idle machine: %s"
              % ("", rates[-1], rates[len(rates) // 2], "met" if rates[-1] >= 30000 else "NOT met"))
    print("  (a figure taken at a load average above the core count (%d) is not an idle figure)" % os.cpu_count())


def run_usage(cmd, env=None):
    """Runs cmd, waited for by os.wait4: (stdout + stderr, exit status, wall s, CPU s, peak RSS MiB)."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, env=env)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wall = time.perf_counter() - t
    return out.decode(errors="replace"), p.returncode, wall, ru.ru_utime + ru.ru_stime, ru.ru_maxrss / 1024.0


def serve_window(snr, elf, count, out):
    """Records the serving window with snr (default method, TCP, --kill) and replays it."""
    if os.path.exists(out):
        os.unlink(out)
    dev = subprocess.Popen([snr, "device", elf, "--gdb", "tcp:127.0.0.1:0", "--halt"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, text=True)
    line = dev.stderr.readline()
    m = re.search(r"127\.0\.0\.1:(\d+)", line)
    if not m:
        sys.exit("device did not say its port: %s" % line)
    la = load_average()
    text, rc, wall, cpu, rss = run_usage([snr, "record", "--target", "tcp:127.0.0.1:" + m.group(1), "--elf", elf,
                                          "--breakpoint", "serve", "--count", str(count), "-o", out, "--kill"])
    dev.stderr.close()
    _, status, dru = os.wait4(dev.pid, 0)
    dev.returncode = os.waitstatus_to_exitcode(status)
    if rc != 0 or "registers and written memory matched" not in text:
        sys.exit("%s record of the serving window failed or was not verified (exit %d): %s" % (snr, rc, text[-800:]))
    rtext, rrc, rwall, rcpu, rrss = run_usage([snr, "replay", out])
    if rrc != 0 or "end state matches the recording" not in rtext:
        sys.exit("%s replay of the serving window failed or was not verified (exit %d): %s" % (snr, rrc, rtext[-800:]))
    return {"load": la, "wall": wall, "cpu": cpu, "rss": rss, "dev_cpu": dru.ru_utime + dru.ru_stime,
            "rp_wall": rwall, "rp_cpu": rcpu, "rp_rss": rrss}


def serve_rates(snr, count, old, rounds, tmp):
    """The serving window item: rows per round (and per snr with old), printed as they come."""
    tokens = max(8000, count // 1000)
    elf = os.path.join(tmp, "serve.elf")
    run([snr, "cc", "-O2", "-DTOKENS=%d" % tokens, os.path.join(HERE, "analyses_prog.c"), "-o", elf])
    print("serving window (bench/analyses_prog.c serve(), TOKENS=%d, -O2), %d instructions, --method sim over "
          "loopback TCP, then snr replay of the same trace; on %d CPUs:" % (tokens, count, os.cpu_count()))
    print("  %-6s %6s | %9s %9s %9s %9s | %9s %9s %9s | %9s" % ("snr", "load", "rec wall", "rec CPU", "rec RSS",
                                                              "dev CPU", "rp wall", "rp CPU", "rp RSS",
                                                              "CPU ratio"))
    rows = {"now": [], "before": []}
    for k in range(rounds):
        order = [("now", snr)] + ([("before", old)] if old else [])
        if k % 2:
            order.reverse()
        for tag, s in order:
            out = os.path.join(tmp, "serve-%s.snrt" % tag)
            r = serve_window(s, elf, count, out)
            rows[tag].append(r)
            print("  %-6s %6.1f | %8.2fs %8.2fs %6.0fMiB %8.2fs | %8.2fs %8.2fs %6.0fMiB | %8.2fx" % (
                tag, r["load"], r["wall"], r["cpu"], r["rss"], r["dev_cpu"], r["rp_wall"], r["rp_cpu"], r["rp_rss"],
                r["cpu"] / r["rp_cpu"]), flush=True)
        if old:
            same = subprocess.run([sys.executable, os.path.join(ROOT, "tests", "rec", "trace_bytes_same.py"),
                                   os.path.join(tmp, "serve-before.snrt"), os.path.join(tmp, "serve-now.snrt")],
                                  capture_output=True, text=True)
            if same.returncode != 0:
                sys.exit("the traces of the two snrs differ: %s%s" % (same.stdout, same.stderr))
    for tag in ("now", "before"):
        rs = rows[tag]
        if not rs:
            continue
        med = lambda key: sorted(r[key] for r in rs)[len(rs) // 2]
        print("  %-6s median of %d: recorder CPU %.2f s, replay CPU %.2f s: %.2fx (target <= 3x); record wall "
              "%.2f s (target < 1 s idle at 10M); peak RSS %.0f MiB" % (tag, len(rs), med("cpu"), med("rp_cpu"),
                                                                       med("cpu") / med("rp_cpu"), med("wall"),
                                                                       med("rss")))
    if old:
        print("  the two snrs' traces have the same bytes (but META's time and target, END's seconds and requests)")
    print("  (a load average above the core count (%d) is not an idle figure: the walls are mostly waiting for a "
          "core, twice per round trip; the CPU columns hold better)" % os.cpu_count())


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("snr")
    ap.add_argument("--count", type=int, default=100000)
    ap.add_argument("--gdb-steps", type=int, default=20000)
    ap.add_argument("--wait-count", type=int, default=20000)
    ap.add_argument("--method-count", type=int, default=600000)
    ap.add_argument("--rate-only", action="store_true",
                    help="only the stepping rate over loopback TCP and a unix socket, --rounds times")
    ap.add_argument("--wait-only", action="store_true",
                    help="only the stepping wait: fixed spin, adaptive and block, with and without two busy "
                    "loops, --rounds times")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--serve-count", type=int, default=10000000)
    ap.add_argument("--serve-old", metavar="SNR", help="an earlier snr to record the serving window too")
    ap.add_argument("--serve-rounds", type=int, default=1)
    ap.add_argument("--serve-only", action="store_true", help="only the serving window item")
    a = ap.parse_args()
    snr = os.path.abspath(a.snr)
    tmp = tempfile.mkdtemp(prefix="snr-record-rate-")
    try:
        rec = os.path.join(tmp, "rec.elf")
        run([snr, "cc", "-O1", os.path.join(ROOT, "tests", "rec", "rec_prog.c"), "-o", rec])
        if a.rate_only:
            rate_only(snr, rec, a.count, a.rounds, tmp)
            return
        if a.serve_only:
            serve_rates(snr, a.serve_count, a.serve_old and os.path.abspath(a.serve_old), a.serve_rounds, tmp)
            return
        if a.wait_only:
            print_wait_modes(wait_modes(snr, rec, a.wait_count, a.rounds, tmp), a.wait_count, a.rounds)
            return
        tcp = record_device(snr, rec, "tcp:127.0.0.1:0", "window", a.count, os.path.join(tmp, "tcp.snrt"))
        uds = record_device(snr, rec, "unix:" + os.path.join(tmp, "gdb.sock"), "window", a.count,
                            os.path.join(tmp, "unix.snrt"))
        print("RSP, snr device, loopback TCP   %8d instructions/s  (%d in %.2f s)" % (tcp["rate"], tcp["n"], tcp["s"]))
        print("RSP, snr device, unix socket    %8d instructions/s  (%d in %.2f s)" % (uds["rate"], uds["n"], uds["s"]))
        ms = methods(snr, a.method_count, tmp)
        print("method (RSP, TCP, window_prog.c, %d instructions):" % a.method_count)
        print("  %-6s %-15s %9s %12s %10s %14s" % ("method", "load", "seconds", "instr/s", "requests",
                                                  "bytes fetched"))
        for loaded, meth, r, la in ms:
            print("  %-6s %-15s %9.2f %12d %10d %14d  (load average %.1f)" % (
                meth, "2 busy loops" if loaded else "no load added", r["s"], r["rate"], r["requests"],
                r["fetched"], la))
        for loaded in (False, True):
            sim = [r for l, m, r, _ in ms if l == loaded and m == "sim"][0]
            step = [r for l, m, r, _ in ms if l == loaded and m == "step"][0]
            print("  sim / step, %-15s %6.1fx faster (target >= 20x); sim %.2f s (target < %d s)"
                  % ("2 busy loops:" if loaded else "no load added:", step["s"] / sim["s"], sim["s"],
                     5 if loaded else 2))
        w = wait_modes(snr, rec, a.wait_count, a.rounds, tmp)
        print_wait_modes(w, a.wait_count, a.rounds)
        g = gdb_stepi_rate(snr, rec, a.gdb_steps)
        if g:
            print("gdb-multiarch stepi, same stub  %8d steps/s         (stepi %d, TCP)" % (g, a.gdb_steps))
            print("ratio snr record / gdb stepi    %8.1fx              (target >= 5x; TCP rate >= 30k/s: %s)"
                  % (tcp["rate"] / g, "yes" if tcp["rate"] >= 30000 else "NO"))
        else:
            print("gdb-multiarch stepi             (gdb-multiarch not installed)")

        cc = shutil.which("cc")
        x86 = os.path.join(tmp, "x86_rec")
        if cc and os.uname().machine == "x86_64":
            run([cc, "-O1", "-fpie", "-pie", os.path.join(ROOT, "tests", "rec", "x86_rec.c"), "-o", x86])
            pt = summary(run([snr, "record", "--breakpoint", "work", "--count", str(a.count), "--method", "step",
                              "--kill", "-o",
                              os.path.join(tmp, "x86.snrt"), "--", x86, "loop"]).stderr)
            print("ptrace, x86-64 loop             %8d instructions/s  (%d in %.2f s; target >= 20k/s: %s)"
                  % (pt["rate"], pt["n"], pt["s"], "yes" if pt["rate"] >= 20000 else "NO"))
            print("ptrace, x86-64, sim against step (x86_rec loop, %d instructions, same run):" % a.method_count)
            for loaded in (False, True):
                with BusyLoops(2 if loaded else 0):
                    r = {}
                    for meth in ("sim", "step"):
                        la = load_average()
                        r[meth] = summary(run([snr, "record", "--breakpoint", "work", "--count", str(a.method_count),
                                               "--method", meth, "--kill", "-o", os.path.join(tmp, "x86m.snrt"),
                                               "--", x86, "loop"]).stderr)
                        print("  %-6s %-15s %9.2f s %10d/s %10d requests  (load average %.1f)" % (
                            meth, "2 busy loops" if loaded else "no load added", r[meth]["s"], r[meth]["rate"],
                            r[meth]["requests"], la))
                    print("  sim / step, %-15s %6.1fx faster (target >= 10x)"
                          % ("2 busy loops:" if loaded else "no load added:", r["step"]["s"] / r["sim"]["s"]))
        else:
            print("ptrace, x86-64 loop             (needs an x86-64 host and cc)")

        print("TA1 trace size                  %8.2f bytes/instruction (rec_prog window(), %d instructions, "
              "%d bytes)" % (tcp["bpi"], tcp["n"], tcp["trace"]))

        mlp = os.path.join(tmp, "mlp.elf")
        run([snr, "cc", "-O1", os.path.join(ROOT, "workloads", "mlp.c"), "-o", mlp])
        mt = os.path.join(tmp, "mlp.snrt")
        ms = record_device(snr, mlp, "tcp:127.0.0.1:0", "forward", 2000, mt)
        info, captured, hbm = naive_vs_minimal(snr, mt)
        cfg = info["meta"]["config"]
        core = cfg["core_memory_bytes"]
        vmem = cfg["vmem"]["bytes"]
        hbm_bytes = 0
        for chip in sorted(set(h[0] for h in hbm)):
            rs = sorted((lo, hi) for c, lo, hi in hbm if c == chip)
            cur_lo, cur_hi = rs[0]
            for lo, hi in rs[1:] + [(None, None)]:
                if lo is not None and lo <= cur_hi:
                    cur_hi = max(cur_hi, hi)
                    continue
                hbm_bytes += cur_hi - cur_lo
                if lo is not None:
                    cur_lo, cur_hi = lo, hi
        naive = core + vmem + hbm_bytes
        print("naive snapshot (mlp forward())  %8d bytes: core %d + VMEM %d + HBM touched %d" %
              (naive, core, vmem, hbm_bytes))
        print("minimal snapshot (captured)     %8d bytes in %d instructions (%d registers); %.0fx smaller; "
              "trace %d bytes" % (captured, ms["n"], ms["regs"], naive / max(captured, 1), ms["trace"]))
        serve_rates(snr, a.serve_count, a.serve_old and os.path.abspath(a.serve_old), a.serve_rounds, tmp)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
