#!/usr/bin/env bash
# Fixed cost of `snr host record`: `snr host record -o X -- /bin/true`, whose
# program does nothing, so the wall time is the tracer's own start (loading
# and verifying the BPF programs, creating their maps, attaching) and end
# (reading back, writing, detaching the probes). REPS runs each of NEW and,
# when OLD is given, of OLD, alternately (a load that drifts over the run
# hits both alike); printed: the median and the minimum wall time of each,
# the ratio of the medians NEW/OLD, the median and minimum CPU time (user +
# system of the recorder and what it waited for: on a machine loaded past
# its CPUs the wall time is mostly waiting for one, the CPU time is not),
# and the median of each phase that
# SNR_HOST_TIMING=1 makes a recorder print (an old one that does not print
# them shows none). The machine's load is printed with it: on a shared
# machine compare the two in one run, not figures from different runs.
# Needs root and BPF.
# usage: host_startup.sh SNR [REPS]   (REPS default 7; OLD=path/to/old/snr to compare)
set -u
NEW=$1 REPS=${2:-7} OLD=${OLD:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "host_startup: needs root (BPF)"; exit 77; }
"$NEW" host record -o "$T/p.snrh" -- /bin/true >/dev/null 2>&1 || { echo "host_startup: BPF unavailable"; exit 77; }
once() { # SNR WHICH -> seconds on stdout; its phase lines appended to $T/WHICH.phases, CPU seconds to $T/WHICH.cpu
  local s e rc TIMEFORMAT='%3U %3S'
  s=$(date +%s.%N)
  { time SNR_HOST_TIMING=1 "$1" host record --force -o "$T/x.snrh" -- /bin/true >/dev/null 2>"$T/err"; } 2>"$T/time"
  rc=$?
  e=$(date +%s.%N)
  [ "$rc" -eq 0 ] || { echo "host_startup: $1 failed: $(tail -1 "$T/err")" >&2; exit 1; }
  awk '{ printf "%.3f\n", $1 + $2 }' "$T/time" >>"$T/$2.cpu"
  sed -n 's/^snr host record: phase \(.*[^ ]\) \{1,\}\([0-9.]*\) s$/\1\t\2/p' "$T/err" >>"$T/$2.phases"
  awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'
}
: >"$T/new"; : >"$T/old"; : >"$T/new.phases"; : >"$T/old.phases"; : >"$T/new.cpu"; : >"$T/old.cpu"
load0=$(cut -d' ' -f1-3 /proc/loadavg)
for _ in $(seq 1 "$REPS"); do
  once "$NEW" new >>"$T/new"
  [ -n "$OLD" ] && once "$OLD" old >>"$T/old"
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mn() { sort -n "$1" | head -1; }
# median of each phase, in the order the recorder printed them
phases() {
  awk -F'\t' '!($1 in n) { order[++k] = $1 } { n[$1]++; v[$1, n[$1]] = $2 }
    END { for (i = 1; i <= k; i++) { p = order[i]; m = n[p]
            for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[p, b] < v[p, a]) { t = v[p, a]; v[p, a] = v[p, b]; v[p, b] = t }
            med = (m % 2) ? v[p, (m + 1) / 2] : (v[p, m / 2] + v[p, m / 2 + 1]) / 2
            printf "  %-18s %.3f s\n", p, med } }' "$1"
}
echo "load: $load0 before, $(cut -d' ' -f1-3 /proc/loadavg) after, $(nproc) CPUs; $REPS runs each"
echo "new: median $(med "$T/new") s, min $(mn "$T/new") s; CPU median $(med "$T/new.cpu") s, min $(mn "$T/new.cpu") s  ($NEW)"
if [ -s "$T/new.phases" ]; then echo "new, median of each phase:"; phases "$T/new.phases"; fi
if [ -n "$OLD" ]; then
  echo "old: median $(med "$T/old") s, min $(mn "$T/old") s; CPU median $(med "$T/old.cpu") s, min $(mn "$T/old.cpu") s  ($OLD)"
  if [ -s "$T/old.phases" ]; then echo "old, median of each phase:"; phases "$T/old.phases"; fi
  awk -v n="$(med "$T/new")" -v o="$(med "$T/old")" -v nc="$(med "$T/new.cpu")" -v oc="$(med "$T/old.cpu")" \
    'BEGIN { printf "ratio new/old (medians): wall %.2f, CPU %.2f\n", n / o, nc / oc }'
fi
