/*
 * crt0.S: TA1 program entry. Sets sp, gp and tp (thread-local storage,
 * where picolibc keeps errno), clears .tbss and .bss, calls
 * main(0, NULL) and exits with its result through ecall 93, so the same ELF
 * starts under the device and under qemu-riscv64.
 */
	.section .text.start, "ax"
	.globl _start
	.type _start, @function
_start:
	.option push
	.option norelax
	la gp, __global_pointer$
	.option pop
	la sp, __stack_top
	la tp, __tls_base
	la t0, __bss_start
	la t1, __bss_end
1:	bgeu t0, t1, 2f
	sd zero, 0(t0)
	addi t0, t0, 8
	j 1b
2:	li a0, 0
	li a1, 0
	call main
	call exit
	.size _start, . - _start
