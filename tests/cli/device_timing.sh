#!/usr/bin/env bash
# snr device --timing: the cycle CSR reads the timing model's clock, and
# --stats reports cycles, stalls by cause and DMAs per chip. The measured
# block is one asm statement, so its instructions are known exactly; the
# expected 666 cycles are worked out in docs/ta1-timing.md ("Whole program").
. "$(dirname "$0")/lib.sh"

cc_ta1 timed <<'C'
#include <stdio.h>
#include "ta1.h"
int main(void) {
	uint64_t dst = TA_VMEM_BASE, src = TA_HBM_BASE, bytes = 12000, flag = 0, one = 1;
	uint64_t w = TA_VMEM_BASE + 0x100000, a = TA_VMEM_BASE + 0x200000, n = 16384;
	uint64_t mm_dst = TA_VMEM_BASE + 0x300000, rows = 8;
	uint64_t c0, c1;
	__asm__ volatile(
		"csrr %0, cycle\n\t"
		".insn r4 CUSTOM_0, 0, 0, %5, %2, %3, %4\n\t"  /* ta.dma dst, src, bytes, flag */
		".insn r CUSTOM_0, 2, 0, x0, %5, %6\n\t"       /* ta.wait flag, 1 */
		".insn r4 CUSTOM_1, 0, 0, %9, %7, %8, %8\n\t"  /* ta.vadd w, a, a, n */
		".insn r CUSTOM_1, 4, 0, x0, %7, x0\n\t"       /* ta.mxu.load w */
		".insn r4 CUSTOM_1, 3, 0, %11, %10, %2, x0\n\t" /* ta.mxu.mm mm_dst, dst, rows */
		"csrr %1, cycle\n\t"
		: "=&r"(c0), "=&r"(c1)
		: "r"(dst), "r"(src), "r"(bytes), "r"(flag), "r"(one), "r"(w), "r"(a), "r"(n), "r"(mm_dst),
		  "r"(rows)
		: "memory");
	printf("block %llu cycles\n", (unsigned long long)(c1 - c0));
	return 0;
}
C
# Functional device: one cycle per instruction.
run "$SNR" device "$T/timed.elf"
expect_rc 0; expect_out "block 6 cycles"

# Timing model: dma@1 base [2,502) transfer 12000/1200 = 10 -> 512; wait
# issues at 512; vadd (8 + 16384/1024 = 24) [514,538); mxu.load waits for w:
# issues 537, [538,666); mxu.mm waits for the weights: issues 665; csrr at 666.
run "$SNR" device "$T/timed.elf" --timing --stats
expect_rc 0; expect_out "block 666 cycles"
expect_err "dma-base"; expect_err "IPC"
# chip 0's row: dma-base 500, dma-transfer 10, vmem-hazard 23 + 127 = 150,
# unit-busy 0, one DMA of 12000 bytes; MXU busy 128 + 136 = 264.
row=$(awk '/^chip +cycles/ {t = 1; next} t && $1 == "0" {print; exit}' "$T/err")
[ -n "$row" ] || fail "no timing row for chip 0 in: $(cat "$T/err")"
set -- $row
[ "$5" = 500 ] && [ "$6" = 10 ] && [ "$7" = 150 ] && [ "$8" = 0 ] || fail "stalls: $row"
[ "${11}" = 0 ] || fail "peer: $row"
[ "${12}" = 1 ] && [ "${13}" = 12000 ] || fail "dmas: $row"
[ "${16}" = 264 ] || fail "mxu busy: $row"
[ "$2" -ge 802 ] || fail "cycles $2 < 802 (the matmul ends at c0 + 802)"

# Each chip's DMAs use its own ports and no link.
run "$SNR" device "$T/timed.elf" --timing --chips 2
expect_rc 0
[ "$(grep -c 'block 666 cycles' "$T/out")" -eq 2 ] || fail "want 666 on both chips: $(cat "$T/out")"

run "$SNR" device "$T/timed.elf" --timing --gdb tcp:127.0.0.1:0
expect_rc 2; expect_err "--timing and --gdb"
echo ok
