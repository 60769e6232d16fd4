#!/usr/bin/env bash
# snr analyze deps and suggest on windows recorded from tests/analyze/an_prog.c
# with known answers: the exact edges of tiny(); the planted avoidable stall
# in planted() is suggested by pc and --verify realizes >= 80% of the
# prediction; the stall of truedep() (source address loaded from a descriptor
# another DMA just brought in) gets no suggestion. Also a metrics file as the
# source, --json (parsed) and --dot; --verify-max on three planted stalls.
# usage: deps_suggest.sh SNR
set -u
SNR=$1
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$(dirname "$0")/an_prog.c" -o "$T/p.elf" || fail "snr cc"

. "$(dirname "$0")/../gdb_device.sh"
record() { # FUNC COUNT OUT
  gdb_device "$SNR" "$T" "$T/p.elf"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint "$1" --count "$2" -o "$3" \
    2>"$T/rec.err" || fail "record $1: $(cat "$T/rec.err")"
  wait $DEV; DEV=""
}
record tiny 15 "$T/tiny.snrt"
record planted 1219 "$T/planted.snrt"
record truedep 1800 "$T/truedep.snrt"
record planted3 3642 "$T/planted3.snrt"
pc_of() { printf '0x%x' $((16#$(riscv64-unknown-elf-nm "$T/p.elf" | awk -v s="$1" '$3==s{print $1}') + $2)); }

# 1. deps: the edges of tiny() (indices in an_prog.c's comment).
"$SNR" analyze deps "$T/tiny.snrt" --edges >"$T/deps.txt" 2>&1 || fail "deps: $(cat "$T/deps.txt")"
for e in "1 <- 0 reg t0" "3 <- 1 reg t1" "3 <- 2 reg a1" "4 <- 3 mem core" "5 <- 4 reg t2" "5 <- 1 reg t1" \
         "9 <- 3 mem core" "9 <- 6 reg a2" "9 <- 7 reg a3" "9 <- 8 reg a4" "11 <- 9 reg flag1" \
         "11 <- 10 reg a5" "13 <- 9 mem vmem" "13 <- 12 reg a6"; do
  awk '{print $1, $2, $3, $4, $5}' "$T/deps.txt" | grep -qx "$e" || fail "deps: no edge '$e' in: $(cat "$T/deps.txt")"
done
n=$(awk '$2=="<-" && $1 ~ /^[0-9]+$/' "$T/deps.txt" | wc -l)
[ "$n" -eq 18 ] || fail "deps: expected 18 edges, got $n: $(cat "$T/deps.txt")"
# the DMA's relaxed dependency is the store that wrote its source (#3)
grep -qE '^ +1 +9 +tiny\+0x24 .*insn #3 \(store\)' "$T/deps.txt" || fail "deps: relaxed of the DMA: $(cat "$T/deps.txt")"
"$SNR" analyze deps "$T/tiny.snrt" --json --edges --dot "$T/tiny.dot" >"$T/deps.json" || fail "deps --json"
python3 - "$T/deps.json" <<'PY' || fail "deps --json content: $(cat "$T/deps.json")"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["analysis"] == "deps" and d["instructions"] == 15
assert [9, 3, "mem", "core"] in d["edges"] and [11, 9, "reg", "flag1"] in d["edges"]
m = d["dmas"][0]
assert m["issue_index"] == 9 and m["wait_index"] == 11 and m["relaxed"]["anchor"] == "insn"
assert m["relaxed"]["anchor_index"] == 3 and m["relaxed"]["position"] == 4
PY
grep -q "dma1 -> wait11" "$T/tiny.dot" || fail "dot: $(cat "$T/tiny.dot")"

# 2. suggest on the planted stall: names the DMA's pc, verify >= 80%.
DMA_PC=$(pc_of planted 0x44)
"$SNR" analyze suggest "$T/planted.snrt" --verify >"$T/sug.txt" 2>&1 || fail "suggest: $(cat "$T/sug.txt")"
grep -q "move the DMA at planted+0x44 (pc $DMA_PC) up to before planted+0x[0-9a-f]* (pc 0x[0-9a-f]*).* (1 instance)" \
  "$T/sug.txt" || fail "suggest does not name the DMA at $DMA_PC: $(cat "$T/sug.txt")"
"$SNR" analyze suggest "$T/planted.snrt" --verify --json >"$T/sug.json" || fail "suggest --json"
python3 - "$T/sug.json" "$DMA_PC" <<'PY' || fail "suggest --verify: $(cat "$T/sug.txt")"
import json, sys
d = json.load(open(sys.argv[1]))
s = [x for x in d["moves"] if x["dma"]["pc"] == int(sys.argv[2], 16)]
assert len(s) == 1, s
s = s[0]
assert s["instances"] == 1 and s["dma"]["symbol"] == "planted+0x44", s
assert s["estimate_cycles"] > 500, s
assert s["realized_cycles"] >= 0.8 * s["estimate_cycles"] and s["confirmed"] and s["reason"] is None, s
assert d["what_if_baseline_cycles"] == d["cycles"]
# the headline: the confirmed moves together
c = d["combined"]
assert c["moves"] == 1 and c["cycles_before"] == d["cycles"], c
assert c["cycles_after"] == c["cycles_before"] - c["realized_cycles"] and c["realized_cycles"] == s["realized_cycles"], c
# the per-DMA detail points at its move
per = [x for x in d["stalled_dmas"] if x["suggested"] and x["move"]["dma_pc"] == int(sys.argv[2], 16)]
assert len(per) == 1 and d["moves"][per[0]["move_index"]] == s, per
PY

# The same from a metrics file (verify finds the trace through it).
"$SNR" replay "$T/planted.snrt" -o "$T/planted.snrm" >/dev/null 2>&1 || fail "replay -o"
"$SNR" analyze suggest "$T/planted.snrm" --verify >"$T/sugm.txt" 2>&1 || fail "suggest on .snrm: $(cat "$T/sugm.txt")"
diff <(sed 1d "$T/sug.txt") <(sed 1d "$T/sugm.txt") >/dev/null || fail "trace and metrics disagree"
# The what-if stream lives in a temporary file in $TMPDIR, not in memory: where none can be made,
# --verify fails naming the folder, and the suggestions are still printed, as estimates.
TMPDIR="$T/no-such-dir" "$SNR" analyze suggest "$T/planted.snrt" --verify >"$T/sugt.txt" 2>"$T/sugt.err" &&
  fail "--verify with no temporary folder succeeded"
grep -q "cannot create the what-if stream's temporary file in $T/no-such-dir" "$T/sugt.err" ||
  fail "--verify without a temporary folder: $(cat "$T/sugt.err")"
[ "$(head -1 "$T/sugt.txt")" = "$(head -1 "$T/sug.txt")" ] || fail "no suggestions without --verify's stream: $(cat "$T/sugt.txt")"
grep -q "estimates only" "$T/sugt.txt" || fail "unverified suggestions not labelled: $(cat "$T/sugt.txt")"

# 3. A stall from a true dependency: nothing suggested.
"$SNR" analyze suggest "$T/truedep.snrt" >"$T/td.txt" 2>&1 || fail "suggest truedep: $(cat "$T/td.txt")"
grep -q "2 stalled DMAs; 0 moves in 0 places" "$T/td.txt" || fail "true dependency got a suggestion: $(cat "$T/td.txt")"
grep -q "its inputs come from a DMA just before" "$T/td.txt" || fail "truedep reason: $(cat "$T/td.txt")"
"$SNR" analyze deps "$T/truedep.snrt" >"$T/tdd.txt" || fail "deps truedep"
grep -qE '^ +2 +13 .*DMA 1 \(wait #8\)' "$T/tdd.txt" || fail "truedep relaxed dependency: $(cat "$T/tdd.txt")"

# 4. --verify-max: three planted stalls of one DMA instruction (16, 64, 32 KiB), each
#    moved to its own point (as far as its stall needs); with --verify-max 1 only the
#    move of the largest estimate (the 64 KiB one) is run, by default all three.
"$SNR" analyze suggest "$T/planted3.snrt" --verify --verify-max 1 --json >"$T/p3a.json" || fail "suggest --verify-max 1"
"$SNR" analyze suggest "$T/planted3.snrt" --verify --json >"$T/p3b.json" || fail "suggest --verify (planted3)"
python3 - "$T/p3a.json" "$T/p3b.json" <<'PY' || fail "--verify-max: $(cat "$T/p3a.json")"
import json, sys
one, every = (json.load(open(p)) for p in sys.argv[1:3])
sug = [x for x in one["stalled_dmas"] if x["suggested"]]
assert sorted(x["dma"]["bytes"] for x in sug) == [16384, 32768, 65536], sug
assert one["verify_max"] == 1 and every["verify_max"] == 16
assert len(one["moves"]) == 3, one["moves"]
ran = [m for m in one["moves"] if m["realized_cycles"] is not None]
assert len(ran) == 1 and ran[0]["estimate_cycles"] == max(m["estimate_cycles"] for m in one["moves"]), one["moves"]
big = [x for x in sug if x["dma"]["bytes"] == 65536][0]
assert one["moves"][big["move_index"]] == ran[0], (big, ran)
assert all(m["realized_cycles"] is not None for m in every["moves"])
PY
"$SNR" analyze suggest "$T/planted3.snrt" --verify-max 0 >"$T/vm0.txt" 2>&1 && fail "--verify-max 0 accepted"
grep -q -- "--verify-max needs a positive count, not '0'" "$T/vm0.txt" || fail "--verify-max 0: $(cat "$T/vm0.txt")"
# The graph with every spilled array's budget at 1 KiB (SNR_SPILL_MEM, lib/snr_spill.h): the edges,
# memory events and memory edges go through their temporary files in many sorted runs, an
# instruction's edges are found through the block index, and every output is the same.
for w in planted3 truedep; do
  "$SNR" analyze deps "$T/$w.snrt" --json --edges >"$T/d.mem.json" || fail "deps $w --json --edges"
  SNR_SPILL_MEM=1024 "$SNR" analyze deps "$T/$w.snrt" --json --edges >"$T/d.spill.json" ||
    fail "deps $w (spilled)"
  cmp -s "$T/d.mem.json" "$T/d.spill.json" || fail "deps $w --json --edges differs when spilled"
  "$SNR" analyze suggest "$T/$w.snrt" --verify --rounds 2 --json --dmas >"$T/s.mem.json" || fail "suggest $w"
  SNR_SPILL_MEM=1024 "$SNR" analyze suggest "$T/$w.snrt" --verify --rounds 2 --json --dmas >"$T/s.spill.json" ||
    fail "suggest $w (spilled)"
  cmp -s "$T/s.mem.json" "$T/s.spill.json" || fail "suggest $w --verify --rounds 2 differs when spilled"
done
SNR_SPILL_MEM=1024 TMPDIR="$T/no-such-dir" "$SNR" analyze deps "$T/planted3.snrt" >"$T/o" 2>"$T/e"
rc=$?
[ $rc = 1 ] || fail "deps without a temporary folder: exit $rc, want 1"
grep -q "temporary file in $T/no-such-dir" "$T/e" || fail "deps without a temporary folder: $(cat "$T/e")"
echo "ok: deps edges, planted stall suggested and verified, true dependency left alone, --verify-max"
