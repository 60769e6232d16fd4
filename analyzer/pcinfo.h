/*
 * pcinfo.h: the disassembly of a window's pcs, for outputs that name what
 * ran (snr annotate --asm, Perfetto slices "ta.mxu.mm attn.c:37"). Code
 * bytes come from the program's ELF when it was found (lib/snr_lines.h),
 * else from the trace (each pc's bytes are stored at its first execution:
 * the trace is read once, at the first pc the ELF cannot give); a metrics
 * file without the ELF gives "?". Cached per pc.
 */
#ifndef SNR_ANALYZER_PCINFO_H
#define SNR_ANALYZER_PCINFO_H

#include <stdint.h>

#include "analyzer/source.h"

struct an_pcinfo;

struct an_pcinfo *an_pcinfo_new(const struct snr_source *src);
void an_pcinfo_free(struct an_pcinfo *p);
/* "ta.wait a3, a3", or "?"; valid until an_pcinfo_free. */
const char *an_pcinfo_disasm(struct an_pcinfo *p, uint64_t pc);
/* The mnemonic alone ("ta.wait") into buf. */
const char *an_pcinfo_mnemonic(struct an_pcinfo *p, uint64_t pc, char *buf, size_t len);

/* What an instruction does to the call stack, from the ISA's access query:
 * a call is a branch that writes the link register, a return a branch that
 * reads it and does not write it (RISC-V's jal/jalr with rd = ra and
 * `jalr zero, 0(ra)`; aarch64's bl/blr and ret). ISAs without a link
 * register (x86-64's call pushes the return address) have neither. */
enum an_flow { AN_FLOW_OTHER, AN_FLOW_CALL, AN_FLOW_RETURN };
/* pc's flow kind, and its length in bytes in *len (0: no code bytes). */
enum an_flow an_pcinfo_flow(struct an_pcinfo *p, uint64_t pc, unsigned *len);

/* snr_source_where_short of pc ("attn.c:37 (attn)"), cached. */
const char *an_pcinfo_where(struct an_pcinfo *p, uint64_t pc);
/* The members "pc", "disasm" and "source" (file, line, function: the
 * inline chain left out) of a JSON object, without the braces, cached:
 * for trace-event args. */
const char *an_pcinfo_args(struct an_pcinfo *p, uint64_t pc);

#endif
