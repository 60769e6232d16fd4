#!/usr/bin/env bash
# Overhead of `snr host record` (eBPF off-CPU, on-CPU sampling at 99 Hz,
# uprobe buckets) on a CPU-bound program (host_work) and
# on the libta1rt serving loop (ta1_serve): each workload times itself, run
# untraced and traced alternately REPS times. Printed per workload:
#   wall  medians of elapsed time untraced and traced, and the median of the
#         per-pair ratios traced/untraced (pairs are robust to load that
#         drifts over the run on a shared machine, not to load that comes
#         and goes within a pair);
#   cpu   the median per-pair CPU cost of tracing: the workload's own CPU
#         time traced minus untraced (uprobe traps, BPF programs run in its
#         context) plus the tracer's CPU time while tracing, over the
#         untraced CPU time; on a machine other jobs load this is steadier
#         than wall time;
#   the tracer's ring buffer wakeups (polls), and with DWARF unwinding the
#   mean bytes of user stack copied per sample or switch. Needs root and BPF.
#
# MODES picks tracer configurations to isolate the probes (sched_switch is
# always on: it is what the trace is made of):
#   all       the default of snr host record (scheduler, sampling, uprobes,
#             DWARF unwinding from a 16 KiB stack copy)
#   fp        the default with --unwind fp (frame pointers walked in the kernel)
#   sched     -F 0 --no-presets           scheduler switches only
#   sample    --no-presets                + on-CPU sampling at 99 Hz
#   uprobes   -F 0                        + runtime API uprobes
#   iocalls   --io-calls                  the default + every I/O system call
#   progress  --progress unit_done        the default + a progress point: host_work
#             split into 100 units (about 200 uprobe hits a second, a token rate), each
#             ended by a call of unit_done, traced and untraced alike (host_work
#             only: ta1_serve has no function of its own per request)
# FIFO=1 runs the workloads, untraced and traced (and the tracer), under
# SCHED_FIFO priority 10, so the other jobs of a loaded shared machine do
# not preempt them (root; at load 12 on 2 CPUs wall time otherwise swings
# by more than the 1% target between runs).
# usage: host_overhead.sh SNR HOST_WORK TA1_SERVE [REPS]   (MODES="all sched ..." WORKLOADS="work serve" FIFO=1)
set -u
SNR=$1 WORK=$2 SERVE=$3 REPS=${4:-5}
MODES=${MODES:-all} WORKLOADS=${WORKLOADS:-work serve}
prio=(); [ "${FIFO:-0}" = 1 ] && prio=(chrt -f 10)
if [ "$(id -u)" -ne 0 ]; then echo "host_overhead: needs root (eBPF)"; exit 0; fi
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
"$SNR" cc "$(dirname "$0")/../workloads/mlp.c" -o "$T/mlp.elf" || exit 1
median() { sort -g | awk '{a[NR]=$1} END {print (NR % 2) ? a[(NR+1)/2] : (a[NR/2] + a[NR/2+1]) / 2}'; }
elapsed() { sed -n 's/.* in \([0-9.]*\) s .*/\1/p' "$1"; }
cputime() { sed -n 's/.*cpu \([0-9.]*\) s$/\1/p' "$1"; }
for name in $WORKLOADS; do
  for mode in $MODES; do
    if [ "$name" = work ]; then cmd=("$WORK" 400000000); else cmd=("$SERVE" "$T/mlp.elf" 20 "$T"); fi
    if [ "$mode" = progress ]; then
      [ "$name" = work ] || { echo "$name progress: skipped (no function of ta1_serve's own per request)"; continue; }
      cmd=("$WORK" 400000000 100)
    fi
    case $mode in
      all) opts=();; fp) opts=(--unwind fp);; sched) opts=(-F 0 --no-presets);; sample) opts=(--no-presets);;
      uprobes) opts=(-F 0);; iocalls) opts=(--io-calls);; progress) opts=(--progress unit_done);;
      *) echo "host_overhead: unknown mode $mode"; exit 2;;
    esac
    : >"$T/plain"; : >"$T/traced"; : >"$T/ratio"; : >"$T/cpu"; : >"$T/polls"; : >"$T/cpuratio"; : >"$T/bytes"
    for _ in $(seq "$REPS"); do
      "${prio[@]}" "${cmd[@]}" >"$T/out" 2>&1 || { cat "$T/out"; exit 1; }
      p=$(elapsed "$T/out") pc=$(cputime "$T/out")
      rm -f "$T/h.snrh" # outputs are never replaced without --force
      "${prio[@]}" "$SNR" host record -F 99 "${opts[@]}" -o "$T/h.snrh" -- "${cmd[@]}" >"$T/out" 2>"$T/err" ||
        { echo "host_overhead: snr host record failed: $(tail -3 "$T/err")"; exit 0; }
      t=$(elapsed "$T/out") tc=$(cputime "$T/out")
      echo "$p" >>"$T/plain"; echo "$t" >>"$T/traced"
      awk -v p="$p" -v t="$t" 'BEGIN { print t / p }' >>"$T/ratio"
      sed -n 's/.*tracer: \([0-9.]*\) s CPU while tracing, .*, \([0-9]*\) polls.*/\1 \2/p' "$T/err" >"$T/tr"
      cut -d' ' -f1 "$T/tr" >>"$T/cpu"; cut -d' ' -f2 "$T/tr" >>"$T/polls"
      awk -v p="$pc" -v t="$tc" -v r="$(cut -d' ' -f1 "$T/tr")" 'BEGIN { print (t + r - p) / p }' >>"$T/cpuratio"
      "$SNR" host report --top 0 "$T/h.snrh" | sed -n 's/.* copies of the stack top, \([0-9]*\) bytes each.*/\1/p' >>"$T/bytes"
    done
    [ -s "$T/bytes" ] || echo 0 >"$T/bytes"
    awk -v n="$name" -v m="$mode" -v p="$(median <"$T/plain")" -v t="$(median <"$T/traced")" \
        -v r="$(median <"$T/ratio")" -v c="$(median <"$T/cpu")" -v w="$(median <"$T/polls")" -v k="$REPS" \
        -v cr="$(median <"$T/cpuratio")" -v b="$(median <"$T/bytes")" 'BEGIN {
      printf "%-5s %-7s wall: untraced %.4f s, traced %.4f s (medians of %d), pairs %+.2f%%; cpu: %+.2f%% (tracer %.3f s); %d polls; %d stack bytes/copy\n",
             n, m, p, t, k, 100 * (r - 1), 100 * cr, c, w, b }'
  done
done
echo "target: overhead <= 1%"
