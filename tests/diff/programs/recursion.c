/* recursion.c: deep and branching recursion: Fibonacci, Ackermann, towers of
 * Hanoi, N-queens, permutations and a recursive-descent expression parser. */
#include <stdint.h>
#include <stdio.h>

static uint64_t fib(unsigned n) { return n < 2 ? n : fib(n - 1) + fib(n - 2); }

static unsigned ack(unsigned m, unsigned n)
{
	if (m == 0)
		return n + 1;
	if (n == 0)
		return ack(m - 1, 1);
	return ack(m - 1, ack(m, n - 1));
}

static uint64_t hanoi_moves, hanoi_hash;
static void hanoi(unsigned n, int from, int to, int via)
{
	if (!n)
		return;
	hanoi(n - 1, from, via, to);
	hanoi_moves++;
	hanoi_hash = hanoi_hash * 3 + (uint64_t)(from * 4 + to);
	hanoi(n - 1, via, to, from);
}

static int queens(int n, int row, unsigned cols, unsigned d1, unsigned d2)
{
	if (row == n)
		return 1;
	int count = 0;
	for (int c = 0; c < n; c++) {
		unsigned a = 1u << c, b = 1u << (row + c), e = 1u << (row - c + n);
		if ((cols & a) || (d1 & b) || (d2 & e))
			continue;
		count += queens(n, row + 1, cols | a, d1 | b, d2 | e);
	}
	return count;
}

static uint64_t perm_hash;
static unsigned perm_count;
static void permute(char *s, int k, int n)
{
	if (k == n) {
		perm_count++;
		for (int i = 0; i < n; i++)
			perm_hash = perm_hash * 257 + (unsigned char)s[i];
		return;
	}
	for (int i = k; i < n; i++) {
		char t = s[k];
		s[k] = s[i];
		s[i] = t;
		permute(s, k + 1, n);
		s[i] = s[k];
		s[k] = t;
	}
}

/* expr := term (('+'|'-') term)* ; term := factor (('*'|'/'|'%') factor)* ;
 * factor := number | '(' expr ')' | '-' factor */
static const char *p;
static int64_t expr(void);
static int64_t factor(void)
{
	if (*p == '-') {
		p++;
		return -factor();
	}
	if (*p == '(') {
		p++;
		int64_t v = expr();
		p++; /* ')' */
		return v;
	}
	int64_t v = 0;
	while (*p >= '0' && *p <= '9')
		v = v * 10 + (*p++ - '0');
	return v;
}
static int64_t term(void)
{
	int64_t v = factor();
	while (*p == '*' || *p == '/' || *p == '%') {
		char op = *p++;
		int64_t r = factor();
		v = op == '*' ? v * r : r == 0 ? 0 : op == '/' ? v / r : v % r;
	}
	return v;
}
static int64_t expr(void)
{
	int64_t v = term();
	while (*p == '+' || *p == '-') {
		char op = *p++;
		int64_t r = term();
		v = op == '+' ? v + r : v - r;
	}
	return v;
}

int main(void)
{
	for (unsigned n = 0; n <= 20; n += 5)
		printf("fib(%u) = %llu\n", n, (unsigned long long)fib(n));
	for (unsigned m = 0; m <= 2; m++)
		for (unsigned n = 0; n <= 4; n++)
			printf("ack(%u,%u) = %u\n", m, n, ack(m, n));
	printf("ack(3,5) = %u\n", ack(3, 5));
	hanoi(14, 0, 2, 1);
	printf("hanoi(14): %llu moves, hash %016llx\n", (unsigned long long)hanoi_moves, (unsigned long long)hanoi_hash);
	for (int n = 1; n <= 9; n++)
		printf("queens(%d) = %d\n", n, queens(n, 0, 0, 0, 0));
	char s[] = "abcdef";
	permute(s, 0, 6);
	printf("permutations: %u hash %016llx\n", perm_count, (unsigned long long)perm_hash);
	const char *exprs[] = {"1+2*3", "(1+2)*3", "-(4-10)*(7%4)/2", "((((((1))))))+2*(3+(4*(5+6)))",
			       "9223372036854775807+1", "100/7-100%7*-3"};
	for (unsigned i = 0; i < sizeof(exprs) / sizeof(exprs[0]); i++) {
		p = exprs[i];
		printf("%s = %lld\n", exprs[i], (long long)expr());
	}
	return (int)(fib(20) % 100);
}
