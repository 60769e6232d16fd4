#!/usr/bin/env bash
# snr record --pod --method sim where a chip's checkpoint does not match the
# device (docs/recording.md, "A pod"): the chip is put back at its last good
# checkpoint and the rest of its window is stepped, the other chips stay
# simulated, the pod's trace set replays verified, and stderr names the chip,
# the checkpoint, its pc and source line. The mismatch is planted with
# `snr device --test-dma CHIP,INSTRET,ADDR,LEN` (a write into the chip's memory
# at one instruction count, as a DMA from outside the recording would land).
# - the ring all-reduce (workloads/allreduce.c, -O2) on 4 chips, the write
#   into chip 1's own vector, between its first wait on a peer and the ta.vadd
#   that reads it: chip 1 falls back at the checkpoint before its next
#   ta.dma.notify, and since the stride wrote those bytes, putting it back
#   undoes the write too: every chip's trace is the one --method step
#   records without it, and the program's result is right on every chip;
# - a peer's signal that reaches a chip while its stride is not yet verified
#   (sig.c below: chip 1 reads the cycle counter twice per iteration, so the
#   device steps its loop and passes the turn to chip 0, whose ta.dma.notify
#   raises chip 1's flag 5 inside the stride; the planted write makes that
#   stride's checkpoint mismatch): the flags written back keep the signal, so
#   chip 1's later ta_wait(5, 1) passes (written back as they were at the
#   checkpoint, the signal is lost and the pod deadlocks), and every trace is
#   the one --method step records with the same write;
# - a chip whose device blocks at a ta.wait the simulation passed (blk.c
#   below: the planted write lowers the count of local DMAs chip 1 reads, so
#   on the device its ta_wait(5, 2) needs chip 0's signal): stderr says it
#   blocked there, naming the wait's pc and line, keeps no signal, and the
#   traces are --method step's with the same write;
# - the same through a stub that cannot write registers (tests/rec/rsp_proxy.py
#   --write unsupported): the recording fails naming chip 1, the checkpoint,
#   and the register packet by its name and length, not its hex.
# usage: pod_record_recover.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
SRC=${2:?usage: pod_record_recover.sh SNR SRCDIR}
DEV=""; PX=""
trap 'kill $DEV $PX 2>/dev/null; rm -rf "$T"' EXIT

"$SNR" cc -O2 -g "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"
echo '{"ici": {"topology": "ring"}}' >"$T/ring.json"
cat >"$T/sig.c" <<'EOF'
/* Two chips: chip 1 lets chip 0 go, sums a table while it reads the cycle
 * counter, then waits for chip 0's signal and answers it. */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

#define N 400
enum { F_SENT = 2, F_GO = 4, F_X = 5, F_DONE = 6 };

TA_HBM_DATA static uint64_t box[8];
static uint64_t table[N];

static uint64_t off(const void *p) { return ta_addr(p) - TA_HBM_BASE; }

__attribute__((noinline)) uint64_t work(uint64_t me)
{
	uint64_t s = 0, t = 0;
	if (me == 0) {
		ta_wait(F_GO, 1);
		ta_dma_notify(ta_hbm_of(1, off(box)), ta_addr(table), sizeof(box), F_SENT, F_X);
		ta_wait(F_DONE, 1);
		ta_wait(F_SENT, 1);
		return 0;
	}
	ta_dma_notify(ta_hbm_of(0, off(box)), ta_addr(table), sizeof(box), F_SENT, F_GO);
	for (uint64_t k = 0; k < N; k++) {
		t += ta_cycles();
		s += table[k];
		t ^= ta_cycles();
	}
	ta_wait(F_X, 1);
	ta_dma_notify(ta_hbm_of(0, off(box)), ta_addr(table), sizeof(box), F_SENT, F_DONE);
	ta_wait(F_SENT, 2);
	return s + (t & 1);
}

int main(void)
{
	uint64_t me = ta_chip_id();
	for (uint64_t k = 0; k < N; k++)
		table[k] = k * 3 + 1;
	uint64_t s = work(me);
	printf("sig: chip %llu sum %llu\n", (unsigned long long)me, (unsigned long long)s);
	return 0;
}
EOF
"$SNR" cc -O2 -g "$T/sig.c" -o "$T/sig.elf" || fail "snr cc sig.c"
cat >"$T/blk.c" <<'EOF'
/* Chip 1 DMAs locally as often as cfg says and waits for two completions on
 * one flag: its own, or chip 0's signal after chip 0 read the cycle counter
 * 300 times. */
#include <stdint.h>
#include <stdio.h>

#include "ta1.h"

enum { F_SENT = 2, F_IN = 5 };

TA_HBM_DATA static uint64_t box[8];
static uint64_t src[8], dst[8];
static volatile uint64_t cfg = 2;

static uint64_t off(const void *p) { return ta_addr(p) - TA_HBM_BASE; }

__attribute__((noinline)) uint64_t work(uint64_t me)
{
	if (me == 0) {
		uint64_t t = 0;
		for (uint64_t k = 0; k < 300; k++)
			t += ta_cycles();
		ta_dma_notify(ta_hbm_of(1, off(box)), ta_addr(src), sizeof(box), F_SENT, F_IN);
		ta_wait(F_SENT, 1);
		return t & 1;
	}
	uint64_t n = cfg & 3;
	for (uint64_t k = 0; k < n; k++)
		ta_dma(ta_addr(dst), ta_addr(src), sizeof(dst), F_IN);
	ta_wait(F_IN, 2);
	uint64_t s = 0;
	for (uint64_t k = 0; k < 8; k++)
		s += dst[k];
	return s + n;
}

int main(void)
{
	uint64_t me = ta_chip_id();
	for (uint64_t k = 0; k < 8; k++)
		src[k] = k + 1;
	uint64_t s = work(me);
	printf("blk: chip %llu %llu\n", (unsigned long long)me, (unsigned long long)s);
	return 0;
}
EOF
"$SNR" cc -O2 -g "$T/blk.c" -o "$T/blk.elf" || fail "snr cc blk.c"

# rec NAME ELF CHIPS BREAKPOINT METHOD [DEVICE ARGS...]: records the pod into $T/NAME.snrs, stderr in $T/NAME.err
rec() {
  local name=$1 elf=$2 chips=$3 bp=$4 method=$5
  shift 5
  gdb_device "$SNR" "$T" "$elf" --chips "$chips" --config "$T/ring.json" "$@"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$elf" --config "$T/ring.json" --breakpoint "$bp" \
    --until-return --count 10M --method "$method" -o "$T/$name.snrs"
  cp "$T/err" "$T/$name.err"
  [ "$rc" -eq 0 ] || fail "$name: exit status $rc: $(cat "$T/err")"
  wait "$DEV" || fail "$name: the device exited $? after the recording detached: $(cat "$T/dev.err")"
  DEV=""
  cp "$T/dev.out" "$T/$name.out"
}

# replayed NAME CHIPS: the pod replay verifies every chip
replayed() {
  "$SNR" replay "$T/$1.snrs" >"$T/$1.replay" 2>&1 || fail "$1: snr replay: $(cat "$T/$1.replay")"
  grep -q "^verified      every chip's pcs matched; end state matches the recording on $2 of $2 chips" \
    "$T/$1.replay" || fail "$1: the pod replay did not verify every chip: $(cat "$T/$1.replay")"
}

# same A B CHIPS: every chip's trace (trace dump --json) is the same in both sets
same() {
  for k in $(seq 0 $(($3 - 1))); do
    "$SNR" trace dump "$T/$1.snrs/window-$k.snrt" --json >"$T/a.dump" || fail "$1: trace dump chip $k"
    "$SNR" trace dump "$T/$2.snrs/window-$k.snrt" --json >"$T/b.dump" || fail "$2: trace dump chip $k"
    cmp -s "$T/a.dump" "$T/b.dump" || fail "$1 and $2: chip $k's traces differ: $(diff "$T/a.dump" "$T/b.dump" | head -4)"
  done
}

# hit_instret ELF CHIPS PC CHIP: chip CHIP's instruction count when it first reaches PC (a continue of that chip
# alone to a breakpoint; the stop reply carries every register, instret as register 0x32)
hit_instret() {
  gdb_device "$SNR" "$T" "$1" --chips "$2" --config "$T/ring.json"
  python3 - "$PORT" "$3" "$4" <<'PY' || fail "reading chip $4's instruction count at $3"
import socket, sys
port, pc, chip = int(sys.argv[1]), int(sys.argv[2], 0), int(sys.argv[3])
s = socket.create_connection(("127.0.0.1", port), timeout=30)
buf = b""
def cmd(p):
    global buf
    s.sendall(b"$" + p + b"#" + b"%02x" % (sum(p) & 0xFF))
    while True:
        d, h = buf.find(b"$"), buf.find(b"#")
        if d >= 0 and h > d and len(buf) >= h + 3:
            pkt, buf = buf[d + 1:h], buf[h + 3:]
            s.sendall(b"+")
            return pkt
        got = s.recv(65536)
        if not got:
            sys.exit("the device hung up")
        buf += got
cmd(b"qSupported")
if cmd(b"Z0,%x,4" % pc) != b"OK":
    sys.exit("no breakpoint")
stop = cmd(b"vCont;c:%x" % (chip + 1))
regs = dict(f.split(b":", 1) for f in stop[3:].split(b";") if b":" in f)
print(int.from_bytes(bytes.fromhex(regs[b"32"].decode()), "little"))
PY
  kill "$DEV" 2>/dev/null
  wait "$DEV" 2>/dev/null
  DEV=""
}

# ---- the all-reduce, a write into chip 1's vector inside a stride
rec ar4 "$T/ar.elf" 4 allreduce step
pyjq() { python3 -c "import json,sys
for l in open(sys.argv[1]):
    s = json.loads(l)
    $1" "${@:2}"; }
"$SNR" trace dump "$T/ar4.snrs/window-1.snrt" --json >"$T/ar4.1.dump" || fail "trace dump ar4 chip 1"
BP=$(pyjq 'print(s["pc"]); break' "$T/ar4.1.dump")
# the first ta.vadd and the vector bytes it reads first
VADD=$(pyjq 'if s["disasm"].startswith("ta.vadd"): print(s["index"], s["memory"][0]["addr"]); break' "$T/ar4.1.dump")
set -- $VADD
[ $# -eq 2 ] || fail "ar4: chip 1's window has no ta.vadd that reads its vector: $(head -c 600 "$T/ar4.1.dump")"
AT=$1 ADDR=$2
W0=$(hit_instret "$T/ar.elf" 4 "$BP" 1)
[ -n "$W0" ] || fail "ar4: no instruction count at chip 1's hit"
rec arp "$T/ar.elf" 4 allreduce sim --test-dma "1,$((W0 + AT - 1)),$ADDR,64"
grep -q "^chip 1: simulated, and stepped from instruction [0-9]* on (verified to there): the device did not match the simulation at the checkpoint at instruction [0-9]* (pc 0x[0-9a-f]*, .*allreduce.c:[0-9]* (ring_step)): the target diverged from the simulation by instruction [0-9]*: the byte the window wrote at $(printf '0x%x' "$ADDR") is 0xa5 on the target" \
  "$T/arp.err" || fail "arp: stderr does not name chip 1's checkpoint that did not match: $(cat "$T/arp.err")"
for k in 0 2 3; do
  grep -q "^chip $k: simulated, verified against the device at [0-9]* checkpoints$" "$T/arp.err" ||
    fail "arp: chip $k was not simulated to its end: $(cat "$T/arp.err")"
done
"$SNR" trace info "$T/arp.snrs/window-1.snrt" >"$T/arp.info" || fail "arp: trace info chip 1"
grep -q "^fallback     instructions [0-9]* on recorded by stepping" "$T/arp.info" ||
  fail "arp: chip 1's trace says no fallback: $(cat "$T/arp.info")"
replayed arp 4
same ar4 arp 4 # the write landed in bytes the stride wrote: putting chip 1 back undid it
[ "$(grep -c ", 0 wrong$" "$T/arp.out")" -eq 4 ] || fail "arp: after the recording: $(cat "$T/arp.out")"
echo "all-reduce: $(grep '^chip 1: simulated, and stepped' "$T/arp.err" | cut -c1-200)"

# ---- sig.c: chip 0's signal reaches chip 1 inside the stride whose checkpoint does not match
rec sig "$T/sig.elf" 2 work step
"$SNR" trace dump "$T/sig.snrs/window-1.snrt" --json >"$T/sig.1.dump" || fail "trace dump sig chip 1"
# the window's first instruction count, from its first cycle read (no timing model: the cycle counter is instret)
W0=$(pyjq 'if "cycle" in s["registers"]: print(int(s["registers"]["cycle"], 16) - s["index"]); break' "$T/sig.1.dump")
# instruction 266 loads table[31]: chip 1's 256th device step of its turn falls in that stride (turns of 256 steps,
# recorder/pod.c), so chip 0 runs there; the write makes its checkpoint, at instruction 269, mismatch
LD=$(pyjq 'if s["index"] == 266 and s["disasm"].startswith("ld ") and s["memory"]: print(s["memory"][0]["addr"]); break' \
  "$T/sig.1.dump")
[ -n "$W0" ] && [ -n "$LD" ] || fail "sig: chip 1's window is not the one this test expects: $(sed -n 16,20p "$T/sig.1.dump")"
PLANT="1,$((W0 + 266)),$LD,8"
rec sigstep "$T/sig.elf" 2 work step --test-dma "$PLANT"
rec sigsim "$T/sig.elf" 2 work sim --test-dma "$PLANT"
grep -q "^chip 1: simulated, and stepped from instruction 266 on (verified to there): the device did not match the simulation at the checkpoint at instruction 269 (pc 0x[0-9a-f]*, .*sig.c:[0-9]* (work)): " \
  "$T/sigsim.err" || fail "sig: chip 1 did not fall back at instruction 269: $(cat "$T/sigsim.err")"
grep -q "^chip 1: 1 signal of peers that reached it after instruction 266 kept in its sync flags" "$T/sigsim.err" ||
  fail "sig: chip 0's signal did not reach chip 1 inside the stride (if the turns changed, move the write): $(cat "$T/sigsim.err")"
grep -q "^chip 0: simulated, verified against the device" "$T/sigsim.err" || fail "sig: chip 0: $(cat "$T/sigsim.err")"
replayed sigsim 2
same sigstep sigsim 2
cmp -s "$T/sigstep.out" "$T/sigsim.out" || fail "sig: the program's output differs: $(cat "$T/sigstep.out" "$T/sigsim.out")"
echo "sig: $(grep '^chip 1: 1 signal' "$T/sigsim.err")"

# ---- blk.c: chip 1's device blocks at a wait its simulation passed (chip 0 signals only later)
rec blk "$T/blk.elf" 2 work step
"$SNR" trace dump "$T/blk.snrs/window-1.snrt" --json >"$T/blk.1.dump" || fail "trace dump blk chip 1"
CFG=$(pyjq 'if s["disasm"].startswith("ld ") and s["memory"]: print(s["index"], s["memory"][0]["addr"]); break' \
  "$T/blk.1.dump")
WAIT=$(pyjq 'if s["disasm"].startswith("ta.wait"): print(s["pc"]); break' "$T/blk.1.dump")
set -- $CFG
[ $# -eq 2 ] && [ -n "$WAIT" ] || fail "blk: chip 1's window is not the one this test expects: $(head -c 600 "$T/blk.1.dump")"
W0=$(hit_instret "$T/blk.elf" 2 "$(pyjq 'print(s["pc"]); break' "$T/blk.1.dump")" 1)
[ -n "$W0" ] || fail "blk: no instruction count at chip 1's hit"
BPLANT="1,$((W0 + $1 - 1)),$2,1" # cfg's low byte becomes 0xa5: one DMA, not two
rec blkstep "$T/blk.elf" 2 work step --test-dma "$BPLANT"
rec blksim "$T/blk.elf" 2 work sim --test-dma "$BPLANT"
grep -q "^chip 1: simulated, and stepped from instruction [0-9]* on (verified to there): the device blocked at a ta.wait the simulation had passed (pc $(printf '0x%x' "$WAIT"), .*blk.c:[0-9]* (work)), on its way to the checkpoint at instruction [0-9]*: " \
  "$T/blksim.err" || fail "blk: stderr does not say chip 1 blocked at its wait: $(cat "$T/blksim.err")"
if grep -q "signals\? of peers" "$T/blksim.err"; then fail "blk: a signal no peer sent was kept: $(cat "$T/blksim.err")"; fi
replayed blksim 2
same blkstep blksim 2
cmp -s "$T/blkstep.out" "$T/blksim.out" || fail "blk: the program's output differs: $(cat "$T/blkstep.out" "$T/blksim.out")"
echo "blk: $(grep '^chip 1: simulated, and stepped' "$T/blksim.err" | cut -c1-200)"

# ---- the same through a stub that cannot write registers: the recording fails, naming the packet
gdb_device "$SNR" "$T" "$T/sig.elf" --chips 2 --config "$T/ring.json" --test-dma "$PLANT"
python3 "$SRC/tests/rec/rsp_proxy.py" --stub "$PORT" --write unsupported --log "$T/px.log" >"$T/px.out" &
PX=$!
for _ in $(seq 100); do grep -q 127.0.0.1 "$T/px.out" 2>/dev/null && break; sleep 0.05; done
PXPORT=$(cut -d: -f2 "$T/px.out")
run "$SNR" record --pod --target tcp:127.0.0.1:$PXPORT --elf "$T/sig.elf" --config "$T/ring.json" --breakpoint work \
  --until-return --count 10M --method sim -o "$T/px.snrs"
expect_rc 1
expect_err "chip 1: "
expect_err "writing back the registers: rsp: writing the registers (G, the "
expect_err "-byte register block): expected OK, got \"\""
expect_err "putting the target back at instruction 266 after: the target diverged from the simulation by instruction 269"
[ "$(wc -L <"$T/err")" -lt 1200 ] || fail "a line of the error is $(wc -L <"$T/err") characters: $(head -c 600 "$T/err")"
grep -q "changed G: unsupported" "$T/px.log" || fail "the recorder never tried to write the registers: $(cat "$T/px.log")"
echo "no G: $(head -c 300 "$T/err")"
exit 0
