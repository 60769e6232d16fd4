/*
 * fuzz_config.c: libFuzzer target for the machine-config validator
 * (lib/snr_config.c, snr_config_check), which reads every --config file and
 * the config every trace and metrics file carries, and for the cache model's
 * section it hands to sim/snr_cache.c. Any text must end in a config or an
 * error naming a position inside the text (line and column within its
 * lines), never a crash or an out-of-range cast (UBSan); a config it accepts
 * must come back the same through snr_config_to_json and the validator (the
 * form traces store). With FUZZ_STANDALONE, main() replays the kept corpus
 * (tests/fuzz/corpus/config/) as a unit test.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "lib/snr_config.h"
#include "sim/snr_cache.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1);
	memcpy(text, data, size);
	text[size] = 0;
	struct snr_config_text t = {text, size, "fuzz.json"};
	struct snr_config c;
	char err[1024];
	if (snr_config_check(&c, &t, err, sizeof(err)) == 0) {
		char *js = snr_config_to_json(&c);
		struct snr_config back;
		if (snr_config_parse(&back, js, "round trip", err, sizeof(err)) || memcmp(&c, &back, sizeof(c))) {
			fprintf(stderr, "fuzz_config: an accepted config does not survive its own JSON: %s\n", err);
			abort();
		}
		free(js);
		struct snr_cache_cfg cc;
		if (memchr(text, 0, size) == NULL && snr_cache_cfg_parse(&cc, text, err, sizeof(err))) {
			fprintf(stderr, "fuzz_config: the validator accepted a cache section the model refuses: %s\n", err);
			abort();
		}
	} else if (strncmp(err, "fuzz.json", 9)) {
		fprintf(stderr, "fuzz_config: the error does not name the source: %s\n", err);
		abort();
	} else if (err[9] == ':' && err[10] >= '0' && err[10] <= '9') {
		/* "fuzz.json:LINE:COL: ...": the line must be one of the text's */
		long line = strtol(err + 10, NULL, 10);
		long lines = 1;
		for (size_t i = 0; i < size; i++)
			lines += text[i] == '\n';
		if (line < 0 || line > lines) {
			fprintf(stderr, "fuzz_config: line %ld of a %ld-line text: %s\n", line, lines, err);
			abort();
		}
	}
	free(text);
	return 0;
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv) { return fuzz_replay_corpus("fuzz_config", argc, argv); }
#endif
