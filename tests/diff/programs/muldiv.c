/* muldiv.c: every M-extension instruction (and the RV64I shifts) on a grid
 * of edge values: zero divisors, INT64_MIN / -1, INT32_MIN / -1 in the W
 * forms, upper halves of products of extreme values. Inline assembly makes
 * the compiler emit exactly the instruction named; C's own / and % (through
 * volatile operands) are compared with it where C defines the result. */
#include <stdint.h>
#include <stdio.h>

#define OP(name)                                                                              \
	static uint64_t op_##name(uint64_t a, uint64_t b)                                     \
	{                                                                                     \
		uint64_t r;                                                                   \
		__asm__ volatile(#name " %0, %1, %2" : "=r"(r) : "r"(a), "r"(b));             \
		return r;                                                                     \
	}
OP(mul) OP(mulh) OP(mulhsu) OP(mulhu) OP(div) OP(divu) OP(rem) OP(remu)
OP(mulw) OP(divw) OP(divuw) OP(remw) OP(remuw)
OP(sll) OP(srl) OP(sra) OP(sllw) OP(srlw) OP(sraw)

static const struct {
	const char *name;
	uint64_t (*fn)(uint64_t, uint64_t);
} ops[] = {
#define E(n) {#n, op_##n}
	E(mul), E(mulh), E(mulhsu), E(mulhu), E(div), E(divu), E(rem), E(remu), E(mulw), E(divw),
	E(divuw), E(remw), E(remuw), E(sll), E(srl), E(sra), E(sllw), E(srlw), E(sraw),
};

static const uint64_t vals[] = {
	0, 1, 2, 3, 7, 0xffffffffffffffffull, 0xfffffffffffffffeull, 0xfffffffffffffff9ull,
	0x8000000000000000ull, 0x7fffffffffffffffull, 0x8000000000000001ull, 0x80000000ull,
	0x7fffffffull, 0xffffffffull, 0xffffffff80000000ull, 0x100000000ull, 0x123456789abcdef0ull,
	0xfedcba9876543210ull, 63, 64, 31, 32,
};
#define NV (sizeof(vals) / sizeof(vals[0]))

int main(void)
{
	uint64_t all = 0;
	for (unsigned o = 0; o < sizeof(ops) / sizeof(ops[0]); o++) {
		uint64_t h = 0;
		for (unsigned i = 0; i < NV; i++) {
			printf("%-6s %016llx:", ops[o].name, (unsigned long long)vals[i]);
			for (unsigned j = 0; j < NV; j++) {
				uint64_t r = ops[o].fn(vals[i], vals[j]);
				h = h * 31 + r;
				printf(" %llx", (unsigned long long)r);
			}
			printf("\n");
		}
		printf("%s hash %016llx\n", ops[o].name, (unsigned long long)h);
		all ^= h;
	}
	/* C's operators where C defines them, against the instructions */
	int bad = 0;
	for (unsigned i = 0; i < NV; i++)
		for (unsigned j = 0; j < NV; j++) {
			volatile int64_t a = (int64_t)vals[i], b = (int64_t)vals[j];
			volatile uint64_t ua = vals[i], ub = vals[j];
			volatile int32_t a32 = (int32_t)vals[i], b32 = (int32_t)vals[j];
			if (ub) {
				bad += ua / ub != op_divu(ua, ub) || ua % ub != op_remu(ua, ub);
				bad += (uint64_t)(int64_t)(int32_t)((uint32_t)ua / (uint32_t)ub) != op_divuw(ua, ub) &&
				       (uint32_t)ub;
			}
			if (b && !(a == INT64_MIN && b == -1))
				bad += (uint64_t)(a / b) != op_div((uint64_t)a, (uint64_t)b) ||
				       (uint64_t)(a % b) != op_rem((uint64_t)a, (uint64_t)b);
			if (b32 && !(a32 == INT32_MIN && b32 == -1))
				bad += (uint64_t)(int64_t)(a32 / b32) != op_divw((uint64_t)a, (uint64_t)b) ||
				       (uint64_t)(int64_t)(a32 % b32) != op_remw((uint64_t)a, (uint64_t)b);
			bad += (uint64_t)((unsigned __int128)ua * ub >> 64) != op_mulhu(ua, ub);
			bad += (uint64_t)((__int128)a * b >> 64) != op_mulh((uint64_t)a, (uint64_t)b);
		}
	/* a long dependent chain of divisions, so the count is not all printf */
	uint64_t x = 0x0123456789abcdefull, acc = 0;
	for (int k = 0; k < 5000; k++) {
		volatile uint64_t d = (x >> (k % 23)) | 1;
		acc += x / d + x % (d + 7) + (uint64_t)((int64_t)x / (int64_t)(d | 0x100));
		x = x * 6364136223846793005ull + 1442695040888963407ull;
	}
	printf("chain %016llx all %016llx disagreements %d\n", (unsigned long long)acc, (unsigned long long)all, bad);
	return bad;
}
