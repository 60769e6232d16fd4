#!/usr/bin/env bash
# snr analyze util and deps on host code: the stored x86-64 trace
# (traces/x86-64-kernels.snrt: kernels() of tests/uc/uc_kernel.c, replayed by
# the unicorn simulator), with answers known from the program:
#   util: two units, scalar (each instruction's first cycle) and memory (its
#     cycles beyond that): scalar's total is instructions / cycles, and the
#     two fill every window (unicorn runs one instruction at a time);
#   deps: the first copy_loop(dst, src, 4096) runs whole in the window, so its
#     byte store depends on its movzx load through rcx exactly 4096 times; its
#     ret reads the return address the call in kernels() pushed (one memory
#     edge); in matmul_blocked `c[i][j] += ...` reads what the previous k's
#     store wrote: the most frequent memory dependency; rip carries none.
# Instructions are found by disassembly, not by offset.
# usage: host_analyses.sh SNR TRACE
set -u
SNR=$1; TRACE=$2
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$SNR" analyze util "$TRACE" --json >"$T/util.json" 2>"$T/util.err" || fail "util: $(cat "$T/util.err")"
python3 - "$T/util.json" <<'PY' || fail "util on host code: $(head -c 2000 "$T/util.json")"
import json, sys
u = json.load(open(sys.argv[1]))
assert u["units"] == ["scalar", "memory"], u["units"]
n, cycles = u["source"]["instructions"], u["source"]["cycles"]
assert n == 30000 and cycles > n, (n, cycles)
assert abs(u["total"]["scalar"] - n / cycles) < 1e-9, (u["total"], n / cycles)
assert u["total"]["memory"] > 0.01, u["total"]
for w in u["windows"]:
    assert abs(sum(w["busy"]) - 1.0) < 1e-9, w
PY
"$SNR" analyze util "$TRACE" >"$T/util.txt" || fail "util text"
grep -qE '^ +total +[0-9.]+ +[0-9.]+$' "$T/util.txt" || fail "util text: $(cat "$T/util.txt")"

"$SNR" trace dump "$TRACE" --json >"$T/dump.json" || fail "trace dump"
"$SNR" analyze deps "$TRACE" --json --top 100000 >"$T/deps.json" 2>"$T/deps.err" || fail "deps: $(cat "$T/deps.err")"
python3 - "$T/deps.json" "$T/dump.json" <<'PY' || fail "deps on host code"
import json, sys
d = json.load(open(sys.argv[1]))
dis = {}
for line in open(sys.argv[2]):
    i = json.loads(line)
    dis[i["pc"]] = (i["symbol"].split("+")[0], i["disasm"])
assert d["dmas"] == [], d["dmas"]
assert d["memory_edges"] > 0 and d["register_edges"] > 0
top = d["top_dependencies"]
def pairs(cfun, cdis, pfun, pdis, kind):
    return [t for t in top if t["kind"] == kind
            and dis[t["consumer_pc"]][0] == cfun and dis[t["consumer_pc"]][1].startswith(cdis)
            and dis[t["producer_pc"]][0] == pfun and dis[t["producer_pc"]][1].startswith(pdis)]
store = pairs("copy_loop", "mov byte ptr", "copy_loop", "movzx", "reg")
assert [(t["what"], t["count"]) for t in store] == [("rcx", 4096)], store
ret = pairs("copy_loop", "ret", "kernels", "call", "mem")
assert [t["count"] for t in ret] == [1], ret
mem = [t for t in top if t["kind"] == "mem"]
m = mem[0]
assert dis[m["consumer_pc"]][0] == "matmul_blocked" and dis[m["consumer_pc"]][1].startswith("addsd"), m
assert dis[m["producer_pc"]][0] == "matmul_blocked" and dis[m["producer_pc"]][1].startswith("movsd qword ptr"), m
assert not [t for t in top if t["what"] == "rip"], "edges through rip"
PY
"$SNR" analyze deps "$TRACE" --edges >"$T/deps.txt" || fail "deps --edges"
grep -qE '^ +[0-9]+ <- [0-9]+ +reg +rcx$' "$T/deps.txt" || fail "deps --edges names no x86 register: $(head -30 "$T/deps.txt")"
grep -q 'most frequent dependencies by pc' "$T/deps.txt" || fail "deps text: $(head -30 "$T/deps.txt")"
echo "ok: util and deps on host code"
