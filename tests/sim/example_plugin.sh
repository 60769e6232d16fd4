#!/usr/bin/env bash
# The example simulator plugin, loaded with `snr replay --sim PATH.so`: a
# window recorded from `snr device --gdb` replays in it and verifies (every pc
# and the end state), with one cycle per instruction, as it does in the GRM.
# The same plugin built as ABI version 1 (before the optional run()) loads
# and replays alike. A bad path, a .so without snr_sim_plugin, a plugin of an
# ABI version this snr does not load and a name that is neither built in nor
# a path each fail with a message that says which.
# usage: example_plugin.sh SNR PLUGIN.so NO_SYMBOL.so ABI99.so ABI1.so
set -u
SNR=$1; PLUGIN=$2; NOSYM=$3; ABI99=$4; ABI1=$5
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$(dirname "$0")/../rec/rec_prog.c" -o "$T/p.elf" || fail "snr cc"

. "$(dirname "$0")/../gdb_device.sh"
gdb_device "$SNR" "$T" "$T/p.elf"
"$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 20000 \
  -o "$T/w.snrt" 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
wait $DEV; DEV=""

# Replayed in the plugin: verified, 20000 instructions in 20000 cycles.
"$SNR" replay "$T/w.snrt" --sim "$PLUGIN" -o "$T/w.snrm" --json >"$T/ex.json" 2>"$T/ex.err" ||
  fail "replay in the example plugin: $(cat "$T/ex.err" "$T/ex.json")"
python3 - "$T/ex.json" <<'PY' || fail "example replay summary: $(cat "$T/ex.json")"
import json, sys
j = json.load(open(sys.argv[1]))
assert j["verified"] and j["end_state_checked"], j
assert j["instructions"] == 20000 and j["cycles"] == 20000, j
PY
[ -s "$T/w.snrm" ] || fail "no metrics file written through the plugin"
"$SNR" replay "$T/w.snrt" --sim "$ABI1" --json >"$T/ex1.json" 2>"$T/ex1.err" ||
  fail "replay in the ABI 1 build of the plugin: $(cat "$T/ex1.err" "$T/ex1.json")"
python3 - "$T/ex.json" "$T/ex1.json" <<'PY' || fail "ABI 1 replay differs: $(cat "$T/ex1.json")"
import json, sys
a, b = (json.load(open(p)) for p in sys.argv[1:])
for k in ("verified", "end_state_checked", "instructions", "cycles"):
    assert a[k] == b[k], (k, a[k], b[k])
PY
# The same trace in the GRM verifies too (same instructions, more cycles).
"$SNR" replay "$T/w.snrt" --sim ta1 >"$T/grm.txt" 2>&1 || fail "replay in the GRM: $(cat "$T/grm.txt")"
grep -q "end state matches the recording" "$T/grm.txt" || fail "GRM: $(cat "$T/grm.txt")"

expect_fail() { # what, message, snr replay args...
  local what=$1 msg=$2; shift 2
  "$SNR" replay "$T/w.snrt" "$@" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 1 ] || fail "$what: exit $rc, want 1 ($(cat "$T/err"))"
  grep -qF -- "$msg" "$T/err" || fail "$what: stderr lacks '$msg': $(cat "$T/err")"
}
expect_fail "missing plugin" "cannot load simulator plugin: $T/none.so" --sim "$T/none.so"
expect_fail "no symbol" "exports no symbol snr_sim_plugin" --sim "$NOSYM"
expect_fail "ABI mismatch" "implements simulator ABI version 99; this snr loads versions 1 to 2" --sim "$ABI99"
expect_fail "not a path" "unknown simulator 'example'" --sim example
echo "not an ELF" >"$T/junk.so"
expect_fail "not a shared object" "cannot load simulator plugin" --sim "$T/junk.so"
echo ok
