#!/usr/bin/env bash
# On/off-device on a real GPU through CUPTI, for a machine with CUDA (nvcc),
# a GPU and root: builds bench/cupti_overlap.cu (kernels on one stream,
# 64 MiB copies on another, overlapping), records it with
# `snr host record` (libsnr_cupti.so injected), and prints what
# `snr host report` makes of it: the split of each GPU's window (compute
# only, transfer only, both, queued, idle), the active ratio, the host
# waits linked to the work that ended them, and, as the reference, the
# kernel and copy times the program measured itself with CUDA events. The
# machine snr is developed on has no GPU, so this path has only run on
# synthetic activity buffers there (runtime/cupti/test_cupti_ondev.c).
#
# libcudart is linked shared (-cudart shared) so that the uprobe presets on
# cudaDeviceSynchronize (H:WAIT_DEV) and cudaLaunchKernel attach.
#
# usage: sudo bench/cupti_gpu_check.sh SNR [ROUNDS [SPIN_ITERS]]
#   e.g. sudo bench/cupti_gpu_check.sh build/snr 10 2000
set -u
SNR=${1:?usage: cupti_gpu_check.sh SNR [ROUNDS [SPIN_ITERS]]}
ROUNDS=${2:-10}
ITERS=${3:-2000}
HERE=$(cd "$(dirname "$0")" && pwd)
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
die() { echo "cupti_gpu_check: $*" >&2; exit 1; }
[ "$(id -u)" -eq 0 ] || die "needs root (snr host record loads eBPF programs)"
[ -x "$NVCC" ] || die "no nvcc (set NVCC=/path/to/nvcc)"
command -v nvidia-smi >/dev/null && nvidia-smi -L >/dev/null 2>&1 || die "no GPU (nvidia-smi -L fails)"
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
"$NVCC" -O2 -lineinfo -cudart shared -o "$T/cupti_overlap" "$HERE/cupti_overlap.cu" || die "nvcc failed"
echo "== $(nvidia-smi -L | head -1); load: $(uptime | sed 's/.*load/load/')"
"$SNR" host record -o "$T/gpu.snrh" -- "$T/cupti_overlap" "$ROUNDS" "$ITERS" >"$T/out" 2>"$T/err" ||
  die "snr host record failed: $(cat "$T/err")"
cat "$T/out"
grep -q "CUPTI records" "$T/err" && grep "CUPTI records" "$T/err"
"$SNR" host report "$T/gpu.snrh" >"$T/report" || die "snr host report failed"
grep "^CUPTI" "$T/report" || die "no CUPTI file was merged: is libsnr_cupti.so built (CUDA toolkit under -Dcupti_prefix)?"
sed -n '/^on\/off-device/,/^$/p' "$T/report"
"$SNR" host report "$T/gpu.snrh" --json >"$T/report.json" || die "snr host report --json failed"
python3 - "$T/report.json" "$T/out" <<'PY'
import json, re, sys
rep = json.load(open(sys.argv[1]))['on_off_device']
m = re.search(r'kernels ([0-9.]+) ms, copies ([0-9.]+) ms', open(sys.argv[2]).read())
ev_kernel, ev_copy = (float(m.group(1)), float(m.group(2))) if m else (None, None)
for d in rep['devices']:
    if d['source'] != 'CUPTI':
        continue
    ms = lambda k: d[k] / 1e6
    print('%s: window %.3f ms; on-device %.3f ms = compute only %.3f + transfer only %.3f + both %.3f; '
          'queued %.3f; idle %.3f; active %.1f%%' % (d['device'], ms('window_ns'), ms('on_device_ns'),
          ms('compute_only_ns'), ms('transfer_only_ns'), ms('both_ns'), ms('queued_ns'), ms('idle_ns'),
          100 * d['active_ratio']))
    print('  sums over the records: kernels %.3f ms, copies and memsets %.3f ms' %
          (ms('compute_sum_ns'), ms('transfer_sum_ns')))
    if ev_kernel is not None:
        print('  the program\'s CUDA events: kernels %.3f ms (ratio CUPTI/events %.3f), copies %.3f ms '
              '(the memsets are not in it)' % (ev_kernel, ms('compute_sum_ns') / ev_kernel if ev_kernel else 0,
              ev_copy))
    if d['both_ns'] == 0:
        print('  note: no kernel overlapped a copy on this GPU (copy engines busy, or the copies were not async)')
hw = rep['host_waits']
print('host waits: %d, %.3f ms; %d ended by device work (%.3f ms, %.3f ms of wake-up)' %
      (hw['count'], hw['ns'] / 1e6, hw['linked'], hw['linked_ns'] / 1e6, hw['wake_ns'] / 1e6))
PY
