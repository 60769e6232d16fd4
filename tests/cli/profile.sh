#!/usr/bin/env bash
# snr profile: known calls, FLOPs and HBM bytes per function, a roofline
# verdict, --json, and the program's own output kept off stdout.
. "$(dirname "$0")/lib.sh"
cc_ta1 prof <<'C'
#include <stdio.h>
#include "ta1.h"
TA_HBM_DATA static float w[128 * 128];
__attribute__((noinline)) void mm(int rows) {
	ta_dma(TA_VMEM_BASE, ta_addr(w), sizeof(w), 0);   /* 65536 HBM bytes */
	ta_wait(0, 1);
	ta_mxu_load(TA_VMEM_BASE);
	ta_mxu_matmul(TA_VMEM_BASE + 0x20000, TA_VMEM_BASE + 0x10000, rows, 0);
}
__attribute__((noinline)) void vec(void) { ta_vadd(TA_VMEM_BASE, TA_VMEM_BASE, TA_VMEM_BASE, 1000); }
int main(void) {
	for (int i = 0; i < 3; i++) mm(64);
	vec(); vec();
	printf("done\n");
	return 0;
}
C
run "$SNR" profile "$T/prof.elf" --json
expect_rc 0
grep -q '^done' "$T/out" && fail "the program's output went to stdout"
python3 - "$T/out" <<'PY' || fail "profile figures"
import json, sys
p = json.load(open(sys.argv[1]))
f = {r["function"]: r for r in p["functions"]}
mm, vec = f["mm"], f["vec"]
assert mm["calls"] == 3, mm
assert mm["flops"] == 3 * 2 * 64 * 128 * 128, mm
assert mm["hbm_bytes"] == 3 * 65536, mm
assert mm["roofline"] == "compute" and 0 < mm["attained"] <= 1, mm
assert vec["calls"] == 2 and vec["flops"] == 2000 and vec["hbm_bytes"] == 0, vec
assert mm["total_cycles"] >= mm["self_cycles"] > 0
# per call: the same instructions each time; mm waits for its DMA (500 base latency + 55
# transfer, less the cycles between its ISSUE and WAIT) every call
ipc = mm["instructions_per_call"]
assert ipc["min"] == ipc["median"] == ipc["max"] > 5 and ipc["returns"] == 3, ipc
st = mm["stall_cycles"]
assert set(st) == {"dma_base", "dma_transfer", "vmem_hazard", "mxu_busy", "vector_busy", "register", "branch",
                  "peer"}, st
assert st["peer"] == 0, st
assert 3 * 490 <= st["dma_base"] <= 3 * 500 and st["dma_transfer"] == 3 * 55, st
assert mm["cycles"] == mm["total_cycles"] and sum(st.values()) <= mm["cycles"], mm
assert mm["bound"] == "dma" and mm["roofline"] == "compute", mm
assert f["main"]["instructions_per_call"]["returns"] == 1
PY
run "$SNR" profile "$T/prof.elf"
expect_rc 0; expect_out "function"; expect_out "ridge"; expect_out "insns/call"
run "$SNR" profile
expect_rc 2
echo ok
