#!/usr/bin/env bash
# snr analyze suggest POD --verify (docs/analyses.md, "suggest on a pod";
# docs/cases.md, "A hand-off between chips"): on workloads/handoff.c, chip 0
# waits for a block chip 1 sends with ta_dma_notify after a stretch of its own
# work, although the block was ready before it.
# - the first move is chip 1's ta_dma_notify (its file:line, function and
#   pc), releasing chip 0's wait; no move is placed at chip 0's wait;
# - its what-if's pod cycles are the -DEARLY rewrite's, measured by
#   `snr device --timing` (each chip's ta_cycles() around exchange()), within
#   2%; every chip's pcs and end state verified in the what-if;
# - chip 0's own move (its DMA of the block above its wait for it) is refused:
#   in the what-if it reads the block before chip 1 writes it;
# - the same from the pod's metrics set (snr replay POD -o MSET); a metrics
#   set checked against the pod recording --trace names; options a pod does
#   not take are refused.
# usage: pod_suggest.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
SRC=${2:?usage: pod_suggest.sh SNR SRCDIR}
W=$SRC/workloads/handoff.c

"$SNR" cc -g "$W" -o "$T/h.elf" || fail "snr cc handoff"
"$SNR" cc -g "$W" -DEARLY -o "$T/he.elf" || fail "snr cc handoff -DEARLY"

record() { # ELF POD
  gdb_device "$SNR" "$T" "$1" --chips 2
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$1" --breakpoint exchange --until-return \
    --count 10M -o "$2"
  expect_rc 0
  wait "$DEV" || fail "the device exited $? after the pod recording detached: $(cat "$T/dev.err")"
}
record "$T/h.elf" "$T/h.snrs"

# without --verify: estimates, chip 1's DMA first
run "$SNR" analyze suggest "$T/h.snrs"
expect_rc 0
expect_out "estimates only"
head -4 "$T/out" | grep -q "^ 1\. chip 1: move the DMA at .*handoff.c:57 (send_block) pc 0x" ||
  fail "the first move is not chip 1's DMA: $(cat "$T/out")"

run "$SNR" analyze suggest "$T/h.snrs" --verify --json
expect_rc 0
cp "$T/out" "$T/v.json"
run "$SNR" analyze suggest "$T/h.snrs" --verify
expect_rc 0
cp "$T/out" "$T/v.txt"
grep -q "releases chip 0's wait at .*handoff.c:73 (exchange) pc 0x" "$T/v.txt" || fail "no release of chip 0's wait: $(cat "$T/v.txt")"

"$SNR" device "$T/he.elf" --chips 2 --timing >"$T/early.timing" || fail "snr device --timing -DEARLY"
"$SNR" device "$T/h.elf" --chips 2 --timing >"$T/plain.timing" || fail "snr device --timing"
python3 - "$T/v.json" "$T/early.timing" "$T/plain.timing" "$W" <<'EOF' || fail "the pod suggestion against the -DEARLY rewrite"
import json, re, sys
j = json.load(open(sys.argv[1]))
early, plain, src = open(sys.argv[2]).read(), open(sys.argv[3]).read(), open(sys.argv[4]).read().split("\n")
line_of = lambda text: next(i + 1 for i, l in enumerate(src) if text in l)
notify, wait0 = line_of("ta_dma_notify(ta_hbm_of"), line_of("ta_wait(F_ARRIVED")
call = [i + 1 for i, l in enumerate(src) if l.strip() == "send_block();"][1]  # the default build's call
assert j["verified"] and j["chips"] == 2 and j["metrics"] is None, j
first = j["moves"][0]
# the chip to fix: chip 1's notify, with the call in exchange() it is inlined at
assert first["chip"] == 1, first
s = first["dma"]["source"]
assert s["file"].endswith("handoff.c") and s["line"] == notify and s["function"] == "send_block", s
assert any(f["line"] == call and f["function"] == "exchange" for f in s["inlined"]), s
assert first["confirmed"] and first["end_state_verified"], first
rel = first["releases"][0]
assert rel["chip"] == 0 and rel["wait"]["source"]["line"] == wait0, rel
# nothing moves at chip 0's wait, nor is the wait itself a move
for m in j["moves"]:
    assert m["dma"]["source"]["line"] != wait0, m
# chip 0's own DMA above its wait: refused, it would read the block before chip 1 writes it
c0 = [m for m in j["moves"] if m["chip"] == 0]
assert c0 and not c0[0]["confirmed"] and c0[0]["end_state_verified"] is False, c0
assert "before chip 1's instruction" in c0[0]["reason"], c0
# confirmed moves first, by the pod's cycles saved
conf = [m["realized_cycles"] for m in j["moves"] if m["confirmed"]]
assert conf == sorted(conf, reverse=True) and conf[0] == first["realized_cycles"], j["moves"]
# the device's figures: ta_cycles() around exchange() add the caller's 5 cycles outside the window
OUTSIDE = 5
dev = lambda out: max(int(m.group(1)) for m in re.finditer(r"exchange (\d+) cycles", out)) - OUTSIDE
after, rewrite = first["cycles_after"], dev(early)
assert abs(after - rewrite) <= 0.02 * rewrite, (after, rewrite)
before, plain_dev = j["cycles_before"], dev(plain)
assert abs(before - plain_dev) <= 0.02 * plain_dev, (before, plain_dev)
assert after < 0.8 * before, (after, before)
# the rewrite computes what the original does: the same checksums on every chip
ck = lambda out: sorted(re.findall(r"chip (\d+), exchange \d+ cycles, checksum (\w+)", out))
assert ck(early) == ck(plain) and len(ck(plain)) == 2, (early, plain)
print("pod suggest: %d -> %d cycles (what-if); device: %d -> %d" % (before, after, plain_dev, rewrite), file=sys.stderr)
EOF

# from the pod's metrics set: the same moves and figures
run "$SNR" replay "$T/h.snrs" -o "$T/h.mset"
expect_rc 0
run "$SNR" analyze suggest "$T/h.mset" --verify --json
expect_rc 0
python3 - "$T/v.json" "$T/out" <<'EOF' || fail "suggest on the metrics set differs from suggest on the pod recording"
import json, sys
a, b = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
key = lambda j: [(m["chip"], m["dma"]["pc"], m["before"]["pc"], m["cycles_after"], m["confirmed"]) for m in j["moves"]]
assert key(a) == key(b) and a["cycles_before"] == b["cycles_before"], (key(a), key(b))
assert b["metrics"].endswith("h.mset"), b
EOF
# a metrics set checked against the pod recording --trace names: another program's is refused
record "$T/he.elf" "$T/he.snrs"
run "$SNR" analyze suggest "$T/h.mset" --verify --trace "$T/he.snrs"
expect_rc 1
expect_err "chip 0 was replayed from a trace"
# options the pod form does not take, and --trace without a metrics set
run "$SNR" analyze suggest "$T/h.snrs" --rounds 2
expect_rc 2
expect_err "on a pod, --rounds is not taken"
run "$SNR" analyze suggest "$T/h.snrs" --verify --trace "$T/h.snrs"
expect_rc 2
expect_err "the input is a pod recording itself"
echo ok
