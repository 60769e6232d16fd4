/*
 * run_prog.c: a TA1 program for tests/rec/record_run.sh: spin() runs for a
 * long time (minutes on the device), late() only after it; a signal sent
 * to `snr record --run` while it waits for late() or records inside spin()
 * must leave no device behind.
 */
#include <stdint.h>
#include <stdio.h>

static volatile uint64_t sink;
static uint64_t table[16]; /* a data object: not a breakpoint */

__attribute__((noinline)) void late(void)
{
	sink += table[3];
}

__attribute__((noinline)) void spin(uint64_t n)
{
	for (uint64_t i = 0; i < n; i++)
		sink += i ^ (sink >> 3);
}

int main(void)
{
	for (int i = 0; i < 16; i++)
		table[i] = (uint64_t)i * 3;
	spin(1ull << 40);
	late();
	printf("run_prog %llu\n", (unsigned long long)sink);
	return 0;
}
