/*
 * analyses_prog.c: the program of bench/analyses_1m.sh, a token-serving loop
 * whose serve() runs well over a million instructions of the mix the
 * analyses are for. Per token:
 *   - scalar: the token's embedding row copied into core staging, DMAed to
 *     VMEM;
 *   - four layers: each DMAs its 128x128 f32 weight tile (64 KiB) from HBM,
 *     loads it into the MXU, multiplies the activations (8 rows), ReLU on the
 *     vector unit. Layers 0 and 2 issue their tile right before the WAIT
 *     (an avoidable stall); layers 1 and 3 are prefetched a layer earlier;
 *   - attention over two KV blocks streamed from HBM (K and V, 64 KiB each):
 *     scores on the MXU, scale, exp and row sums on the vector unit, the
 *     weighted sum on the MXU;
 *   - the output DMAed back to core memory, then scalar code picks the next
 *     token (argmax over the 128 outputs, compared as bits: they are
 *     non-negative after the ReLU) and folds them into a running hash.
 * About 1,500 instructions and 10 DMAs per token: 800 tokens are 1.17M
 * instructions. Prints the hash.
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#ifndef TOKENS
#define TOKENS 800
#endif
#define D TA_MXU_DIM
#define ROWS 8
#define TILE (D * D * 4)
#define VOCAB 64
#define BLOCKS 2

TA_HBM_DATA static float weights[4][D * D];
TA_HBM_DATA static float k_cache[BLOCKS][D * D];
TA_HBM_DATA static float v_cache[BLOCKS][D * D];

static float emb[VOCAB][D];
static float staging[ROWS * D];
static float out[ROWS * D];
static float tile[D * D];

/* VMEM layout */
#define V_W(b) (TA_VMEM_BASE + (uint64_t)(b) * TILE) /* two weight buffers */
#define V_K (TA_VMEM_BASE + 2 * TILE)
#define V_V (TA_VMEM_BASE + 3 * TILE)
#define V_ACT(b) (TA_VMEM_BASE + 4 * TILE + (uint64_t)(b) * ROWS * D * 4)
#define V_ZERO V_ACT(2)
#define V_SCORES V_ACT(3)
#define V_SUMS V_ACT(4)
#define V_CTX V_ACT(5)

enum { F_W0 = 0, F_W1 = 1, F_KV = 2, F_IO = 3 };

static uint32_t bits(float f)
{
	union { float f; uint32_t u; } v = {f};
	return v.u;
}

static uint64_t hash = 1469598103934665603ull;

static unsigned token_step(unsigned tok)
{
	for (int i = 0; i < D; i++)
		staging[i] = emb[tok][i];
	ta_dma(V_ACT(0), ta_addr(staging), ROWS * D * 4, F_IO);
	ta_wait(F_IO, 1);
	for (int l = 0; l < 4; l++) {
		int b = l & 1;
		if (!b) /* late: issued right before its WAIT */
			ta_dma(V_W(0), ta_addr(weights[l]), TILE, F_W0);
		ta_wait(b ? F_W1 : F_W0, 1);
		ta_mxu_load(V_W(b));
		if (!b) /* prefetch the next layer's tile */
			ta_dma(V_W(1), ta_addr(weights[l + 1]), TILE, F_W1);
		ta_mxu_matmul(V_ACT(b ^ 1), V_ACT(b), ROWS, 0);
		ta_vmax(V_ACT(b ^ 1), V_ACT(b ^ 1), V_ZERO, ROWS * D);
	}
	for (int k = 0; k < BLOCKS; k++) {
		ta_dma(V_K, ta_addr(k_cache[k]), TILE, F_KV);
		ta_dma(V_V, ta_addr(v_cache[k]), TILE, F_KV);
		ta_wait(F_KV, 1);
		ta_mxu_load(V_K);
		ta_mxu_matmul(V_SCORES, V_ACT(0), ROWS, 0);
		ta_vscale(V_SCORES, V_SCORES, 0.088f, ROWS * D);
		ta_vexp(V_SCORES, V_SCORES, ROWS * D);
		ta_vsum_rows(V_SUMS, V_SCORES, ROWS, D);
		ta_wait(F_KV, 1);
		ta_mxu_load(V_V);
		ta_mxu_matmul(V_CTX, V_SCORES, ROWS, k > 0);
	}
	ta_dma(ta_addr(out), V_CTX, D * 4, F_IO);
	ta_wait(F_IO, 1);
	unsigned best = 0;
	uint32_t best_bits = 0;
	for (int i = 0; i < D; i++) {
		uint32_t u = bits(out[i]);
		if (u > best_bits) {
			best_bits = u;
			best = (unsigned)i;
		}
		hash = (hash ^ u) * 1099511628211ull;
	}
	return (best + tok * 7 + 1) % VOCAB;
}

__attribute__((noinline)) uint64_t serve(unsigned ntokens)
{
	unsigned tok = 1;
	for (unsigned t = 0; t < ntokens; t++)
		tok = token_step(tok);
	return hash ^ tok;
}

static void to_hbm(float *hbm, const float *src)
{
	ta_dma(ta_addr(hbm), ta_addr(src), TILE, F_IO);
	ta_wait(F_IO, 1);
}

int main(void)
{
	uint32_t s = 12345;
	for (int l = 0; l < 4; l++) {
		for (int i = 0; i < D * D; i++) {
			s = s * 1664525u + 1013904223u;
			tile[i] = (i / D == i % D) ? 0.9f : ((s >> 20) % 61 == 0 ? 0.02f : 0.0f);
		}
		to_hbm(weights[l], tile);
	}
	for (int b = 0; b < BLOCKS; b++) {
		for (int i = 0; i < D * D; i++) {
			s = s * 1664525u + 1013904223u;
			tile[i] = (float)((s >> 16) % 100) / 1000.0f;
		}
		to_hbm(k_cache[b], tile);
		to_hbm(v_cache[b], tile);
	}
	for (int t = 0; t < VOCAB; t++)
		for (int i = 0; i < D; i++)
			emb[t][i] = (float)((t * 131 + i * 17) % 53) / 53.0f;
	for (int i = 0; i < ROWS * D; i++)
		staging[i] = 0.0f;
	ta_dma(V_ZERO, ta_addr(staging), ROWS * D * 4, F_IO);
	ta_dma(V_ACT(0), ta_addr(staging), ROWS * D * 4, F_IO);
	ta_wait(F_IO, 2);
	uint64_t h = serve(TOKENS);
	printf("analyses_prog: %d tokens, hash %016llx\n", TOKENS, (unsigned long long)h);
	return 0;
}
