#!/usr/bin/env bash
# --method sim's checks through stubs that lack or misanswer the packets it
# uses to verify memory cheaply (tests/rec/rsp_proxy.py between snr record
# and `snr device --gdb`), on bench/analyses_prog.c's serve() loop, 300,000
# instructions (5 checkpoints, each with the bytes its stride wrote):
#   * pass: the recorder checks written memory with qCRC and takes each
#     stride's undo log from the simulation where the target's qCRC agrees
#     (the buffer serve() rewrites every stride is not read back), and
#     reads in binary (x), no hex 'm';
#   * a stub whose qCRC answers are wrong: every mismatch is read back and
#     compared byte by byte (a read of the same range after each qCRC), the
#     bytes match, and the recording goes on;
#   * a stub with neither qCRC nor x (QEMU 7.2's): qCRC is asked once, x
#     once, and everything is read in hex;
# and every trace is the one recorded without the proxy (trace_same).
# usage: record_stub_proxy.sh SNR TRACE_SAME SRCDIR
set -u
SNR=$1; SAME=$2; SRC=$3
T=$(mktemp -d); DEV=""; PX=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; [ -n "$PX" ] && kill "$PX" 2>/dev/null; [ -n "${KEEP:-}" ] || rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
command -v python3 >/dev/null || { echo "skip: python3 is not installed"; exit 77; }
. "$(dirname "$0")/../gdb_device.sh"

"$SNR" cc -O2 -DTOKENS=400 "$SRC/bench/analyses_prog.c" -o "$T/serve.elf" || fail "snr cc analyses_prog"
N=300000
record() { # OUT [proxy args...]: records through the proxy (none: directly)
  local out=$1 target; shift
  gdb_device "$SNR" "$T" "$T/serve.elf"
  target=tcp:127.0.0.1:$PORT
  if [ $# -gt 0 ]; then
    rm -f "$T/px.out"
    python3 "$(dirname "$0")/rsp_proxy.py" --stub "$PORT" --log "$T/$out.log" "$@" >"$T/px.out" &
    PX=$!
    for _ in $(seq 400); do grep -q 127.0.0.1 "$T/px.out" 2>/dev/null && break; sleep 0.05; done
    grep -q 127.0.0.1 "$T/px.out" || fail "$out: the proxy did not start"
    target=tcp:$(cat "$T/px.out")
  fi
  "$SNR" record --target "$target" --elf "$T/serve.elf" --breakpoint serve --count $N --method sim --kill \
    -o "$T/$out.snrt" 2>"$T/$out.err" || fail "$out: record: $(cat "$T/$out.err")"
  wait $DEV; DEV=""
  [ -n "$PX" ] && { wait $PX; PX=""; }
  grep -q "registers and written memory matched" "$T/$out.err" || fail "$out: not verified: $(cat "$T/$out.err")"
  [ "$out" = direct ] || "$SAME" "$T/direct.snrt" "$T/$out.snrt" >/dev/null ||
    fail "$out: the trace differs from the one recorded directly"
}

record direct
# ---- a stub that serves both
record pass --crc pass
crcs=$(grep -c '^crc ' "$T/pass.log")
[ "$crcs" -ge 5 ] || fail "pass: want the written memory checked by qCRC at each checkpoint: $crcs qCRC"
grep -q '^read m ' "$T/pass.log" && fail "pass: hex reads from a stub that reads in binary: $(grep -m3 '^read m' "$T/pass.log")"
grep -q '^read x ' "$T/pass.log" || fail "pass: no binary reads"
# serve() writes its 270 KB buffer at 0x20000000 in every stride: neither
# the check after a stride nor the undo log before it reads it back (the
# log is the simulation's bytes, checked by qCRC), at most the first
# stride's log (before the simulation knew the bytes) reads it
# snr device takes a checkpoint's qCRC requests together (one round trip)
piped=$(grep -c '^pipelined' "$T/pass.log")
[ "$piped" -ge 5 ] || fail "pass: want qCRC requests sent before the last one's reply: $piped"
big=$(grep -c '^read . 20000000,' "$T/pass.log")
[ "$big" -le 1 ] || fail "pass: the buffer at 0x20000000 was read $big times"
echo "pass: $crcs ranges checked by qCRC ($piped sent together with others); the 270 KB buffer read $big times; reads in binary"

# ---- a stub whose CRCs are wrong: each is caught and the range read
record wrong --crc wrong
changed=$(grep -c '^changed qCRC' "$T/wrong.log")
[ "$changed" -ge 5 ] || fail "wrong: want the wrong CRCs asked at each checkpoint: $changed"
# every range asked is read back before the target runs again (the
# requests of a checkpoint go out together, then the reads)
awk '/^crc /{split($2, a, ","); want[a[1]] = 1; next}
     /^read /{split($3, a, ","); delete want[a[1]]; next}
     /^run /{for (c in want) {print "not read: " c; exit 1}}
     END {for (c in want) {print "not read: " c; exit 1}}' "$T/wrong.log" ||
  fail "wrong: a range whose CRC differed was not read back before the target ran on"
echo "wrong CRCs: $changed caught, each range read back and compared; the trace is the same"

# ---- a stub with neither (QEMU 7.2's): asked once each, then hex
record plain --crc unsupported --binary unsupported
[ "$(grep -c '^crc ' "$T/plain.log")" = 1 ] || fail "plain: qCRC asked again after it was unsupported"
[ "$(grep -c '^read x ' "$T/plain.log")" -le 1 ] || fail "plain: x asked again after it was unsupported"
grep -q '^read m ' "$T/plain.log" || fail "plain: no hex reads"
echo "neither qCRC nor x: each asked once, memory read in hex; the trace is the same"
echo "ok: record through misbehaving stubs"
