/*
 * fuzz_host_trace.c: libFuzzer target for the host trace (.snrh) reader and
 * what reads its result: snrh_trace_read_partial (whole, truncated and
 * damaged files), the thread table rebuilt for a truncated one, the report
 * (tables, folded stacks, the --json document with on/off-device) and the
 * trace-event export. When the input's last
 * byte is odd the chunk checksums are repaired first (fuzz_common.h), so the
 * payload parsers behind them get fuzzed too. Everything must return an
 * error or data, never crash, hang or leak (ASan and UBSan in the fuzz
 * build); an index a payload names (string, stack) must be checked before
 * use. With FUZZ_STANDALONE, main() replays the kept corpus
 * (tests/fuzz/corpus/host/) as a unit test.
 */
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "analyzer/host_events.h"
#include "analyzer/host_report.h"
#include "fuzz_common.h"
#include "lib/snr_host_trace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *path = fuzz_write_input("host", data, size);
	if (!path)
		return 0;

	struct snrh_trace t;
	snrh_trace_init(&t);
	json_object_clear(t.meta);
	char err[700];
	bool truncated = false;
	if (snrh_trace_read_partial(&t, path, &truncated, err, sizeof(err)) == 0) {
		if (truncated)
			snrh_trace_rebuild_threads(&t);
		char *text = NULL;
		size_t len = 0;
		FILE *mem = open_memstream(&text, &len);
		struct snrh_report_opts o = {.top = 3, .truncated = truncated ? err : NULL};
		if (mem) {
			snrh_report(&t, &o, mem);
			o.json = 1; /* and the --json document (on/off-device) */
			snrh_report(&t, &o, mem);
			fclose(mem);
		}
		free(text);
		json_t *ev = json_array();
		snrh_trace_events(&t, ev);
		json_decref(ev);
	}
	snrh_trace_free(&t);
	unlink(path);
	return 0;
}

#ifdef FUZZ_STANDALONE
int main(int argc, char **argv) { return fuzz_replay_corpus("fuzz_host_trace", argc, argv); }
#endif
