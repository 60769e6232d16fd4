/*
 * code_check.c: the recorder's check that --elf (or the executable and the
 * objects it maps) is the program the target runs: the code at the
 * breakpoint and a few samples spread over the ELF's code are read from the
 * target and compared byte for byte, for a few round trips, before any
 * window is recorded (docs/recording.md, "Checks before the target runs").
 */
#include "recorder/code_check.h"

#include <elf.h>
#include <stdio.h>
#include <string.h>

#include "lib/snr_elf.h"
#include "lib/snr_util.h"

#define CODE_AT_BREAKPOINT 64 /* bytes compared from the breakpoint on */
#define CODE_SAMPLES 8        /* samples spread over the ELF's code */
#define CODE_SAMPLE_BYTES 128

static void hex_bytes(const uint8_t *b, size_t n, char *out, size_t outlen)
{
	size_t o = 0;
	for (size_t i = 0; i < n && o + 3 <= outlen; i++)
		o += (size_t)snprintf(out + o, outlen - o, "%02x", b[i]);
}

/* len bytes of seg at off, in obj, against the target's memory there. */
static int compare_code(struct rec *r, const struct loaded_obj *obj, const struct snr_elf_segment *seg, uint64_t off,
			size_t len, char *err, size_t errlen)
{
	uint8_t have[CODE_SAMPLE_BYTES];
	uint64_t addr = seg->vaddr + off + obj->bias;
	char where[300];
	if (len > sizeof(have))
		len = sizeof(have);
	snr_elf_symbolize(obj->elf, addr - obj->bias, where, sizeof(where));
	r->requests++;
	if (r->dbg->read_mem(r->d, addr, have, len)) {
		/* only a target that answered "cannot read memory" there says the
		 * ELF is wrong (both backends word it so); a failed exchange with
		 * the debugger says nothing of the program */
		bool refused = strstr(r->dbg->error(r->d), "cannot read memory at") != NULL;
		snr_fmt(err, errlen, "reading %s's code at 0x%llx (%s) from the target failed: %s%s", obj->elf->path,
			(unsigned long long)addr, where, r->dbg->error(r->d),
			refused ? ": it is not the program the target runs, or not where the ELF places it"
				: " (the exchange with the debugger failed: nothing was compared)");
		return -1;
	}
	const uint8_t *want = seg->data + off;
	for (size_t i = 0; i < len; i++) {
		if (have[i] == want[i])
			continue;
		char h[40], w[40];
		size_t n = len - i < 8 ? len - i : 8;
		hex_bytes(have + i, n, h, sizeof(h));
		hex_bytes(want + i, n, w, sizeof(w));
		snr_elf_symbolize(obj->elf, addr + i - obj->bias, where, sizeof(where));
		snr_fmt(err, errlen,
			"%s does not hold the target's code: at 0x%llx (%s) the target has %s, the ELF %s: it is not "
			"the program the target runs",
			obj->elf->path, (unsigned long long)(addr + i), where, h, w);
		return -1;
	}
	return 0;
}

/* The code at the breakpoint, in whichever object holds it, and a sample
 * of the first object's code (the --elf, or the executable): CODE_SAMPLES
 * reads spread evenly over its executable segments, so a different build
 * of the program, or another program, is caught for a few round trips. */
int check_code(struct rec *r, uint64_t bp, const struct loaded_obj *objs, size_t nobjs, char *err,
		      size_t errlen)
{
	for (size_t k = 0; k < nobjs; k++) {
		const struct snr_elf *e = objs[k].elf;
		for (size_t i = 0; i < e->nsegments; i++) {
			const struct snr_elf_segment *seg = &e->segments[i];
			uint64_t at = bp - objs[k].bias;
			if (!(seg->flags & PF_X) || at < seg->vaddr || at - seg->vaddr >= seg->filesz)
				continue;
			uint64_t off = at - seg->vaddr, left = seg->filesz - off;
			if (compare_code(r, &objs[k], seg, off, left < CODE_AT_BREAKPOINT ? left : CODE_AT_BREAKPOINT,
					 err, errlen))
				return -1;
		}
	}
	if (!nobjs)
		return 0;
	const struct snr_elf *e = objs[0].elf;
	uint64_t total = 0;
	for (size_t i = 0; i < e->nsegments; i++)
		if (e->segments[i].flags & PF_X)
			total += e->segments[i].filesz;
	for (uint64_t j = 0; j < CODE_SAMPLES && total; j++) {
		uint64_t pos = total / CODE_SAMPLES * j;
		for (size_t i = 0; i < e->nsegments; i++) {
			const struct snr_elf_segment *seg = &e->segments[i];
			if (!(seg->flags & PF_X))
				continue;
			if (pos >= seg->filesz) {
				pos -= seg->filesz;
				continue;
			}
			uint64_t left = seg->filesz - pos;
			if (compare_code(r, &objs[0], seg, pos, left < CODE_SAMPLE_BYTES ? left : CODE_SAMPLE_BYTES, err,
					 errlen))
				return -1;
			break;
		}
	}
	return 0;
}

