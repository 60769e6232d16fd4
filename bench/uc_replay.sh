#!/bin/sh
# uc_replay.sh SNR KERNEL BENCH [KERNEL_A64]: records 140000 instructions of
# the host kernel through ptrace and runs bench_uc_replay on the trace; with
# KERNEL_A64 (the same kernel built for aarch64), records 140000 of it from
# qemu-aarch64 -g through the RSP client (under a minute: QEMU's stub
# single-steps at a few thousand instructions/s) and runs bench_uc_replay
# on that.
set -eu
T=$(mktemp -d)
QEMU=
cleanup() { [ -n "$QEMU" ] && kill "$QEMU" 2>/dev/null; rm -rf "$T"; }
trap cleanup EXIT
"$1" record --breakpoint kernels --count 140000 -o "$T/k.snrt" -- "$2" >/dev/null
"$3" "$T/k.snrt" 5
[ $# -ge 4 ] && [ -n "$4" ] || exit 0
PORT=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
qemu-aarch64 -g "$PORT" "$4" >/dev/null 2>&1 &
QEMU=$!
i=0
until "$1" record --target "tcp:127.0.0.1:$PORT" --elf "$4" --breakpoint kernels --count 140000 --isa aarch64 \
	-o "$T/a.snrt" >"$T/rec.out" 2>&1; do
	i=$((i + 1))
	grep -q refused "$T/rec.out" && [ $i -lt 100 ] || { cat "$T/rec.out"; exit 1; }
	sleep 0.05
done
wait "$QEMU"
QEMU=
echo
cat "$T/rec.out"
"$3" "$T/a.snrt" 5
