#!/usr/bin/env bash
# snr sweep on local processes: every point is byte for byte `snr replay
# --config` of its config; the same points and results for -j 1 and -j 2;
# the cycles move the way the timing model guarantees along the DMA axes; a
# sweep with a point missing says so in every output and --resume redoes
# only its task; the task index from a Kubernetes Indexed Job's variable; bad
# grids and folders refused naming what is wrong.
. "$(dirname "$0")/lib.sh"
TR=$(realpath "$2/ta1-decode-step.snrt")
GRID=(--param dma.hbm_bytes_per_cycle=300,600,1200 --param dma.base_latency_cycles=250:500:250)

run "$SNR" sweep "$TR" "${GRID[@]}" -j 1 -o "$T/j1"
expect_rc 0; expect_out "elasticity"; expect_out "best points"
run "$SNR" sweep "$TR" "${GRID[@]}" -j 2 --json -o "$T/j2"
expect_rc 0; expect_out '"complete": true'
# the same points, the same results, whatever -j
cmp -s "$T/j1/results.json" "$T/j2/results.json" || fail "-j 1 and -j 2 gave different results.json"
for f in "$T"/j1/points/*.json; do
  cmp -s "$f" "$T/j2/points/$(basename "$f")" || fail "$(basename "$f") differs between -j 1 and -j 2"
done
[ "$(ls "$T"/j1/points/p*-w0.json | wc -l)" = 6 ] || fail "want 6 points: $(ls "$T/j1/points")"
# each point is `snr replay --config POINT.json --json`, byte for byte
for c in "$T"/j1/configs/p*.json; do
  n=$(basename "$c" .json)
  "$SNR" replay --config "$c" "$TR" --json >"$T/replay.json" || fail "snr replay --config $c failed"
  cmp -s "$T/replay.json" "$T/j1/points/$n-w0.json" || fail "$n is not snr replay --config $c"
done
# Monotone where the model keeps it on this window: more HBM bandwidth never
# costs cycles, a longer DMA base latency never saves any (docs/sweep.md says
# where it may not hold).
python3 - "$T/j1/results.json" <<'PY' || fail "cycles not monotone along the DMA axes"
import json, sys
r = json.load(open(sys.argv[1]))
c = {(p["params"]["dma.hbm_bytes_per_cycle"], p["params"]["dma.base_latency_cycles"]): p["cycles"] for p in r["points"]}
assert len(c) == 6 and all(p["verified"] for p in r["points"])
for tb in (250, 500):
    assert c[(300, tb)] >= c[(600, tb)] >= c[(1200, tb)], (tb, c)
for bw in (300, 600, 1200):
    assert c[(bw, 250)] <= c[(bw, 500)], (bw, c)
e = {x["param"]: x for x in r["elasticity"]}
assert e["dma.hbm_bytes_per_cycle"]["mean"] < 0 < e["dma.base_latency_cycles"]["mean"], e
assert r["best"][0] == 4, r["best"]  # 1200 B/cycle, Tb 250
PY
# the page, drawn in Chromium: no script error, both charts drawn, its tables results.json's
. "$(dirname "$0")/../an/lib.sh"
mkdir "$T/page"
render_report "$T/page" "$T/j1/report.html" 1300,1600
python3 "$(dirname "$0")/check_sweep_page.py" "$T/page/dom.html" "$T/page/shot.png" "$T/j1/results.json" ||
  fail "the sweep's page"
head -1 "$T/j1/results.csv" | grep -q '^point,dma.hbm_bytes_per_cycle,dma.base_latency_cycles,cycles' ||
  fail "results.csv header: $(head -1 "$T/j1/results.csv")"

# Several points per task: 6 points in 2 tasks, the same results.
run "$SNR" sweep "$TR" "${GRID[@]}" --points-per-task 4 -j 2 -o "$T/ppt"
expect_rc 0
[ "$("$SNR" sweep --count-tasks "$T/ppt")" = 2 ] || fail "6 points at 4 per task are not 2 tasks"
cmp -s "$T/ppt/results.json" "$T/j2/results.json" || fail "--points-per-task 4 changed the results"

# A point missing (its task killed before it finished): every output says so.
rm "$T/j1/points/p0003.json"
run "$SNR" sweep --gather "$T/j1" --json
expect_rc 1; expect_out '"complete": false'; expect_err "1 of 6 points missing"
python3 -c 'import json,sys; r=json.load(open(sys.argv[1])); assert r["missing"]==[3] and r["missing_tasks"][0]["task"]==3, r' \
  "$T/j1/results.json" || fail "results.json does not name point 3 missing"
grep -q '^# INCOMPLETE: 1 of 6 points missing (points 3; tasks 3)' "$T/j1/results.csv" || fail "CSV: $(head -1 "$T/j1/results.csv")"
grep -q 'INCOMPLETE' "$T/j1/results.txt" || fail "results.txt does not say INCOMPLETE"
grep -q 'id="incomplete"' "$T/j1/report.html" || fail "report.html has no incomplete banner"
touch -d '2000-01-01' "$T"/j1/points/p000[01245]*.json
run "$SNR" sweep --resume "$T/j1"
expect_rc 0; expect_err "1 of 6 tasks to run (3)"
[ -z "$(find "$T/j1/points" -name 'p000[01245]*' -newer "$T/j1/sweep.json")" ] || fail "--resume redid finished points"
cmp -s "$T/j1/results.json" "$T/j2/results.json" || fail "the resumed sweep differs from the whole one"

# A sweep killed mid-way (SIGKILL to its whole process group): --resume
# finishes it without redoing a finished point, leaves no temporary file,
# and gives the results of a sweep never killed.
G3=(--param dma.hbm_bytes_per_cycle=300,600,1200 --param dma.base_latency_cycles=250,500,1000 --param mxu.rows_per_cycle=1,2,4)
"$SNR" sweep "$TR" "${G3[@]}" -j 2 -o "$T/whole" >/dev/null 2>&1 || fail "the 27-point sweep"
setsid "$SNR" sweep "$TR" "${G3[@]}" -j 1 -o "$T/killed" >/dev/null 2>&1 &
KP=$!
for _ in $(seq 600); do
  [ "$(ls "$T"/killed/points/p[0-9][0-9][0-9][0-9].json 2>/dev/null | wc -l)" -ge 3 ] && break
  kill -0 $KP 2>/dev/null || break
  sleep 0.05
done
kill -9 -- -$KP 2>/dev/null; wait $KP 2>/dev/null
done_before=$(ls "$T"/killed/points/p[0-9][0-9][0-9][0-9].json | wc -l)
[ "$done_before" -ge 3 ] && [ "$done_before" -lt 27 ] || fail "the kill came at $done_before of 27 points; the test needs it mid-way"
touch "$T/killed.mark"; sleep 0.01
run "$SNR" sweep --resume "$T/killed"
expect_rc 0; expect_err "$((27 - done_before)) of 27 tasks to run"
[ "$(find "$T/killed/points" -name 'p[0-9][0-9][0-9][0-9].json' ! -newer "$T/killed.mark" | wc -l)" = "$done_before" ] ||
  fail "--resume rewrote finished points"
[ -z "$(ls -A "$T/killed/points" | grep '^\.')" ] || fail "temporary files left: $(ls -A "$T/killed/points" | grep '^\.')"
cmp -s "$T/killed/results.json" "$T/whole/results.json" || fail "the killed and resumed sweep differs from the whole one"

# One task as an engine runs it: the index from JOB_COMPLETION_INDEX.
rm "$T/j2/points/p0005.json"
JOB_COMPLETION_INDEX=5 "$SNR" sweep --task-index auto "$T/j2" >"$T/out" 2>&1 || fail "task 5: $(cat "$T/out")"
expect_out "point 5:"
run "$SNR" sweep --count-tasks "$T/j2"
expect_rc 0; expect_out "6"
run "$SNR" sweep --gather "$T/j2"
expect_rc 0

# An engine started by hand (as GNU parallel or a Kubernetes Indexed Job would):
# --plan-only runs nothing and prints the task count, the tasks run in any
# order two at a time, the gather equals the local run.
run "$SNR" sweep "$TR" "${GRID[@]}" --plan-only -o "$T/hand"
expect_rc 0; expect_out "6"; expect_err "none run"
[ -z "$(ls "$T/hand/points")" ] || fail "--plan-only ran points"
run "$SNR" sweep --gather "$T/hand"
expect_rc 1; expect_out "INCOMPLETE: 6 of 6 points missing"
seq 5 -1 0 | xargs -P 2 -I{} "$SNR" sweep --task-index {} "$T/hand" >/dev/null || fail "the tasks by hand failed"
run "$SNR" sweep --gather "$T/hand"
expect_rc 0
cmp -s "$T/hand/results.json" "$T/j2/results.json" || fail "tasks run by hand differ from -j 2"
run "$SNR" sweep "$TR" "${GRID[@]}" --plan-only -j 2 -o "$T/bad"
expect_rc 2; expect_err "--plan-only makes a new sweep"

# A task that fails (its window gone) is named with its log, and the sweep says it is incomplete.
cp "$TR" "$T/gone.snrt"
"$SNR" sweep "$T/gone.snrt" --param dma.hbm_bytes_per_cycle=600,1200 --plan-only -o "$T/gone" >/dev/null 2>&1 ||
  fail "--plan-only over a copy"
rm "$T/gone.snrt"
run "$SNR" sweep --resume "$T/gone" -j 2
expect_rc 1; expect_err "task 0 failed (exit status 1); its log is $T/gone/logs/task-0.log"
expect_out "INCOMPLETE: 2 of 2 points missing (points 0 1; tasks 0 1)"
grep -q "gone.snrt" "$T/gone/logs/task-1.log" || fail "task 1's log does not name the missing window"

# Whole config files as an axis, with a --param over them.
printf '{"dma": {"hbm_bytes_per_cycle": 100}}\n' >"$T/slow.json"
printf '{"dma": {"hbm_bytes_per_cycle": 2400}}\n' >"$T/fast.json"
run "$SNR" sweep "$TR" --configs "$T/slow.json,$T/fast.json" --param mxu.rows_per_cycle=1,2 -o "$T/cf"
expect_rc 0; expect_out "slow.json"
"$SNR" replay --config "$T/cf/configs/p0002.json" "$TR" --json >"$T/replay.json"
cmp -s "$T/replay.json" "$T/cf/points/p0002-w0.json" || fail "config-file point 2 is not its replay"

# Several windows: a point adds them up, each window its own replay; traces of
# different recorded configs need the base named.
TR2=$(realpath "$2/ta1-mlp-forward.snrt")
run "$SNR" sweep "$TR" "$TR2" --param dma.base_latency_cycles=250,500 -o "$T/two"
expect_rc 1; expect_err "recorded different machine configs: give the base with --config BASE.json"
printf '{"vmem": {"bytes": 524288}}\n' >"$T/base.json"
run "$SNR" sweep "$TR" "$TR2" --param dma.base_latency_cycles=250,500 --config "$T/base.json" -o "$T/two"
expect_rc 0
"$SNR" replay --config "$T/two/configs/p0001.json" "$TR2" --json >"$T/replay.json"
cmp -s "$T/replay.json" "$T/two/points/p0001-w1.json" || fail "window 1 of point 1 is not its replay"
python3 - "$T/two" <<'PY' || fail "a point's cycles are not its windows' sum"
import json, sys
d = sys.argv[1]
p = json.load(open(d + "/points/p0001.json"))
w = [json.load(open(d + "/points/p0001-w%d.json" % k)) for k in (0, 1)]
assert p["windows"] == 2 and p["cycles"] == sum(x["cycles"] for x in w), (p, w)
assert p["stall_cycles"]["dma-base"] == sum(x["stall_cycles"]["dma-base"] for x in w)
PY

# Bad grids, folders and indices.
run "$SNR" sweep "$TR" --param dma.hbm_byts=1,2 -o "$T/bad"
expect_rc 1; expect_err 'unknown key "dma.hbm_byts"'
[ ! -e "$T/bad" ] || fail "a refused grid left a folder"
run "$SNR" sweep "$TR" --param dma.hbm_bytes_per_cycle=0,2 -o "$T/bad"
expect_rc 1; expect_err '"dma.hbm_bytes_per_cycle" = 0 is outside'
run "$SNR" sweep "$TR" --param dma.hbm_bytes_per_cycle=5:1:1 -o "$T/bad"
expect_rc 2; expect_err "needs STEP > 0 and END >= START"
run "$SNR" sweep "$TR" --param dma.hbm_bytes_per_cycle=1,1 -o "$T/bad"
expect_rc 2; expect_err "given twice"
run "$SNR" sweep "$TR" --param dma.hbm_bytes_per_cycle -o "$T/bad"
expect_rc 2; expect_err "give KEY=V1,V2"
run "$SNR" sweep "$TR" "${GRID[@]}" -o "$T/j1"
expect_rc 1; expect_err "File exists (continue a sweep there with --resume"
run "$SNR" sweep "$TR" "${GRID[@]}"
expect_rc 2; expect_err "-o DIR"
run "$SNR" sweep --task-index 6 "$T/j1"
expect_rc 1; expect_err "task 6: the sweep in"
run "$SNR" sweep --task-index x "$T/j1"
expect_rc 2; expect_err "'x' is not a task number"
run env -u SNR_TASK_INDEX -u JOB_COMPLETION_INDEX -u SLURM_ARRAY_TASK_ID "$SNR" sweep --task-index auto "$T/j1"
expect_rc 2; expect_err "none of SNR_TASK_INDEX"
run "$SNR" sweep --gather "$T"
expect_rc 1; expect_err "not a sweep folder"
run "$SNR" sweep "$TR" "${GRID[@]}" -j 2 --slurm -o "$T/bad"
expect_rc 2; expect_err "-j is for local runs"
# --slurm where Slurm's client is not installed: named, nothing submitted, the sweep incomplete.
mkdir "$T/nopath"
run env PATH="$T/nopath" "$SNR" sweep "$TR" --param dma.base_latency_cycles=250,500 --slurm -o "$T/nosl"
expect_rc 1; expect_err "cannot run sbatch: No such file or directory (is Slurm's client installed"
expect_out "INCOMPLETE: 2 of 2 points missing"
echo ok
