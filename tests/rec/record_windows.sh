#!/usr/bin/env bash
# snr record --windows K --every N: several windows of one run into a trace
# set, on the decode workload's serving loop (workloads/decode.c -DSERVE:
# prefill chunks, then decode steps) from `snr device --gdb`. Each window of
# a set is the same trace (trace_same: pcs, captured registers and bytes,
# digest) as recording that window alone with --skip, with --method sim and
# --method step; a window that runs past the next window's hit is refused; an
# existing set is never written over; a recorder killed after its first
# window leaves SET.partial with that window whole and a manifest marked
# incomplete.
# usage: record_windows.sh SNR TRACE_SAME SRCDIR
set -u
SNR=$1; SAME=$2; SRC=$3
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

. "$(dirname "$0")/../gdb_device.sh"

"$SNR" cc -O2 -DSERVE -DCTX=1024 "$SRC/workloads/decode.c" -o "$T/serve.elf" || fail "snr cc decode -DSERVE"

rec() { # OUT ARGS...: one recording from a fresh device
  local out=$1; shift
  gdb_device "$SNR" "$T" "$T/serve.elf"
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/serve.elf" --kill -o "$out" "$@" 2>"$out.err"
  local rc=$?
  # refused before the target ran: the device is left halted for the next debugger
  if [ $rc -ne 0 ] && grep -q "the target was not continued: snr left it halted" "$out.err"; then
    kill -0 "$DEV" 2>/dev/null || fail "the device ended though the recorder left it halted: $(cat "$out.err")"
    kill "$DEV"
  fi
  wait $DEV; DEV=""
  return $rc
}

hits() { # SET: the breakpoint hit of each window, from the manifest
  python3 -c 'import json,sys; print(" ".join(str(w["hit"]) for w in json.load(open(sys.argv[1]+"/set.json"))["windows"]))' "$1"
}

check_alone() { # SET BREAKPOINT ARGS...: every window against recording it alone
  local set=$1 bp=$2; shift 2
  local k=0
  for h in $(hits "$set"); do
    rec "$T/alone.snrt" --breakpoint "$bp" --skip $((h - 1)) "$@" || fail "alone at hit $h: $(cat "$T/alone.snrt.err")"
    "$SAME" "$set/window-$k.snrt" "$T/alone.snrt" || fail "$set window $k differs from recording hit $h alone"
    rm -f "$T/alone.snrt"
    k=$((k + 1))
  done
  [ "$k" -gt 0 ] || fail "$set: no windows"
}

# decode: every second step from the second (the first makes the VMEM plan)
rec "$T/decode.snrs" --breakpoint decode_step --skip 1 --windows 3 --every 2 --count 1000 --method sim ||
  fail "decode set: $(cat "$T/decode.snrs.err")"
[ "$(hits "$T/decode.snrs")" = "2 4 6" ] || fail "decode set hits: $(hits "$T/decode.snrs")"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["complete"] is True and m["windows_requested"]==3, m' \
  "$T/decode.snrs/set.json" || fail "decode manifest"
grep -q "^window 2:" "$T/decode.snrs.err" && grep -q "^trace set .*decode.snrs: 3 windows" "$T/decode.snrs.err" ||
  fail "summary: $(cat "$T/decode.snrs.err")"
check_alone "$T/decode.snrs" decode_step --count 1000 --method sim
echo "decode: 3 windows (hits 2 4 6) by sim, each the same trace as recorded alone"

# prefill: each chunk to its return, by stepping; the windows are whole calls
rec "$T/prefill.snrs" --breakpoint prefill_chunk --windows 3 --until-return --count 5000 --method step ||
  fail "prefill set: $(cat "$T/prefill.snrs.err")"
[ "$(hits "$T/prefill.snrs")" = "1 2 3" ] || fail "prefill set hits: $(hits "$T/prefill.snrs")"
grep -c "ended by the function's return" "$T/prefill.snrs.err" | grep -qx 3 || fail "prefill windows: $(cat "$T/prefill.snrs.err")"
check_alone "$T/prefill.snrs" prefill_chunk --until-return --count 5000 --method step
echo "prefill: 3 windows (hits 1 2 3) by step, each the same trace as recorded alone"

# a window that passes later hits: with --every 3 the next starts after them
rec "$T/span.snrs" --breakpoint prefill_chunk --windows 2 --every 3 --count 250 || fail "span set: $(cat "$T/span.snrs.err")"
check_alone "$T/span.snrs" prefill_chunk --count 250
rec "$T/over.snrs" --breakpoint prefill_chunk --windows 2 --count 300 && fail "an overlapping window was not refused"
grep -q "would start inside it" "$T/over.snrs.err" || fail "overlap message: $(cat "$T/over.snrs.err")"
[ -f "$T/over.snrs.partial/window-0.snrt" ] || fail "the finished window of a failed set is gone"
echo "windows passing later hits: counted (the same traces as alone), an overlap refused naming it"

# an existing set is kept
rec "$T/decode.snrs" --breakpoint decode_step --windows 1 --count 100 && fail "an existing set was written over"
grep -q "exists" "$T/decode.snrs.err" || fail "existing set: $(cat "$T/decode.snrs.err")"
[ "$(hits "$T/decode.snrs")" = "2 4 6" ] || fail "the existing set changed"

# killed after its first window: SET.partial keeps it whole
gdb_device "$SNR" "$T" "$T/serve.elf"
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/serve.elf" --breakpoint decode_step --skip 1 --windows 6 \
  --count 1200 --method step --kill -o "$T/killed.snrs" 2>"$T/killed.err" &
RP=$!
for _ in $(seq 600); do
  grep -q '"window-0.snrt"' "$T/killed.snrs.partial/set.json" 2>/dev/null && break
  sleep 0.05
done
kill -9 $RP; wait $RP 2>/dev/null
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null; DEV=""
[ -d "$T/killed.snrs" ] && fail "a killed set was renamed into place"
python3 -c 'import json,sys; m=json.load(open(sys.argv[1])); assert m["complete"] is False and len(m["windows"])>=1, m' \
  "$T/killed.snrs.partial/set.json" || fail "killed manifest: $(cat "$T/killed.snrs.partial/set.json")"
"$SNR" replay "$T/killed.snrs.partial/window-0.snrt" | grep -q "end state matches" || fail "the killed set's first window"
echo "killed after window 0: killed.snrs.partial holds it whole, the manifest says incomplete"
# x86-64 host code through ptrace (a launched program calling work() forever;
# --method sim runs each window in unicorn): the same traces by sim, by step,
# and alone
NOAVX=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX
if [ "$(uname -m)" = x86_64 ] && command -v setarch >/dev/null && setarch -R true 2>/dev/null &&
  cc -O1 -no-pie -Wl,-z,now "$SRC/tests/rec/x86_rec.c" -o "$T/x86" 2>/dev/null; then
  host() { # OUT ARGS...
    local out=$1; shift
    GLIBC_TUNABLES=$NOAVX setarch -R "$SNR" record --breakpoint work --count 2000 --kill -o "$out" "$@" \
      -- "$T/x86" loop >/dev/null 2>"$out.err" || fail "x86-64 $out: $(cat "$out.err")"
  }
  host "$T/x86.sim.snrs" --windows 3 --every 2 --method sim
  host "$T/x86.step.snrs" --windows 3 --every 2 --method step
  host "$T/x86.alone.snrt" --skip 2
  for k in 0 1 2; do
    "$SAME" "$T/x86.sim.snrs/window-$k.snrt" "$T/x86.step.snrs/window-$k.snrt" || fail "x86-64 window $k: sim and step differ"
  done
  "$SAME" "$T/x86.sim.snrs/window-1.snrt" "$T/x86.alone.snrt" || fail "x86-64 window 1 differs from hit 3 alone"
  "$SNR" replay "$T/x86.sim.snrs" | grep -q "end state matched the recording in 3" || fail "x86-64 set replay"
  echo "x86-64 (ptrace): 3 windows, the same traces by sim, by step and alone, replayed verified"
fi
echo "ok"
