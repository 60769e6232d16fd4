#!/usr/bin/env bash
# snr record against qemu-riscv64 -g running a plain RV64 program built with
# `snr cc`: 20000 instructions from work(), recorded with --isa ta1 (QEMU
# reports riscv:rv64; TA1's own registers are optional and absent), verified,
# proved minimal and complete by check_trace, and replayed in the TA1 GRM.
# QEMU 7.2 serves 39 registers beyond 'g' only through 'p' (one round trip
# each; the recorder reads them with cheap register reads only when an
# instruction needs them, and TA1 needs only x0-x31 and pc, all in 'g'), so
# no 'p' is sent per step. Exit 77 without qemu-riscv64 or snr cc.
# QEMU tells no machine config: the summary says the trace stores the recorder's.
# usage: record_qemu.sh SNR CHECK_TRACE
set -u
SNR=$1; CHECK=$2
command -v qemu-riscv64 >/dev/null || { echo "skip: qemu-riscv64 is not installed (scripts/install-deps)"; exit 77; }
command -v riscv64-unknown-elf-gcc >/dev/null || { echo "skip: no RISC-V cross compiler for snr cc"; exit 77; }
T=$(mktemp -d); QEMU=""
cleanup() { [ -n "$QEMU" ] && kill "$QEMU" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
"$SNR" cc -O1 "$(dirname "$0")/rv_rec.c" -o "$T/rv.elf" || fail "snr cc"
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
qemu-riscv64 -g "$PORT" "$T/rv.elf" >"$T/qemu.out" 2>&1 &
QEMU=$!
ok=""
for _ in $(seq 100); do
  "$SNR" record --target tcp:127.0.0.1:$PORT --elf "$T/rv.elf" --breakpoint work --count 20000 \
    --isa ta1 -o "$T/q.snrt" 2>"$T/rec.err" && { ok=1; break; }
  grep -q "refused" "$T/rec.err" || break
  sleep 0.05
done
[ -n "$ok" ] || fail "record: $(cat "$T/rec.err")"
grep -q "recorded 20000 instructions" "$T/rec.err" || fail "summary: $(cat "$T/rec.err")"
# QEMU tells no machine config (no qXfer:snr-config): the trace stores the recorder's, and says so
grep -qF "machine config: the built-in defaults (the recorder's: the target did not tell its own)" "$T/rec.err" ||
  fail "summary's machine config: $(cat "$T/rec.err")"
wait $QEMU; QEMU=""
grep -q "^rv_rec " "$T/qemu.out" || fail "the program did not finish after the detach: $(cat "$T/qemu.out")"
"$SNR" trace verify "$T/q.snrt" || fail "verify"
"$SNR" trace info "$T/q.snrt" >"$T/info.txt"
grep -q "^isa *ta1" "$T/info.txt" || fail "isa: $(cat "$T/info.txt")"
grep -q "^debugger *rsp" "$T/info.txt" || fail "debugger: $(cat "$T/info.txt")"
"$CHECK" "$T/q.snrt" || fail "check_trace found violations"
# The window starts at work(): its first instruction is at work's address.
WORK=$(riscv64-unknown-elf-nm "$T/rv.elf" | awk '$3=="work"{print $1}')
first=$("$SNR" trace dump "$T/q.snrt" --limit 1 | awk '{print $2}')
[ $((first)) -eq $((16#$WORK)) ] || fail "first pc $first, work is at 0x$WORK"
"$SNR" trace dump "$T/q.snrt" --limit 200 | grep -q "mix" || fail "no call to mix() in the first 200 instructions"
"$SNR" replay "$T/q.snrt" >"$T/replay.txt" 2>&1 || fail "replay: $(cat "$T/replay.txt")"
grep -q "end state matches the recording" "$T/replay.txt" || fail "replay verification: $(cat "$T/replay.txt")"
grep -q "^instructions  20000" "$T/replay.txt" || fail "replayed count: $(cat "$T/replay.txt")"
echo "ok: qemu-riscv64 window of 20000 recorded, minimal and complete, replayed"
