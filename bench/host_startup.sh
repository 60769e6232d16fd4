#!/usr/bin/env bash
# Fixed cost of `snr host record`: `snr host record -o X -- /bin/true`, whose
# program does nothing, so the wall time is the tracer's own start (loading
# and verifying the BPF programs, creating their maps, attaching) and end.
# REPS runs each of NEW and, when OLD is given, of OLD, alternately (a load
# that drifts over the run hits both alike); printed: the median and the
# minimum wall time of each, and the ratio of the medians NEW/OLD. The
# machine's load is printed with it: on a shared machine compare the two
# in one run, not figures from different runs. Needs root and BPF.
# usage: host_startup.sh SNR [REPS]   (OLD=path/to/old/snr to compare)
set -u
NEW=$1 REPS=${2:-7} OLD=${OLD:-}
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
[ "$(id -u)" -eq 0 ] || { echo "host_startup: needs root (BPF)"; exit 77; }
"$NEW" host record -o "$T/p.snrh" -- /bin/true >/dev/null 2>&1 || { echo "host_startup: BPF unavailable"; exit 77; }
once() { # SNR -> seconds
  local s e
  s=$(date +%s.%N)
  "$1" host record --force -o "$T/x.snrh" -- /bin/true >/dev/null 2>&1 || { echo "host_startup: $1 failed" >&2; exit 1; }
  e=$(date +%s.%N)
  awk -v s="$s" -v e="$e" 'BEGIN { printf "%.3f\n", e - s }'
}
: >"$T/new"; : >"$T/old"
for _ in $(seq 1 "$REPS"); do
  once "$NEW" >>"$T/new"
  [ -n "$OLD" ] && once "$OLD" >>"$T/old"
done
med() { sort -n "$1" | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
mn() { sort -n "$1" | head -1; }
echo "load: $(cut -d' ' -f1-3 /proc/loadavg), $(nproc) CPUs; $REPS runs each"
echo "new: median $(med "$T/new") s, min $(mn "$T/new") s  ($NEW)"
if [ -n "$OLD" ]; then
  echo "old: median $(med "$T/old") s, min $(mn "$T/old") s  ($OLD)"
  awk -v n="$(med "$T/new")" -v o="$(med "$T/old")" 'BEGIN { printf "ratio new/old (medians): %.2f\n", n / o }'
fi
