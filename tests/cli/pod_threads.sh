#!/usr/bin/env bash
# snr replay POD --threads N (docs/recording.md, "Replaying a pod"): each
# chip's own parts of a pod's replay (loading its trace, checking its end
# state, writing its metrics file) and the chips' private stretches of the
# timing simulation run on N threads, its DMAs and waits in order on one; the
# output must not depend on N.
# - a 4-chip ring all-reduce (workloads/allreduce.c, main's first 20,000
#   instructions per chip: the setup, the collective's DMAs and waits, part of
#   the check) and an 8-chip All-Gather (workloads/allgather.c, the gather's
#   whole call per chip) recorded with `snr record --pod`;
# - replayed with --threads 1, 2, 3 and 8: stdout, --json and every file of
#   -o MSET compared byte for byte with --threads 1's; the table equals the
#   replay's without --threads; stderr says how many threads ran the chips'
#   parts, counted by their kernel thread ids: min(N, chips), so a run that
#   fell back to one thread fails, and between 1 and that many ran the
#   private stretches (tests/test_pod_crew.c checks that the crew's threads
#   run at once);
# - refused with exit 2 naming --threads: 0, -1, 1.5, 2x, an empty value,
#   more than 1024, and --threads with a trace that is not a pod.
# usage: pod_threads.sh SNR SRCDIR
. "$(dirname "$0")/lib.sh"
. "$(dirname "$0")/../gdb_device.sh"
. "$(dirname "$0")/pod_same_threads.sh"
SRC=${2:?usage: pod_threads.sh SNR SRCDIR}

"$SNR" cc "$SRC/workloads/allreduce.c" -DELEMS=1024 -o "$T/ar.elf" || fail "snr cc allreduce"
"$SNR" cc "$SRC/workloads/allgather.c" -o "$T/ag.elf" || fail "snr cc allgather"

# record NAME ELF CHIPS ARGS...: the pod into T/NAME.snrs
record() {
  local name=$1 elf=$2 n=$3
  shift 3
  gdb_device "$SNR" "$T" "$elf" --chips "$n"
  run "$SNR" record --pod --target tcp:127.0.0.1:$PORT --elf "$elf" "$@" -o "$T/$name.snrs"
  expect_rc 0
  wait "$DEV" || fail "$name: the device exited $? after the recording: $(tail -3 "$T/dev.err")"
}
record ar4 "$T/ar.elf" 4 --breakpoint main --count 20000
record ag8 "$T/ag.elf" 8 --breakpoint gather --until-return --count 10M

# the pods are worth comparing: every chip verified, with DMAs inside the windows
check_pod() { # NAME CHIPS
  python3 - "$T/$1.base.json" "$2" <<'PYEOF' || fail "$1: the replay without --threads"
import json, sys
j, n = json.load(open(sys.argv[1])), int(sys.argv[2])
assert j["verified"] and len(j["chips"]) == n, j
assert all(c["verified"] and c["end_state_checked"] and c["dma_count"] > 0 for c in j["chips"]), j["chips"]
PYEOF
}

for pod in ar4:4 ag8:8; do
  name=${pod%:*} n=${pod#*:}
  run "$SNR" replay "$T/$name.snrs"
  expect_rc 0
  cp "$T/out" "$T/$name.base.txt"
  run "$SNR" replay "$T/$name.snrs" --json
  expect_rc 0
  cp "$T/out" "$T/$name.base.json"
  check_pod "$name" "$n"
  for t in 1 2 3 8; do
    want=$((t < n ? t : n))
    run "$SNR" replay "$T/$name.snrs" --threads "$t"
    expect_rc 0
    cp "$T/out" "$T/$name.$t.txt"
    grep -q "^snr: replay: $want threads\? ran the chips' own parts" "$T/err" ||
      fail "$name --threads $t: stderr does not say $want threads ran: $(cat "$T/err")"
    cmp -s "$T/$name.$t.txt" "$T/$name.base.txt" || fail "$name --threads $t: stdout differs from the replay without --threads: $(diff "$T/$name.base.txt" "$T/$name.$t.txt" | head -5)"
    # --json and -o MSET, the set always at one path (--json names it)
    rm -rf "$T/m.mset"
    run "$SNR" replay "$T/$name.snrs" --threads "$t" --json -o "$T/m.mset"
    expect_rc 0
    grep -q "^snr: replay: $want threads\? ran" "$T/err" || fail "$name --threads $t --json: $(cat "$T/err")"
    sim_threads_said "$name --threads $t -o" "$want"
    mv "$T/out" "$T/$name.$t.json"
    mv "$T/m.mset" "$T/$name.$t.mset"
    [ "$(ls "$T/$name.$t.mset" | grep -c '^window-[0-9]*\.snrm$')" -eq "$n" ] || fail "$name --threads $t: the set has not $n metrics files: $(ls "$T/$name.$t.mset")"
    if [ "$t" != 1 ]; then
      cmp -s "$T/$name.1.json" "$T/$name.$t.json" || fail "$name --threads $t: --json differs from --threads 1's: $(diff "$T/$name.1.json" "$T/$name.$t.json" | head -5)"
      for f in "$T/$name.1.mset"/*; do
        cmp -s "$f" "$T/$name.$t.mset/$(basename "$f")" || fail "$name --threads $t: $(basename "$f") of -o MSET differs from --threads 1's"
      done
      [ "$(ls "$T/$name.1.mset" | wc -l)" -eq "$(ls "$T/$name.$t.mset" | wc -l)" ] || fail "$name --threads $t: the sets hold different files"
    fi
  done
  # the metrics set is the pod's: analyze pod reads it
  run "$SNR" analyze pod "$T/$name.8.mset"
  expect_rc 0
  expect_out "pod of $n chips"
done

# bad values, named
for bad in 0 -1 1.5 2x "" 1025 99999999999999999999; do
  run "$SNR" replay "$T/ar4.snrs" --threads "$bad"
  expect_rc 2
  expect_err "--threads"
  [ ! -s "$T/out" ] || fail "--threads '$bad': refused but printed $(head -c 300 "$T/out")"
done
run "$SNR" replay "$T/ar4.snrs/window-0.snrt" --threads 2
expect_rc 2
expect_err "--threads is taken with a pod recording"
echo "ok"
