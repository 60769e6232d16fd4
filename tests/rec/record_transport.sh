#!/usr/bin/env bash
# A transport failure is named as one, not blamed on the program. Through
# tests/rec/rsp_proxy.py between snr record and `snr device --gdb`, one
# reply is replaced by a failure of the exchange itself: the connection
# dropped, a bad checksum, junk that is no packet, a reply over the
# client's size limit, a bad run-length count. At the recorder's first
# memory read (its check that the ELF is the program the target runs) each
# must be reported as that failure, never as "not the program the target
# runs"; junk instead of a stop reply inside the window must be reported as
# junk from the stub, never as a target that ignored an interrupt.
# usage: record_transport.sh SNR SRCDIR
set -u
SNR=$1; SRC=$2
T=$(mktemp -d); DEV=""; PX=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; [ -n "$PX" ] && kill "$PX" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 is not installed"; exit 77; }
. "$SRC/tests/gdb_device.sh"
"$SNR" cc -O1 "$SRC/tests/rec/rec_prog.c" -o "$T/p.elf" || fail "snr cc"
# The junk cases end when no reply comes: a short reply timeout keeps them
# quick (the stub sends nothing more, so load cannot make them pass or fail).
export SNR_RSP_TIMEOUT_MS=2000

# attempt FAULT ON METHOD: records through the proxy; the recorder's stderr in $T/rec.err
attempt() {
  gdb_device "$SNR" "$T" "$T/p.elf"
  rm -f "$T/px.out"
  python3 "$SRC/tests/rec/rsp_proxy.py" --stub "$PORT" --log "$T/px.log" --fault "$1" --fault-on "$2" \
    >"$T/px.out" &
  PX=$!
  for _ in $(seq 400); do grep -q 127.0.0.1 "$T/px.out" 2>/dev/null && break; sleep 0.05; done
  grep -q 127.0.0.1 "$T/px.out" || fail "$1: the proxy did not start"
  "$SNR" record --target "tcp:$(cat "$T/px.out")" --elf "$T/p.elf" --breakpoint window --count 1000 \
    --method "$3" -o "$T/t.snrt" >/dev/null 2>"$T/rec.err"
  rc=$?
  kill "$PX" "$DEV" 2>/dev/null; wait "$PX" "$DEV" 2>/dev/null; PX=""; DEV=""
  grep -q "^fault $1" "$T/px.log" || fail "$1 on $2: the proxy never put the fault in: $(cat "$T/px.log")"
  [ $rc -eq 1 ] || fail "$1 on $2: exit $rc, want 1: $(cat "$T/rec.err")"
  [ -e "$T/t.snrt" ] && fail "$1 on $2: a trace was written"
  rm -f "$T/t.snrt.partial"
}

for f in "drop:connection\|closed" "badsum:bad checksum" "junk:bytes that are no packet (\"hello from a con" \
         "oversized:reply longer than" "badrle:bad run-length encoding"; do
  fault=${f%%:*}; want=${f#*:}
  attempt "$fault" read sim
  grep -q "reading .*'s code at 0x[0-9a-f]* (window.*) from the target failed" "$T/rec.err" ||
    fail "$fault at the first code read: not named as the code read: $(cat "$T/rec.err")"
  grep -q "$want" "$T/rec.err" || fail "$fault at the first code read: the failure is not named: $(cat "$T/rec.err")"
  grep -q "not the program the target runs" "$T/rec.err" &&
    fail "$fault at the first code read: blamed on the ELF: $(cat "$T/rec.err")"
  echo "$fault at the first code read: $(grep -o "rsp: [^(]*" "$T/rec.err" | head -1)"
done

attempt junk resume step
grep -q "bytes that are no packet (\"hello from a con" "$T/rec.err" ||
  fail "junk inside the window: not named as junk: $(cat "$T/rec.err")"
grep -q "of an interrupt" "$T/rec.err" && fail "junk inside the window: taken for an interrupt: $(cat "$T/rec.err")"
echo "junk inside the window: $(grep -o "rsp: [^(]*" "$T/rec.err" | head -1)"
echo ok
