#!/bin/sh
# uc_replay.sh SNR KERNEL BENCH: records 140000 instructions of the host
# kernel through ptrace, then runs bench_uc_replay on the trace.
set -eu
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$1" record --breakpoint kernels --count 140000 -o "$T/k.snrt" -- "$2" >/dev/null
"$3" "$T/k.snrt" 5
