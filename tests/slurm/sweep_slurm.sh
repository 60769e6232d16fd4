#!/usr/bin/env bash
# snr sweep and snr check --shard on a real Slurm cluster of one node: MUNGE
# and slurmctld/slurmd from Debian's packages, configured here for localhost
# in a temporary folder (their own key, socket, ports, state and logs, so a
# system Slurm is left alone), torn down on any exit. Shows that:
#   - a sweep through --slurm (6 tasks under MaxArraySize=5: two array jobs and
#     an afterok gather) gives the same results as the local run;
#   - an array task cancelled with scancel is named (task and Slurm id), the
#     sweep says it is incomplete, and --resume --slurm reruns only that task;
#   - snr check --shard K/N as array tasks covers every trace once.
# Skips (77) with the reason when not root or the packages are absent, except
# under CI, where they are installed (scripts/install-deps) and it must run.
set -u
SNR=$(realpath "${1:?usage: sweep_slurm.sh SNR TRACES}")
TRACES=$(realpath "$2")
# shellcheck source=cluster.sh
. "$(dirname "$0")/cluster.sh"
slurm_cluster_start
cd "$T"
TR="$TRACES/ta1-decode-step.snrt"
GRID=(--param dma.hbm_bytes_per_cycle=300,600,1200 --param dma.base_latency_cycles=250,500)

# 1. local and Slurm: the same results
"$SNR" sweep "$TR" "${GRID[@]}" -j 2 -o "$T/local" >"$T/local.out" 2>&1 || fail "local sweep: $(cat "$T/local.out")"
timeout 240 "$SNR" sweep "$TR" "${GRID[@]}" --slurm --wait -o "$T/sl" >"$T/sl.out" 2>&1 ||
  fail "slurm sweep: $(cat "$T/sl.out")"
[ "$(grep -c 'submitted Slurm array job' "$T/sl.out")" = 2 ] || fail "6 tasks under MaxArraySize=5 are not two arrays: $(cat "$T/sl.out")"
grep -q 'submitted Slurm gather job .* (afterok:[0-9]*:[0-9]*)' "$T/sl.out" || fail "no afterok gather: $(cat "$T/sl.out")"
cmp -s "$T/local/results.json" "$T/sl/results.json" || fail "Slurm and local results differ: $(diff "$T/local/results.json" "$T/sl/results.json" | head)"
for f in "$T"/local/points/*.json; do
  cmp -s "$f" "$T/sl/points/$(basename "$f")" || fail "$(basename "$f") differs between Slurm and local"
done
ls "$T"/sl/logs/slurm-gather-*.log >/dev/null 2>&1 || fail "the gather job did not run"
grep -q 'best points' "$T"/sl/logs/slurm-gather-*.log || fail "gather log: $(cat "$T"/sl/logs/slurm-gather-*.log)"

# 2. a task cancelled: held at submission, one array task cancelled, the rest released
timeout 240 "$SNR" sweep "$TR" "${GRID[@]}" --slurm --sbatch-arg=--hold --wait -o "$T/cx" >"$T/cx.out" 2>&1 &
SW=$!
wait_for 60 grep -q 'submitted Slurm gather job' "$T/cx.out" || fail "no submission: $(cat "$T/cx.out")"
J1=$(sed -n 's/^submitted Slurm array job \([0-9]*\): tasks 0 .*/\1/p' "$T/cx.out")
[ -n "$J1" ] || fail "no first array job: $(cat "$T/cx.out")"
scancel "${J1}_3" || fail "scancel ${J1}_3"
for j in $(sed -n 's/^submitted Slurm \(array\|gather\) job \([0-9]*\).*/\2/p' "$T/cx.out"); do
  scontrol release "$j" || fail "scontrol release $j"
done
wait $SW; rc=$?
cx_logs() { for f in "$T"/cx/logs/*; do echo "== $f"; cat "$f"; done; grep "JobId=$J1" "$T/slurmctld.log"; }
[ $rc = 1 ] || fail "a sweep with a cancelled task exited $rc: $(cat "$T/cx.out"; cx_logs)"
grep -q "INCOMPLETE: 1 of 6 points missing (points 3; tasks 3 (Slurm ${J1}_3))" "$T/cx.out" ||
  fail "the cancelled task is not named: $(cat "$T/cx.out"; cx_logs)"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert not r["complete"] and r["missing"]==[3], r' \
  "$T/cx/results.json" || fail "results.json of the cancelled sweep"
timeout 240 "$SNR" sweep --resume "$T/cx" --slurm --wait >"$T/re.out" 2>&1 || fail "--resume: $(cat "$T/re.out")"
grep -q '1 of 6 tasks to run (3)' "$T/re.out" || fail "--resume does not rerun only task 3: $(cat "$T/re.out")"
grep -q 'submitted Slurm array job [0-9]*: tasks 3 (array indices 0-0)' "$T/re.out" || fail "resume submission: $(cat "$T/re.out")"
cmp -s "$T/local/results.json" "$T/cx/results.json" || fail "the resumed sweep differs from the local one"
[ -z "$(squeue -h 2>/dev/null)" ] || fail "jobs left in the queue: $(squeue)"

# 3. snr check --shard K/N as a 3-task array: every trace checked once
mkdir "$T/ck"
timeout 120 sbatch --wait --array=1-3 --output="$T/ck/%a.log" \
  --wrap="'$SNR' check '$TRACES' --shard \$SLURM_ARRAY_TASK_ID/3 --junit '$T/ck/'\$SLURM_ARRAY_TASK_ID.xml" \
  >"$T/ck.out" 2>&1 || fail "the sharded check failed: $(cat "$T/ck.out" "$T"/ck/*.log)"
"$SNR" check "$TRACES" | grep -o '^PASS [^:]*' | sed 's/^PASS //' | sort >"$T/ck/all"
python3 - "$T"/ck/[123].xml <<'PY' | sort | cmp -s - "$T/ck/all" || fail "the shards do not cover the traces once"
import sys, xml.etree.ElementTree as ET
for f in sys.argv[1:]:
    for c in ET.parse(f).getroot().iter("testcase"):
        print(c.get("name"))
PY

echo ok
