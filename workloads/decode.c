/*
 * decode.c: one decode step of a small transformer layer on TA1, with the
 * VMEM allocation of a compiler that places buffers first-fit (the paper's
 * VMEM fragmentation study, Figure 8).
 *
 * Per step: the new token's hidden state (1 x 128, padded to 8 rows for the
 * MXU) is projected to q, k, v (three 128x128 weight DMAs from HBM, MXU); k
 * and v are appended to the KV cache in HBM. Attention runs over the CTX
 * cached positions in blocks of 128, split as in flash-decoding: each block's
 * K^T and V are DMAed into VMEM one block ahead (double buffering), its
 * scores computed by the MXU, exponentiated on the vector unit (vscale, vexp)
 * with their row sums (vsum_rows), and its partial output p V computed by the
 * MXU; the partial outputs and row sums of all blocks are kept and reduced
 * after the last block (vadd). Then the MLP (128 -> 512 -> 128, four 128x128
 * weight tiles each way).
 *
 * Buffers are allocated when needed and freed when dead, in program order.
 * Big short-lived buffers (64 KiB weight tiles and KV blocks) mix with small
 * ones of every lifetime (q, the scores, the partials and row sums, the
 * MLP's hidden tiles):
 *
 *   default        first fit for every buffer: small buffers land in the
 *                  holes the tiles leave and above the tiles still in use,
 *                  between what will be free, so free space splits
 *   -DBY_SIZE      placement by size: buffers smaller than a tile last fit
 *                  from the top of VMEM down, tiles first fit from the
 *                  bottom, so the holes tiles leave stay next to each other
 *
 * The allocation is static, as a compiler's: the first step runs the
 * allocator and keeps its placement as the plan; the second step, the one
 * measured (and recorded: `--breakpoint decode_step --skip 1`), takes its
 * addresses from the plan, so the allocator's own scalar work is not part of
 * it. -DVMEM_BYTES=N sizes the allocator to a machine config's vmem.bytes
 * (the default, TA_VMEM_SIZE, is 32 MiB).
 *
 * Prints a checksum of the layer's output (the same for both variants), the
 * peak of allocated VMEM, the allocator's high-water mark and the cycles of
 * the measured step; `snr analyze vmem` on its window shows occupied and
 * free pages and the largest contiguous free region over time.
 *
 * -DSERVE builds the serving loop of one request instead: a prefill of the
 * prompt in PREFILL chunks of ROWS tokens (prefill_chunk: q, k and v of the
 * chunk, causal attention over the blocks so far with each block's DMA
 * waited before its matmul, no MLP), then 1 + TOKENS decode steps
 * (decode_step: the first makes the VMEM plan the others keep). The two modes are the windows of
 * `snr record --windows` (docs/recording.md, "Several windows").
 */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define D TA_MXU_DIM
#define ROWS 8 /* the token, padded for the MXU */
#ifndef CTX
#define CTX 4096
#endif
#define BLK 128
#define NB (CTX / BLK)
#define HID 512
#define TILE (D * D * 4)
#define ACT (ROWS * D * 4)

TA_HBM_DATA static float w_qkv[3][D * D];
TA_HBM_DATA static float w_up[HID / D][D * D];
TA_HBM_DATA static float w_down[HID / D][D * D];
TA_HBM_DATA static float k_cache[NB + 1][D * BLK]; /* per block: K^T, 128 x 128; the last takes new rows */
TA_HBM_DATA static float v_cache[NB + 1][BLK * D]; /* per block: V, 128 x 128 */

/* ---- VMEM allocation: 1 KiB granules, the allocated extents by address ---- */
#ifndef VMEM_BYTES
#define VMEM_BYTES TA_VMEM_SIZE
#endif
#define GRAN 1024
#define NGRAN ((uint32_t)(VMEM_BYTES / GRAN))
#define MAXBLK 128

static struct extent {
	uint32_t lo, n;
} ext[MAXBLK];
static int next;
static uint32_t allocated, peak, high_water, low_water = NGRAN; /* granules */

/* A compiler allocates VMEM statically: the first step runs the allocator,
 * its placement is kept as the plan, and the steps after it (the one that is
 * measured and recorded) take their addresses from the plan. */
#define MAXPLAN 512
static uint64_t plan[MAXPLAN];
static int nplan, iplan, planned;

static uint64_t vmalloc(uint64_t bytes)
{
	if (planned)
		return plan[iplan++];
	uint32_t n = (uint32_t)((bytes + GRAN - 1) / GRAN), lo = 0;
	int at = -1, from_top = 0;
#ifdef BY_SIZE
	if (n < TILE / GRAN) { /* a small buffer: last fit, the highest gap that holds it, at its top */
		for (int i = next; i >= 0 && at < 0; i--) {
			uint32_t start = i ? ext[i - 1].lo + ext[i - 1].n : 0, end = i < next ? ext[i].lo : NGRAN;
			if (end - start >= n) {
				at = i;
				lo = end - n;
				from_top = 1;
			}
		}
	}
#endif
	for (int i = 0; i <= next && at < 0; i++) { /* first fit */
		uint32_t start = i ? ext[i - 1].lo + ext[i - 1].n : 0, end = i < next ? ext[i].lo : NGRAN;
		if (end - start >= n) {
			at = i;
			lo = start;
		}
	}
	if (next == MAXBLK || nplan == MAXPLAN) {
		printf("decode: more than %d live buffers or %d allocations\n", MAXBLK, MAXPLAN);
		ta_wait(15, 1);
		return 0;
	}
	if (at < 0) {
		printf("decode: VMEM (%u KiB) exhausted allocating %llu bytes\n", NGRAN, (unsigned long long)bytes);
		ta_wait(15, 1); /* stops the program with a clear fault */
		return 0;
	}
	for (int i = next; i > at; i--)
		ext[i] = ext[i - 1];
	ext[at] = (struct extent){lo, n};
	next++;
	allocated += n;
	if (allocated > peak)
		peak = allocated;
	if (from_top && lo < low_water)
		low_water = lo;
	if (!from_top && lo + n > high_water)
		high_water = lo + n;
	plan[nplan] = TA_VMEM_BASE + (uint64_t)lo * GRAN;
	return plan[nplan++];
}

static void vfree(uint64_t addr)
{
	if (planned)
		return;
	uint32_t lo = (uint32_t)((addr - TA_VMEM_BASE) / GRAN);
	int i = 0;
	while (i < next && ext[i].lo != lo)
		i++;
	if (i == next) {
		printf("decode: freeing VMEM 0x%llx, which is not allocated\n", (unsigned long long)addr);
		ta_wait(15, 1);
		return;
	}
	allocated -= ext[i].n;
	for (next--; i < next; i++)
		ext[i] = ext[i + 1];
}

enum { F_W = 0, F_K = 1, F_V = 2, F_IO = 3 };

static float staging[D * D];
static float result[ROWS * D], row_sums[ROWS];

/* n pseudo-random values of magnitude in [2^e, 2^(e+1)), either sign; built
 * from their bits, since TA1 has no FPU and soft-float would dominate the run */
static void fill(void *hbm, uint64_t n, uint32_t seed, int e)
{
	uint32_t s = seed;
	for (uint64_t i = 0; i < n; i++) {
		s = s * 1664525u + 1013904223u;
		union { uint32_t u; float f; } v = {(s & 0x80000000u) | (uint32_t)(127 + e) << 23 | (s >> 8 & 0x7fffffu)};
		staging[i] = v.f;
	}
	ta_dma(ta_addr(hbm), ta_addr(staging), n * 4, F_IO);
	ta_wait(F_IO, 1);
}

static void init(void)
{
	for (int i = 0; i < 3; i++)
		fill(w_qkv[i], D * D, 11u + (uint32_t)i, -14); /* about 1e-4 */
	for (int i = 0; i < HID / D; i++) {
		fill(w_up[i], D * D, 101u + (uint32_t)i, -14);
		fill(w_down[i], D * D, 201u + (uint32_t)i, -14);
	}
	for (int b = 0; b < NB; b++) {
		fill(k_cache[b], D * BLK, 301u + (uint32_t)b, -10); /* about 1e-3 */
		fill(v_cache[b], BLK * D, 401u + (uint32_t)b, -10);
	}
}

/* out (ROWS x 128) = in (ROWS x 128) x W, W DMAed from HBM into a fresh buffer */
static void project(uint64_t out, uint64_t in, const float *w_hbm, int accumulate)
{
	uint64_t w = vmalloc(TILE);
	ta_dma(w, ta_addr(w_hbm), TILE, F_W);
	ta_wait(F_W, 1);
	ta_mxu_load(w);
	ta_mxu_matmul(out, in, ROWS, accumulate);
	vfree(w);
}

__attribute__((noinline)) void decode_step(uint64_t x)
{
	uint64_t q = vmalloc(ACT), k = vmalloc(ACT), v = vmalloc(ACT);
	project(q, x, w_qkv[0], 0);
	project(k, x, w_qkv[1], 0);
	project(v, x, w_qkv[2], 0);
	/* append this token's k and v to the cache (one row each; the rest pads the MXU) */
	ta_dma(ta_addr(k_cache[NB]), k, D * 4, F_IO);
	ta_dma(ta_addr(v_cache[NB]), v, D * 4, F_IO);
	ta_wait(F_IO, 2);
	vfree(k);
	vfree(v);

	uint64_t o[NB], l[NB];
	uint64_t kb = vmalloc(TILE), vb = vmalloc(TILE);
	ta_dma(kb, ta_addr(k_cache[0]), TILE, F_K);
	ta_dma(vb, ta_addr(v_cache[0]), TILE, F_V);
	for (int b = 0; b < NB; b++) {
		uint64_t nk = 0, nv = 0;
		if (b + 1 < NB) { /* the next block in flight while this one computes */
			nk = vmalloc(TILE);
			ta_dma(nk, ta_addr(k_cache[b + 1]), TILE, F_K);
			nv = vmalloc(TILE);
			ta_dma(nv, ta_addr(v_cache[b + 1]), TILE, F_V);
		}
		uint64_t scores = vmalloc(ROWS * BLK * 4);
		ta_wait(F_K, 1);
		ta_mxu_load(kb);
		ta_mxu_matmul(scores, q, ROWS, 0);
		vfree(kb);
		ta_vscale(scores, scores, 0.088f, ROWS * BLK); /* 1/sqrt(128) */
		ta_vexp(scores, scores, ROWS * BLK);
		l[b] = vmalloc(ROWS * 4);
		ta_vsum_rows(l[b], scores, ROWS, BLK);
		o[b] = vmalloc(ACT);
		ta_wait(F_V, 1);
		ta_mxu_load(vb);
		ta_mxu_matmul(o[b], scores, ROWS, 0);
		vfree(vb);
		vfree(scores);
		kb = nk;
		vb = nv;
	}
	vfree(q);
	/* reduce the blocks' partial outputs and row sums into the first's */
	for (int b = 1; b < NB; b++) {
		ta_vadd(o[0], o[0], o[b], ROWS * D);
		ta_vadd(l[0], l[0], l[b], ROWS);
		vfree(o[b]);
		vfree(l[b]);
	}
	ta_dma(ta_addr(row_sums), l[0], sizeof(row_sums), F_IO);
	ta_wait(F_IO, 1);
	vfree(l[0]);

	/* MLP: 128 -> 512 (four tiles) -> 128 */
	uint64_t hidden[HID / D];
	for (int t = 0; t < HID / D; t++) {
		hidden[t] = vmalloc(ACT);
		project(hidden[t], o[0], w_up[t], 0);
	}
	vfree(o[0]);
	uint64_t y = vmalloc(ACT);
	for (int t = 0; t < HID / D; t++) {
		project(y, hidden[t], w_down[t], t > 0);
		vfree(hidden[t]);
	}
	ta_dma(ta_addr(result), y, sizeof(result), F_IO);
	ta_wait(F_IO, 1);
	vfree(y);
}

#ifdef SERVE
#ifndef PREFILL
#define PREFILL 4
#endif
#ifndef TOKENS
#define TOKENS 6
#endif
/* Prefill's buffers: a fixed placement in the upper half of VMEM, apart from
 * decode's plan (first fit from the bottom). */
#define PRE_BASE (TA_VMEM_BASE + VMEM_BYTES / 2)

__attribute__((noinline)) void prefill_chunk(uint64_t x, int c)
{
	uint64_t w = PRE_BASE, q = w + TILE, kv = q + ACT, blk = kv + ACT, s = blk + TILE, o = s + ROWS * BLK * 4;
	for (int i = 0; i < 3; i++) { /* q, k, v of the chunk's tokens */
		ta_dma(w, ta_addr(w_qkv[i]), TILE, F_W);
		ta_wait(F_W, 1);
		ta_mxu_load(w);
		ta_mxu_matmul(i ? kv : q, x, ROWS, 0);
		if (i) { /* appended to the cache */
			ta_dma(ta_addr(i == 1 ? &k_cache[NB][c * ROWS * D] : &v_cache[NB][c * ROWS * D]), kv, ACT, F_IO);
			ta_wait(F_IO, 1);
		}
	}
	for (int b = 0; b <= c % NB; b++) { /* causal: the blocks so far */
		ta_dma(blk, ta_addr(k_cache[b]), TILE, F_K);
		ta_wait(F_K, 1);
		ta_mxu_load(blk);
		ta_mxu_matmul(s, q, ROWS, 0);
		ta_vscale(s, s, 0.088f, ROWS * BLK);
		ta_vexp(s, s, ROWS * BLK);
		ta_dma(blk, ta_addr(v_cache[b]), TILE, F_V);
		ta_wait(F_V, 1);
		ta_mxu_load(blk);
		ta_mxu_matmul(o, s, ROWS, b > 0);
	}
	ta_dma(ta_addr(result), o, sizeof(result), F_IO);
	ta_wait(F_IO, 1);
}
#endif

int main(void)
{
	init();
	for (int i = 0; i < ROWS * D; i++)
		staging[i] = i < D ? (float)(i % 7) * 0.1f : 0.0f;
	uint64_t x = vmalloc(ACT);
	ta_dma(x, ta_addr(staging), ACT, F_IO);
	ta_wait(F_IO, 1);
#ifdef SERVE
	for (int c = 0; c < PREFILL; c++)
		prefill_chunk(x, c);
	int first = nplan;
	decode_step(x); /* allocates: the plan */
	planned = 1;
	for (int t = 0; t + 1 < TOKENS; t++) {
		iplan = first;
		decode_step(x);
	}
	iplan = first;
#else
	int first = nplan;
	decode_step(x); /* allocates: the plan */
	planned = 1;
	iplan = first;
#endif
	uint64_t n0, n1;
	__asm__ volatile("csrr %0, instret" : "=r"(n0));
	uint64_t t0 = ta_cycles();
	decode_step(x); /* the measured step */
	uint64_t t1 = ta_cycles();
	__asm__ volatile("csrr %0, instret" : "=r"(n1));
	uint32_t h = 2166136261u;
	for (int i = 0; i < ROWS * D + ROWS; i++) {
		union { float f; uint32_t u; } u = {i < ROWS * D ? result[i] : row_sums[i - ROWS * D]};
		h = (h ^ u.u) * 16777619u;
	}
#ifdef BY_SIZE
	printf("decode (by size): context %d, checksum %08x, VMEM %u KiB: peak %u KiB allocated, tiles below %u KiB, "
	       "small buffers above %u KiB; %llu cycles, %llu instructions\n",
	       CTX, (unsigned)h, NGRAN, (unsigned)peak, (unsigned)high_water, (unsigned)low_water,
	       (unsigned long long)(t1 - t0), (unsigned long long)(n1 - n0));
#else
	printf("decode: context %d, checksum %08x, VMEM %u KiB: peak %u KiB allocated, high water %u KiB; %llu cycles, "
	       "%llu instructions\n",
	       CTX, (unsigned)h, NGRAN, (unsigned)peak, (unsigned)high_water, (unsigned long long)(t1 - t0),
	       (unsigned long long)(n1 - n0));
#endif
	return 0;
}
