/*
 * x86_prog.c: the host program the debugger tests drive (built -static
 * -no-pie so addresses from nm are the run-time ones). It fills data[i] =
 * i*i + 7, hashes it with checksum() (FNV-1a over 64 rounds: ~20k
 * instructions with no calls, so stepped PC sequences are deterministic),
 * prints "result N" and exits 42. With the argument "loop" it spins forever
 * (for attach tests) and never calls checksum(); with "wait" it first
 * reads one byte from stdin (so a debugger can attach before checksum());
 * with "segv" it stores through a null pointer; with "cpuid" it runs
 * emulated(), instructions a hypervisor may emulate (whose single steps
 * some run past), and exits 42.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

uint64_t data[64];
volatile uint64_t result;
volatile uint64_t spins;

__attribute__((noinline)) uint64_t checksum(const uint64_t *v, int n)
{
	uint64_t h = 1469598103934665603ull;
	for (int r = 0; r < 64; r++)
		for (int i = 0; i < n; i++) {
			h ^= v[i] + (uint64_t)r;
			h *= 1099511628211ull;
		}
	return h;
}

/* push rbx; xor; cpuid; cpuid; rex.w cpuid; nop; rdtsc; nop; pop rbx; ret */
void emulated(void);
__asm__(".text\n.globl emulated\n.type emulated, @function\nemulated:\n"
	"push %rbx\nxor %eax, %eax\ncpuid\ncpuid\n.byte 0x48, 0x0f, 0xa2\nnop\nrdtsc\nnop\npop %rbx\nret\n"
	".size emulated, .-emulated\n");

int main(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "cpuid")) {
		emulated();
		return 42;
	}
	if (argc > 1 && !strcmp(argv[1], "loop"))
		for (;;)
			spins++;
	if (argc > 1 && !strcmp(argv[1], "segv"))
		*(volatile int *)(uintptr_t)spins = 1; /* address 0 */
	char go;
	if (argc > 1 && !strcmp(argv[1], "wait") && read(0, &go, 1) != 1)
		return 3;
	for (int i = 0; i < 64; i++)
		data[i] = (uint64_t)i * (uint64_t)i + 7;
	result = checksum(data, 64);
	printf("result %llu\n", (unsigned long long)result);
	return 42;
}
