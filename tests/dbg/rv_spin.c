/*
 * rv_spin.c: a RISC-V program that never stops (for interrupt tests under
 * qemu-riscv64 -g); checksum() exists only to carry a breakpoint never hit.
 */
volatile unsigned long spins;

__attribute__((noinline)) unsigned long checksum(void)
{
	return spins * 3;
}

int main(void)
{
	for (;;)
		spins++;
	return (int)checksum();
}
