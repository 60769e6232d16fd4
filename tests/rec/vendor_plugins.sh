#!/usr/bin/env bash
# snr record with a vendor's debugger backend (--debugger PATH.so) and ISA
# plugin (--isa PATH.so) from shared objects: against `snr device --gdb`,
# the window is recorded through them (each says how often it was used, and
# the trace names the backend), verifies and replays in the GRM. A plugin of
# an ABI version snr does not load, a library without the symbol and a file
# that is no library are each refused with a message that says which.
# usage: vendor_plugins.sh SNR VENDOR_DBG.so VENDOR_ISA.so VENDOR_DBG99.so SRC_DIR
set -u
SNR=$1; VDBG=$2; VISA=$3; VDBG99=$4; SRC=$5
T=$(mktemp -d); DEV=""
cleanup() { [ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$SRC/rec_prog.c" -o "$T/p.elf" || fail "snr cc"

. "$(dirname "$0")/../gdb_device.sh"
gdb_device "$SNR" "$T" "$T/p.elf"
"$SNR" record --debugger "$VDBG" --isa "$VISA" --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" \
  --breakpoint window --count 5000 -o "$T/w.snrt" 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
wait $DEV; DEV=""
grep -q "recorded 5000 instructions" "$T/rec.err" || fail "summary: $(cat "$T/rec.err")"
steps=$(sed -n 's/^vendor-rsp: \([0-9]*\) steps$/\1/p' "$T/rec.err")
[ -n "$steps" ] && [ "$steps" -ge 5000 ] || fail "the vendor backend did not do the steps: $(cat "$T/rec.err")"
queries=$(sed -n 's/^vendor-ta1: \([0-9]*\) queries$/\1/p' "$T/rec.err")
[ -n "$queries" ] && [ "$queries" -ge 5000 ] || fail "the vendor ISA answered no queries: $(cat "$T/rec.err")"
"$SNR" trace info "$T/w.snrt" >"$T/info.txt" || fail "trace info"
grep -q "^debugger *vendor-rsp" "$T/info.txt" || fail "the trace does not name the backend: $(cat "$T/info.txt")"
"$SNR" replay "$T/w.snrt" >"$T/rep.txt" 2>&1 || fail "replay: $(cat "$T/rep.txt")"
grep -q "end state matches the recording" "$T/rep.txt" || fail "replay: $(cat "$T/rep.txt")"

# A backend that reads one byte wrongly (buf[0], which window()'s loop hashes):
# --method sim computes with the lie, the target then runs the window for
# real, and the check at the window's end must catch the difference, name
# the instruction and leave the trace reading as truncated, not whole.
BUF=$(riscv64-unknown-elf-nm "$T/p.elf" | awk '$3=="buf"{print $1}')
[ -n "$BUF" ] || fail "no symbol buf in $T/p.elf"
gdb_device "$SNR" "$T" "$T/p.elf"
SNR_TEST_LIE_AT=0x$BUF "$SNR" record --debugger "$VDBG" --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" \
  --breakpoint window --count 5000 --method sim --kill -o "$T/lie.snrt" 2>"$T/lie.err"
rc=$?
wait $DEV; DEV=""
[ $rc -eq 1 ] || fail "a lying backend under --method sim: exit $rc, want 1: $(cat "$T/lie.err")"
grep -q "the target diverged from the simulation by instruction 5000" "$T/lie.err" ||
  fail "the divergence was not reported at the window's end: $(cat "$T/lie.err")"
[ -e "$T/lie.snrt" ] && fail "an unverified recording was written as a finished trace"
grep -q "lie.snrt.partial" "$T/lie.err" || fail "the failure should say where the recorded steps are: $(cat "$T/lie.err")"
"$SNR" trace verify "$T/lie.snrt.partial" >/dev/null 2>&1
[ $? -eq 3 ] || fail "the unverified trace should read as truncated"
# the same lie from a backend that can write the target's registers and
# memory back: the mismatch is found, the target put back at the last
# checkpoint and the rest stepped (which cannot tell a lie either), and the
# summary says so
rm -f "$T/lie.snrt.partial"
gdb_device "$SNR" "$T" "$T/p.elf"
SNR_TEST_LIE_AT=0x$BUF SNR_TEST_LIE_RESTORE=1 "$SNR" record --debugger "$VDBG" --target tcp:127.0.0.1:$PORT \
  --elf "$T/p.elf" --breakpoint window --count 5000 --method sim --kill -o "$T/lie2.snrt" 2>"$T/lie2.err" ||
  fail "a lying backend that restores: $(cat "$T/lie2.err")"
wait $DEV; DEV=""
grep -q "^fallback: the target did not match the simulation at the checkpoint at instruction 5000 (the target diverged" \
  "$T/lie2.err" || fail "the lie was not reported as a fallback: $(cat "$T/lie2.err")"
"$SNR" trace info "$T/lie2.snrt" | grep -q "^fallback     instructions 0 on recorded by stepping" ||
  fail "trace info shows no fallback: $("$SNR" trace info "$T/lie2.snrt")"

# The target's machine config through the backend (ABI version 8, machine_config; the vendor's inherits the rsp
# client's): a device run with half the HBM bandwidth is recorded with its config, not the built-in one, and a
# --config that differs is refused before the target runs. A backend without the entry (VENDOR_NO_CONFIG=1)
# records the built-in config as the recorder's own.
echo '{"dma": {"hbm_bytes_per_cycle": 600}}' >"$T/half.json"
echo '{"dma": {"hbm_bytes_per_cycle": 1200}}' >"$T/full.json"
config_of() { # trace -> its stored dma.hbm_bytes_per_cycle
  "$SNR" trace info "$1" --json | python3 -c "import json, sys; print(json.load(sys.stdin)['meta']['config']['dma']['hbm_bytes_per_cycle'])"
}
gdb_device "$SNR" "$T" "$T/p.elf" --config "$T/half.json"
"$SNR" record --debugger "$VDBG" --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window --count 500 \
  -o "$T/cfg.snrt" 2>"$T/cfg.err" || fail "record from a device with --config: $(cat "$T/cfg.err")"
wait $DEV; DEV=""
grep -qF "machine config: the target's (its --config $T/half.json)" "$T/cfg.err" ||
  fail "the vendor backend's recording does not say it took the target's config: $(cat "$T/cfg.err")"
[ "$(config_of "$T/cfg.snrt")" = 600 ] || fail "the trace stores hbm_bytes_per_cycle $(config_of "$T/cfg.snrt"), not the device's 600"
gdb_device "$SNR" "$T" "$T/p.elf" --config "$T/half.json"
"$SNR" record --debugger "$VDBG" --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --config "$T/full.json" \
  --breakpoint window --count 500 -o "$T/cfg2.snrt" 2>"$T/cfg2.err"
rc=$?
kill $DEV 2>/dev/null; wait $DEV 2>/dev/null; DEV=""
[ $rc -eq 1 ] || fail "a --config that differs from the target's: exit $rc, want 1: $(cat "$T/cfg2.err")"
grep -qF -- "--config $T/full.json differs from the target's machine config (its --config $T/half.json)" "$T/cfg2.err" ||
  fail "the refusal does not name both configs: $(cat "$T/cfg2.err")"
[ -e "$T/cfg2.snrt" ] && fail "a refused recording wrote a trace"
gdb_device "$SNR" "$T" "$T/p.elf" --config "$T/half.json"
VENDOR_NO_CONFIG=1 "$SNR" record --debugger "$VDBG" --target tcp:127.0.0.1:$PORT --elf "$T/p.elf" --breakpoint window \
  --count 500 -o "$T/cfg3.snrt" 2>"$T/cfg3.err" || fail "record with a backend that tells no config: $(cat "$T/cfg3.err")"
wait $DEV; DEV=""
[ "$(config_of "$T/cfg3.snrt")" = 1200 ] || fail "a backend that tells no config: the trace stores $(config_of "$T/cfg3.snrt"), not the built-in 1200"

expect_fail() { # what, message, snr record args...
  local what=$1 msg=$2; shift 2
  "$SNR" record "$@" --target tcp:127.0.0.1:1 --breakpoint window --count 10 -o "$T/x.snrt" >"$T/out" 2>"$T/err"
  local rc=$?
  [ $rc -eq 1 ] || fail "$what: exit $rc, want 1 ($(cat "$T/err"))"
  grep -qF -- "$msg" "$T/err" || fail "$what: stderr lacks '$msg': $(cat "$T/err")"
}
expect_fail "debugger ABI 99" "implements debugger ABI version 99; this snr loads versions 1 to 8" --debugger "$VDBG99"
expect_fail "no debugger symbol" "is no debugger plugin: it exports no symbol snr_dbg_plugin" --debugger "$VISA"
expect_fail "no ISA symbol" "is no ISA plugin: it exports no symbol snr_isa_plugin" --isa "$VDBG" --elf "$T/p.elf"
echo "not an ELF" >"$T/junk.so"
expect_fail "not a library" "cannot load debugger plugin" --debugger "$T/junk.so"
echo ok
