/*
 * fuzz_elf.c: libFuzzer target for the ELF loader (lib/snr_elf.c) and what
 * reads its result: symbol lookup by name and address, symbolization, the
 * architecture name, every loadable segment's bytes, and loading a RISC-V
 * one into a TA1 machine as `snr device` does (device/ta1_machine.c). The
 * loader must return an error or a program, never crash, hang or leak (the
 * fuzz build runs under ASan and UBSan).
 *
 * With FUZZ_STANDALONE this is a main() that replays files, so the kept
 * corpus (tests/fuzz/corpus/elf/) runs as a unit test in every build.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "device/ta1_machine.h"
#include "fuzz_common.h"
#include "lib/snr_config.h"
#include "lib/snr_elf.h"

static volatile uint64_t sink;

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[96];
	snprintf(path, sizeof(path), "/tmp/snr-fuzz-elf-%d", (int)getpid());
	FILE *f = fopen(path, "wb");
	if (!f)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);

	char err[700], buf[256];
	struct snr_elf *e = snr_elf_open(path, err, sizeof(err));
	if (e) {
		const char *arch = snr_elf_gdb_arch(e);
		sink += arch ? (uint64_t)strlen(arch) : 0;
		for (size_t i = 0; i < e->nsegments; i++)
			if (e->segments[i].filesz)
				sink += e->segments[i].data[0] + e->segments[i].data[e->segments[i].filesz - 1];
		for (size_t i = 0; i < e->nsymbols && i < 4096; i++) {
			const struct snr_elf_symbol *s = snr_elf_find(e, e->symbols[i].name);
			sink += s ? s->addr : 0;
			snr_elf_symbolize(e, e->symbols[i].addr + 1, buf, sizeof(buf));
			s = snr_elf_lookup(e, e->symbols[i].addr + e->symbols[i].size);
			sink += s ? s->size : 0;
		}
		snr_elf_symbolize(e, e->entry, buf, sizeof(buf));
		sink += snr_elf_find(e, "main") != NULL;
		/* one machine for every input (making one costs more than the
		 * rest of a run); a load only writes the segments' bytes */
		static struct ta1_machine *m;
		if (!m) {
			struct snr_config cfg;
			snr_config_default(&cfg);
			cfg.chips = 1;
			m = ta1_machine_new(&cfg, err, sizeof(err));
		}
		if (m)
			sink += ta1_machine_load(m, e, err, sizeof(err)) == 0;
		snr_elf_free(e);
	}
	unlink(path);
	return 0;
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv) { return fuzz_replay_corpus("fuzz_elf", argc, argv); }
#endif
