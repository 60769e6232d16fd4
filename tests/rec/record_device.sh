#!/usr/bin/env bash
# snr record against `snr device --gdb`: 100k instructions recorded and
# proved minimal and complete (check_trace), the window's special cases,
# a breakpoint never hit, a program ending inside the window, and a
# recorder killed with SIGKILL leaving a truncated, replayable trace.
# Each trace is then replayed in the TA1 GRM: verified pc by pc and against
# the end-state digest; one changed captured byte makes it diverge, naming
# the instruction.
# usage: record_device.sh SNR CHECK_TRACE TRACE_PATCH
set -u
SNR=$1; CHECK=$2; PATCH=$3
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$(dirname "$0")/rec_prog.c" -o "$T/p.elf" || fail "snr cc"

start_device() { # extra args...
  rm -f "$T/dev.err"  # the device writes its port here; no stale port from an earlier run
  "$SNR" device "$T/p.elf" --gdb tcp:127.0.0.1:0 --halt "$@" 2>"$T/dev.err" >"$T/dev.out" &
  DEV=$!
  for _ in $(seq 100); do
    PORT=$(grep -o '127.0.0.1:[0-9]*' "$T/dev.err" | head -1 | cut -d: -f2)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  fail "device did not start: $(cat "$T/dev.err")"
}

# 1. 100k instructions from window(): minimal and complete.
start_device
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 100000 \
  -o "$T/a.snrt" 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
grep -q "recorded 100000 instructions" "$T/rec.err" || fail "summary: $(cat "$T/rec.err")"
wait $DEV; DEV=""
grep -q "^rec_prog " "$T/dev.out" || fail "the program did not finish after the recorder detached"
"$SNR" trace verify "$T/a.snrt" || fail "verify"
"$CHECK" "$T/a.snrt" || fail "check_trace found violations"

"$SNR" replay "$T/a.snrt" -o "$T/a.snrm" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"
grep -q "end state matches the recording" "$T/replay.txt" || fail "replay verification: $(cat "$T/replay.txt")"
grep -q "DMAs          1 (64 bytes)" "$T/replay.txt" || fail "replay should count the window's DMA: $(cat "$T/replay.txt")"

# One captured byte changed (buf[1] = 3, captured at the DMA): the replay
# diverges and names an instruction.
"$PATCH" "$T/a.snrt" "$T/bad.snrt" 0003060909 1 0x40 2>/dev/null ||
  "$PATCH" "$T/a.snrt" "$T/bad.snrt" 000306090c0f1215 1 0x40 || fail "trace_patch"
"$SNR" trace verify "$T/bad.snrt" >/dev/null || fail "the patched trace should still be intact"
"$SNR" replay "$T/bad.snrt" >"$T/bad.txt" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "replay of a changed capture: exit $rc: $(cat "$T/bad.txt")"
grep -q "instruction [0-9]" "$T/bad.txt" || fail "divergence report names no instruction: $(cat "$T/bad.txt")"

# The wait on flag 5 inside the window: flag5 was captured (value 1) before it.
"$SNR" trace dump "$T/a.snrt" --limit 40 >"$T/dump.txt"
grep -m1 "ta.wait" "$T/dump.txt" | grep -q "flag5=0x0000000000000001" ||
  fail "the pre-window DMA's completion (flag5) was not captured at the wait: $(grep -m1 ta.wait "$T/dump.txt")"
# The 64-byte DMA of buf reads buf, of which bytes 8..11 were written in the
# window: exactly 60 bytes captured, as [buf, buf+8) and [buf+12, buf+64).
BUF=$(riscv64-unknown-elf-nm "$T/p.elf" | awk '$3=="buf"{print $1}')
dma=$(grep "ta.dma " "$T/dump.txt" | head -1)
want1=$(printf 'mem[%#x+8]' $((16#$BUF)))
want2=$(printf 'mem[%#x+52]' $((16#$BUF + 12)))
echo "$dma" | grep -qF "$want1" && echo "$dma" | grep -qF "$want2" ||
  fail "partly written buffer: want $want1 and $want2 captured at the DMA, got: $dma"

# 2. A breakpoint never hit: a timeout that says so.
start_device
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint never_called --count 10 \
  --timeout 2 -o "$T/b.snrt" 2>"$T/rec.err"
rc=$?
[ $rc -eq 1 ] || fail "never-hit breakpoint: exit $rc"
grep -q "not hit within 2 s\|before reaching breakpoint" "$T/rec.err" || fail "never-hit message: $(cat "$T/rec.err")"
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null; DEV=""

# 3. The program ends inside the window: the trace ends there, marked.
start_device
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 5000000 \
  -o "$T/c.snrt" 2>"$T/rec.err" || fail "record to the end: $(cat "$T/rec.err")"
wait $DEV; DEV=""
"$SNR" trace info "$T/c.snrt" >"$T/info.txt"
grep -q "ended by     exited" "$T/info.txt" || fail "program end not marked: $(cat "$T/info.txt")"
"$SNR" trace verify "$T/c.snrt" || fail "verify of an exited trace"
"$CHECK" "$T/c.snrt" || fail "check_trace on the exited trace"
"$SNR" replay "$T/c.snrt" >"$T/replay.txt" 2>&1 || fail "replay of the exited trace: $(cat "$T/replay.txt")"
grep -q "the program ended inside the window" "$T/replay.txt" || fail "exit not seen in replay: $(cat "$T/replay.txt")"

# 4. SIGKILL part-way: the journal (d.snrt.partial) is a truncated trace,
# readable up to k; d.snrt itself is never written. (record_kill.sh checks
# k against the device's instret, and kills under --method sim, which runs
# this whole window in well under a second.)
start_device
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 5000000 \
  --method step -o "$T/d.snrt" 2>/dev/null &
REC=$!
# kill it once at least one step is on disk
for _ in $(seq 600); do
  sleep 0.1
  k=$("$SNR" trace verify "$T/d.snrt.partial" 2>/dev/null | sed -n 's/.*truncated at instruction \([0-9]*\).*/\1/p')
  [ -n "$k" ] && [ "$k" -gt 0 ] && break
done
kill -9 $REC; wait $REC 2>/dev/null
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null; DEV=""
[ -e "$T/d.snrt" ] && fail "a killed recording wrote d.snrt"
"$SNR" trace verify "$T/d.snrt.partial" >"$T/ver.txt"
rc=$?
[ $rc -eq 3 ] || fail "verify of a killed recording: exit $rc: $(cat "$T/ver.txt")"
k=$(sed -n 's/.*truncated at instruction \([0-9]*\).*/\1/p' "$T/ver.txt")
[ -n "$k" ] && [ "$k" -gt 0 ] || fail "no instruction count in: $(cat "$T/ver.txt")"
"$CHECK" "$T/d.snrt.partial" || fail "check_trace on the truncated trace"
"$SNR" replay "$T/d.snrt.partial" >"$T/replay.txt" 2>&1
rc=$?
[ $rc -eq 3 ] || fail "replay of a truncated trace without --allow-truncated: exit $rc: $(cat "$T/replay.txt")"
grep -q "holds $k of the 5000000 instructions asked for" "$T/replay.txt" ||
  fail "the refusal should say how much the trace holds: $(cat "$T/replay.txt")"
"$SNR" replay "$T/d.snrt.partial" --allow-truncated >"$T/replay.txt" 2>&1 ||
  fail "replay of the truncated trace: $(cat "$T/replay.txt")"
grep -q "^instructions  $k (the trace is truncated" "$T/replay.txt" || fail "truncated replay: $(cat "$T/replay.txt")"
# a second recording to the same path refuses to overwrite the journal
start_device
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 10 \
  -o "$T/d.snrt" 2>"$T/rec.err"
rc=$?
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null; DEV=""
[ $rc -eq 1 ] && grep -q "d.snrt.partial: exists already" "$T/rec.err" ||
  fail "recording over a killed recording's journal: exit $rc: $(cat "$T/rec.err")"
echo "ok: 100k minimal and complete; truncated trace holds $k instructions"
