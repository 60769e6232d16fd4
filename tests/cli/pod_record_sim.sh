#!/usr/bin/env bash
# snr record --pod --method sim (docs/recording.md, "A pod"): each chip's
# window simulated in the GRM and checked against `snr device --gdb`; a chip
# whose simulation reaches a ta.wait for a peer's signal is recorded on by
# stepping from its last good checkpoint.
# - the ring all-reduce (workloads/allreduce.c) on 4 chips, and with chip 1
#   late (-DLATE): the set's manifest and every chip's trace (`trace dump
#   --json`, and `trace info --json` but for the method, the time, the
#   target's port and the method's own counts) are those --method step
#   writes; stderr names each chip and where its simulation stopped;
# - a stub that cannot put its target back (tests/rec/rsp_proxy.py --write
#   unsupported): the recording fails, exit 1, naming the chip, the
#   instruction and pc of the wait, and --method step.
# usage: pod_record_sim.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
SRC=${2:?usage: pod_record_sim.sh SNR SRCDIR}

"$SNR" cc -g "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"
"$SNR" cc -g "$SRC/workloads/allreduce.c" -DLATE=2000 -o "$T/arl.elf" || fail "snr cc allreduce -DLATE"
echo '{"ici": {"topology": "ring"}}' >"$T/ring.json"

# rec ELF METHOD OUT: records the 4-chip pod with METHOD into OUT
rec() {
  gdb_device "$SNR" "$T" "$1" --chips 4 --config "$T/ring.json"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$1" --config "$T/ring.json" --breakpoint allreduce \
    --until-return --count 10M --method "$2" -o "$3"
  expect_rc 0
  wait "$DEV" || fail "$3: the device exited $? after the recording detached: $(cat "$T/dev.err")"
  [ "$(grep -c ", 0 wrong$" "$T/dev.out")" -eq 4 ] || fail "$3: after the recording: $(cat "$T/dev.out")"
}

for elf in ar arl; do
  rec "$T/$elf.elf" step "$T/$elf.step.snrs"
  rec "$T/$elf.elf" sim "$T/$elf.sim.snrs"
  for k in 0 1 2 3; do
    grep -q "^chip $k: simulated" "$T/err" || fail "$elf: stderr does not say how chip $k was simulated: $(cat "$T/err")"
  done
  grep -q "^chip 0: simulated, and stepped from instruction 0 on .*instruction 35 at pc 0x[0-9a-f]*, .*allreduce.c:[0-9]* (ring_step) is a ta.wait" \
    "$T/err" || fail "$elf: chip 0's fall-back at its first wait is not named: $(cat "$T/err")"
  cmp "$T/$elf.step.snrs/set.json" "$T/$elf.sim.snrs/set.json" || fail "$elf: the manifests differ"
  for k in 0 1 2 3; do
    for m in step sim; do
      "$SNR" trace dump "$T/$elf.$m.snrs/window-$k.snrt" --json >"$T/$m.dump" || fail "$elf.$m: trace dump chip $k"
      "$SNR" trace info "$T/$elf.$m.snrs/window-$k.snrt" --json >"$T/$m.info" || fail "$elf.$m: trace info chip $k"
    done
    cmp -s "$T/step.dump" "$T/sim.dump" ||
      fail "$elf: chip $k's trace differs between the methods: $(diff "$T/step.dump" "$T/sim.dump" | head -4)"
    python3 - "$T/step.info" "$T/sim.info" <<'PY' || fail "$elf: chip $k's trace info differs between the methods"
import json, sys
def norm(j):
    # what says the method or the time, the device's port, and the size the method's counts take
    for k in ("method", "target", "created"):
        j["meta"].pop(k, None) if "meta" in j else None
        j.pop(k, None)
    j.pop("file_bytes", None)
    for v in list(j.values()):
        if isinstance(v, dict):
            for k in ("method", "target", "created", "seconds", "debugger_requests", "bytes_fetched", "verification"):
                v.pop(k, None)
    return j
a, b = norm(json.load(open(sys.argv[1]))), norm(json.load(open(sys.argv[2])))
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print(k, a.get(k), b.get(k), file=sys.stderr)
    sys.exit(1)
PY
  done
done

# a stub that cannot write registers or memory: the fall-back cannot put chip 0 back
gdb_device "$SNR" "$T" "$T/ar.elf" --chips 4 --config "$T/ring.json"
python3 "$SRC/tests/rec/rsp_proxy.py" --stub "$PORT" --write unsupported --log "$T/px.log" >"$T/px.out" &
PX=$!
for _ in $(seq 100); do grep -q 127.0.0.1 "$T/px.out" 2>/dev/null && break; sleep 0.05; done
PXPORT=$(cut -d: -f2 "$T/px.out")
run "$SNR" record --pod --target tcp:127.0.0.1:$PXPORT --elf "$T/ar.elf" --config "$T/ring.json" --breakpoint allreduce \
  --until-return --count 10M --method sim -o "$T/bad.snrs"
expect_rc 1
expect_err "chip 0"
expect_err "instruction 35 at pc 0x"
expect_err "allreduce.c:"
expect_err "is a ta.wait for completions another chip signals"
expect_err "--method step"
grep -q "changed [GPMX]: unsupported" "$T/px.log" || fail "the recorder never tried to put the target back: $(cat "$T/px.log")"
[ ! -e "$T/bad.snrs" ] || fail "a failed pod recording left a complete set"
kill "$DEV" "$PX" 2>/dev/null
wait "$DEV" "$PX" 2>/dev/null
exit 0
