#!/usr/bin/env bash
# snr record --pod --method sim (docs/recording.md, "A pod"): each chip's
# window simulated in the GRM and checked against `snr device --gdb`; a chip
# whose simulation reaches a ta.wait for a peer's signal runs that wait on the
# device (which runs the peers until it passes) and is simulated on from there.
# - windows that span the whole ring all-reduce (workloads/allreduce.c) on 4
#   and 8 chips, and on 4 with chip 1 late (-DLATE): the set's manifest and
#   every chip's trace (`trace dump --json`, and `trace info --json` but for
#   the method, the time, the target's port and the method's own counts) are
#   those --method step writes; stderr says every chip was simulated past its
#   waits on peers, none stepped;
# - a ring where a peer's DMA lands in bytes the chip read before its wait
#   (peerwrite.c below: each round a chip reads its box, lets its predecessor
#   write it again, and reads it after the wait): the same, and stderr counts
#   the bytes that changed meanwhile, which the simulation took from the
#   device (without that, its copy is stale and a checkpoint mismatches);
# - a stub that cannot put its target back (tests/rec/rsp_proxy.py --write
#   unsupported): nothing is put back, the recording succeeds.
# usage: pod_record_sim.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
SRC=${2:?usage: pod_record_sim.sh SNR SRCDIR}

"$SNR" cc -g "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"
"$SNR" cc -g "$SRC/workloads/allreduce.c" -DLATE=2000 -o "$T/arl.elf" || fail "snr cc allreduce -DLATE"
cat >"$T/peerwrite.c" <<'EOF'
/* A ring of chips passing a box: each round a chip reads its box, lets its
 * predecessor write it again (a credit), writes its successor's box once that
 * one has read its own, and waits for its predecessor's write. */
#include <stdint.h>
#include <stdio.h>
#include "ta1.h"
#define WORDS 1024
#define ROUNDS 4
#define V_MINE TA_VMEM_BASE
#define V_BOX (TA_VMEM_BASE + WORDS * 4)
#define V_SUM (TA_VMEM_BASE + 2 * WORDS * 4)
enum { F_LOCAL = 1, F_SENT = 2, F_DATA = 3, F_CREDIT = 4 };
TA_HBM_DATA static float box[WORDS];
TA_HBM_DATA static float credit[4];
static float host[WORDS];
static uint64_t off(const void *p) { return ta_addr(p) - TA_HBM_BASE; }
__attribute__((noinline)) void exchange(uint64_t me, uint64_t n)
{
	uint64_t next = (me + 1) % n, prev = (me + n - 1) % n;
	for (int r = 0; r < ROUNDS; r++) {
		ta_dma(V_BOX, ta_addr(box), sizeof(box), F_LOCAL);
		ta_wait(F_LOCAL, 1);
		ta_vadd(V_SUM, V_SUM, V_BOX, WORDS);
		ta_dma_notify(ta_hbm_of(prev, off(credit)), V_BOX, 4, F_SENT, F_CREDIT);
		ta_wait(F_CREDIT, 1);
		ta_vscale(V_MINE, V_MINE, 2.0f, WORDS);
		ta_dma_notify(ta_hbm_of(next, off(box)), V_MINE, sizeof(box), F_SENT, F_DATA);
		ta_wait(F_SENT, 2);
		ta_wait(F_DATA, 1);
	}
}
int main(void)
{
	uint64_t me = ta_chip_id(), n = ta_num_chips(), prev = (me + n - 1) % n;
	for (int k = 0; k < WORDS; k++)
		host[k] = (float)(k % 7);
	ta_dma(V_MINE, ta_addr(host), sizeof(host), F_LOCAL);
	ta_wait(F_LOCAL, 1);
	ta_vscale(V_MINE, V_MINE, (float)(me + 1), WORDS);
	ta_vscale(V_SUM, V_MINE, 0.0f, WORDS);
	exchange(me, n);
	ta_dma(ta_addr(host), V_SUM, sizeof(host), F_LOCAL);
	ta_wait(F_LOCAL, 1);
	int wrong = 0; /* rounds 1 to 3 read the predecessor's data times 2, 4 and 8 */
	for (int k = 0; k < WORDS; k++)
		wrong += host[k] != (float)(k % 7) * (float)(prev + 1) * 14.0f;
	printf("peerwrite: chip %llu, %d wrong\n", (unsigned long long)me, wrong);
	return wrong != 0;
}
EOF
"$SNR" cc -g "$T/peerwrite.c" -o "$T/pw.elf" || fail "snr cc peerwrite.c"
echo '{"ici": {"topology": "ring"}}' >"$T/ring.json"

# rec ELF CHIPS BREAKPOINT METHOD OUT: records the pod with METHOD into OUT
rec() {
  gdb_device "$SNR" "$T" "$1" --chips "$2" --config "$T/ring.json"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$1" --config "$T/ring.json" --breakpoint "$3" \
    --until-return --count 10M --method "$4" -o "$5"
  expect_rc 0
  wait "$DEV" || fail "$5: the device exited $? after the recording detached: $(cat "$T/dev.err")"
  [ "$(grep -c ", 0 wrong$" "$T/dev.out")" -eq "$2" ] || fail "$5: after the recording: $(cat "$T/dev.out")"
}

# check NAME ELF CHIPS BREAKPOINT: --method sim records what --method step does, every chip simulated past its waits
check() {
  local name=$1 elf=$2 chips=$3 bp=$4
  rec "$elf" "$chips" "$bp" step "$T/$name.step.snrs"
  rec "$elf" "$chips" "$bp" sim "$T/$name.sim.snrs"
  cp "$T/err" "$T/$name.sim.err"
  if grep -q "stepped from" "$T/err"; then fail "$name: a chip was stepped, not simulated past its waits: $(cat "$T/err")"; fi
  for k in $(seq 0 $((chips - 1))); do
    grep -q "^chip $k: simulated, verified against the device at [0-9]* checkpoints$" "$T/err" ||
      fail "$name: stderr does not say chip $k was simulated: $(cat "$T/err")"
    grep -q "^chip $k: simulated past [1-9][0-9]* waits\? on a peer (the device ran each" "$T/err" ||
      fail "$name: chip $k was not simulated past a wait on a peer: $(cat "$T/err")"
  done
  cmp "$T/$name.step.snrs/set.json" "$T/$name.sim.snrs/set.json" || fail "$name: the manifests differ"
  for k in $(seq 0 $((chips - 1))); do
    for m in step sim; do
      "$SNR" trace dump "$T/$name.$m.snrs/window-$k.snrt" --json >"$T/$m.dump" || fail "$name.$m: trace dump chip $k"
      "$SNR" trace info "$T/$name.$m.snrs/window-$k.snrt" --json >"$T/$m.info" || fail "$name.$m: trace info chip $k"
    done
    cmp -s "$T/step.dump" "$T/sim.dump" ||
      fail "$name: chip $k's trace differs between the methods: $(diff "$T/step.dump" "$T/sim.dump" | head -4)"
    python3 - "$T/step.info" "$T/sim.info" <<'PY' || fail "$name: chip $k's trace info differs between the methods"
import json, sys
def norm(j):
    # what says the method or the time, the device's port, and the size the method's counts take
    for k in ("method", "target", "created"):
        j["meta"].pop(k, None) if "meta" in j else None
        j.pop(k, None)
    j.pop("file_bytes", None)
    for v in list(j.values()):
        if isinstance(v, dict):
            for k in ("method", "target", "created", "seconds", "debugger_requests", "bytes_fetched", "verification"):
                v.pop(k, None)
    return j
a, b = norm(json.load(open(sys.argv[1]))), norm(json.load(open(sys.argv[2])))
if a != b:
    for k in sorted(set(a) | set(b)):
        if a.get(k) != b.get(k):
            print(k, a.get(k), b.get(k), file=sys.stderr)
    sys.exit(1)
PY
  done
}

check ar4 "$T/ar.elf" 4 allreduce
check ar8 "$T/ar.elf" 8 allreduce
check arl4 "$T/arl.elf" 4 allreduce
check pw4 "$T/pw.elf" 4 exchange
# the bytes a peer wrote into a box its chip had read: taken from the device after the wait
grep -q "^chip [0-3]: simulated past [1-9][0-9]* waits\? on a peer (the device ran each wait; [1-9][0-9]* bytes" \
  "$T/pw4.sim.err" || fail "pw4: no chip reloaded the bytes its peer wrote: $(cat "$T/pw4.sim.err")"

# a stub that cannot write registers or memory: nothing is put back, the recording succeeds
gdb_device "$SNR" "$T" "$T/ar.elf" --chips 4 --config "$T/ring.json"
python3 "$SRC/tests/rec/rsp_proxy.py" --stub "$PORT" --write unsupported --log "$T/px.log" >"$T/px.out" &
PX=$!
for _ in $(seq 100); do grep -q 127.0.0.1 "$T/px.out" 2>/dev/null && break; sleep 0.05; done
PXPORT=$(cut -d: -f2 "$T/px.out")
run "$SNR" record --pod --target tcp:127.0.0.1:$PXPORT --elf "$T/ar.elf" --config "$T/ring.json" --breakpoint allreduce \
  --until-return --count 10M --method sim -o "$T/px.snrs"
expect_rc 0
if grep -q "changed [GPMX]: unsupported" "$T/px.log"; then fail "the recorder tried to put the target back: $(cat "$T/px.log")"; fi
expect_err "chip 0: simulated past"
cmp "$T/ar4.step.snrs/set.json" "$T/px.snrs/set.json" || fail "through the proxy: the manifest differs"
kill "$DEV" "$PX" 2>/dev/null
wait "$DEV" "$PX" 2>/dev/null
exit 0
