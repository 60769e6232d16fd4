#!/usr/bin/env bash
# Re-records the stored traces from their workloads (run from the repository
# root after building): TA1 windows through `snr device --gdb`, host windows
# through ptrace and qemu-aarch64 -g. Then review and refresh the goldens on
# purpose:
#   traces/record.sh && ./build/snr check traces --update
set -euo pipefail
cd "$(dirname "$0")/.."
snr=./build/snr
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

record() { # name elf breakpoint count [device args...]
  local name=$1 elf=$2 bp=$3 count=$4
  shift 4
  rm -f "$tmp/dev.err"  # the device writes its port here; no stale port from an earlier run
  $snr device "$elf" --gdb tcp:127.0.0.1:0 --halt "$@" 2>"$tmp/dev.err" >/dev/null &
  local dev=$! port=""
  for _ in $(seq 100); do
    port=$(grep -o '127.0.0.1:[0-9]*' "$tmp/dev.err" | head -1 | cut -d: -f2 || true)
    [ -n "$port" ] && break
    sleep 0.05
  done
  $snr record --target tcp:127.0.0.1:"$port" --elf "$elf" --breakpoint "$bp" --count "$count" \
    -o "traces/$name.snrt" --kill ${record_args[@]+"${record_args[@]}"}
  wait $dev || true
}

$snr cc -O2 workloads/mlp.c -o "$tmp/mlp.elf"
record ta1-mlp-forward "$tmp/mlp.elf" forward 20000
$snr cc -O1 tests/rec/rec_prog.c -o "$tmp/rec.elf"
record ta1-rec-window "$tmp/rec.elf" window 60000

# The paper's cases (docs/cases.md): All-Gather's setup on chip 0 of 4, the
# matmul chain with late weight DMAs, and a decode step at a shorter context
# (512 positions: its window captures the KV cache, 4 MB at 4,096).
$snr cc -g workloads/allgather.c -o "$tmp/ag.elf"
record ta1-allgather-setup "$tmp/ag.elf" setup 4000 --chips 4
$snr cc -g workloads/matmul_chain.c -o "$tmp/mc.elf"
record ta1-matmul-chain "$tmp/mc.elf" chain 300
$snr cc -g -DVMEM_BYTES=524288 -DCTX=512 workloads/decode.c -o "$tmp/dec.elf"
record_args=(--skip 1 --config workloads/vmem-512k.json)
record ta1-decode-step "$tmp/dec.elf" decode_step 868 --config workloads/vmem-512k.json
unset record_args

# An x86-64 host trace, recorded with ptrace and replayed by the unicorn simulator.
cc -O1 -no-pie tests/uc/uc_kernel.c -o "$tmp/uc_kernel"
$snr record --breakpoint kernels --count 30000 --kill -o traces/x86-64-kernels.snrt -- "$tmp/uc_kernel"

# Reading the time through the vDSO: each call one step run on the target.
# (x86-64-vdso-unread.snrt, the same window by an older snr, is kept as recorded.)
cc -O2 -no-pie -Wl,-z,now tests/rec/x86_clock.c -o "$tmp/clk"
GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX,-AVX512F,-AVX512VL,-AVX512BW,-EVEX setarch -R \
  $snr record --breakpoint timed --until-return --count 100000 --kill -o traces/x86-64-vdso-call.snrt -- "$tmp/clk"

# An aarch64 host trace, recorded from qemu-aarch64 -g through the RSP client
# and replayed by the unicorn simulator's aarch64 engine.
aarch64-linux-gnu-gcc -O1 -static tests/uc/uc_kernel.c -o "$tmp/uc_kernel_a64"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
qemu-aarch64 -g "$port" "$tmp/uc_kernel_a64" >/dev/null &
qemu=$!
for _ in $(seq 100); do
  $snr record --target tcp:127.0.0.1:"$port" --elf "$tmp/uc_kernel_a64" --breakpoint kernels --count 30000 \
    --isa aarch64 --kill -o traces/aarch64-kernels.snrt 2>"$tmp/rec.err" && break
  grep -q refused "$tmp/rec.err" || { cat "$tmp/rec.err"; exit 1; }
  sleep 0.05
done
cat "$tmp/rec.err"
wait $qemu || true
