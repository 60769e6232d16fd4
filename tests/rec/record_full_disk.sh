#!/usr/bin/env bash
# A full disk at the recorder's final write loses nothing. The recorder
# writes the trace alongside its journal; when the trace's write fails it
# drops it (freeing its space), writes the window's end (DIGEST, END) into
# the journal and compacts that, so when that write fails too the journal
# is a whole trace still: `snr trace verify` passes on it, and `snr trace
# finish` writes the trace the recorder would have written once there is
# room. The roomy recording's trace is the one written alongside, the
# finished one the journal's compaction: the two must have the same bytes.
# Tested on a real full disk: a small tmpfs (root only: exits 77 otherwise)
# holding a filler file, its size searched so that the journal and its end
# fit and the trace does not. Then: the recorder fails naming the journal,
# which verifies and replays against its end state; `snr trace finish`
# refuses to write over an existing file and succeeds once the filler is
# gone; the trace verifies, replays with its end state matched, and has the
# bytes of the same window recorded on a roomy disk (trace_bytes_same.py:
# every chunk but META's time and END's seconds and request counts). A
# journal without its end (a recorder killed) is refused with exit 3.
# usage: record_full_disk.sh SNR
set -u
SNR=$1
HERE=$(cd "$(dirname "$0")" && pwd)
[ "$(id -u)" -eq 0 ] || { echo "SKIP: mounting a tmpfs needs root"; exit 77; }
T=$(mktemp -d); DEV=""; MNT=$T/mnt
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; mountpoint -q "$MNT" && umount "$MNT"; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
mkdir "$MNT"
mount -t tmpfs -o size=2m tmpfs "$MNT" 2>/dev/null || { echo "SKIP: cannot mount a tmpfs here"; exit 77; }
"$SNR" cc -O1 "$HERE/rec_prog.c" -o "$T/p.elf" || fail "snr cc"

start_device() {
  rm -f "$T/dev.err"
  "$SNR" device "$T/p.elf" --gdb tcp:127.0.0.1:0 --halt 2>"$T/dev.err" >"$T/dev.out" &
  DEV=$!
  for _ in $(seq 400); do
    PORT=$(grep -o '127.0.0.1:[0-9]*' "$T/dev.err" | head -1 | cut -d: -f2)
    [ -n "$PORT" ] && return 0
    sleep 0.05
  done
  fail "device did not start: $(cat "$T/dev.err")"
}
# record OUT: the window into OUT; $rc its exit status
record() {
  start_device
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 30000 \
    --method step --kill -o "$1" >"$T/rec.out" 2>"$T/rec.err"
  rc=$?
  wait "$DEV" 2>/dev/null; DEV=""
}

record "$T/roomy.snrt"
[ $rc -eq 0 ] || fail "the recording on a roomy disk: $(cat "$T/rec.err")"

# The filler's size: more than this, the journal's end does not fit; less,
# the trace does. Searched in 4 KiB pages.
lo=0; hi=$((2048 / 4)); found=""
while [ $lo -le $hi ]; do
  mid=$(((lo + hi) / 2))
  rm -f "$MNT"/*.snrt* "$MNT"/.*.snrt.* "$MNT/filler"
  head -c $((mid * 4096)) /dev/zero >"$MNT/filler" 2>/dev/null
  record "$MNT/t.snrt"
  if [ $rc -eq 0 ]; then
    lo=$((mid + 1))  # everything fit
  elif "$SNR" trace verify "$MNT/t.snrt.partial" >/dev/null 2>&1; then
    found=$mid; break  # the journal is whole, the trace did not fit
  else
    hi=$((mid - 1))  # the journal's end did not fit either
  fi
done
[ -n "$found" ] || fail "no filler size made only the trace's write fail (search ended at $lo..$hi)"
echo "filler of $((found * 4)) KiB: the trace's write failed, the journal holds the window's end"
grep -q "No space left on device" "$T/rec.err" || fail "the error does not name the full disk: $(cat "$T/rec.err")"
grep -q "snr trace finish $MNT/t.snrt.partial" "$T/rec.err" || fail "the error does not say how to finish: $(cat "$T/rec.err")"
[ -e "$MNT/t.snrt" ] && fail "a trace was left at the output path"
ls -A "$MNT" | grep -q '^\.' && fail "a temporary file was left behind: $(ls -A "$MNT")"
"$SNR" trace verify "$MNT/t.snrt.partial" | grep -q ": ok: 30000 instructions, ended by count" ||
  fail "trace verify on the journal: $("$SNR" trace verify "$MNT/t.snrt.partial" 2>&1)"
"$SNR" replay "$MNT/t.snrt.partial" >"$T/rp.txt" 2>&1 || fail "replay of the journal: $(cat "$T/rp.txt")"
grep -q "end state matches the recording" "$T/rp.txt" || fail "the journal's replay: $(cat "$T/rp.txt")"

cp "$MNT/t.snrt.partial" "$T/j.partial"
# Still no room: refused, the journal kept. An existing output: refused
# without --force.
"$SNR" trace finish "$MNT/t.snrt.partial" >"$T/fin.txt" 2>&1 && fail "finish on a full disk succeeded"
[ -e "$MNT/t.snrt.partial" ] || fail "a failed finish removed the journal"
rm -f "$MNT/filler"
echo old >"$MNT/t.snrt"
"$SNR" trace finish "$MNT/t.snrt.partial" >"$T/fin.txt" 2>&1 && fail "finish replaced an existing file"
grep -q "exists" "$T/fin.txt" || fail "finish over an existing file: $(cat "$T/fin.txt")"
[ "$(cat "$MNT/t.snrt")" = old ] || fail "the existing file changed"
"$SNR" trace finish "$MNT/t.snrt.partial" --force >"$T/fin.txt" 2>&1 || fail "finish: $(cat "$T/fin.txt")"
grep -q "30000 instructions" "$T/fin.txt" || fail "finish: $(cat "$T/fin.txt")"
[ -e "$MNT/t.snrt.partial" ] && fail "finish left the journal"
"$SNR" trace verify "$MNT/t.snrt" >/dev/null || fail "trace verify on the finished trace"
"$SNR" replay "$MNT/t.snrt" >"$T/rp.txt" 2>&1 || fail "replay of the finished trace: $(cat "$T/rp.txt")"
grep -q "end state matches the recording" "$T/rp.txt" || fail "the finished trace's replay: $(cat "$T/rp.txt")"
python3 "$HERE/trace_bytes_same.py" "$T/roomy.snrt" "$MNT/t.snrt" || fail "the finished trace differs from the roomy one"

# A journal without its end (cut inside its END, as a recorder killed while
# writing it would leave): refused with exit 3, kept.
size=$(stat -c %s "$T/j.partial")
head -c $((size - 10)) "$T/j.partial" >"$T/cut.snrt.partial"
"$SNR" trace finish "$T/cut.snrt.partial" >"$T/fin.txt" 2>&1; rc=$?
[ $rc -eq 3 ] || fail "finish of a journal without its end: exit $rc: $(cat "$T/fin.txt")"
grep -q "30000 instructions but not the window's end" "$T/fin.txt" || fail "finish without an end: $(cat "$T/fin.txt")"
[ -e "$T/cut.snrt" ] && fail "finish without an end wrote a trace"
[ -e "$T/cut.snrt.partial" ] || fail "finish without an end removed the journal"
echo "ok"
