/*
 * softmax.c: a row softmax written the way a user first writes one for TA1
 * (-O2 -g, tests/an/callees.sh): exp on the vector unit, then the sum and
 * the division per element in scalar code. TA1's core is RV64IM without F,
 * so gcc turns each float operation into a call to libgcc's soft float:
 * the division at the KNOWN-DIVIDE line is a call to __divsf3 per element,
 * and that callee, not the line's own instructions, is where most of the
 * kernel's cycles go. The sum at KNOWN-SUM calls __addsf3.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef ROWS
#define ROWS 2
#endif
#define COLS 32

static float x[ROWS][COLS], y[ROWS][COLS];

#define V_X (TA_VMEM_BASE)

__attribute__((noinline)) void softmax_rows(int rows, int cols)
{
	ta_dma(V_X, ta_addr(x), sizeof(x), 1);
	ta_wait(1, 1);
	ta_vexp(V_X, V_X, (uint64_t)rows * cols);
	ta_dma(ta_addr(y), V_X, sizeof(y), 2);
	ta_wait(2, 1);
	for (int r = 0; r < rows; r++) {
		float sum = 0;
		for (int c = 0; c < cols; c++)
			sum += y[r][c]; /* KNOWN-SUM */
		for (int c = 0; c < cols; c++)
			y[r][c] = y[r][c] / sum; /* KNOWN-DIVIDE */
	}
}

int main(void)
{
	for (int r = 0; r < ROWS; r++)
		for (int c = 0; c < COLS; c++)
			x[r][c] = (float)((r + c) % 7) * 0.25f;
	softmax_rows(ROWS, COLS); /* KNOWN-CALL */
	printf("softmax done: %d\n", (int)(y[0][1] * 1000.0f));
	return 0;
}
