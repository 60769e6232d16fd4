/*
 * rsp_fixture.h: a TA1 machine with a tiny program built in, for the RSP
 * unit tests and the fuzzer (no cross compiler needed, and every address is
 * known). The program, at 0x10000 (the entry):
 *
 *   10000  addi a0, zero, 0
 *   10004  addi t0, zero, 5
 *   10008  add  a0, a0, t0      <- loop: a0 = 5+4+3+2+1 = 15
 *   1000c  addi t0, t0, -1
 *   10010  bnez t0, 10008
 *   10014  addi a7, zero, 93
 *   10018  ecall                <- exit(15)
 *   1001c  ebreak               (reached only by setting pc)
 *   10020  ld   a1, 0(zero)     (faults: address 0 is in no memory)
 *   10100  .quad 0x1122334455667788
 *
 * Memories are small (64 KiB each) so that a machine per fuzz input is cheap.
 */
#ifndef SNR_TESTS_RSP_FIXTURE_H
#define SNR_TESTS_RSP_FIXTURE_H

#include <string.h>

#include "device/ta1_machine.h"
#include "lib/snr_config.h"
#include "lib/snr_elf.h"

static const uint32_t rsp_fixture_code[] = {
	0x00000513, 0x00500293, 0x00550533, 0xfff28293, 0xfe029ce3,
	0x05d00893, 0x00000073, 0x00100073, 0x00003583,
};

struct rsp_fixture {
	uint8_t image[0x108];
	struct snr_elf_segment seg;
	struct snr_elf elf;
	struct ta1_machine *m;
};

/* Returns 0 and f->m, or -1 with err filled. */
static inline int rsp_fixture_open(struct rsp_fixture *f, unsigned chips, char *err, size_t errlen)
{
	struct snr_config cfg;
	memset(f, 0, sizeof(*f));
	memcpy(f->image, rsp_fixture_code, sizeof(rsp_fixture_code));
	static const uint8_t quad[8] = {0x88, 0x77, 0x66, 0x55, 0x44, 0x33, 0x22, 0x11};
	memcpy(f->image + 0x100, quad, 8);
	f->seg.vaddr = TA1_CORE_BASE;
	f->seg.memsz = f->seg.filesz = sizeof(f->image);
	f->seg.flags = 7;
	f->seg.data = f->image;
	f->elf.path = (char *)"rsp_fixture";
	f->elf.machine = 243; /* EM_RISCV */
	f->elf.is64 = 1;
	f->elf.entry = TA1_CORE_BASE;
	f->elf.nsegments = 1;
	f->elf.segments = &f->seg;
	snr_config_default(&cfg);
	cfg.chips = chips;
	cfg.core_memory_bytes = 64 << 10;
	cfg.vmem_bytes = 64 << 10;
	cfg.hbm_bytes = 64 << 10;
	f->m = ta1_machine_new(&cfg, err, errlen);
	if (!f->m || ta1_machine_load(f->m, &f->elf, err, errlen)) {
		ta1_machine_free(f->m);
		f->m = NULL;
		return -1;
	}
	return 0;
}

static inline void rsp_fixture_close(struct rsp_fixture *f)
{
	ta1_machine_free(f->m);
	f->m = NULL;
}

#endif
