#!/usr/bin/env bash
# Scalar round trips and units idle behind a WAIT (analyzer/roundtrip.c,
# docs/cases.md "Row softmax: a scalar round trip per row").
#   softmax_rows.c, -O2, region softmax(): per row a 4-byte DMA of the row's
#   sum to core memory, its WAIT, the scalar reciprocal; `snr analyze suggest
#   --verify` names the round trip at the DMA's line (softmax, pc), with its
#   cost (the replay's stalls at the WAIT), and replays the usual rewrite (the
#   next row's sum issued right after this row's WAIT, before the scalar
#   work). That what-if agrees within 3% with what the hand rewrite
#   (-DBATCHED) saves under `snr device --timing`: the rewrite also alternates
#   two sum slots and branches on the last row, a few instructions a row that
#   the what-if does not have. The output WAIT leaves the vector unit idle:
#   the next row's exp, which does not need the output, is named.
#   stream.c, -O2, region stream(): no round trip and no idle unit (each
#   WAIT's data is what the next vector operation reads).
#   A planted idle unit whose operation writes the buffer the WAIT's DMA still
#   reads: the conflict is named. The stored All-Gather window: without
#   --verify every figure is an estimate, and a round trip that is not one
#   DMA per iteration is not modelled (an estimate, with the reason).
# usage: roundtrip.sh SNR SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
ROOT=${2:?usage: roundtrip.sh SNR SOURCE_ROOT}
DEV=""
trap '[ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/../gdb_device.sh"

build() { # name source [flags...]
  local name=$1 src=$2
  shift 2
  "$SNR" cc -g -O2 "$@" "$ROOT/workloads/$src" -o "$T/$name.elf" 2>"$T/cc.err" || fail "snr cc $src $*: $(cat "$T/cc.err")"
}
region() { # name: the cycles the program prints for its region under the timing model
  "$SNR" device "$T/$1.elf" --timing >"$T/$1.out" 2>&1 || fail "device $1: $(cat "$T/$1.out")"
  local c
  c=$(grep -o '[0-9]* cycles' "$T/$1.out" | grep -o '[0-9]*' | head -1)
  [ -n "$c" ] || fail "no region cycles in $1's output: $(cat "$T/$1.out")"
  echo "$c"
}
record() { # name function: one call of it, to its return
  gdb_device "$SNR" "$T" "$T/$1.elf"
  "$SNR" record --target tcp:127.0.0.1:"$PORT" --elf "$T/$1.elf" --breakpoint "$2" --count 1000000 --until-return \
    -o "$T/$1.snrt" --kill 2>"$T/rec.err" || fail "record $1: $(cat "$T/rec.err")"
  wait "$DEV"; DEV=""
  "$SNR" analyze suggest "$T/$1.snrt" --verify --json >"$T/$1.json" 2>"$T/sug.err" || fail "suggest $1: $(cat "$T/sug.err")"
  "$SNR" analyze suggest "$T/$1.snrt" --verify >"$T/$1.txt" 2>&1 || fail "suggest $1: $(cat "$T/$1.txt")"
}

build sm softmax_rows.c
build smb softmax_rows.c -DBATCHED
base=$(region sm) || exit 1
bat=$(region smb) || exit 1
grep -o 'checksum [0-9a-f]*' "$T/sm.out" >"$T/c1"; grep -o 'checksum [0-9a-f]*' "$T/smb.out" >"$T/c2"
cmp -s "$T/c1" "$T/c2" || fail "the rewrite computes something else: $(cat "$T/sm.out" "$T/smb.out")"
record sm softmax
DMA_LINE=$(grep -n 'ta_dma(ta_addr((const void \*)&sum\[0\]), V_S(r), 4, 1);' "$ROOT/workloads/softmax_rows.c" | cut -d: -f1)
WAIT_LINE=$((DMA_LINE + 1))
OUTW_LINE=$(grep -n 'ta_wait(2, 1);' "$ROOT/workloads/softmax_rows.c" | tail -1 | cut -d: -f1)
EXP_LINE=$(grep -n 'ta_vexp(V_E(r), V_X(r), N);' "$ROOT/workloads/softmax_rows.c" | tail -1 | cut -d: -f1)
grep -qF "\`ta_dma(ta_addr((const void *)&sum[0]), V_S(r), 4, 1);\` at softmax_rows.c:$DMA_LINE (softmax) (pc 0x" "$T/sm.txt" &&
  grep -qF "its WAIT \`ta_wait(1, 1);\` at softmax_rows.c:$WAIT_LINE (softmax) (pc 0x" "$T/sm.txt" ||
  fail "the round trip is not stated at its source line: $(cat "$T/sm.txt")"
python3 - "$T/sm.json" "$base" "$bat" "$DMA_LINE" "$WAIT_LINE" "$OUTW_LINE" "$EXP_LINE" <<'PY' || fail "softmax round trip"
import json, sys
d = json.load(open(sys.argv[1]))
base, bat, dl, wl, owl, el = (int(x) for x in sys.argv[2:8])
rt = d["round_trips"]
assert len(rt) == 1, rt
t = rt[0]
for k, line in (("dma", dl), ("wait", wl)):
    s = t[k]["source"]
    assert s["file"].endswith("softmax_rows.c") and s["line"] == line and s["function"] == "softmax", (k, s, line)
assert t["dma"]["pc"] > 0 and t["instances"] == 16 and t["modelled"] and t["own_buffer"], t
stalls = sum(m["dma"]["stall_cycles"] for m in d["stalled_dmas"] if m["dma"]["symbol"] == t["dma"]["symbol"])
assert t["stall_cycles"] == stalls > 0, (t["stall_cycles"], stalls)
w = t["what_if"]
assert w and t["estimate_cycles"] is None and w["cycles_before"] == d["cycles"], t
measured = base - bat
print(f"softmax: round trip at line {dl}, {t['instances']} instances, {t['stall_cycles']} stall cycles; "
      f"what-if {w['cycles_before']} -> {w['cycles_after']} saves {w['saved_cycles']}; -DBATCHED measured "
      f"{base} -> {bat} saves {measured} ({100 * (w['saved_cycles'] - measured) / measured:+.1f}%)")
assert measured > 0
assert abs(w["saved_cycles"] - measured) <= 0.03 * measured, "the what-if and the rewrite disagree by more than 3%"
iu = d["idle_units"]
assert len(iu) == 1, iu
u = iu[0]
assert u["unit"] == "vector" and u["wait"]["source"]["line"] == owl and u["op"]["source"]["line"] == el, u
assert u["what_if"] and u["what_if"]["saved_cycles"] > 0 and u["instances"] == 15, u
print(f"softmax: vector unit idle behind the output WAIT (line {owl}), {u['stall_cycles']} stall cycles; "
      f"what-if saves {u['what_if']['saved_cycles']}")
PY

# ---- a kernel without round trips: none reported
build st stream.c
record st stream
python3 - "$T/st.json" <<'PY' || fail "stream kernel"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["stalled_dmas"], "the stream kernel stalls on its DMAs"
assert d["round_trips"] == [] and d["idle_units"] == [], (d["round_trips"], d["idle_units"])
PY
grep -q "round trip\|idle behind" "$T/st.txt" && fail "the stream kernel has no round trip: $(cat "$T/st.txt")"
# ---- a planted idle unit whose move would change the result: the next
# row's exp writes the buffer the output DMA is still reading
cat >"$T/war.c" <<'EOF'
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define R 8
#define N 1024
TA_HBM_DATA static float out[R][N];
#define V_X(r) (TA_VMEM_BASE + (uint64_t)(r) * N * 4)
#define V_E V_X(R)

__attribute__((noinline)) void run(void)
{
	for (int r = 0; r < R; r++) {
		ta_vexp(V_E, V_X(r), N);
		ta_dma(ta_addr(out[r]), V_E, N * 4, 2);
		ta_wait(2, 1);
	}
}

int main(void)
{
	run();
	printf("done\n");
	return 0;
}
EOF
"$SNR" cc -g -O2 "$T/war.c" -o "$T/war.elf" 2>"$T/cc.err" || fail "snr cc war.c: $(cat "$T/cc.err")"
record war run
VEXP_LINE=$(grep -n 'ta_vexp(V_E, V_X(r), N);' "$T/war.c" | cut -d: -f1)
python3 - "$T/war.json" "$VEXP_LINE" <<'PY' || fail "planted idle unit"
import json, sys
d = json.load(open(sys.argv[1]))
line = int(sys.argv[2])
iu = d["idle_units"]
assert len(iu) == 1 and iu[0]["op"]["source"]["line"] == line, iu
c = iu[0]["conflict"]
assert c and f"war.c:{line} (run)" in c and "still reads until the WAIT" in c, c
PY

# ---- without a what-if, the figure is labelled an estimate; a round trip
# whose DMAs are not one per iteration is not modelled (the stored All-Gather window)
"$SNR" analyze suggest "$ROOT/traces/ta1-allgather-setup.snrt" --json >"$T/ag.json" 2>"$T/ag.err" || fail "suggest ag: $(cat "$T/ag.err")"
"$SNR" analyze suggest "$ROOT/traces/ta1-allgather-setup.snrt" --verify --json >"$T/agv.json" 2>"$T/ag.err" ||
  fail "suggest --verify ag: $(cat "$T/ag.err")"
python3 - "$T/ag.json" "$T/agv.json" <<'PY' || fail "estimates"
import json, sys
d, v = (json.load(open(p)) for p in sys.argv[1:3])
assert d["round_trips"], d["round_trips"]
for t in d["round_trips"] + d["idle_units"]:
    assert t["what_if"] is None and t["estimate_cycles"] == t["stall_cycles"] > 0, t
un = [t for t in v["round_trips"] if not t["modelled"]]
assert un and all(t["what_if"] is None and t["estimate_cycles"] == t["stall_cycles"] and t["reason"] for t in un), un
assert all(t["what_if"] for t in v["round_trips"] if t["modelled"]), v["round_trips"]
PY
exit 0
