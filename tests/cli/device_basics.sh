#!/usr/bin/env bash
# snr device: output and exit code pass through, chip id/count, --stats,
# --limit, and clear errors on bad input.
. "$(dirname "$0")/lib.sh"

cc_ta1 hello <<'C'
#include <stdio.h>
#include "ta1.h"
int main(void) {
	printf("chip %d of %d\n", (int)ta_chip_id(), (int)ta_num_chips());
	return 7;
}
C
run "$SNR" device "$T/hello.elf"
expect_rc 7; expect_out "chip 0 of 1"
run "$SNR" device "$T/hello.elf" --chips 3
expect_rc 7; expect_out "chip 0 of 3"; expect_out "chip 2 of 3"
[ "$(grep -c '^chip ' "$T/out")" -eq 3 ] || fail "want one line per chip"
run "$SNR" device "$T/hello.elf" --stats
expect_rc 7; expect_err "instructions"; expect_err "dma-issue"

cc_ta1 spin <<'C'
int main(void) { volatile int x = 0; for (;;) x++; }
C
run "$SNR" device "$T/spin.elf" --limit 100000
expect_rc 3; expect_err "reached --limit 100000"

# Scalar access to VMEM faults, naming the memory and the instruction.
cc_ta1 vload <<'C'
#include "ta1.h"
int main(void) { return *(volatile int *)(uintptr_t)TA_VMEM_BASE; }
C
run "$SNR" device "$T/vload.elf"
expect_rc 3; expect_err "scalar load of 4 bytes at 0x20000000 in VMEM"; expect_err "<main+"

# A DMA wait that can never be satisfied is reported, not hung.
cc_ta1 wait <<'C'
#include "ta1.h"
int main(void) { ta_wait(3, 1); return 0; }
C
run "$SNR" device "$T/wait.elf"
expect_rc 3; expect_err "flag 3"

# Bad input.
run "$SNR" device "$T/missing.elf"
expect_rc 1; expect_err "missing.elf"
echo "not an elf" >"$T/junk.elf"
run "$SNR" device "$T/junk.elf"
expect_rc 1; expect_err "not an ELF file"
run "$SNR" device /bin/true
expect_rc 1; expect_err "not a 64-bit RISC-V ELF"
run "$SNR" device
expect_rc 2; expect_err "no program given"
run "$SNR" device "$T/hello.elf" --chips 0
expect_rc 2; expect_err "--chips"
echo '{"vmem": {"bytes": "big"}}' >"$T/bad.json"
run "$SNR" device "$T/hello.elf" --config "$T/bad.json"
expect_rc 1; expect_err "vmem.bytes"
echo '{"dma": {"base_latency": 5}}' >"$T/bad2.json"
run "$SNR" device "$T/hello.elf" --config "$T/bad2.json"
expect_rc 1; expect_err 'unknown key "dma.base_latency"'
echo '{"dma": ' >"$T/bad3.json"
run "$SNR" device "$T/hello.elf" --config "$T/bad3.json"
expect_rc 1; expect_err "bad3.json:2:0: unexpected token"
echo '{"dma": {"base_latency_cycles": 7}}' >"$T/ok.json"
run "$SNR" device --config "$T/ok.json" --dump-config
expect_rc 0; expect_out '"base_latency_cycles": 7'
echo ok
