#!/usr/bin/env bash
# A pod of chips that signal each other and share ports and links
# (docs/ta1-timing.md, "The pod: ports and links"; docs/ta1-isa.md,
# ta.dma.notify):
# - the ring all-reduce (workloads/allreduce.c) on 2, 4 and 8 chips, all-to-all
#   and ring, functional and timed: every chip's result is the sum of all;
#   with chip 1 late, every other chip's collective takes the lateness longer;
# - known answers: All-Gather on a ring takes three shards' time on a link where all-to-all takes
#   one; k chips pulling 1 MiB each from chip 0's HBM port of
#   100 B/cycle (links faster) take k times as long as one;
# - on every timed run, no port or link moved more than its bandwidth times
#   its busy time (the --stats table's B/busy column);
# - a pod-wide deadlock faults naming every chip's wait; a torus that does not
#   fit the chips is refused.
# usage: pod.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
SRC=${2:?usage: pod.sh SNR SRCDIR}

# Every resource line of --stats: B/busy <= B/cycle (a tiny float slack).
check_fabric() { # stderr file
  awk '/^port or link/ {t = 1; next}
       t && NF >= 6 { bw = $(NF-4); rate = $NF; n++
                      if (rate > bw * (1 + 1e-9)) { print "over bandwidth: " $0; bad = 1 } }
       END { if (!n) { print "no port or link moved bytes"; bad = 1 } exit bad }' "$1" ||
    fail "fabric invariant: $(cat "$1" | tail -20)"
}

"$SNR" cc "$SRC/workloads/allreduce.c" -o "$T/ar.elf" || fail "snr cc allreduce"
"$SNR" cc "$SRC/workloads/allreduce.c" -DLATE=20000 -o "$T/arl.elf" || fail "snr cc allreduce -DLATE"
echo '{"ici": {"topology": "ring"}}' >"$T/ring.json"
for n in 2 4 8; do
  for cfg in "" "--config $T/ring.json"; do
    for mode in "" --timing; do
      # shellcheck disable=SC2086
      run "$SNR" device "$T/ar.elf" --chips $n $cfg $mode --stats
      expect_rc 0
      [ "$(grep -c ", 0 wrong$" "$T/out")" -eq "$n" ] || fail "all-reduce on $n chips $cfg $mode: $(cat "$T/out")"
      [ "$mode" = --timing ] && check_fabric "$T/err"
    done
  done
done
# the ring's links: 4 chips, every link of the ring carried the same bytes, none other exists
run "$SNR" device "$T/ar.elf" --chips 4 --config "$T/ring.json" --timing --stats
links=$(grep -c '^link ' "$T/err")
[ "$links" -eq 4 ] || fail "a ring all-reduce on 4 chips used $links links, want 4 (each i->i+1): $(grep '^link' "$T/err")"
for l in "0->1" "1->2" "2->3" "3->0"; do grep -q "^link $l " "$T/err" || fail "no traffic on link $l"; done

# All-Gather on a ring of 4 (workloads/allgather.c, 768 KiB shards): the shard two hops away goes clockwise, so
# each link i->i+1 carries three shards at 50/3 B/cycle each; the gather then takes three shards' time on one link
# (3 x 15,729 cycles) where all-to-all takes one
"$SNR" cc "$SRC/workloads/allgather.c" -o "$T/ag.elf" || fail "snr cc allgather"
for topo in all-to-all ring; do
  echo "{\"ici\": {\"topology\": \"$topo\"}}" >"$T/$topo.json"
  run "$SNR" device "$T/ag.elf" --chips 4 --timing --config "$T/$topo.json" --stats
  expect_rc 0
  check_fabric "$T/err"
  gather=$(awk '/setup/ {gsub(",", ""); for (i = 1; i <= NF; i++) { if ($i == "setup") s = $(i+1); if ($i == "total") t = $(i+1) } print t - s}' "$T/out")
  shards=$([ $topo = ring ] && echo 3 || echo 1)
  [ "$gather" -ge $((shards * 15729)) ] && [ "$gather" -le $((shards * 15729 + 700)) ] ||
    fail "All-Gather on $topo: the gather took $gather cycles, want $shards x 15,729 plus a DMA's base latency: $(cat "$T/out")"
done

# chip 1 late: the others wait for it
run "$SNR" device "$T/arl.elf" --chips 4 --timing
expect_rc 0
late=$(awk '/chip 1 of 4/ {print $(NF-3)}' "$T/out")
on_time=$(awk '/chip 0 of 4/ {print $(NF-3)}' "$T/out")
[ -n "$late" ] && [ -n "$on_time" ] && [ "$on_time" -gt $((late + 20000)) ] ||
  fail "with chip 1 late, chip 0's all-reduce took $on_time cycles, chip 1's $late: $(cat "$T/out")"

# the waits for the late chip are the peer cause: chip 0's peer stall holds the lateness, chip 1 has little;
# the profile says the collective is peer-bound
run "$SNR" device "$T/arl.elf" --chips 4 --timing --stats
expect_rc 0
col=$(awk '/^chip +cycles/ {for (i = 1; i <= NF; i++) if ($i == "peer") print i; exit}' "$T/err")
[ -n "$col" ] || fail "--stats has no peer column: $(grep '^chip' "$T/err")"
p0=$(awk -v c="$col" '/^chip +cycles/ {t = 1; next} t && $1 == 0 {print $c; exit}' "$T/err")
p1=$(awk -v c="$col" '/^chip +cycles/ {t = 1; next} t && $1 == 1 {print $c; exit}' "$T/err")
[ "$p0" -gt 150000 ] && [ "$p1" -lt $((p0 / 10)) ] || fail "peer stall: chip 0 $p0, chip 1 (late) $p1"
run "$SNR" profile "$T/arl.elf" --chips 4 --json
expect_rc 0
python3 - "$T/out" <<'PY' || fail "profile of the late all-reduce"
import json, sys
f = {x["name"]: x for x in json.load(open(sys.argv[1]))["functions"]}["allreduce"]
assert f["bound"] == "peer" and f["stall_cycles"]["peer"] > 0.5 * f["total_cycles"], f
PY

# k chips pulling 1 MiB each from chip 0's HBM port
cc_ta1 pull <<'C'
#include <stdio.h>
#include "ta1.h"
#ifndef PULLERS
#define PULLERS 1
#endif
TA_HBM_DATA static unsigned char src[1 << 20];
int main(void)
{
	uint64_t me = ta_chip_id();
	if (me == 0 || me > PULLERS)
		return 0;
	uint64_t t0 = ta_cycles();
	ta_dma(TA_VMEM_BASE, ta_hbm_of(0, (uint64_t)(uintptr_t)src - TA_HBM_BASE), sizeof(src), 0);
	ta_wait(0, 1);
	printf("chip %llu pulled in %llu cycles\n", (unsigned long long)me, (unsigned long long)(ta_cycles() - t0));
	return 0;
}
C
echo '{"dma": {"hbm_bytes_per_cycle": 100, "ici_bytes_per_cycle": 1000}}' >"$T/port.json"
t1=""
for k in 1 2 3; do
  "$SNR" cc "$T/pull.c" -DPULLERS=$k -o "$T/pull$k.elf" || fail "snr cc pull $k"
  run "$SNR" device "$T/pull$k.elf" --chips 4 --timing --config "$T/port.json" --stats
  expect_rc 0
  check_fabric "$T/err"
  [ "$(grep -c 'pulled in' "$T/out")" -eq "$k" ] || fail "$k pullers: $(cat "$T/out")"
  worst=$(awk '/pulled in/ {print $(NF-1)}' "$T/out" | sort -n | tail -1)
  # one puller: base latency 500, the transfer ceil(1 MiB / 100) = 10486, and the
  # few instructions between the two ta_cycles(); the others add k - 1 transfers
  [ -z "$t1" ] && t1=$worst && fixed=$((worst - 10486))
  xfer=$((worst - fixed))
  want=$(((k * 1048576 + 99) / 100))
  [ "$xfer" -ge $((want - 1)) ] && [ "$xfer" -le $((want + 1)) ] ||
    fail "$k chips pulling 1 MiB from one 100 B/cycle port: the last transferred for $xfer cycles, want $want (k x 1 MiB / 100)"
  [ "$fixed" -ge 500 ] && [ "$fixed" -le 520 ] || fail "one puller took $t1 cycles: $fixed besides the transfer"
  echo "$k puller(s): $worst cycles, $xfer of them transfer ($(awk -v a="$xfer" 'BEGIN {printf "%.3f", a / 10486}')x one)"
done

# a pod-wide deadlock: each chip waits for a signal only the other could send, after its own wait
cc_ta1 dead <<'C'
#include "ta1.h"
int main(void)
{
	ta_wait(5, 1);
	ta_dma_notify(ta_hbm_of(ta_chip_id() ^ 1, 0), TA_VMEM_BASE, 64, 0, 5);
	return 0;
}
C
for mode in "" --timing; do
  # shellcheck disable=SC2086
  run timeout 20 "$SNR" device "$T/dead.elf" --chips 2 $mode
  expect_rc 3
  expect_err "pod-wide deadlock"
  expect_err "chip 0 waits at pc 0x"
  expect_err "chip 1 waits at pc 0x"
  expect_err "for 1 completions on flag 5 (has 0)"
done

echo '{"chips": 6, "ici": {"topology": "torus", "torus_x": 4}}' >"$T/bad.json"
run "$SNR" device "$T/ar.elf" --config "$T/bad.json" --timing
expect_rc 1; expect_err "ici.torus_x (4) must divide the pod's 6 chips"
echo '{"ici": {"topology": "torus", "torus_x": 4}}' >"$T/t4.json"
run "$SNR" device "$T/ar.elf" --config "$T/t4.json" --chips 6 --timing
expect_rc 1; expect_err "ici.torus_x (4) must divide the pod's 6 chips"
run "$SNR" device "$T/ar.elf" --config "$T/t4.json" --chips 8 --timing --stats
expect_rc 0; check_fabric "$T/err"
echo '{"ici": {"topology": "mesh"}}' >"$T/mesh.json"
run "$SNR" device "$T/ar.elf" --config "$T/mesh.json"
expect_rc 1; expect_err '"ici.topology" must be one of "all-to-all", "ring", "torus"'
echo ok
