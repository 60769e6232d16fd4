#!/usr/bin/env bash
# snr analyze vmem on a chain of VMEM operations that each consume the
# previous one's output at once: a DMA brings x and weights in, the MXU
# multiplies into y, a vector op scales y in place and a DMA takes y out.
# Under the timing model's VMEM_HAZARD rule each consumer starts in the cycle
# its producer's write lands, so the analysis must order a cycle's writes
# before its reads: nothing is occupied before the first DMA lands, nothing
# is live-in, and y's pages are held from the matmul's write to the DMA out.
# usage: vmem_chain.sh SNR
set -u
SNR=$1
T=$(mktemp -d); DEV=""
trap '[ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }
cat >"$T/p.c" <<'C'
#include <stdint.h>
#include "ta1.h"
TA_HBM_DATA static float w[128 * 128], x[8 * 128];
static float out[8 * 128];
#define W (TA_VMEM_BASE)                 /* pages 0-63 */
#define X (TA_VMEM_BASE + 100 * 1024)    /* pages 100-103 */
#define Y (TA_VMEM_BASE + 200 * 1024)    /* pages 200-203 */
__attribute__((noinline)) void window(void)
{
	ta_dma(W, ta_addr(w), sizeof(w), 1);
	ta_dma(X, ta_addr(x), sizeof(x), 2);
	ta_wait(1, 1);
	ta_mxu_load(W);
	ta_wait(2, 1);
	ta_mxu_matmul(Y, X, 8, 0);
	ta_vscale(Y, Y, 2.0f, 8 * 128);
	ta_dma(ta_addr(out), Y, sizeof(out), 3);
	ta_wait(3, 1);
}
int main(void) { window(); return 0; }
C
"$SNR" cc -O1 "$T/p.c" -o "$T/p.elf" || fail "snr cc"
. "$(dirname "$0")/../gdb_device.sh"
gdb_device "$SNR" "$T" "$T/p.elf"
"$SNR" record --target tcp:127.0.0.1:"$PORT" --elf "$T/p.elf" --breakpoint window --count 40 -o "$T/a.snrt" \
  --kill 2>"$T/rec.err" || fail "record: $(cat "$T/rec.err")"
wait "$DEV"; DEV=""
"$SNR" analyze vmem "$T/a.snrt" --interval 1 --json >"$T/vmem.json" || fail "analyze vmem"
python3 - "$T/vmem.json" <<'PY' || fail "vmem occupancy"
import json, sys
v = json.load(open(sys.argv[1]))
s = v["samples"]
assert v["page_classes"]["livein"] == 0, v["page_classes"]
assert v["page_classes"]["used"] == 64 + 4 + 4, v["page_classes"]  # w, x, y: each written, then read
assert s[0]["occupied_pages"] == 0, ("occupied before anything landed", s[0])
first = next(x for x in s if x["occupied_pages"])
assert first["cycle"] > 500, ("occupied before the first DMA's base latency ended", first)
# y (pages 200-203) is held from the matmul's write to the DMA out: while only y is,
# the largest free region is pages 204-32767
only_y = [x for x in s if x["occupied_pages"] == 4 and x["largest_free_first_page"] == 204]
assert only_y, "y never held alone"
assert only_y[0]["largest_free_pages"] == 32768 - 204, only_y[0]
PY
echo "ok: a chain of VMEM producers and consumers: nothing live-in, nothing held before it is written"
