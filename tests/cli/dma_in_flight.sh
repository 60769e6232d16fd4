#!/usr/bin/env bash
# A DMA's source is read while its transfer runs, until the WAIT that
# consumes its completion; the functional device and the what-if copy it at
# the issue, so the end state cannot show a write into it in between. The
# common check (analyzer/reorder_check.c) refuses a move that places such a
# write before that WAIT, naming the writer and the DMA:
#   DMA move:  each iteration sends buf out (flag 2), works, waits, then
#              refills buf (flag 1). Moving the refill DMA up to its operands
#              (after ta_chip_id) puts it before the send's WAIT: it would
#              overwrite buf while the send still reads it.
#   WAIT move: in one iteration of eight a store writes the source of the DMA
#              right after its WAIT; deferring the WAIT statement to where the
#              other iterations first need the data puts that store before it.
# usage: dma_in_flight.sh SNR SOURCE_ROOT
. "$(dirname "$0")/lib.sh"
DEV=""
trap '[ -n "$DEV" ] && kill "$DEV" 2>/dev/null; rm -rf "$T"' EXIT
. "$(dirname "$0")/../gdb_device.sh"
record() { # name
  local name=$1
  "$SNR" cc -g -O2 "$T/$name.c" -o "$T/$name.elf" 2>"$T/cc.err" || fail "snr cc $name.c: $(cat "$T/cc.err")"
  gdb_device "$SNR" "$T" "$T/$name.elf"
  "$SNR" record --target tcp:127.0.0.1:"$PORT" --elf "$T/$name.elf" --breakpoint run --count 100000 \
    --until-return -o "$T/$name.snrt" --kill 2>"$T/rec.err" || fail "record $name: $(cat "$T/rec.err")"
  wait "$DEV"; DEV=""
  "$SNR" analyze suggest "$T/$name.snrt" --verify --rounds 2 --json >"$T/$name.json" 2>"$T/sug.err" \
    || fail "suggest $name: $(cat "$T/sug.err")"
}

# ---- a DMA move that would overwrite the source of a DMA in flight
cat >"$T/refill.c" <<'EOF2'
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define N 8
TA_HBM_DATA static uint64_t in[N][8] = {{1}, {2}, {3}, {4}, {5}, {6}, {7}, {8}};
TA_HBM_DATA static uint64_t out[N][8];
static uint64_t buf[8] = {100}, scratch[64];

__attribute__((noipa)) uint64_t work(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		scratch[i] = x = x * 31 + (uint64_t)i;
	return x;
}

__attribute__((noinline)) uint64_t run(void)
{
	uint64_t sum = 0;
	for (uint64_t t = 0; t < N; t++) {
		ta_dma(ta_addr(out[t]), ta_addr(buf), 64, 2); /* send buf out */
		uint64_t c = ta_chip_id();
		sum = work(sum);
		ta_wait(2, 1);
		ta_dma(ta_addr(buf), ta_addr(in[(t + c) % N]), 64, 1); /* refill it */
		ta_wait(1, 1);
		sum += buf[0];
	}
	return sum;
}

int main(void)
{
	printf("sum %llu\n", (unsigned long long)run());
	return 0;
}
EOF2
record refill
python3 - "$T/refill.json" "$(grep -n 'refill it' "$T/refill.c" | cut -d: -f1)" \
  "$(grep -n 'send buf out' "$T/refill.c" | cut -d: -f1)" <<'PY' || fail "planted DMA move"
import json, sys
d = json.load(open(sys.argv[1]))
refill, send = int(sys.argv[2]), int(sys.argv[3])
g = [m for m in d["moves"] if m["dma"]["source"]["line"] == refill]
assert len(g) == 1, d["moves"]
m = g[0]
r = m["reason"] or ""
assert m["confirmed"] is False and r.startswith("refused"), m
assert "still reads until the WAIT" in r and f"refill.c:{refill} (run)" in r and f"refill.c:{send} (run)" in r, r
assert not any(s["move"]["kind"] == "dma" and s["move"]["dma"]["source"]["line"] == refill
               for s in d["schedule"]["steps"]), d["schedule"]
print(f"planted DMA move refused: {r}")
PY

# ---- a WAIT move that would let a store overwrite the source of a DMA in flight
cat >"$T/send.c" <<'EOF2'
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define N 8
TA_HBM_DATA static uint64_t out[N][8];
static uint64_t buf[8], scratch[64];

__attribute__((noipa)) uint64_t work(uint64_t x)
{
	for (int i = 0; i < 64; i++)
		scratch[i] = x = x * 31 + (uint64_t)i;
	return x;
}

__attribute__((noinline)) uint64_t run(void)
{
	uint64_t sum = 0;
	for (uint64_t t = 0; t < N; t++) {
		ta_dma(ta_addr(out[t]), ta_addr(buf), 64, 1); /* send buf out */
		ta_wait(1, 1);
		if (t == 5)
			buf[1] = sum; /* writes the source right after the WAIT */
		sum = work(sum);
		buf[0] = sum;
	}
	return sum;
}

int main(void)
{
	printf("sum %llu\n", (unsigned long long)run());
	return 0;
}
EOF2
record send
python3 - "$T/send.json" "$(grep -n 'writes the source right after' "$T/send.c" | cut -d: -f1)" \
  "$(grep -n 'send buf out' "$T/send.c" | cut -d: -f1)" <<'PY' || fail "planted WAIT move"
import json, sys
d = json.load(open(sys.argv[1]))
store, send = int(sys.argv[2]), int(sys.argv[3])
# the compiler may give the iteration with the store a copy of the loop body of its own:
# the WAIT statement's move over the others (all but that one) is the one refused
w = [m for m in d["rounds"][0]["wait_moves"] if m["wait"]["source"]["function"] == "run" and m["instances"] > 1]
assert len(w) == 1 and w[0]["instances"] in (7, 8), d["rounds"][0]["wait_moves"]
assert w[0]["refused"] and not w[0]["applied"], w[0]
r = w[0]["reason"]
assert f"send.c:{store} (run)" in r and f"send.c:{send} (run)" in r and "before a WAIT has consumed" in r, r
assert not any(s["move"]["kind"] == "wait" and s["move"]["wait"]["pc"] == w[0]["wait"]["pc"]
               for s in d["schedule"]["steps"]), d["schedule"]
print(f"planted WAIT move refused: {r[:300]}")
PY
echo "ok"
